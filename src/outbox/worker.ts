// The outbox's loop: on a wake or a poll, relay the changes bookings owe into effects (relay.ts), claim due effects for the free slots (claim.ts), run them (run.ts); stop cleanly.
import { randomBytes } from "node:crypto";
import { errorText, logEvent as log } from "../platform/log.js";
import { claimDue, placeOf, type Claimed } from "./claim.js";
import { createRelay } from "./relay.js";
import { runEffect, type RunContext } from "./run.js";
import { Troubles, Workload } from "./share.js";
import type { EffectKind } from "./types.js";
import type { OutboxWake } from "./wake.js";

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
  const claiming = { owner, leaseMs: opts.leaseMs, kindNames: [...kinds.keys()] };
  const inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  const work = new Workload(opts.perAccount);
  const troubles = new Troubles(opts.retryScale);
  const ctx: RunContext = { owner, leaseMs: opts.leaseMs, retryScale: opts.retryScale, kinds, troubles, onAttempt: opts.onAttempt };
  let stopping = false;
  const relay = createRelay(opts.kinds, troubles, () => stopping);
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
  const unlisten = opts.owed.listen(wake);

  function start(claimed: Claimed): void {
    const { doc } = claimed;
    const controller = new AbortController();
    // Counted as running by the claim.
    const place = placeOf(doc);
    const done = runEffect(ctx, claimed, controller)
      .catch((err: unknown) => log("error", "effect run failed", { effect_id: doc._id, error: errorText(err) }))
      .finally(() => {
        inFlight.delete(doc._id);
        work.end(place);
        // A free slot: claim the next due effect at once (no relay pass needed for that).
        nudge(false);
      });
    inFlight.set(doc._id, { controller, done });
  }

  async function fill(): Promise<void> {
    // Again while a claim took something: the next one reads the accounts and destinations busy now.
    while (!stopping && inFlight.size < opts.concurrency) {
      const claimed = await claimDue(claiming, work, opts.concurrency - inFlight.size);
      if (claimed.length === 0) return;
      for (const c of claimed) start(c);
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
      unlisten();
    },
  };
  return worker;
}
