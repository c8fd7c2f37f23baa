// The idempotency_keys collection: each Idempotency-Key a caller used on a write, the run holding it or the answer it got, for 24 hours.
import mongoose, { Schema } from "mongoose";

/** A key as stored; written whole (insertOne), so it is declared rather than inferred. */
export interface IdempotencyKeyDoc {
  /** SHA-256 of the caller and the key (src/platform/transport/idempotency.ts): neither is stored as sent. */
  _id: string;
  /** SHA-256 of the method and the request: a repeat with another body is refused. */
  fingerprint: string;
  /** running until the first answer is kept, then done; released when the run answered what a retry should not hear again (the next run takes it). */
  state: "running" | "done" | "released";
  /** The run that holds the key: only it may keep its answer or let the key go. */
  token: string;
  /** Until when the run holds the key; past it (its replica died), a repeat may take the key over. */
  lease_until: Date;
  /** The kept answer (src/platform/transport/idempotency.ts KeptAnswer), once done. */
  answer: Record<string, unknown> | null;
  /** The key's first use: its day, kept by every run within it (src/db/idempotency.ts). */
  created_at: Date;
  /** created_at + 24 hours. TTL index; queries check it too, since the embedded server keeps TTL indexes but deletes nothing. */
  expires_at: Date;
}

const keySchema = new Schema<IdempotencyKeyDoc>(
  {
    _id: { type: String, required: true },
    fingerprint: { type: String, required: true },
    state: { type: String, required: true },
    token: { type: String, required: true },
    lease_until: { type: Date, required: true },
    answer: { type: Schema.Types.Mixed, default: null },
    created_at: { type: Date, required: true },
    expires_at: { type: Date, required: true },
  },
  { collection: "idempotency_keys", versionKey: false },
);

// _id: every read and write goes by it. expires_at: TTL, keys leave after their 24 hours.
keySchema.index({ expires_at: 1 }, { expireAfterSeconds: 0 });

export const IdempotencyKeyModel = mongoose.model<IdempotencyKeyDoc>("IdempotencyKey", keySchema);
