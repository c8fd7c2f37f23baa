// The database deadlines of one operation (src/db/connection.ts explains each), and the longest a request can wait on a database that is gone or silent before its 503: the 2 s that docs/guarantees.md promises.

/** How long an operation waits for a reachable server. */
export const SERVER_SELECTION_TIMEOUT_MS = 1200;
/** How long an operation waits for a pool connection, opening one included. */
export const DB_CHECKOUT_TIMEOUT_MS = 700;
/** The default of DB_OPERATION_TIMEOUT_MS (src/app/config.ts): the server-side limit of one operation. */
export const DB_MAX_TIME_MS = 1000;
/** How much longer than that the socket waits for the answer. */
export const SOCKET_AFTER_MAX_TIME_MS = 200;

/**
 * The longest one operation waits on the database before it fails, with `operationTimeoutMs` as
 * DB_OPERATION_TIMEOUT_MS: no server to select, or a connection to check out and then an answer that does not come
 * (the driver's retry is off). 1.9 s with the defaults; a request answers 503 on its first failed operation.
 */
export function databaseDeadlineMs(operationTimeoutMs = DB_MAX_TIME_MS): number {
  return Math.max(SERVER_SELECTION_TIMEOUT_MS, DB_CHECKOUT_TIMEOUT_MS + operationTimeoutMs + SOCKET_AFTER_MAX_TIME_MS);
}
