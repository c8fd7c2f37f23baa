// The only code that writes the booking-change feed (booking_changes): each booking write's change appended, in one numbered order per account, before the write answers; the sweep that makes sure a change recorded on a booking reached the feed after a crash.
import { EventEmitter } from "node:events";
import mongoose from "mongoose";
import { isDatabaseUnavailable, isDuplicateKeyError, isTransientDatabaseError } from "../../db/errors.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { BUCKET_SIZE, BookingChangeModel, type FeedBucketDoc, type FeedEntry } from "../../db/models/bookingChange.js";
import { bookingOfChange, type FeedOwed } from "../../domain/bookingFeed.js";
import { hostsOf } from "../../domain/team.js";
import { errorText, logEvent as log } from "../../platform/log.js";

/*
 * The design, and why the number is not given inside the booking write's transaction.
 *
 * A booking write records its change on the booking document itself, in the same write (`feed_owed`,
 * src/domain/bookingFeed.ts feedFields): no crash can separate a booking from its change. Right after, before the
 * write answers, the change is appended to the account's feed: the account's newest bucket (src/db/models/
 * bookingChange.ts) gets the change under the number `next` by an update conditional on `next` being what was read,
 * so two appends never take one number, and numbers are given in the order appends commit: a reader that has seen
 * number n has seen every number below it, on every replica. Nothing is ever numbered and then left out, so a
 * reader never waits on a gap.
 *
 * The alternative, a per-account counter $inc'ed inside every booking write's transaction, was measured on the
 * embedded server (bench/RESULTS.md, "bench:changes"): a transaction there costs in proportion to every collection
 * it touches (11 s with a 5 000-booking collection, under load), the booking write itself needs none, and on
 * MongoDB concurrent bookings of one host would conflict on the counter. The compare-and-set on the bucket conflicts
 * only between appends of one account on different replicas (on one replica they queue and go in one write), and a
 * conflict costs one re-read, never a booking.
 *
 * A change whose append did not happen (the process died between the booking write and the append, or the database
 * failed the append) is still on its booking, marked `feed_pending`: the sweep (sweepFeed, every replica, every
 * SWEEP_EVERY_MS of src/outbox/worker.ts) appends it once it is older than SWEEP_AFTER_MS, after looking for its key
 * in every bucket written since the change was made; a write's own append gives up past APPEND_DEADLINE_MS, half of that, so the two never both
 * append one change. A change that reaches the feed late comes after the changes appended meanwhile: the feed's
 * order is the order of appends, which is commit order but for such a recovered change.
 */

type ObjectId = mongoose.Types.ObjectId;

/** A write's own append is not tried past this age of its change: the sweep takes it over (see above). */
const APPEND_DEADLINE_MS = 15_000;
const SWEEP_AFTER_MS = 2 * APPEND_DEADLINE_MS;
/** Compare-and-set tries of one append before it is left to the sweep. */
const APPEND_ATTEMPTS = 40;

/** This replica's appends, by account: what its open streams listen to, so they need not wait for their poll. */
const appended = new EventEmitter().setMaxListeners(0);

/** Calls `fn` whenever this replica appended to the account's feed; returns the function that stops it. */
export function onAppended(accountId: string, fn: () => void): () => void {
  appended.on(accountId, fn);
  return () => appended.off(accountId, fn);
}

/**
 * The feeds a booking's change goes to: the account it is kept under and every host it holds as the change left it
 * (teams.md: every host's feed carries a team booking), and the hosts the change took it from (a reassign's old
 * host: FeedOwed previous_host_ids), so a reader of their feed learns the booking is no longer theirs. Read from the
 * change, not from the booking as it is now: the sweep appends changes a later reassign may have followed, and a host
 * who got the booking afterwards must not be handed its earlier changes after the one that gave it to them.
 */
