// Running one claimed effect: what its earlier tries left, the lease renewed while its kind runs it, and what its result means (done, retry, wait, moot, give up), written while the lease is held.
import mongoose from "mongoose";
import { EFFECT_RETENTION_MS, EffectModel, type EffectDoc } from "../db/models/effect.js";
import { failureInWords } from "../domain/failure.js";
import { errorText, logEvent as log } from "../platform/log.js";
import type { Claimed } from "./claim.js";
import { earlierTries, recordAttempt } from "./record.js";
import { DEFAULT_RETRY_DELAYS_MS, retryDelayMs } from "./retry.js";
import type { Troubles } from "./share.js";
import type { EffectKind, EffectRecord, RunResult, TryResult } from "./types.js";

/** What running an effect needs of the rest of the outbox. */
export interface RunContext {
  /** This replica's name on its leases. */
  owner: string;
  leaseMs: number;
  retryScale: number;
  kinds: ReadonlyMap<string, EffectKind>;
  troubles: Troubles;
  /** Each finished try: ok, retry (failed, will try again) or failed (given up). */
  onAttempt?(kind: string, outcome: "ok" | "retry" | "failed"): void;
}

/** Writes to an effect this replica holds; false when the lease was lost (another replica has it now). */
async function whileHeld(ctx: RunContext, id: string, update: mongoose.UpdateQuery<EffectDoc>): Promise<boolean> {
  // _id index.
  const r = await EffectModel.updateOne({ _id: id, lease_owner: ctx.owner }, update);
  return r.matchedCount > 0;
}

/** The kind's run of the effect, with its lease renewed every third of it: a slow effect keeps it, a dead replica's runs out. */
async function tryOnce(ctx: RunContext, doc: EffectDoc, kind: EffectKind, record: EffectRecord, controller: AbortController): Promise<RunResult> {
  const renew = setInterval(() => {
    const leaseEnd = new Date(Date.now() + ctx.leaseMs);
    whileHeld(ctx, doc._id, { $set: { due_at: leaseEnd, lease_until: leaseEnd } })
      .then((held) => {
        if (!held) controller.abort(new Error("lease lost"));
      })
      .catch(() => undefined);
  }, Math.max(50, Math.floor(ctx.leaseMs / 3)));
  try {
    return await kind.run(record, controller.signal);
  } catch (err) {
    // The error is kept on the attempt and the effect, which hosts read (a webhook's deliveries): its reason in
    // words, one line; the stack goes to the log.
    log("warn", "effect run threw", { effect_id: doc._id, kind: doc.kind, error: errorText(err) });
    return { ok: false, error: failureInWords(err) };
  } finally {
    clearInterval(renew);
  }
}

/**
 * After a try of an effect with a destination: a success forgets the destination's failures; a failure that may
 * heal makes its untried effects wait (the pause grows with the failures in a row). Effects planned later by this
 * replica are due when the rest ends from the start (src/outbox/relay.ts).
 */
async function noteDestination(ctx: RunContext, doc: EffectDoc, result: TryResult, now: Date): Promise<void> {
  const destination = doc.destination;
  if (!destination) return;
  if (result.ok) return void ctx.troubles.succeeded(destination);
  if (result.permanent) return;
  const until = new Date(ctx.troubles.failed(destination, now.getTime()));
  // (destination, state) index. Untried effects only (a claimed one has attempts 1): the others keep their retries.
  await EffectModel.updateMany({ destination, state: "pending", attempts: 0, due_at: mongoose.trusted({ $lt: until }) }, { $set: { due_at: until, updated_at: now } });
}

function recordOf(doc: EffectDoc): EffectRecord {
  return {
    id: doc._id,
    kind: doc.kind,
    userId: doc.user_id.toHexString(),
    bookingId: doc.booking_id?.toHexString() ?? null,
    webhookId: doc.webhook_id?.toHexString() ?? null,
    payload: doc.payload,
    attempts: doc.attempts,
    createdAt: doc.created_at,
  };
}

/** Runs one claimed effect to the end of its try and writes what came of it. */
export async function runEffect(ctx: RunContext, claimed: Claimed, controller: AbortController): Promise<void> {
  const { doc } = claimed;
  if ((await earlierTries(claimed, ctx.leaseMs)) === "delivered") {
    // _id index.
    await EffectModel.deleteOne({ _id: doc._id, lease_owner: ctx.owner });
    log("info", "effect delivered before; not sent again", { effect_id: doc._id, kind: doc.kind });
    return;
  }
  const kind = ctx.kinds.get(doc.kind) as EffectKind;
  const record = recordOf(doc);
  const started = Date.now();
  const result = await tryOnce(ctx, doc, kind, record, controller);
  const now = new Date();
  const released = { lease_owner: null, lease_until: null, updated_at: now };
  if (controller.signal.aborted) {
    // Cut short by shutdown (or the lease is gone): the try does not count; another worker runs it.
    await whileHeld(ctx, doc._id, { $set: { ...released, due_at: now }, $inc: { attempts: -1 } });
    return;
  }
  if (result.ok === "moot") {
    // No longer owed (what it was for was canceled or re-planned): gone without counting as a try.
    // _id index.
    await EffectModel.deleteOne({ _id: doc._id, lease_owner: ctx.owner });
    log("info", "effect no longer owed", { effect_id: doc._id, kind: doc.kind, reason: result.reason });
    return;
  }
  if (result.ok === "later") {
    // Not a try: the effect waits for something else and is due again then, with its attempts as they were.
    await whileHeld(ctx, doc._id, { $set: { ...released, due_at: result.until, last_error: result.reason }, $inc: { attempts: -1 } });
    return;
  }
  await recordAttempt(doc, doc.attempts, result, now.getTime() - started, now);
  await noteDestination(ctx, doc, result, now).catch((err: unknown) => log("warn", "destination backoff not recorded", { effect_id: doc._id, error: errorText(err) }));
  if (result.ok) {
    // Done effects leave at once: the attempt record keeps the history, and the collection stays as small as the
    // work still owed, which keeps claims cheap (and every write: on the embedded server a write costs time in
    // proportion to the collection's size). Planned again after this, it is found delivered (earlierTries).
    // _id index.
    await EffectModel.deleteOne({ _id: doc._id, lease_owner: ctx.owner });
    ctx.onAttempt?.(doc.kind, "ok");
    return;
  }
  const delay = result.permanent ? undefined : retryDelayMs(kind.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS, doc.attempts, Math.random(), ctx.retryScale);
  if (delay !== undefined) {
    await whileHeld(ctx, doc._id, { $set: { ...released, state: "pending", due_at: new Date(now.getTime() + delay), last_error: result.error } });
    ctx.onAttempt?.(doc.kind, "retry");
    log("warn", "effect failed; will retry", { effect_id: doc._id, kind: doc.kind, attempt: doc.attempts, retry_in_ms: delay, error: result.error });
    return;
  }
  const held = await whileHeld(ctx, doc._id, { $set: { ...released, state: "failed", last_error: result.error, expires_at: new Date(now.getTime() + EFFECT_RETENTION_MS) } });
  ctx.onAttempt?.(doc.kind, "failed");
  log("error", "effect given up", { effect_id: doc._id, kind: doc.kind, attempts: doc.attempts, error: result.error });
  if (held) await kind.giveUp?.(record, result.error).catch((err: unknown) => log("error", "effect giveUp failed", { effect_id: doc._id, error: errorText(err) }));
}
