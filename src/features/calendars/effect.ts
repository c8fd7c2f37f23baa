// The calendar effect: makes the host's calendar hold a booking's VEVENT while the booking is confirmed, and not otherwise.
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { CalendarConnectionModel, CalendarModel } from "../../db/models/calendar.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { bookingAsEvent } from "../../domain/bookingEvent.js";
import type { IcsBooking } from "../../domain/ical/writer.js";
import { publicLocation } from "../../domain/event.js";
import { eventWords } from "../../i18n/index.js";
import { calendarProvider, ProviderError, RateLimitedError, withDeadline } from "../../providers/index.js";
import { markConnection, type CalendarReader } from "./busy.js";
import { errorText } from "../../platform/log.js";
import { answersWithQuestions, bookingById, setCalendarEventId, setCalendarSync, setMeeting } from "../bookings/index.js";
import { objectIdOf } from "../../db/ids.js";
import type { BookingChange, EffectKind, EffectRecord, PlannedEffect, RunResult } from "../../outbox/types.js";

/*
 * Convergence. An effect carries only a booking id; each run reads the booking as it is now and makes the
 * calendar match it: confirmed -> the object <booking id>.ics holds its VEVENT (the host's copy of bookingAsEvent);
 * anything else -> no such object. So a retry, a duplicate, or effects of two changes
 * running out of order all end in the same place, and a killed worker's effect simply runs again after its lease.
 * A reschedule makes a new booking (a new UID): the old booking's effect removes the old object, the new one's
 * writes the new object.
 */

/** One exchange of a write may take this long: nobody is waiting on it, and a slow server should still get through. */
const WRITE_TIMEOUT_MS = 15_000;

function plannedFor(booking: Pick<BookingDoc, "_id" | "calendar_id"> | null, key: string): PlannedEffect[] {
  if (!booking || !booking.calendar_id) return [];
  // The calendar is the destination: one that hangs or fails rests without holding up the account's other effects.
  return [{ key, destination: `calendar:${booking.calendar_id}`, payload: { booking_id: booking._id.toHexString() } }];
}

async function calendarTarget(bookingId: string): Promise<Pick<BookingDoc, "_id" | "calendar_id"> | null> {
  const _id = objectIdOf(bookingId);
  // _id index.
  return _id === null ? null : BookingModel.findById(_id, { calendar_id: 1 }).lean<Pick<BookingDoc, "_id" | "calendar_id">>();
}

function permanentOrRetry(err: unknown): RunResult {
  if (err instanceof ProviderError) {
    // Refused credentials or a blocked address will not heal by retrying; a host reconnects instead.
    return { ok: false, error: err.message, permanent: err.kind === "refused" || err.kind === "blocked" };
  }
  return { ok: false, error: errorText(err) };
}


/** Passes of write-then-check: a change between the read and the write (a cancel racing the create) is caught by the check. */
const CONVERGE_PASSES = 3;

async function run(deps: CalendarKindDeps, effect: EffectRecord, signal: AbortSignal): Promise<RunResult> {
  const id = String(effect.payload.booking_id ?? "");
  for (let pass = 0; pass < CONVERGE_PASSES; pass++) {
    const booking = await bookingById(id);
    if (!booking || !booking.calendar_id) return { ok: true };
    const result = await converge(deps, booking, effect, signal);
    if (result.ok !== true) return result;
    // Another effect of this booking may have run meanwhile with the older state; whatever it did, the state the
    // calendar was just made to match must still be the booking's, else the next pass makes it match again.
    const after = await bookingById(id);
    if (after?.status === booking.status) {
      await setCalendarSync(booking, "synced", null);
      return { ok: true };
    }
  }
  return { ok: false, error: "the booking kept changing while its calendar event was written" };
}

/** How often a write waiting on a meeting link looks again, and how long Google may take to finish a Meet link. */
const MEETING_POLL_MS = 1000;
const MEET_PENDING_LIMIT_MS = 10 * 60_000;

