// Reading the booking-change feed (callers.md "Booking changes"): a page of changes after a token, and the live stream of them on any replica, with its bookmarks, limits and clean end.
import type { Clock } from "../../domain/clock.js";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import mongoose from "mongoose";
import { BookingChangeSchema, type BookingChange } from "../../../gen/scheduling/v1/booking_pb.js";
import type { BookingDoc } from "../../db/models/booking.js";
import { BUCKET_SIZE, BookingChangeModel, type FeedBucketDoc, type FeedEntry } from "../../db/models/bookingChange.js";
import { EventModel } from "../../db/models/event.js";
import type { UserDoc } from "../../db/models/user.js";
import { BOOKMARK, LIST_LIMIT, positionOf, tokenOf } from "../../domain/bookingFeed.js";
import { ApiError, REASONS, invalid, tooManyRequests, unavailable } from "../../domain/errors.js";
import { isDatabaseUnavailable, isTransientDatabaseError } from "../../db/errors.js";
import { newestBucket, onAppended } from "./feed.js";
import { hostFormats, presentBooking, type EventSummary } from "./present.js";

type ObjectId = mongoose.Types.ObjectId;

/** The feed's settings (docs/configuration.md). */
export interface ChangeFeedSettings {
  /** BOOKING_CHANGES_RETENTION_DAYS in ms: how long changes are kept. */
  retentionMs: number;
  /** WATCH_STREAMS_PER_KEY: open streams per API key (one per account) on this replica. */
  streamsPerKey: number;
  /** BOOKING_CHANGES_POLL_MS: how often an open stream looks for changes other replicas appended. */
  pollMs: number;
  /** How long a stream stays quiet before a bookmark: under callers.md's 30 s. */
  bookmarkMs: number;
  /**
   * What retention, the changes' times and a stream's quiet read (`Deps.clock`). Quiet is also measured in real time
   * (performance.now), so a wall clock set back never holds a bookmark up.
   */
  clock: Clock;
  /** A test's clock (CLOCK_CONTROL=on) moved: quiet streams look again at once instead of waiting real seconds. */
  onClockMove?: (listener: () => void) => () => void;
}

/** callers.md's answer to a token that is unknown, malformed or older than what is kept (REST 410). */
function changesExpired(): ApiError {
  return new ApiError(Code.FailedPrecondition, "changes are no longer kept; list the bookings again", { reason: REASONS.changesExpired, httpStatus: 410 });
}

/** A change as read from its bucket, with its number in the account's feed. */
interface Numbered {
  seq: number;
  entry: FeedEntry;
}

const blockOf = (seq: number) => Math.floor((seq - 1) / BUCKET_SIZE);

/** The number of the account's last change (0: none yet). */
async function lastSeq(userId: ObjectId): Promise<number> {
  const newest = await newestBucket<Pick<FeedBucketDoc, "block" | "next">>(userId, { next: 1, _id: 0 });
  return (newest?.next ?? 1) - 1;
}

/** The changes after `seq`, at most `limit`, in order: from the bucket holding seq + 1 and the ones after it. */
async function changesAfter(userId: ObjectId, seq: number, limit: number): Promise<Numbered[]> {
  const found: Numbered[] = [];
  let from = seq + 1;
  while (found.length < limit) {
    const block = blockOf(from);
    const last = Math.min((block + 1) * BUCKET_SIZE, from + (limit - found.length) - 1);
    const projection: Record<string, 1 | 0> = { next: 1, _id: 0 };
    for (let s = from; s <= last; s++) projection[`changes.${s}`] = 1;
    // (user_id, block) unique index.
    const bucket = await BookingChangeModel.findOne({ user_id: userId, block }, projection).lean<Pick<FeedBucketDoc, "next" | "changes">>();
    if (!bucket) break;
    for (let s = from; s <= last && s < bucket.next; s++) {
      const entry = bucket.changes?.[String(s)];
      if (entry) found.push({ seq: s, entry });
    }
    if (last >= bucket.next || last < (block + 1) * BUCKET_SIZE) break;
    from = last + 1;
  }
  return found;
}

