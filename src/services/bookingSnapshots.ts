// Per-process snapshots of an event's bookings for the host's lists, counts and attendees, checked against a version stamp on every read.
import mongoose from "mongoose";
import { BookingModel, BookingVersionModel, type BookingDoc } from "../db/models/booking.js";
import type { ListedBooking } from "../domain/booking.js";

/*
 * Why. The lists, counts and attendees of an event are all computed from the event's bookings by
 * the pure rules of src/domain/booking.ts. Reading those bookings anew for every request costs a
 * query per request whose work grows with the collection on the embedded server (it has no
 * secondary indexes: every query but an _id lookup scans), several hundred milliseconds at
 * 10 000 bookings. Hosts read their lists far more often than bookings change, so each process
 * keeps the event's bookings and asks the database only "has anything changed?": one _id lookup
 * of the event's stamp in booking_versions.
 *
 * Freshness. Every write to an event's bookings replaces the stamp after the write
 * (`bookingsChanged`); a read fetches the stamp before the bookings. So a snapshot is never older
 * than the stamp it is filed under, and a request that starts after a write has returned sees
 * that write, in every process. If a process dies between a write and its stamp, snapshots of
 * that event may miss the write until the next write or until they are MAX_AGE_MS old.
 *
 * Size. At most MAX_CACHED bookings across all events are kept, least recently read first out;
 * an event larger than that is read per request.
 */

const MAX_AGE_MS = 30_000;
const MAX_CACHED = 200_000;
const NEVER_CHANGED = "none";

/** What the host's reads need of a booking. */
export interface SnapshotBooking extends ListedBooking {
  attendeeName: string;
  attendeeEmail: string;
  internalNotes: string | null;
  privateKey: string;
  meetingUrl: string | null;
  calendarEventStatus: string;
  calendarEventError: string | null;
}

interface Snapshot {
  version: string;
  loadedAt: number;
  bookings: readonly SnapshotBooking[];
}

const snapshots = new Map<string, Snapshot>();
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

async function load(eventId: mongoose.Types.ObjectId): Promise<SnapshotBooking[]> {
  // (event_id, start_time) index.
  const rows = await BookingModel.find(
    { event_id: eventId },
    {
      status: 1, archived: 1, start_time: 1, end_time: 1, booked_at: 1, attendee_name: 1, attendee_email: 1, internal_notes: 1, private_key: 1,
      meeting_url: 1, calendar_event_status: 1, calendar_event_error: 1,
    },
  ).lean<SnapshotFields[]>();
  return rows.map(snapshotOf);
}

type SnapshotFields = Pick<
  BookingDoc,
  "_id" | "status" | "archived" | "start_time" | "end_time" | "booked_at" | "attendee_name" | "attendee_email" | "internal_notes" | "private_key"
  | "meeting_url" | "calendar_event_status" | "calendar_event_error"
>;

export function snapshotOf(b: SnapshotFields): SnapshotBooking {
  return {
    id: b._id.toHexString(),
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
    // Bookings from before calendars existed, and imported ones, owe no calendar anything.
    calendarEventStatus: b.calendar_event_status ?? "none",
    calendarEventError: b.calendar_event_error ?? null,
  };
}

/** Every booking of the event, as fresh as the last write that has returned. Do not modify the result. */
export async function bookingsOfEvent(eventId: mongoose.Types.ObjectId): Promise<readonly SnapshotBooking[]> {
  const key = eventId.toHexString();
  // _id index.
  const stamp = await BookingVersionModel.findById(eventId, { version: 1 }).lean();
  const version = stamp?.version ?? NEVER_CHANGED;
  const hit = snapshots.get(key);
  if (hit && hit.version === version && Date.now() - hit.loadedAt < MAX_AGE_MS) {
    snapshots.delete(key);
    snapshots.set(key, hit);
    return hit.bookings;
  }
  const loadedAt = Date.now();
  const bookings = await load(eventId);
  keep(key, { version, loadedAt, bookings });
  return bookings;
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
