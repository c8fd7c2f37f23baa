// What the metrics read of the outbox: effects not yet done and the oldest one's age, and the accounts with stuck effects.
import mongoose from "mongoose";
import { EffectModel, type EffectDoc } from "../db/models/effect.js";

/**
 * For the metrics: the accounts with stuck effects (pending after at least one failed try) and how many each has,
 * most first.
 */
export async function stuckEffectsByAccount(): Promise<Array<{ account: string; stuck: number }>> {
  // (state, created_at) index narrows to the pending effects; the failed ones are counted per account.
  const rows = await EffectModel.aggregate<{ _id: mongoose.Types.ObjectId; stuck: number }>([
    // A failed try leaves its error and counts its attempt; an effect only waiting for something else ("later")
    // has its reason as last_error but no attempt.
    { $match: { state: "pending", attempts: { $gte: 1 }, last_error: { $ne: null } } },
    { $group: { _id: "$user_id", stuck: { $sum: 1 } } },
  ]);
  return rows.map((r) => ({ account: r._id.toHexString(), stuck: r.stuck })).sort((a, b) => b.stuck - a.stuck || a.account.localeCompare(b.account));
}

/**
 * Effects owed now: due (a worker may claim them) or running (leased; due_at is then the lease's end). Effects planned
 * for later (a reminder due in days) and those waiting for their next try or for a resting destination are not.
 */
function owedNow(now: Date): mongoose.QueryFilter<EffectDoc> {
  return { state: "pending", $or: [{ due_at: mongoose.trusted({ $lte: now }) }, { lease_owner: mongoose.trusted({ $ne: null }) }] };
}

/**
 * For the metrics: effects owed now (due or running) and how long the oldest of them has been owed (an effect planned
 * for later counts from its due time: schedule.ts effectDocOf).
 */
export async function effectsBacklog(now: Date): Promise<{ pending: number; oldestAgeSeconds: number }> {
  // (state, due_at) and (state, created_at) indexes.
  const [pending, oldest] = await Promise.all([
    EffectModel.countDocuments(owedNow(now)),
    EffectModel.findOne(owedNow(now), { created_at: 1 }).sort({ created_at: 1 }).lean<Pick<EffectDoc, "created_at">>(),
  ]);
  return { pending, oldestAgeSeconds: oldest ? Math.max(0, (now.getTime() - oldest.created_at.getTime()) / 1000) : 0 };
}