/**
 * Where a caller's `after` leaves off in its account's feed: the number of the last change it has seen. A token of
 * another account, or malformed, or past the feed's end: CHANGES_EXPIRED; so is one whose next change is no longer
 * kept (older than the retention, or its bucket gone), since the caller would miss it. A token at the feed's end
 * resumes however old it is: nothing was missed (an idle reader's bookmark).
 */
async function resumeAt(host: Pick<UserDoc, "_id">, after: string, retentionMs: number, now: Date): Promise<number> {
  const position = positionOf(after);
  if (!position || position.accountId !== host._id.toHexString()) throw changesExpired();
  const last = await lastSeq(host._id);
  if (position.seq > last) throw changesExpired();
  if (position.seq === last) return last;
  const [next] = await changesAfter(host._id, position.seq, 1);
  if (!next || !isKept(next.entry, retentionMs, now)) throw changesExpired();
  return position.seq;
}

/** Whether a change is still within the retention (BOOKING_CHANGES_RETENTION_DAYS). */
function isKept(entry: Pick<FeedEntry, "at">, retentionMs: number, now: Date): boolean {
  return new Date(entry.at).getTime() + retentionMs >= now.getTime();
}

/** The number just before the oldest change kept (the feed's end when none is): where a list without `after` starts. */
async function oldestKept(userId: ObjectId, retentionMs: number, now: Date): Promise<number> {
  const last = await lastSeq(userId);
  if (last === 0) return 0;
  // (user_id, block) unique index: the oldest bucket written within the retention holds the oldest change kept.
  const kept = await BookingChangeModel.findOne({ user_id: userId, updated_at: mongoose.trusted({ $gte: new Date(now.getTime() - retentionMs) }) }, { changes: 1, _id: 0 })
    .sort({ block: 1 })
    .lean<Pick<FeedBucketDoc, "changes">>();
  const seqs = Object.entries(kept?.changes ?? {})
    .filter(([, entry]) => isKept(entry, retentionMs, now))
    .map(([seq]) => Number(seq));
  return seqs.length > 0 ? Math.min(...seqs) - 1 : last;
}

/** Checks a request's event ids: each must be an id (an event of another account simply matches nothing). */
function eventFilter(eventIds: readonly string[]): ((entry: FeedEntry) => boolean) | undefined {
  if (eventIds.length === 0) return undefined;
  for (const id of eventIds) if (!mongoose.isObjectIdOrHexString(id) || id.length !== 24) throw invalid(`event_id "${id.slice(0, 40)}" is not an id`, "event_id");
  const wanted = new Set(eventIds.map((id) => id.toLowerCase()));
  return (entry) => wanted.has(String(entry.booking.event_id));
}

/** Changes as the API shows them: the booking presented as GetBooking does, each event read once per batch. */
async function present(host: UserDoc, changes: readonly Numbered[], now: Date): Promise<BookingChange[]> {
  const eventIds = [...new Set(changes.map((c) => String(c.entry.booking.event_id)))].map((id) => new mongoose.Types.ObjectId(id));
  // The account's own events, and the teams' of its team bookings (teams.md).
  const owners = [...new Set([host._id.toHexString(), ...changes.flatMap((c) => (c.entry.booking.team_id ? [String(c.entry.booking.team_id)] : []))])].map((id) => new mongoose.Types.ObjectId(id));
  // _id index (a deleted event still names its old bookings).
  const events = new Map(
    (await EventModel.find({ _id: mongoose.trusted({ $in: eventIds }), user_id: mongoose.trusted({ $in: owners }) }, { name: 1, color: 1, location: 1 }).lean<EventSummary[]>()).map((e) => [e._id.toHexString(), e]),
  );
  const formats = hostFormats(host);
  const accountId = host._id.toHexString();
  return Promise.all(
    changes.map(async ({ seq, entry }) => {
      const doc = entry.booking as unknown as BookingDoc;
      const event = events.get(String(doc.event_id)) ?? { _id: doc.event_id, name: "", color: "", location: undefined as unknown as EventSummary["location"] };
      const booking = await presentBooking(doc, event, formats, now);
      return create(BookingChangeSchema, {
        token: tokenOf({ accountId, seq }),
        type: entry.type,
        occurredAt: timestampFromDate(entry.at),
        booking,
        ...(entry.previous_booking_id !== undefined ? { previousBookingId: entry.previous_booking_id } : {}),
        ...(booking.team ? { team: booking.team } : {}),
      });
    }),
  );
}

