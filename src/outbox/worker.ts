// The outbox's loop: on a wake or a poll, relay the changes bookings owe into effects (relay.ts), claim due effects for the free slots (claim.ts), run them (run.ts); stop cleanly.
import { randomBytes } from "node:crypto";
import { errorText, logEvent as log } from "../platform/log.js";
import { claimDue, placeOf, type Claimed } from "./claim.js";
import { createRelay } from "./relay.js";
import { Holds } from "./holds.js";
import { runEffect, type RunContext } from "./run.js";
import { Troubles, Workload } from "./share.js";
import type { EffectKind } from "./types.js";
import type { Clock } from "../domain/clock.js";
import type { OutboxWake } from "./wake.js";

/**
 * The sweeps' pace, on the clock: they take only work left owed for seconds (5 s for host notices, 30 s for the
 * feed), so a sweep every poll (each second) was four of an idle replica's nine database commands a second for
 * nothing; owed work now waits at most this much longer. A moved clock wakes the loop, so tests still see it at once.
 */
const SWEEP_EVERY_MS = 5_000;

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
  /** What writes call when they recorded owed work (`Deps.wake`): the loop looks at once. */
  owed: OutboxWake;
  /** What due times, leases and the sweeps' pace are read against (`Deps.clock`). */
  clock: Clock;
  /**
   * Work owed outside bookings that the relay plans too, each at most once every SWEEP_EVERY_MS (the host's notices
   * a replica recorded and did not plan). Registered by src/app like the kinds; one that throws is logged and called again.
   */
  sweeps?: readonly (() => Promise<void>)[];
}

export interface EffectsWorker {
  /** Look for work now instead of at the next poll. */
  wake(): void;
  /** Stops claiming; work in flight gets `graceMs` to finish, then is aborted and its lease given back. */
  stop(graceMs: number): Promise<void>;
}

export function startEffectsWorker(opts: EffectsWorkerOptions): EffectsWorker {
  const owner = `${process.pid}-${randomBytes(6).toString("hex")}`;
  const kinds = new Map(opts.kinds.map((k) => [k.name, k]));
  const inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  const work = new Workload(opts.perAccount);
  const troubles = new Troubles(opts.retryScale);
  const holds = new Holds(owner, opts.leaseMs, opts.clock);
  const claimOpts = { owner, leaseMs: opts.leaseMs, kindNames: [...kinds.keys()], troubles, clock: opts.clock };
  const ctx: RunContext = { owner, leaseMs: opts.leaseMs, retryScale: opts.retryScale, kinds, troubles, holds, clock: opts.clock, onAttempt: opts.onAttempt };
  /** Effects whose try is running (or whose failure is being written): what EFFECTS_CONCURRENCY bounds. */
  let trying = 0;
  let stopping = false;
  const relay = createRelay(opts.kinds, troubles, () => stopping, opts.clock);
  const relaying = pause();
  const claiming = pause();
  /** A write recorded owed work: relay it, and claim (it may have planned effects itself). */
  const wake = () => {
    relaying.poke();
    claiming.poke();
  };
  const unlisten = opts.owed.listen(wake);

  function start(claimed: Claimed): void {
    const { doc } = claimed;
    const controller = new AbortController();
    // Counted as running by the claim.
    const place = placeOf(doc);
    let slot = true;
    // A free slot: claim the next due effect at once (no relay pass needed for that).
    const freeSlot = () => {
      if (!slot) return;
      slot = false;
      trying--;
      work.end(place);
      claiming.poke();
    };
    trying++;
    // The slot (and the account's share, the destination) is free once a try went well: writing its end is the
    // replica's writer's work (holds.ts), and waiting for it kept the next message of that destination waiting.
    const done = runEffect(ctx, claimed, controller, freeSlot)
      .catch((err: unknown) => log("error", "effect run failed", { effect_id: doc._id, error: errorText(err) }))
      .finally(() => {
        inFlight.delete(doc._id);
        freeSlot();
      });
    inFlight.set(doc._id, { controller, done });
  }

  async function fill(): Promise<void> {
    // Again while a claim took something: the next one reads the accounts and destinations busy now.
    while (!stopping && trying < opts.concurrency) {
      const claimed = await claimDue(claimOpts, work, opts.concurrency - trying);
      if (claimed.length === 0) return;
      for (const c of claimed) start(c);
    }
  }

  // Two loops: planning waits on the reads of every kind (through the requests' pool, slow under a burst), and
  // deliveries must not wait behind a relay pass, nor a relay pass behind a claim.
  let sweepAt = 0;
  const sweep = async () => {
    if (opts.clock.nowMs() < sweepAt) return;
    sweepAt = opts.clock.nowMs() + Math.max(opts.pollMs, SWEEP_EVERY_MS);
    for (const s of opts.sweeps ?? []) {
      try {
        await s();
      } catch (err) {
        log("warn", "outbox sweep failed", { error: errorText(err) });
      }
    }
  };
  const relayLoop = (async () => {
    while (!stopping) {
      let more = false;
      try {
        const pass = await relay();
        more = pass.full;
        // Its effects are due now. A pass that planned none leaves the claim loop to its own poll: waking it after
        // every idle pass doubled an idle replica's claim queries.
        if (pass.planned > 0) claiming.poke();
      } catch (err) {
        // The database may be away for a moment; the next poll tries again.
        log("warn", "relay pass failed", { error: errorText(err) });
      }
      await sweep();
      if (!more && !stopping) await relaying.wait(opts.pollMs);
    }
  })();
  const claimLoop = (async () => {
    while (!stopping) {
      try {
        await fill();
      } catch (err) {
        log("warn", "effects pass failed", { error: errorText(err) });
      }
      if (!stopping) await claiming.wait(opts.pollMs);
    }
  })();
  const loop = Promise.all([relayLoop, claimLoop]);

  const worker: EffectsWorker = {
    wake,
    async stop(graceMs) {
      stopping = true;
      wake();
      await loop;
      const all = () => Promise.all([...inFlight.values()].map((f) => f.done));
      const timedOut = await Promise.race([all().then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref())]);
      if (timedOut) {
        for (const f of inFlight.values()) f.controller.abort(new Error("shutting down"));
        await all();
      }
      holds.stop();
      unlisten();
    },
  };
  return worker;
}

/** A loop's pause: until poked or `ms` passed. A poke while the loop is busy ends its next pause at once. */
function pause(): { poke(): void; wait(ms: number): Promise<void> } {
  let poked = false;
  let end: (() => void) | undefined;
  return {
    poke() {
      poked = true;
      end?.();
    },
    wait(ms) {
      if (poked) {
        poked = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => end?.(), ms);
        end = () => {
          clearTimeout(timer);
          end = undefined;
          poked = false;
          resolve();
        };
      });
    },
  };
}
