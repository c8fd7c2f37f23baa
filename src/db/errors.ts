// Recognises MongoDB's errors that callers answer differently: a duplicate key (E11000, single and bulk writes) and a database that is not reachable in time.
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

/** MongoDB's code for an operation that ran past its maxTimeMS (src/db/connection.ts). */
const MAX_TIME_MS_EXPIRED = 50;

/**
 * Database errors that mean "not reachable right now", or not within the operation deadlines of
 * src/db/connection.ts (no pool connection in time, no answer in time, the server's own maxTimeMS): 503, never 500.
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (typeof err !== "object" || err === null) return false;
  const name = (err as { name?: string }).name ?? "";
  const message = String((err as { message?: string }).message ?? "");
  const cause = (err as { cause?: unknown }).cause;
  return (
    /^Mongo(ServerSelection|Network|NetworkTimeout|TopologyClosed|NotConnected|PoolCleared|ServerClosed|WaitQueueTimeout)Error$/.test(name) ||
    (err as { code?: unknown }).code === MAX_TIME_MS_EXPIRED ||
    // A bulk write (insertMany of reservation cells) reports a pool checkout timeout under its own name,
    // MongoBulkWriteError, with the checkout's message: under load that was a 500.
    /Client must be connected|connection .* closed|buffering timed out|Timed out while checking out a connection/i.test(message) ||
    (depth < 3 && cause !== err && isDatabaseUnavailable(cause, depth + 1))
  );
}
