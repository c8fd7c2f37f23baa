// Recognises MongoDB's duplicate-key error (E11000), for single writes and for bulk writes alike.
interface DuplicateKeyShape {
  code?: number;
  keyPattern?: Record<string, unknown>;
  message?: string;
  writeErrors?: Array<{ code?: number; err?: { code?: number } }>;
}

const DUPLICATE_KEY = 11000;

/** True when the write failed on a unique index (any of a bulk write's errors counts). */
export function isDuplicateKeyError(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as DuplicateKeyShape;
  return e.code === DUPLICATE_KEY || (e.writeErrors ?? []).some((w) => w.code === DUPLICATE_KEY || w.err?.code === DUPLICATE_KEY);
}

/** True when a single write failed on the unique index that covers `field`. */
export function isDuplicateKey(err: unknown, field: string): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as DuplicateKeyShape;
  return e.code === DUPLICATE_KEY && (e.keyPattern ? field in e.keyPattern : String(e.message).includes(field));
}

/** True when every failure of the write was a duplicate key (an unordered insertMany of effects planned before). */
export function onlyDuplicateKeys(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as DuplicateKeyShape;
  const writeErrors = e.writeErrors ?? [];
  if (writeErrors.length === 0) return e.code === DUPLICATE_KEY;
  return writeErrors.every((w) => w.code === DUPLICATE_KEY || w.err?.code === DUPLICATE_KEY);
}
