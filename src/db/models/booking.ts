// The bookings collection, and booking_cells: the reservation keys that let the database refuse overlapping bookings.
import mongoose, { Schema } from "mongoose";
import type { FeedOwed } from "../../domain/bookingFeed.js";
import type { OwedChange } from "../../domain/owed.js";

/** A booking as stored; written whole by the services (insertOne), so it is declared rather than inferred. */
export interface BookingDoc {
  _id: mongoose.Types.ObjectId;
  event_id: mongoose.Types.ObjectId;
  user_id: mongoose.Types.ObjectId;
  start_time: Date;
  end_time: Date;
  padding_minutes: number;
  /** The event's buffer_before when the booking was made; absent on bookings made before buffers: none. */
  buffer_before_minutes?: number;
  status: string;
  archived: boolean;
  attendee_name: string;
  attendee_email: string;
  timezone: string | null;
  /** The language the booker booked in (one of the eleven locales), or null/absent: the host's. */
  locale?: string | null;
  answers: { question_id: string; value: unknown }[];
  guest_emails: string[];
  booked_at: Date;
  private_key: string;
  internal_notes: string | null;
  cancel_reason: string | null;
  canceled_at: Date | null;
  rescheduled_from: mongoose.Types.ObjectId | null;
  rescheduled_to: mongoose.Types.ObjectId | null;
  imported: boolean;
  /** When the booking was last written: snapshots refresh by it (src/features/bookings/snapshots.ts). */
  updated_at: Date;
  /** The video meeting's address: made at once (Jitsi) or by the outbox (Zoom, Google Meet); kept on reschedule. */
  meeting_url?: string | null;
  /** none (no meeting for the location), pending (a provider is making it), ready, failed (meeting_error says why). */
  meeting_status?: "none" | "pending" | "ready" | "failed";
  meeting_error?: string | null;
  /** Who makes the meeting: jitsi, zoom (a meeting provider), google (the calendar, with the event). */
  meeting_provider?: string | null;
  /** The provider's id of the meeting (Zoom's meeting id), kept so a reschedule moves it and a cancel deletes it. */
  meeting_id?: string | null;
  /** none, pending, synced or failed: where the booking's event in the host's calendar stands (src/features/calendars/effect.ts). */
  calendar_event_status?: string;
  /** The host calendar the booking is written to (the event's connected_calendar_id when it was made), or null. */
  calendar_id?: string | null;
  calendar_event_error?: string | null;
  /** canceled: who canceled it. */
  canceled_by?: "host" | "booker" | null;
  /**
   * canceled under an Idempotency-Key: the name of that keyed write (src/platform/transport/idempotency.ts
   * keyedWriteOf), so its retry after a lost answer answers the canceled booking instead of "booking is canceled".
   */
  canceled_under_key?: string | null;
  /**
   * Whether the last change of the booking mails its guests: false when the booker limits said no (the booker
   * tells them). Absent on bookings made before the limit: true.
   */
  guests_notified?: boolean;
  /**
   * What providers name this booking's objects by (a Google event id, a Meet request id): the first booking's id,
   * kept by every reschedule, so a moved booking still finds its event and meeting.
   */
  provider_key?: string | null;
  /** The id the calendar provider gave the booking's event, kept so a retry or a reschedule writes over the same one. */
  calendar_event_id?: string | null;
  /**
   * The booker turned reminder e-mails off for this booking (one-click unsubscribe or the manage page); a
   * reschedule keeps it. Absent: on.
   */
  reminders_unsubscribed?: boolean;
  /**
   * A seat of a seated slot (booking-kinds.md "Seats"): the slot's id (cells.ts seatedSlotId), which holds the
   * slot's time cells and names its one calendar event and meeting. Absent: the booking takes its slot alone.
   */
  seated_slot?: mongoose.Types.ObjectId | null;
  /** The outbox (src/domain/owed.ts): changes not yet planned into effects, set whole by the write that makes them. */
  changes_owed?: OwedChange[];
  owed_seq?: number;
  /** The last owed change the outbox relay planned into effects (set by the relay only, never by a booking write). */
  planned_seq?: number;
  changes_pending?: boolean;
  /** The feed (src/domain/bookingFeed.ts): the booking's last changes, set whole by the write that makes them. */
  feed_owed?: FeedOwed[];
  feed_n?: number;
  /** True until the feed's sweep has seen the changes in the feed (src/features/bookings/feed.ts). */
  feed_pending?: boolean;
  /**
   * A reschedule written in two steps (src/features/bookings/moves.ts): on the booking it replaces, the new booking
   * as it is to be inserted, until it is; move_pending marks it for the sweep that finishes a move a crash cut short.
   */
  moving_to?: BookingDoc;
  move_pending?: boolean;
  /**
   * A team event's booking (teams.md): its team, every host it holds (round robin: the one chosen, also its
   * user_id; collective: all, the first its user_id), and why round robin chose that host. Absent on personal ones.
   */
  team_id?: mongoose.Types.ObjectId | null;
  host_ids?: mongoose.Types.ObjectId[];
  assignment_reason?: string | null;
  /**
   * A team booking's event in each host's calendar (teams.md): the id the provider gave it, by host id, kept before
   * anything else so no retry writes a second one (src/features/calendars/effect.ts).
   */
  host_events?: Record<string, string> | null;
  /** A request (status pending): when it expires unanswered (src/domain/booking.ts requestExpiresAt). Absent: not a request. */
  answer_by?: Date | null;
  /** Who did not come (booking-kinds.md "No-shows"): attendee or host; absent: nobody recorded. */
  no_show?: "attendee" | "host" | null;
}

