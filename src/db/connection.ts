// Connects Mongoose to MONGODB_URI or to the embedded server, and builds every collection's indexes.
import mongoose from "mongoose";
import { SAVE_EVERY_MS, type KeptData } from "./dataDir.js";
import { startEmbedded, type EmbeddedServer } from "./embedded.js";
import { allModels, replacedIndexes } from "./models/index.js";
import { isDatabaseUnavailable } from "./errors.js";
import { DB_CHECKOUT_TIMEOUT_MS, DB_MAX_TIME_MS, SERVER_SELECTION_TIMEOUT_MS, SOCKET_AFTER_MAX_TIME_MS } from "./deadlines.js";
import { OUTBOX_WORK_TIMEOUT_MS, outboxConnection, setOutboxWorkClient } from "./outboxConnection.js";

export interface Database {
  uri: string;
  embedded: EmbeddedServer | undefined;
  close(): Promise<void>;
}

// The embedded server has no `create` command; collections appear on first insert or createIndexes.
mongoose.set("autoCreate", false);
mongoose.set("autoIndex", false);
// Second guard against operator injection: `$`-keys in a filter are neutralised unless the code wraps the
// operator object in mongoose.trusted({ $gte: ... }), which it does only for operators it wrote itself.
mongoose.set("sanitizeFilter", true);
mongoose.set("strictQuery", true);
// While the database is unreachable a request must fail fast (503 within 2 s), not wait in Mongoose's queue
// (bufferTimeoutMS, 10 s) for a connection that may not come back: operations go straight to the driver.
mongoose.set("bufferCommands", false);

/*
 * SERVER_SELECTION_TIMEOUT_MS (1200, src/db/deadlines.ts): how long an operation waits for a reachable server
 * before it fails (503). Low enough that a request answers within 2 s when the database is gone; a replica-set
 * election takes longer, and answering 503 during one is what clients can retry on. At start the connection is
 * retried for longer (START_TIMEOUT_MS).
 */

/*
 * Selection alone does not bound an operation: a server that is still "known" but stopped answering (a frozen
 * process, a full disk, a network path that drops packets) keeps an operation on its socket until the next
 * heartbeat fails, 9-10 s later. Every operation therefore has three deadlines, so 503 comes within 2 s
 * whatever the database does (the driver has no whole-operation timeout since timeoutMS was removed in 7.x):
 * - waiting for a pool connection, including opening a new one to a server that does not answer its
 *   handshake: DB_CHECKOUT_TIMEOUT_MS (waitQueueTimeoutMS);
 * - waiting for the answer on the socket: DB_MAX_TIME_MS + 200 ms (socketTimeoutMS; the connection is closed);
 * - the server itself gives up on a query after DB_MAX_TIME_MS (maxTimeMS), before the socket deadline, so a
 *   slow but live server stops the work too and the connection is kept.
 * Checkout and answer together stay within 2 s, and the driver's one retry is off (below). Nothing this service
 * asks of its database takes longer than a few milliseconds when the database is well; an answer later than
 * this is treated as the database being unwell.
 */
// DB_CHECKOUT_TIMEOUT_MS = 700, DB_MAX_TIME_MS = 1000 (the default of DB_OPERATION_TIMEOUT_MS, src/app/config.ts),
// SOCKET_AFTER_MAX_TIME_MS = 200: src/db/deadlines.ts, where databaseDeadlineMs adds them up (faults.test.ts uses it).
const START_TIMEOUT_MS = 15_000;
/**
 * The outbox's pool (src/db/outboxConnection.ts): its claims, renewals, attempt records and relay writes, a few at
 * a time, wait up to OUTBOX_CHECKOUT_TIMEOUT_MS for a connection instead of failing at the requests' 700 ms.
 */
const OUTBOX_POOL_SIZE = 8;
const OUTBOX_CHECKOUT_TIMEOUT_MS = 10_000;

function isServerSelectionError(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === "MongoServerSelectionError" || name === "MongooseServerSelectionError";
}

/**
 * The deadline of one write that is long on purpose: the admin import's transaction (up to 1 000 bookings). On
 * MongoDB it takes milliseconds; the embedded server spends time in proportion to the collection on every write
 * (about 20 s for 1 000 bookings at 10 000, measured), and an import cut off by the normal deadline would leave
 * its outcome unknown. Only the import uses it, on a client of its own (two connections), so no request of anyone
 * else waits this long.
 */
const BULK_WRITE_TIMEOUT_MS = 60_000;
let bulkClient: mongoose.mongo.MongoClient | undefined;

