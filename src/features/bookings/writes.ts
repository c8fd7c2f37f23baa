// The only code that writes bookings: confirm, cancel and reschedule guarded by reservation cells, the host's fields, calendar sync, imports; each does every duty that follows a write.
import { randomBytes } from "node:crypto";
import mongoose from "mongoose";
import { accountChanged } from "../../db/accountVersions.js";
import { bulkWriteClient } from "../../db/connection.js";
import { objectIdOf } from "../../db/ids.js";
import { isDuplicateKeyError, isTransientDatabaseError, mayHaveBeenApplied } from "../../db/errors.js";
import { BookingCellModel, BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { BUSY_MARGIN_MS, changeProblem } from "../../domain/booking.js";
import { invalid, notFound, unavailable } from "../../domain/errors.js";
import { slotNotAvailable } from "../../domain/eventRules.js";
import { bookingCells } from "../../domain/reservation.js";
import { blockedRange, type BusyBooking, type LimitPeriod } from "../../domain/slots.js";
import { NOTIFY_EVERYONE, recordBookingChange, type Notify } from "../../domain/owed.js";
import type { OutboxWake } from "../../outbox/wake.js";
import { bookingsChanged } from "./snapshots.js";

/*
 * The mechanism, and why it is not a lock document in a transaction.
 *
 * Every confirmed booking made here claims the reservation keys of its blocked range
 * ([start, end + padding): padding is kept after a meeting only; src/domain/reservation.ts) as documents of booking_cells,
 * whose unique (user_id, key) index refuses a second claim on any key. Two bookings of one host
 * that would overlap, the padding after each included, always want a common key, so whichever inserts it second
 * gets a duplicate-key error and answers 409 `slot is not available`. The keys go in sorted with
 * an ordered insertMany, so racing requests for one slot collide on their first key and exactly
 * one gets through. The availability check (isSlotFree over the bookings read a moment before)
 * still runs first: it gives the precise answer for the ordinary case; the cells make it hold
 * under concurrency.
 *
 * The recommended alternative — $inc a per-host lock document inside a transaction so that
 * concurrent bookings conflict — was tried on the embedded server (jongodb) first: there two
 * transactions that update the same existing document both commit (a lost update; 15 concurrent
 * bookings of one slot all succeeded), and a conflict it does detect comes without the
 * TransientTransactionError label, so withTransaction would not retry it. A unique index needs no
 * transaction isolation at all, behaves the same on real MongoDB and on the embedded server, and
 * keeps working across several service processes.
 *
 * The claim is written before the booking, outside a transaction (a duplicate key inside a
 * jongodb transaction closes the connection). So a crash between the two leaves keys whose
 * booking never appears, and a cancel that dies before releasing leaves keys of a booking that is
 * no longer confirmed. Both are reclaimed when a later claim runs into them: keys of a booking
 * that is not confirmed are free at once; keys of a booking that does not exist are free once
 * they are older than CLAIM_GRACE_MS. A booking is written only if its own claim is younger than
 * CLAIM_DEADLINE_MS, half the grace, so keys are never reclaimed from under a booking being written.
 *
 * Imported bookings claim no keys (they are history, moved in without any availability check);
 * they still block slots through the availability check.
 *
 * Limit places. An event's daily and weekly limits (src/domain/eventRules.ts) hold the same way: a limited
 * period (a host-local day or week) has `size` places, keys "L:<event>:<d|w>:<date>:<n>" in the same
 * collection, and a booking claims one free place of each period it falls in after its time cells
 * (claimPlaces). The unique index lets one request have a place, so of racing requests for the last
 * place exactly one is booked, on every protocol and replica. Bookings that hold no place (made before the
 * limit was set, or imported) are counted from the bookings read by the availability check: that many
 * of the free places are left to them, always the lowest, so racers still compete for the same key.
 */

const CLAIM_GRACE_MS = 120_000;
const CLAIM_DEADLINE_MS = CLAIM_GRACE_MS / 2;

type ObjectId = mongoose.Types.ObjectId;

/**
 * What follows every booking write, here so no write path can forget one: the snapshot stamp of each event whose
 * bookings changed (the host's lists read it), the bookings stamp of each host whose confirmed bookings changed
 * (`busyOf`: public slots read it, src/db/accountVersions.ts), and, when the write recorded an owed change (`wake`
 * given), waking this replica's outbox worker (the change itself is in the written document: no crash can lose it).
 */
async function afterWrite(eventIds: readonly ObjectId[], wake: OutboxWake | null, busyOf: readonly ObjectId[] = []): Promise<void> {
  wake?.owed();
  await Promise.all([bookingsChanged(eventIds), accountChanged(busyOf, "bookings")]);
}

export function newPrivateKey(): string {
  // 32 random bytes: 43 url-safe characters.
  return randomBytes(32).toString("base64url");
}

/** How long a cell outlives its booking's blocked range: far more than any padding (2 h) or clock skew. */
const CELL_LIFETIME_AFTER_END_MS = 24 * 60 * 60_000;

/**
 * When the cells of a booking may be deleted (booking_cells' TTL index). A cell's key lies inside the blocked
 * range of every booking that holds it, so the expiry of any of them is late enough for the cell, also after
 * a reschedule hands it from one booking to the next.
 */
function cellsExpireAt(start: Date, end: Date, paddingMinutes: number): Date {
  return new Date(blockedRange(start, end, paddingMinutes).end.getTime() + CELL_LIFETIME_AFTER_END_MS);
}

async function release(bookingId: ObjectId): Promise<void> {
  // booking_id index.
  await BookingCellModel.deleteMany({ booking_id: bookingId });
}

/**
 * Frees keys among `keys` whose holder is gone (see the mechanism above). True when some were
 * freed, so the claim is worth one more try.
 */
async function reclaimStale(userId: ObjectId, keys: readonly string[], claimant: ObjectId, now: Date): Promise<boolean> {
  // (user_id, key) unique index.
  const held = await BookingCellModel.find(
    { user_id: userId, key: mongoose.trusted({ $in: keys }), booking_id: mongoose.trusted({ $ne: claimant }) },
    { booking_id: 1, created_at: 1, _id: 0 },
  ).lean();
  const newestClaim = new Map<string, number>();
  for (const c of held) {
    const id = c.booking_id.toHexString();
    newestClaim.set(id, Math.max(newestClaim.get(id) ?? 0, c.created_at.getTime()));
  }
  if (newestClaim.size === 0) return true; // released meanwhile
  const holderIds = [...newestClaim.keys()].map((id) => new mongoose.Types.ObjectId(id));
  // _id index.
  const holders = await BookingModel.find({ _id: mongoose.trusted({ $in: holderIds }) }, { status: 1 }).lean();
  const statusOf = new Map(holders.map((b) => [b._id.toHexString(), b.status]));
  const stale = holderIds.filter((id) => {
    const status = statusOf.get(id.toHexString());
    if (status === undefined) return now.getTime() - (newestClaim.get(id.toHexString()) ?? now.getTime()) > CLAIM_GRACE_MS;
    return status !== "confirmed";
  });
  if (stale.length === 0) return false;
  await handBack(stale.filter((id) => !statusOf.has(id.toHexString())));
  // booking_id index.
  await BookingCellModel.deleteMany({ booking_id: mongoose.trusted({ $in: stale }) });
  return true;
}

/** The key a reschedule claims first, alone, for the booking it replaces (see rescheduleBooking). */
const MOVE_MARKER = "R:";

/**
 * Cells of bookings that never appeared, some of which a reschedule took over from the booking it was to replace
 * (its marker names that one): a reschedule whose outcome stayed unknown and did not happen. Those the replaced
 * booking still needs go back to it, if it is still confirmed; the caller frees the rest.
 */
async function handBack(neverWritten: readonly ObjectId[]): Promise<void> {
  if (neverWritten.length === 0) return;
  // booking_id index.
  const markers = await BookingCellModel.find({ booking_id: mongoose.trusted({ $in: neverWritten }), key: mongoose.trusted({ $regex: `^${MOVE_MARKER}` }) }, { booking_id: 1, key: 1, _id: 0 }).lean();
  for (const m of markers) {
    const oldId = objectIdOf(m.key.slice(MOVE_MARKER.length));
    // _id index.
    const old =
      oldId && (await BookingModel.findOne({ _id: oldId, status: "confirmed" }, { start_time: 1, end_time: 1, padding_minutes: 1, buffer_before_minutes: 1 }).lean());
    if (!old) continue;
    // Its time cells only: a limit place it passed over is freed with the rest, and the old booking, holding none,
    // is still counted in its periods (claimPlaces leaves places to the bookings that hold none).
    const keys = bookingCells(old.start_time, old.end_time, old.padding_minutes, old.buffer_before_minutes ?? 0);
    // booking_id index.
    await BookingCellModel.updateMany({ booking_id: m.booking_id, key: mongoose.trusted({ $in: keys }) }, { $set: { booking_id: old._id } });
  }
}

/** Claims `keys` for `bookingId`; false when another booking holds one of them. */
async function claim(userId: ObjectId, bookingId: ObjectId, keys: readonly string[], claimedAt: Date, expiresAt: Date): Promise<boolean> {
  if (keys.length === 0) return true;
  const docs = keys.map((key) => ({ user_id: userId, key, booking_id: bookingId, created_at: claimedAt, expires_at: expiresAt }));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await BookingCellModel.insertMany(docs, { ordered: true });
      return true;
    } catch (err) {
      // An ordered insert stops at the first taken key; the keys before it are ours and go back. Only these
      // keys: the booking may hold others already (a reschedule's marker and the cells passed to it).
      // (user_id, key) unique index.
      await BookingCellModel.deleteMany({ user_id: userId, booking_id: bookingId, key: mongoose.trusted({ $in: keys }) });
      if (!isDuplicateKeyError(err)) throw err;
      if (attempt === 0 && (await reclaimStale(userId, keys, bookingId, new Date()))) continue;
      return false;
    }
  }
  return false;
}

