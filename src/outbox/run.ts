// Running one claimed effect: what its earlier tries left, the lease renewed while its kind runs it, and what its result means (done, retry, wait, moot, give up), written while the lease is held.
import { setTimeout as sleep } from "node:timers/promises";
import mongoose from "mongoose";
import { EFFECT_RETENTION_MS, EffectModel, type EffectDoc } from "../db/models/effect.js";
import type { Clock } from "../domain/clock.js";
import { failureInWords } from "../domain/failure.js";
import { errorText, logEvent as log } from "../platform/log.js";
import type { Claimed } from "./claim.js";
import type { Holds } from "./holds.js";
import { attemptOf, earlierTries } from "./record.js";
import { DEFAULT_RETRY_DELAYS_MS, retryDelayMs, STORE_RETRY_MS } from "./retry.js";
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
  /** What due times and leases are read against (`Deps.clock`). */
  clock: Clock;
  /** This replica's held effects: their leases renewed, their tries' ends written together. */
  holds: Holds;
  /** Each finished try: ok, retry (failed, will try again) or failed (given up). */
  onAttempt?(kind: string, outcome: "ok" | "retry" | "failed"): void;
}

/** Writes to an effect this replica holds; false when the lease was lost (another replica has it now). */
async function whileHeld(ctx: RunContext, id: string, update: mongoose.UpdateQuery<EffectDoc>): Promise<boolean> {
  // _id index.
  const r = await EffectModel.updateOne({ _id: id, lease_owner: ctx.owner }, update);
  return r.matchedCount > 0;
}

/** The kind's run of the effect; a throw is a failed try. */
async function tryOnce(doc: EffectDoc, kind: EffectKind, record: EffectRecord, signal: AbortSignal): Promise<RunResult> {
  try {
    return await kind.run(record, signal);
  } catch (err) {
    // The error is kept on the attempt and the effect, which hosts read (a webhook's deliveries): its reason in
    // words, one line; the stack goes to the log.
    log("warn", "effect run threw", { effect_id: doc._id, kind: doc.kind, error: errorText(err) });
    return { ok: false, error: failureInWords(err) };
  }
}

/**
 * Writes what a try came to, again and again until it is stored (each write must be safe to repeat). The message
 * may have gone out: left to its lease, an effect whose result write failed (a database too busy to answer in time)
 * was run again by whichever replica took it next, a copy of a message already sent. The lease is renewed meanwhile
 * (runEffect), so no one else takes it. Only a shutdown (`signal`) stops trying: the lease then runs out, and the
 * next replica finds what was stored (record.ts earlierTries).
 */
