// The outbox's worker loop: the relay turns owed booking changes into effects; workers claim due effects with leases, run them, record and retry.
import { randomBytes } from "node:crypto";
import mongoose from "mongoose";
import { onlyDuplicateKeys } from "../db/errors.js";
import { BookingModel } from "../db/models/booking.js";
import { EFFECT_RETENTION_MS, EffectAttemptModel, EffectModel, type EffectAttemptDoc, type EffectDoc } from "../db/models/effect.js";
import { errorText, logEvent as log } from "../platform/log.js";
import { changesOf, effectId, type OwedChange } from "../domain/owed.js";
import { DEFAULT_RETRY_DELAYS_MS, retryDelayMs } from "./retry.js";
import type { EffectKind, EffectRecord, RunResult } from "./types.js";

export interface EffectsWorkerOptions {
  kinds: readonly EffectKind[];
  /** How often the loop looks for owed changes and due effects when nothing woke it (EFFECTS_POLL_MS). */
  pollMs: number;
  /** How long a claim holds an effect without renewal (EFFECTS_LEASE_MS); renewed every third of it while running. */
  leaseMs: number;
  /** Effects run at once by this replica (EFFECTS_CONCURRENCY): a slow receiver holds one slot, not the queue. */
  concurrency: number;
  /** Multiplies every retry wait (EFFECTS_RETRY_SCALE): 1 in production, small in tests. */
  retryScale: number;
  /** Each finished try: ok, retry (failed, will try again) or failed (given up). */
  onAttempt?(kind: string, outcome: "ok" | "retry" | "failed"): void;
}

export interface EffectsWorker {
  /** Look for work now instead of at the next poll. */
  wake(): void;
  /** Stops claiming; work in flight gets `graceMs` to finish, then is aborted and its lease given back. */
  stop(graceMs: number): Promise<void>;
}

/** Bookings read per relay pass; the rest wait for the next pass, which comes at once when this one was full. */
const RELAY_BATCH = 100;
/** Bookings planned at once within a pass. */
const RELAY_LANES = 8;
/** How long this replica leaves a booking alone after planning it failed, and how many it leaves alone at most. */
const RELAY_RETRY_MS = 10_000;
const RELAY_SKIP_MAX = 1000;

let localWorker: EffectsWorker | undefined;

/** Called after a booking write recorded an owed change: this replica's worker picks it up at once. */
export function effectsOwed(): void {
  localWorker?.wake();
}


interface OwingBooking {
  _id: mongoose.Types.ObjectId;
  user_id: mongoose.Types.ObjectId;
  changes_owed?: OwedChange[];
  owed_seq?: number;
}

/** Plans every owed change of one booking into effects, inserts them, then clears what was planned. */
async function relayBooking(b: OwingBooking, kinds: readonly EffectKind[]): Promise<void> {
  const now = new Date();
  const docs: EffectDoc[] = [];
  for (const change of changesOf(b)) {
    for (const kind of kinds) {
      for (const planned of await kind.plan(change)) {
        docs.push({
          _id: effectId(change.bookingId, change.seq, kind.name, planned.key),
          kind: kind.name,
          user_id: b.user_id,
          booking_id: b._id,
          webhook_id: planned.webhookId ? new mongoose.Types.ObjectId(planned.webhookId) : null,
          payload: planned.payload,
          state: "pending",
          due_at: planned.dueAt ?? now,
          lease_owner: null,
          lease_until: null,
          attempts: 0,
          last_error: null,
          created_at: now,
          updated_at: now,
          expires_at: null,
        });
      }
    }
  }
  if (docs.length > 0) {
    try {
      await (EffectModel.collection as unknown as mongoose.mongo.Collection<EffectDoc>).insertMany(docs, { ordered: false });
    } catch (err) {
      // Planned before (another replica, or a pass that died before clearing): those effects exist already.
      if (!onlyDuplicateKeys(err)) throw err;
    }
  }
  // Only if no change was recorded since the read: a newer one stays owed and is planned by the next pass.
  // _id index.
  await BookingModel.updateOne({ _id: b._id, owed_seq: b.owed_seq ?? 0 }, { $set: { changes_owed: [], changes_pending: false } });
}

