// Effects planned outside a booking change (a reminder's delivery at its due time, its re-planning), inserted under ids their planner fixes, and dropped again while still untouched.
import mongoose from "mongoose";
import { isDuplicateKeyError, onlyDuplicateKeys } from "../db/errors.js";
import { EffectModel, type EffectDoc } from "../db/models/effect.js";
import { scheduledEffectId } from "../domain/owed.js";
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
    user_id: new mongoose.Types.ObjectId(owner.userId),
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
 * Inserts effects whose ids may exist already (planned before, by another replica or a pass that died): those are
 * left as they are, every other one is inserted.
 */
export async function insertEffects(docs: readonly EffectDoc[]): Promise<void> {
  if (docs.length === 0) return;
  const effects = EffectModel.collection as unknown as mongoose.mongo.Collection<EffectDoc>;
  try {
    await effects.insertMany([...docs], { ordered: false });
  } catch (err) {
    if (!onlyDuplicateKeys(err)) throw err;
    // MongoDB inserts the others of an unordered insert; the embedded server stops at the first duplicate, which
    // lost every later effect (a cancel right after a booking sent no cancellation). One by one, then: a
    // duplicate is an effect planned before, anything else still fails.
    for (const doc of docs) {
      try {
        await effects.insertOne(doc);
      } catch (one) {
        if (!isDuplicateKeyError(one)) throw one;
      }
    }
  }
}

/**
 * Plans effects of `kind` outside a booking change. Their ids come from `seed` and each effect's key, so planning
 * the same thing again (a retry, another replica) inserts nothing new; they double as Message-ID and webhook-id.
 * Returns the ids, in the order given.
 */
export async function scheduleEffects(kind: string, owner: EffectOwner, seed: string, planned: readonly PlannedEffect[]): Promise<string[]> {
  const now = new Date();
  const docs = planned.map((p) => effectDocOf(scheduledEffectId(seed, kind, p.key), kind, owner, p, now));
  await insertEffects(docs);
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