async function untilStored<T>(doc: EffectDoc, signal: AbortSignal, write: () => Promise<T>): Promise<T> {
  for (let wait = STORE_RETRY_MS.first; ; wait = Math.min(wait * 2, STORE_RETRY_MS.max)) {
    try {
      return await write();
    } catch (err) {
      if (signal.aborted) throw err;
      log("warn", "effect result not stored; writing it again", { effect_id: doc._id, kind: doc.kind, retry_in_ms: wait, error: errorText(err) });
      await sleep(wait, undefined, { signal });
    }
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

/**
 * Runs one claimed effect to the end of its try and writes what came of it, its lease renewed until then.
 * `tried` hears that the try is over and went well (or was moot): only writing it is left, which needs no slot.
 */
export async function runEffect(ctx: RunContext, claimed: Claimed, controller: AbortController, tried: () => void): Promise<void> {
  const { doc } = claimed;
  let running = false;
  // Lost while the kind runs: the run is cut short (another replica runs it). Lost after: the result is still written.
  ctx.holds.hold(doc._id, () => {
    if (running) controller.abort(new Error("lease lost"));
  });
  try {
    if ((await earlierTries(claimed.before, claimed.tries, ctx.leaseMs)) === "delivered") {
      tried();
      await ctx.holds.end(doc._id, undefined, true, controller.signal);
      log("info", "effect delivered before; not sent again", { effect_id: doc._id, kind: doc.kind });
      return;
    }
    const kind = ctx.kinds.get(doc.kind) as EffectKind;
    const record = recordOf(doc);
    const started = performance.now();
    running = true;
    const result = await tryOnce(doc, kind, record, controller.signal);
    running = false;
    if (controller.signal.aborted) {
      // Cut short by shutdown (or the lease is gone): the try does not count; another worker runs it. Due again from
      // when it was due before this lease, not from now: due now, it would come after every message of its
      // destination planned while it ran, and the next server would send those first.
      await whileHeld(ctx, doc._id, { $set: { lease_owner: null, lease_until: null, updated_at: ctx.clock.now(), due_at: claimed.before.due_at }, $inc: { attempts: -1 } });
      return;
    }
    if (result.ok === true || result.ok === "moot") tried();
    await settle(ctx, { doc, kind, record, started }, result, controller.signal);
  } finally {
    ctx.holds.letGo(doc._id);
  }
}

/** Writes what a try came to (done, retry, wait, moot, give up), each write until stored. */
async function settle(ctx: RunContext, t: { doc: EffectDoc; kind: EffectKind; record: EffectRecord; started: number }, result: RunResult, signal: AbortSignal): Promise<void> {
  const { doc, kind, record } = t;
  const now = ctx.clock.now();
  const released = { lease_owner: null, lease_until: null, updated_at: now };
  if (result.ok === "moot") {
    // No longer owed (what it was for was canceled or re-planned): gone without counting as a try.
    await ctx.holds.end(doc._id, undefined, true, signal);
    log("info", "effect no longer owed", { effect_id: doc._id, kind: doc.kind, reason: result.reason });
    return;
  }
  if (result.ok === "later") {
    // Not a try: the effect waits for something else and is due again then, with its attempts as they were.
    await untilStored(doc, signal, () => whileHeld(ctx, doc._id, { $set: { ...released, due_at: result.until, last_error: result.reason }, $inc: { attempts: -1 } }));
    return;
  }
  const attempt = attemptOf(doc, doc.attempts, result, Math.round(performance.now() - t.started), now);
  if (result.ok) {
    // Done effects leave at once, right after their record (one write for every try ending meanwhile): the attempt
    // record keeps the history, and the collection stays as small as the work still owed, which keeps every write
    // cheap (src/outbox/batch.ts). Planned again after this, it is found delivered (earlierTries).
    await ctx.holds.end(doc._id, attempt, true, signal);
    if (doc.destination) ctx.troubles.succeeded(doc.destination);
    ctx.onAttempt?.(doc.kind, "ok");
    return;
  }
  // The destination rests from now (the claims read this replica's troubles at once), not from when the record is stored.
  await noteDestination(ctx, doc, result, now).catch((err: unknown) => log("warn", "destination backoff not recorded", { effect_id: doc._id, error: errorText(err) }));
  await ctx.holds.end(doc._id, attempt, false, signal);
  const delay = result.permanent ? undefined : retryDelayMs(kind.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS, doc.attempts, Math.random(), ctx.retryScale);
  if (delay !== undefined) {
    await untilStored(doc, signal, () => whileHeld(ctx, doc._id, { $set: { ...released, state: "pending", due_at: new Date(now.getTime() + delay), last_error: result.error } }));
    ctx.onAttempt?.(doc.kind, "retry");
    log("warn", "effect failed; will retry", { effect_id: doc._id, kind: doc.kind, attempt: doc.attempts, retry_in_ms: delay, error: result.error });
    return;
  }
  const gaveUp = { ...released, state: "failed", last_error: result.error, expires_at: new Date(now.getTime() + EFFECT_RETENTION_MS) };
  const held = await untilStored(doc, signal, () => whileHeld(ctx, doc._id, { $set: gaveUp }));
  ctx.onAttempt?.(doc.kind, "failed");
  log("error", "effect given up", { effect_id: doc._id, kind: doc.kind, attempts: doc.attempts, error: result.error });
  if (held) await kind.giveUp?.(record, result.error).catch((err: unknown) => log("error", "effect giveUp failed", { effect_id: doc._id, error: errorText(err) }));
}
