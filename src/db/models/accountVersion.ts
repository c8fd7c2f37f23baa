// The account_versions collection: per account, stamps of what its public slots are computed from, each replaced after every write to it.
import mongoose, { Schema } from "mongoose";

/*
 * One document per account that has changed: `settings` covers the account, its events, schedules and calendars,
 * `bookings` its confirmed bookings (src/db/accountVersions.ts). A stamp is a fresh ObjectId's hex, so no later
 * write can leave one an earlier write left. Queries: findOne and upsert by _id (the user id) — the _id index.
 */
const accountVersionSchema = new Schema(
  {
    _id: { type: Schema.Types.ObjectId, required: true },
    settings: { type: String },
    bookings: { type: String },
  },
  { collection: "account_versions", versionKey: false },
);

export const AccountVersionModel = mongoose.model("AccountVersion", accountVersionSchema);
