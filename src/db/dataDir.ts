// DATA_DIR: the folder that keeps the embedded database's data (and the API key secret) across restarts, with a lock so one service uses it at a time.
import { systemClock } from "../domain/clock.js";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statfsSync, writeSync } from "node:fs";
import { join } from "node:path";
import mongoose from "mongoose";

const { BSON } = mongoose.mongo;
type Db = mongoose.mongo.Db;
type MongoClient = mongoose.mongo.MongoClient;

const LOCK_FILE = "lock";
const SECRET_FILE = "api-key-secret";
const SNAPSHOT_FILE = "data.bson";
const FORMAT = "scheduling-dev-data";
const FORMAT_VERSION = 1;
/** extensions.md "Running": written at every stop and at most this often while the data changes. */
export const SAVE_EVERY_MS = 5000;
/**
 * Room a save needs besides the copy it replaces (a new copy is written whole before the old one goes): the copy's
 * size again plus this share of it and this many bytes, for what changes before the next save.
 */
const ROOM_GROWTH = 0.25;
const ROOM_SPARE_BYTES = 256 * 1024;
/**
 * Below the file-size limit of the process (`ulimit -f`), what the next copy may grow by besides the changes
 * counted since the last save: the writes of requests let through the gate and not yet done. At most a quarter
 * of a small limit, so that one still takes writes.
 */
const FILE_LIMIT_SPARE_BYTES = 32 * 1024;
/** Documents per insert when loading: large enough to be quick, small enough to answer well within a deadline. */
const LOAD_BATCH = 200;

/*
 * Whether a command changed data. Every command the service's clients send passes the driver's command monitoring,
 * so a save is due exactly when one changed something since the last one, whichever code sent it. What matched
 * nothing is no change: the outbox's claims poll with findAndModify every second and mostly find nothing. Indexes
 * are rebuilt from the models at every start, so building them is none either. (Not commitTransaction: a
 * transaction's writes are these commands themselves, and the saver's own snapshot read ends with a commit.)
 */
function changedData(commandName: string, reply: Record<string, unknown> | undefined): boolean {
  const count = (v: unknown) => (typeof v === "number" ? v : Number(v ?? 0));
  switch (commandName) {
    case "insert":
    case "update":
    case "delete":
      return count(reply?.n) > 0;
    case "findAndModify":
      return count((reply?.lastErrorObject as Record<string, unknown> | undefined)?.n) > 0 || (reply?.value ?? null) !== null;
    case "drop":
    case "dropDatabase":
      return true;
    default:
      return false;
  }
}

/** A folder that another live service holds (extensions.md: it refuses to start, saying which process), or that cannot be written. */
export class DataDirError extends Error {}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The holder's pid, or undefined when the lock is gone or unreadable. */
function holderOf(lockPath: string): number | undefined {
  try {
    const pid = Number(readFileSync(lockPath, "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the folder for this process: creates it, then the lock file holding our pid (created exclusively, so of
 * two services starting at once one wins). A lock whose process is gone (killed, crashed) is taken over.
 */
function claim(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new DataDirError(`DATA_DIR ${dir} cannot be made (${(err as NodeJS.ErrnoException).code ?? String(err)}); set DATA_DIR to a writable folder, or to none to keep nothing`);
  }
  const lockPath = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(lockPath, "wx", 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "EEXIST") throw new DataDirError(`DATA_DIR ${dir} cannot be written (${code ?? String(err)}); set DATA_DIR to a writable folder, or to none to keep nothing`);
    }
    const holder = holderOf(lockPath);
    if (holder !== undefined && holder !== process.pid && isAlive(holder)) {
      throw new DataDirError(
        `DATA_DIR ${dir} is in use by process ${holder}; stop it first, or start this one with another DATA_DIR (or DATA_DIR=none to keep nothing)`,
      );
    }
    rmSync(lockPath, { force: true });
  }
  throw new DataDirError(`DATA_DIR ${dir}: could not take its lock file ${lockPath}`);
}

