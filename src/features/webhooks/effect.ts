// The webhook effect kind: one signed message per active webhook subscribed to a booking change, frozen when planned.
import type { Clock } from "../../domain/clock.js";
import type { JsonObject } from "@bufbuild/protobuf";
import mongoose from "mongoose";
import { BookingSchema } from "../../../gen/scheduling/v1/booking_pb.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { WebhookModel, type WebhookDoc } from "../../db/models/webhook.js";
import { unsealWithKeyId, type Keyring } from "../../domain/secretBox.js";
import { eventTypeOf, WEBHOOK_RETRY_DELAYS_MS } from "../../domain/webhook.js";
import { sendWebhookMessage } from "./deliver.js";
import { hostFormats, presentBooking, teamEventUrl, teamOfBooking } from "../bookings/index.js";
import { hostsOf } from "../../domain/team.js";
import { responseToJson } from "../../platform/rest/json.js";
import type { EffectKind, EffectRecord, PlanReads, TryResult } from "../../outbox/types.js";

/**
 * The `data` of a booking message: the host's whole booking (by id, or as given) and the event, read now, and a team
 * booking's team (teams.md); undefined when the booking, its event or its host is gone. `canceledBy` fills in who
 * canceled when the booking does not say.
 */
export async function bookingMessageData(which: string | BookingDoc, appUrl: string, now: Date, canceledBy?: "host" | "booker"): Promise<JsonObject | undefined> {
  // _id indexes.
  const bookingDoc = typeof which === "string" ? await BookingModel.findById(which).lean<BookingDoc>() : which;
  if (!bookingDoc) return undefined;
  const [event, host, team] = await Promise.all([
    EventModel.findById(bookingDoc.event_id, { name: 1, color: 1, location: 1, url: 1 }).lean<EventDoc>(),
    UserModel.findById(hostsOf(bookingDoc)[0]).lean<UserDoc>(),
    teamOfBooking(bookingDoc),
  ]);
  if (!event || !host) return undefined;
  // The host's whole booking, as GET /api/v1/bookings/<id> answers it (integrations.md: the booking record plus
  // event_id, start_time, end_time, answers, guest_emails, meeting_url, cancel_reason, canceled_by), without the
  // reminders' deliveries, which only GET shows (a new booking's are planned after its message).
  const { reminders: _deliveries, ...booking } = responseToJson(BookingSchema, await presentBooking(bookingDoc, event, hostFormats(host), now));
  return {
    booking: { ...booking, canceled_by: booking.canceled_by ?? canceledBy ?? null },
    event: {
      id: event._id.toHexString(),
      name: event.name,
      url: team ? teamEventUrl(appUrl, team, event.url) : `${appUrl}/${encodeURIComponent(host.url)}/${encodeURIComponent(event.url)}`,
    },
    ...(team ? { team: { ...team } } : {}),
  };
}

/** The result of one send as the outbox wants it; a 410 means the receiver is gone for good. */
function resultOf(out: { ok: boolean; statusCode?: number; error?: string }): TryResult {
  if (out.ok) return { ok: true, statusCode: out.statusCode };
  return { ok: false, error: out.error ?? "failed", statusCode: out.statusCode, permanent: out.statusCode === 410 };
}

/** What sending to a webhook needs: the keyring its secret is sealed with, and whether private addresses may be reached. */
export interface WebhookOutbound {
  secrets: Keyring;
  allowPrivate: boolean;
}

/** Sends `body` as message `id` to the webhook now (the outbox's runs and pings). */
export async function deliverToWebhook(hook: WebhookDoc, id: string, body: string, outbound: WebhookOutbound, signal?: AbortSignal): Promise<TryResult> {
  const secret = unsealWithKeyId(hook.secret_sealed, outbound.secrets);
  return resultOf(await sendWebhookMessage({ url: hook.url, secret, id, body, allowPrivate: outbound.allowPrivate, signal }));
}

/** After a 410 or the last retry failed: the webhook is switched off until the host turns it on again (PATCH active true). */
export async function switchOff(webhookId: string | null, lastError: string, now: Date): Promise<void> {
  if (webhookId === null) return;
  // _id index.
  await WebhookModel.updateOne({ _id: webhookId, active: true }, { $set: { active: false, deactivated_reason: lastError, updated_at: now } });
}

/** How often a message waiting for its meeting link looks again. */
const MEETING_POLL_MS = 1000;

/**
 * A message planned while its booking's meeting link was still being made: it waits for the link (up to
 * MEETING_WAIT_SECONDS from when it was planned) and then carries the meeting as it is by then, ready or not.
 * `undefined`: send the message as it was frozen.
 */
