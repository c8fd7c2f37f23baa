// When a failed effect is tried again (pure): the default schedule, jitter that only ever lengthens a wait, giving up, and how long a failing destination rests.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * The outbox's default waits between tries: the first retry well within 30 s (a blip), then further apart, 33 h
 * in all, so an outside system that is down for a day is still caught up with. A kind may give its own.
 */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [15 * SECOND, 1 * MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 12 * HOUR, 12 * HOUR];

/**
 * The waits between writes of what a try came to (a result, a batch of them) that the database did not take: the
 * first, doubled after each failure up to the last. Short, since the message may already have gone out.
 */
export const STORE_RETRY_MS: { readonly first: number; readonly max: number } = { first: 100, max: 2000 };

/** At most this share is added to a wait, so retries of many effects that failed together spread out. */
export const JITTER = 0.1;

/**
 * The wait before the next try after attempt number `attempt` (1-based) failed, or undefined when that was the
 * last try. Jitter only adds (0..JITTER of the wait), so every wait is at least the schedule's: "at least 5 s,
 * 5 min, ..." promises stay true. `scale` shrinks every wait (EFFECTS_RETRY_SCALE, for tests).
 */
export function retryDelayMs(schedule: readonly number[], attempt: number, random: number, scale = 1): number | undefined {
  if (attempt < 1 || attempt > schedule.length) return undefined;
  const base = schedule[attempt - 1] * scale;
  return Math.round(base * (1 + JITTER * Math.min(Math.max(random, 0), 1)));
}

/** How many tries a schedule allows: the first one and one per wait. */
export function maxAttempts(schedule: readonly number[]): number {
  return schedule.length + 1;
}

/** The first pause of a destination that failed, and the longest: doubled per failure in a row in between. */
const DESTINATION_PAUSE_MS = { first: 30 * SECOND, max: 30 * MINUTE };

/**
 * How long a destination's untried effects wait after its `failures`-th failure in a row (1-based): 30 s, 1 min,
 * 2 min, ... up to 30 min. The failed effect itself keeps its own schedule (its first retry stays within 30 s).
 */
export function destinationPauseMs(failures: number, scale = 1): number {
  const n = Math.max(1, Math.min(failures, 32));
  return Math.min(DESTINATION_PAUSE_MS.first * 2 ** (n - 1), DESTINATION_PAUSE_MS.max) * scale;
}