function checkDeadline(claimedAt: Date): void {
  if (Date.now() - claimedAt.getTime() > CLAIM_DEADLINE_MS) throw unavailable("booking took too long; try again");
}

/** A confirmed booking of the host as slot computation and the limits want it: its times, gaps, id and event. */
export interface HostBooking extends BusyBooking {
  id: ObjectId;
  eventId: ObjectId;
}

/** Confirmed bookings of the host that may reach into [from, to) with their buffer and padding, as slot computation wants them. */
export async function busyAround(userId: ObjectId, from: Date, to: Date, except?: ObjectId): Promise<HostBooking[]> {
  // (user_id, status, start_time) index.
  const rows = await BookingModel.find(
    {
      user_id: userId,
      status: "confirmed",
      start_time: mongoose.trusted({ $gte: new Date(from.getTime() - BUSY_MARGIN_MS), $lt: new Date(to.getTime() + BUSY_MARGIN_MS) }),
    },
    { start_time: 1, end_time: 1, padding_minutes: 1, buffer_before_minutes: 1, event_id: 1 },
  ).lean();
  return rows
    .filter((b) => except === undefined || !b._id.equals(except))
    .map((b) => ({ start: b.start_time, end: b.end_time, paddingMinutes: b.padding_minutes, bufferBeforeMinutes: b.buffer_before_minutes ?? 0, id: b._id, eventId: b.event_id }));
}

