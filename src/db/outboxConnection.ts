// The outbox's own database connections: request bursts cannot starve the outbox of connections, nor the outbox the requests; and the worker's batched writes get a deadline of their own. connection.ts opens both beside the main one.
import mongoose from "mongoose";

/**
 * The models bound here (effects, effect attempts) use this connection's pool: what requests do with them (a
 * webhook's deliveries, a ping's record, a reminder's planning) and the outbox's reads. Opened by connectDatabase
 * with the main connection's deadlines, except a longer wait for a free connection: an outbox write that waits is
 * better than one that fails and is retried.
 */
export const outboxConnection = mongoose.createConnection();

/**
 * How long the worker's own commands may take before their socket gives up. One batched write into a collection
 * of thousands of documents takes a few hundred milliseconds on the embedded server, more under load, and no
 * request waits on it: cut off at a request's deadline (1.2 s) it failed whole passes, and was then repeated.
 */
export const OUTBOX_WORK_TIMEOUT_MS = 10_000;

let workClient: mongoose.mongo.MongoClient | undefined;
let workDbName: string | undefined;

/** Set by connectDatabase (undefined on close): the client of the worker's own commands. */
export function setOutboxWorkClient(client: mongoose.mongo.MongoClient | undefined, dbName?: string): void {
  workClient = client;
  workDbName = dbName;
}

/** The database of the worker's own commands, on its long-deadline client. */
export function outboxWorkDb(): mongoose.mongo.Db {
  if (!workClient) throw new Error("the database is not connected");
  return workClient.db(workDbName);
}
