// Per-process snapshots of an event's bookings for the host's lists, counts and attendees, checked against a version stamp on every read.
import type { Clock } from "../../domain/clock.js";
import mongoose from "mongoose";
import { BookingModel, BookingVersionModel, type BookingDoc } from "../../db/models/booking.js";
import type { ListedBooking } from "../../domain/booking.js";
import { readOncePerTurn } from "../../db/sharedRead.js";
import { meetingStatusOf } from "../../domain/booking.js";


/*
 * Why. The lists, counts and attendees of an event are all computed from the event's bookings by
 * the pure rules of src/domain/booking.ts. Reading those bookings anew for every request costs a
 * query per request whose work grows with the collection on the embedded server (it has no
 * secondary indexes: every query but an _id lookup scans), several hundred milliseconds at
 * 10 000 bookings. Hosts read their lists far more often than bookings change, so each process
 * keeps the event's bookings and asks the database only "has anything changed?": one _id lookup
 * of the event's stamp in booking_versions.
 *
 * Freshness. Every write to an event's bookings sets the booking's `updated_at` and replaces the
 * stamp after the write (`bookingsChanged`); a read fetches the stamp before the bookings. So a
 * snapshot is never older than the stamp it is filed under, and a request that starts after a
 * write has returned sees that write, in every process.
 *
 * Refresh by what changed. A changed stamp does not reload the event: the snapshot reads the
 * bookings whose `updated_at` is at or after the start of its previous refresh less
 * REFRESH_OVERLAP_MS ((user_id, event_id, updated_at) index) and replaces them by id. The overlap covers a
 * write whose `updated_at` was taken before that refresh started but which landed after it (a
 * write is bounded by the database deadline, about two seconds) and clock skew between replicas.
 * Bookings written within the overlap are read again by every refresh: a few, except right after
 * a bulk import. Bookings
 * are never deleted and never change event, so replacing by id is complete. A snapshot also
 * refreshes when it is REFRESH_EVERY_MS old with an unchanged stamp (a process that died between
 * its write and its stamp), and reloads whole when FULL_RELOAD_MS old, a net under both.
 *
 * One refresh at a time. Concurrent readers of one event share the refresh under way when it is
 * for the stamp they read; otherwise they wait for it and then refresh once more, together. So N
 * readers right after a write cost one query and one copy of the changed bookings, not N reloads.
 * Readers that ask within one turn of the event loop also share the stamp read (src/db/sharedRead.ts), sent
 * after the last of them asked, so it is as fresh as a read of each reader's own.
 *
 * Size. At most MAX_CACHED bookings across all events are kept, least recently read first out;
 * an event larger than that is read per request. A kept booking costs about 0.7 KB of heap (0.9 KB before its id
 * was one flat string; measured at 30 000: three Dates 0.33 KB, the rest its strings and itself), so MAX_CACHED is
 * about 70 MB: with the service's ~110 MB at rest, within the 250 MB it is held to.
 */

const REFRESH_OVERLAP_MS = 10_000;
const REFRESH_EVERY_MS = 30_000;
const FULL_RELOAD_MS = 10 * 60_000;
const MAX_CACHED = 100_000;
const NEVER_CHANGED = "none";

/** What the host's reads need of a booking. */
export interface SnapshotBooking extends ListedBooking {
  attendeeName: string;
  attendeeEmail: string;
  internalNotes: string | null;
  privateKey: string;
  meetingUrl: string | null;
  meetingStatus: string;
  meetingError: string | null;
  calendarEventStatus: string;
  calendarEventError: string | null;
  /** Who did not come, once the host recorded it. */
  noShow: string | null;
}

interface Snapshot {
  version: string;
  /** When the last whole load started. */
  loadedAt: number;
  /** When the last refresh (whole or by change) started: the next one reads changes from here, less the overlap. */
  refreshedAt: number;
  bookings: readonly SnapshotBooking[];
}

interface Refresh {
  version: string;
  done: Promise<Snapshot>;
}

const snapshots = new Map<string, Snapshot>();
const refreshing = new Map<string, Refresh>();
let cached = 0;

function forget(eventId: string): void {
  const old = snapshots.get(eventId);
  if (old) {
    cached -= old.bookings.length;
    snapshots.delete(eventId);
  }
}

