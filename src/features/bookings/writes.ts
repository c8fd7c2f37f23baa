// The only code that writes bookings, as the list of its write flows (book, request, confirm or decline a request, cancel, reschedule, no-show, the host's fields, calendar and meeting progress, imports); each takes one parameter object and does every duty that follows a write. The reservation cells that guard them are in cells.ts.
import mongoose from "mongoose";
import { accountChanged } from "../../db/accountVersions.js";
import { bulkWriteClient, transactionsKeepConcurrentWrites } from "../../db/connection.js";
import { isDuplicateKeyError, isTransientDatabaseError, mayHaveBeenApplied } from "../../db/errors.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { answerProblem, changeProblem, NOT_PENDING, noShowProblem, type NoShow } from "../../domain/booking.js";
import { newPrivateKey as privateKeyOf } from "../../domain/privateKey.js";
import { ApiError, REASONS, refusal } from "../../domain/errors.js";
import type { LimitPeriod } from "../../domain/slots.js";
import { NOTIFY_EVERYONE, recordBookingChange, type Notify } from "../../domain/owed.js";
import type { Clock } from "../../domain/clock.js";
import type { OutboxWake } from "../../outbox/wake.js";
import { feedFields } from "../../domain/bookingFeed.js";
import { hostsOf } from "../../domain/team.js";
import { checkDeadline, holdCells, holdHostCells, holdSeats, releaseHostCells, passCells, releaseBooking, seatedSlotId, type HeldMove, type SeatHold } from "./cells.js";
import { appendChanges } from "./feed.js";
import { finishMove, finishPendingMove, moveStarted } from "./moves.js";
import { bookingsChanged } from "./snapshots.js";

type ObjectId = mongoose.Types.ObjectId;

/**
 * What follows every booking write, here so no write path can forget one: the snapshot stamp of each event whose
 * bookings changed (the host's lists read it), the bookings stamp of each host whose confirmed bookings changed
 * (`busyOf`: public slots read it, src/db/accountVersions.ts), and, when the write recorded an owed change (`wake`
 * given), waking this replica's outbox worker (the change itself is in the written document: no crash can lose it),
 * and, for each booking in `changed.docs` (as stored after the write, with the change it recorded through feedFields),
 * appending that change to its account's booking-change feed before the write answers (./feed.ts). Every flow
 * that changes a booking as callers.md's feed shows it records `feedFields(before, change, after)` in its write and
 * passes the written booking here.
 */
async function afterWrite(eventIds: readonly ObjectId[], wake: OutboxWake | null, busyOf: readonly ObjectId[] = [], changed?: { docs: readonly BookingDoc[]; now: Date }): Promise<void> {
  wake?.owed();
  await Promise.all([bookingsChanged(eventIds), accountChanged(busyOf, "bookings"), changed ? appendChanges(changed.docs, changed.now) : undefined]);
}

/** A new booking's private key, which carries the host's account (src/domain/privateKey.ts). */
export function newPrivateKey(userId: mongoose.Types.ObjectId): string {
  return privateKeyOf(userId.toHexString());
}

type NewBooking = Omit<BookingDoc, "_id" | "private_key" | "status" | "archived" | "booked_at" | "imported" | "updated_at" | "guests_notified">;

/** What every flow that owes a change to the outside (e-mails, webhooks, calendars) is given. */
interface OwingWrite {
  /** This replica's outbox wake: the write records owed work. */
  wake: OutboxWake;
  /** What the write's times (booked, canceled, updated) and its checks of "not started yet" read (`Deps.clock`). */
  clock: Clock;
  /**
   * Whom the change may mail besides the host, as the booker limits decided (public writes; default everyone). It is
   * recorded by the same write as the change itself - in the owed change, which the e-mail kind plans from, and as
   * the booking's guests_notified, which the booker's answer shows - so no retry or crash can decide otherwise.
   */
  notify?: Notify;
}

export interface BookWrite extends OwingWrite {
  fields: NewBooking;
  /** The limited periods (daily, weekly) the booking takes a place of. */
  places?: readonly LimitPeriod[];
  /** The new booking's id (derived from an Idempotency-Key, so a retry finds the first try's booking). */
  id?: ObjectId;
  /** A seated event's seats per slot: the booking takes one seat of its slot (cells.ts holdSeat; a collective seat, one with each host: holdSeats). */
  seats?: number | null;
}

/**
 * Book: writes a confirmed booking after claiming its cells and a place of each limited period; 409 when another
 * booking holds any of the cells (`taken`) or a period is full (`daily_limit`, `weekly_limit`).
 */
export function confirmBooking(w: BookWrite): Promise<BookingDoc> {
  return holdAndInsert(w, { status: "confirmed", owed: "created", answerBy: null });
}

export interface RequestWrite extends BookWrite {
  /** When the request expires unanswered (src/domain/booking.ts requestExpiresAt). */
  answerBy: Date;
}

/**
 * Request: as book, but the booking waits for the host (`pending`, booking-kinds.md): it holds its cells like a
 * confirmed one, owes the `requested` change (the booker's and the host's mails, the webhook, its expiry) and no
 * calendar event or meeting until the host confirms it.
 */