/** The client for writes that may take up to BULK_WRITE_TIMEOUT_MS (connected with the database at start). */
export function bulkWriteClient(): mongoose.mongo.MongoClient {
  if (!bulkClient) throw new Error("the database is not connected");
  return bulkClient;
}

let commitKeepsOthers = true;

/**
 * Whether the commit of a transaction that writes a collection keeps what other clients wrote to it meanwhile.
 * MongoDB's does. jongodb's (0.1.6: the embedded server, and whatever MONGODB_URI names that says it is jongodb in
 * buildInfo) puts the collection back as the transaction saw it: measured with the driver alone, 94-142 of ~520
 * inserts beside a transaction were lost in 10 s, and 3-4 of 7 writes beside a 1 000-booking import
 * (bench/RESULTS.md, "A reschedule without a transaction"). A flow that writes a shared collection in a transaction
 * asks this first. Known once connected.
 */
export function transactionsKeepConcurrentWrites(): boolean {
  return commitKeepsOthers;
}

/**
 * `operationTimeoutMs` is DB_MAX_TIME_MS unless DB_OPERATION_TIMEOUT_MS says otherwise: only for a database known
 * to be slow on purpose (the embedded server holding tens of thousands of bookings, in bench/bookings.ts).
 */
export async function connectDatabase(
  mongodbUri: string | undefined,
  log: (msg: string) => void,
  operationTimeoutMs = DB_MAX_TIME_MS,
  kept: KeptData | undefined = undefined,
): Promise<Database> {
  mongoose.set("maxTimeMS", operationTimeoutMs);
  let embedded: EmbeddedServer | undefined;
  let uri = mongodbUri;
  if (!uri) {
    embedded = await startEmbedded("scheduling");
    uri = embedded.uri;
    const keeping = kept
      ? `its data is kept in ${kept.dir} (DATA_DIR; loaded at start, saved at every stop and every ${SAVE_EVERY_MS / 1000} s while it changes; DATA_DIR=none keeps nothing)`
      : "all data is lost when the service stops (DATA_DIR=none)";
    // The figures are bench:embedded's (docs/operations.md, "What the embedded database is for").
    log(
      `MONGODB_URI is not set: using the embedded in-memory database at ${uri}; ${keeping}. ` +
        "It is for development and tests: its writes slow down as collections grow (a booking takes about 0.1 s at 2 000 bookings, " +
        "about 1 s at 5 000, past the database deadline beyond that), so it stays comfortable up to about 2 000 bookings; use MongoDB for more",
    );
  }
  // DATA_DIR's saver learns of every write from the driver's command events.
  const keep = embedded !== undefined ? kept : undefined;
  const options = {
    serverSelectionTimeoutMS: SERVER_SELECTION_TIMEOUT_MS,
    connectTimeoutMS: 2000,
    socketTimeoutMS: operationTimeoutMs + SOCKET_AFTER_MAX_TIME_MS,
    waitQueueTimeoutMS: DB_CHECKOUT_TIMEOUT_MS,
    // A read or write that failed on the network is retried once by default, with its own deadlines again: 2.4 s
    // to the 503 (measured). Off, a failure answers at once and the caller retries, as during an election.
    retryReads: false,
    retryWrites: false,
    maxPoolSize: 20,
    // The embedded server does not speak the streaming (exhaust) heartbeat: with it the driver marks the
    // server down two seconds after connecting. Polling heartbeats work on both.
    ...(embedded ? { serverMonitoringMode: "poll" as const } : {}),
    ...(keep ? { monitorCommands: true } : {}),
  };
  // A database that starts together with the service (compose, k8s) may need a few seconds: up to
  // START_TIMEOUT_MS from here, as the docs promise (guarantees.md, "When the database is unreachable").
  const giveUp = performance.now() + START_TIMEOUT_MS;
  for (;;) {
    try {
      await mongoose.connect(uri, options);
      break;
    } catch (err) {
      // Only "no server reachable" is worth waiting for; a malformed URI or bad credentials are not. Mongoose
      // reports it under its own name (MongooseServerSelectionError), the driver under MongoServerSelectionError:
      // checking the driver's name alone gave up at the first failure, 1.2 s in.
      const left = giveUp - performance.now();
      if (left <= 0 || !isServerSelectionError(err)) throw err;
      log(`database not reachable yet (${err instanceof Error ? err.message : String(err)}); retrying for ${Math.ceil(left / 1000)} s more`);
      // Each try waits SERVER_SELECTION_TIMEOUT_MS for a server (a refused connection too), so no pause is needed.
      await mongoose.disconnect().catch(() => undefined);
    }
  }
  // Its own pool: under a burst of requests the outbox's writes queued behind theirs in one pool and timed out on
  // checkout (bench:outbox), and a try whose result was not written was run again. mongoose.disconnect closes it.
  await outboxConnection.openUri(uri, { ...options, maxPoolSize: OUTBOX_POOL_SIZE, waitQueueTimeoutMS: OUTBOX_CHECKOUT_TIMEOUT_MS });
  // The worker's batched writes (src/db/outboxConnection.ts): connects on its first use.
  const workClient = new mongoose.mongo.MongoClient(uri, { ...options, socketTimeoutMS: OUTBOX_WORK_TIMEOUT_MS, maxPoolSize: OUTBOX_POOL_SIZE, waitQueueTimeoutMS: OUTBOX_CHECKOUT_TIMEOUT_MS });
  setOutboxWorkClient(workClient, outboxConnection.db?.databaseName);
  // Connects on its first use.
  bulkClient = new mongoose.mongo.MongoClient(uri, { ...options, socketTimeoutMS: BULK_WRITE_TIMEOUT_MS + SOCKET_AFTER_MAX_TIME_MS, maxPoolSize: 2 });
  if (keep && mongoose.connection.db) {
    const collections = allModels.map((m) => m.collection.collectionName);
    // Through the bulk client: loading or reading a whole collection may take longer than a request's deadline.
    const loaded = await keep.attach([mongoose.connection.getClient(), outboxConnection.getClient(), workClient], bulkClient, mongoose.connection.db.databaseName, collections);
    log(`loaded ${loaded} documents from ${keep.dir} (DATA_DIR)`);
  }
  // One model after another, each tried again while the database cannot be reached in time. All at once, under
  // load, the embedded server was slow to open the twenty pool connections they asked for, and builds waited past
  // the checkout deadline (DB_CHECKOUT_TIMEOUT_MS, meant for requests): start-up failed with "Timed out while
  // checking out a connection". One at a time they need one connection, and take milliseconds each.
  for (const model of allModels) {
    for (;;) {
      try {
        await model.createIndexes();
        break;
      } catch (err) {
        const left = giveUp - performance.now();
        if (left <= 0 || !isDatabaseUnavailable(err)) throw err;
        log(`database not ready for its indexes yet (${err instanceof Error ? err.message : String(err)}); retrying for ${Math.ceil(left / 1000)} s more`);
      }
    }
  }
  await dropReplacedIndexes(log);
  // The first command on a new pool connection is slow on the embedded server; pay it before serving.
  await mongoose.connection.db?.command({ ping: 1 });
  // A server that does not answer buildInfo is taken for MongoDB (the import keeps its transaction) rather than failing the start.
  const built = await mongoose.connection.db?.admin().buildInfo().catch(() => undefined);
  commitKeepsOthers = !(built?.gitVersion === "jongodb" || String(built?.version).endsWith("-jongodb"));
  return {
    uri,
    embedded,
    async close() {
      // The last save needs the database, so it comes first; the folder is let go even if it fails, and the
      // failure is told after the database is closed (the stop then exits non-zero, saying what was lost).
      const saved = keep ? keep.close().then(() => undefined, (err: unknown) => err) : undefined;
      const notSaved = await saved;
      await Promise.all([mongoose.disconnect(), bulkClient?.close(), workClient.close()]);
      bulkClient = undefined;
      setOutboxWorkClient(undefined);
      if (embedded) await embedded.stop();
      if (notSaved !== undefined) throw notSaved;
    },
  };
}

