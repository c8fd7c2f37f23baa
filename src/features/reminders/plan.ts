// Planning deliveries: for each booking and reminder, the delivery as it should be now (scheduled with its timed effect, skipped or canceled), written over what was planned before.
import mongoose from "mongoose";
import { isDuplicateKeyError } from "../../db/errors.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { ReminderDeliveryModel, ReminderModel, type ReminderDeliveryDoc, type ReminderDoc } from "../../db/models/reminder.js";
import { isReplannable, planDelivery, type PlannedDelivery } from "../../domain/reminder.js";
import { eventBookingHolders } from "../bookings/index.js";
import { dropPendingEffects, scheduleEffects } from "../../outbox/schedule.js";

/** The effect kind that fires a delivery at its due time (src/features/reminders/effects.ts). */
export const DUE_KIND = "reminder";

/** What the due effect carries: which delivery, planned for which version of the reminder. */
export interface DuePayload {
  bookingId: string;
  reminderId: string;
  version: number;
}

/** The booking fields planning reads. */
export type PlannedBooking = Pick<BookingDoc, "_id" | "user_id" | "team_id" | "event_id" | "status" | "start_time" | "end_time">;
const BOOKING_FIELDS = { user_id: 1, team_id: 1, event_id: 1, status: 1, start_time: 1, end_time: 1 } as const;

/** The account a booking's event and its reminders are kept under: the team of a team booking (kept under its first host), else the host. */
export function eventAccountOf(b: Pick<BookingDoc, "user_id" | "team_id">): mongoose.Types.ObjectId {
  return b.team_id ?? b.user_id;
}

/** The seed of a delivery's timed effect: one per booking, reminder and version, so planning it again inserts nothing new. */
function dueSeed(b: PlannedBooking, r: ReminderDoc): string {
  return `reminder:${b._id.toHexString()}:${r._id.toHexString()}:${r.version}`;
}

/** Tries of one pair when another planner (or the delivery's own effect) wrote it meanwhile. */
const PLAN_ATTEMPTS = 4;

/**
 * Plans one booking and one reminder over the delivery `existing` (as read). False when someone else wrote the
 * delivery meanwhile: the caller reads it again and retries.
 */
async function planPair(b: PlannedBooking, r: ReminderDoc, existing: ReminderDeliveryDoc | null, plannedAt: Date, now: Date): Promise<boolean> {
  const plan: PlannedDelivery = planDelivery(r, { status: b.status, start: b.start_time, end: b.end_time }, plannedAt);
  if (existing && (!isReplannable(existing.status) || existing.version > r.version)) return true;
  // No delivery for a reminder that is off or a booking that is gone: nothing was owed, nothing to cancel.
  if (!existing && plan.status === "canceled") return true;
  // A skipped one was never pending (reminders.md: a cancel, a move or a deletion cancels pending ones): it stays
  // skipped when nothing is to be sent any more, and is planned again only when a changed reminder makes it due.
  if (existing?.status === "skipped" && plan.status === "canceled") return true;
  const payload: DuePayload = { bookingId: b._id.toHexString(), reminderId: r._id.toHexString(), version: r.version };
  // The timed effect first, the delivery naming it second: a crash in between leaves an effect that finds no
  // delivery of its version (and waits, then goes), never a scheduled delivery without its effect.
  const effectIds =
    plan.status === "scheduled"
      ? await scheduleEffects(DUE_KIND, { userId: b.user_id.toHexString(), bookingId: payload.bookingId }, dueSeed(b, r), [{ key: "due", dueAt: plan.dueAt, payload: { ...payload } }], now)
      : [];
  const same = existing && existing.version === r.version && existing.status === plan.status && existing.due_at.getTime() === plan.dueAt.getTime();
  if (same) return true;
  const fields = {
    version: r.version,
    recipients: r.recipients,
    channel: r.channel,
    due_at: plan.dueAt,
    status: plan.status,
    effect_ids: effectIds,
    reason: plan.status === "skipped" ? "already due when planned" : plan.status === "canceled" ? (b.status === "confirmed" ? "reminder switched off or deleted" : `booking ${b.status}`) : null,
    updated_at: now,
  };
  if (!existing) {
    const doc: ReminderDeliveryDoc = {
      _id: new mongoose.Types.ObjectId(),
      user_id: b.user_id,
      event_id: b.event_id,
      booking_id: b._id,
      reminder_id: r._id,
      rev: 1,
      sent_at: null,
      booker_counted: false,
      created_at: now,
      ...fields,
    };
    try {
      await ReminderDeliveryModel.collection.insertOne(doc);
      return true;
    } catch (err) {
      // Another planner made it first: read it and plan over it.
      if (isDuplicateKeyError(err)) return false;
      throw err;
    }
  }
  // _id index; only over the state read (rev), so a delivery that went on meanwhile (sending, sent) is left alone.
  const written = await ReminderDeliveryModel.updateOne({ _id: existing._id, rev: existing.rev }, { $set: fields, $inc: { rev: 1 } });
  if (written.matchedCount === 0) return false;
  await dropPendingEffects(existing.effect_ids.filter((id) => !effectIds.includes(id)));
  return true;
}

