// The one writer of single-use links (single_use_links): made, revoked, used by the one booking that wins it, and let go again when that booking could not be made.
import mongoose from "mongoose";
import { mayHaveBeenApplied } from "../../db/errors.js";
import { SingleUseLinkModel, type SingleUseLinkDoc } from "../../db/models/singleUseLink.js";

type ObjectId = mongoose.Types.ObjectId;

export async function insertLink(document: Omit<SingleUseLinkDoc, "_id" | "revoked_at" | "used_at" | "booking_id">): Promise<SingleUseLinkDoc> {
  const [made] = await SingleUseLinkModel.create([{ ...document, revoked_at: null, used_at: null, booking_id: null }]);
  return made.toObject() as SingleUseLinkDoc;
}

/** Revokes the link unless it is revoked already (a revoke of a used or expired link is kept too: it stays listed). */
export async function revokeLink(userId: ObjectId, eventId: ObjectId, id: ObjectId, now: Date): Promise<void> {
  // _id index, the account's shard.
  await SingleUseLinkModel.updateOne({ _id: id, user_id: userId, event_id: eventId, revoked_at: null }, { $set: { revoked_at: now } });
}

/**
 * Takes the link for `bookingId`: one conditional update, so of racing bookings (on any replica) exactly one finds
 * it unused, unrevoked and unexpired and sets it. True when this booking has it, also when it took it already: the
 * retry (same Idempotency-Key, same booking id) of a try whose booking never landed.
 */
export async function claimLink(userId: ObjectId, id: ObjectId, bookingId: ObjectId, now: Date): Promise<boolean> {
  // _id index, the account's shard.
  const res = await SingleUseLinkModel.updateOne(
    { _id: id, user_id: userId, revoked_at: null, expires_at: mongoose.trusted({ $gt: now }), $or: [{ used_at: null }, { booking_id: bookingId }] },
    { $set: { used_at: now, booking_id: bookingId } },
  );
  return res.matchedCount === 1;
}

/**
 * Gives the link back when the booking that took it failed with `err` and was never written (its time taken, a
 * limit). A write whose answer was lost (mayHaveBeenApplied) may stand or still land, so the link stays with it:
 * the same request's keyed retry takes it again (claimLink), and a link kept by a booking that never came is one
 * the host makes anew, where one given back under a booking that stands would book twice.
 */
export async function releaseLink(userId: ObjectId, id: ObjectId, bookingId: ObjectId, err: unknown): Promise<void> {
  if (mayHaveBeenApplied(err)) return;
  // _id index, the account's shard.
  await SingleUseLinkModel.updateOne({ _id: id, user_id: userId, booking_id: bookingId }, { $set: { used_at: null, booking_id: null } });
}
