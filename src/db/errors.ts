// Recognises MongoDB's errors that callers answer differently: a duplicate key (E11000, single and bulk writes), a database that is not reachable in time, transient conflicts worth a retry, and writes whose outcome is unknown.
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

/**
 * MongoDB's codes for "not within the deadline" or "not reachable": an operation past its maxTimeMS (50; src/db/
 * connection.ts), a write concern not confirmed in time (64, wtimeout), a network timeout, an unreachable or
 * unknown host, a socket error between servers (89, 6, 7, 9001).
 */
const UNAVAILABLE_CODES: ReadonlySet<number> = new Set([6, 7, 50, 64, 89, 9001]);

/**
 * Every code an error carries: its own, each write error's of a bulk write, and its write concern error's, wherever
 * the driver keeps it (MongoBulkWriteError keeps a write concern error as `err`, the server's answer as
 * `errorResponse`, MongoWriteConcernError as `result.writeConcernError`): a bulk write whose insert timed out or
 * whose write concern was not confirmed has no code of its own.
 */
function codesOf(err: object): number[] {
  const e = err as {
    code?: unknown;
    writeErrors?: unknown;
    err?: { code?: unknown };
    writeConcernError?: { code?: unknown };
    errorResponse?: { writeConcernError?: { code?: unknown }; writeErrors?: unknown };
    result?: { writeConcernError?: { code?: unknown }; getWriteConcernError?: () => { code?: unknown } | undefined };
  };
  const writeErrors = [...(Array.isArray(e.writeErrors) ? e.writeErrors : []), ...(Array.isArray(e.errorResponse?.writeErrors) ? e.errorResponse.writeErrors : [])] as Array<{ code?: unknown; err?: { code?: unknown } }>;
  let bulkConcern: unknown;
  try {
    bulkConcern = typeof e.result?.getWriteConcernError === "function" ? e.result.getWriteConcernError()?.code : undefined;
  } catch {
    bulkConcern = undefined;
  }
  const all = [e.code, ...writeErrors.map((w) => w.code ?? w.err?.code), e.err?.code, e.writeConcernError?.code, e.errorResponse?.writeConcernError?.code, e.result?.writeConcernError?.code, bulkConcern];
  return all.filter((c): c is number => typeof c === "number");
}

/** Node's codes for a socket the other side closed or reset. */
const SOCKET_GONE: ReadonlySet<string> = new Set(["EPIPE", "ECONNRESET"]);

/**
 * A stack frame of the driver's connection code: by its file, or by its methods' names where a bundle (esbuild, as
 * the tests run the service: test/helpers/server.ts) puts the driver in one file and names the class `_Connection`.
 * A write ECONNRESET whose stack named only the bundle's file was a 500 in a full run (test/api/faults.test.ts).
 */
const DRIVER_CONNECTION_FRAME = /[\\/]mongodb[\\/]lib[\\/]cmap[\\/]|\bat (?:async )?_?Connection\.(?:writeCommand|sendWire|sendCommand) \(/;

/**
 * Node's own error for a command written to a connection the database had just closed ("This socket has been ended
 * by the other party", EPIPE). The driver (7.x) awaits the socket's drain and lets that error through unwrapped,
 * not as a MongoNetworkError: a GET /user in flight when the database died was a 500 (test/api/faults.test.ts). Only
 * from the driver's connection code: the same code from anything else is not the database's.
 */
function isDriverSocketGone(err: object): boolean {
  const { code, stack } = err as { code?: unknown; stack?: unknown };
  return typeof code === "string" && SOCKET_GONE.has(code) && DRIVER_CONNECTION_FRAME.test(String(stack ?? ""));
}

/** The driver's PoolClearedOnNetworkError (not exported): operations in flight when a heartbeat timed out and the pool was cleared. */
const INTERRUPTED = "PoolClearedOnNetworkError";

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
    isDriverSocketGone(err) ||
    // Mongoose wraps some under its own name (MongooseServerSelectionError).
    /^Mongo(ose)?(ServerSelection|Network|NetworkTimeout|TopologyClosed|NotConnected|PoolCleared|ServerClosed|WaitQueueTimeout)Error$/.test(name) ||
    // The pool's error for connections interrupted when the monitor lost the server, named without the prefix.
    name === INTERRUPTED ||
    codesOf(err).some((c) => UNAVAILABLE_CODES.has(c)) ||
    // A bulk write (insertMany of reservation cells, of effects) reports a driver error under its own name,
    // MongoBulkWriteError, with only the message of what it wraps (a pool checkout timeout, a connection closed or
    // timed out, no server selected in time): under load each was a 500.
    /Client must be connected|connection .* (closed|timed out)|buffering timed out|Timed out while checking out a connection|interrupted due to server monitor timeout/i.test(message) ||
    (/^Mongo/.test(name) && /timed out|ECONNREFUSED|ECONNRESET|EPIPE/i.test(message)) ||
    (depth < 3 && cause !== err && isDatabaseUnavailable(cause, depth + 1))
  );
}