const answerSchema = new Schema(
  {
    question_id: { type: String, required: true },
    /** Whatever JSON value the form sent (string, number, boolean, list of options). */
    value: { type: Schema.Types.Mixed, default: null },
  },
  { _id: false, minimize: false },
);

const bookingSchema = new Schema<BookingDoc>(
  {
    event_id: { type: Schema.Types.ObjectId, required: true },
    /** The host (the event's owner), so a host's bookings across all events are one indexed range. */
    user_id: { type: Schema.Types.ObjectId, required: true },
    start_time: { type: Date, required: true },
    end_time: { type: Date, required: true },
    /**
     * The event's padding when the booking was made. Slots and reservation cells both use it, so a
     * later change of the event's padding cannot make a booking's claim differ from what it blocks.
     */
    padding_minutes: { type: Number, required: true },
    /** The event's buffer before the meeting when the booking was made, kept for the same reason as its padding. */
    buffer_before_minutes: { type: Number },
    /** One of BOOKING_STATUSES (src/domain/booking.ts). */
    status: { type: String, required: true },
    archived: { type: Boolean, required: true },
    attendee_name: { type: String, required: true },
    /** Trimmed and lowercased: attendees are one entry per address, whatever the case it was typed in. */
    attendee_email: { type: String, required: true },
    /** The booker's IANA zone, when they sent one. */
    timezone: { type: String, default: null },
    /** The booker's language, when the booking page (or API caller) said it: their e-mails are written in it. */
    locale: { type: String, default: null },
    answers: { type: [answerSchema], default: [] },
    guest_emails: { type: [String], default: [] },
    booked_at: { type: Date, required: true },
    /** 43 url-safe characters (32 random bytes): the booker's link to view, cancel or reschedule. */
    private_key: { type: String, required: true },
    internal_notes: { type: String, default: null },
    cancel_reason: { type: String, default: null },
    canceled_at: { type: Date, default: null },
    /** Reschedule links: the booking this one replaced, and the one that replaced it. */
    rescheduled_from: { type: Schema.Types.ObjectId, default: null },
    rescheduled_to: { type: Schema.Types.ObjectId, default: null },
    /** Moved in by AdminService.ImportBookings: holds no reservation cells. */
    imported: { type: Boolean, default: false },
    /**
     * Set by every write: inserts carry it, and the update hooks below add it to every update through the model.
     * Documents written before the field existed have none; a snapshot's whole load still reads them.
     */
    updated_at: { type: Date },
    meeting_url: { type: String, default: null },
    meeting_status: { type: String, default: "none" },
    meeting_error: { type: String, default: null },
    meeting_provider: { type: String, default: null },
    meeting_id: { type: String, default: null },
    calendar_event_status: { type: String, default: "none" },
    calendar_id: { type: String, default: null },
    calendar_event_error: { type: String, default: null },
    canceled_by: { type: String, default: null },
    canceled_under_key: { type: String, default: null },
    guests_notified: { type: Boolean },
    provider_key: { type: String, default: null },
    calendar_event_id: { type: String, default: null },
    reminders_unsubscribed: { type: Boolean },
    seated_slot: { type: Schema.Types.ObjectId, default: undefined },
    changes_owed: {
      type: [new Schema({ seq: Number, type: String, at: Date, previous_booking_id: String, canceled_by: String, moved_by: String, reason: String, previous_host_id: String, withheld: { type: [String], default: undefined } }, { _id: false })],
      default: undefined,
    },
    owed_seq: { type: Number },
    planned_seq: { type: Number },
    changes_pending: { type: Boolean },
    feed_owed: {
      type: [new Schema({ id: String, n: Number, type: String, at: Date, previous_booking_id: String, previous_host_ids: { type: [String], default: undefined }, booking: Schema.Types.Mixed }, { _id: false })],
      default: undefined,
    },
    feed_n: { type: Number },
    feed_pending: { type: Boolean },
    moving_to: { type: Schema.Types.Mixed, default: undefined },
    move_pending: { type: Boolean },
    team_id: { type: Schema.Types.ObjectId, default: undefined },
    host_ids: { type: [Schema.Types.ObjectId], default: undefined },
    assignment_reason: { type: String, default: undefined },
    host_events: { type: Schema.Types.Mixed, default: undefined },
    answer_by: { type: Date, default: undefined },
    no_show: { type: String, default: undefined },
  },
  { collection: "bookings", versionKey: false, minimize: false },
);