export function requestBooking(w: RequestWrite): Promise<BookingDoc> {
  return holdAndInsert(w, { status: "pending", owed: "requested", answerBy: w.answerBy });
}

/** Claims a new booking's cells and inserts it with `status`, owing `owed`. */
async function holdAndInsert(
  { wake, clock, fields, notify = NOTIFY_EVERYONE, places = [], id = new mongoose.Types.ObjectId(), seats = null }: BookWrite,
  kind: { status: "confirmed" | "pending"; owed: "created" | "requested"; answerBy: Date | null },
): Promise<BookingDoc> {
  const hold = {
    hostId: fields.user_id,
    eventId: fields.event_id,
    bookingId: id,
    start: fields.start_time,
    end: fields.end_time,
    paddingMinutes: fields.padding_minutes,
    bufferBeforeMinutes: fields.buffer_before_minutes ?? 0,
    places,
    now: clock.now(),
  };
  // A collective seat takes a seat with every host (docs/teams.md "Seats"); a personal or round robin one, its host's.
  const claimedAt = seats === null ? await holdCells(hold) : await holdSeats(hostsOf(fields), { ...hold, seats, clock });
  const seatedSlot = seats === null ? undefined : seatedSlotId(fields.event_id, fields.start_time);
  // A collective team booking holds every host's time (teams.md): each other host's cells too, all or none.
  const others = seats === null ? hostsOf(fields).filter((h) => !h.equals(fields.user_id)) : [];
  if (others.length > 0) {
    await holdHostCells(others, { ...hold, bookingId: id }).catch(async (err: unknown) => {
      await releaseBooking({ _id: id, user_id: fields.user_id, event_id: fields.event_id, start_time: fields.start_time }, clock.now());
      throw err;
    });
  }
  const bookedAt = clock.now();
  const doc: BookingDoc = {
    ...fields,
    _id: id,
    // A seated slot is one event in the host's calendars and one meeting: its seats name them by the slot.
    provider_key: (seatedSlot ?? id).toHexString(),
    ...(seatedSlot ? { seated_slot: seatedSlot } : {}),
    private_key: newPrivateKey(fields.user_id),
    status: kind.status,
    archived: false,
    booked_at: bookedAt,
    imported: false,
    updated_at: bookedAt,
    guests_notified: notify.guests,
    ...(kind.answerBy ? { answer_by: kind.answerBy } : {}),
    // The outbox: the insert itself records what the booking owes, so no crash can separate the two.
    ...recordBookingChange(undefined, { type: kind.owed, at: bookedAt, notify }),
  };
  Object.assign(doc, feedFields(undefined, { type: "booking.created", at: bookedAt }, doc));
  try {
    checkDeadline(claimedAt, clock.now());
    await BookingModel.collection.insertOne(doc);
  } catch (err) {
    // The id taken: an earlier try of the same keyed request wrote this booking after all, and it stands.
    const earlier = isDuplicateKeyError(err) ? await writtenBefore(wake, id).catch(() => undefined) : undefined;
    if (earlier) return earlier;
    // Refused, or never sent: the cells go back. An answer lost on the way may hide a booking that was written: it
    // keeps its cells unless it is known not to exist (if it does, the booking stands), since cells given back
    // under a confirmed booking let the same time be booked again (issue 29). Orphans are freed by the grace rule.
    if (!mayHaveBeenApplied(err)) await releaseBooking(doc, clock.now());
    if (!mayHaveBeenApplied(err) || (await written(id)) !== true) throw err;
  }
  await afterWrite([doc.event_id], wake, hostsOf(doc), { docs: [doc], now: clock.now() });
  return doc;
}

/** The booking `oldId` was moved to (its rescheduled_to), after a move's first write whose answer was lost; undefined when that cannot be told. */
async function movedTo(oldId: ObjectId): Promise<ObjectId | null | undefined> {
  // _id index.
  return BookingModel.findById(oldId, { rescheduled_to: 1 }).lean().then(
    (found) => found?.rescheduled_to ?? null,
    () => undefined,
  );
}

/**
 * Whether the booking `id` exists, after a write whose answer was lost: undefined when that cannot be told either
 * (the database still does not answer). "No" is not final: a write still under way may land later.
 */
async function written(id: ObjectId): Promise<boolean | undefined> {
  // _id index.
  return BookingModel.exists({ _id: id }).then(
    (found) => found !== null,
    () => undefined,
  );
}

/**
 * The booking `id` as stored, when an earlier try of the same keyed request wrote it (the service derives the id of
 * a keyed write from its Idempotency-Key): that try's answer may have been lost (a 503), and with it the duties
 * after its write, which are done here again (each is harmless twice). `movedAt`: the try was a move (its time now).
 */
