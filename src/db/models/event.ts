// The events collection: bookable meeting types of a user, soft-deleted with deleted_at.
import mongoose, { Schema, type InferSchemaType } from "mongoose";

const locationSchema = new Schema(
  {
    name: { type: String, required: true },
    details: { type: String, default: null },
    selected_option: { type: String, default: null },
    host_contact_number: { type: String, default: null },
    invitee_contact_number: { type: String, default: null },
  },
  { _id: false },
);

const eventSchema = new Schema(
  {
    user_id: { type: Schema.Types.ObjectId, required: true },
    name: { type: String, required: true },
    url: { type: String, required: true },
    /** What the url reads as in lowercase (domain/urlKey.ts urlKey): uniqueness among a user's undeleted events is case- and look-alike-insensitive. */
    url_key: { type: String, required: true },
    /** What the url reads as with its case (urlShape): `aIice` shows as `alice`. Absent before rule 4 until start re-keys it. */
    url_shape: { type: String },
    /** What the url reads as with its case kept, as typed, in capitals and in small letters (urlLooks), checked by the events' writer. */
    url_looks: { type: [String], default: undefined },
    /** The url rule url_key was made by (domain/urlKey.ts URL_RULE); absent: NFKC and lowercase only, before the skeleton. */
    url_rule: { type: Number },
    /** Minutes (the API's tokens such as "30_minutes" are mapped in the domain layer). */
    slot_minutes: { type: Number, required: true },
    /**
     * The lengths a booker may choose (booking-kinds.md), slot_minutes being the first; absent on events written
     * before them (domain/lengths.ts eventDurations reads those as [slot_minutes]).
     */
    durations: { type: [Number], default: undefined },
    /** Minutes between slot starts, or null: the chosen length. */
    slot_interval_minutes: { type: Number, default: null },
    padding_minutes: { type: Number, required: true },
    color: { type: String, required: true },
    description: { type: String, default: null },
    location: { type: locationSchema, required: true },
    active: { type: Boolean, required: true },
    is_public: { type: Boolean, required: true },
    enable_guest_emails: { type: Boolean, required: true },
    guest_emails_limit: { type: Number, required: true },
    connected_calendar_id: { type: String, required: true },
    /**
     * Event rules (src/domain/eventRules.ts). Absent on events written before them: storedRules reads them as
     * no buffer, the account's notice, window and hours, no limits and no cancel notice.
     */
    buffer_before_minutes: { type: Number, default: 0 },
    minimum_notice_minutes: { type: Number, default: null },
    booking_window_days: { type: Number, default: null },
    /** A schedule's id (hex), or null for the account's availability. */
    schedule_id: { type: String, default: null },
    daily_limit: { type: Number, default: null },
    weekly_limit: { type: Number, default: null },
    cancel_notice_minutes: { type: Number, default: null },
    /** Seats and requests (src/domain/eventRules.ts; absent on older events: storedRules reads the defaults). */
    seats_per_slot: { type: Number, default: null },
    show_attendees_to_attendees: { type: Boolean, default: false },
    requires_confirmation: { type: Boolean, default: false },
    confirmation_hours: { type: Number, default: 24 },
    /**
     * A team event (teams.md): its user_id is the team's id (the team is the account its url is unique in), and
     * these say how it is booked. Null on personal events.
     */
    team_id: { type: Schema.Types.ObjectId, default: null },
    scheduling: { type: String, default: null },
    hosts: { type: [new Schema({ user_id: { type: Schema.Types.ObjectId, required: true }, priority: { type: Number, required: true }, weight: { type: Number, required: true } }, { _id: false })], default: undefined },
    reschedule_with_same_host: { type: Boolean, default: false },
    created_at: { type: Date, required: true },
    deleted_at: { type: Date, default: null },
    /** Mirrors deleted_at != null: partial index filters accept `field: false` on every MongoDB version, not `null` tests. */
    deleted: { type: Boolean, default: false },
  },
  { collection: "events", versionKey: false },
);

// Indexes and the queries they serve:
//   (user_id, url_key) unique where deleted is false: url uniqueness among undeleted events, and the public
//       booking page lookup (user, url) — the partial filter makes the database itself refuse a duplicate url
//   (user_id, url_shape) unique where deleted is false and the shape is there (events of rule 4 on): no url shows
//       as another's (`aIice` beside `alice`); the looks are checked by the writer against the (user_id, ...) prefix
//   (user_id, created_at desc): GET /events, newest first
//   (url_rule, _id): the re-keying at start (features/events/writes.ts rekeyEventUrls): events of an older rule, oldest first
eventSchema.index({ user_id: 1, url_key: 1 }, { unique: true, partialFilterExpression: { deleted: false } });
eventSchema.index({ user_id: 1, url_shape: 1 }, { unique: true, partialFilterExpression: { deleted: false, url_shape: { $exists: true } } });
eventSchema.index({ user_id: 1, created_at: -1 });
eventSchema.index({ url_rule: 1, _id: 1 });

export type EventDoc = InferSchemaType<typeof eventSchema> & { _id: mongoose.Types.ObjectId };
export const EventModel = mongoose.model("Event", eventSchema);
