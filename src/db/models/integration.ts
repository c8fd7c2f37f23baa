// The integrations collection (a host's video-meeting provider, one per account and kind) and meeting_accounts (video-meeting accounts authorized through OAuth: Zoom).
import mongoose, { Schema, type InferSchemaType } from "mongoose";
import { noticeClaimFields, noticeOwedFields, noticeOwedIndex } from "./noticeOwed.js";

const integrationSchema = new Schema(
  {
    user_id: { type: Schema.Types.ObjectId, required: true },
    /** conference */
    name: { type: String, required: true },
    /** jitsi or zoom */
    provider: { type: String, required: true },
    /** Jitsi's server; for an OAuth provider its API root. */
    base_url: { type: String, required: true },
    /** For an OAuth provider: the authorized account's e-mail (its meeting_accounts document holds the tokens). */
    account: { type: String, default: null },
    connected_at: { type: Date, required: true },
  },
  { collection: "integrations", versionKey: false },
);

// (user_id, name) unique: GET /integrations (user_id prefix), connect as an upsert and disconnect by name, and the
// check that the conference location may be used; unique so an account has one integration of each kind.
integrationSchema.index({ user_id: 1, name: 1 }, { unique: true });

export type IntegrationDoc = InferSchemaType<typeof integrationSchema> & { _id: mongoose.Types.ObjectId };
export const IntegrationModel = mongoose.model("Integration", integrationSchema);

const meetingAccountSchema = new Schema(
  {
    user_id: { type: Schema.Types.ObjectId, required: true },
    /** zoom */
    provider: { type: String, required: true },
    /** The provider's id of the account: authorizing the same one again replaces the tokens. */
    provider_account_id: { type: String, required: true },
    /** The account's e-mail, shown on the integration. */
    account: { type: String, required: true },
    /** The OAuth tokens as JSON, sealed like calendar credentials (src/domain/secretBox.ts). */
    credentials_sealed: { type: String, required: true },
    /** ok, error or invalid (the grant was revoked or expired: authorize again) */
    status: { type: String, required: true },
    last_error: { type: String, default: null },
    /** The provider asked us to wait (429 with Retry-After): no call before this. */
    blocked_until: { type: Date, default: null },
    /** When the host was last e-mailed about each kind of trouble (at most daily: features/notices). */
    notified_at: {
      error: { type: Date, default: null },
      invalid: { type: Date, default: null },
    },
    ...noticeOwedFields,
    ...noticeClaimFields,
    connected_at: { type: Date, required: true },
  },
  { collection: "meeting_accounts", versionKey: false },
);

// (user_id, provider) unique: one account per provider and host, found by both; provider_account_id: whether another
// account of ours holds the same provider account (revocation on disconnect); notice_owed_at (partial): the notices'
// sweep (accounts whose change of status was not planned yet).
meetingAccountSchema.index({ user_id: 1, provider: 1 }, { unique: true });
meetingAccountSchema.index({ provider_account_id: 1 });
meetingAccountSchema.index(...noticeOwedIndex);

export type MeetingAccountDoc = InferSchemaType<typeof meetingAccountSchema> & { _id: mongoose.Types.ObjectId };
export const MeetingAccountModel = mongoose.model("MeetingAccount", meetingAccountSchema);
