// The relay: turns the changes bookings owe (src/domain/owed.ts) into effects, inserted under ids derived from the change, then clears what it planned.
import mongoose from "mongoose";
import { BookingModel, type BookingDoc } from "../db/models/booking.js";
import type { EffectDoc } from "../db/models/effect.js";
import { changesOf, effectId, type OwedChange } from "../domain/owed.js";
import { errorText, logEvent as log } from "../platform/log.js";
import { outboxConnection } from "../db/outboxConnection.js";
import { effectDocOf, insertEffects } from "./schedule.js";
import type { Troubles } from "./share.js";
import type { EffectKind } from "./types.js";

/** Bookings read per relay pass; the rest wait for the next pass, which comes at once when this one was full. */
const RELAY_BATCH = 100;
/** Bookings planned at once within a pass. */
const RELAY_LANES = 8;
/** How long this replica leaves a booking alone after planning it failed, and how many it leaves alone at most. */
const RELAY_RETRY_MS = 10_000;
const RELAY_SKIP_MAX = 1000;

/** Bookings as the relay reads and marks them, on the outbox's own pool (src/db/outboxConnection.ts). */
const OwingBookings = outboxConnection.model<BookingDoc>("Booking", BookingModel.schema);

interface OwingBooking {
  _id: mongoose.Types.ObjectId;
  user_id: mongoose.Types.ObjectId;
  changes_owed?: OwedChange[];
  owed_seq?: number;
  planned_seq?: number;
}

/**
 * Plans every owed change of one booking into effects, inserts them, then clears what was planned. An effect for a
 * destination that is resting after a failure is due when the rest ends.
 */
async function relayBooking(b: OwingBooking, kinds: readonly EffectKind[], troubles: Troubles): Promise<void> {
  const now = new Date();
  const docs: EffectDoc[] = [];
  const owner = { userId: b.user_id.toHexString(), bookingId: b._id.toHexString() };
  for (const change of changesOf(b)) {
    for (const kind of kinds) {
      for (const planned of await kind.plan(change)) {
        const rest = planned.destination === undefined ? undefined : troubles.restingUntil(planned.destination);
        const due = planned.dueAt ?? now;
        const id = effectId(change.bookingId, change.seq, kind.name, planned.key);
        docs.push(effectDocOf(id, kind.name, owner, planned, now, rest !== undefined && rest > due.getTime() ? new Date(rest) : due));
      }
    }
  }
  // Planned before (another replica, a pass that died before clearing): those effects exist already.
  await insertEffects(docs);
  // Only if no change was recorded since the read: a newer one stays owed and is planned by the next pass. Either
  // way the booking remembers that everything up to what was read is planned (src/domain/owed.ts changesOf), so a
  // write that read the booking before this and sets the planned changes again cannot have them planned twice.
  // _id index.
  const through = b.owed_seq ?? 0;
  const cleared = await OwingBookings.updateOne({ _id: b._id, owed_seq: through }, { $set: { changes_owed: [], changes_pending: false, planned_seq: through } });
  if (cleared.matchedCount === 0) {
    // No $max on the embedded server: only ever raised.
    await OwingBookings.updateOne({ _id: b._id, planned_seq: mongoose.trusted({ $not: { $gte: through } }) }, { $set: { planned_seq: through } });
  }
}

/**
 * One relay pass at a time: plans the owed changes of up to RELAY_BATCH bookings; answers whether the batch was
 * full (more may be owed). Bookings whose planning failed are left out of the next passes for a while, so a booking
 * that fails every time cannot fill every batch and keep the others waiting behind it.
 */
export function createRelay(kinds: readonly EffectKind[], troubles: Troubles, stopping: () => boolean): () => Promise<boolean> {
  /** Bookings whose planning failed, and when to try them again. */
  const failing = new Map<string, number>();
  return async () => {
    const now = Date.now();
    for (const [id, retryAt] of failing) if (retryAt <= now) failing.delete(id);
    const skip = [...failing.keys()].map((id) => new mongoose.Types.ObjectId(id));
    // changes_pending partial index.
    const owing = await OwingBookings.find(
      skip.length === 0 ? { changes_pending: true } : { changes_pending: true, _id: mongoose.trusted({ $nin: skip }) },
      { user_id: 1, changes_owed: 1, owed_seq: 1, planned_seq: 1 },
    )
      .limit(RELAY_BATCH)
      .lean<OwingBooking[]>();
    // Several bookings at once: planning is a few reads and two writes per booking, mostly waiting on the database.
    let next = 0;
    const lane = async () => {
      while (next < owing.length && !stopping()) {
        const b = owing[next++];
        try {
          await relayBooking(b, kinds, troubles);
        } catch (err) {
          // The booking keeps its owed changes and is tried again after a while (by any replica at its next poll).
          if (failing.size < RELAY_SKIP_MAX) failing.set(b._id.toHexString(), Date.now() + RELAY_RETRY_MS);
          log("error", "planning effects failed", { booking_id: b._id.toHexString(), error: errorText(err) });
        }
      }
    };
    await Promise.all(Array.from({ length: RELAY_LANES }, lane));
    return owing.length === RELAY_BATCH;
  };
}
