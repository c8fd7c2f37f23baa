// The reservation cells of bookings: the unique keys a booking claims for its time and for its places in limited periods, so that no two confirmed bookings of one host overlap and no period holds more than its limit.
import { createHash } from "node:crypto";
import mongoose from "mongoose";
import { objectIdOf } from "../../db/ids.js";
import type { Clock } from "../../domain/clock.js";
import { isDuplicateKeyError } from "../../db/errors.js";
import { BookingCellModel, BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { HOLDING_STATUSES } from "../../domain/booking.js";
import { unavailable } from "../../domain/errors.js";
import { slotNotAvailable } from "../../domain/eventRules.js";
import { bookingCells } from "../../domain/reservation.js";
import { finishPendingMove } from "./moves.js";
import { hostsOf } from "../../domain/team.js";
import { blockedRange, type LimitPeriod } from "../../domain/slots.js";

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
  const cells = await BookingCellModel.find(
    { user_id: userId, key: mongoose.trusted({ $in: keys }), booking_id: mongoose.trusted({ $ne: claimant }) },
    { booking_id: 1, created_at: 1, seat_slot: 1, _id: 0 },
  ).lean();
  // A seated slot's time cells are free once none of its seats is held.
  const slots = new Map(cells.flatMap((c) => (c.seat_slot ? [[c.booking_id.toHexString(), { id: c.booking_id, prefix: c.seat_slot }] as const] : [])));
  let freedSlot = false;
  for (const slot of slots.values()) freedSlot = (await releaseSeatedSlotIfEmpty(userId, slot.id, slot.prefix, now)) || freedSlot;
  const held = cells.filter((c) => !c.seat_slot);
  if (held.length === 0) return true; // released meanwhile, or only seated slots whose seats are gone
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
  /** Whether the holder's newest claim is older than the grace a booking being written has. */
  const pastGrace = (id: ObjectId) => now.getTime() - (newestClaim.get(id.toHexString()) ?? now.getTime()) > CLAIM_GRACE_MS;
  // A holder that never appeared may be a move's new booking whose move stopped after its first write (./moves.ts):
  // then the move is finished and its cells stay; the grace rule frees only what no booking will ever hold.
  for (const id of holderIds) {
    if (statusOf.has(id.toHexString()) || !pastGrace(id)) continue;
    // _id index: not found pending, it may have just been finished by another finisher (the insert comes first).
    const moved = (await finishPendingMove(id, now)) ?? (await BookingModel.findById(id, { status: 1 }).lean());
    if (moved) statusOf.set(id.toHexString(), moved.status);
  }
  const stale = holderIds.filter((id) => {
    const status = statusOf.get(id.toHexString());
    if (status === undefined) return pastGrace(id);
    return !(HOLDING_STATUSES as readonly string[]).includes(status);
  });
  if (stale.length === 0) return freedSlot;
  await handBack(stale.filter((id) => !statusOf.has(id.toHexString())));
  // booking_id index.
  await BookingCellModel.deleteMany({ booking_id: mongoose.trusted({ $in: stale }) });
  return true;
}

/** The key a reschedule claims first, alone, for the booking it replaces (see passCells). */
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
      oldId &&
      (await BookingModel.findOne({ _id: oldId, status: "confirmed" }, { start_time: 1, end_time: 1, padding_minutes: 1, buffer_before_minutes: 1, user_id: 1, host_ids: 1 }).lean());
    if (!old) continue;
    // Its time cells only: a limit place it passed over is freed with the rest, and the old booking, holding none,
    // is still counted in its periods (claimPlaces leaves places to the bookings that hold none). Only its own hosts':
    // a move to another host (a round robin reschedule) claimed that host's cells, which the old booking never held.
    const keys = bookingCells(old.start_time, old.end_time, old.padding_minutes, old.buffer_before_minutes ?? 0);
    // booking_id index.
    await BookingCellModel.updateMany({ booking_id: m.booking_id, key: mongoose.trusted({ $in: keys }), user_id: mongoose.trusted({ $in: hostsOf(old) }) }, { $set: { booking_id: old._id } });
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
      if (attempt === 0 && (await reclaimStale(userId, keys, bookingId, claimedAt))) continue;
      return false;
    }
  }
  return false;
}

/** A booking is written only while its claim is younger than CLAIM_DEADLINE_MS (the mechanism above): else 503. */
export function checkDeadline(claimedAt: Date, now: Date): void {
  if (now.getTime() - claimedAt.getTime() > CLAIM_DEADLINE_MS) throw unavailable("booking took too long; try again");
}

