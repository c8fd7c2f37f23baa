// The reminders' effect kinds: planning deliveries, firing one at its due time (who gets what), and sending its e-mails and webhook messages.
import type { JsonObject } from "@bufbuild/protobuf";
import mongoose from "mongoose";
import type { BookingDoc } from "../../db/models/booking.js";
import { ReminderDeliveryModel, ReminderModel, type ReminderDeliveryDoc, type ReminderDoc } from "../../db/models/reminder.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { WebhookModel, type WebhookDoc } from "../../db/models/webhook.js";
import { isTooLate, recipientsOf, type Recipient, type ReminderFields } from "../../domain/reminder.js";
import type { Clock } from "../../domain/clock.js";
import { leavesCalendarsAlone } from "../../domain/owed.js";
import type { Keyring } from "../../domain/secretBox.js";
import { WEBHOOK_RETRY_DELAYS_MS } from "../../domain/webhook.js";
import { scheduleEffects } from "../../outbox/schedule.js";
import type { EffectKind, EffectRecord, RunResult } from "../../outbox/types.js";
import type { Access } from "../accounts/index.js";
import { bookingById } from "../bookings/index.js";
import { composeReminderMail, sendLogged, type MailSetup } from "../email/index.js";
import { bookingMessageData, deliverToWebhook, switchOff } from "../webhooks/index.js";
import { bookingsById, bookingsOfReminder, DUE_KIND, eventAccountOf, planDeliveries, remindersOfEvent, runningBookings, type DuePayload } from "./plan.js";
import { reminderJson } from "./present.js";
import { hostShares, hostsOf } from "../../domain/team.js";

export interface ReminderKindDeps {
  appUrl(): string;
  /** How e-mail is sent; undefined without SMTP_URL (then e-mail reminders are skipped). */
  mail: MailSetup | undefined;
  access: Pick<Access, "mayRemindBooker">;
  secrets: Keyring;
  allowPrivate: boolean;
  reminderLateLimitMinutes: number;
  /** What due times and waits are read against (`Deps.clock`). */
  clock: Clock;
}

const PLAN_KIND = "reminder_plan";
const EMAIL_KIND = "reminder_email";
const WEBHOOK_KIND = "reminder_webhook";

/**
 * What a planning effect re-plans: a booking change (the booking and the one it replaced), a reminder written
 * (create, update, delete: it waits until the write is there, `version`), or an event's bookings after an import
 * (it waits until the first imported booking is there).
 */
type PlanPayload =
  | { scope: "booking"; bookingId: string; at: string; previousBookingId?: string }
  | { scope: "reminder"; reminderId: string; version: number; at: string }
  | { scope: "import"; eventId: string; firstBookingId: string; at: string };

/** How long an effect waits for the write it was planned ahead of (a reminder saved, bookings imported) before it decides the write never came. */
const WRITE_WAIT_MS = 60_000;
const WAIT_POLL_MS = 1000;

function waitOrMoot(effect: EffectRecord, what: string, now: Date): RunResult {
  return now.getTime() - effect.createdAt.getTime() < WRITE_WAIT_MS
    ? { ok: "later", until: new Date(now.getTime() + WAIT_POLL_MS), reason: `waiting for ${what}` }
    : { ok: "moot", reason: `${what} never came` };
}

/** The planning run: what a PlanPayload asks for, against the reminders and bookings as they are now. */
async function runPlan(effect: EffectRecord, clock: Clock): Promise<RunResult> {
  const p = effect.payload as PlanPayload;
  const at = new Date(p.at);
  const now = clock.now();
  if (p.scope === "booking") {
    const bookings = await bookingsById([p.bookingId, ...(p.previousBookingId !== undefined ? [p.previousBookingId] : [])]);
    const booking = bookings.find((b) => b._id.toHexString() === p.bookingId);
    if (!booking) return { ok: "moot", reason: "booking not found" };
    await planDeliveries(bookings, await remindersOfEvent(eventAccountOf(booking), booking.event_id), at, now);
    return { ok: true };
  }
  if (p.scope === "reminder") {
    // _id index.
    const reminder = mongoose.isObjectIdOrHexString(p.reminderId) ? await ReminderModel.findById(p.reminderId).lean<ReminderDoc>() : null;
    if (!reminder || reminder.version < p.version) return waitOrMoot(effect, "the reminder's change", now);
    await planDeliveries(await bookingsOfReminder(reminder, now), [reminder], at, now);
    return { ok: true };
  }
  if ((await bookingsById([p.firstBookingId])).length === 0) return waitOrMoot(effect, "the imported bookings", now);
  const eventId = new mongoose.Types.ObjectId(p.eventId);
  const userId = new mongoose.Types.ObjectId(effect.userId);
  await planDeliveries(await runningBookings([userId], eventId, now), await remindersOfEvent(userId, eventId), at, now);
  return { ok: true };
}

