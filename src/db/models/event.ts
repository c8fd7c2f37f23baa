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
    /** Lowercased url: uniqueness among a user's undeleted events is case-insensitive. */
    url_key: { type: String, required: true },
    /** Minutes (the API's tokens such as "30_minutes" are mapped in the domain layer). */
    slot_minutes: { type: Number, required: true },
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
//   (user_id, created_at desc): GET /events, newest first
eventSchema.index({ user_id: 1, url_key: 1 }, { unique: true, partialFilterExpression: { deleted: false } });
eventSchema.index({ user_id: 1, created_at: -1 });

export type EventDoc = InferSchemaType<typeof eventSchema> & { _id: mongoose.Types.ObjectId };
export const EventModel = mongoose.model("Event", eventSchema);
