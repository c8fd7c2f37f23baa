// Fixed-window rate limits that every replica shares through MongoDB; local leases spare most requests the database trip.
import mongoose from "mongoose";
import { isDuplicateKeyError } from "../../db/errors.js";
import { RateLimitModel, type RateLimitDoc } from "../../db/models/rateLimit.js";

export interface LimitRule {
  /** Requests per window and caller; 0 switches the limit off. */
  limit: number;
  windowSeconds: number;
}

export type Verdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

const ALLOWED: Verdict = Object.freeze({ allowed: true });

interface WindowState {
  window: number;
  /** Requests this replica reserved in the database and has not used yet. */
  granted: number;
  /** Every request of the window has been handed out, to this replica or another. */
  exhausted: boolean;
  reserving: Promise<void> | null;
}

/** Requests reserved per database trip: 5% of the limit, at least 1 (a small limit stays exact), at most 1000. */
function leaseSize(limit: number): number {
  return Math.max(1, Math.min(1000, Math.floor(limit / 20)));
}

/**
 * One limit (per API key, or per client address) over fixed windows.
 *
 * The count of a caller's window lives in one `rate_limits` document. A replica does not write every request:
 * it reserves a lease of several requests with one atomic `$inc` and hands them out locally until they are used
 * up, then reserves again. The database total is what all replicas reserved, so the callers of all replicas
 * together never get more than `limit` requests a window. A lease a replica has not used by the window's end is
 * lost, so with R replicas a caller spread over all of them may be refused up to (R - 1) * lease requests early
 * (5% of the limit each): stricter, never looser.
 */
export class RateLimiter {
  private readonly states = new Map<string, WindowState>();
  private sweptWindow = 0;

  constructor(
    private readonly scope: string,
    private readonly rule: LimitRule,
    /** The time now in ms (`Deps.clock`): windows begin and end by it. */
    private readonly now: () => number,
  ) {}

  get enabled(): boolean {
    return this.rule.limit > 0;
  }

  /**
   * Counts one request. Answers at once (no promise) while this replica holds unused requests of the caller's
   * current window, which is nearly always: a promise and its await would cost the common case more than the
   * counting itself.
   */
  consume(caller: string): Verdict | Promise<Verdict> {
    if (!this.enabled) return ALLOWED;
    const state = this.states.get(caller);
    if (state !== undefined && state.granted > 0 && state.window === Math.floor(this.now() / (this.rule.windowSeconds * 1000))) {
      state.granted--;
      return ALLOWED;
    }
    return this.consumeSlow(caller);
  }

  private async consumeSlow(caller: string): Promise<Verdict> {
    const windowMs = this.rule.windowSeconds * 1000;
    for (;;) {
      const now = this.now();
      const window = Math.floor(now / windowMs);
      this.sweep(window);
      let state = this.states.get(caller);
      if (!state || state.window !== window) {
        state = { window, granted: 0, exhausted: false, reserving: null };
        this.states.set(caller, state);
      }
      if (state.granted > 0) {
        state.granted--;
        return ALLOWED;
      }
      if (state.exhausted) return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000)) };
      // Callers waiting at once share one reservation.
      const current = state;
      current.reserving ??= this.reserve(caller, current, windowMs).finally(() => {
        current.reserving = null;
      });
      await current.reserving;
    }
  }

  private async reserve(caller: string, state: WindowState, windowMs: number): Promise<void> {
    const lease = leaseSize(this.rule.limit);
    const start = state.window * windowMs;
    const id = `${this.scope}:${caller}:${start}`;
    let doc: RateLimitDoc | null = null;
    // Two replicas creating the same window's document at once: the loser's upsert fails once, then increments.
    for (let attempt = 0; doc === null; attempt++) {
      try {
        doc = await RateLimitModel.findOneAndUpdate(
          { _id: id },
          { $inc: { count: lease }, $setOnInsert: { expires_at: new Date(start + windowMs + 60_000) } },
          { upsert: true, returnDocument: "after" },
        ).lean<RateLimitDoc>();
      } catch (err) {
        if (attempt > 0 || !isDuplicateKeyError(err)) throw err;
      }
    }
    const over = Math.max(0, doc.count - this.rule.limit);
    state.granted += Math.max(0, lease - over);
    if (doc.count >= this.rule.limit) state.exhausted = true;
  }

  /** Forgets callers of past windows, once per window. */
  private sweep(window: number): void {
    if (window === this.sweptWindow) return;
    this.sweptWindow = window;
    for (const [caller, state] of this.states) if (state.window < window) this.states.delete(caller);
  }
}