function keep(eventId: string, snapshot: Snapshot): void {
  forget(eventId);
  if (snapshot.bookings.length > MAX_CACHED) return;
  // A Map iterates in insertion order: re-inserting on every read makes the first entry the least recently read.
  while (cached + snapshot.bookings.length > MAX_CACHED) {
    const oldest = snapshots.keys().next().value as string;
    forget(oldest);
  }
  snapshots.set(eventId, snapshot);
  cached += snapshot.bookings.length;
}

export const SNAPSHOT_FIELDS = {
  status: 1,
  archived: 1,
  start_time: 1,
  end_time: 1,
  booked_at: 1,
  attendee_name: 1,
  attendee_email: 1,
  internal_notes: 1,
  private_key: 1,
  meeting_url: 1,
  meeting_status: 1,
  meeting_error: 1,
  calendar_event_status: 1,
  calendar_event_error: 1,
  no_show: 1,
} as const;

export type SnapshotFields = Pick<
  BookingDoc,
  "_id" | "status" | "archived" | "start_time" | "end_time" | "booked_at" | "attendee_name" | "attendee_email" | "internal_notes" | "private_key"
  | "meeting_url" | "meeting_status" | "meeting_error" | "calendar_event_status" | "calendar_event_error" | "no_show"
>;

/**
 * Rows per batch of a whole load. The rows are turned into snapshot entries batch by batch, never all held at
 * once: reading them all first and copying them after made a whole load's peak about 5-7 KB per booking (+53 to
 * +73 MB of RSS at 10 000, under the service's --max-semi-space-size=8), streamed +19 MB. And the batch is small:
 * a batch's decoded rows live until the loop has copied the last of them, so with 1 000 they outlived young-space
 * collections and were promoted, old garbage that only a full collection frees. A load of 30 000 alone in a
 * process: peak +92 to +107 MB of RSS with batches of 1 000 and +53 to +60 MB with 50 to 300, as fast.
 */
const LOAD_BATCH = 200;

/**
 * An account's event, whose bookings a snapshot holds: they carry its account, so each read stays on that account's
 * shard. A team event's are kept under their hosts' accounts (teams.md): `holders` names every account that may
 * hold one (eventBookingHolders), and the reads go to their shards.
 */
type EventOf = { _id: mongoose.Types.ObjectId; user_id: mongoose.Types.ObjectId; holders?: readonly mongoose.Types.ObjectId[] };

/** The accounts the event's bookings are read under. */
function heldBy(event: EventOf): mongoose.Types.ObjectId | { $in: mongoose.Types.ObjectId[] } {
  return event.holders === undefined ? event.user_id : mongoose.trusted({ $in: [...event.holders] });
}

async function loadAll(event: EventOf): Promise<SnapshotBooking[]> {
  const bookings: SnapshotBooking[] = [];
  // (user_id, event_id, start_time) index.
  // A cursor does not take the global maxTimeMS that every other query gets (src/db/connection.ts): given here.
  const rows = BookingModel.find({ user_id: heldBy(event), event_id: event._id }, SNAPSHOT_FIELDS)
    .lean<SnapshotFields>()
    .cursor({ batchSize: LOAD_BATCH, maxTimeMS: mongoose.get("maxTimeMS") as number | undefined });
  for await (const row of rows) bookings.push(snapshotOf(row));
  return bookings;
}

async function loadChangedSince(event: EventOf, since: Date): Promise<SnapshotBooking[]> {
  // (user_id, event_id, updated_at) index.
  const rows = await BookingModel.find({ user_id: heldBy(event), event_id: event._id, updated_at: mongoose.trusted({ $gte: since }) }, SNAPSHOT_FIELDS).lean<SnapshotFields[]>();
  return rows.map(snapshotOf);
}

/** `base` with `changed` put in place by id (new ones appended); the bookings' order does not matter to the readers. */
export function mergeChanged(base: readonly SnapshotBooking[], changed: readonly SnapshotBooking[]): SnapshotBooking[] {
  if (changed.length === 0) return base.slice();
  const byId = new Map(changed.map((b) => [b.id, b]));
  const merged = base.map((b) => {
    const fresh = byId.get(b.id);
    if (fresh === undefined) return b;
    byId.delete(b.id);
    return fresh;
  });
  for (const b of byId.values()) merged.push(b);
  return merged;
}