/** Whether the database answers a ping within `timeoutMs` (health check, metrics). */
export async function databaseUp(timeoutMs = 1000): Promise<boolean> {
  const db = mongoose.connection.db;
  if (!db) return false;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      db.command({ ping: 1 }).then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Drops the indexes others replace (models/index.ts replacedIndexes) where an earlier version made them; their
 * replacements are built first. The embedded server has no dropIndexes (its indexes live as long as its process,
 * and a DATA_DIR start builds them afresh): there an old index is named for the operator and left.
 */
async function dropReplacedIndexes(log: (msg: string) => void): Promise<void> {
  const db = mongoose.connection.db;
  if (!db) return;
  for (const { collection, name } of replacedIndexes) {
    const present = await db.collection(collection).listIndexes().toArray().catch(() => []);
    if (!present.some((ix) => ix.name === name)) continue;
    try {
      await db.collection(collection).dropIndex(name);
    } catch (err) {
      if ((err as { code?: number }).code !== COMMAND_NOT_FOUND && !/no such command/i.test(String(err))) throw err;
      log(`the index ${name} of ${collection} is replaced (docs/operations.md, Sharding) but this database cannot drop it; drop it by hand`);
    }
  }
}

/** The server's answer to a command it does not have. */
const COMMAND_NOT_FOUND = 59;