export async function writtenBefore(wake: OutboxWake, id: ObjectId, movedAt?: Date): Promise<BookingDoc | undefined> {
  // _id index. A move's try may have stopped after its first write (./moves.ts): it is finished now.
  const found = (await BookingModel.findById(id).lean<BookingDoc>()) ?? (movedAt ? await finishPendingMove(id, movedAt) : undefined);
  if (!found) return undefined;
  await afterWrite([found.event_id], wake, hostsOf(found));
  return found;
}

export interface CancelWrite extends OwingWrite {
  booking: BookingDoc;
  reason: string | null;
  canceledBy: "host" | "booker";
  /** The name of the keyed write doing it (Idempotency-Key), kept so that its retry finds it done (canceledBefore). */
  keyedWrite?: string | null;
}

/** Cancel: a confirmed booking that has not started becomes canceled, and its cells are freed. */
export async function cancelBooking({ wake, clock, booking, reason, canceledBy, notify = NOTIFY_EVERYONE, keyedWrite = null }: CancelWrite): Promise<BookingDoc> {
  const now = clock.now();
  // Conditional on the state checked, so a concurrent cancel or reschedule makes this one a 422, not a second change.
  const canceled = await writeOverRead(
    booking,
    () => ({ status: "confirmed", start_time: mongoose.trusted({ $gt: now }) }),
    (read) => {
      const problem = changeProblem({ status: read.status, start: read.start_time, end: read.end_time }, now);
      if (problem) throw refusal(REASONS.notChangeable, problem);
      const changes = {
        status: "canceled",
        cancel_reason: reason,
        canceled_at: now,
        updated_at: now,
        canceled_by: canceledBy,
        canceled_under_key: keyedWrite,
        guests_notified: notify.guests,
        ...recordBookingChange(read, { type: "canceled", at: now, canceledBy, notify }),
      };
      return Object.assign(changes, feedFields(read, { type: "booking.canceled", at: now }, { ...read, ...changes }));
    },
  );
  // The booking as written over: a reassign that came between moved its cells to another host.
  await afterWrite([booking.event_id], wake, hostsOf(canceled), { docs: [canceled], now: clock.now() });
  await releaseBooking(canceled, clock.now());
  return canceled;
}

/** The fields a confirmed request takes on: its meeting and calendar, which a request had none of (src/features/bookings/publicService.ts answeredFields). */
export type ConfirmedFields = Pick<BookingDoc, "meeting_url" | "meeting_status" | "meeting_error" | "meeting_provider" | "calendar_id" | "calendar_event_status" | "calendar_event_error">;

export interface AnswerWrite extends OwingWrite {
  booking: BookingDoc;
}

/** Refused with 422 `booking is not pending` unless `booking` is a request the host may still answer. */
function checkAnswerable(booking: BookingDoc, now: Date): void {
  const problem = answerProblem({ status: booking.status, expiresAt: booking.answer_by }, now);
  if (problem) throw refusal(REASONS.notChangeable, problem);
}

/**
 * Writes the host's (or the expiry's) answer to a request: conditional on `pending` (_id index; over the state just
 * checked), so of two racing answers one wins and the other is 422 `booking is not pending`; then every host's duty.
 */
async function writeAnswer({ wake, clock, booking }: AnswerWrite, build: (read: BookingDoc) => Partial<BookingDoc>): Promise<BookingDoc> {
  const answered = await writeOverRead(booking, () => ({ status: "pending" }), build, () => refusal(REASONS.notChangeable, NOT_PENDING));
  await afterWrite([booking.event_id], wake, hostsOf(answered), { docs: [answered], now: clock.now() });
  return answered;
}

/**
 * Confirm: the host says yes to a pending request. It keeps the cells it held, becomes confirmed and owes what a
 * new booking owes (`created`: calendars, meeting, invitation, reminders, booking.created). Conditional on
 * `pending`, so of two racing answers one wins and the other is 422 `booking is not pending`.
 */
export async function confirmRequest({ wake, clock, booking, confirmed }: AnswerWrite & { confirmed: ConfirmedFields }): Promise<BookingDoc> {
  const now = clock.now();
  return writeAnswer({ wake, clock, booking }, (read) => {
    checkAnswerable(read, now);
    const changes = { ...confirmed, status: "confirmed", updated_at: now, ...recordBookingChange(read, { type: "created", at: now }) };
    return Object.assign(changes, feedFields(read, { type: "booking.updated", at: now }, { ...read, ...changes }));
  });
}

/**
 * Decline: the host says no to a pending request (`declined`, with the host's reason), or nobody answered it in
 * time (`expired`, reason `expired`, written by the request's expiry effect). Either frees its cells and owes the
 * `declined` change (the booker's mail, booking.declined). Conditional on `pending`, as confirm.
 */
export async function declineRequest({ wake, clock, booking, reason, expired = false }: AnswerWrite & { reason: string | null; expired?: boolean }): Promise<BookingDoc> {
  const now = clock.now();
  const answered = await writeAnswer({ wake, clock, booking }, (read) => {
    if (!expired) checkAnswerable(read, now);
    else if (read.status !== "pending") throw refusal(REASONS.notChangeable, NOT_PENDING);
    const changes = {
      status: expired ? "expired" : "declined",
      cancel_reason: expired ? "expired" : reason,
      canceled_at: now,
      canceled_by: expired ? null : ("host" as const),
      updated_at: now,
      ...recordBookingChange(read, { type: "declined", at: now }),
    };
    return Object.assign(changes, feedFields(read, { type: "booking.canceled", at: now }, { ...read, ...changes }));
  });
  await releaseBooking(answered, clock.now());
  return answered;
}