async function withMeeting(effect: EffectRecord, waitMs: number, at: number): Promise<Record<string, unknown> | "later" | undefined> {
  const data = effect.payload.data as { booking?: Record<string, unknown> } | undefined;
  if (data?.booking?.meeting_status !== "pending" || effect.bookingId === null) return undefined;
  // _id index.
  const now = await BookingModel.findById(effect.bookingId, { meeting_url: 1, meeting_status: 1, meeting_error: 1 }).lean<Pick<BookingDoc, "meeting_url" | "meeting_status" | "meeting_error">>();
  if (!now) return undefined;
  if (now.meeting_status === "pending" && at - effect.createdAt.getTime() < waitMs) return "later";
  const booking = { ...data.booking, meeting_url: now.meeting_url ?? null, meeting_status: now.meeting_status ?? "pending", meeting_error: now.meeting_error ?? null };
  return { ...effect.payload, data: { ...data, booking } };
}

/** The hosts the booking a reschedule replaced held (none when it is gone). */
async function previousHosts(previousBookingId: string | undefined, reads: PlanReads): Promise<mongoose.Types.ObjectId[]> {
  const previous = await reads.booking(previousBookingId);
  return previous ? hostsOf(previous) : [];
}

/** The webhook effect kind, with the public address (for event links) and how to reach receivers. */
export function createWebhookKind(deps: WebhookOutbound & { appUrl(): string; meetingWaitMs: number; clock: Clock }): EffectKind {
  return {
    name: "webhook",
    retryDelaysMs: WEBHOOK_RETRY_DELAYS_MS,

    async plan(change, reads) {
      const type = eventTypeOf(change.type);
      const booking = await reads.booking(change.bookingId);
      if (!booking) return [];
      // (user_id, active) index; a handful of webhooks per account, filtered here. Every host of a team booking's
      // (teams.md), and a reschedule's also those of the hosts the old booking held (a round robin move to another
      // host: the old host learns its booking was replaced).
      const holders = change.type === "rescheduled" && booking.team_id ? [...hostsOf(booking), ...(await previousHosts(change.previousBookingId, reads))] : hostsOf(booking);
      const hooks = await WebhookModel.find({ user_id: mongoose.trusted({ $in: holders }), active: true }, { events: 1, user_id: 1 }).lean();
      const subscribed = hooks.filter((h) => h.events.includes(type));
      if (subscribed.length === 0) return [];
      const data = await bookingMessageData(booking, deps.appUrl(), deps.clock.now(), change.canceledBy);
      if (!data) return [];
      if (change.type === "rescheduled") {
        if (change.previousBookingId !== undefined) data.previous_booking_id = change.previousBookingId;
        // Who moved it, and the host's reason: beside previous_booking_id, since they describe the change, not the
        // booking (data.booking stays as GET shows it). A change recorded before it was kept was the booker's.
        data.rescheduled_by = change.movedBy ?? "booker";
        data.reschedule_reason = change.reason ?? null;
      }
      // Frozen now: every retry sends these bytes' content, whatever happens to the booking later.
      const message = { type, timestamp: change.at.toISOString(), data };
      // Each webhook is a destination of its own: a receiver that hangs rests without holding up the others.
      return subscribed.map((h) => ({ key: h._id.toHexString(), webhookId: h._id.toHexString(), userId: h.user_id.toHexString(), destination: `webhook:${h._id.toHexString()}`, payload: message }));
    },

    async run(effect: EffectRecord, signal: AbortSignal) {
      // _id index, owner checked.
      const hook = effect.webhookId === null ? null : await WebhookModel.findOne({ _id: effect.webhookId, user_id: effect.userId }).lean<WebhookDoc>();
      // The host removed or switched off the webhook meanwhile: nothing is owed to it any more.
      if (!hook) return { ok: false, error: "webhook was deleted", permanent: true };
      if (!hook.active) return { ok: false, error: "webhook is not active", permanent: true };
      const fresh = await withMeeting(effect, deps.meetingWaitMs, deps.clock.nowMs());
      if (fresh === "later") return { ok: "later", until: new Date(deps.clock.nowMs() + MEETING_POLL_MS), reason: "waiting for the meeting link" };
      return deliverToWebhook(hook, effect.id, JSON.stringify(fresh ?? effect.payload), deps, signal);
    },

    giveUp: (effect, lastError) => switchOff(effect.webhookId, lastError, deps.clock.now()),
  };
}
