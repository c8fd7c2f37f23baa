// The booking_changes collection: each account's feed of booking changes (callers.md "Booking changes"), in buckets of consecutive changes.
import mongoose, { Schema } from "mongoose";
import type { FeedChangeType } from "../../domain/bookingFeed.js";

/** One change as the feed keeps it: the booking as stored right after the change. */
export interface FeedEntry {
  /** The change's id (src/domain/bookingFeed.ts FeedOwed): it enters the feed once. */
  key: string;
  type: FeedChangeType;
  at: Date;
  /** The booking document after the change, without what it records for the outbox and the feed. */
  booking: Record<string, unknown>;
  previous_booking_id?: string;
}

/**
 * A bucket: the changes `first` .. `next - 1` of one account, by number. Why buckets and not one document per
 * change: the embedded server spends time on every write in proportion to the number of documents in the collection
 * (bench/RESULTS.md, bench:embedded), so a feed of 10 000 changes would make every booking's answer seconds slower;
 * in buckets of BUCKET_SIZE it is 200 documents. On MongoDB it is the bucket pattern: one index entry per bucket.
 */
export interface FeedBucketDoc {
  _id: mongoose.Types.ObjectId;
  user_id: mongoose.Types.ObjectId;
  /** 0, 1, ...: the bucket holding changes block * BUCKET_SIZE + 1 .. (block + 1) * BUCKET_SIZE. */
  block: number;
  /** The number the next change appended gets: the compare-and-set every append is conditional on. */
  next: number;
  /** The changes by their number ("17"). */
  changes: Record<string, FeedEntry>;
  /** The changes' keys, each with its number: a change already in the bucket is not appended again. */
  keys: Record<string, number>;
  created_at: Date;
  updated_at: Date;
  /**
   * The `at` of the last change appended to the account's feed (carried into each new bucket): a change appended
   * after another is shown as at least as late, so occurred_at never goes back in the feed's order. Absent in
   * buckets written before it was kept.
   */
  last_at?: Date;
  /** Set when the bucket stops being the account's newest: its last change's time plus the retention. TTL index. */
  expires_at: Date | null;
}

export const BUCKET_SIZE = 50;

const bucketSchema = new Schema<FeedBucketDoc>(
  {
    user_id: { type: Schema.Types.ObjectId, required: true },
    block: { type: Number, required: true },
    next: { type: Number, required: true },
    changes: { type: Schema.Types.Mixed, default: {} },
    keys: { type: Schema.Types.Mixed, default: {} },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
    last_at: { type: Date },
    expires_at: { type: Date, default: null },
  },
  { collection: "booking_changes", versionKey: false, minimize: false },
);

// (user_id, block) unique: the account's buckets by number, its newest first for an append; the shard key
// (docs/operations.md), so one account's feed is on its shard and a big one spreads over chunks. expires_at: TTL;
// the newest bucket has none, so the feed's position survives any idle time.
bucketSchema.index({ user_id: 1, block: 1 }, { unique: true });
bucketSchema.index({ expires_at: 1 }, { expireAfterSeconds: 0 });

export const BookingChangeModel = mongoose.model<FeedBucketDoc>("BookingChange", bucketSchema);