/**
 * No-show: the host records who did not come to a confirmed booking that has started (null clears it); 422 before
 * its start. Owes the `no_show` change (booking.no_show) and shows in the feed as booking.updated.
 */
export async function recordNoShow({ wake, clock, booking, noShow }: AnswerWrite & { noShow: NoShow | null }): Promise<BookingDoc> {
  const now = clock.now();
  // Over the state checked; another no-show recorded meanwhile is read, and this one owes its own change after it.
  const recorded = await writeOverRead(booking, () => ({ status: "confirmed" }), (read) => {
    const problem = noShowProblem({ status: read.status, start: read.start_time, end: read.end_time }, now);
    if (problem) throw refusal(REASONS.notChangeable, problem);
    const changes = { no_show: noShow, updated_at: now, ...recordBookingChange(read, { type: "no_show", at: now }) };
    return Object.assign(changes, feedFields(read, { type: "booking.updated", at: now }, { ...read, ...changes }));
  });
  await afterWrite([booking.event_id], wake, [], { docs: [recorded], now: clock.now() });
  return recorded;
}

/** Whether `booking` was canceled by the keyed write `keyedWrite` (an earlier try of it, whose answer was lost). */
export function canceledBefore(booking: Pick<BookingDoc, "status" | "canceled_under_key">, keyedWrite: string | undefined): boolean {
  return keyedWrite !== undefined && booking.status === "canceled" && booking.canceled_under_key === keyedWrite;
}

/**
 * The answer to a reschedule that lost the old booking's marker to another one: what the booking is now
 * (rescheduled, most often: the winner has committed), else that another request is moving it. Either way 422,
 * as for any change of a booking that is no longer confirmed; never 409, which would blame a free slot.
 */
async function movedMeanwhile(old: BookingDoc, at: Date): Promise<never> {
  // _id index.
  const now = await BookingModel.findById(old._id, { status: 1, start_time: 1, end_time: 1 }).lean();
  const problem = now ? changeProblem({ status: now.status, start: now.start_time, end: now.end_time }, at) : "booking not found";
  throw problem ? refusal(REASONS.notChangeable, problem) : refusal(REASONS.changedMeanwhile, "booking is being rescheduled by another request; reload it");
}

export interface RescheduleWrite extends OwingWrite {
  /** The confirmed booking that moves. */
  old: BookingDoc;
  start: Date;
  end: Date;
  /** The gaps the new booking keeps after and before it (its event's, now). */
  paddingMinutes: number;
  bufferBeforeMinutes?: number;
  /** The host calendar the new booking's event goes to, or null. */
  calendarId?: string | null;
  places?: readonly LimitPeriod[];
  id?: ObjectId;
  /** A seated event's seats per slot: the booking moves alone, to a seat of the new slot. */
  seats?: number | null;
  /** A seat's meeting at the new slot (the one its seats share, or a new one); absent: the booking keeps its own. */
  meeting?: Pick<BookingDoc, "meeting_url" | "meeting_status" | "meeting_error" | "meeting_provider" | "meeting_id">;
  /**
   * A round robin booking moved to a time its host is not free at (teams.md): the host round robin gave it to, and
   * why. The new booking holds that host alone, kept under old's account as a reassigned booking is; absent: the
   * hosts stay.
   */
  host?: { id: ObjectId; reason: string };
  /** Who moves it (default the booker), recorded on the owed change: the e-mails and the webhook say so. */
  movedBy?: "host" | "booker";
  /** The host's reason for the move, if given, recorded on the owed change beside `movedBy`. */
  reason?: string | null;
}

/**
 * Reschedule: books `start` instead of `old`: the old booking is marked rescheduled and the new one confirmed (in
 * two steps, ./moves.ts), holding the cells cells.ts passCells hands over.
 */
