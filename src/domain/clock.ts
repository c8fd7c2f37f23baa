// The one source of time of the service: `Deps.clock` (src/app/deps.ts) in production reads the system clock; a test server's clock (CLOCK_CONTROL=on) can be moved forward, so tests of reminders, expiry, caches and leases move time instead of waiting for it.

/** What code reads the time from; nothing in src/ reads the wall clock any other way (test/unit/time.test.ts). */
export interface Clock {
  /** The time now. */
  now(): Date;
  /** The time now in milliseconds since the epoch. */
  nowMs(): number;
}

/**
 * The system's clock. For what must follow real time whatever a test did to the service's clock: deadlines of
 * shutdowns and connections, log lines, measured durations. Everything the service decides by (due times, expiry,
 * caches, leases, limits' windows) reads `Deps.clock`.
 */
export const systemClock: Clock = {
  now: () => new Date(),
  nowMs: () => Date.now(),
};

/** A clock that runs with the system's and can be moved forward (never back: due times and leases only ever pass). */
export class MovableClock implements Clock {
  private offsetMs = 0;
  private readonly moved = new Set<() => void>();

  now(): Date {
    return new Date(this.nowMs());
  }

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  /** Moves the clock `ms` forward and tells whoever waits on time (`onMove`), so what became due happens at once. */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError("a clock moves forward only");
    this.offsetMs += ms;
    for (const listener of this.moved) listener();
  }

  /** How far ahead of the system clock this clock is. */
  get aheadMs(): number {
    return this.offsetMs;
  }

  /** `listener` is called after every move, until the returned function is called. */
  onMove(listener: () => void): () => void {
    this.moved.add(listener);
    return () => this.moved.delete(listener);
  }
}