/** Tries of one period's place: each failed one means another request took a place meanwhile. */
const PLACE_ATTEMPTS = 8;

/** The place numbers held in a period, and by whom (the (user_id, key) unique index serves the key range). */
async function heldPlaces(userId: ObjectId, period: LimitPeriod): Promise<{ key: string; place: number; holder: ObjectId }[]> {
  const cells = await BookingCellModel.find(
    { user_id: userId, key: mongoose.trusted({ $gte: period.key, $lt: `${period.key}\uffff` }) },
    { key: 1, booking_id: 1, _id: 0 },
  ).lean();
  return cells.map((c) => ({ key: c.key, place: Number(c.key.slice(period.key.length)), holder: c.booking_id }));
}

/**
 * Claims a place of every period for `bookingId` (the mechanism above); the reason of the first period that
 * has none left, or undefined when it holds one of each. A place the booking already holds (passed on by a
 * reschedule) counts.
 */
async function claimPlaces(userId: ObjectId, bookingId: ObjectId, periods: readonly LimitPeriod[], claimedAt: Date, expiresAt: Date): Promise<LimitPeriod["reason"] | undefined> {
  for (const period of periods) {
    let reclaimed = false;
    let placed = false;
    for (let attempt = 0; attempt < PLACE_ATTEMPTS && !placed; attempt++) {
      const held = await heldPlaces(userId, period);
      if (held.some((h) => h.holder.equals(bookingId))) {
        placed = true;
        break;
      }
      const holders = new Set(held.map((h) => h.holder.toHexString()));
      const unplaced = period.booked.filter((id) => !holders.has(id)).length;
      const taken = new Set(held.map((h) => h.place));
      const free: number[] = [];
      for (let n = 0; n < period.size && free.length <= unplaced; n++) if (!taken.has(n)) free.push(n);
      if (free.length <= unplaced) {
        // Full, unless some holder is gone (a crash between claim and booking, a cancel that died before releasing).
        if (!reclaimed && held.length > 0 && (await reclaimStale(userId, held.map((h) => h.key), bookingId, new Date()))) {
          reclaimed = true;
          continue;
        }
        return period.reason;
      }
      try {
        await BookingCellModel.collection.insertOne({
          _id: new mongoose.Types.ObjectId(),
          user_id: userId,
          key: `${period.key}${free[unplaced]}`,
          booking_id: bookingId,
          created_at: claimedAt,
          expires_at: expiresAt,
        });
        placed = true;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
    }
    if (!placed) throw unavailable("booking took too long; try again");
  }
  return undefined;
}

export type NewBooking = Omit<BookingDoc, "_id" | "private_key" | "status" | "archived" | "booked_at" | "imported" | "updated_at" | "guests_notified">;

/*
 * `notify` (public writes): whom the change may mail besides the host, as the booker limits decided. It is
 * recorded by the same write as the change itself - in the owed change, which the e-mail kind plans from, and as
 * the booking's guests_notified, which the booker's answer shows - so no retry or crash can decide otherwise.
 */

/**
 * Writes a confirmed booking after claiming its cells and a place of each limited period (`places`); 409 when
 * another booking holds any of the cells (`taken`) or a period is full (`daily_limit`, `weekly_limit`).
 */
export async function confirmBooking(
  wake: OutboxWake,
  fields: NewBooking,
  notify: Notify = NOTIFY_EVERYONE,
  places: readonly LimitPeriod[] = [],
  id: ObjectId = new mongoose.Types.ObjectId(),
): Promise<BookingDoc> {
  const claimedAt = new Date();
  const { start_time: start, end_time: end, padding_minutes: padding } = fields;
  const expiresAt = cellsExpireAt(start, end, padding);
  if (!(await claim(fields.user_id, id, bookingCells(start, end, padding, fields.buffer_before_minutes ?? 0), claimedAt, expiresAt))) throw slotNotAvailable("taken");
  const full = await claimPlaces(fields.user_id, id, places, claimedAt, expiresAt).catch(async (err: unknown) => {
    await release(id);
    throw err;
  });
  if (full) {
    await release(id);
    throw slotNotAvailable(full);
  }
  const bookedAt = new Date();
  const doc: BookingDoc = {
    ...fields,
    _id: id,
    provider_key: id.toHexString(),
    private_key: newPrivateKey(),
    status: "confirmed",
    archived: false,
    booked_at: bookedAt,
    imported: false,
    updated_at: bookedAt,
    guests_notified: notify.guests,
    // The outbox: the insert itself records what the booking owes, so no crash can separate the two.
    ...recordBookingChange(undefined, { type: "created", at: bookedAt, notify }),
  };
  try {
    checkDeadline(claimedAt);
    await BookingModel.collection.insertOne(doc);
  } catch (err) {
    // The id taken: an earlier try of the same keyed request wrote this booking after all, and it stands.
    const earlier = isDuplicateKeyError(err) ? await writtenBefore(wake, id).catch(() => undefined) : undefined;
    if (earlier) return earlier;
    // Refused, or never sent: the cells go back. An answer lost on the way may hide a booking that was written: it
    // keeps its cells unless it is known not to exist (if it does, the booking stands), since cells given back
    // under a confirmed booking let the same time be booked again (issue 29). Orphans are freed by the grace rule.
    if (!mayHaveBeenApplied(err)) await release(id);
    if (!mayHaveBeenApplied(err) || (await written(id)) !== true) throw err;
  }
  await afterWrite([doc.event_id], wake, [doc.user_id]);
  return doc;
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
 * after its write, which are done here again (each is harmless twice).
 */
export async function writtenBefore(wake: OutboxWake, id: ObjectId): Promise<BookingDoc | undefined> {
  // _id index.
  const found = await BookingModel.findById(id).lean<BookingDoc>();
  if (!found) return undefined;
  await afterWrite([found.event_id], wake, [found.user_id]);
  return found;
}

/**
 * Cancels a confirmed booking that has not started, and frees its cells. `keyedWrite`: the name of the keyed write
 * doing it (Idempotency-Key), kept so that its retry finds it done (canceledBefore).
 */
export async function cancelBooking(
  wake: OutboxWake,
  booking: BookingDoc,
  reason: string | null,
  canceledBy: "host" | "booker",
  notify: Notify = NOTIFY_EVERYONE,
  keyedWrite: string | null = null,
): Promise<BookingDoc> {
  const now = new Date();
  const problem = changeProblem({ status: booking.status, start: booking.start_time, end: booking.end_time }, now);
  if (problem) throw invalid(problem);
  const changes = {
    status: "canceled",
    cancel_reason: reason,
    canceled_at: now,
    canceled_by: canceledBy,
    canceled_under_key: keyedWrite,
    guests_notified: notify.guests,
    ...recordBookingChange(booking, { type: "canceled", at: now, canceledBy, notify }),
  };
  // Conditional on the state just checked, so a concurrent cancel or reschedule makes this one a 422, not a second change.
  const result = await BookingModel.updateOne(
    { _id: booking._id, status: "confirmed", start_time: mongoose.trusted({ $gt: now }) },
    { $set: changes },
  );
  if (result.matchedCount === 0) throw invalid("booking was changed meanwhile; reload it");
  await afterWrite([booking.event_id], wake, [booking.user_id]);
  await release(booking._id);
  return { ...booking, ...changes };
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
async function movedMeanwhile(old: BookingDoc): Promise<never> {
  // _id index.
  const now = await BookingModel.findById(old._id, { status: 1, start_time: 1, end_time: 1 }).lean();
  const problem = now ? changeProblem({ status: now.status, start: now.start_time, end: now.end_time }, new Date()) : "booking not found";
  throw invalid(problem ?? "booking is being rescheduled by another request; reload it");
}

/**
 * Books `start` instead of `old`: the new booking is confirmed and the old one marked rescheduled
 * in one transaction. The cells both share pass from old to new without ever being free, so a
 * booking may move by less than its own length. A marker key ("R:<old id>"), claimed first and alone,
 * makes concurrent reschedules of one booking collide before any of them touches a cell: one goes on,
 * the others are told the booking was moved (movedMeanwhile), not that their free slot is taken.
 */
export async function rescheduleBooking(
  wake: OutboxWake,
  old: BookingDoc,
  start: Date,
  end: Date,
  paddingMinutes: number,
  calendarId: string | null = null,
  notify: Notify = NOTIFY_EVERYONE,
  bufferBeforeMinutes = 0,
  places: readonly LimitPeriod[] = [],
  id: ObjectId = new mongoose.Types.ObjectId(),
): Promise<BookingDoc> {
  const now = new Date();
  const problem = changeProblem({ status: old.status, start: old.start_time, end: old.end_time }, now);
  if (problem) throw invalid(problem);
  const claimedAt = new Date();
  const expiresAt = cellsExpireAt(start, end, paddingMinutes);
  if (!(await claim(old.user_id, id, [`${MOVE_MARKER}${old._id.toHexString()}`], claimedAt, expiresAt))) await movedMeanwhile(old);
  const wanted = bookingCells(start, end, paddingMinutes, bufferBeforeMinutes);
  const oldKeys = new Set(bookingCells(old.start_time, old.end_time, old.padding_minutes, old.buffer_before_minutes ?? 0));
  // The places the old booking holds in the periods the new time falls in pass over with the cells: a move within
  // a full day keeps its place.
  // booking_id index.
  const oldPlaces = places.length === 0 ? [] : (await BookingCellModel.find({ booking_id: old._id }, { key: 1, _id: 0 }).lean()).map((c) => c.key);
  const shared = [...wanted.filter((k) => oldKeys.has(k)), ...oldPlaces.filter((k) => places.some((p) => k.startsWith(p.key)))];

  if (shared.length > 0) {
    // booking_id index: the old booking's own cells change hands in place.
    await BookingCellModel.updateMany(
      { booking_id: old._id, key: mongoose.trusted({ $in: shared }) },
      { $set: { booking_id: id, created_at: claimedAt } },
    );
  }
  // booking_id index. Whatever did not pass over (an imported booking has no cells) must be claimed afresh.
  const sharedKeys = new Set(shared);
  const passed = new Set((await BookingCellModel.find({ booking_id: id }, { key: 1, _id: 0 }).lean()).map((c) => c.key).filter((k) => sharedKeys.has(k)));
  const giveBack = async () => {
    if (passed.size > 0) {
      await BookingCellModel.updateMany({ booking_id: id, key: mongoose.trusted({ $in: [...passed] }) }, { $set: { booking_id: old._id } });
    }
    await release(id);
  };
  let refused: "taken" | LimitPeriod["reason"] | undefined;
  try {
    const claimed = await claim(old.user_id, id, wanted.filter((k) => !passed.has(k)), claimedAt, expiresAt);
    refused = claimed ? await claimPlaces(old.user_id, id, places, claimedAt, expiresAt) : "taken";
  } catch (err) {
    await giveBack();
    throw err;
  }
  if (refused) {
    await giveBack();
    throw slotNotAvailable(refused);
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
    booked_at: new Date(),
    private_key: newPrivateKey(),
    cancel_reason: null,
    canceled_at: null,
    rescheduled_from: old._id,
    rescheduled_to: null,
    imported: false,
    updated_at: now,
    // The meeting (meeting_url and its provider's ids) stays, and so does the key providers name it by. The calendar
    // event is moved where the provider can (same calendar: same event id), else written afresh.
    provider_key: old.provider_key ?? old._id.toHexString(),
    ...calendarFields(calendarId),
    calendar_event_id: calendarId !== null && calendarId === old.calendar_id ? (old.calendar_event_id ?? null) : null,
    canceled_by: null,
    guests_notified: notify.guests,
    // The new booking owes the reschedule (kinds find the old one by previous_booking_id); what the old one
    // still owed stays with it, and so does how far the relay planned the old one's changes.
    planned_seq: 0,
    ...recordBookingChange(undefined, { type: "rescheduled", at: now, previousBookingId: old._id.toHexString(), notify }),
  };
  /** Whether the transaction got as far as its commit, whose answer may be lost (the driver retries it first). */
  let committing = false;
  try {
    checkDeadline(claimedAt);
    await mongoose.connection.transaction(async (session) => {
      committing = false;
      const moved = await BookingModel.updateOne(
        { _id: old._id, status: "confirmed" },
        { $set: { status: "rescheduled", rescheduled_to: id } },
        { session },
      );
      if (moved.matchedCount === 0) throw invalid("booking was changed meanwhile; reload it");
      await BookingModel.collection.insertOne(fresh, { session });
      committing = true;
    });
  } catch (err) {
    // A transient conflict (a write conflict, a transaction the server dropped) answers 503 with Retry-After
    // (src/platform/transport/errors.ts): nothing was written, the cells go back, the booker tries again. But a
    // commit whose answer was lost may have happened, whatever the driver's last retry of it said (a server it
    // could not reach): then the move is done, and giving the cells back would leave the new booking without them.
    // Unless the new booking is found, the move stays as far as it got (503): if it did not happen, the cells it
    // took from the old booking go back to it once the grace has passed (reclaimStale, handBack).
    const unknown = committing || mayHaveBeenApplied(err);
    // Refused because an earlier try of the same keyed request moved the booking meanwhile: its move stands.
    const earlier = unknown ? undefined : await writtenBefore(wake, id).catch(() => undefined);
    if (earlier) {
      await release(old._id);
      return earlier;
    }
    if (!unknown) await giveBack();
    if (!unknown || (await written(id)) !== true) throw err;
  }
  await afterWrite([old.event_id], wake, [old.user_id]);
  await release(old._id);
  return fresh;
}

/** What a booking records about its host calendar: which one it goes to, and that it is still to be written there. */
export function calendarFields(calendarId: string | null): Pick<BookingDoc, "calendar_id" | "calendar_event_status" | "calendar_event_error"> {
  return { calendar_id: calendarId, calendar_event_status: calendarId === null ? "none" : "pending", calendar_event_error: null };
}

/** A booking by id that belongs to the host, or 404. */
export async function hostBooking(hostId: ObjectId, id: ObjectId | null): Promise<BookingDoc> {
  // _id index; the owner test makes another account's booking as unknown as a missing one.
  const b = id === null ? null : await BookingModel.findOne({ _id: id, user_id: hostId }).lean<BookingDoc>();
  if (!b) throw notFound("booking not found");
  return b;
}

/** The host's own fields of a booking (PATCH /bookings/<id>): notes and archiving; no change is owed to anyone. */
export async function updateHostFields(booking: Pick<BookingDoc, "_id" | "event_id">, changes: { internal_notes?: string | null; archived?: boolean }): Promise<void> {
  if (Object.keys(changes).length === 0) return;
  // _id index.
  await BookingModel.updateOne({ _id: booking._id }, { $set: changes });
  await afterWrite([booking.event_id], null);
}

/** Where the booking's calendar event stands (the calendar effect's progress); no change is owed to anyone. */
export async function setCalendarSync(booking: Pick<BookingDoc, "_id" | "event_id">, status: "synced" | "failed" | "pending", error: string | null): Promise<void> {
  // _id index.
  await BookingModel.updateOne({ _id: booking._id }, { $set: { calendar_event_status: status, calendar_event_error: error } });
  await afterWrite([booking.event_id], null);
}

/** The id the provider gave the booking's event, kept before anything else happens so no retry writes a second one. */
export async function setCalendarEventId(booking: Pick<BookingDoc, "_id" | "event_id">, eventId: string): Promise<void> {
  // _id index.
  await BookingModel.updateOne({ _id: booking._id }, { $set: { calendar_event_id: eventId } });
  await afterWrite([booking.event_id], null);
}

/**
 * The booker's switch of reminder e-mails for this booking (one-click unsubscribe, the manage page); no change is
 * owed to anyone: each reminder reads it when it falls due.
 */
export async function setRemindersUnsubscribed(booking: Pick<BookingDoc, "_id" | "event_id">, unsubscribed: boolean): Promise<void> {
  // _id index.
  await BookingModel.updateOne({ _id: booking._id }, { $set: { reminders_unsubscribed: unsubscribed } });
  await afterWrite([booking.event_id], null);
}

/** Tries of an import's transaction when it meets a transient conflict (a write conflict, an election). */
const IMPORT_ATTEMPTS = 3;
const IMPORT_RETRY_WAIT_MS = 250;

/**
 * Imported bookings (AdminService.ImportBookings), all or nothing. They are history: they claim no cells and owe no
 * change (no e-mail or webhook for a booking made elsewhere).
 *
 * One transaction with one insert, on the client whose deadline allows it (src/db/connection.ts,
 * BULK_WRITE_TIMEOUT_MS): every booking is in, or none is, whatever happens in between - nothing is visible before
 * the commit, and an aborted or unanswered transaction leaves nothing behind. Not in chunks: the embedded server
 * spends time in proportion to the collection on every write whatever its size (at 10 000 bookings an insert of 1
 * or of 1 000 both take seconds), so chunks only multiply it, and chunks outside a transaction would need a marker
 * hiding a half-written import from every reader. A transient conflict (a concurrent write, an election) aborts the
 * transaction and it is tried again, up to IMPORT_ATTEMPTS; then it is the caller's 503 with Retry-After
 * (src/platform/transport/errors.ts). A commit whose answer was lost may still have happened: the bookings' ids are
 * fixed before the first try, so the first one's presence tells, and a retry of a committed import is never a
 * second copy.
 */
export async function insertImported(docs: readonly BookingDoc[]): Promise<void> {
  if (docs.length === 0) return;
  const client = bulkWriteClient();
  const bookings = client.db(BookingModel.db.name).collection<BookingDoc>(BookingModel.collection.collectionName);
  // _id index.
  const committed = () => bookings.findOne({ _id: docs[0]._id }, { projection: { _id: 1 } }).then((d) => d !== null);
  for (let attempt = 1; ; attempt++) {
    const session = client.startSession();
    try {
      session.startTransaction();
      await bookings.insertMany([...docs], { session, ordered: true });
      await session.commitTransaction();
      break;
    } catch (err) {
      await session.abortTransaction().catch(() => undefined);
      if (await committed().catch(() => false)) break;
      if (attempt >= IMPORT_ATTEMPTS || !isTransientDatabaseError(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, IMPORT_RETRY_WAIT_MS * attempt));
    } finally {
      await session.endSession().catch(() => undefined);
    }
  }
  await afterWrite([...new Map(docs.map((d) => [d.event_id.toHexString(), d.event_id])).values()], null, docs.map((d) => d.user_id));
}

/** Where the booking's meeting stands (the outbox makes links that providers make); no change is owed to anyone. */
export async function setMeeting(
  booking: Pick<BookingDoc, "_id" | "event_id">,
  meeting: { status: "ready" | "failed" | "pending"; url?: string | null; id?: string | null; error?: string | null },
): Promise<void> {
  const set: Partial<BookingDoc> = { meeting_status: meeting.status, meeting_error: meeting.error ?? null };
  if (meeting.url !== undefined) set.meeting_url = meeting.url;
  if (meeting.id !== undefined) set.meeting_id = meeting.id;
  // _id index.
  await BookingModel.updateOne({ _id: booking._id }, { $set: set });
  await afterWrite([booking.event_id], null);
}