export async function rescheduleBooking(w: RescheduleWrite): Promise<BookingDoc> {
  const { wake, clock, old, start, end, paddingMinutes, bufferBeforeMinutes = 0, calendarId = null, notify = NOTIFY_EVERYONE, places = [], id = new mongoose.Types.ObjectId(), seats = null, movedBy = "booker", reason = null } = w;
  const now = clock.now();
  const problem = changeProblem({ status: old.status, start: old.start_time, end: old.end_time }, now);
  if (problem) throw refusal(REASONS.notChangeable, problem);
  const hold = { eventId: old.event_id, bookingId: id, start, end, paddingMinutes, bufferBeforeMinutes, places, now };
  const seatedSlot = seats === null ? undefined : seatedSlotId(old.event_id, start);
  // The hosts the new booking holds, the first of them holding its cells as a booking's first host does.
  const hosts = w.host ? [w.host.id] : hostsOf(old);
  const held = seats === null ? await passCells(old, { ...hold, hostId: hosts[0] }) : await seatMove(old, hosts, { ...hold, hostId: hosts[0], seats, clock });
  if (!held) return movedMeanwhile(old, clock.now());
  const { claimedAt, giveBack } = held;
  // A collective booking's other hosts: their cells the two times share passed over with the first host's (a
  // collective seat took a seat with each of them already).
  const others = seats === null ? hosts.slice(1) : [];
  if (others.length > 0) {
    await holdHostCells(others, hold).catch(async (err: unknown) => {
      await giveBack();
      throw err;
    });
  }

  const fresh: BookingDoc = {
    ...old,
    _id: id,
    start_time: start,
    end_time: end,
    padding_minutes: paddingMinutes,
    buffer_before_minutes: bufferBeforeMinutes,
    status: "confirmed",
    archived: false,
    booked_at: now,
    private_key: newPrivateKey(old.user_id),
    cancel_reason: null,
    canceled_at: null,
    rescheduled_from: old._id,
    rescheduled_to: null,
    imported: false,
    updated_at: now,
    // The meeting (meeting_url and its provider's ids) stays, and so does the key providers name it by. The calendar
    // event is moved where the provider can (same calendar: same event id), else written afresh.
    // A seat joins the new slot's event and meeting instead.
    // A seat leaving a slot for a time without seats (the event's seats cleared meanwhile) takes neither the slot's
    // event nor its key along: it is written afresh.
    provider_key: seatedSlot ? seatedSlot.toHexString() : old.seated_slot ? id.toHexString() : (old.provider_key ?? old._id.toHexString()),
    seated_slot: seatedSlot ?? null,
    ...(seatedSlot && w.meeting ? w.meeting : {}),
    ...calendarFields(calendarId),
    calendar_event_id: !seatedSlot && !old.seated_slot && calendarId !== null && calendarId === old.calendar_id ? (old.calendar_event_id ?? null) : null,
    canceled_by: null,
    guests_notified: notify.guests,
    ...(w.host ? { host_ids: hosts, assignment_reason: w.host.reason } : {}),
    // The new booking owes the reschedule (kinds find the old one by previous_booking_id); what the old one
    // still owed stays with it, and so does how far the relay planned the old one's changes.
    planned_seq: 0,
    ...recordBookingChange(undefined, { type: "rescheduled", at: now, previousBookingId: old._id.toHexString(), movedBy, reason, notify }),
  };
  // A round robin move to another host: the host it leaves learns it in their feed, as after a reassign (feedFields).
  const left = hostsOf(old).filter((h) => !hosts.some((kept) => kept.equals(h))).map((h) => h.toHexString());
  Object.assign(fresh, feedFields(undefined, { type: "booking.rescheduled", at: now, previousBookingId: old._id.toHexString(), previousHostIds: left }, fresh));
  try {
    checkDeadline(claimedAt, clock.now());
    // Step 1 of the move (./moves.ts: two steps, not a transaction), its commit point. _id index; conditional on the
    // state just checked, so a concurrent cancel makes this move a 422, not a second change, and on the feed's count
    // read, so a host's note or a reassign written since the read is not lost from the new booking (made from it).
    const moved = await BookingModel.updateOne(
      { _id: old._id, status: "confirmed", feed_n: old.feed_n ?? null },
      { $set: { status: "rescheduled", rescheduled_to: id, updated_at: now, ...moveStarted(fresh) } },
    );
    if (moved.matchedCount === 0) throw changedMeanwhile();
  } catch (err) {
    // A transient failure (a conflict, a deadline) answers 503 with Retry-After (src/platform/transport/errors.ts):
    // nothing was written, the cells go back, the booker tries again. But a write whose answer was lost may have
    // happened: then the move is done, and giving the cells back would leave the new booking without them. Unless
    // the old booking is found moved to this one, the move stays as far as it got (503): if it did not happen, the
    // cells it took from the old booking go back to it once the grace has passed (reclaimStale, handBack).
    const unknown = mayHaveBeenApplied(err);
    // Refused because an earlier try of the same keyed request moved the booking meanwhile: its move stands.
    const earlier = unknown ? undefined : await writtenBefore(wake, id, clock.now()).catch(() => undefined);
    if (earlier) {
      await releaseBooking(old, clock.now());
      return earlier;
    }
    if (!unknown) await giveBack();
    if (!unknown || (await movedTo(old._id))?.equals(id) !== true) throw err;
  }
  await finishMove(old._id, fresh);
  await afterWrite([old.event_id], wake, [...hostsOf(old), ...(w.host ? [w.host.id] : [])], { docs: [fresh], now: clock.now() });
  await releaseBooking(old, clock.now());
  return fresh;
}

export interface ReassignWrite extends OwingWrite {
  /** The confirmed round robin booking, as read. */
  booking: BookingDoc;
  /** The host it goes to, and why (round robin's words, or that the owner chose them). */
  to: ObjectId;
  reason: string;
}

