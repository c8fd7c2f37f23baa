// Finding accounts by the values that name them (e-mail, what a url reads as, an API key's digest) through account_keys: a lookup by _id on one shard, and the account itself checked to still hold the value.
import type mongoose from "mongoose";
import { AccountKeyModel, KEY_FIELD, keyId, type AccountKeyDoc, type AccountKeyKind } from "../../db/models/accountKey.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";

/**
 * The accounts holding these values of one kind, by value. Straight to the driver's collections: the filters are
 * ours (values we computed, nothing to cast) and the raw documents are what lean() would return; every
 * authenticated request that misses the account cache comes here. A claim whose account no longer holds the value
 * (a write that did not finish) names nobody. `fields`: the account's fields wanted (all when omitted).
 */
export async function accountsByKey<K extends keyof UserDoc>(kind: AccountKeyKind, values: readonly string[], fields?: readonly K[]): Promise<Map<string, UserDoc>> {
  if (values.length === 0) return new Map();
  // _id index.
  const ids = values.map((v) => keyId(kind, v));
  const claims = (await AccountKeyModel.collection.find({ _id: { $in: ids } } as object, { projection: { user_id: 1 } }).toArray()) as unknown as AccountKeyDoc[];
  if (claims.length === 0) return new Map();
  const field = KEY_FIELD[kind];
  const projection = fields === undefined ? undefined : Object.fromEntries([...fields, field].map((f) => [f, 1]));
  // _id index.
  const users = await UserModel.collection.find({ _id: { $in: claims.map((c) => c.user_id) } }, { projection }).toArray() as unknown as UserDoc[];
  const wanted = new Set(values);
  // A field holding several values (url_looks) names the account by each.
  return new Map(users.flatMap((u) => [u[field]].flat().filter((v): v is string => typeof v === "string" && wanted.has(v)).map((v) => [v, u] as [string, UserDoc])));
}

/** The account whose url reads as `urlKey` (userUrlKey), or null. */
export async function accountByUrlKey(urlKey: string): Promise<UserDoc | null> {
  return (await accountsByKey("url", [urlKey])).get(urlKey) ?? null;
}

/** Whether another account than `userId` holds one of these values (its claim not left over). */
export async function heldByAnother(userId: mongoose.Types.ObjectId, values: ReadonlyArray<readonly [AccountKeyKind, string]>): Promise<boolean> {
  for (const [kind, value] of values) {
    const holder = (await accountsByKey(kind, [value], ["_id"])).get(value);
    if (holder && !holder._id.equals(userId)) return true;
  }
  return false;
}