function feedAccountsOf(doc: BookingDoc, owed: FeedOwed): ObjectId[] {
  const state = (owed.booking ?? doc) as Pick<BookingDoc, "user_id" | "host_ids">;
  const left = (owed.previous_host_ids ?? []).flatMap((id) => (mongoose.isObjectIdOrHexString(id) ? [new mongoose.Types.ObjectId(id)] : []));
  return [...new Map([state.user_id, ...hostsOf(state), ...left].map((id) => [id.toHexString(), id])).values()];
}

/** Changes to append, by the feed each goes to (feedAccountsOf), in the order given, with the bookings they are of. */
interface FeedAppends {
  userId: ObjectId;
  entries: FeedEntry[];
  docs: BookingDoc[];
}

function byFeed(changes: Iterable<{ doc: BookingDoc; owed: FeedOwed }>): FeedAppends[] {
  const feeds = new Map<string, FeedAppends>();
  for (const { doc, owed } of changes) {
    for (const userId of feedAccountsOf(doc, owed)) {
      const account = userId.toHexString();
      let to = feeds.get(account);
      if (!to) feeds.set(account, (to = { userId, entries: [], docs: [] }));
      to.entries.push(entryOf(doc, owed));
      if (!to.docs.includes(doc)) to.docs.push(doc);
    }
  }
  return [...feeds.values()];
}

/** A change as the feed keeps it: the booking as its write left it, recorded with it. */
function entryOf(doc: BookingDoc, owed: FeedOwed): FeedEntry {
  const entry: FeedEntry = { key: owed.id, type: owed.type, at: owed.at, booking: owed.booking ?? bookingOfChange(doc) };
  if (owed.previous_booking_id !== undefined) entry.previous_booking_id = owed.previous_booking_id;
  return entry;
}

type Head = Pick<FeedBucketDoc, "_id" | "block" | "next" | "keys" | "created_at" | "updated_at" | "last_at">;

/*
 * The newest bucket's number of each account, as this replica last saw it, and when. The embedded server answers a
 * query in proportion to the documents it matches, sort or not, whatever the index: "the account's buckets, newest
 * first" matched all of them, a cost that grew with the feed and was paid by every append and by every poll of the
 * open streams for other replicas' appends (bench/RESULTS.md, bench:changes, 2026-12-03). Buckets are numbered up
 * from 0 and only the newest takes appends, so from a number seen the newest is among the buckets from it on: one or
 * two documents when seen lately (a stream's poll, an account's appends). Seen longer ago, other replicas may have
 * opened many buckets since: the newest is first found by exact looks up from it. At most NEWEST_SEEN_MAX accounts
 * are remembered, the longest unseen forgotten first.
 */
const newestSeen = new Map<string, { block: number; atMs: number }>();
const NEWEST_SEEN_MAX = 10_000;
/** Past this age a bucket number seen is looked up from, not trusted to be near the newest. */
const SEEN_FRESH_MS = 1_000;

/** Whether the account's feed has bucket `block`: an exact look, at most one document. */
async function hasBucket(userId: ObjectId, block: number): Promise<boolean> {
  // (user_id, block) unique index.
  return (await BookingChangeModel.exists({ user_id: userId, block })) !== null;
}

/**
 * The newest bucket's number found by exact looks of one document each, up from bucket `from`, which exists: from + 1,
 * + 2, + 4, ... then halving the gap (about 2 log2(n) looks for n new buckets).
 */