async function converge(deps: CalendarKindDeps, booking: BookingDoc, effect: EffectRecord, signal: AbortSignal): Promise<RunResult> {
  if (!booking.calendar_id) return { ok: true };
  const calendarOid = objectIdOf(booking.calendar_id);
  // _id index.
  const calendar = calendarOid === null ? null : await CalendarModel.findOne({ _id: calendarOid, user_id: booking.user_id }).lean();
  const connection = calendar ? await CalendarConnectionModel.findById(calendar.connection_id).lean() : null;
  const present = booking.status === "confirmed";
  const provider = connection ? calendarProvider(connection.provider) : undefined;
  if (!calendar || !connection || !provider?.writeEvent || !provider.deleteEvent) {
    // Disconnected: the credentials are gone, so nothing can be removed or written any more.
    if (!present) return { ok: true };
    return { ok: false, error: "the calendar was disconnected", permanent: true };
  }
  const settings = { allowPrivate: deps.reader.settings.allowPrivate, timeoutMs: WRITE_TIMEOUT_MS };
  const target = { url: calendar.url ?? null };
  const bookingId = booking._id.toHexString();
  const ref = { bookingId, id: booking.calendar_event_id ?? null, key: booking.provider_key ?? bookingId };
  // An OAuth provider's calls go through one session with no deadline of their own: the whole write gets one.
  const bounded = <T>(work: (s: AbortSignal) => Promise<T>): Promise<T> =>
    provider.oauth ? withDeadline(WRITE_TIMEOUT_MS, (deadline) => work(AbortSignal.any([signal, deadline]))) : work(signal);
  try {
    const access = deps.reader.accessOf(connection);
    if (!present && booking.status === "rescheduled" && provider.movesEvents && (await movedToSameCalendar(booking))) {
      // The booking that replaced this one moves the event itself; removing it here would lose it.
      return { ok: true };
    }
    if (present) {
      // _id indexes. A deleted event or host still names the booking.
      const [event, host, answers] = await Promise.all([
        EventModel.findById(booking.event_id, { name: 1, location: 1, color: 1 }).lean<Pick<EventDoc, "name" | "location" | "color">>(),
        UserModel.findById(booking.user_id, { full_name: 1, email: 1, locale: 1 }).lean<Pick<UserDoc, "full_name" | "email" | "locale">>(),
        answersWithQuestions(booking),
      ]);
      // calendar_meet: the calendar makes the link with the event (Google Meet), so this write is what makes it.
      const meetHere = event?.location.name === "calendar_meet" && provider.makesMeetingLinks === true && booking.meeting_provider === connection.provider;
      const age = Date.now() - effect.createdAt.getTime();
      if (!meetHere && booking.meeting_status === "pending" && age < deps.meetingWaitMs) {
        // Another effect makes the link (Zoom): the event is written with it, unless that takes longer than the wait.
        return { ok: "later", until: new Date(Date.now() + MEETING_POLL_MS), reason: "waiting for the meeting link" };
      }
      // A moved event keeps the UID it was written with (Google refuses to change an iCalUID).
      const copy = hostCopy(booking, event, host, answers, deps.reader.settings.appHost(), provider.movesEvents ? ref.key : bookingId);
      const written = await bounded((s) =>
        provider.writeEvent!({
          access,
          calendar: target,
          event: {
            ...copy,
            bookingId,
            ...(event?.color ? { color: event.color } : {}),
            ...(meetHere ? { meeting: { requestId: ref.key } } : {}),
          },
          ref,
          settings,
          signal: s,
        }),
      );
      if (written.id !== ref.id && provider.movesEvents) await setCalendarEventId(booking, written.id);
      if (meetHere && written.meetingError !== undefined) {
        // No link is coming: waiting or retrying would only hold the e-mails back; the event itself is in place.
        if (booking.meeting_status !== "failed" || booking.meeting_error !== written.meetingError) await setMeeting(booking, { status: "failed", error: written.meetingError });
      } else if (meetHere && written.meetingUrl) {
        if (booking.meeting_status !== "ready" || booking.meeting_url !== written.meetingUrl) await setMeeting(booking, { status: "ready", url: written.meetingUrl });
      } else if (meetHere) {
        // Google answers "pending" while it makes the link: the next run reads the event again (its requestId is the same).
        if (age > MEET_PENDING_LIMIT_MS) return { ok: false, error: `${connection.provider} did not finish the meeting link` };
        return { ok: "later", until: new Date(Date.now() + MEETING_POLL_MS), reason: "the meeting link is still being made" };
      }
    } else {
      await bounded((s) => provider.deleteEvent!({ access, calendar: target, ref, settings, signal: s }));
    }
  } catch (err) {
    if (err instanceof RateLimitedError && !err.noCall) await markConnection(deps.reader.settings.wake, connection._id, err);
    // The status stays pending while retries go on; giveUp makes it failed with the last error.
    return permanentOrRetry(err);
  }
  return { ok: true };
}

