// The calendar_connections and calendars collections: a host's CalDAV accounts, iCalendar feeds and OAuth calendar accounts (Google), and their calendars.
import mongoose, { Schema, type InferSchemaType } from "mongoose";
import { noticeClaimFields, noticeOwedFields, noticeOwedIndex } from "./noticeOwed.js";

const connectionSchema = new Schema(
  {
    user_id: { type: Schema.Types.ObjectId, required: true },
    /** caldav, ics, or a provider that connects through OAuth (google) */
    provider: { type: String, required: true },
    /** The CalDAV user name; for a feed its host name; for OAuth the provider account's e-mail. Shown; never a secret. */
    account: { type: String, required: true },
    /**
     * The credentials as JSON ({server_url, username, password}, {url}, or OAuth tokens {access_token, refresh_token,
     * expires_at, scope}), sealed with AES-256-GCM under a key id (src/domain/secretBox.ts). A feed's URL is its
     * secret, so it is sealed too.
     */
    credentials_sealed: { type: String, required: true },
    /** OAuth: the provider account's stable id, so authorizing the same account again repairs this connection. */
    provider_account_id: { type: String, default: null },
    /**
     * OAuth connections made since the unique (user_id, provider, provider_account_id) index: of two authorizations
     * of one provider account landing at once, one makes the connection and the other repairs it. Absent on
     * connections an earlier version made (two such landings could make two), which the index leaves as they are.
     */
    identity_claimed: { type: Boolean },
    /** The provider asked us to wait (429 / rate limit with Retry-After): no call before this. */
    blocked_until: { type: Date, default: null },
    /** ok, error or invalid */
    status: { type: String, required: true },
    last_error: { type: String, default: null },
    last_synced_at: { type: Date, default: null },
    /** When the host was last e-mailed about each kind of trouble (at most once a day each; features/notices). */
    notified_at: {
      error: { type: Date, default: null },
      invalid: { type: Date, default: null },
      warnings: { type: Date, default: null },
    },
    ...noticeOwedFields,
    ...noticeClaimFields,
    created_at: { type: Date, required: true },
  },
  { collection: "calendar_connections", versionKey: false },
);

// Indexes and the queries they serve:
//   (user_id, created_at desc): GET /calendar_connections newest first; one connection by _id with its owner checked
//   provider_account_id: whether another account of ours holds the same provider account (revocation on disconnect)
//   (user_id, provider, provider_account_id) unique among identity_claimed: of racing OAuth authorizations of one
//   provider account, one makes the connection and the others repair it (they find it by the first index)
//   notice_owed_at (partial): the notices' sweep (connections whose change of status was not planned yet)
connectionSchema.index({ user_id: 1, created_at: -1 });
connectionSchema.index({ provider_account_id: 1 });
connectionSchema.index({ user_id: 1, provider: 1, provider_account_id: 1 }, { unique: true, partialFilterExpression: { identity_claimed: true } });
connectionSchema.index(...noticeOwedIndex);

const calendarSchema = new Schema(
  {
    user_id: { type: Schema.Types.ObjectId, required: true },
    connection_id: { type: Schema.Types.ObjectId, required: true },
    provider: { type: String, required: true },
    name: { type: String, required: true },
    email: { type: String, default: null },
    can_write: { type: Boolean, required: true },
    check_for_conflicts: { type: Boolean, required: true },
    /** The calendar collection's URL (CalDAV); for a feed the feed itself, which lives sealed on the connection. */
    url: { type: String, default: null },
    /** What could not be read of it at its last read (events left out), in plain words; shown on its connection. */
    warnings: { type: [String], default: [] },
    /** A change of warnings owes its connection's notices (their e-mail's claim is kept on the connection). */
    ...noticeOwedFields,
    created_at: { type: Date, required: true },
  },
  { collection: "calendars", versionKey: false },
);

// Indexes and the queries they serve:
//   (user_id, check_for_conflicts): the calendars whose busy times block a host's slots (every listing and booking);
//       also a calendar by _id with its owner checked
//   (user_id, created_at): GET /calendars and the connections' listing, in the order they answer in
//   (user_id, connection_id): a connection's calendars (disconnecting, authorizing again, the host's notices), on
//       the account's shard
//   notice_owed_at (partial): the notices' sweep (calendars whose change of warnings was not planned yet)
calendarSchema.index({ user_id: 1, check_for_conflicts: 1 });
calendarSchema.index({ user_id: 1, created_at: 1 });
calendarSchema.index({ user_id: 1, connection_id: 1 });
calendarSchema.index(...noticeOwedIndex);

export type CalendarConnectionDoc = InferSchemaType<typeof connectionSchema> & { _id: mongoose.Types.ObjectId };
export type CalendarDoc = InferSchemaType<typeof calendarSchema> & { _id: mongoose.Types.ObjectId };
export const CalendarConnectionModel = mongoose.model("CalendarConnection", connectionSchema);
export const CalendarModel = mongoose.model("Calendar", calendarSchema);