/** Plans every booking with every reminder given: each pair as planDelivery says, over what each pair had. */
export async function planDeliveries(bookings: readonly PlannedBooking[], reminders: readonly ReminderDoc[], plannedAt: Date, now: Date): Promise<void> {
  if (bookings.length === 0 || reminders.length === 0) return;
  const reminderIds = reminders.map((r) => r._id);
  for (const b of bookings) {
    // (user_id, booking_id, reminder_id) unique index.
    const read = () => ReminderDeliveryModel.find({ user_id: b.user_id, booking_id: b._id, reminder_id: mongoose.trusted({ $in: reminderIds }) }).lean<ReminderDeliveryDoc[]>();
    const byReminder = new Map((await read()).map((d) => [d.reminder_id.toHexString(), d]));
    for (const r of reminders) {
      let existing = byReminder.get(r._id.toHexString()) ?? null;
      for (let attempt = 1; !(await planPair(b, r, existing, plannedAt, now)); attempt++) {
        if (attempt >= PLAN_ATTEMPTS) throw new Error("delivery kept changing while being planned");
        // (user_id, booking_id, reminder_id) unique index.
        existing = await ReminderDeliveryModel.findOne({ user_id: b.user_id, booking_id: b._id, reminder_id: r._id }).lean<ReminderDeliveryDoc>();
      }
    }
  }
}

/** An event's reminders that plan deliveries (deleted ones are re-planned by their deletion alone). */
export async function remindersOfEvent(userId: mongoose.Types.ObjectId, eventId: mongoose.Types.ObjectId): Promise<ReminderDoc[]> {
  // (user_id, event_id, deleted, created_at) index.
  return ReminderModel.find({ user_id: userId, event_id: eventId, deleted: false }).sort({ created_at: 1, _id: 1 }).lean<ReminderDoc[]>();
}

/**
 * Confirmed bookings of the event that have not ended: the ones a reminder changed now still concerns. `holders`:
 * the accounts they are kept under (the host; for a team event every account that may hold one, holdersOf).
 */
export async function runningBookings(holders: readonly mongoose.Types.ObjectId[], eventId: mongoose.Types.ObjectId, now: Date): Promise<PlannedBooking[]> {
  if (holders.length === 0) return [];
  // (user_id, event_id, start_time) index; meetings last hours at most, so a day back covers every one still running.
  return BookingModel.find(
    {
      user_id: holders.length === 1 ? holders[0] : mongoose.trusted({ $in: [...holders] }),
      event_id: eventId,
      status: "confirmed",
      start_time: mongoose.trusted({ $gt: new Date(now.getTime() - 24 * 60 * 60_000) }),
      end_time: mongoose.trusted({ $gt: now }),
    },
    BOOKING_FIELDS,
  ).lean<PlannedBooking[]>();
}

/**
 * The accounts the bookings of a reminder's event are kept under: its account's own, or, for a team event (whose
 * account is the team's), every member and host of the team (teamBookingHolders).
 */
async function holdersOf(r: Pick<ReminderDoc, "user_id" | "event_id">): Promise<mongoose.Types.ObjectId[]> {
  // _id index, with the account: the event as its reminders' account keeps it (deleted ones too).
  const event = await EventModel.findOne({ _id: r.event_id, user_id: r.user_id }, { team_id: 1, hosts: 1 }).lean<Pick<EventDoc, "team_id" | "hosts">>();
  return (event ? await eventBookingHolders(event) : undefined) ?? [r.user_id];
}

/**
 * The bookings a changed reminder re-plans: those of its event that have not ended, and any booking with a
 * delivery of it still scheduled (a follow-up of a meeting that has ended).
 */
export async function bookingsOfReminder(r: ReminderDoc, now: Date): Promise<PlannedBooking[]> {
  const holders = await holdersOf(r);
  const [running, pending] = await Promise.all([
    runningBookings(holders, r.event_id, now),
    // (user_id, reminder_id, status) index: deliveries are kept under their booking's account.
    ReminderDeliveryModel.find(
      { user_id: holders.length === 1 ? holders[0] : mongoose.trusted({ $in: holders }), reminder_id: r._id, status: "scheduled" },
      { booking_id: 1 },
    ).lean<Pick<ReminderDeliveryDoc, "booking_id">[]>(),
  ]);
  const known = new Set(running.map((b) => b._id.toHexString()));
  const more = pending.map((d) => d.booking_id).filter((id) => !known.has(id.toHexString()));
  // _id index.
  const others = more.length === 0 ? [] : await BookingModel.find({ _id: mongoose.trusted({ $in: more }) }, BOOKING_FIELDS).lean<PlannedBooking[]>();
  return [...running, ...others];
}

/** One booking and the one it replaced (a reschedule), as planning reads them. */
export async function bookingsById(ids: readonly string[]): Promise<PlannedBooking[]> {
  const valid = ids.filter((id) => mongoose.isObjectIdOrHexString(id)).map((id) => new mongoose.Types.ObjectId(id));
  // _id index.
  return valid.length === 0 ? [] : BookingModel.find({ _id: mongoose.trusted({ $in: valid }) }, BOOKING_FIELDS).lean<PlannedBooking[]>();
}