/** Plans (inserts) the effect that re-plans a reminder's deliveries once its write with `version` is there. */
export async function planReminderChange(r: Pick<ReminderDoc, "_id" | "user_id">, version: number, at: Date): Promise<void> {
  const payload: PlanPayload = { scope: "reminder", reminderId: r._id.toHexString(), version, at: at.toISOString() };
  await scheduleEffects(PLAN_KIND, { userId: r.user_id.toHexString(), bookingId: null }, `reminder-plan:${payload.reminderId}:${version}`, [{ key: "plan", payload }], at);
}

/**
 * Plans the effects that plan the reminders of imported bookings, per event that has any reminder, once the
 * import is there (a confirmed booking moved in from elsewhere is reminded like any other).
 */
export async function planImported(events: readonly { eventId: string; userId: string }[], firstBookingId: string, at: Date): Promise<void> {
  for (const e of events) {
    // (user_id, event_id, deleted, created_at) index.
    if (!(await ReminderModel.exists({ user_id: new mongoose.Types.ObjectId(e.userId), event_id: new mongoose.Types.ObjectId(e.eventId), deleted: false }))) continue;
    const payload: PlanPayload = { scope: "import", eventId: e.eventId, firstBookingId, at: at.toISOString() };
    await scheduleEffects(PLAN_KIND, { userId: e.userId, bookingId: null }, `import-plan:${firstBookingId}:${e.eventId}`, [{ key: "plan", payload }], at);
  }
}

/**
 * The delivery an effect is about: by the account its booking is kept under (`holder`, when the effect is of
 * another account: a team booking's other host's webhook), else the account the effect is of, booking and reminder.
 */
async function deliveryOf(userId: string, p: { bookingId: string; reminderId: string; holder?: string }): Promise<ReminderDeliveryDoc | null> {
  if (!mongoose.isObjectIdOrHexString(p.bookingId) || !mongoose.isObjectIdOrHexString(p.reminderId)) return null;
  // (user_id, booking_id, reminder_id) unique index.
  return ReminderDeliveryModel.findOne({ user_id: p.holder ?? userId, booking_id: p.bookingId, reminder_id: p.reminderId }).lean<ReminderDeliveryDoc>();
}

/** Settles a delivery that nothing (more) will be sent for, unless something was sent already. */
async function settle(d: ReminderDeliveryDoc, status: "skipped" | "canceled" | "unsubscribed" | "failed", reason: string, now: Date): Promise<void> {
  // _id index; a delivery that sent something stays sent.
  await ReminderDeliveryModel.updateOne(
    { _id: d._id, version: d.version, sent_at: null, status: mongoose.trusted({ $in: ["scheduled", "sending"] }) },
    { $set: { status, reason, updated_at: now }, $inc: { rev: 1 } },
  );
}

/** One message went out: the delivery is sent (at the first one's time); an e-mail also notes its reader (mailedKey). */
async function markSent(d: ReminderDeliveryDoc, now: Date, reader?: string): Promise<void> {
  // _id index.
  if (reader !== undefined) await ReminderDeliveryModel.updateOne({ _id: d._id }, { $set: { [`mailed.${reader}`]: now } });
  await ReminderDeliveryModel.updateOne({ _id: d._id, sent_at: null }, { $set: { status: "sent", sent_at: now, reason: null, updated_at: now }, $inc: { rev: 1 } });
}

/** The messages a due delivery sends: one e-mail per reader, or one message per webhook subscribed to booking.reminder. */
interface Parts {
  readers: Recipient[];
  hooks: WebhookDoc[];
  /** Why nobody gets anything, when nobody does. */
  none?: { status: "skipped" | "unsubscribed"; reason: string };
}

