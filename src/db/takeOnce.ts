// A document taken by exactly one of the callers racing for it, as it was before: single-use states, status changes that owe one notice.
import type mongoose from "mongoose";

/*
 * Why not findOneAndUpdate. On MongoDB a findAndModify with a condition in its filter is atomic: of callers racing
 * for one document, one matches. The embedded server (jongodb) finds the document, then updates it by its _id alone,
 * without the condition and without a lock between the two, so callers racing all match and all get the document
 * "before": measured with 8 racers over 4 connections, 7-29 of 200 rounds had more than one winner (a used-once
 * value taken twice; a cap of 3 passing 4-7). Its `update` command holds the condition (0 of 200 in the same
 * probe). So the read comes first and the write is that same filter again on the read's _id: the one whose write
 * matched is the taker, on either database. One round trip more, on paths taken once per authorization or status
 * change.
 */

/**
 * Applies `update` to one document matching `filter` when this call is the one whose write matches it; answers the
 * document as it was read just before (`projection`), or null when none matched or another caller took it first.
 * The fields the caller relies on must be in `filter` or not change while it is matched (ids, owners, expiries).
 */
export async function takeOnce<T extends { _id: unknown }>(
  collection: mongoose.Collection,
  filter: Record<string, unknown>,
  update: Record<string, unknown>,
  projection?: Record<string, 0 | 1>,
): Promise<T | null> {
  // The filter's own index (every caller's filter starts with _id).
  const before = (await collection.findOne(filter, projection === undefined ? {} : { projection: { ...projection, _id: 1 } })) as T | null;
  if (before === null) return null;
  // _id index; the filter again, so the condition still holds when the write lands.
  const again: Record<string, unknown> = { ...filter, _id: before._id };
  const taken = await collection.updateOne(again, update);
  return taken.matchedCount === 1 ? before : null;
}