/** Writes one try of an effect (also of a message sent outside the queue, like a webhook ping). */
export async function recordAttempt(
  effect: Pick<EffectDoc, "_id" | "kind" | "user_id" | "webhook_id" | "payload">,
  attempt: number,
  result: RunResult,
  durationMs: number,
  at: Date,
): Promise<EffectAttemptDoc> {
  const doc: EffectAttemptDoc = {
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
  await EffectAttemptModel.collection.insertOne(doc);
  return doc;
}

export function startEffectsWorker(opts: EffectsWorkerOptions): EffectsWorker {
  const owner = `${process.pid}-${randomBytes(6).toString("hex")}`;
  const byName = new Map(opts.kinds.map((k) => [k.name, k]));
  const kindNames = [...byName.keys()];
  const inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  let stopping = false;
  let wakeUp: (() => void) | undefined;
  let woken = false;
  /** Whether the next pass reads owed changes (after a booking write and on every poll) or only claims. */
  let relayDue = true;

  const nudge = (relayToo: boolean) => {
    woken = true;
    if (relayToo) relayDue = true;
    wakeUp?.();
  };
  const wake = () => nudge(true);

  /**
   * Bookings whose planning failed, and when to try them again. They are left out of the next passes meanwhile, so
   * a booking that fails every time cannot fill every batch and keep the others waiting behind it.
   */
  const failing = new Map<string, number>();

  async function relay(): Promise<boolean> {
    const now = Date.now();
    for (const [id, retryAt] of failing) if (retryAt <= now) failing.delete(id);
    const skip = [...failing.keys()].map((id) => new mongoose.Types.ObjectId(id));
    // changes_pending partial index.
    const owing = await BookingModel.find(
      skip.length === 0 ? { changes_pending: true } : { changes_pending: true, _id: mongoose.trusted({ $nin: skip }) },
      { user_id: 1, changes_owed: 1, owed_seq: 1 },
    )
      .limit(RELAY_BATCH)
      .lean<OwingBooking[]>();
    // Several bookings at once: planning is a few reads and two writes per booking, mostly waiting on the database.
    let next = 0;
    const lane = async () => {
      while (next < owing.length && !stopping) {
        const b = owing[next++];
        try {
          await relayBooking(b, opts.kinds);
        } catch (err) {
          // The booking keeps its owed changes and is tried again after a while (by any replica at its next poll).
          if (failing.size < RELAY_SKIP_MAX) failing.set(b._id.toHexString(), Date.now() + RELAY_RETRY_MS);
          log("error", "planning effects failed", { booking_id: b._id.toHexString(), error: errorText(err) });
        }
      }
    };
    await Promise.all(Array.from({ length: RELAY_LANES }, lane));
    return owing.length === RELAY_BATCH;
  }

  async function claim(): Promise<EffectDoc | null> {
    const now = new Date();
    const leaseEnd = new Date(now.getTime() + opts.leaseMs);
    // (state, due_at) index. The lease is due_at itself: when it runs out unrenewed, the effect is due again.
    return EffectModel.findOneAndUpdate(
      { state: "pending", due_at: mongoose.trusted({ $lte: now }), kind: mongoose.trusted({ $in: kindNames }) },
      { $set: { due_at: leaseEnd, lease_owner: owner, lease_until: leaseEnd, updated_at: now }, $inc: { attempts: 1 } },
      { sort: { due_at: 1 }, returnDocument: "after" },
    ).lean<EffectDoc>();
  }

  /** Writes to an effect we hold; false when the lease was lost (another replica has it now). */
  async function whileHeld(id: string, update: mongoose.UpdateQuery<EffectDoc>): Promise<boolean> {
    // _id index.
    const r = await EffectModel.updateOne({ _id: id, lease_owner: owner }, update);
    return r.matchedCount > 0;
  }

  async function run(doc: EffectDoc, controller: AbortController): Promise<void> {
    const kind = byName.get(doc.kind) as EffectKind;
    const record: EffectRecord = {
      id: doc._id,
      kind: doc.kind,
      userId: doc.user_id.toHexString(),
      bookingId: doc.booking_id?.toHexString() ?? null,
      webhookId: doc.webhook_id?.toHexString() ?? null,
      payload: doc.payload,
      attempts: doc.attempts,
      createdAt: doc.created_at,
    };
    // Renew the lease while running: a slow effect keeps it, a dead replica's lease runs out.
    const renew = setInterval(() => {
      const leaseEnd = new Date(Date.now() + opts.leaseMs);
      whileHeld(doc._id, { $set: { due_at: leaseEnd, lease_until: leaseEnd } })
        .then((held) => {
          if (!held) controller.abort(new Error("lease lost"));
        })
        .catch(() => undefined);
    }, Math.max(50, Math.floor(opts.leaseMs / 3)));
    const started = Date.now();
    let result: RunResult;
    try {
      result = await kind.run(record, controller.signal);
    } catch (err) {
      result = { ok: false, error: errorText(err) };
    } finally {
      clearInterval(renew);
    }
    const now = new Date();
    if (controller.signal.aborted) {
      // Cut short by shutdown (or the lease is gone): the try does not count; another worker runs it.
      await whileHeld(doc._id, { $set: { due_at: now, lease_owner: null, lease_until: null, updated_at: now }, $inc: { attempts: -1 } });
      return;
    }
    await recordAttempt(doc, doc.attempts, result, now.getTime() - started, now);
    const finished = { lease_owner: null, lease_until: null, updated_at: now, expires_at: new Date(now.getTime() + EFFECT_RETENTION_MS) };
    if (result.ok) {
      // Done effects leave at once: the attempt record keeps the history, and the collection stays as small as the
      // work still owed, which keeps claims cheap (and every write: on the embedded server a write costs time in
      // proportion to the collection's size). A change planned again after this (see owed.ts) sends again with
      // the same id, which receivers deduplicate on.
      // _id index.
      await EffectModel.deleteOne({ _id: doc._id, lease_owner: owner });
      opts.onAttempt?.(doc.kind, "ok");
      return;
    }
    const delay = result.permanent ? undefined : retryDelayMs(kind.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS, doc.attempts, Math.random(), opts.retryScale);
    if (delay !== undefined) {
      await whileHeld(doc._id, { $set: { state: "pending", due_at: new Date(now.getTime() + delay), lease_owner: null, lease_until: null, updated_at: now, last_error: result.error } });
      opts.onAttempt?.(doc.kind, "retry");
      log("warn", "effect failed; will retry", { effect_id: doc._id, kind: doc.kind, attempt: doc.attempts, retry_in_ms: delay, error: result.error });
      return;
    }
    const held = await whileHeld(doc._id, { $set: { ...finished, state: "failed", last_error: result.error } });
    opts.onAttempt?.(doc.kind, "failed");
    log("error", "effect given up", { effect_id: doc._id, kind: doc.kind, attempts: doc.attempts, error: result.error });
    if (held) await kind.giveUp?.(record, result.error).catch((err: unknown) => log("error", "effect giveUp failed", { effect_id: doc._id, error: errorText(err) }));
  }

  function start(doc: EffectDoc): void {
    const controller = new AbortController();
    const done = run(doc, controller)
      .catch((err: unknown) => log("error", "effect run failed", { effect_id: doc._id, error: errorText(err) }))
      .finally(() => {
        inFlight.delete(doc._id);
        // A free slot: claim the next due effect at once (no relay pass needed for that).
        nudge(false);
      });
    inFlight.set(doc._id, { controller, done });
  }

  async function fill(): Promise<void> {
    while (!stopping && inFlight.size < opts.concurrency) {
      const doc = await claim();
      if (!doc) return;
      start(doc);
    }
  }

  const loop = (async () => {
    while (!stopping) {
      woken = false;
      let more = false;
      try {
        if (relayDue) {
          relayDue = false;
          more = await relay();
          if (more) relayDue = true;
        }
        await fill();
      } catch (err) {
        // The database may be away for a moment; the next poll tries again.
        log("warn", "effects pass failed", { error: errorText(err) });
      }
      if (stopping) break;
      if (more || woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          relayDue = true;
          resolve();
        }, opts.pollMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = undefined;
    }
  })();

  const worker: EffectsWorker = {
    wake,
    async stop(graceMs) {
      stopping = true;
      wakeUp?.();
      await loop;
      const all = () => Promise.all([...inFlight.values()].map((f) => f.done));
      const timedOut = await Promise.race([all().then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref())]);
      if (timedOut) {
        for (const f of inFlight.values()) f.controller.abort(new Error("shutting down"));
        await all();
      }
      if (localWorker === worker) localWorker = undefined;
    },
  };
  localWorker = worker;
  return worker;
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