async function partsOf(r: ReminderDoc, b: BookingDoc, mailOn: boolean): Promise<Parts> {
  if (r.channel === "webhook") {
    // (user_id, active) index; a handful per account, filtered here. Every host's (teams.md: a team booking's reach each host's webhooks).
    const hosts = hostsOf(b);
    const hooks = (await WebhookModel.find({ user_id: hosts.length === 1 ? hosts[0] : mongoose.trusted({ $in: hosts }), active: true }).lean<WebhookDoc[]>()).filter((h) =>
      h.events.includes("booking.reminder"),
    );
    return hooks.length > 0 ? { readers: [], hooks } : { readers: [], hooks, none: { status: "skipped", reason: "no active webhook subscribes to booking.reminder" } };
  }
  if (!mailOn) return { readers: [], hooks: [], none: { status: "skipped", reason: "SMTP_URL is not set" } };
  // The booker's switch (one-click unsubscribe, the manage page) stops the booker's e-mails only.
  const readers = recipientsOf(r.recipients).filter((reader) => reader !== "booker" || b.reminders_unsubscribed !== true);
  return readers.length > 0 ? { readers, hooks: [] } : { readers, hooks: [], none: { status: "unsubscribed", reason: "the booker turned reminders off" } };
}

/** What an e-mail part carries: the delivery, the reader, and the words frozen when the delivery fell due. */
interface EmailPayload extends DuePayload {
  reader: Recipient;
  /** A team booking's host other than its first, when the reader is that host (teams.md: every host gets what a host gets). */
  hostId?: string;
  text: Pick<ReminderFields, "timing" | "subject" | "body">;
}

/** The e-mail parts of a due delivery: one per reader, the host's once per host of the booking (the first under `host`). */
function mailParts(readers: readonly Recipient[], booking: BookingDoc, p: DuePayload, text: EmailPayload["text"]): { key: string; payload: Record<string, unknown> }[] {
  const hosts = hostsOf(booking).map((id) => id.toHexString());
  return readers.flatMap((reader) => {
    const payload: EmailPayload = { ...p, reader, text };
    if (reader !== "host") return [{ key: reader, payload: { ...payload } }];
    return hostShares(hosts, reader).map((share) => ({ key: share.key, payload: { ...payload, ...(share.first ? {} : { hostId: share.hostId }) } }));
  });
}

/**
 * A delivery fell due: unless it was canceled, re-planned, is too late or has nobody to go to, it becomes
 * `sending` and its messages are planned as effects of their own (each with its retries). Planned once: a second
 * run (a crash after the first) plans the same ids again, which adds nothing.
 */
