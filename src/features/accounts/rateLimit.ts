// Fixed-window rate limits that every replica shares through MongoDB; local leases spare most requests the database trip.
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
    private readonly now: () => number = Date.now,
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

/**
 * Callers already admitted in the current fixed window (one `rate_limits` document each, `count` 1), so a limit can
 * count each caller of a window once however often they come back: the bookers one address booked with one host
 * this hour (Access.limitNewBookerOf). Marked only once admitted, so a refused caller is not let in by trying again.
 */
export class AdmittedThisWindow {
  constructor(
    private readonly scope: string,
    private readonly windowSeconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  private id(caller: string): { id: string; end: number } {
    const windowMs = this.windowSeconds * 1000;
    const start = Math.floor(this.now() / windowMs) * windowMs;
    return { id: `${this.scope}:${caller}:${start}`, end: start + windowMs };
  }

  async has(caller: string): Promise<boolean> {
    // _id index.
    return (await RateLimitModel.exists({ _id: this.id(caller).id })) !== null;
  }

  async mark(caller: string): Promise<void> {
    const { id, end } = this.id(caller);
    // _id index; a second replica marking the same caller at once changes nothing.
    await RateLimitModel.updateOne({ _id: id }, { $setOnInsert: { count: 1, expires_at: new Date(end + 60_000) } }, { upsert: true }).catch((err: unknown) => {
      if (!isDuplicateKeyError(err)) throw err;
    });
  }
}