async function probeUp(userId: ObjectId, from: number): Promise<number> {
  let [lo, step] = [from, 1];
  while (await hasBucket(userId, lo + step)) [lo, step] = [lo + step, step * 2];
  let hi = lo + step;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (await hasBucket(userId, mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** The account's newest bucket (null: no feed yet) with the fields of `projection` and its number. */
export async function newestBucket<T extends Pick<FeedBucketDoc, "block">>(userId: ObjectId, projection: Record<string, 1 | 0>): Promise<T | null> {
  const account = userId.toHexString();
  const known = newestSeen.get(account);
  const fields = { ...projection, block: 1 as const };
  const newestFrom = (block: number) =>
    // (user_id, block) unique index, newest first.
    BookingChangeModel.findOne(block > 0 ? { user_id: userId, block: mongoose.trusted({ $gte: block }) } : { user_id: userId }, fields)
      .sort({ block: -1 })
      .lean<T>();
  /*
   * From a number seen long ago (or none: 0), one look at it and the next: without the next, the one seen is still
   * the newest (buckets have no gap above the old end), which is the common case, one round trip. With the next, the
   * feed grew meanwhile: the newest is probed for up from it. Without either, bucket `from` expired or the database
   * was replaced under the process: from 0, where the whole feed is asked (bucket 0 may have expired too).
   */
  const nearOrProbed = async (from: number): Promise<T | null> => {
    // (user_id, block) unique index: at most two documents.
    const near = await BookingChangeModel.find({ user_id: userId, block: mongoose.trusted({ $gte: from, $lte: from + 1 }) }, fields)
      .sort({ block: -1 })
      .lean<T[]>();
    if (near.length === 0) return from > 0 ? nearOrProbed(0) : newestFrom(0);
    if (near[0].block === from) return near[0];
    return newestFrom(await probeUp(userId, from + 1));
  };
  const fresh = known !== undefined && performance.now() - known.atMs < SEEN_FRESH_MS;
  let head = fresh ? await newestFrom(known.block) : await nearOrProbed(known?.block ?? 0);
  // Seen lately but too high: the database was replaced under the process.
  if (!head && fresh && known.block > 0) head = await newestFrom(0);
  newestSeen.delete(account);
  newestSeen.set(account, { block: head?.block ?? 0, atMs: performance.now() });
  if (newestSeen.size > NEWEST_SEEN_MAX) newestSeen.delete(newestSeen.keys().next().value as string);
  return head;
}

/*
 * A bucket's times only ever move forward, whatever the `now` an append brings: a write's append carries its write's
 * time, and one that waited behind others of its account (or for a busy database) brings an older time than the
 * append before it. The presence check (keysSince) rests on them: a change made at T is in a bucket updated at T or
 * later, and in none opened before T but the newest. Set from the append's own time, an older time once made a
 * bucket look untouched since before a change it held, and the sweep appended that change again (bench:changes, one
 * edit under two numbers).
 */
const later = (a: Date, b: Date): Date => (a.getTime() >= b.getTime() ? a : b);

/** Opens bucket `block` of the account, its numbers starting at `next` and its changes' times at `lastAt`; false when another append opened it first. */
async function openBucket(userId: ObjectId, block: number, next: number, now: Date, lastAt?: Date): Promise<void> {
  try {
    await BookingChangeModel.collection.insertOne({
      _id: new mongoose.Types.ObjectId(),
      user_id: userId,
      block,
      next,
      changes: {},
      keys: {},
      created_at: now,
      updated_at: now,
      ...(lastAt === undefined ? {} : { last_at: lastAt }),
      expires_at: null,
    });
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
  }
}

/** The keys of the account's buckets written since `since` but the newest (a change's key can only be in those). */
async function keysSince(userId: ObjectId, head: Head, since: Date): Promise<Set<string>> {
  const keys = new Set(Object.keys(head.keys ?? {}));
  // Opened after every append to the buckets before it (openBucket's time): none of them holds a change of `since`
  // or later. Strictly before: an older bucket last updated at `since` itself may hold one.
  if (head.created_at < since) return keys;
  // (user_id, block) unique index.
  const older = await BookingChangeModel.find({ user_id: userId, block: mongoose.trusted({ $lt: head.block }), updated_at: mongoose.trusted({ $gte: since }) }, { keys: 1 }).lean();
  for (const b of older) for (const k of Object.keys(b.keys ?? {})) keys.add(k);
  return keys;
}

/**
 * Appends `entries` (in order) to the account's feed, leaving out any already in it; each gets the next number. The
 * compare-and-set on the newest bucket's `next` (see the design above) is retried on a conflict.
 */
async function appendNow(userId: ObjectId, entries: readonly FeedEntry[], now: Date): Promise<void> {
  let rest = [...entries];
  const since = new Date(Math.min(...entries.map((e) => e.at.getTime())));
  for (let attempt = 0; attempt < APPEND_ATTEMPTS && rest.length > 0; attempt++) {
    const head = await newestBucket<Head>(userId, { next: 1, keys: 1, created_at: 1, updated_at: 1, last_at: 1 });
    if (!head) {
      await openBucket(userId, 0, 1, now);
      continue;
    }
    const present = await keysSince(userId, head, since);
    rest = rest.filter((e) => !present.has(e.key));
    if (rest.length === 0) return;
    const room = (head.block + 1) * BUCKET_SIZE + 1 - head.next;
    if (room <= 0) {
      // The full bucket takes no more appends: its last time is final.
      await openBucket(userId, head.block + 1, head.next, later(now, head.updated_at), head.last_at);
      continue;
    }
    const taken = rest.slice(0, room);
    // Exact: the update is conditional on the `next` read with it, so nothing wrote the bucket in between.
    const set: Record<string, unknown> = { next: head.next + taken.length, updated_at: later(now, head.updated_at) };
    // Numbers follow the order appends commit, and a write's time can be older than the change appended before it
    // (two replicas, or a write that waited): shown no earlier than that one (callers.md: in the order committed).
    let floor = head.last_at;
    taken.forEach((e, i) => {
      floor = floor === undefined ? e.at : later(e.at, floor);
      set[`changes.${head.next + i}`] = floor === e.at ? e : { ...e, at: floor };
      set[`keys.${e.key}`] = head.next + i;
    });
    set.last_at = floor;
    // _id index; conditional on the number read, so two appends never take one number.
    const done = await BookingChangeModel.collection.updateOne({ _id: head._id, next: head.next }, { $set: set });
    if (done.matchedCount === 1) {
      rest = rest.slice(taken.length);
      appended.emit(userId.toHexString());
    }
  }
  if (rest.length > 0) throw new Error(`booking changes not appended after ${APPEND_ATTEMPTS} tries (left to the sweep)`);
}

/** Appends waiting per account on this replica: one append at a time per account, taking everything waiting. */
const queues = new Map<string, Array<{ entries: FeedEntry[]; now: Date; done: (err?: unknown) => void }>>();

function appendQueued(userId: ObjectId, entries: FeedEntry[], now: Date): Promise<void> {
  const account = userId.toHexString();
  return new Promise((resolve, reject) => {
    const waiting = queues.get(account);
    const item = { entries, now, done: (err?: unknown) => (err === undefined ? resolve() : reject(err)) };
    if (waiting) {
      waiting.push(item);
      return;
    }
    const queue = [item];
    queues.set(account, queue);
    void (async () => {
      while (queue.length > 0) {
        const batch = queue.splice(0, queue.length);
        try {
          await appendNow(userId, batch.flatMap((b) => b.entries), new Date(Math.max(...batch.map((b) => b.now.getTime()))));
          for (const b of batch) b.done();
        } catch (err) {
          for (const b of batch) b.done(err);
        }
      }
      queues.delete(account);
    })();
  });
}

/**
 * Appends the change each written booking just recorded (the last of its `feed_owed`) to its account's feed, before
 * the write answers (src/features/bookings/writes.ts afterWrite). A failure is logged, not thrown: the booking is
 * written and its change is on it, and the sweep appends it (see the design above).
 */
export async function appendChanges(docs: readonly BookingDoc[], at: Date): Promise<void> {
  const now = at.getTime();
  const owedNow = docs.flatMap((doc) => {
    const owed = doc.feed_owed?.at(-1);
    return !owed || now - owed.at.getTime() > APPEND_DEADLINE_MS ? [] : [{ doc, owed }];
  });
  await Promise.all(
    byFeed(owedNow).map(async ({ userId, entries }) => {
      // A database slow or away for a moment is waited out while the change is young enough for this write to append.
      const giveUpAt = performance.now() + APPEND_DEADLINE_MS - (now - Math.min(...entries.map((e) => e.at.getTime())));
      for (;;) {
        try {
          return await appendQueued(userId, entries, at);
        } catch (err) {
          if (!(isDatabaseUnavailable(err) || isTransientDatabaseError(err)) || performance.now() + APPEND_RETRY_MS >= giveUpAt) {
            return log("warn", "booking change left to the sweep", { account: userId.toHexString(), error: errorText(err) });
          }
          await new Promise((resolve) => setTimeout(resolve, APPEND_RETRY_MS));
        }
      }
    }),
  );
}

/** The wait before a write's append is tried again after the database failed it for a moment. */
const APPEND_RETRY_MS = 200;

/** Bookings the sweep looks at per pass. */
const SWEEP_BATCH = 100;

/**
 * One sweep pass: the bookings marked `feed_pending` that list a change older than SWEEP_AFTER_MS get every change
 * they list that is not in the feed appended (in their own order). Then, unless written again meanwhile (their
 * feed_n moved), they keep only the changes still young enough for their writes to append, and lose the mark when
 * none is left. A booking written again and again is swept too: waiting for it to be quiet let a change whose append
 * failed fall off its list of KEEP_OWED before the sweep came (bench:changes lost 4 of 6 720 so, at load 6-9 with a
 * third of the writes refused). Answers how many bookings it swept.
 */
export async function sweepFeed(now: Date): Promise<number> {
  const before = new Date(now.getTime() - SWEEP_AFTER_MS);
  // feed_pending partial index (small: a mark is cleared by the pass after its booking's last change).
  const marked = await BookingModel.find({ feed_pending: true, "feed_owed.at": mongoose.trusted({ $lt: before }) }).limit(SWEEP_BATCH).lean<BookingDoc[]>();
  if (marked.length === 0) return 0;
  // A booking is cleared once each of its changes reached every account it goes to.
  const failed = new Set<string>();
  for (const { userId, entries, docs } of byFeed(marked.flatMap((doc) => (doc.feed_owed ?? []).map((owed) => ({ doc, owed }))))) {
    entries.sort((x, y) => x.at.getTime() - y.at.getTime());
    try {
      await appendQueued(userId, entries, now);
    } catch (err) {
      for (const d of docs) failed.add(d._id.toHexString());
      log("warn", "booking changes not swept", { account: userId.toHexString(), error: errorText(err) });
    }
  }
  const swept = marked.filter((b) => !failed.has(b._id.toHexString()));
  const quiet = swept.filter((b) => b.updated_at < before).map((b) => b._id);
  // _id index; only where nothing was written since the read (every booking write stamps updated_at, and sets the
  // mark again). One write for all of them: on the embedded server a write costs in proportion to the collection, and
  // one write per booking, all at once, held every pool connection for seconds (a full run's 503s). Raw, so clearing
  // the mark is not itself a change of the booking (updated_at stays).
  if (quiet.length > 0) await BookingModel.collection.updateMany({ _id: { $in: quiet }, updated_at: { $lt: before } }, { $set: { feed_pending: false, feed_owed: [] } });
  // A booking still being written keeps its young changes for their writes; its old ones are in the feed now, so it
  // is not taken again before a young one is old. One at a time (few: written in the last SWEEP_AFTER_MS and owing
  // an old change), and only where no change was recorded since the read (every one moves feed_n).
  for (const b of swept) {
    if (b.updated_at < before) continue;
    const young = (b.feed_owed ?? []).filter((o) => o.at.getTime() >= before.getTime());
    // _id index.
    await BookingModel.collection.updateOne({ _id: b._id, feed_n: b.feed_n ?? null }, { $set: { feed_owed: young } });
  }
  return swept.length;
}