function bookmark(host: Pick<UserDoc, "_id">, seq: number, now: Date): BookingChange {
  return create(BookingChangeSchema, { token: tokenOf({ accountId: host._id.toHexString(), seq }), type: BOOKMARK, occurredAt: timestampFromDate(now) });
}

/**
 * What this replica's open streams of one account wait on: a version that rises with every append this replica
 * makes to the account's feed (at once) and every rise of the feed's end another replica's append made (seen by one
 * poll per account, every `pollMs`, whatever the number of streams).
 */
class AccountWatch {
  version = 0;
  streams = 0;
  last = -1;
  private readonly waiters = new Set<() => void>();
  readonly stopListening: () => void;

  constructor(readonly userId: ObjectId) {
    this.stopListening = onAppended(userId.toHexString(), () => this.bump());
  }

  bump(): void {
    this.version++;
    this.nudge();
  }

  /** Wakes the waiting streams without a change: they look at their quiet again (the clock moved). */
  nudge(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Resolves once the version is past `seen`, after `ms`, or when `signal` aborts, whichever first. */
  wait(seen: number, ms: number, signal: AbortSignal): Promise<void> {
    if (this.version !== seen || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      signal.addEventListener("abort", done);
    });
  }
}

/** Who a stream is for: its signal (the caller went away, its deadline passed), and the check that its key still holds. */
export interface StreamCaller {
  signal: AbortSignal;
  /** Throws (UNAUTHENTICATED) once the key the stream was opened with no longer names its account. */
  keyStillValid: () => void | Promise<void>;
}

/** Whether a read failed for a reason that passes (the database slow or away for a moment): the stream reads again. */
function passing(err: unknown): boolean {
  return isDatabaseUnavailable(err) || isTransientDatabaseError(err);
}

/** Changes read per look while a stream catches up. */
const STREAM_BATCH = 100;

/**
 * The feed of this replica: lists, streams, and the open streams it ends with UNAVAILABLE when the server stops.
 * One per process (src/app/deps.ts).
 */
export class ChangeFeed {
  private readonly open = new Map<string, number>();
  private readonly streams = new Set<AbortController>();
  private readonly watched = new Map<string, AccountWatch>();
  private poll: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(readonly settings: ChangeFeedSettings) {
    settings.onClockMove?.(() => {
      for (const w of this.watched.values()) w.nudge();
    });
  }

  /** How long a stream has been quiet since `since` (clock and real time, whichever says longer). */
  private quietFor(since: { clockMs: number; realMs: number }): number {
    return Math.max(this.settings.clock.nowMs() - since.clockMs, performance.now() - since.realMs);
  }

  private watchOf(userId: ObjectId): AccountWatch {
    const account = userId.toHexString();
    let w = this.watched.get(account);
    if (!w) this.watched.set(account, (w = new AccountWatch(userId)));
    w.streams++;
    if (!this.poll) this.schedulePoll();
    return w;
  }

  private unwatch(w: AccountWatch): void {
    if (--w.streams > 0) return;
    w.stopListening();
    this.watched.delete(w.userId.toHexString());
  }

  /** One look per watched account at its feed's end; a rise wakes its streams. Runs while any stream is open. */
  private schedulePoll(): void {
    this.poll = setTimeout(() => {
      void (async () => {
        await Promise.all(
          [...this.watched.values()].map(async (w) => {
            const last = await lastSeq(w.userId).catch(() => -1);
            // The first look wakes the streams too: a change appended elsewhere between a stream's own read and this
            // look would otherwise wait for the next bookmark.
            if (last > w.last) {
              w.last = last;
              w.bump();
            }
          }),
        );
        this.poll = undefined;
        if (this.watched.size > 0 && !this.closed) this.schedulePoll();
      })();
    }, this.settings.pollMs);
    this.poll.unref();
  }