/** Tries of one period's place: each failed one means another request took a place meanwhile. */
const PLACE_ATTEMPTS = 8;

/** The place numbers held in a period, by whom and since when (the (user_id, key) unique index serves the key range). */
async function heldPlaces(userId: ObjectId, period: Pick<LimitPeriod, "key">): Promise<{ key: string; place: number; holder: ObjectId; claimedAt: Date }[]> {
  const cells = await BookingCellModel.find(
    { user_id: userId, key: mongoose.trusted({ $gte: period.key, $lt: `${period.key}\uffff` }) },
    { key: 1, booking_id: 1, created_at: 1, _id: 0 },
  ).lean();
  return cells.map((c) => ({ key: c.key, place: Number(c.key.slice(period.key.length)), holder: c.booking_id, claimedAt: c.created_at }));
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
        if (!reclaimed && held.length > 0 && (await reclaimStale(userId, held.map((h) => h.key), bookingId, claimedAt))) {
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

/** What a booking claims: its host, its own id, its time with the gaps kept around it, and the limited periods it falls in. */
export interface SlotHold {
  hostId: ObjectId;
  /** The booking's event, which a refusal names. */
  eventId: ObjectId;
  bookingId: ObjectId;
  start: Date;
  end: Date;
  paddingMinutes: number;
  bufferBeforeMinutes: number;
  /** The limited periods (daily, weekly) the booking takes a place of. */
  places: readonly LimitPeriod[];
  /** The time of the claim (`Deps.clock`): the cells' age, which the grace of a gone holder is counted from. */
  now: Date;
}

/**
 * Claims the cells and a place of each limited period for a new booking; when the claim was made (the booking must
 * be written before checkDeadline says no). 409 when another booking holds a cell (`taken`) or a period is full
 * (`daily_limit`, `weekly_limit`); nothing stays claimed then.
 */
export async function holdCells(h: SlotHold): Promise<Date> {
  const claimedAt = h.now;
  const expiresAt = cellsExpireAt(h.start, h.end, h.paddingMinutes);
  if (!(await claim(h.hostId, h.bookingId, bookingCells(h.start, h.end, h.paddingMinutes, h.bufferBeforeMinutes), claimedAt, expiresAt))) {
    throw slotNotAvailable("taken", { eventId: h.eventId.toHexString(), start: h.start });
  }
  const full = await claimPlaces(h.hostId, h.bookingId, h.places, claimedAt, expiresAt).catch(async (err: unknown) => {
    await release(h.bookingId);
    throw err;
  });
  if (full) {
    await release(h.bookingId);
    throw slotNotAvailable(full, { eventId: h.eventId.toHexString(), start: h.start });
  }
  return claimedAt;
}

/**
 * A team booking's other hosts hold its time too (a collective booking: teams.md): each host's cells claimed for the
 * booking `h.bookingId` beside those it holds already (a move's cells passed over with the first host's). 409 `taken`
 * when another booking holds one; the caller then gives back everything the booking holds (all hosts' cells go by
 * its id).
 */
export async function holdHostCells(hostIds: readonly ObjectId[], h: Omit<SlotHold, "hostId" | "places">): Promise<void> {
  const wanted = bookingCells(h.start, h.end, h.paddingMinutes, h.bufferBeforeMinutes);
  const expiresAt = cellsExpireAt(h.start, h.end, h.paddingMinutes);
  for (const host of hostIds) {
    // (user_id, key) unique index.
    const held = new Set((await BookingCellModel.find({ user_id: host, key: mongoose.trusted({ $in: wanted }), booking_id: h.bookingId }, { key: 1, _id: 0 }).lean()).map((c) => c.key));
    if (!(await claim(host, h.bookingId, wanted.filter((k) => !held.has(k)), h.now, expiresAt))) {
      throw slotNotAvailable("taken", { eventId: h.eventId.toHexString(), start: h.start });
    }
  }
}

/** Frees the cells `hostId` holds for the booking `bookingId` (a host a booking no longer holds: a reassign). */
export async function releaseHostCells(hostId: ObjectId, bookingId: ObjectId): Promise<void> {
  // booking_id index.
  await BookingCellModel.deleteMany({ booking_id: bookingId, user_id: hostId });
}

/** The cells a move holds for its new booking: since when, and how to give them back if the move does not happen. */
export interface HeldMove {
  claimedAt: Date;
  /** Hands what passed over back to the old booking and frees the rest. */
  giveBack(): Promise<void>;
}

/**
 * Claims the cells of a move of `old` to a new time for the new booking `h.bookingId`, whose (first) host is
 * `h.hostId`: old's first host (hostsOf), or another one (a round robin reschedule given to another host, teams.md).
 * The cells both times share pass from old to new without ever being free, so a booking may move by less than its
 * own length; a move to another host passes none (its cells are that host's, claimed afresh). A marker key
 * ("R:<old id>", under the account old is kept under, whichever host the move goes to), claimed first and alone,
 * makes concurrent moves of one booking collide before any of them touches a cell: undefined when another request
 * holds it (it is moving the booking). 409 as holdCells, with everything given back.
 */
export async function passCells(old: BookingDoc, h: SlotHold): Promise<HeldMove | undefined> {
  const { bookingId: id, start, end, paddingMinutes, places } = h;
  const claimedAt = h.now;
  const expiresAt = cellsExpireAt(start, end, paddingMinutes);
  if (!(await claim(old.user_id, id, [`${MOVE_MARKER}${old._id.toHexString()}`], claimedAt, expiresAt))) return undefined;
  const wanted = bookingCells(start, end, paddingMinutes, h.bufferBeforeMinutes);
  const sameHost = hostsOf(old)[0].equals(h.hostId);
  const oldKeys = new Set(sameHost ? bookingCells(old.start_time, old.end_time, old.padding_minutes, old.buffer_before_minutes ?? 0) : []);
  // The places the old booking holds in the periods the new time falls in pass over with the cells: a move within
  // a full day keeps its place.
  // booking_id index.
  const oldPlaces = places.length === 0 || !sameHost ? [] : (await BookingCellModel.find({ booking_id: old._id }, { key: 1, _id: 0 }).lean()).map((c) => c.key);
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
    const claimed = await claim(h.hostId, id, wanted.filter((k) => !passed.has(k)), claimedAt, expiresAt);
    refused = claimed ? await claimPlaces(h.hostId, id, places, claimedAt, expiresAt) : "taken";
  } catch (err) {
    await giveBack();
    throw err;
  }
  if (refused) {
    await giveBack();
    throw slotNotAvailable(refused, { eventId: old.event_id.toHexString(), start: h.start });
  }
  return { claimedAt, giveBack };
}

// ---- Seats ----------------------------------------------------------------------------------------------------

/*
 * Seats (booking-kinds.md "Seats"). A seated slot is held by the slot itself: its time cells (the same keys a
 * booking of that time claims, so other bookings of the host are refused exactly as by any booking) are held by
 * the slot's id (seatedSlotId: the same on every replica), and carry the prefix of its seat keys. Each seat booking
 * claims one of the keys "<prefix><n>", n from 0 to seats − 1, under the same unique (user_id, key) index: of any
 * number of racing bookings on any replicas exactly `seats` get one. A seat's claim then makes sure the slot holds
 * its time cells: each is claimed for the slot, or found held by it (refreshing its claim time), and one held by
 * anyone else refuses the seat (taken). The slot's cells go when no seat key of it is held (the last seat freed, or
 * found so by a later claim): only those claimed before that was read, so a seat claimed meanwhile keeps them.
 */

/** The seat keys' prefix of the slot of `eventId` starting at `start`. */
function seatPrefix(eventId: ObjectId, start: Date): string {
  return `T:${eventId.toHexString()}:${start.getTime()}:`;
}

/** The id of the seated slot of `eventId` starting at `start`: the holder of its time cells, the same everywhere. */
export function seatedSlotId(eventId: ObjectId, start: Date): ObjectId {
  return new mongoose.Types.ObjectId(createHash("sha256").update(seatPrefix(eventId, start)).digest("hex").slice(0, 24));
}

/** Frees the cells of the seated slot `slotId` if none of its seats is held; whether it did. */
async function releaseSeatedSlotIfEmpty(userId: ObjectId, slotId: ObjectId, prefix: string, readAt: Date): Promise<boolean> {
  // `readAt` is no later than the read below: only cells claimed before it go (an earlier time frees less).
  // (user_id, key) unique index.
  const seat = await BookingCellModel.findOne({ user_id: userId, key: mongoose.trusted({ $gte: prefix, $lt: `${prefix}\uffff` }) }, { _id: 1 }).lean();
  if (seat) return false;
  // booking_id index. A seat claimed after the read refreshed the claim time of the cells it needs: they stay.
  const gone = await BookingCellModel.deleteMany({ booking_id: slotId, created_at: mongoose.trusted({ $lt: readAt }) });
  return gone.deletedCount > 0;
}

/** Tries of a seat: each failed one means another request took that seat meanwhile. */
const SEAT_ATTEMPTS = 24;

/**
 * How long a racer that finds every seat held waits on a holder whose booking is not written yet. Such a holder is
 * a request still on its way (its booking is written milliseconds after its seat's claim; a few database operations
 * at their deadlines on a saturated database), and it may yet fail and give its seat back: `full` then would have
 * been said with a seat free, and fewer than the seats won the slot. An older one is left to the grace rule.
 */
const SEAT_SETTLE_MS = 5_000;
/** How often the seats are read again while waiting on a holder being written. */
const SEAT_SETTLE_POLL_MS = 50;

/** Whether a holder among `held` claimed its seat less than SEAT_SETTLE_MS ago and has no booking yet. */
async function holderBeingWritten(held: readonly { holder: ObjectId; claimedAt: Date }[], now: Date): Promise<boolean> {
  const young = new Map(held.filter((h) => now.getTime() - h.claimedAt.getTime() < SEAT_SETTLE_MS).map((h) => [h.holder.toHexString(), h.holder]));
  if (young.size === 0) return false;
  // _id index.
  const written = await BookingModel.find({ _id: mongoose.trusted({ $in: [...young.values()] }) }, { _id: 1 }).lean();
  return written.length < young.size;
}

/**
 * Claims one seat key of `prefix` (of `size`) for `bookingId`; false when every seat is held by a booking (or by a
 * claim older than SEAT_SETTLE_MS, which the grace rule frees).
 */
async function claimSeat(userId: ObjectId, bookingId: ObjectId, prefix: string, size: number, claimedAt: Date, expiresAt: Date, clock: Clock): Promise<boolean> {
  let reclaimed = false;
  // Real time, as every deadline of a request (the service's clock may be moved by a test).
  const waitUntil = performance.now() + SEAT_SETTLE_MS;
  for (let attempt = 0; attempt < SEAT_ATTEMPTS; ) {
    const held = await heldPlaces(userId, { key: prefix });
    if (held.some((h) => h.holder.equals(bookingId))) return true;
    const taken = new Set(held.map((h) => h.place));
    const free: number[] = [];
    for (let n = 0; n < size; n++) if (!taken.has(n)) free.push(n);
    if (free.length === 0) {
      // Full, unless some holder is gone (a crash between claim and booking, a cancel that died before releasing).
      if (!reclaimed && (await reclaimStale(userId, held.map((h) => h.key), bookingId, clock.now()))) {
        reclaimed = true;
        continue;
      }
      // Or still being decided (SEAT_SETTLE_MS).
      if (performance.now() < waitUntil && (await holderBeingWritten(held, clock.now()))) {
        await new Promise((resolve) => setTimeout(resolve, SEAT_SETTLE_POLL_MS));
        continue;
      }
      return false;
    }
    attempt++;
    // A random free seat: racers spread over the free seats instead of all colliding on the lowest.
    const seat = free[Math.floor(Math.random() * free.length)];
    try {
      await BookingCellModel.collection.insertOne({ _id: new mongoose.Types.ObjectId(), user_id: userId, key: `${prefix}${seat}`, booking_id: bookingId, created_at: claimedAt, expires_at: expiresAt });
      return true;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  }
  throw unavailable("booking took too long; try again");
}

/** Makes the seated slot `slotId` hold each of `keys` (claimed for it, or already its own); false when another holds one. */
async function holdSlotCells(userId: ObjectId, slotId: ObjectId, prefix: string, keys: readonly string[], expiresAt: Date, clock: Clock): Promise<boolean> {
  for (const key of keys) {
    let held = false;
    for (let attempt = 0; attempt < 3 && !held; attempt++) {
      try {
        // (user_id, key) unique index: the slot's own cell is found and its claim time refreshed (so a release
        // that read no seat before this seat was claimed leaves it), or the cell is claimed for the slot; one held
        // by another booking is a duplicate key.
        await BookingCellModel.updateOne(
          { user_id: userId, key, booking_id: slotId },
          // Read now, after the seat was claimed: later than any release that found no seat.
          { $set: { created_at: clock.now() }, $setOnInsert: { expires_at: expiresAt, seat_slot: prefix } },
          { upsert: true },
        );
        held = true;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        // (user_id, key) unique index. Another seat of this slot may have inserted it first; else it is another's.
        const holder = await BookingCellModel.findOne({ user_id: userId, key }, { booking_id: 1, _id: 0 }).lean();
        if (holder?.booking_id.equals(slotId)) continue;
        if (holder && !(await reclaimStale(userId, [key], slotId, clock.now()))) return false;
      }
    }
    if (!held) return false;
  }
  return true;
}

/** What a seat booking claims: as SlotHold, plus the seats of a slot. */
export interface SeatHold extends SlotHold {
  seats: number;
  /** `Deps.clock`: the slot's cells are stamped when they are found held, after the seat was claimed. */
  clock: Clock;
}

/**
 * Claims a seat of the slot for a new seat booking, and the slot's time cells and a place of each limited period
 * for the slot (limits count slots, not seats); when the claim was made. 409 `full` when every seat is held, as
 * holdCells otherwise; nothing of this booking stays claimed then.
 */
async function holdSeat(h: SeatHold): Promise<Date> {
  const claimedAt = h.now;
  const expiresAt = cellsExpireAt(h.start, h.end, h.paddingMinutes);
  const prefix = seatPrefix(h.eventId, h.start);
  const slotId = seatedSlotId(h.eventId, h.start);
  const refuse = async (reason: "full" | "taken" | LimitPeriod["reason"]): Promise<never> => {
    await releaseSeat(h.hostId, h.bookingId, slotId, prefix, h.clock.now());
    throw slotNotAvailable(reason, { eventId: h.eventId.toHexString(), start: h.start });
  };
  let refused: "full" | "taken" | LimitPeriod["reason"] | undefined;
  try {
    // A seat claim that failed may have written its key all the same (a deadline passed after the insert landed):
    // it goes back with the rest, now. Left to the grace rule, that seat read as held for two minutes, and the slot
    // answered `full` with a seat free.
    if (!(await claimSeat(h.hostId, h.bookingId, prefix, h.seats, claimedAt, expiresAt, h.clock))) refused = "full";
    else {
      const held = await holdSlotCells(h.hostId, slotId, prefix, bookingCells(h.start, h.end, h.paddingMinutes, h.bufferBeforeMinutes), expiresAt, h.clock);
      refused = held ? await claimPlaces(h.hostId, slotId, h.places, claimedAt, expiresAt) : "taken";
    }
  } catch (err) {
    await releaseSeat(h.hostId, h.bookingId, slotId, prefix, h.clock.now());
    throw err;
  }
  if (refused) return refuse(refused);
  return claimedAt;
}

/**
 * A collective seat (docs/teams.md "Seats") takes a seat of its slot with every host, each as a personal seat takes
 * its host's (holdSeat): each host's slot holds that host's time cells for as long as any seat of it is held, so the
 * host's other events stay blocked then, and freed with the last. The first host's seat keys decide who wins (every
 * racer claims them first, the places of the limited periods with them); a later host's seat keys are only ever
 * held by bookings that hold a first host's seat, so they never run out before it. 409 as holdSeat, with every
 * host's seat of this booking given back.
 */
export async function holdSeats(hostIds: readonly ObjectId[], h: SeatHold): Promise<Date> {
  const claimedAt = await holdSeat(h);
  const others = hostIds.filter((host) => !host.equals(h.hostId));
  try {
    for (const host of others) await holdSeat({ ...h, hostId: host, places: [] });
  } catch (err) {
    await releaseSeats(hostIds, h.bookingId, seatedSlotId(h.eventId, h.start), seatPrefix(h.eventId, h.start), h.clock.now());
    throw err;
  }
  return claimedAt;
}

/** Frees a seat booking's seat with each of its hosts, and a host's slot cells when that was the last seat held there. */
async function releaseSeats(hostIds: readonly ObjectId[], bookingId: ObjectId, slotId: ObjectId, prefix: string, now: Date): Promise<void> {
  // Every host's seat key goes at once: they are all held under the booking's id.
  await release(bookingId);
  for (const host of hostIds) await releaseSeatedSlotIfEmpty(host, slotId, prefix, now);
}

/** Frees a seat booking's seat, and its slot's cells when that was the last seat held. */
function releaseSeat(userId: ObjectId, bookingId: ObjectId, slotId: ObjectId, prefix: string, now: Date): Promise<void> {
  return releaseSeats([userId], bookingId, slotId, prefix, now);
}

/**
 * Frees what `booking` holds: its cells, or its seat with each of its hosts (and a host's slot cells when it was the
 * last seat there); `now`: `Deps.clock`'s, read before.
 */
export async function releaseBooking(booking: Pick<BookingDoc, "_id" | "user_id" | "host_ids" | "event_id" | "start_time" | "seated_slot">, now: Date): Promise<void> {
  if (!booking.seated_slot) return release(booking._id);
  // The account it is kept under too: the seat was claimed with it, whatever hosts it names since (a reassign).
  const hosts = hostsOf(booking).filter((h) => !h.equals(booking.user_id));
  await releaseSeats([booking.user_id, ...hosts], booking._id, booking.seated_slot, seatPrefix(booking.event_id, booking.start_time), now);
}