/** The host's copy of the booking's event: the same the host's invitation e-mail carries. */
function hostCopy(
  booking: BookingDoc,
  event: Pick<EventDoc, "name" | "location"> | null,
  host: Pick<UserDoc, "full_name" | "email" | "locale"> | null,
  answers: { question: string; value: unknown }[],
  appHost: string,
  uidBookingId: string,
): IcsBooking {
  return bookingAsEvent(
    {
      bookingId: booking._id.toHexString(),
      appHost,
      uidBookingId,
      confirmed: true,
      start: booking.start_time,
      end: booking.end_time,
      eventName: event?.name ?? "",
      host: { name: host?.full_name ?? "", email: host?.email ?? "" },
      attendee: { name: booking.attendee_name, email: booking.attendee_email },
      guests: booking.guest_emails,
      place: publicLocation(event?.location ?? { name: "no_location" }),
      meetingUrl: booking.meeting_url ?? null,
      words: eventWords(host?.locale),
      answers,
      notes: booking.internal_notes,
    },
    "host",
  );
}

/** Whether the booking that replaced this one writes to the same calendar (so it moves the event this one wrote). */
async function movedToSameCalendar(booking: BookingDoc): Promise<boolean> {
  if (!booking.rescheduled_to) return false;
  // _id index.
  const next = await BookingModel.findById(booking.rescheduled_to, { calendar_id: 1 }).lean<Pick<BookingDoc, "calendar_id">>();
  return next !== null && next.calendar_id === booking.calendar_id;
}

/** What the calendar effect needs: the calendars' settings and opened credentials, and how long to wait for a meeting link. */
interface CalendarKindDeps {
  reader: CalendarReader;
  meetingWaitMs: number;
}

export function createCalendarKind(deps: CalendarKindDeps): EffectKind {
  return {
    name: "calendar",

    async plan(change: BookingChange): Promise<PlannedEffect[]> {
      const planned = plannedFor(await calendarTarget(change.bookingId), "booking");
      if (change.type === "rescheduled" && change.previousBookingId !== undefined) {
        planned.push(...plannedFor(await calendarTarget(change.previousBookingId), "previous"));
      }
      return planned;
    },

    run: (effect, signal) => run(deps, effect, signal),

    async giveUp(effect: EffectRecord, lastError: string): Promise<void> {
      const _id = objectIdOf(String(effect.payload.booking_id ?? ""));
      // _id index.
      const booking = _id === null ? null : await BookingModel.findById(_id, { event_id: 1, meeting_status: 1, meeting_provider: 1 }).lean<Pick<BookingDoc, "_id" | "event_id" | "meeting_status" | "meeting_provider">>();
      if (!booking) return;
      await setCalendarSync(booking, "failed", lastError);
      // A link the calendar was to make with the event (Meet) is not coming either.
      if (booking.meeting_status === "pending" && booking.meeting_provider && calendarProvider(booking.meeting_provider)?.makesMeetingLinks) {
        await setMeeting(booking, { status: "failed", error: lastError });
      }
    },
  };
}