  /** ListBookingChanges: at most `limit` changes after `after` (absent: the oldest kept), and the token to go on from. */
  async list(host: UserDoc, req: { after: string; limit?: number; eventIds: readonly string[] }): Promise<{ changes: BookingChange[]; next: string }> {
    const limit = req.limit ?? LIST_LIMIT.default;
    if (!Number.isInteger(limit) || limit < LIST_LIMIT.min || limit > LIST_LIMIT.max) throw invalid(`limit must be between ${LIST_LIMIT.min} and ${LIST_LIMIT.max}`, "limit");
    const matches = eventFilter(req.eventIds);
    const now = this.settings.clock.now();
    const from = req.after === "" ? await oldestKept(host._id, this.settings.retentionMs, now) : await resumeAt(host, req.after, this.settings.retentionMs, now);
    const read = await changesAfter(host._id, from, limit);
    const shown = matches ? read.filter((c) => matches(c.entry)) : read;
    const lastRead = read.at(-1)?.seq;
    const next = lastRead !== undefined ? tokenOf({ accountId: host._id.toHexString(), seq: lastRead }) : req.after || tokenOf({ accountId: host._id.toHexString(), seq: from });
    return { changes: await present(host, shown, now), next };
  }

  /**
   * WatchBookingChanges: the kept changes after `after` (absent: a bookmark of now first), then every change as it is
   * appended on any replica (this one's at once, others' within a poll), a bookmark after `bookmarkMs` of quiet.
   */
  async *watch(host: UserDoc, req: { after: string; eventIds: readonly string[] }, caller: StreamCaller): AsyncGenerator<BookingChange> {
    const callerSignal = caller.signal;
    if (this.closed) throw unavailable("the server is stopping; resume elsewhere with your last token");
    const matches = eventFilter(req.eventIds);
    const account = host._id.toHexString();
    const now = this.settings.clock.now();
    let seq = req.after === "" ? await lastSeq(host._id) : await resumeAt(host, req.after, this.settings.retentionMs, now);
    const count = this.open.get(account) ?? 0;
    if (count >= this.settings.streamsPerKey) throw tooManyRequests(1, `at most ${this.settings.streamsPerKey} open booking change streams per API key`);
    this.open.set(account, count + 1);
    const stop = new AbortController();
    this.streams.add(stop);
    const signal = AbortSignal.any([callerSignal, stop.signal]);
    const watch = this.watchOf(host._id);
    try {
      const stamp = () => ({ clockMs: this.settings.clock.nowMs(), realMs: performance.now() });
      let quietSince = stamp();
      if (req.after === "") yield bookmark(host, seq, now);
      while (!signal.aborted) {
        const seen = watch.version;
        let read: Numbered[];
        let shown: BookingChange[];
        try {
          read = await changesAfter(host._id, seq, STREAM_BATCH);
          shown = await present(host, matches ? read.filter((c) => matches(c.entry)) : read, this.settings.clock.now());
          // Asked after the read, right before what it read (or a bookmark) is delivered: nothing read after the
          // key stopped being valid reaches the stream. A database away for a moment is retried as the read is.
          await caller.keyStillValid();
        } catch (err) {
          if (!passing(err)) throw err;
          await watch.wait(watch.version, this.settings.pollMs, signal);
          continue;
        }
        if (read.length > 0) {
          for (const change of shown) yield change;
          seq = read[read.length - 1].seq;
          if (shown.length > 0) quietSince = stamp();
          continue;
        }
        if (this.quietFor(quietSince) >= this.settings.bookmarkMs) {
          yield bookmark(host, seq, this.settings.clock.now());
          quietSince = stamp();
        }
        await watch.wait(seen, Math.max(0, this.settings.bookmarkMs - this.quietFor(quietSince)), signal);
      }
      // The caller's own signal ended it (it went away, or its deadline passed): the stream just stops, and the
      // transport answers a passed deadline with DEADLINE_EXCEEDED (src/platform/transport/deadlines.ts).
      if (stop.signal.aborted) throw unavailable("the server is stopping; resume elsewhere with your last token");
    } finally {
      this.unwatch(watch);
      this.streams.delete(stop);
      const left = (this.open.get(account) ?? 1) - 1;
      if (left > 0) this.open.set(account, left);
      else this.open.delete(account);
    }
  }

  /** Ends every open stream with UNAVAILABLE (the server is stopping) and refuses new ones. */
  close(): void {
    this.closed = true;
    for (const s of this.streams) s.abort();
  }
}
