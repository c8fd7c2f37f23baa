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

/** For the metrics: effects not yet done (waiting, leased or retrying) and how long the oldest of them has waited. */
export async function effectsBacklog(now: Date): Promise<{ pending: number; oldestAgeSeconds: number }> {
  // (state, created_at) index, for both.
  const [pending, oldest] = await Promise.all([
    EffectModel.countDocuments({ state: "pending" }),
    EffectModel.findOne({ state: "pending" }, { created_at: 1 }).sort({ created_at: 1 }).lean<Pick<EffectDoc, "created_at">>(),
  ]);
  return { pending, oldestAgeSeconds: oldest ? Math.max(0, (now.getTime() - oldest.created_at.getTime()) / 1000) : 0 };
}