// Indexes and the queries they serve:
//   (user_id, private_key) unique: the booker's view, cancel and reschedule (findOne by the account the key carries
//       and the key: src/domain/privateKey.ts); unique so a key names one booking; the shard key (docs/operations.md)
//   (user_id, event_id, start_time): every booking of one of the account's events, which the host's lists, counts
//       and attendees are computed from (src/features/bookings/snapshots.ts); its running ones (reminders)
//   (user_id, status, start_time): a host's confirmed bookings around a time span, across all events — the busy
//       list of slot computation and of every booking request
//   (user_id, event_id, updated_at): the bookings of one event changed since a snapshot's last refresh
//   _id: host actions on one booking (PATCH, cancel), with user_id checked on the document; reclaiming cells
//   changes_pending (partial, only true): the outbox relay's "bookings that still owe changes"; tiny, since
//       the relay clears the flag within a poll interval
bookingSchema.index({ user_id: 1, private_key: 1 }, { unique: true });
bookingSchema.index({ user_id: 1, event_id: 1, start_time: 1 });
bookingSchema.index({ user_id: 1, status: 1, start_time: 1 });
bookingSchema.index({ user_id: 1, event_id: 1, updated_at: 1 });
// (host_ids, status, start_time): the confirmed team bookings a host holds besides their own (a collective
//   booking is its first host's; it blocks every host's time) — the busy list's second half
bookingSchema.index({ host_ids: 1, status: 1, start_time: 1 });
// (user_id, start_time, _id) and (host_ids, start_time, _id): the host's desk (GET /api/v1/bookings), every booking
//   the caller holds, newest start (then id) first, one index per branch of its "kept under me or hosted by me"
bookingSchema.index({ user_id: 1, start_time: -1, _id: -1 });
bookingSchema.index({ host_ids: 1, start_time: -1, _id: -1 });
bookingSchema.index({ changes_pending: 1 }, { partialFilterExpression: { changes_pending: true } });
//   feed_pending (partial, only true): the feed's sweep, "bookings whose last changes may not be in the feed yet"
bookingSchema.index({ feed_pending: 1 }, { partialFilterExpression: { feed_pending: true } });
//   move_pending (partial, only true): reschedules whose new booking is not inserted yet (src/features/bookings/moves.ts);
//       empty but for the moment between a move's two writes, or after a crash between them
bookingSchema.index({ move_pending: 1 }, { partialFilterExpression: { move_pending: true } });

