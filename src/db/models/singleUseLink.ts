// The single_use_links collection: an event's links that book it once (booking-kinds.md), found by the account their token carries and the token's digest.
import mongoose, { Schema, type InferSchemaType } from "mongoose";

const singleUseLinkSchema = new Schema(
  {
    user_id: { type: Schema.Types.ObjectId, required: true },
    event_id: { type: Schema.Types.ObjectId, required: true },
    /** SHA-256 of the token (domain/singleUseLink.ts linkTokenDigest): the lookup. */
    token_digest: { type: String, required: true },
    /** The token sealed with SECRETS_KEY (domain/secretBox.ts sealWithKeyId), so the host's list can show the url again. */
    token_sealed: { type: String, required: true },
    expires_at: { type: Date, required: true },
    created_at: { type: Date, required: true },
    revoked_at: { type: Date, default: null },
    /** Set once, by the one booking that uses the link (a conditional update: of racing bookings one sets it). */
    used_at: { type: Date, default: null },
    booking_id: { type: Schema.Types.ObjectId, default: null },
  },
  { collection: "single_use_links", versionKey: false },
);

// Indexes and the queries they serve:
//   (user_id, token_digest) unique: a link by its token (the account the token carries, and its digest)
//   (user_id, event_id, created_at desc): an event's links, newest first
singleUseLinkSchema.index({ user_id: 1, token_digest: 1 }, { unique: true });
singleUseLinkSchema.index({ user_id: 1, event_id: 1, created_at: -1 });

export type SingleUseLinkDoc = InferSchemaType<typeof singleUseLinkSchema> & { _id: mongoose.Types.ObjectId };
export const SingleUseLinkModel = mongoose.model("SingleUseLink", singleUseLinkSchema);
