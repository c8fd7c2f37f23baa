// The effects this replica holds: their leases renewed together, and what their tries came to written together (a group commit), one command per write whatever the number of effects.
import { setTimeout as sleep } from "node:timers/promises";
import type { Clock } from "../domain/clock.js";
import type { EffectAttemptDoc, EffectDoc } from "../db/models/effect.js";
import { outboxWorkDb } from "../db/outboxConnection.js";
import { errorText, logEvent as log } from "../platform/log.js";
import { insertOnce } from "./batch.js";
import { STORE_RETRY_MS } from "./retry.js";

/** Renewals still waiting for their answer above which the next is skipped (a silent database). */
const RENEWALS_IN_FLIGHT_MAX = 3;

/** One try's end waiting to be written: its attempt record (if it was a try) and whether the effect then goes. */
interface Ending {
  id: string;
  record: EffectAttemptDoc | undefined;
  remove: boolean;
  signal: AbortSignal;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * A try's end is written by one writer per replica: everything queued meanwhile goes in one insertMany of attempt
 * records, then one deleteMany of the effects done. On the embedded server a write command costs the same for one
 * document as for sixteen and they run one after another (src/outbox/batch.ts): a write per try queued them behind
 * each other until whole passes timed out. Each batch is written again and again until stored (the message may
 * have gone out: left to its lease, the effect would be run again, a copy), the leases renewed meanwhile.
 */
export class Holds {
  /** Held effects and what to call if another replica turns out to have one. */
  private readonly held = new Map<string, () => void>();
  private queued: Ending[] = [];
  private writing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private renewals = 0;

  constructor(
    private readonly owner: string,
    private readonly leaseMs: number,
    private readonly clock: Clock,
  ) {
    // Every third of a lease: a slow effect keeps it, a dead replica's runs out.
    this.timer = setInterval(() => void this.renew(), Math.max(50, Math.floor(leaseMs / 3)));
    this.timer.unref();
  }

  /** From its lease on: renewed until let go; `onLost` hears that another replica has it now. */
  hold(id: string, onLost: () => void): void {
    this.held.set(id, onLost);
  }

  letGo(id: string): void {
    this.held.delete(id);
  }

  /**
   * Writes a try's attempt record (if any) and then, if `remove`, deletes the effect (while this replica holds
   * it); resolves once stored. Only `signal` (shutdown) stops the writing: the lease then runs out, and the next
   * replica finds what was stored (record.ts earlierTries).
   */
  end(id: string, record: EffectAttemptDoc | undefined, remove: boolean, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const ending: Ending = { id, record, remove, signal, resolve, reject };
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      this.queued.push(ending);
      this.writing ??= this.write().finally(() => (this.writing = undefined));
    });
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Writes what is queued, batch after batch, until nothing is. */
  private async write(): Promise<void> {
    let wait = STORE_RETRY_MS.first;
    while (this.queued.length > 0) {
      // Given up by shutdown: no longer written.
      const batch = this.queued.filter((e) => !e.signal.aborted);
      this.queued = [];
      try {
        await this.store(batch);
        for (const e of batch) e.resolve();
        wait = STORE_RETRY_MS.first;
      } catch (err) {
        // Again with whatever came meanwhile; a record stored by the failed write is found stored (insertOnce).
        this.queued = [...batch, ...this.queued];
        log("warn", "effect results not stored; writing them again", { effects: batch.length, retry_in_ms: wait, error: errorText(err) });
        await sleep(wait);
        wait = Math.min(wait * 2, STORE_RETRY_MS.max);
      }
    }
  }

  private async store(batch: readonly Ending[]): Promise<void> {
    const db = outboxWorkDb();
    const records = batch.flatMap((e) => (e.record ? [e.record] : []));
    if (records.length > 0) await insertOnce(db.collection<EffectAttemptDoc>("effect_attempts"), records);
    // Stored: not written again if the delete fails.
    for (const e of batch) e.record = undefined;
    const gone = batch.filter((e) => e.remove).map((e) => e.id);
    // _id index; only while held here (another replica's lease is not ours to end).
    if (gone.length > 0) await db.collection<EffectDoc>("effects").deleteMany({ _id: { $in: gone }, lease_owner: this.owner });
  }

  /** One write renews every lease held here; those another replica has taken meanwhile are told so. */
  private async renew(): Promise<void> {
    const ids = [...this.held.keys()];
    if (ids.length === 0 || this.renewals >= RENEWALS_IN_FLIGHT_MAX) return;
    this.renewals++;
    try {
      const effects = outboxWorkDb().collection<EffectDoc>("effects");
      const leaseEnd = new Date(this.clock.nowMs() + this.leaseMs);
      // _id index. The lease is due_at itself: when it runs out unrenewed, the effect is due again.
      const r = await effects.updateMany({ _id: { $in: ids }, lease_owner: this.owner }, { $set: { due_at: leaseEnd, lease_until: leaseEnd } });
      if (r.matchedCount >= ids.length) return;
      const still = new Set((await effects.find({ _id: { $in: ids }, lease_owner: this.owner }, { projection: { _id: 1 } }).toArray()).map((d) => d._id));
      for (const id of ids) if (!still.has(id)) this.held.get(id)?.();
    } catch (err) {
      // The next renewal tries again, within the lease.
      log("warn", "effect leases not renewed", { effects: ids.length, error: errorText(err) });
    } finally {
      this.renewals--;
    }
  }
}