/** Lets the folder go: removes the lock if it is still this process's. */
function release(dir: string, log: (msg: string) => void): void {
  try {
    if (holderOf(join(dir, LOCK_FILE)) === process.pid) rmSync(join(dir, LOCK_FILE), { force: true });
  } catch (err) {
    // A folder that cannot be written cannot lose its lock either; the failed save, if any, is what to say.
    log(`the lock file of DATA_DIR ${dir} could not be removed (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

/**
 * Writes `bytes` to `path` so that a crash leaves the old file or the new one, never half of one; a write that
 * fails (a full disk: ENOSPC, a file-size limit: EFBIG, the folder removed) leaves the old file whole and takes its
 * temporary file away.
 */
function writeAtomically(path: string, chunks: readonly Uint8Array[], mode = 0o600): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    const fd = openSync(tmp, "w", mode);
    try {
      for (const chunk of chunks) writeSync(fd, chunk);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Why a save failed, in words an operator can act on: the error's code and what it means. */
function saveError(dir: string, err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const words: Record<string, string> = {
    ENOSPC: "no space left on the device",
    EDQUOT: "the disk quota is used up",
    EFBIG: "the file is larger than this process may write (ulimit -f)",
    ENOENT: "the folder is gone",
    EACCES: "no permission to write there",
    EPERM: "no permission to write there",
    EROFS: "the file system is read-only",
    EIO: "the device reported an input/output error",
  };
  const what = e.code !== undefined && words[e.code] !== undefined ? `${words[e.code]} (${e.code})` : err instanceof Error ? err.message : String(err);
  return `data cannot be saved to DATA_DIR ${dir}: ${what}`;
}

/** What a snapshot holds: the documents of each collection. */
type Snapshot = Map<string, Record<string, unknown>[]>;

/**
 * The file's first document. `snapshot_at` is when the snapshot's read began: the file holds every change answered
 * before it. Neither `saved_at` nor the file's mtime says that: a save begun before a change and written after its
 * answer does not hold it.
 */
function encode(snapshot: Snapshot, snapshotAt: Date): Uint8Array[] {
  const chunks: Uint8Array[] = [BSON.serialize({ format: FORMAT, version: FORMAT_VERSION, saved_at: systemClock.now(), snapshot_at: snapshotAt })];
  for (const [collection, docs] of snapshot) for (const doc of docs) chunks.push(BSON.serialize({ c: collection, d: doc }));
  return chunks;
}

/** The file as written by `encode`: BSON documents one after another (each starts with its length). */
function decode(bytes: Buffer, path: string): Snapshot {
  const snapshot: Snapshot = new Map();
  // Values stay as the BSON types they were (Int32, Long, Double, Binary), so a document is written back as it was.
  const exact = { promoteValues: false, promoteLongs: false, promoteBuffers: false } as const;
  let offset = 0;
  let first = true;
  while (offset < bytes.length) {
    const size = bytes.readInt32LE(offset);
    if (size < 5 || offset + size > bytes.length) throw new Error(`${path} is cut short at byte ${offset}; move it away to start empty`);
    const doc = BSON.deserialize(bytes.subarray(offset, offset + size), exact);
    offset += size;
    if (first) {
      if (String(doc.format) !== FORMAT) throw new Error(`${path} is not a data file of this service`);
      first = false;
      continue;
    }
    const name = String(doc.c);
    let docs = snapshot.get(name);
    if (docs === undefined) snapshot.set(name, (docs = []));
    docs.push(doc.d as Record<string, unknown>);
  }
  return snapshot;
}

/** Every document of `collections`, read in one snapshot transaction so the collections agree with each other. */
async function readAll(client: MongoClient, db: Db, collections: readonly string[]): Promise<Snapshot> {
  const session = client.startSession();
  try {
    const snapshot: Snapshot = new Map();
    await session.withTransaction(
      async () => {
        snapshot.clear();
        for (const name of collections) snapshot.set(name, await db.collection(name).find({}, { session }).toArray());
      },
      { readConcern: { level: "snapshot" } },
    );
    return snapshot;
  } finally {
    await session.endSession();
  }
}

/** The API key secret kept in the folder, made on first use (for when API_KEY_SECRET is not set). */
function keptSecret(dir: string): Buffer {
  const path = join(dir, SECRET_FILE);
  try {
    const hex = readFileSync(path, "utf8").trim();
    if (/^[0-9a-f]{64}$/i.test(hex)) return Buffer.from(hex, "hex");
    throw new Error(`${path} must hold 64 hex characters`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const key = randomBytes(32);
  writeAtomically(path, [Buffer.from(`${key.toString("hex")}\n`)]);
  return key;
}

/**
 * A folder removed and made again while the service runs holds neither its lock nor the API key secret; a save
 * writes both back before the data: without the lock a second service could take the folder, and without the
 * secret a restart would make a new one that cannot read the stored API keys (GET /user failed for a valid key).
 * A folder another live service has taken meanwhile is not ours to write: the save fails, naming it.
 */
function restoreFolder(dir: string, secret: Buffer | undefined): void {
  const lockPath = join(dir, LOCK_FILE);
  const holder = holderOf(lockPath);
  if (holder !== process.pid) {
    if (holder !== undefined && isAlive(holder)) throw new Error(`the folder was made again and is in use by process ${holder}`);
    writeAtomically(lockPath, [Buffer.from(`${process.pid}\n`)]);
  }
  const secretPath = join(dir, SECRET_FILE);
  if (secret !== undefined && !existsSync(secretPath)) writeAtomically(secretPath, [Buffer.from(`${secret.toString("hex")}\n`)]);
}

/** Loads the saved copy at `path`, if any, into the fresh database: how many documents, and the copy's size. */
async function loadSnapshot(db: Db, path: string): Promise<{ loaded: number; bytes: number }> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    return { loaded: 0, bytes: 0 };
  }
  let loaded = 0;
  for (const [name, docs] of decode(bytes, path)) {
    for (let i = 0; i < docs.length; i += LOAD_BATCH) await db.collection(name).insertMany(docs.slice(i, i + LOAD_BATCH), { ordered: true });
    loaded += docs.length;
  }
  return { loaded, bytes: bytes.byteLength };
}

/** The largest file this process may write (RLIMIT_FSIZE, `ulimit -f`), from /proc/self/limits; Infinity where unlimited or unknown. */
function fileSizeLimit(): number {
  try {
    const line = readFileSync("/proc/self/limits", "utf8").split("\n").find((l) => l.startsWith("Max file size"));
    const soft = line?.slice("Max file size".length).trim().split(/\s+/)[0];
    return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : Infinity;
  } catch {
    return Infinity;
  }
}

/**
 * Whether the next save has room: on the folder's file system (checked after each save and every SAVE_EVERY_MS)
 * and under the process's file-size limit. The next copy is reckoned as the last one plus every change since
 * (`changed`: the size of each data-changing command, an upper bound of what it added), so a disk that fills (by
 * our writes or anyone's) or a copy that would pass the limit is seen before a save meets it, and no write is
 * confirmed that the next save could not keep. A removed folder only shows when a save fails.
 */
class RoomWatch {
  /** The size of the last copy written. */
  private lastSize = 0;
  /** Bytes the data may have grown by since the snapshot of the last copy was read. */
  private pending = 0;
  /** Free bytes on the folder's file system when last measured; undefined before (or when it cannot be). */
  private free: number | undefined;
  private readonly fileLimit = fileSizeLimit();
  /** The problem last logged, so each start and end of one is said once. */
  private said: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly dir: string,
    private readonly log: (msg: string) => void,
  ) {}

  /** A copy of `size` bytes was written, holding the `heldChanges` bytes counted before its read began; checks now, and every SAVE_EVERY_MS from then on. */
  watch(size: number, heldChanges = 0): void {
    this.lastSize = size;
    this.pending = Math.max(0, this.pending - heldChanges);
    this.measure();
    if (this.timer) return;
    this.timer = setInterval(() => this.measure(), SAVE_EVERY_MS);
    this.timer.unref();
  }

  /** The data may have grown by `bytes`. */
  changed(bytes: number): void {
    this.pending += bytes;
  }

  /** What has been counted so far, for a save about to read the data: it will hold those changes. */
  counted(): number {
    return this.pending;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Why the next save would fail for want of room, or undefined; writes are refused while it says so. */
  problem(): string | undefined {
    const next = this.lastSize + this.pending;
    let problem: string | undefined;
    if (next + Math.min(FILE_LIMIT_SPARE_BYTES, this.fileLimit / 4) > this.fileLimit) {
      problem = `data cannot be saved to DATA_DIR ${this.dir}: the next copy (about ${next} bytes) would pass the largest file this process may write (${this.fileLimit} bytes, ulimit -f) (EFBIG)`;
    } else if (this.free !== undefined) {
      const needed = Math.ceil(next * (1 + ROOM_GROWTH)) + ROOM_SPARE_BYTES;
      if (this.free < needed) problem = `data cannot be saved to DATA_DIR ${this.dir}: the disk is nearly full (${this.free} bytes free, the next save needs about ${needed}) (ENOSPC)`;
    }
    if (problem !== undefined && this.said === undefined) this.log(`${problem}; writes are refused (503) until there is room`);
    if (problem === undefined && this.said !== undefined) this.log(`there is room in ${this.dir} again; writes are taken again`);
    this.said = problem;
    return problem;
  }

  private measure(): void {
    try {
      const fs = statfsSync(this.dir);
      this.free = fs.bavail * fs.bsize;
    } catch {
      // The folder is gone: the save will say so.
    }
    this.problem();
  }
}

/** The write commands whose size bounds what they add to the data: an update's per document it changed. */
const GROWING_COMMANDS: ReadonlySet<string> = new Set(["insert", "update", "findAndModify"]);
/** What a copy adds around each document (encode's `{c, d}`), beyond a collection name of up to this size. */
const COPY_WRAPPING_BYTES = 96;

export interface KeptData {
  /** The folder, absolute. */
  dir: string;
  /** The API key secret kept in the folder (made on first use), for when API_KEY_SECRET is not set. */
  secret(): Buffer;
  /**
   * Loads the saved documents into the fresh database `dbName` through `via`, then saves (reading through `via`)
   * whenever a command of one of `watched` changed data, at most every SAVE_EVERY_MS. `via` should be a client
   * with a long socket deadline: a whole collection is read or written at once. Returns how many documents were loaded.
   */
  attach(watched: readonly MongoClient[], via: MongoClient, dbName: string, collections: readonly string[]): Promise<number>;
  /**
   * Why the data cannot be kept now (the last save failed: a full disk, the folder removed or not writable), in
   * words naming the cause; undefined while saves succeed. Writes are refused meanwhile (extensions.md "Running").
   */
  problem(): string | undefined;
  /** A last save (when anything changed), then the folder is let go; DataDirError when that save failed (the changes since the last good one are lost). */
  close(): Promise<void>;
}

/** Takes DATA_DIR for this process (DataDirError when another live service holds it). */
export function openDataDir(dir: string, log: (msg: string) => void): KeptData {
  claim(dir);
  let dirty = false;
  /** The next save, once one is due. */
  let timer: NodeJS.Timeout | undefined;
  let saving: Promise<void> | undefined;
  let save: (() => Promise<void>) | undefined;
  /** When the last save began (performance.now()): saves begin at most every SAVE_EVERY_MS. */
  let lastStart = -Infinity;
  let closed = false;
  /** Why the last save failed, until one succeeds again. */
  let failure: string | undefined;
  const room = new RoomWatch(dir, log);
  /** When the file last took every change (for the message of a stop whose save failed). */
  let lastGood: Date | undefined;

  /*
   * A change schedules a save: at once when none began in the last SAVE_EVERY_MS, else when that much time has
   * passed since the last one began. `dirty` is cleared as a save begins, so a change answered while a save is
   * being read or written (which that save may not hold) sets it again, and the save is followed by another as
   * soon as the cadence allows: a change waits at most SAVE_EVERY_MS (or the save in progress, if longer), never for
   * a second tick because the first found a save still running. A save that failed is tried again the same way.
   */
  const schedule = (): void => {
    if (timer || saving || closed || !save) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        void saveIfDirty();
      },
      Math.max(0, lastStart + SAVE_EVERY_MS - performance.now()),
    );
    timer.unref();
  };

  const saveIfDirty = (): Promise<void> => {
    if (saving) return saving;
    if (!dirty || !save) return Promise.resolve();
    dirty = false;
    lastStart = performance.now();
    saving = save()
      .then(() => {
        if (failure !== undefined) log(`the data is saved to ${dir} again; writes are taken again`);
        failure = undefined;
      })
      .catch((err: unknown) => {
        dirty = true;
        failure = saveError(dir, err);
        log(`${failure}; writes are refused (503) until a save succeeds, trying again every ${SAVE_EVERY_MS / 1000} s`);
      })
      .finally(() => {
        saving = undefined;
        if (dirty) schedule();
      });
    return saving;
  };

  /** The folder's API key secret, once read (restoreFolder writes it back into a folder made again). */
  let secret: Buffer | undefined;

  return {
    dir,
    secret: () => (secret ??= keptSecret(dir)),

    async attach(watched, via, dbName, collections) {
      const db = via.db(dbName);
      const path = join(dir, SNAPSHOT_FILE);
      const { loaded, bytes } = await loadSnapshot(db, path);
      // Loading itself is no change to keep.
      dirty = false;
      for (const client of new Set([...watched, via])) {
        /** The size of each write command in flight on this client, by its request id, until its reply says whether it changed data. */
        const sizes = new Map<number, number>();
        client.on("commandStarted", (e) => {
          if (!GROWING_COMMANDS.has(e.commandName)) return;
          // Each document a copy holds is wrapped with its collection's name (encode), which an insert's array entry is not.
          const documents = Array.isArray(e.command.documents) ? e.command.documents.length : 1;
          sizes.set(e.requestId, BSON.calculateObjectSize(e.command) + documents * COPY_WRAPPING_BYTES);
        });
        client.on("commandFailed", (e) => sizes.delete(e.requestId));
        client.on("commandSucceeded", (e) => {
          const size = sizes.get(e.requestId);
          sizes.delete(e.requestId);
          const reply = e.reply as Record<string, unknown> | undefined;
          if (!changedData(e.commandName, reply)) return;
          // An update may set its fields on every document it matched.
          if (size !== undefined) room.changed(size * (e.commandName === "update" ? Math.max(1, Number(reply?.n ?? 1)) : 1));
          dirty = true;
          schedule();
        });
      }
      save = async () => {
        const snapshotAt = systemClock.now();
        const held = room.counted();
        const chunks = encode(await readAll(via, db, collections), snapshotAt);
        restoreFolder(dir, secret);
        writeAtomically(path, chunks);
        lastGood = snapshotAt;
        room.watch(chunks.reduce((n, c) => n + c.byteLength, 0), held);
      };
      room.watch(bytes);
      return loaded;
    },

    problem: () => failure ?? room.problem(),

    async close() {
      closed = true;
      clearTimeout(timer);
      room.stop();
      await saving;
      await saveIfDirty();
      release(dir, log);
      if (failure !== undefined) {
        const since = lastGood === undefined ? "since the service started" : `since ${lastGood.toISOString()}`;
        throw new DataDirError(`${failure}: the last save at stop failed, so the changes ${since} are lost; ${join(dir, SNAPSHOT_FILE)} holds the last good copy`);
      }
    },
  };
}