async function fire(effect: EffectRecord, deps: ReminderKindDeps): Promise<RunResult> {
  const p = effect.payload as unknown as DuePayload;
  const now = deps.clock.now();
  const d = await deliveryOf(effect.userId, p);
  // Planned a moment ago and its delivery not written yet (plan.ts writes the effect first).
  if (!d || d.version < p.version) return waitOrMoot(effect, "the delivery's plan", now);
  if (d.version > p.version || (d.status !== "scheduled" && d.status !== "sending")) return { ok: "moot", reason: "re-planned" };
  const [booking, reminder] = await Promise.all([bookingById(p.bookingId), ReminderModel.findById(p.reminderId).lean<ReminderDoc>()]);
  if (!booking || booking.status !== "confirmed") {
    await settle(d, "canceled", `booking ${booking?.status ?? "gone"}`, now);
    return { ok: "moot", reason: "booking no longer confirmed" };
  }
  // A change of the reminder (or its deletion) re-plans this delivery: its planning effect is on its way.
  if (!reminder || reminder.version !== p.version) return { ok: "moot", reason: "reminder changed" };
  if (d.status === "scheduled" && isTooLate(d.due_at, now, deps.reminderLateLimitMinutes)) {
    await settle(d, "skipped", `more than ${deps.reminderLateLimitMinutes} minutes late`, now);
    return { ok: "moot", reason: "too late" };
  }
  const parts = await partsOf(reminder, booking, deps.mail !== undefined);
  if (parts.none) {
    await settle(d, parts.none.status, parts.none.reason, now);
    return { ok: "moot", reason: parts.none.reason };
  }
  if (d.status === "scheduled") {
    // _id index; over the state read, so a re-plan that came in between wins and this run is moot.
    const moved = await ReminderDeliveryModel.updateOne({ _id: d._id, rev: d.rev }, { $set: { status: "sending", updated_at: now }, $inc: { rev: 1 } });
    if (moved.matchedCount === 0) return { ok: "later", until: now, reason: "delivery changed meanwhile" };
  }
  const owner = { userId: booking.user_id.toHexString(), bookingId: p.bookingId };
  const seed = `${effect.id}:send`;
  const text = { timing: reminder.timing, subject: reminder.subject, body: reminder.body };
  await scheduleEffects(EMAIL_KIND, owner, seed, mailParts(parts.readers, booking, p, text), now);
  if (parts.hooks.length > 0) {
    const host = await UserModel.findById(booking.user_id, { locale: 1 }).lean<Pick<UserDoc, "locale">>();
    const data = await bookingMessageData(booking, deps.appUrl(), now);
    if (!data || !host) return { ok: "moot", reason: "booking's event or host gone" };
    // Put together now, at its due time, and sent the same way on every retry (as every booking message is).
    const message: JsonObject = { type: "booking.reminder", timestamp: now.toISOString(), data: { ...data, reminder: reminderJson(reminder, host.locale), due_at: d.due_at.toISOString() } };
    await scheduleEffects(
      WEBHOOK_KIND,
      owner,
      seed,
      // `type` names the message in the webhook's deliveries list, as for every booking message.
      // Each under its webhook's account (another host's, for a team booking), naming the account the delivery is kept under.
      parts.hooks.map((h) => ({
        key: `webhook:${h._id.toHexString()}`,
        webhookId: h._id.toHexString(),
        userId: h.user_id.toHexString(),
        destination: `webhook:${h._id.toHexString()}`,
        payload: { ...p, holder: owner.userId, type: message.type, message },
      })),
      now,
    );
  }
  return { ok: true };
}

/** A message of a delivery that is sending: still owed unless the delivery was settled or the booking canceled meanwhile. */
async function owedPart(effect: EffectRecord, p: DuePayload, now: Date): Promise<{ d: ReminderDeliveryDoc; booking: BookingDoc } | RunResult> {
  const d = await deliveryOf(effect.userId, p);
  if (!d || d.version !== p.version || !["sending", "sent", "failed"].includes(d.status)) return { ok: "moot", reason: "delivery settled" };
  const booking = await bookingById(p.bookingId);
  if (!booking || booking.status !== "confirmed") {
    await settle(d, "canceled", `booking ${booking?.status ?? "gone"}`, now);
    return { ok: "moot", reason: "booking no longer confirmed" };
  }
  return { d, booking };
}

/**
 * Whether this reader may be mailed: the booker's address was typed by the booker, so (for a booking made through
 * the booking page, not an imported one) it counts against that address's cap with the host, once per delivery.
 */
async function bookerAllowed(d: ReminderDeliveryDoc, booking: BookingDoc, deps: ReminderKindDeps): Promise<boolean> {
  if (booking.imported) return true;
  // _id index: the first try counts, the retries do not count again.
  const first = await ReminderDeliveryModel.updateOne({ _id: d._id, booker_counted: false }, { $set: { booker_counted: true } });
  if (first.matchedCount === 0) return d.reason !== "the booker's address is past its limit";
  const allowed = await deps.access.mayRemindBooker(booking.user_id.toHexString(), booking.attendee_email);
  if (!allowed) await ReminderDeliveryModel.updateOne({ _id: d._id }, { $set: { reason: "the booker's address is past its limit" } });
  return allowed;
}