export function snapshotOf(b: SnapshotFields): SnapshotBooking {
  return {
    // Not toHexString(): it builds the id from twelve pieces, a tree of strings of about 220 bytes that is kept
    // with the entry; the Buffer's hex is one flat string of 40 (of the entry's 0.9 KB, about a fifth).
    id: Buffer.from(b._id.id).toString("hex"),
    status: b.status,
    archived: b.archived,
    start: b.start_time,
    end: b.end_time,
    bookedAt: b.booked_at,
    attendeeName: b.attendee_name,
    attendeeEmail: b.attendee_email,
    internalNotes: b.internal_notes ?? null,
    privateKey: b.private_key,
    meetingUrl: b.meeting_url ?? null,
    meetingStatus: meetingStatusOf({ meetingUrl: b.meeting_url, meetingStatus: b.meeting_status }),
    meetingError: b.meeting_error ?? null,
    // Bookings from before calendars existed, and imported ones, owe no calendar anything.
    calendarEventStatus: b.calendar_event_status ?? "none",
    calendarEventError: b.calendar_event_error ?? null,
    noShow: b.no_show ?? null,
  };
}

/** Brings the event's snapshot to `version`: by change when there is a recent one, else whole. */
async function refresh(key: string, event: EventOf, version: string, clock: Clock): Promise<Snapshot> {
  const startedAt = clock.nowMs();
  const old = snapshots.get(key);
  let snapshot: Snapshot;
  if (old && startedAt - old.loadedAt < FULL_RELOAD_MS) {
    const changed = await loadChangedSince(event, new Date(old.refreshedAt - REFRESH_OVERLAP_MS));
    snapshot = { version, loadedAt: old.loadedAt, refreshedAt: startedAt, bookings: mergeChanged(old.bookings, changed) };
  } else {
    snapshot = { version, loadedAt: startedAt, refreshedAt: startedAt, bookings: await loadAll(event) };
  }
  keep(key, snapshot);
  return snapshot;
}

function fresh(snapshot: Snapshot | undefined, version: string, now: number): snapshot is Snapshot {
  return snapshot !== undefined && snapshot.version === version && now - snapshot.refreshedAt < REFRESH_EVERY_MS;
}

/** The event's stamp; readers of the event that ask within one turn of the event loop share the read (src/db/sharedRead.ts). */
function currentStamp(key: string, eventId: mongoose.Types.ObjectId): Promise<string> {
  // _id index.
  return readOncePerTurn(`booking_versions ${key}`, async () => (await BookingVersionModel.findById(eventId, { version: 1 }).lean())?.version ?? NEVER_CHANGED);
}

/**
 * Every booking of the account's event, as fresh as the last write that has returned. Do not modify the result.
 * An account's event's bookings are that account's: read on its shard.
 */
export async function bookingsOfEvent(event: EventOf, clock: Clock): Promise<readonly SnapshotBooking[]> {
  // A team event's snapshot is of the holders it was read under: another set (a host added) loads anew.
  const key = event.holders === undefined ? event._id.toHexString() : `${event._id.toHexString()} ${event.holders.map((h) => h.toHexString()).join(",")}`;
  const version = await currentStamp(key, event._id);
  for (;;) {
    const hit = snapshots.get(key);
    if (fresh(hit, version, clock.nowMs())) {
      snapshots.delete(key);
      snapshots.set(key, hit);
      return hit.bookings;
    }
    const running = refreshing.get(key);
    // A refresh that read the same stamp has read every write this reader must see (see Freshness).
    if (running?.version === version) return (await running.done).bookings;
    if (running) {
      // One refresh at a time per event: wait for the other stamp's, then look again (it may have been enough).
      await running.done.catch(() => undefined);
      continue;
    }
    const done = refresh(key, event, version, clock);
    const entry: Refresh = { version, done };
    refreshing.set(key, entry);
    try {
      return (await done).bookings;
    } finally {
      if (refreshing.get(key) === entry) refreshing.delete(key);
    }
  }
}

/** Marks the events' bookings as changed; call after every write to them has been made. */
export async function bookingsChanged(eventIds: readonly mongoose.Types.ObjectId[]): Promise<void> {
  const unique = [...new Map(eventIds.map((id) => [id.toHexString(), id])).values()];
  await Promise.all(
    unique.map((id) =>
      // _id index; a fresh ObjectId is a stamp no earlier write can have left.
      BookingVersionModel.updateOne({ _id: id }, { $set: { version: new mongoose.Types.ObjectId().toHexString() } }, { upsert: true }),
    ),
  );
}
