// A new booking's meeting: made at once (Jitsi), or left pending for the outbox (a provider that makes it through its API: Zoom; the calendar with the event: Google Meet).
import mongoose from "mongoose";
import { CalendarModel } from "../../db/models/calendar.js";
import { IntegrationModel } from "../../db/models/integration.js";
import type { BookingDoc } from "../../db/models/booking.js";
import { objectIdOf } from "../../db/ids.js";
import { CALENDAR_MEET_NEEDS } from "../../domain/event.js";
import { calendarProvider, meetingProvider } from "../../providers/index.js";

export const CONFERENCE = "conference";

export type NewMeeting = Pick<BookingDoc, "meeting_url" | "meeting_status" | "meeting_error" | "meeting_provider">;

const NONE: NewMeeting = { meeting_url: null, meeting_status: "none", meeting_error: null, meeting_provider: null };

/** Which of `ids` are the account's writable calendars whose provider makes meeting links (calendar_meet). */
export async function meetingCalendarIds(userId: mongoose.Types.ObjectId, ids: readonly string[]): Promise<Set<string>> {
  const oids = ids.map(objectIdOf).filter((id): id is mongoose.Types.ObjectId => id !== null);
  if (oids.length === 0) return new Set();
  // _id index, owner checked.
  const found = await CalendarModel.find({ _id: mongoose.trusted({ $in: oids }), user_id: userId, can_write: true }, { provider: 1 }).lean();
  return new Set(found.filter((c) => calendarProvider(c.provider)?.makesMeetingLinks === true).map((c) => c._id.toHexString()));
}

/**
 * The meeting fields of a new booking at `location` (the event's), with the calendar its bookings go to. A link a
 * provider makes is made by an effect, never inside the booking request: the booking says `pending` until then.
 */
export async function meetingForNewBooking(userId: mongoose.Types.ObjectId, location: string, calendarId: string | null): Promise<NewMeeting> {
  if (location === CONFERENCE) {
    // (user_id, name) unique index.
    const conference = await IntegrationModel.findOne({ user_id: userId, name: CONFERENCE }, { provider: 1, base_url: 1 }).lean();
    const provider = conference === null ? undefined : meetingProvider(conference.provider);
    if (!conference || !provider) return { ...NONE, meeting_status: "failed", meeting_error: "no video-meeting provider is connected" };
    if (provider.createMeeting) return { meeting_url: (await provider.createMeeting({ baseUrl: conference.base_url })).url, meeting_status: "ready", meeting_error: null, meeting_provider: provider.name };
    return { meeting_url: null, meeting_status: "pending", meeting_error: null, meeting_provider: provider.name };
  }
  if (location === "calendar_meet") {
    const ids = calendarId === null ? new Set<string>() : await meetingCalendarIds(userId, [calendarId]);
    if (calendarId === null || !ids.has(calendarId)) return { ...NONE, meeting_status: "failed", meeting_error: CALENDAR_MEET_NEEDS };
    // _id index.
    const calendar = await CalendarModel.findById(objectIdOf(calendarId), { provider: 1 }).lean();
    return { meeting_url: null, meeting_status: "pending", meeting_error: null, meeting_provider: calendar?.provider ?? null };
  }
  return NONE;
}
