// The booking_keys collection: the private keys made before a key carried its account (src/domain/privateKey.ts), each the _id of a document naming the booking's account, so a lookup by such a key goes to one shard too.
import mongoose, { Schema } from "mongoose";

/*
 * Filled at start (features/bookings/keys.ts copyOlderKeys) from the bookings whose key does not name their
 * account; nothing else writes it. Queries: findOne by _id (the key) — the _id index.
 */
const bookingKeySchema = new Schema(
  {
    /** The private key itself. */
    _id: { type: String, required: true },
    user_id: { type: Schema.Types.ObjectId, required: true },
  },
  { collection: "booking_keys", versionKey: false },
);

export const BookingKeyModel = mongoose.model("BookingKey", bookingKeySchema);