// Every update through the model stamps updated_at (src/features/bookings/writes.ts, from Deps.clock): one that
// forgets it fails here rather than leave the booking looking unchanged (raw inserts set it themselves).
bookingSchema.pre(["updateOne", "updateMany", "findOneAndUpdate"], function () {
  const update = this.getUpdate() as { $set?: { updated_at?: unknown } } | null;
  if (!(update?.$set?.updated_at instanceof Date)) throw new Error("a booking update must stamp updated_at");
});

/*
 * One document per reservation key (src/domain/reservation.ts) of a confirmed booking's blocked
 * range. The unique (user_id, key) index is what makes double booking impossible under any
 * concurrency, on real MongoDB and on the embedded server alike: it needs no transaction
 * isolation, only that a unique index refuses a second equal key, which both guarantee.
 */
const bookingCellSchema = new Schema(
  {
    user_id: { type: Schema.Types.ObjectId, required: true },
    key: { type: String, required: true },
    booking_id: { type: Schema.Types.ObjectId, required: true },
    /** When the claim was made: a claim whose booking never appeared is reclaimed only after a grace period. */
    created_at: { type: Date, required: true },
    /**
     * When the database may delete the cell (TTL index): a day after the end of the claiming booking's blocked
     * range. Bookings start in the future and padding is at most 2 hours, so by then no new claim can want the
     * key. Cells written before this field existed have none and are kept.
     */
    expires_at: { type: Date },
    /**
     * A seated slot's time cells (src/features/bookings/cells.ts holdSeat): the prefix of its seat keys. Their holder
     * is the slot, not a booking; they are free once no seat of the slot is held.
     */
    seat_slot: { type: String },
  },
  { collection: "booking_cells", versionKey: false },
);

// Indexes and the queries they serve:
//   (user_id, key) unique: the claim itself; also "who holds these keys?" after a refused claim (key $in)
//   booking_id: releasing a booking's claim on cancel, reschedule and failure (deleteMany / updateMany by booking)
//   expires_at: TTL, so the cells of past bookings leave by themselves (MongoDB's TTL monitor, once a minute;
//     the embedded server keeps the index but deletes nothing: its data lives only as long as the process)
bookingCellSchema.index({ user_id: 1, key: 1 }, { unique: true });
bookingCellSchema.index({ booking_id: 1 });
bookingCellSchema.index({ expires_at: 1 }, { expireAfterSeconds: 0 });

export const BookingModel = mongoose.model<BookingDoc>("Booking", bookingSchema);

/*
 * One document per event whose bookings have changed: a stamp that every write to the event's
 * bookings replaces, after the write. A process keeps a snapshot of an event's bookings for the
 * host's reads and uses it only while the stamp it was loaded under is still the current one.
 * Queries: findOne and upsert by _id (the event id) — the _id index.
 */
const bookingVersionSchema = new Schema(
  {
    _id: { type: Schema.Types.ObjectId, required: true },
    version: { type: String, required: true },
  },
  { collection: "booking_versions", versionKey: false },
);

export const BookingVersionModel = mongoose.model("BookingVersion", bookingVersionSchema);
export const BookingCellModel = mongoose.model("BookingCell", bookingCellSchema);
