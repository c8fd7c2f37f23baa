// The relay: turns the changes bookings owe (src/domain/owed.ts) into effects, inserted under ids derived from the change, then clears what it planned; a pass in a few commands whatever its size.
import type { Clock } from "../domain/clock.js";
import mongoose from "mongoose";
import { objectIdOf } from "../db/ids.js";
import { BookingModel, type BookingDoc } from "../db/models/booking.js";
import type { EffectDoc } from "../db/models/effect.js";
import { isDatabaseUnavailable, isTransientDatabaseError } from "../db/errors.js";
import { outboxWorkDb } from "../db/outboxConnection.js";
import { changesOf, effectId, type OwedChange } from "../domain/owed.js";
import { errorText, logEvent as log } from "../platform/log.js";
import { groupBy, insertOnce } from "./batch.js";
import { effectDocOf } from "./schedule.js";
import type { Troubles } from "./share.js";
import type { EffectKind, PlanReads } from "./types.js";

/**
 * Bookings read per relay pass; the rest wait for the next pass, which comes at once when this one was full. A
 * pass's effects are inserted when all of its bookings are planned, and planning waits on the kinds' reads through
 * the requests' pool: a pass of 100 under a burst took 20 s, and its first booking's messages waited for all of it.
 */
const RELAY_BATCH = 32;
/** Bookings planned at once within a pass (a kind's planning may read the database). */
const RELAY_LANES = 8;
/** How long this replica leaves a booking alone after planning it failed, and how many it leaves alone at most. */
const RELAY_RETRY_MS = 10_000;
const RELAY_SKIP_MAX = 1000;
/**
 * Due, unleased effects above which the relay plans nothing: the changes stay owed on their bookings (that is what
 * changes_owed is for) until the workers have caught up. The queue is as long either way, but a write costs in
 * proportion to its collection's size on the embedded server: kept on the bookings, which requests write anyway
 * and which do not grow by it, it does not slow every claim, record and delete of the outbox.
 */
const RELAY_HOLD_BACK_AT = 400;

type OwingBooking = Pick<BookingDoc, "user_id" | "team_id" | "owed_seq" | "planned_seq"> & { _id: mongoose.Types.ObjectId; changes_owed?: OwedChange[] };

/**
 * The reads of one booking's planning: each booking asked for is read once, whichever kinds and changes ask. The
 * read is features/bookings' `bookingById`, which the outbox may not import (.dependency-cruiser.cjs).
 */
function planReads(): PlanReads {
  const bookings = new Map<string, Promise<BookingDoc | null>>();
  return {
    booking(id) {
      const _id = objectIdOf(id);
      if (_id === null) return Promise.resolve(null);
      const key = _id.toHexString();
      let read = bookings.get(key);
      if (read === undefined) {
        // _id index.
        read = BookingModel.findById(_id).lean<BookingDoc>().exec();
        bookings.set(key, read);
      }
      return read;
    },
  };
}

/** Every effect the owed changes of one booking come to. An effect for a destination resting after a failure is due when the rest ends. */
async function planBooking(b: OwingBooking, kinds: readonly EffectKind[], troubles: Troubles, now: Date): Promise<EffectDoc[]> {
  const docs: EffectDoc[] = [];
  const owner = { userId: b.user_id.toHexString(), bookingId: b._id.toHexString() };
  const reads = planReads();
  for (const change of changesOf(b)) {
    for (const kind of kinds) {
      for (const planned of await kind.plan(change, reads)) {
        const rest = planned.destination === undefined ? undefined : troubles.restingUntil(planned.destination);
        const due = planned.dueAt ?? now;
        const id = effectId(change.bookingId, change.seq, kind.name, planned.key);
        docs.push(effectDocOf(id, kind.name, owner, planned, now, rest !== undefined && rest > due.getTime() ? new Date(rest) : due));
      }
    }
  }
  return docs;
}

/**
 * Clears what was planned of each booking, one updateMany per distinct `owed_seq` read (a pass holds a handful):
 * only where no change was recorded since the read (a newer one stays owed and is planned by the next pass). Either
 * way the booking remembers that everything up to what was read is planned (src/domain/owed.ts changesOf), so a
 * write that read the booking before this and sets the planned changes again cannot have them planned twice.
 */