/**
 * Reassign (teams.md "Host actions"): the booking goes from its host to `to`. The new host's cells are claimed first
 * (409 `taken` when another booking holds any, nothing written), then the booking is changed only if it still has
 * the host it was read with, then the old host's cells are freed: the time is held by one of them throughout, and
 * two reassigns racing cannot both win. The old host is told through the owed change (`previous_host_id`).
 */
export async function reassignBooking({ wake, clock, booking, to, reason }: ReassignWrite): Promise<BookingDoc> {
  const now = clock.now();
  const problem = changeProblem({ status: booking.status, start: booking.start_time, end: booking.end_time }, now);
  if (problem) throw refusal(REASONS.notChangeable, problem);
  const from = hostsOf(booking);
  await holdHostCells([to], {
    eventId: booking.event_id,
    bookingId: booking._id,
    start: booking.start_time,
    end: booking.end_time,
    paddingMinutes: booking.padding_minutes,
    bufferBeforeMinutes: booking.buffer_before_minutes ?? 0,
    now,
  });
  // The feeds of the hosts it leaves get the change too (feedFields: how they learn it is no longer theirs).
  const left = from.filter((h) => !h.equals(to)).map((h) => h.toHexString());
  let reassigned: BookingDoc;
  try {
    checkDeadline(now, clock.now());
    // Conditional on the host read (round robin holds one), so of two racing reassigns (or a cancel) one wins.
    reassigned = await writeOverRead(booking, () => ({ status: "confirmed", host_ids: from[0] }), (read) => {
      if (changeProblem({ status: read.status, start: read.start_time, end: read.end_time }, now) || !hostsOf(read)[0].equals(from[0])) {
        throw changedMeanwhile();
      }
      const changes = {
        host_ids: [to],
        assignment_reason: reason,
        updated_at: now,
        ...recordBookingChange(read, { type: "reassigned", at: now, previousHostId: from[0].toHexString() }),
      };
      return Object.assign(changes, feedFields(read, { type: "booking.updated", at: now, previousHostIds: left }, { ...read, ...changes }));
    });
  } catch (err) {
    // Not written (or known not to be): the new host's cells go back. An answer lost on the way keeps them (issue 29).
    if (!mayHaveBeenApplied(err)) await releaseHostCells(to, booking._id);
    throw err;
  }
  for (const host of from) if (!host.equals(to)) await releaseHostCells(host, booking._id);
  await afterWrite([booking.event_id], wake, [...from, to], { docs: [reassigned], now: clock.now() });
  return reassigned;
}

/** A seat's move: a seat of the new slot with each of `hosts` for the new booking (cells.ts holdSeats), given back if the move does not happen. */
async function seatMove(old: BookingDoc, hosts: readonly ObjectId[], h: SeatHold): Promise<HeldMove> {
  const claimedAt = await holdSeats(hosts, h);
  const moved = { _id: h.bookingId, user_id: h.hostId, host_ids: [...hosts], event_id: old.event_id, start_time: h.start, seated_slot: seatedSlotId(old.event_id, h.start) };
  return { claimedAt, giveBack: () => releaseBooking(moved, h.clock.now()) };
}

/** What a booking records about its host calendar: which one it goes to, and that it is still to be written there. */
export function calendarFields(calendarId: string | null): Pick<BookingDoc, "calendar_id" | "calendar_event_status" | "calendar_event_error"> {
  return { calendar_id: calendarId, calendar_event_status: calendarId === null ? "none" : "pending", calendar_event_error: null };
}

/** The host's fields as a booking without them holds them. */
const HOST_FIELD_DEFAULTS = { internal_notes: null, archived: false } as const;

/**
 * The host's own fields of a booking (PATCH /bookings/<id>): notes and archiving; no change is owed to anyone, but
 * the feed shows it (booking.updated). A PATCH that leaves them as the booking holds them changes nothing, so it
 * writes nothing and the feed shows nothing (callers.md: each change once). Answers the booking as stored after it.
 */
export async function updateHostFields(booking: BookingDoc, changes: { internal_notes?: string | null; archived?: boolean }, now: Date): Promise<BookingDoc> {
  const fields = Object.keys(changes) as (keyof typeof changes)[];
  // Conditional on the status read as well, so an edit does not show a moved booking as confirmed.
  const updated = await writeOverRead(booking, (read) => ({ status: read.status }), (read) => {
    if (fields.every((k) => (read[k] ?? HOST_FIELD_DEFAULTS[k]) === changes[k])) return {};
    const set = { ...changes, updated_at: now };
    return Object.assign(set, feedFields(read, { type: "booking.updated", at: now }, { ...read, ...set }));
  });
  if (updated === booking) return booking;
  await afterWrite([booking.event_id], null, [], { docs: [updated], now });
  return updated;
}

/** Tries of one change of a booking racing other changes of it. */
const EDIT_ATTEMPTS = 8;