/** Seconds a caller is told to wait (Retry-After) after a 503 for an unreachable database or a transient conflict. */
export const DATABASE_RETRY_AFTER_SECONDS = 1;

/*
 * MongoDB's codes for failures that are over when the operation is tried again: a write conflict between two
 * transactions (112), a transaction the server no longer knows or aborted (251), a lock or time limit hit while
 * waiting (24, 262), an election or shutdown under way (91, 189, 10107, 11600, 11602, 13435, 13436).
 */
const TRANSIENT_CODES: ReadonlySet<number> = new Set([24, 91, 112, 189, 251, 262, 10107, 11600, 11602, 13435, 13436]);
const TRANSIENT_LABELS = ["TransientTransactionError", "UnknownTransactionCommitResult", "RetryableWriteError"];

/**
 * Database errors that are over when the whole operation (a transaction) is tried again: a write conflict, a
 * transaction still in progress on the session or aborted under it, an unknown commit result, an election. MongoDB
 * marks most with an error label; the embedded server sends none and says it in words ("transaction already in
 * progress for this session", "commit transaction write conflict"), also inside a bulk write's error. Where a
 * retry is not safe they answer 503 with Retry-After, never 500.
 */
export function isTransientDatabaseError(err: unknown, depth = 0): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { code?: unknown; codeName?: unknown; message?: unknown; errorLabels?: unknown; errorLabelSet?: unknown; writeErrors?: unknown; cause?: unknown; errorResponse?: unknown };
  const labels = [...(Array.isArray(e.errorLabels) ? e.errorLabels : []), ...(e.errorLabelSet instanceof Set ? [...e.errorLabelSet] : [])];
  const message = String(e.message ?? "");
  const writeErrors = Array.isArray(e.writeErrors) ? (e.writeErrors as Array<{ errmsg?: unknown; err?: { errmsg?: unknown } }>) : [];
  return (
    labels.some((l) => TRANSIENT_LABELS.includes(String(l))) ||
    codesOf(err).some((c) => TRANSIENT_CODES.has(c)) ||
    e.codeName === "WriteConflict" ||
    /write ?conflict|transaction (is )?already in progress|no such transaction|transaction .*(aborted|has been aborted)/i.test(message) ||
    writeErrors.some((w) => /write ?conflict|transaction (is )?already in progress/i.test(String(w.errmsg ?? w.err?.errmsg ?? ""))) ||
    (depth < 3 && e.cause !== err && isTransientDatabaseError(e.cause, depth + 1))
  );
}

/**
 * After a write failed: whether it may have been applied all the same, only its answer lost: a network error or
 * timeout once the command was sent, a commit whose result is unknown, a write concern not confirmed. A write the
 * server answered with an error was not applied, nor one never sent (no server or no pool connection in time), nor
 * one an error of ours stopped before it was sent. Such a write is neither done nor undone: whoever made it keeps
 * what guards it (a booking's reservation cells) until it is known.
 */
export function mayHaveBeenApplied(err: unknown, depth = 0): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { name?: unknown; errorLabels?: unknown; errorLabelSet?: unknown; cause?: unknown };
  const labels = [...(Array.isArray(e.errorLabels) ? e.errorLabels : []), ...(e.errorLabelSet instanceof Set ? [...e.errorLabelSet] : [])];
  return (
    labels.includes("UnknownTransactionCommitResult") ||
    /^Mongo(ose)?(Network|NetworkTimeout|WriteConcern)Error$/.test(String(e.name ?? "")) ||
    // Interrupted while in use: the command may have left.
    e.name === INTERRUPTED ||
    // The socket went while the command was being written (a reset may come after part or all of it left).
    isDriverSocketGone(err) ||
    (depth < 3 && e.cause !== err && mayHaveBeenApplied(e.cause, depth + 1))
  );
}
