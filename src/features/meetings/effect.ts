// The `meeting` effect kind: makes, moves and deletes a booking's meeting at a provider that keeps meetings (Zoom), so the link is ready without holding up the booking.
import { objectIdOf } from "../../db/ids.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { MeetingAccountModel, type MeetingAccountDoc } from "../../db/models/integration.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { ianaForServiceZone } from "../../domain/timezones.js";
import { errorText } from "../../platform/log.js";
import { ProviderError, meetingProvider, RateLimitedError, withDeadline, type MeetingProvider } from "../../providers/index.js";
import type { BookingChange, EffectKind, EffectRecord, PlannedEffect, RunResult } from "../../outbox/types.js";
import { bookingById, setMeeting } from "../bookings/index.js";
import { markMeetingAccount } from "./notice.js";
import type { OutboxWake } from "../../outbox/wake.js";
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


function failure(err: unknown): RunResult {
  if (err instanceof RateLimitedError) return { ok: "later", until: new Date(Date.now() + err.retryAfterMs), reason: err.message };
  if (err instanceof ProviderError) return { ok: false, error: err.message, permanent: err.kind === "refused" || err.kind === "blocked" };
  return { ok: false, error: errorText(err) };
}

async function run(settings: MeetingKindSettings, effect: EffectRecord, signal: AbortSignal): Promise<RunResult> {
  const booking = await bookingById(String(effect.payload.booking_id ?? ""));
  const provider = providerOf(booking);
  if (!booking || !provider) return { ok: true };
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
      await markMeetingAccount(settings.wake, account, null);
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
    await setMeeting(booking, { status: "ready", url: meeting.url ?? booking.meeting_url ?? null, id: meeting.id });
    await markMeetingAccount(settings.wake, account, null);
    return { ok: true };
  } catch (err) {
    if (err instanceof ProviderError && err.noCall) {
      // Its status says so already (invalid, or waiting out a rate limit).
    } else if (err instanceof RateLimitedError) {
      // _id index: the provider is left alone until then, by every effect of this account.
      await MeetingAccountModel.updateOne({ _id: account._id }, { $set: { blocked_until: new Date(Date.now() + err.retryAfterMs) } });
    } else if (err instanceof ProviderError) {
      // Refused: invalid (authorize again); unreachable or a bad answer: error. The host hears of a change.
      await markMeetingAccount(settings.wake, account, err);
    }
    return failure(err);
  }
}

/** What the meeting effect needs: the OAuth clients and keyring of the accounts, and the outbox's wake (a changed account's notices). */
type MeetingKindSettings = OAuthAccessSettings & { wake: OutboxWake };

export function createMeetingKind(settings: MeetingKindSettings): EffectKind {
  return {
    name: "meeting",

    async plan(change: BookingChange): Promise<PlannedEffect[]> {
      // The booking of the change only: a reschedule's new booking moves the meeting the old one had.
      const booking = await bookingById(change.bookingId);
      return providerOf(booking) ? [{ key: "meeting", payload: { booking_id: change.bookingId } }] : [];
    },

    run: (effect, signal) => run(settings, effect, signal),

    async giveUp(effect: EffectRecord, lastError: string): Promise<void> {
      const _id = objectIdOf(String(effect.payload.booking_id ?? ""));
      // _id index.
      const booking = _id === null ? null : await BookingModel.findOne({ _id, meeting_status: "pending" }, { event_id: 1 }).lean<Pick<BookingDoc, "_id" | "event_id">>();
      if (booking) await setMeeting(booking, { status: "failed", error: lastError });
    },
  };
}

