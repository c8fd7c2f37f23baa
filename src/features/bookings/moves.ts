// Reschedules written in two steps, the old booking first: finishing a move, by its own request or, after a crash between the steps, by the sweep, a keyed retry or the next claim of its cells.
import mongoose from "mongoose";
import { accountChanged } from "../../db/accountVersions.js";
import { isDuplicateKeyError } from "../../db/errors.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { hostsOf } from "../../domain/team.js";
import { errorText, logEvent as log } from "../../platform/log.js";
import { bookingsChanged } from "./snapshots.js";

type ObjectId = mongoose.Types.ObjectId;

/*
 * Why not one transaction. The embedded server (jongodb 0.1.6, what tests, benchmarks and `npm start` without
 * MONGODB_URI run on) loses the writes other clients make to a collection while a transaction that writes to that
 * collection is open: its commit puts back the collection as the transaction saw it (bench/RESULTS.md "A reschedule
 * without a transaction"). Every reschedule's transaction thus dropped the bookings made, edited and canceled beside
 * it, on every replica. Real MongoDB does not do that, but the move needs no transaction either:
 *
 * 1. The old booking becomes `rescheduled` (conditional on the state the request read: still confirmed, no change
 *    since) and carries the new booking whole (`moving_to`, `move_pending`). This single-document write is the move's commit point: once it is
 *    written the move happens, whoever finishes it.
 * 2. The new booking is inserted; a second insert of it (another finisher) is a duplicate of its _id, which is
 *    how a finisher knows it is done.
 * 3. The old booking drops what it carried.
 *
 * Between 1 and 2 the old booking reads as rescheduled and the new one is not found yet: for a moment, or after a
 * crash until the next finisher. Finishers: the request itself; the sweep (sweepMoves, from the outbox's sweeps);
 * a retry of the same keyed request (writes.ts writtenBefore); and a claim running into the new booking's cells,
 * which the cells' grace rule would otherwise free as a booking that never appeared (cells.ts reclaimStale). The
 * new booking carries its owed changes and feed changes: the outbox relay and the feed's sweep find them by their
 * own marks, however late it is inserted.
 */

/** The fields step 1 writes on the old booking besides its status: the new booking, until it is in. */
export function moveStarted(fresh: BookingDoc): Pick<BookingDoc, "moving_to" | "move_pending"> {
  return { moving_to: fresh, move_pending: true };
}

/** Steps 2 and 3 of a move whose step 1 is written: the new booking inserted (once, whoever comes first), the old one's marks gone. */
export async function finishMove(oldId: ObjectId, fresh: BookingDoc): Promise<void> {
  try {
    await BookingModel.collection.insertOne({ ...fresh });
  } catch (err) {
    // Its _id taken: another finisher inserted it. Any other unique key refused (none should be) is an error: the
    // marks stay, and with them the booking to insert.
    // _id index.
    if (!isDuplicateKeyError(err) || (await BookingModel.exists({ _id: fresh._id })) === null) throw err;
  }
  // _id index. Raw: dropping the marks is no change of the booking (updated_at stays).
  await BookingModel.collection.updateOne({ _id: oldId, move_pending: true }, { $unset: { moving_to: "", move_pending: "" } });
}

/**
 * Finishes a move whose step 1 was written and which stopped there, with the cache stamps a booking write owes; the
 * new booking. It is stamped as written `now`: the host's lists re-read what changed since their last refresh (a
 * little before it), and a booking inserted late with its request's time would be older than a refresh made meanwhile.
 */
async function finishStalled(old: BookingDoc, now: Date): Promise<BookingDoc | undefined> {
  if (!old.moving_to) return undefined;
  const fresh: BookingDoc = { ...old.moving_to, updated_at: now };
  await finishMove(old._id, fresh);
  await Promise.all([bookingsChanged([old.event_id]), accountChanged([...hostsOf(old), ...hostsOf(fresh)], "bookings")]);
  return fresh;
}

/** The new booking `id`, when a move to it stopped after its first step: finished now. Undefined when no move names it. */
export async function finishPendingMove(id: ObjectId, now: Date): Promise<BookingDoc | undefined> {
  // move_pending partial index (empty but for moves under way).
  const old = await BookingModel.findOne({ move_pending: true, rescheduled_to: id }).lean<BookingDoc>();
  return old ? finishStalled(old, now) : undefined;
}

/** How long a move may sit between its steps before the sweep finishes it: far longer than a request takes between them. */
const STALLED_AFTER_MS = 10_000;
/** Moves the sweep finishes per pass. */
const SWEEP_BATCH = 100;

/** One sweep pass: moves that stopped after their first step (a crash, a database gone between the steps) are finished. How many. */
export async function sweepMoves(now: Date): Promise<number> {
  // move_pending partial index.
  const stalled = await BookingModel.find({ move_pending: true, updated_at: mongoose.trusted({ $lt: new Date(now.getTime() - STALLED_AFTER_MS) }) })
    .limit(SWEEP_BATCH)
    .lean<BookingDoc[]>();
  for (const old of stalled) {
    // One that fails (the database gone again) does not hold up the others; the next pass tries it again.
    await finishStalled(old, now).catch((err: unknown) => log("warn", "a stalled reschedule not finished", { booking: old._id.toHexString(), error: errorText(err) }));
  }
  return stalled.length;
}