/**
 * Writes `build(read)`, a change made from the booking as read, on the condition `state(read)` and on the feed's
 * count read. Every write that owes a change or shows in the feed moves that count (feedFields), so a write that
 * landed between this one's read and its write (a host's note, a reassign, another no-show) is never written over:
 * not the changes it owed (the relay may have planned them, and a change written under their number would never
 * be), nor its feed entry. The loser reads the booking again and builds anew, its checks included; `refused()` is
 * thrown once they fail or after EDIT_ATTEMPTS. The first build's checks throw as they are. Answers the booking as
 * written: the one read with the change on it.
 */
async function writeOverRead(
  booking: BookingDoc,
  state: (read: BookingDoc) => Record<string, unknown>,
  build: (read: BookingDoc) => Partial<BookingDoc>,
  refused: () => ApiError = changedMeanwhile,
): Promise<BookingDoc> {
  let read = booking;
  let changes = build(read);
  for (let attempt = 1; ; attempt++) {
    // Nothing to change (the booking as read already holds it): the read is the answer.
    if (Object.keys(changes).length === 0) return read;
    // _id index.
    const result = await BookingModel.updateOne({ _id: read._id, ...state(read), feed_n: read.feed_n ?? null }, { $set: changes });
    if (result.matchedCount === 1) return { ...read, ...changes };
    // _id index.
    const again = attempt < EDIT_ATTEMPTS ? await BookingModel.findById(read._id).lean<BookingDoc>() : null;
    if (!again) throw refused();
    read = again;
    try {
      changes = build(read);
    } catch (err) {
      throw err instanceof ApiError ? refused() : err;
    }
  }
}

/** 422 CHANGED_MEANWHILE: the booking is not as the write read it (a cancel, a move or another change came first). */
const changedMeanwhile = (): ApiError => refusal(REASONS.changedMeanwhile, "booking was changed meanwhile; reload it");

/** Where the booking's calendar event stands (the calendar effect's progress); no change is owed to anyone. */
export async function setCalendarSync(booking: Pick<BookingDoc, "_id" | "event_id">, status: "synced" | "failed" | "pending", error: string | null, now: Date): Promise<void> {
  // _id index.
  await BookingModel.updateOne({ _id: booking._id }, { $set: { calendar_event_status: status, calendar_event_error: error, updated_at: now } });
  await afterWrite([booking.event_id], null);
}

/** The id the provider gave the booking's event, kept before anything else happens so no retry writes a second one. */
export async function setCalendarEventId(booking: Pick<BookingDoc, "_id" | "event_id">, eventId: string, now: Date): Promise<void> {
  // _id index.
  await BookingModel.updateOne({ _id: booking._id }, { $set: { calendar_event_id: eventId, updated_at: now } });
  await afterWrite([booking.event_id], null);
}

/** The id a team booking's host's calendar provider gave its event (setCalendarEventId, for one host: teams.md). */
export async function setHostCalendarEventId(booking: Pick<BookingDoc, "_id" | "event_id">, hostId: string, eventId: string, now: Date): Promise<void> {
  // _id index. One host's entry alone: the hosts' writes run apart.
  await BookingModel.updateOne({ _id: booking._id }, { $set: { [`host_events.${hostId}`]: eventId, updated_at: now } });
  await afterWrite([booking.event_id], null);
}

/**
 * The booker's switch of reminder e-mails for this booking (one-click unsubscribe, the manage page); no change is
 * owed to anyone: each reminder reads it when it falls due.
 */
export async function setRemindersUnsubscribed(booking: Pick<BookingDoc, "_id" | "event_id">, unsubscribed: boolean, now: Date): Promise<void> {
  // _id index.
  await BookingModel.updateOne({ _id: booking._id }, { $set: { reminders_unsubscribed: unsubscribed, updated_at: now } });
  await afterWrite([booking.event_id], null);
}

/** Tries of an import's transaction when it meets a transient conflict (a write conflict, an election). */
const IMPORT_ATTEMPTS = 3;
const IMPORT_RETRY_WAIT_MS = 250;

/**
 * Imported bookings (AdminService.ImportBookings), all or nothing. They are history: they claim no cells and owe no
 * change (no e-mail or webhook for a booking made elsewhere).
 *
 * One insert, on the client whose deadline allows it (src/db/connection.ts, BULK_WRITE_TIMEOUT_MS), so every booking
 * is in or none is, whatever happens in between:
 * - on MongoDB, in one transaction: nothing is visible before the commit, and an aborted or unanswered transaction
 *   leaves nothing behind;
 * - on a server whose commit drops what others wrote beside it (`transactionsKeepConcurrentWrites`: the embedded
 *   jongodb, where a transaction lost 3-4 of 7 bookings written beside an import), as one plain insert command:
 *   that server runs one command at a time, so a reader sees none of the import or all of it (test/api/import.test.ts),
 *   and a retry inserts only what is missing (`ordered: false`; the ids already in answer duplicate keys).
 * Not in chunks: the embedded server spends time in proportion to the collection on every write whatever its size
 * (at 10 000 bookings an insert of 1 or of 1 000 both take seconds), so chunks only multiply it, and chunks outside
 * a transaction would need a marker hiding a half-written import from every reader. A transient failure (a write
 * conflict, an election) is tried again, up to IMPORT_ATTEMPTS; then it is the caller's 503 with Retry-After
 * (src/platform/transport/errors.ts). An insert whose answer was lost may still have happened: the bookings' ids
 * are fixed before the first try, so their presence tells, and a retry of a finished import is never a second copy.
 */
