// What public slots are computed from, kept per process under per-account stamps: one _id read per request tells whether anything changed, on any replica.
import type { Clock } from "../domain/clock.js";
import mongoose from "mongoose";
import { AccountVersionModel } from "./models/accountVersion.js";
import { readOncePerTurn } from "./sharedRead.js";

/*
 * Why. Every visitor of a booking page asks for slots, and each answer was computed from the host, the event, the
 * host's confirmed bookings of the range and the calendars that check for conflicts: four queries, each a scan on
 * the embedded server (it has no secondary indexes), the bookings growing with the host. They change far less often
 * than they are read, so a process keeps what it read, and asks the database only "has anything changed?": one _id
 * read of the account's stamps.
 *
 * Freshness. Every write to what slots read replaces a stamp of the account after the write (`accountChanged`,
 * awaited before the write answers); a read uses a kept value only when it was read under the stamps as read at
 * most `leaseMs` before the request began (`since`), and after this process's last write to the account. So a
 * request sees every write that answered `leaseMs` before it began on any replica, and every write of its own
 * replica that answered before it began, as a direct read would. `leaseMs` is ACCOUNT_CACHE_MS (100 ms, at most
 * 1 s), the bound the account cache keeps too; with 0 every request reads the stamps after it began. One reading
 * serves every request of its lease: a request's several reads of one account cost one round trip at most, and
 * the requests of a moment share it. Two parts, so that a booking does not throw away the host and its events:
 * `settings` (the account, its events, schedules and calendars) and `bookings` (its confirmed bookings). A value
 * is also read again once it is `maxAgeMs` old whatever the stamp says: a write made around the service (a
 * script, a migration) or one whose process died between the write and its stamp is seen by then.
 *
 * Sharing. Readers asking for the same value under the same stamp share one read (its promise); a failed read is
 * forgotten at once. At most MAX_WEIGHT documents are kept (a list counts its length), least recently used first out.
 */

export type AccountPart = "settings" | "bookings";

const MAX_WEIGHT = 100_000;
const NEVER_CHANGED = "none";
/** Accounts whose last reading of the stamps, or last write here, is remembered; the maps start afresh when full. */
const STAMPS_KEPT = 10_000;

type Stamps = Record<AccountPart, string>;

/** When this process last changed each account's stamps (performance.now(), once written): its own reads must come after. */
const changedHere = new Map<string, number>();

/** Marks `part` of these accounts as changed; await it after the write has been made and before answering. */
export async function accountChanged(userIds: readonly mongoose.Types.ObjectId[], part: AccountPart): Promise<void> {
  const unique = [...new Map(userIds.map((id) => [id.toHexString(), id])).values()];
  await Promise.all(
    unique.map(async (id) => {
      // _id index; a fresh ObjectId is a stamp no earlier write can have left.
      await AccountVersionModel.updateOne({ _id: id }, { $set: { [part]: new mongoose.Types.ObjectId().toHexString() } }, { upsert: true });
      if (changedHere.size >= STAMPS_KEPT) changedHere.clear();
      changedHere.set(id.toHexString(), performance.now());
    }),
  );
}

/** The stamps of an account version document as read (none: never changed). */
const stampsOf = (doc: Partial<Stamps> | null | undefined): Stamps => ({ settings: doc?.settings ?? NEVER_CHANGED, bookings: doc?.bookings ?? NEVER_CHANGED });

/** A reading of an account's stamps, and when it was asked for (performance.now()): it was sent no earlier. */
interface StampsRead {
  askedAt: number;
  stamps: Promise<Stamps>;
}

interface Kept {
  stamp: string;
  /** When the read started (clock.nowMs()). */
  readAt: number;
  value: Promise<unknown>;
  weight: number;
}

/** Reads kept under their account's stamps; one per process, made at start (`maxAgeMs` 0: every read goes to the database). */
export class AccountReads {
  private readonly kept = new Map<string, Kept>();
  private weight = 0;
  private readonly stampReads = new Map<string, StampsRead>();
  private readonly maxAgeMs: number;
  private readonly leaseMs: number;
  /** What a kept read's age is read against (`Deps.clock`): a test moves it past SLOTS_CACHE_SECONDS. */
  private readonly clock: Clock;

  constructor(settings: { maxAgeMs: number; leaseMs: number; clock: Clock }) {
    this.maxAgeMs = settings.maxAgeMs;
    this.leaseMs = settings.leaseMs;
    this.clock = settings.clock;
  }

