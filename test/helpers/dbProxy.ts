// A TCP proxy between the service and its database (MongoDB wire protocol) that can apply a write and drop its answer, or drop every answer for a while: the "outcome unknown" faults of issue 29.
import net from "node:net";
import mongoose from "mongoose";
import { startDatabase, type TestDatabase } from "./jongodb.js";
import { startServer, type RunningServer } from "./server.js";

/**
 * What the proxy read of one command the service sent: its name ("insert", "commitTransaction", ...), its collection,
 * its session (so a fault can pick the commit of one request's transaction, not whatever commits first), and its
 * documents (an insert's, an update's `updates`: in the body or in a document sequence, as the driver chose).
 */
export interface SeenCommand {
  name: string;
  collection: string | undefined;
  /** The logical session's id as hex; undefined for a command outside any session. */
  session: string | undefined;
  /** The command document itself (a find's `filter`, `projection`). */
  body: Record<string, unknown>;
  /** The documents it carries: `documents` of an insert, `updates` of an update, `deletes` of a delete. */
  items: Record<string, unknown>[];
}

/** What a failed command's answer says. */
interface ServerError {
  code: number;
  codeName: string;
  errmsg: string;
}

export interface DbProxy {
  /** For MONGODB_URI: the database's URI with the proxy's address. */
  uri: string;
  /**
   * The next command matching `pick` reaches the database and is applied, but its answer never comes back; every
   * answer on any connection is then dropped for `silentMs` more (0: only that one), so a check right after it
   * gets no answer either. Resolves when that command went through.
   */
  dropAnswerOf(pick: (c: SeenCommand) => boolean, silentMs?: number): Promise<SeenCommand>;
  /**
   * The next command matching `pick` is answered with this server error (say code 50, MaxTimeMSExpired: a database
   * too slow to answer in time). `applied`: it reaches the database first and is applied, only its answer is
   * replaced (a commit that timed out waiting, whose outcome the driver cannot know); else it never reaches it.
   * Resolves when that command came.
   */
  failNext(pick: (c: SeenCommand) => boolean, error: ServerError, opts?: { applied?: boolean }): Promise<SeenCommand>;
  /**
   * The next command matching `pick` waits in the proxy until `release()`, then goes on to the database: a write
   * held between the read it was made from and its landing, while the test makes another land first. `held`
   * resolves when it came. Released with an `error`, it never reaches the database and is answered with that error.
   */
  holdNext(pick: (c: SeenCommand) => boolean): { held: Promise<SeenCommand>; release(error?: ServerError): void };
  /**
   * From now on the database works on one command at a time, each taking at least `ms` (0: as it comes, the
   * default): a database saturated by a loaded machine, where commands wait in line behind each other. Handshakes
   * and heartbeats (hello) pass at once, as the driver's monitor needs them.
   */
  serialize(ms: number): void;
  /** Every command the service sent so far, in order (how many round trips a piece of work took). */
  commands(): readonly SeenCommand[];
  close(): Promise<void>;
}

const OP_MSG = 2013;
const OP_REPLY = 1;
const HEADER = 16;

/** Splits a byte stream into whole wire messages (each starts with its int32 length). */
function messages(onMessage: (msg: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 4) {
      const length = pending.readInt32LE(0);
      if (pending.length < length) return;
      onMessage(pending.subarray(0, length));
      pending = pending.subarray(length);
    }
  };
}

/** The command of an OP_MSG (its body section, kind 0, and any document sequences, kind 1); undefined for anything else. */
function commandOf(msg: Buffer): SeenCommand | undefined {
  if (msg.readInt32LE(12) !== OP_MSG) return undefined;
  const bson = mongoose.mongo.BSON;
  let body: Record<string, unknown> | undefined;
  const items: Record<string, unknown>[] = [];
  // The flag bits: a trailing checksum (bit 0) is not a section.
  const end = msg.length - (msg.readUInt32LE(HEADER) & 1 ? 4 : 0);
  let at = HEADER + 4;
  while (at < end) {
    const kind = msg[at];
    at += 1;
    const size = msg.readInt32LE(at);
    if (kind === 0) body = bson.deserialize(msg.subarray(at, at + size));
    else {
      // A sequence: its size, its identifier (a C string), then documents up to its end.
      let doc = msg.indexOf(0, at + 4) + 1;
      while (doc < at + size) {
        const docSize = msg.readInt32LE(doc);
        items.push(bson.deserialize(msg.subarray(doc, doc + docSize)));
        doc += docSize;
      }
    }
    at += size;
  }
  if (!body) return undefined;
  const name = Object.keys(body)[0];
  for (const field of ["documents", "updates", "deletes"]) if (Array.isArray(body[field])) items.push(...(body[field] as Record<string, unknown>[]));
  const lsid = body.lsid as { id?: { toString(encoding: "hex"): string } } | undefined;
  return { name, collection: typeof body[name] === "string" ? body[name] : undefined, session: lsid?.id?.toString("hex"), body, items };
}

