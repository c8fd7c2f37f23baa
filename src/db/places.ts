// Caps of "at most N per owner" that hold under racing creates: each document takes one of N places under a unique index, so the database itself refuses one too many.
import { isDuplicateKeyError } from "./errors.js";

/** The places 0 to count - 1 that `held` does not name, in order. */
export function freePlaces(held: Iterable<number>, count: number): number[] {
  const taken = new Set(held);
  return Array.from({ length: count }, (_, place) => place).filter((place) => !taken.has(place));
}

/**
 * Inserts into one of the free places `readFree` finds, reading them again after each duplicate-key refusal (a
 * racing create took that place a moment ago); null once none is free. A random free place spares racing creates
 * from all wanting the same one. Each refusal means a place was taken since the read, so `attempts` (the cap)
 * refusals in a row mean the places keep changing under us, and the create is refused rather than looping.
 */
export async function insertInFreePlace<T>(readFree: () => Promise<number[]>, attempts: number, insert: (place: number) => Promise<T>): Promise<T | null> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const free = await readFree();
    if (free.length === 0) return null;
    const place = free[Math.floor(Math.random() * free.length)];
    try {
      return await insert(place);
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  }
  return null;
}
