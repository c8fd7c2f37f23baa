// The account_keys collection: every value that names one account across all of them (its e-mail, what its url reads as, its API key's digest), each the _id of a small document naming the account, so uniqueness needs no index beyond _id and a lookup by the value goes to one shard.
import mongoose, { Schema } from "mongoose";

/** The kinds of value, as the prefix of an _id ("email:ada@example.com"). */
export type AccountKeyKind = "email" | "url" | "shape" | "look" | "key";

/** The account's field (users) that holds each kind of value (url_looks: several, each claimed). */
export const KEY_FIELD = { email: "email", url: "url_key", shape: "url_shape", look: "url_looks", key: "api_key_digest" } as const;

/** The _id of a value's claim. */
export const keyId = (kind: AccountKeyKind, value: string): string => `${kind}:${value}`;

export interface AccountKeyDoc {
  /** "<kind>:<value>": e-mail, url_key, url_shape, one of url_looks, api_key_digest. */
  _id: string;
  user_id: mongoose.Types.ObjectId;
  /** When it was claimed: a claim whose account does not hold the value is taken back only once it is this old (a write in flight). */
  at: Date;
}

/*
 * Written only by src/features/accounts/writes.ts: a claim before the account takes the value (a duplicate _id:
 * another account holds it), the old value let go after. The account's own fields stay the truth: a lookup reads
 * the account it names and checks that it still holds the value. Queries: by _id ($in) — the _id index.
 */
const accountKeySchema = new Schema<AccountKeyDoc>(
  {
    _id: { type: String, required: true },
    user_id: { type: Schema.Types.ObjectId, required: true },
    at: { type: Date, required: true },
  },
  { collection: "account_keys", versionKey: false },
);

export const AccountKeyModel = mongoose.model<AccountKeyDoc>("AccountKey", accountKeySchema);