/**
 * An OP_MSG answer whose body names the database's own address (a hello answer: `hosts`, `me`, `primary`) with the
 * proxy's instead, so the driver, which connects to the replica set members it is told of, stays behind the proxy.
 */
function renamed(msg: Buffer, from: string, to: string): Buffer {
  if (!msg.includes(from)) return msg;
  // The body document: after the flags and the section kind (OP_MSG), or after flags, cursor id, start and count
  // (OP_REPLY, the answer to the legacy hello of a new connection).
  const opCode = msg.readInt32LE(12);
  const at = opCode === OP_MSG && msg[HEADER + 4] === 0 ? HEADER + 5 : opCode === OP_REPLY ? HEADER + 20 : -1;
  if (at < 0) return msg;
  const bson = mongoose.mongo.BSON;
  const size = msg.readInt32LE(at);
  const doc = bson.deserialize(msg.subarray(at, at + size));
  const swap = (v: unknown): unknown => (v === from ? to : Array.isArray(v) ? v.map(swap) : v);
  for (const key of Object.keys(doc)) doc[key] = swap(doc[key]);
  const body = bson.serialize(doc);
  const out = Buffer.concat([msg.subarray(0, at), body, msg.subarray(at + size)]);
  out.writeInt32LE(out.length, 0);
  return out;
}

/** An OP_MSG answer to request `responseTo`: the command failed with `error`. */
function errorAnswer(responseTo: number, error: ServerError): Buffer {
  const body = mongoose.mongo.BSON.serialize({ ok: 0, ...error });
  const header = Buffer.alloc(HEADER + 5);
  header.writeInt32LE(HEADER + 5 + body.length, 0);
  header.writeInt32LE(0x7fff0000 + (responseTo & 0xffff), 4);
  header.writeInt32LE(responseTo, 8);
  header.writeInt32LE(OP_MSG, 12);
  // flags 0, then section kind 0: the body.
  return Buffer.concat([header, body]);
}