  /**
   * `read()`'s value for the account, as fresh as the writes that had answered `leaseMs` before `since`
   * (performance.now(), default now; a request passes when it began) and this process's writes: the one kept under
   * the stamp of `part` as read then, else a new read. `key` names what is read, exactly (the account is added to it). The value is shared with other
   * callers: none may modify it. `weigh` counts the documents a value holds (default 1).
   */
  async read<T>(
    userId: mongoose.Types.ObjectId,
    part: AccountPart,
    key: string,
    read: () => PromiseLike<T>,
    { since = performance.now(), weigh = () => 1 }: { since?: number; weigh?: (value: T) => number } = {},
  ): Promise<T> {
    if (this.maxAgeMs <= 0) return read();
    const id = `${userId.toHexString()} ${key}`;
    const stamp = (await this.stampsSince(userId, since))[part];
    const hit = this.kept.get(id);
    if (hit !== undefined && hit.stamp === stamp && this.clock.nowMs() - hit.readAt < this.maxAgeMs) {
      // A Map iterates in insertion order: re-inserting on every use makes the first entry the least recently used.
      this.kept.delete(id);
      this.kept.set(id, hit);
      return hit.value as Promise<T>;
    }
    // A Mongoose query is a thenable that runs again each time it is awaited: the promise of its one run is kept.
    const value = Promise.resolve(read());
    const entry: Kept = { stamp, readAt: this.clock.nowMs(), value, weight: 1 };
    this.keep(id, entry);
    try {
      const result = await value;
      if (this.kept.get(id) === entry) {
        const weight = Math.max(1, weigh(result));
        // One value that would push out everything else is read per request instead.
        if (weight > MAX_WEIGHT / 2) this.forget(id);
        else {
          this.weight += weight - entry.weight;
          entry.weight = weight;
          this.trim();
        }
      }
      return result;
    } catch (err) {
      if (this.kept.get(id) === entry) this.forget(id);
      throw err;
    }
  }

  private keep(id: string, entry: Kept): void {
    this.forget(id);
    this.kept.set(id, entry);
    this.weight += entry.weight;
    this.trim();
  }

  private trim(): void {
    while (this.weight > MAX_WEIGHT && this.kept.size > 1) this.forget(this.kept.keys().next().value as string);
  }

  private forget(id: string): void {
    const old = this.kept.get(id);
    if (old === undefined) return;
    this.weight -= old.weight;
    this.kept.delete(id);
  }

  /**
   * Reads in one query the stamps of those of these accounts whose reading `read()` would renew now (a team's
   * hosts: one round trip instead of one per host); the reads that follow use it.
   */
  async readStamps(userIds: readonly mongoose.Types.ObjectId[], since: number): Promise<void> {
    if (this.maxAgeMs <= 0) return;
    const stale = userIds.filter((id) => this.lastReading(id.toHexString(), since) === undefined);
    if (stale.length < 2) return;
    // _id index.
    const all = readOncePerTurn(`account_versions ${stale.map((id) => id.toHexString()).join(",")}`, async () => {
      const docs = await AccountVersionModel.find({ _id: mongoose.trusted({ $in: stale }) }, { settings: 1, bookings: 1 }).lean<(Partial<Stamps> & { _id: mongoose.Types.ObjectId })[]>();
      return new Map(docs.map((d) => [d._id.toHexString(), d]));
    });
    for (const id of stale) this.remember(id.toHexString(), all.then((m) => stampsOf(m.get(id.toHexString()))));
    await all;
  }

  /** The last reading of the account's stamps when it is fresh enough for a request that began at `since`. */
  private lastReading(hex: string, since: number): Promise<Stamps> | undefined {
    const last = this.stampReads.get(hex);
    return last !== undefined && last.askedAt >= since - this.leaseMs && last.askedAt >= (changedHere.get(hex) ?? -Infinity) ? last.stamps : undefined;
  }

  private remember(hex: string, stamps: Promise<Stamps>): Promise<Stamps> {
    const reading: StampsRead = { askedAt: performance.now(), stamps };
    if (this.stampReads.size >= STAMPS_KEPT) this.stampReads.clear();
    this.stampReads.set(hex, reading);
    stamps.catch(() => {
      if (this.stampReads.get(hex) === reading) this.stampReads.delete(hex);
    });
    return stamps;
  }

  /**
   * The account's stamps as read no earlier than `leaseMs` before `since` and after this process last changed them:
   * the last reading when it was asked for then, else a new one (readers asking within one turn of the event loop
   * share it: src/db/sharedRead.ts).
   */
  private stampsSince(userId: mongoose.Types.ObjectId, since: number): Promise<Stamps> {
    const hex = userId.toHexString();
    const last = this.lastReading(hex, since);
    if (last !== undefined) return last;
    // _id index.
    return this.remember(
      hex,
      readOncePerTurn(`account_versions ${hex}`, async () => stampsOf(await AccountVersionModel.findById(userId, { settings: 1, bookings: 1 }).lean<Partial<Stamps>>())),
    );
  }
}
