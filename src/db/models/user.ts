// The users collection: accounts, their settings, API key digest and encrypted copy, availability.
import mongoose, { Schema, type InferSchemaType } from "mongoose";

const intervalSchema = new Schema({ start: { type: String, required: true }, end: { type: String, required: true } }, { _id: false });

/** Weekly hours and date overrides, as availability and schedules (src/db/models/schedule.ts) store them. */
export const hoursFields = {
  weekly_hours: {
    monday: [intervalSchema],
    tuesday: [intervalSchema],
    wednesday: [intervalSchema],
    thursday: [intervalSchema],
    friday: [intervalSchema],
    saturday: [intervalSchema],
    sunday: [intervalSchema],
  },
  date_overrides: [new Schema({ date: { type: String, required: true }, intervals: [intervalSchema] }, { _id: false })],
};

const availabilitySchema = new Schema(
  {
    ...hoursFields,
    minimum_notice_minutes: { type: Number, required: true },
    booking_window_days: { type: Number, required: true },
  },
  { _id: false },
);

const userSchema = new Schema(
  {
    email: { type: String, required: true },
    full_name: { type: String, required: true },
    url: { type: String, required: true },
    /** What the url reads as in lowercase (domain/urlKey.ts userUrlKey): uniqueness is case- and look-alike-insensitive; pages are found by it. */
    url_key: { type: String, required: true },
    /** What the url reads as with its case (userUrlShape): `biII` shows as `bill`. Absent on a url stored before the rule until start re-keys it. */
    url_shape: { type: String },
    /** What the url reads as with its case kept, as typed, in capitals and in small letters (urlLooks): each claimed. Absent before rule 4 until start re-keys it. */
    url_looks: { type: [String], default: undefined },
    /** The url rule url_key, url_shape and url_looks were made by (domain/urlKey.ts URL_RULE); absent: before the confusable skeleton. */
    url_rule: { type: Number },
    bio: { type: String, default: null },
    designation: { type: String, default: "" },
    timezone: { type: String, required: true },
    time_format: { type: String, required: true },
    date_format: { type: String, required: true },
    locale: { type: String, required: true },
    currency: { type: String, required: true },
    country_iso_code: { type: String, default: null },
    calendar_view: { type: String, required: true },
    start_day_of_week: { type: Number, required: true },
    events_layout: { type: String, required: true },
    show_message_button_on_profile: { type: Boolean, default: false },
    show_message_button_on_events: { type: Boolean, default: false },
    /** SHA-256 hex of the API key: the only form a key is looked up by. */
    api_key_digest: { type: String, required: true },
    /** AES-256-GCM copy of the key, so GET /user can show it. */
    api_key_encrypted: { type: String, required: true },
    /** Id of the current picture document, or null. */
    picture_id: { type: String, default: null },
    /** The pages' accent colour, "#rrggbb", or null. */
    brand_color: { type: String, default: null },
    /** Id of the brand logo's picture document (the pictures collection), or null. */
    logo_id: { type: String, default: null },
    availability: { type: availabilitySchema, required: true },
    created_at: { type: Date, required: true },
  },
  { collection: "users", versionKey: false },
);

// Indexes and the queries they serve:
//   _id:            the account (the shard key: docs/operations.md); found by its e-mail, url or API key through
//                   account_keys (src/db/models/accountKey.ts), which also keeps those unique
//   url_rule, _id:  the re-keying at start (features/accounts/writes.ts): users of an older rule, oldest first
userSchema.index({ url_rule: 1, _id: 1 });

export type UserDoc = InferSchemaType<typeof userSchema> & { _id: mongoose.Types.ObjectId };
export const UserModel = mongoose.model("User", userSchema);