export async function insertImported(imported: readonly BookingDoc[], at: Date): Promise<void> {
  if (imported.length === 0) return;
  // Each imported booking is a booking.created of the feed (callers.md), recorded in the same insert.
  const docs = imported.map((d) => ({ ...d, ...feedFields(undefined, { type: "booking.created", at }, d) }));
  const client = bulkWriteClient();
  const bookings = client.db(BookingModel.db.name).collection<BookingDoc>(BookingModel.collection.collectionName);
  const ids = { _id: { $in: docs.map((d) => d._id) } };
  // _id index.
  const allIn = () => bookings.countDocuments(ids).then((n) => n === docs.length);
  const inTransaction = transactionsKeepConcurrentWrites();
  for (let attempt = 1; ; attempt++) {
    const session = inTransaction ? client.startSession() : undefined;
    try {
      session?.startTransaction();
      await bookings.insertMany([...docs], session ? { session, ordered: true } : { ordered: false });
      await session?.commitTransaction();
      break;
    } catch (err) {
      await session?.abortTransaction().catch(() => undefined);
      if (await allIn().catch(() => false)) break;
      if (attempt >= IMPORT_ATTEMPTS || !isTransientDatabaseError(err)) {
        // Outside a transaction, part of an insert may have landed (or land still, behind this delete on a server
        // that runs one command at a time): it is taken back, so a refused import has written nothing.
        // _id index.
        if (!session) await bookings.deleteMany(ids).catch(() => undefined);
        throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, IMPORT_RETRY_WAIT_MS * attempt));
    } finally {
      await session?.endSession().catch(() => undefined);
    }
  }
  await afterWrite([...new Map(docs.map((d) => [d.event_id.toHexString(), d.event_id])).values()], null, docs.map((d) => d.user_id), { docs, now: at });
}

/** Where the booking's meeting stands (the outbox makes links that providers make); no change is owed to anyone. */
/**
 * The meeting a run made for a seated slot (booking-kinds.md "Seats"), given to every confirmed seat of it that has
 * none; a seat already holding one (a run on another replica made it first) keeps it. Whether `meeting` is the
 * slot's now (else its maker deletes it).
 */
export async function shareSlotMeeting(seat: Pick<BookingDoc, "user_id" | "event_id" | "start_time" | "seated_slot">, meeting: { url: string | null; id: string }, now: Date): Promise<boolean> {
  // (user_id, event_id, start_time) index.
  const slot = { user_id: seat.user_id, event_id: seat.event_id, start_time: seat.start_time, seated_slot: seat.seated_slot, status: "confirmed" as const };
  await BookingModel.updateMany({ ...slot, meeting_id: null }, { $set: { meeting_status: "ready", meeting_url: meeting.url, meeting_id: meeting.id, meeting_error: null, updated_at: now } });
  await afterWrite([seat.event_id], null);
  return (await BookingModel.countDocuments({ ...slot, meeting_id: meeting.id })) > 0;
}

export async function setMeeting(
  booking: Pick<BookingDoc, "_id" | "event_id">,
  meeting: { status: "ready" | "failed" | "pending"; url?: string | null; id?: string | null; error?: string | null },
  now: Date,
): Promise<void> {
  await writeMeeting(booking, meeting, now, {});
}

/**
 * Records the meeting a booking's meeting effect made or moved, if the booking is still confirmed with the meeting
 * it was read with (`booking.meeting_id`); false when it was canceled or moved meanwhile. The effect of that change
 * read the booking before this and found no meeting to delete, so the maker deletes one it made new.
 */
export async function setMeetingMade(booking: Pick<BookingDoc, "_id" | "event_id" | "meeting_id">, meeting: { url: string | null; id: string }, now: Date): Promise<boolean> {
  return writeMeeting(booking, { status: "ready", ...meeting }, now, { status: "confirmed", meeting_id: booking.meeting_id ?? null });
}

async function writeMeeting(
  booking: Pick<BookingDoc, "_id" | "event_id">,
  meeting: { status: "ready" | "failed" | "pending"; url?: string | null; id?: string | null; error?: string | null },
  now: Date,
  condition: Record<string, unknown>,
): Promise<boolean> {
  const set: Partial<BookingDoc> = { meeting_status: meeting.status, meeting_error: meeting.error ?? null, updated_at: now };
  if (meeting.url !== undefined) set.meeting_url = meeting.url;
  if (meeting.id !== undefined) set.meeting_id = meeting.id;
  // _id index.
  const result = await BookingModel.updateOne({ _id: booking._id, ...condition }, { $set: set });
  if (result.matchedCount === 0) return false;
  await afterWrite([booking.event_id], null);
  return true;
}