/** How long a request waits for another of the same caller that is being admitted at that moment, and how often it looks. */
const ADMISSION_WAIT_MS = 2_000;
const ADMISSION_POLL_MS = 25;

type Admission = { _id: string; state?: "pending" | "admitted" | "refused" };

/**
 * At most `limit` different callers per group and fixed window, each counted once however often it comes back or
 * races itself, across replicas: the bookers one client address books with one host an hour
 * (Access.limitNewBookerOf). A caller's first request of the window takes its mark (one `rate_limits` document,
 * unique `_id`: of the same caller's racing requests exactly one does), then counts the group's window with a
 * conditional increment (never past the limit) and writes the verdict on the mark; the caller's other requests read
 * the mark and wait for that verdict. A caller refused stays refused for the window, without being counted again.
 */
export class DistinctInWindow {
  constructor(
    private readonly scope: string,
    private readonly rule: LimitRule,
    /** The time now in ms (`Deps.clock`): windows begin and end by it. */
    private readonly now: () => number,
  ) {}

  get enabled(): boolean {
    return this.rule.limit > 0;
  }

  async admit(group: string, caller: string): Promise<Verdict> {
    if (!this.enabled) return ALLOWED;
    const windowMs = this.rule.windowSeconds * 1000;
    const now = this.now();
    const start = Math.floor(now / windowMs) * windowMs;
    const expires_at = new Date(start + windowMs + 60_000);
    const refused: Verdict = { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((start + windowMs - now) / 1000)) };
    const mark = `${this.scope}:${group}:${caller}:${start}`;
    try {
      await RateLimitModel.collection.insertOne({ _id: mark, count: 0, state: "pending", expires_at } as never);
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      return (await this.verdictOf(mark)) === "admitted" ? ALLOWED : refused;
    }
    let counted: boolean;
    try {
      counted = await this.count(`${this.scope}:${group}:${start}`, expires_at);
      // _id index.
      await RateLimitModel.updateOne({ _id: mark }, { $set: { state: counted ? "admitted" : "refused" } });
    } catch (err) {
      // A database error between the two writes (a 503 to this request) must not leave the mark pending: the
      // caller's retry would find it and be refused as a new person past the cap (CI's full run under load). The
      // mark goes, so the retry is judged afresh; if the count was taken, it is taken again (stricter, never looser).
      // _id index.
      await RateLimitModel.deleteOne({ _id: mark, state: "pending" }).catch(() => undefined);
      throw err;
    }
    return counted ? ALLOWED : refused;
  }

  /** One more caller in the group's window unless it holds `limit` already (a conditional $inc; its upsert makes the first). */
  private async count(id: string, expires_at: Date): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        // _id index; matches only while the count is under the limit. updateOne, not findOneAndUpdate: the embedded
        // server's findAndModify drops the condition when it writes, and racing callers passed a full window (src/db/takeOnce.ts).
        const counted = await RateLimitModel.updateOne(
          { _id: id, count: mongoose.trusted({ $lt: this.rule.limit }) },
          { $inc: { count: 1 }, $setOnInsert: { expires_at } },
          { upsert: true },
        );
        return counted.matchedCount + counted.upsertedCount === 1;
      } catch (err) {
        // The upsert met the document: another replica made it a moment ago (try again), or it is full.
        if (!isDuplicateKeyError(err)) throw err;
        if (attempt > 0) return false;
      }
    }
  }

  /** The verdict another request of the same caller wrote on its mark, waiting a little while it is being made. */
  private async verdictOf(mark: string): Promise<"admitted" | "refused"> {
    const until = this.now() + ADMISSION_WAIT_MS;
    for (;;) {
      // _id index.
      const found = await RateLimitModel.findById(mark, { state: 1 }).lean<Admission>();
      const state = found?.state;
      if (state === "admitted" || state === "refused") return state;
      // A mark left pending (its request died between the two writes) refuses, as a full window would: rare, and stricter.
      if (this.now() >= until) return "refused";
      await new Promise((resolve) => setTimeout(resolve, ADMISSION_POLL_MS));
    }
  }
}