async function sendMail(effect: EffectRecord, deps: ReminderKindDeps, signal: AbortSignal): Promise<RunResult> {
  const p = effect.payload as unknown as EmailPayload;
  const owed = await owedPart(effect, p, deps.clock.now());
  if (!("d" in owed)) return owed;
  const { d, booking } = owed;
  // Handed over before by a run whose end was lost (its lease ran out after the send): not sent twice.
  const mailedKey: keyof NonNullable<ReminderDeliveryDoc["mailed"]> = p.hostId === undefined ? p.reader : `${p.reader}:${p.hostId}`;
  if (d.mailed?.[mailedKey] !== undefined) return { ok: true };
  if (p.reader === "booker" && booking.reminders_unsubscribed === true) {
    if (d.recipients === "booker") await settle(d, "unsubscribed", "the booker turned reminders off", deps.clock.now());
    return { ok: "moot", reason: "the booker turned reminders off" };
  }
  if (p.reader === "booker" && !(await bookerAllowed(d, booking, deps))) {
    if (d.recipients === "booker") await settle(d, "skipped", "the booker's address is past its limit", deps.clock.now());
    return { ok: "moot", reason: "booker limit" };
  }
  if (!deps.mail) return { ok: false, error: "SMTP_URL is not set" };
  const appUrl = deps.appUrl();
  const mail = await composeReminderMail({
    messageId: effect.id,
    booking,
    reader: p.reader,
    ...(p.hostId !== undefined ? { hostId: p.hostId } : {}),
    reminder: p.text,
    from: deps.mail.from,
    appUrl,
    unsubscribeUrl: p.reader === "booker" ? `${appUrl}/booking/${booking.private_key}/unsubscribe` : undefined,
  });
  if (!mail) return { ok: "moot", reason: "host not found" };
  const sent = await sendLogged(deps.mail, mail, { effect_id: effect.id, kind: EMAIL_KIND, audience: p.reader, change: "reminder", attempt: effect.attempts }, signal);
  if (!sent.ok) return sent;
  await markSent(d, deps.clock.now(), mailedKey);
  return { ok: true };
}

async function sendWebhook(effect: EffectRecord, deps: ReminderKindDeps, signal: AbortSignal): Promise<RunResult> {
  const p = effect.payload as unknown as DuePayload & { holder?: string; message: JsonObject };
  // _id index, owner checked. A webhook deleted or switched off meanwhile is owed nothing any more.
  const hook = effect.webhookId === null ? null : await WebhookModel.findOne({ _id: effect.webhookId, user_id: effect.userId }).lean<WebhookDoc>();
  if (!hook || !hook.active) return { ok: "moot", reason: "webhook deleted or switched off" };
  const owed = await owedPart(effect, p, deps.clock.now());
  if (!("d" in owed)) return owed;
  const result = await deliverToWebhook(hook, effect.id, JSON.stringify(p.message), deps, signal);
  if (result.ok) await markSent(owed.d, deps.clock.now());
  return result;
}

/** A message given up (its retries exhausted): the delivery failed unless another message of it went out. */
async function gaveUp(effect: EffectRecord, lastError: string, now: Date): Promise<void> {
  const d = await deliveryOf(effect.userId, effect.payload as unknown as DuePayload);
  if (d && d.status === "sending") await settle(d, "failed", lastError, now);
}

/**
 * The four kinds, registered by src/app: planning (from booking changes, reminder writes and imports), the due
 * effect of each delivery, and its e-mails and webhook messages (with the webhooks' own retry schedule).
 */
export function createReminderKinds(deps: ReminderKindDeps): EffectKind[] {
  const none = async () => [];
  return [
    {
      name: PLAN_KIND,
      async plan(change) {
        if (leavesCalendarsAlone(change.type)) return [];
        // A host without reminders pays one indexed read per booking change; a team booking's reminders are its team's.
        // (user_id, deleted) index.
        if (!(await ReminderModel.exists({ user_id: new mongoose.Types.ObjectId(change.teamId ?? change.userId), deleted: false }))) return [];
        const payload: PlanPayload = { scope: "booking", bookingId: change.bookingId, at: change.at.toISOString(), ...(change.previousBookingId !== undefined ? { previousBookingId: change.previousBookingId } : {}) };
        return [{ key: "plan", payload }];
      },
      run: (effect) => runPlan(effect, deps.clock),
    },
    { name: DUE_KIND, plan: none, run: (effect) => fire(effect, deps) },
    { name: EMAIL_KIND, plan: none, run: (effect, signal) => sendMail(effect, deps, signal), giveUp: (effect, lastError) => gaveUp(effect, lastError, deps.clock.now()) },
    {
      name: WEBHOOK_KIND,
      plan: none,
      retryDelaysMs: WEBHOOK_RETRY_DELAYS_MS,
      run: (effect, signal) => sendWebhook(effect, deps, signal),
      async giveUp(effect, lastError) {
        await switchOff(effect.webhookId, lastError, deps.clock.now());
        await gaveUp(effect, lastError, deps.clock.now());
      },
    },
  ];
}