/** `databaseUri`: the database's own address (mongodb://host:port/db?...). */
export async function startDbProxy(databaseUri: string): Promise<DbProxy> {
  const target = new URL(databaseUri);
  const dbName = target.pathname.replace(/^\//, "") || "test";
  const sockets = new Set<net.Socket>();
  let armed: { pick: (c: SeenCommand) => boolean; silentMs: number; hit: (c: SeenCommand) => void } | undefined;
  let silentUntil = 0;
  let failing: { pick: (c: SeenCommand) => boolean; error: ServerError; applied: boolean; hit: (c: SeenCommand) => void } | undefined;
  let holding: { pick: (c: SeenCommand) => boolean; hit: (c: SeenCommand) => void; released: Promise<ServerError | undefined> } | undefined;
  let port = 0;
  const seen: SeenCommand[] = [];
  let serialMs = 0;
  /** The line of commands waiting for a saturated database (serialize), each a start of its turn. */
  const line: (() => void)[] = [];
  let busy = false;
  const nextTurn = () => {
    const turn = line.shift();
    busy = turn !== undefined;
    turn?.();
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    /** Request ids whose answers are dropped on this connection. */
    const dropped = new Set<number>();
    /** Request ids whose answers are replaced by an error on this connection. */
    const replaced = new Map<number, ServerError>();
    /** Request ids in their turn (serialize): when the turn began, for the answer to end it. */
    const inTurn = new Map<number, number>();
    const forward = (msg: Buffer, command: SeenCommand | undefined) => {
      if (serialMs === 0 || !command || /^(hello|ismaster|isMaster)$/.test(command.name)) {
        upstream.write(msg);
        return;
      }
      line.push(() => {
        // A connection closed while it waited (the driver gave up on it): its command is never sent.
        if (upstream.destroyed) return nextTurn();
        inTurn.set(msg.readInt32LE(4), Date.now());
        upstream.write(msg);
      });
      if (!busy) nextTurn();
    };
    client.on(
      "data",
      messages((msg) => {
        const command = commandOf(msg);
        if (command) seen.push(command);
        if (failing && command && failing.pick(command)) {
          const { error, applied, hit } = failing;
          failing = undefined;
          hit(command);
          if (!applied) {
            client.write(errorAnswer(msg.readInt32LE(4), error));
            return;
          }
          replaced.set(msg.readInt32LE(4), error);
        }
        if (armed && command && armed.pick(command)) {
          const { silentMs, hit } = armed;
          armed = undefined;
          dropped.add(msg.readInt32LE(4));
          silentUntil = Date.now() + silentMs;
          hit(command);
        }
        if (holding && command && holding.pick(command)) {
          const { hit, released } = holding;
          holding = undefined;
          hit(command);
          // The driver sends nothing more on this connection until it is answered: nothing overtakes it here.
          void released.then((error) => (error ? client.write(errorAnswer(msg.readInt32LE(4), error)) : forward(msg, command)));
          return;
        }
        forward(msg, command);
      }),
    );
    upstream.on(
      "data",
      messages((msg) => {
        const answerTo = msg.readInt32LE(8);
        const began = inTurn.get(answerTo);
        if (began !== undefined) {
          inTurn.delete(answerTo);
          // The answer comes when the turn is over, and the next command's turn begins then.
          setTimeout(() => {
            deliver(msg, answerTo);
            nextTurn();
          }, Math.max(0, began + serialMs - Date.now()));
          return;
        }
        deliver(msg, answerTo);
      }),
    );
    const deliver = (msg: Buffer, answerTo: number) => {
      if (dropped.delete(answerTo) || Date.now() < silentUntil) return;
      const error = replaced.get(answerTo);
      if (error) {
        replaced.delete(answerTo);
        client.write(errorAnswer(answerTo, error));
        return;
      }
      client.write(renamed(msg, target.host, `127.0.0.1:${port}`));
    };
    const end = () => {
      // A command in its turn on a connection that closed gets no answer here: the line goes on.
      if (inTurn.size > 0) {
        inTurn.clear();
        nextTurn();
      }
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as net.AddressInfo).port;
  return {
    uri: `mongodb://127.0.0.1:${port}/${dbName}${target.search}`,
    failNext: (pick, error, opts = {}) => new Promise((resolve) => (failing = { pick, error, applied: opts.applied ?? false, hit: resolve })),
    dropAnswerOf: (pick, silentMs = 0) => new Promise((resolve) => (armed = { pick, silentMs, hit: resolve })),
    holdNext: (pick) => {
      let release: (error?: ServerError) => void = () => {};
      const released = new Promise<ServerError | undefined>((resolve) => (release = resolve));
      const held = new Promise<SeenCommand>((resolve) => (holding = { pick, hit: resolve, released }));
      return { held, release };
    },
    serialize: (ms) => {
      serialMs = ms;
    },
    commands: () => seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A service of its own on an embedded database behind the fault proxy, and a connection straight to that database. */
export interface ProxiedService {
  db: TestDatabase;
  proxy: DbProxy;
  server: RunningServer;
  /** The database seen directly, not through the proxy: what the service stored. */
  direct: mongoose.Connection;
  /** Stops the server (SIGKILL), then the connection, the proxy and the database. */
  close(): Promise<void>;
}

/** Starts a database, the proxy before it and a server with `env` on the proxy; the tests of lost answers and racing writes share it. */
export async function startProxiedService(env: Record<string, string> = {}): Promise<ProxiedService> {
  const db = await startDatabase();
  const proxy = await startDbProxy(db.uri);
  const server = await startServer({ MONGODB_URI: proxy.uri, ...env });
  const direct = await mongoose.createConnection(db.uri).asPromise();
  return {
    db,
    proxy,
    server,
    direct,
    async close() {
      await server.stop("SIGKILL");
      await direct.close();
      await proxy.close();
      await db.kill();
    },
  };
}
