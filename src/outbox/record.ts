// The history of effects: one attempt record per try (also of a message sent outside the queue, like a webhook ping), and what the earlier tries of a claimed effect left.
import mongoose from "mongoose";
import { EFFECT_RETENTION_MS, EffectAttemptModel, type EffectAttemptDoc, type EffectDoc } from "../db/models/effect.js";
import type { TryResult } from "./types.js";

/** The recorded error of a try whose process died before it finished (spec: one line, a reason in words). */
const INTERRUPTED = "interrupted: the service running it stopped before it finished";

/** What an attempt record says of its effect. */
type Attempted = Pick<EffectDoc, "_id" | "kind" | "user_id" | "webhook_id" | "payload">;

/** The record of one try, not yet written: its id is fixed here, so writing it again stores it once. */
export function attemptOf(effect: Attempted, attempt: number, result: TryResult, durationMs: number, at: Date): EffectAttemptDoc {
  return {
    _id: new mongoose.Types.ObjectId(),
    effect_id: effect._id,
    kind: effect.kind,
    user_id: effect.user_id,
    webhook_id: effect.webhook_id,
    event_type: typeof effect.payload.type === "string" ? effect.payload.type : effect.kind,
    attempt,
    ok: result.ok,
    status_code: result.statusCode ?? null,
    error: result.ok ? null : result.error,
    duration_ms: Math.round(durationMs),
    attempted_at: at,
    expires_at: new Date(at.getTime() + EFFECT_RETENTION_MS),
  };
}

/** Writes one try of an effect (also of a message sent outside the queue, like a webhook ping). */
export async function recordAttempt(effect: Attempted, attempt: number, result: TryResult, durationMs: number, at: Date): Promise<EffectAttemptDoc> {
  const doc = attemptOf(effect, attempt, result, durationMs, at);
  await EffectAttemptModel.collection.insertOne(doc);
  return doc;
}

/** The tries recorded so far of each of `effectIds`, in one read. */
export async function triesOf(effectIds: readonly string[]): Promise<Map<string, Pick<EffectAttemptDoc, "attempt" | "ok">[]>> {
  const tries = new Map<string, Pick<EffectAttemptDoc, "attempt" | "ok">[]>();
  if (effectIds.length === 0) return tries;
  // (effect_id, attempted_at) index.
  const rows = await EffectAttemptModel.find({ effect_id: mongoose.trusted({ $in: [...effectIds] }) }, { effect_id: 1, attempt: 1, ok: 1, _id: 0 }).lean<Pick<EffectAttemptDoc, "effect_id" | "attempt" | "ok">[]>();
  for (const r of rows) tries.set(r.effect_id, [...(tries.get(r.effect_id) ?? []), { attempt: r.attempt, ok: r.ok }]);
  return tries;
}

/**
 * What the earlier tries of a claimed effect left (`before`: as it was before the claim; `tries`: read right after it). One that succeeded means the effect is done: it was planned
 * again after it was delivered and deleted (two replicas planning one change at once), or its process died
 * between recording the success and deleting it. A try whose process died (it still held the lease, which ran
 * out) left no record: it is written now, so the history shows it beside the retry.
 */
export async function earlierTries(before: EffectDoc, tries: readonly Pick<EffectAttemptDoc, "attempt" | "ok">[], leaseMs: number): Promise<"delivered" | "run"> {
  if (tries.some((t) => t.ok)) return "delivered";
  if (before.lease_owner !== null && before.attempts > 0 && !tries.some((t) => t.attempt === before.attempts)) {
    // Claimed at updated_at; renewed last a lease before lease_until.
    const started = before.updated_at;
    const lastSeen = before.lease_until ? before.lease_until.getTime() - leaseMs : started.getTime();
    await recordAttempt(before, before.attempts, { ok: false, error: INTERRUPTED }, Math.max(0, lastSeen - started.getTime()), started);
  }
  return "run";
}