async function clearPlanned(planned: readonly OwingBooking[]): Promise<void> {
  const bookings = outboxWorkDb().collection<OwingBooking>("bookings");
  for (const [through, group] of groupBy(planned, (b) => b.owed_seq ?? 0)) {
    const ids = group.map((b) => b._id);
    // _id index.
    const cleared = await bookings.updateMany({ _id: { $in: ids }, owed_seq: through }, { $set: { changes_owed: [], changes_pending: false, planned_seq: through } });
    // No $max on the embedded server: only ever raised.
    if (cleared.matchedCount < group.length) await bookings.updateMany({ _id: { $in: ids }, planned_seq: { $not: { $gte: through } } }, { $set: { planned_seq: through } });
  }
}

/** Whether the workers are behind: at least RELAY_HOLD_BACK_AT effects due and not taken. */
async function workersBehind(now: Date): Promise<boolean> {
  // (state, due_at) index; a leased effect's due_at is its lease's end, in the future.
  const due = await outboxWorkDb().collection<EffectDoc>("effects").countDocuments({ state: "pending", due_at: { $lte: now } }, { limit: RELAY_HOLD_BACK_AT });
  return due >= RELAY_HOLD_BACK_AT;
}

/**
 * One relay pass at a time: plans the owed changes of up to RELAY_BATCH bookings, inserts every effect of the pass
 * in one insert and clears the bookings in a few updates; answers whether the batch was full (more may be owed) and
 * how many effects it planned.
 * Bookings whose planning failed are left out of the next passes for a while, so a booking that fails every time
 * cannot fill every batch and keep the others waiting behind it. Plans nothing while the workers are behind.
 */
export function createRelay(kinds: readonly EffectKind[], troubles: Troubles, stopping: () => boolean, clock: Clock): () => Promise<RelayPass> {
  /** Bookings whose planning failed, and when to try them again. */
  const failing = new Map<string, number>();
  return async () => {
    const now = clock.now();
    for (const [id, retryAt] of failing) if (retryAt <= now.getTime()) failing.delete(id);
    const skip = [...failing.keys()].map((id) => new mongoose.Types.ObjectId(id));
    // changes_pending partial index.
    const owing = await outboxWorkDb()
      .collection<OwingBooking>("bookings")
      .find(skip.length === 0 ? { changes_pending: true } : { changes_pending: true, _id: { $nin: skip } }, { projection: { user_id: 1, team_id: 1, changes_owed: 1, owed_seq: 1, planned_seq: 1 } })
      .limit(RELAY_BATCH)
      .toArray();
    // Counted only when something is owed: an idle replica's pass is then one query, not two (most passes are idle).
    if (owing.length === 0 || (await workersBehind(now))) return { full: false, planned: 0 };
    const docs: EffectDoc[] = [];
    const planned: OwingBooking[] = [];
    let next = 0;
    const lane = async () => {
      while (next < owing.length && !stopping()) {
        const b = owing[next++];
        try {
          docs.push(...(await planBooking(b, kinds, troubles, now)));
          planned.push(b);
        } catch (err) {
          // The booking keeps its owed changes and is tried again after a while (by any replica at its next poll); at
          // the next pass if the database was only busy (a pool checkout or an answer timing out under a burst).
          if (failing.size < RELAY_SKIP_MAX && !isDatabaseUnavailable(err) && !isTransientDatabaseError(err)) failing.set(b._id.toHexString(), clock.nowMs() + RELAY_RETRY_MS);
          log("error", "planning effects failed", { booking_id: b._id.toHexString(), error: errorText(err) });
        }
      }
    };
    await Promise.all(Array.from({ length: RELAY_LANES }, lane));
    // Planned before (another replica, a pass that died before clearing): those effects exist already. A failure here
    // fails the pass; every booking keeps its changes, and the next pass inserts what is missing.
    await insertOnce(outboxWorkDb().collection<EffectDoc>("effects"), docs);
    await clearPlanned(planned);
    return { full: owing.length === RELAY_BATCH, planned: docs.length };
  };
}

/** What a relay pass did: whether its batch was full (more may be owed) and how many effects it planned. */
export interface RelayPass {
  full: boolean;
  planned: number;
}
