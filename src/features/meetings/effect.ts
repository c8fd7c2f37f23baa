// The `meeting` effect kind: makes, moves and deletes a booking's meeting at a provider that keeps meetings (Zoom), so the link is ready without holding up the booking.
import { objectIdOf } from "../../db/ids.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { MeetingAccountModel, type MeetingAccountDoc } from "../../db/models/integration.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { ianaForServiceZone } from "../../domain/timezones.js";
import { leavesCalendarsAlone } from "../../domain/owed.js";
import { errorText } from "../../platform/log.js";
import { ProviderError, meetingProvider, RateLimitedError, withDeadline, type MeetingProvider } from "../../providers/index.js";
import type { BookingChange, EffectKind, EffectRecord, PlanReads, PlannedEffect, RunResult } from "../../outbox/types.js";
import { bookingById, bookingsOfSlot, setMeeting, setMeetingMade, shareSlotMeeting } from "../bookings/index.js";
import { markMeetingAccount } from "./status.js";
import type { Owing } from "../../outbox/wake.js";
import { meetingAccountAccess } from "./tokens.js";
import type { OAuthAccessSettings } from "../oauth/index.js";

/*
 * Convergence, as the calendar effect does it: the effect carries a booking id, and each run makes the provider
 * match the booking as it is now. Confirmed: the meeting exists at the booking's time (made, or moved with PATCH
 * so the link stays). Canceled: the meeting is deleted. Rescheduled: nothing, the booking that replaced it owns
 * the meeting (it kept meeting_id and meeting_url).
 */

/** One exchange with the provider, as for calendar writes: nobody waits on it, a slow provider should get through. */
const CALL_TIMEOUT_MS = 15_000;

/** Bookings whose meeting a provider with an API keeps. */
function providerOf(b: Pick<BookingDoc, "meeting_provider"> | null): MeetingProvider | undefined {
  const p = b?.meeting_provider ? meetingProvider(b.meeting_provider) : undefined;
  return p?.scheduleMeeting && p.deleteMeeting ? p : undefined;
}


function failure(err: unknown, now: Date): RunResult {
  if (err instanceof RateLimitedError) return { ok: "later", until: new Date(now.getTime() + err.retryAfterMs), reason: err.message };
  if (err instanceof ProviderError) return { ok: false, error: err.message, permanent: err.kind === "refused" || err.kind === "blocked" };
  return { ok: false, error: errorText(err) };
}

async function run(settings: MeetingKindSettings, effect: EffectRecord, signal: AbortSignal): Promise<RunResult> {
  const booking = await bookingById(String(effect.payload.booking_id ?? ""));
  const provider = providerOf(booking);
  if (!booking || !provider) return { ok: true };
  if (booking.seated_slot) return runSlot(settings, booking, provider, signal);
  if (booking.status === "rescheduled") return { ok: true };
  if (booking.status !== "confirmed" && !booking.meeting_id) return { ok: true };
  // (user_id, provider) unique index.
  const account = await MeetingAccountModel.findOne({ user_id: booking.user_id, provider: provider.name }).lean<MeetingAccountDoc>();
  if (!account) {
    if (booking.status !== "confirmed") return { ok: true };
    return { ok: false, error: `${provider.name} is not connected`, permanent: true };
  }
  try {
    const access = meetingAccountAccess(account, settings);
    const bounded = <T>(work: (s: AbortSignal) => Promise<T>) => withDeadline(CALL_TIMEOUT_MS, (deadline) => work(AbortSignal.any([signal, deadline])));
    if (booking.status !== "confirmed") {
      await bounded((s) => provider.deleteMeeting!({ access, id: booking.meeting_id!, signal: s }));
      await markMeetingAccount(settings, account, null);
      return { ok: true };
    }
    // _id indexes.
    const [event, host] = await Promise.all([
      EventModel.findById(booking.event_id, { name: 1 }).lean<Pick<EventDoc, "name">>(),
      UserModel.findById(booking.user_id, { timezone: 1 }).lean<Pick<UserDoc, "timezone">>(),
    ]);
    const meeting = await bounded((s) =>
      provider.scheduleMeeting!({
        access,
        id: booking.meeting_id ?? null,
        meeting: {
          topic: `${event?.name ?? "Meeting"} with ${booking.attendee_name}`,
          start: booking.start_time,
          durationMinutes: Math.round((booking.end_time.getTime() - booking.start_time.getTime()) / 60_000),
          timezone: ianaForServiceZone(host?.timezone ?? "UTC"),
        },
        signal: s,
      }),
    );
    const made = await setMeetingMade(booking, { url: meeting.url ?? booking.meeting_url ?? null, id: meeting.id }, settings.clock.now());
    // Canceled or moved while it was being made: a meeting made new here is no one's (the one the booking names is
    // the change's to handle).
    if (!made && meeting.id !== booking.meeting_id) await bounded((s) => provider.deleteMeeting!({ access, id: meeting.id, signal: s }));
    await markMeetingAccount(settings, account, null);
    return { ok: true };
  } catch (err) {
    return await meetingFailure(settings, account, err);
  }
}

async function meetingFailure(settings: MeetingKindSettings, account: MeetingAccountDoc, err: unknown): Promise<RunResult> {
  if (err instanceof ProviderError && err.noCall) {
    // Its status says so already (invalid, or waiting out a rate limit).
  } else if (err instanceof RateLimitedError) {
    // _id index: the provider is left alone until then, by every effect of this account.
    await MeetingAccountModel.updateOne({ _id: account._id }, { $set: { blocked_until: new Date(settings.clock.nowMs() + err.retryAfterMs) } });
  } else if (err instanceof ProviderError) {
    // Refused: invalid (authorize again); unreachable or a bad answer: error. The host hears of a change.
    await markMeetingAccount(settings, account, err);
  }
  return failure(err, settings.clock.now());
}

