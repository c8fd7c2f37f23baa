// The outbox's worker loop: the relay turns owed booking changes into effects; workers claim due effects with leases, fairly between accounts and destinations, run them, record and retry.
import { randomBytes } from "node:crypto";
import mongoose from "mongoose";
import { isDuplicateKeyError, onlyDuplicateKeys } from "../db/errors.js";
import { BookingModel } from "../db/models/booking.js";
import { EFFECT_RETENTION_MS, EffectAttemptModel, EffectModel, type EffectAttemptDoc, type EffectDoc } from "../db/models/effect.js";
import { errorText, logEvent as log } from "../platform/log.js";
import { failureInWords } from "../domain/failure.js";
import { changesOf, effectId, type OwedChange } from "../domain/owed.js";
import { DEFAULT_RETRY_DELAYS_MS, destinationPauseMs, retryDelayMs } from "./retry.js";
import type { EffectKind, EffectRecord, RunResult, TryResult } from "./types.js";

export interface EffectsWorkerOptions {
  kinds: readonly EffectKind[];
  /** How often the loop looks for owed changes and due effects when nothing woke it (EFFECTS_POLL_MS). */
  pollMs: number;
  /** How long a claim holds an effect without renewal (EFFECTS_LEASE_MS); renewed every third of it while running. */
  leaseMs: number;
  /** Effects run at once by this replica (EFFECTS_CONCURRENCY): a slow receiver holds one slot, not the queue. */
  concurrency: number;
  /** Effects of one account run at once by this replica (EFFECTS_PER_ACCOUNT): its share of `concurrency`. */
  perAccount: number;
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
/** Destinations whose failures in a row this replica remembers at most (the oldest is forgotten first). */
const TROUBLED_DESTINATIONS_MAX = 10_000;

/*
 * Fairness. Effects go to outside systems that may answer slowly or never (a webhook receiver that hangs holds a
 * worker for the whole delivery timeout). Three rules keep one account's troubles its own:
 * - an account runs at most `perAccount` effects at once on a replica, so the others always have the rest of the
 *   workers (with R replicas an account holds at most R x perAccount of R x concurrency);
 * - a free worker takes the oldest due effect of an account that has nothing running here first, and only when
 *   there is none the oldest due effect of any account under its share: a newly due effect of another account
 *   starts at the next free worker, however many effects of the busy account are due before it;
 * - effects of one destination (a webhook, a calendar; the kind names it) run one at a time per replica, and a
 *   destination that fails rests: its untried effects wait 30 s, then 1 min, 2 min ... 30 min after each failure
 *   in a row, so a dead receiver costs one try at a time instead of one per effect, and the account's other
 *   destinations get its share meanwhile. Effects that have failed already keep their own retry schedule.
 */

let localWorker: EffectsWorker | undefined;

/** Called after a booking write recorded an owed change: this replica's worker picks it up at once. */
export function effectsOwed(): void {
  localWorker?.wake();
}


/** An effect this replica just leased, and as it was before (who held it, how many tries it had). */
interface Claimed {
  doc: EffectDoc;
  before: EffectDoc;
}

/** The recorded error of a try whose process died before it finished (spec: one line, a reason in words). */
const INTERRUPTED = "interrupted: the service running it stopped before it finished";

interface OwingBooking {
  _id: mongoose.Types.ObjectId;
  user_id: mongoose.Types.ObjectId;
  changes_owed?: OwedChange[];
  owed_seq?: number;
  planned_seq?: number;
}

/**
 * Plans every owed change of one booking into effects, inserts them, then clears what was planned. An effect for a
 * destination that is resting after a failure is due when the rest ends (`restingUntil`, ms since the epoch).
 */
async function relayBooking(b: OwingBooking, kinds: readonly EffectKind[], restingUntil: (destination: string) => number | undefined): Promise<void> {
  const now = new Date();
  const docs: EffectDoc[] = [];
  for (const change of changesOf(b)) {
    for (const kind of kinds) {
      for (const planned of await kind.plan(change)) {
        const rest = planned.destination === undefined ? undefined : restingUntil(planned.destination);
        const due = planned.dueAt ?? now;
        docs.push({
          _id: effectId(change.bookingId, change.seq, kind.name, planned.key),
          kind: kind.name,
          user_id: b.user_id,
          booking_id: b._id,
          webhook_id: planned.webhookId ? new mongoose.Types.ObjectId(planned.webhookId) : null,
          destination: planned.destination ?? null,
          payload: planned.payload,
          state: "pending",
          due_at: rest !== undefined && rest > due.getTime() ? new Date(rest) : due,
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
    const effects = EffectModel.collection as unknown as mongoose.mongo.Collection<EffectDoc>;
    try {
      await effects.insertMany(docs, { ordered: false });
    } catch (err) {
      // Planned before (another replica, a pass that died before clearing, or a change recorded again by a write
      // that read the booking before this replica cleared it): those effects exist already.
      if (!onlyDuplicateKeys(err)) throw err;
      // MongoDB inserts the others of an unordered insert; the embedded server stops at the first duplicate, which
      // lost every later effect (a cancel right after a booking sent no cancellation). One by one, then: a
      // duplicate is an effect planned before, anything else still fails the pass.
      for (const doc of docs) {
        try {
          await effects.insertOne(doc);
        } catch (one) {
          if (!isDuplicateKeyError(one)) throw one;
        }
      }
    }
  }
  // Only if no change was recorded since the read: a newer one stays owed and is planned by the next pass. Either
  // way the booking remembers that everything up to what was read is planned (src/domain/owed.ts changesOf), so a
  // write that read the booking before this and sets the planned changes again cannot have them planned twice.
  // _id index.
  const through = b.owed_seq ?? 0;
  const cleared = await BookingModel.updateOne({ _id: b._id, owed_seq: through }, { $set: { changes_owed: [], changes_pending: false, planned_seq: through } });
  if (cleared.matchedCount === 0) {
    // No $max on the embedded server: only ever raised.
    await BookingModel.updateOne({ _id: b._id, planned_seq: mongoose.trusted({ $not: { $gte: through } }) }, { $set: { planned_seq: through } });
  }
}

/** Writes one try of an effect (also of a message sent outside the queue, like a webhook ping). */
export async function recordAttempt(
  effect: Pick<EffectDoc, "_id" | "kind" | "user_id" | "webhook_id" | "payload">,
  attempt: number,
  result: TryResult,
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
  /** Effects running here per account (user id) and per destination; an entry leaves when its count drops to 0. */
  const runningByAccount = new Map<string, number>();
  const runningByDestination = new Map<string, number>();
  /** Failures in a row per destination and until when its untried effects wait, in the order last touched. */
  const troubled = new Map<string, { failures: number; until: number }>();
  const restingUntil = (destination: string) => troubled.get(destination)?.until;
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
      { user_id: 1, changes_owed: 1, owed_seq: 1, planned_seq: 1 },
    )
      .limit(RELAY_BATCH)
      .lean<OwingBooking[]>();
    // Several bookings at once: planning is a few reads and two writes per booking, mostly waiting on the database.
    let next = 0;
    const lane = async () => {
      while (next < owing.length && !stopping) {
        const b = owing[next++];
        try {
          await relayBooking(b, opts.kinds, restingUntil);
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

  /** The oldest due effect, leaving out the accounts and destinations given; leased to this replica. */
  async function claimExcept(accounts: readonly string[], destinations: readonly string[]): Promise<Claimed | null> {
    const now = new Date();
    const leaseEnd = new Date(now.getTime() + opts.leaseMs);
    const filter: mongoose.QueryFilter<EffectDoc> = { state: "pending", due_at: mongoose.trusted({ $lte: now }), kind: mongoose.trusted({ $in: kindNames }) };
    if (accounts.length > 0) filter.user_id = mongoose.trusted({ $nin: accounts.map((a) => new mongoose.Types.ObjectId(a)) });
    // $nin also takes effects without a destination.
    if (destinations.length > 0) filter.destination = mongoose.trusted({ $nin: destinations });
    // (state, due_at) index. The lease is due_at itself: when it runs out unrenewed, the effect is due again.
    const lease = { due_at: leaseEnd, lease_owner: owner, lease_until: leaseEnd, updated_at: now };
    // As it was before: whether another replica held it (and never finished) is read from there.
    const before = await EffectModel.findOneAndUpdate(filter, { $set: lease, $inc: { attempts: 1 } }, { sort: { due_at: 1 }, returnDocument: "before" }).lean<EffectDoc>();
    return before && { doc: { ...before, ...lease, attempts: before.attempts + 1 }, before };
  }

  /** The next effect to run here, by the fairness rules above. */
  async function claim(): Promise<Claimed | null> {
    const busyDestinations = [...runningByDestination.keys()];
    const running = [...runningByAccount.keys()];
    if (running.length > 0) {
      const idleAccountsFirst = await claimExcept(running, busyDestinations);
      if (idleAccountsFirst) return idleAccountsFirst;
    }
    const full = running.filter((a) => (runningByAccount.get(a) ?? 0) >= opts.perAccount);
    return claimExcept(full, busyDestinations);
  }

  /**
   * After a try of an effect with a destination: a success forgets the destination's failures; a failure that may
   * heal makes its untried effects wait (the pause grows with the failures in a row).
   */
  async function noteDestination(doc: EffectDoc, result: RunResult, now: Date): Promise<void> {
    const destination = doc.destination;
    if (!destination) return;
    if (result.ok) {
      troubled.delete(destination);
      return;
    }
    if (result.permanent) return;
    const failures = (troubled.get(destination)?.failures ?? 0) + 1;
    const until = new Date(now.getTime() + destinationPauseMs(failures, opts.retryScale));
    troubled.delete(destination);
    troubled.set(destination, { failures, until: until.getTime() });
    if (troubled.size > TROUBLED_DESTINATIONS_MAX) troubled.delete(troubled.keys().next().value as string);
    // (destination, state) index. Untried effects only (a claimed one has attempts 1): the others keep their retries.
    // Effects planned later by this replica are due at `until` from the start (relayBooking).
    await EffectModel.updateMany(
      { destination, state: "pending", attempts: 0, due_at: mongoose.trusted({ $lt: until }) },
      { $set: { due_at: until, updated_at: now } },
    );
  }

  /** Writes to an effect we hold; false when the lease was lost (another replica has it now). */
  async function whileHeld(id: string, update: mongoose.UpdateQuery<EffectDoc>): Promise<boolean> {
    // _id index.
    const r = await EffectModel.updateOne({ _id: id, lease_owner: owner }, update);
    return r.matchedCount > 0;
  }

  /**
   * What the earlier tries of a claimed effect left. One that succeeded means the effect is done: it was planned
   * again after it was delivered and deleted (two replicas planning one change at once), or its process died
   * between recording the success and deleting it. A try whose process died (it still held the lease, which ran
   * out) left no record: it is written now, so the history shows it beside the retry.
   */
  async function earlierTries({ doc, before }: Claimed): Promise<"delivered" | "run"> {
    // (effect_id, attempted_at) index.
    const tries = await EffectAttemptModel.find({ effect_id: doc._id }, { attempt: 1, ok: 1, _id: 0 }).lean<Pick<EffectAttemptDoc, "attempt" | "ok">[]>();
    if (tries.some((t) => t.ok)) return "delivered";
    if (before.lease_owner !== null && before.attempts > 0 && !tries.some((t) => t.attempt === before.attempts)) {
      // Claimed at updated_at; renewed last a lease before lease_until.
      const started = before.updated_at;
      const lastSeen = before.lease_until ? before.lease_until.getTime() - opts.leaseMs : started.getTime();
      await recordAttempt(before, before.attempts, { ok: false, error: INTERRUPTED }, Math.max(0, lastSeen - started.getTime()), started);
    }
    return "run";
  }

  async function run({ doc, before }: Claimed, controller: AbortController): Promise<void> {
    if ((await earlierTries({ doc, before })) === "delivered") {
      // _id index.
      await EffectModel.deleteOne({ _id: doc._id, lease_owner: owner });
      log("info", "effect delivered before; not sent again", { effect_id: doc._id, kind: doc.kind });
      return;
    }
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
      // The error is kept on the attempt and the effect, which hosts read (a webhook's deliveries): its reason in
      // words, one line; the stack goes to the log.
      log("warn", "effect run threw", { effect_id: doc._id, kind: doc.kind, error: errorText(err) });
      result = { ok: false, error: failureInWords(err) };
    } finally {
      clearInterval(renew);
    }
    const now = new Date();
    if (controller.signal.aborted) {
      // Cut short by shutdown (or the lease is gone): the try does not count; another worker runs it.
      await whileHeld(doc._id, { $set: { due_at: now, lease_owner: null, lease_until: null, updated_at: now }, $inc: { attempts: -1 } });
      return;
    }
    if (result.ok === "later") {
      // Not a try: the effect waits for something else and is due again then, with its attempts as they were.
      await whileHeld(doc._id, { $set: { due_at: result.until, lease_owner: null, lease_until: null, updated_at: now, last_error: result.reason }, $inc: { attempts: -1 } });
      return;
    }
    await recordAttempt(doc, doc.attempts, result, now.getTime() - started, now);
    await noteDestination(doc, result, now).catch((err: unknown) => log("warn", "destination backoff not recorded", { effect_id: doc._id, error: errorText(err) }));
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

  const count = (map: Map<string, number>, key: string, by: number) => {
    const n = (map.get(key) ?? 0) + by;
    if (n > 0) map.set(key, n);
    else map.delete(key);
  };

  function start(claimed: Claimed): void {
    const { doc } = claimed;
    const controller = new AbortController();
    const account = doc.user_id.toHexString();
    count(runningByAccount, account, 1);
    if (doc.destination) count(runningByDestination, doc.destination, 1);
    const done = run(claimed, controller)
      .catch((err: unknown) => log("error", "effect run failed", { effect_id: doc._id, error: errorText(err) }))
      .finally(() => {
        inFlight.delete(doc._id);
        count(runningByAccount, account, -1);
        if (doc.destination) count(runningByDestination, doc.destination, -1);
        // A free slot: claim the next due effect at once (no relay pass needed for that).
        nudge(false);
      });
    inFlight.set(doc._id, { controller, done });
  }

  async function fill(): Promise<void> {
    while (!stopping && inFlight.size < opts.concurrency) {
      const claimed = await claim();
      if (!claimed) return;
      start(claimed);
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
