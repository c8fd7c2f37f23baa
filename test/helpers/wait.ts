// Waiting for something that happens in the background (an outbox delivery, a health status, a process gone): poll a condition with a deadline, never sleep for it.

export interface UntilOptions<T> {
  /** How long the condition may take before the test fails; default 20 s, generous for a loaded 2-core machine. */
  timeoutMs?: number;
  /** Pause between two looks (default 50 ms); a slow look delays the next one, looks never overlap. */
  everyMs?: number;
  /** When the value read is good enough; without it, any value but undefined, null and false is. */
  accept?: (value: T) => boolean;
  /** Extra words for the failure (what the test saw meanwhile), read only when the deadline has passed. */
  describe?: () => unknown;
}

/**
 * Reads `read` until its value is accepted and returns that value. After `timeoutMs` it fails with
 * "timed out after N ms waiting for <what>", the last value read (with `accept`) and `describe`'s words.
 * An error thrown by `read` fails at once: a read that may fail for a while catches that itself.
 */
export async function until<T>(what: string, read: () => T | Promise<T>, opts: UntilOptions<Awaited<T>> = {}): Promise<Exclude<Awaited<T>, undefined | null | false>> {
  const { timeoutMs = 20_000, everyMs = 50, accept = (v: Awaited<T>) => v !== undefined && v !== null && v !== false } = opts;
  const started = performance.now();
  for (;;) {
    const value = await read();
    if (accept(value)) return value as Exclude<Awaited<T>, undefined | null | false>;
    const waited = performance.now() - started;
    if (waited >= timeoutMs) {
      const last = opts.accept ? `; last read: ${format(value)}` : "";
      const seen = opts.describe ? `; ${format(opts.describe())}` : "";
      throw new Error(`timed out after ${Math.round(waited)} ms waiting for ${what}${last}${seen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(everyMs, timeoutMs - waited)));
  }
}

function format(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return (JSON.stringify(value) ?? String(value)).slice(0, 2000);
  } catch {
    return String(value);
  }
}