/*
 * A seated slot is one meeting (booking-kinds.md "Seats"): its seats share one meeting_id (a new seat copies the
 * slot's, publicService meetingOfNew). A run for any seat converges the slot as its seats are now: confirmed seats
 * left, the meeting they share is moved to the slot's time (or made, when none has one yet, and shared with the
 * seats that have none); none left, every meeting a seat of the slot named is deleted. Two runs that both made one
 * for a new slot keep the one the seats got first; the other is deleted by its maker.
 */
async function runSlot(settings: MeetingKindSettings, booking: BookingDoc, provider: MeetingProvider, signal: AbortSignal): Promise<RunResult> {
  const slot = (await bookingsOfSlot(booking)).filter((b) => b.meeting_provider === provider.name);
  const seats = slot.filter((b) => b.status === "confirmed");
  // A seat that left a slot others still hold leaves the meeting to them.
  if (booking.status !== "confirmed" && seats.length > 0) return { ok: true };
  const named = [...new Set(slot.map((b) => b.meeting_id).filter((id): id is string => !!id))];
  if (seats.length === 0 && named.length === 0) return { ok: true };
  // (user_id, provider) unique index.
  const account = await MeetingAccountModel.findOne({ user_id: booking.user_id, provider: provider.name }).lean<MeetingAccountDoc>();
  if (!account) return seats.length === 0 ? { ok: true } : { ok: false, error: `${provider.name} is not connected`, permanent: true };
  try {
    const access = meetingAccountAccess(account, settings);
    const bounded = <T>(work: (s: AbortSignal) => Promise<T>) => withDeadline(CALL_TIMEOUT_MS, (deadline) => work(AbortSignal.any([signal, deadline])));
    if (seats.length === 0) {
      for (const id of named) await bounded((s) => provider.deleteMeeting!({ access, id, signal: s }));
    } else {
      const first = seats[0];
      // _id indexes.
      const [event, host] = await Promise.all([
        EventModel.findById(first.event_id, { name: 1 }).lean<Pick<EventDoc, "name">>(),
        UserModel.findById(first.user_id, { timezone: 1 }).lean<Pick<UserDoc, "timezone">>(),
      ]);
      const id = seats.find((b) => b.meeting_id)?.meeting_id ?? null;
      const request = {
        topic: event?.name ?? "Meeting",
        start: first.start_time,
        durationMinutes: Math.round((first.end_time.getTime() - first.start_time.getTime()) / 60_000),
        timezone: ianaForServiceZone(host?.timezone ?? "UTC"),
      };
      const meeting = await bounded((s) => provider.scheduleMeeting!({ access, id, meeting: request, signal: s }));
      const url = meeting.url ?? seats.find((b) => b.meeting_id === meeting.id)?.meeting_url ?? null;
      if (id === null) {
        // The slot's first meeting: the seats that have none get it, unless a crossing run's got there first.
        if (!(await shareSlotMeeting(first, { url, id: meeting.id }, settings.clock.now()))) await bounded((s) => provider.deleteMeeting!({ access, id: meeting.id, signal: s }));
      } else {
        // Moved, or made anew (deleted at the provider): every seat shows it.
        for (const b of seats) if (b.meeting_id !== meeting.id || b.meeting_url !== url || b.meeting_status !== "ready") await setMeeting(b, { status: "ready", url, id: meeting.id }, settings.clock.now());
      }
    }
    await markMeetingAccount(settings, account, null);
    return { ok: true };
  } catch (err) {
    return await meetingFailure(settings, account, err);
  }
}

/** What the meeting effect needs: the OAuth clients and keyring of the accounts, and the outbox's wake (a changed account's notices). */
type MeetingKindSettings = OAuthAccessSettings & Owing;

export function createMeetingKind(settings: MeetingKindSettings): EffectKind {
  return {
    name: "meeting",

    async plan(change: BookingChange, reads: PlanReads): Promise<PlannedEffect[]> {
      // The booking of the change only: a reschedule's new booking moves the meeting the old one had. But a seat
      // moved leaves its slot's meeting behind, which goes if it was the last seat.
      if (leavesCalendarsAlone(change.type)) return [];
      const booking = await reads.booking(change.bookingId);
      const planned: PlannedEffect[] = providerOf(booking) ? [{ key: "meeting", payload: { booking_id: change.bookingId } }] : [];
      if (change.type === "rescheduled" && change.previousBookingId !== undefined) {
        const previous = await reads.booking(change.previousBookingId);
        if (previous?.seated_slot && providerOf(previous)) planned.push({ key: "previous", payload: { booking_id: change.previousBookingId } });
      }
      return planned;
    },

    run: (effect, signal) => run(settings, effect, signal),

    async giveUp(effect: EffectRecord, lastError: string): Promise<void> {
      const _id = objectIdOf(String(effect.payload.booking_id ?? ""));
      // _id index.
      const booking = _id === null ? null : await BookingModel.findOne({ _id, meeting_status: "pending" }, { event_id: 1 }).lean<Pick<BookingDoc, "_id" | "event_id">>();
      if (booking) await setMeeting(booking, { status: "failed", error: lastError }, settings.clock.now());
    },
  };
}

