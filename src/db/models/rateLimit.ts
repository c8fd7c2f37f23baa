// The rate_limits collection: how many requests of one caller's fixed window the replicas have handed out between them.
import mongoose, { Schema } from "mongoose";

const rateLimitSchema = new Schema(
  {
    /** "<scope>:<caller>:<window start in ms>": one document per caller and window (a count, or a caller's mark). */
    _id: { type: String, required: true },
    /** Requests reserved by all replicas in this window (each reserves a lease of several at once). */
    count: { type: Number, required: true },
    /** A caller's mark in a limit of distinct callers (features/accounts/rateLimit.ts DistinctInWindow): pending, admitted or refused; absent on counts. */
    state: { type: String },
    /** When the window's document may go: the window's end plus a margin for clock skew. */
    expires_at: { type: Date, required: true },
  },
  { collection: "rate_limits", versionKey: false },
);

// _id: every reservation (findOneAndUpdate by _id, upsert). expires_at: TTL, so old windows leave by themselves.
rateLimitSchema.index({ expires_at: 1 }, { expireAfterSeconds: 0 });

export type RateLimitDoc = { _id: string; count: number; expires_at: Date };
export const RateLimitModel = mongoose.model("RateLimit", rateLimitSchema);
