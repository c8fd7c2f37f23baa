// Effects planned outside a booking change (a reminder's delivery at its due time, its re-planning), inserted under ids their planner fixes, and dropped again while still untouched.
import mongoose from "mongoose";
import { EffectModel, type EffectDoc } from "../db/models/effect.js";
import { scheduledEffectId } from "../domain/owed.js";
import { insertOnce } from "./batch.js";
import type { PlannedEffect } from "./types.js";

/** Whose effect it is: the account (fairness between accounts) and the booking it is about, if any. */
export interface EffectOwner {
  userId: string;
  bookingId: string | null;
}

/**
 * The stored effect of one planned effect, pending from `due` (default its `dueAt`, or now). One planned for later
 * counts as owed from its `dueAt` (`created_at`: the metrics' oldest age, a message's wait for its meeting link).
 */
export function effectDocOf(id: string, kind: string, owner: EffectOwner, planned: PlannedEffect, now: Date, due = planned.dueAt ?? now): EffectDoc {
  const owedFrom = planned.dueAt !== undefined && planned.dueAt > now ? planned.dueAt : now;
  return {
    _id: id,
    kind,
    user_id: new mongoose.Types.ObjectId(planned.userId ?? owner.userId),
    booking_id: owner.bookingId === null ? null : new mongoose.Types.ObjectId(owner.bookingId),
    webhook_id: planned.webhookId ? new mongoose.Types.ObjectId(planned.webhookId) : null,
    destination: planned.destination ?? null,
    payload: planned.payload,
    state: "pending",
    due_at: due,
    lease_owner: null,
    lease_until: null,
    attempts: 0,
    last_error: null,
    created_at: owedFrom,
    updated_at: now,
    expires_at: null,
  };
}

/**
 * Plans effects of `kind` outside a booking change. Their ids come from `seed` and each effect's key, so planning
 * the same thing again (a retry, another replica) inserts nothing new; they double as Message-ID and webhook-id.
 * Returns the ids, in the order given.
 */
export async function scheduleEffects(kind: string, owner: EffectOwner, seed: string, planned: readonly PlannedEffect[], now: Date): Promise<string[]> {
  const docs = planned.map((p) => effectDocOf(scheduledEffectId(seed, kind, p.key), kind, owner, p, now));
  // Planned before (a retry, another replica): those are left as they are.
  await insertOnce(EffectModel.collection as unknown as mongoose.mongo.Collection<EffectDoc>, docs);
  return docs.map((d) => d._id);
}

/**
 * Drops effects no longer owed (a reminder re-planned, its booking canceled) while they are still waiting: one that
 * a worker holds right now finishes, and its kind decides then that it is moot.
 */
export async function dropPendingEffects(ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  // _id index.
  await EffectModel.deleteMany({ _id: mongoose.trusted({ $in: [...ids] }), state: "pending", lease_owner: null });
}
