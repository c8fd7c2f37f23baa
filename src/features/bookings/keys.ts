// Finding a booking by its private key on the account's shard alone: the account a key carries (src/domain/privateKey.ts), or for a key made before keys carried it, its booking_keys entry (copied at start).
import mongoose from "mongoose";
import { onlyDuplicateKeys } from "../../db/errors.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { BookingKeyModel } from "../../db/models/bookingKey.js";
import { accountOfPrivateKey, keyNamesAccount } from "../../domain/privateKey.js";

/** Keys copied per insert at start. */
const COPY_BATCH = 500;

/** The booking of this private key, or null. */
export async function bookingByPrivateKey(key: string): Promise<BookingDoc | null> {
  const account = accountOfPrivateKey(key);
  if (account === null) return null;
  // (user_id, private_key) unique index.
  const found = await BookingModel.findOne({ user_id: new mongoose.Types.ObjectId(account), private_key: key }).lean<BookingDoc>();
  if (found) return found;
  // _id index: a key made before keys carried their account.
  const older = await BookingKeyModel.findById(key, { user_id: 1 }).lean<{ user_id: mongoose.Types.ObjectId }>();
  return older ? BookingModel.findOne({ user_id: older.user_id, private_key: key }).lean<BookingDoc>() : null;
}

/**
 * Copies into booking_keys every private key that does not name its booking's account (made before keys carried
 * it); answers how many were new there. Runs at every start, on every replica (a replica of an older version may
 * have made some since), reading the (user_id, private_key) index in its order; a key copied before is skipped.
 */
export async function copyOlderKeys(): Promise<number> {
  let copied = 0;
  let batch: { _id: string; user_id: mongoose.Types.ObjectId }[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    try {
      copied += (await BookingKeyModel.insertMany(batch, { ordered: false })).length;
    } catch (err) {
      // Copied by an earlier start (or another replica starting): the rest went in.
      if (!onlyDuplicateKeys(err)) throw err;
      copied += (err as { insertedDocs?: unknown[] }).insertedDocs?.length ?? 0;
    }
    batch = [];
  };
  // (user_id, private_key) unique index, in its order.
  const cursor = BookingModel.find({}, { user_id: 1, private_key: 1 }).sort({ user_id: 1, private_key: 1 }).lean<Pick<BookingDoc, "_id" | "user_id" | "private_key">[]>().cursor();
  for await (const b of cursor) {
    const booking = b as unknown as Pick<BookingDoc, "user_id" | "private_key">;
    if (keyNamesAccount(booking.private_key, booking.user_id.toHexString())) continue;
    batch.push({ _id: booking.private_key, user_id: booking.user_id });
    if (batch.length >= COPY_BATCH) await flush();
  }
  await flush();
  return copied;
}
