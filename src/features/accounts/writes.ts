// The one writer of accounts (users, and account_keys, which keeps the values naming one account unique): every write to an account ends in its follow-up duty, the account's stamp and the account cache's lease waited out, so no write path can forget it.
import { systemClock } from "../../domain/clock.js";
import mongoose from "mongoose";
import { accountChanged } from "../../db/accountVersions.js";
import { isDuplicateKeyError, onlyDuplicateKeys } from "../../db/errors.js";
import { AccountKeyModel, KEY_FIELD, keyId, type AccountKeyDoc, type AccountKeyKind } from "../../db/models/accountKey.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { URL_RULE, userUrlKeys } from "../../domain/urlKey.js";
import { REASONS, refusal } from "../../domain/errors.js";

/** How long a replica may answer from an account as it read it (ACCOUNT_CACHE_MS; `Access` holds it). */
export interface AccountLease {
  readonly accountLeaseMs: number;
}

/**
 * The follow-up of every write to an account that has committed: the account's stamp tells every replica's public
 * reads of it (src/db/accountVersions.ts), and waiting out the lease makes every replica's cached copy of the
 * account as it was expire before the caller learns of the write (src/features/accounts/context.ts, AccountLookup).
 * A write that did not happen needs neither.
 */
async function settle(lease: AccountLease, userId: mongoose.Types.ObjectId): Promise<void> {
  await accountChanged([userId], "settings");
  // Timers count from the event loop's cached clock and may fire a little early; the lease is checked against
  // performance.now(), so the wait is too.
  const until = performance.now() + lease.accountLeaseMs;
  for (let left = lease.accountLeaseMs; left > 0; left = until - performance.now()) {
    await new Promise((resolve) => setTimeout(resolve, Math.ceil(left)));
  }
}

/** A value another account holds: the write did not happen. */
export class AccountKeyTaken extends Error {
  constructor(readonly kind: AccountKeyKind) {
    super(`${kind} is held by another account`);
  }
}

/** True when a write failed because the url reads as another account's (its key, shape or one of its looks is taken). */
export function isUserUrlTaken(err: unknown): boolean {
  return err instanceof AccountKeyTaken && (err.kind === "url" || err.kind === "shape" || err.kind === "look");
}

/** A claim this old whose account does not hold its value is left over from a write that did not finish, and is taken back. */
const LEFT_OVER_MS = 60_000;

/** The values of `fields` that name one account (account_keys), by kind; a field holding several (url_looks) gives each. */
function keysOf(fields: mongoose.AnyKeys<UserDoc>): Array<[AccountKeyKind, string]> {
  return (Object.entries(KEY_FIELD) as Array<[AccountKeyKind, keyof UserDoc]>).flatMap(([kind, field]) => {
    const value: unknown = fields[field];
    const values: unknown[] = Array.isArray(value) ? [...new Set(value)] : [value];
    return values.filter((v): v is string => typeof v === "string").map((v) => [kind, v] as [AccountKeyKind, string]);
  });
}

/**
 * Claims the value for the account: its _id in account_keys is unique, so of two accounts claiming one value one
 * gets it. A claim the account made before (a write that did not finish) is its own again; another account's
 * claim is taken back only when it is left over (old, and that account does not hold the value).
 */
async function claim(userId: mongoose.Types.ObjectId, kind: AccountKeyKind, value: string): Promise<void> {
  const _id = keyId(kind, value);
  for (let round = 0; round < 3; round++) {
    // The system's clock: a claim's age tells a write that crashed from one under way (LEFT_OVER_MS), across
    // processes and restarts, as real time does; nothing a test moves.
    const now = systemClock.now();
    try {
      await (AccountKeyModel.collection as unknown as mongoose.mongo.Collection<AccountKeyDoc>).insertOne({ _id, user_id: userId, at: now });
      return;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
    // _id index.
    const holder = await AccountKeyModel.findById(_id).lean<AccountKeyDoc>();
    if (!holder) continue;
    if (holder.user_id.equals(userId)) return;
    // _id index.
    const holds = (await UserModel.exists({ _id: holder.user_id, [KEY_FIELD[kind]]: value })) !== null;
    if (holds || now.getTime() - holder.at.getTime() < LEFT_OVER_MS) throw new AccountKeyTaken(kind);
    // _id index; only that very claim.
    await AccountKeyModel.deleteOne({ _id, user_id: holder.user_id, at: holder.at });
  }
  throw new AccountKeyTaken(kind);
}

/** Lets go of the account's claims of these values (never another account's). */
async function letGo(userId: mongoose.Types.ObjectId, keys: ReadonlyArray<[AccountKeyKind, string]>): Promise<void> {
  if (keys.length === 0) return;
  // _id index.
  await AccountKeyModel.deleteMany({ _id: mongoose.trusted({ $in: keys.map(([kind, value]) => keyId(kind, value)) }), user_id: userId });
}

/**
 * Writes the account with the values that name it kept unique: the new values of `set` claimed first (throws
 * AccountKeyTaken when another account holds one), then `write` (false: it did not happen), then the old values
 * let go. A write that failed lets go of what it claimed.
 */
async function withKeys<T>(userId: mongoose.Types.ObjectId, before: mongoose.AnyKeys<UserDoc>, set: mongoose.AnyKeys<UserDoc>, write: () => Promise<T | null>): Promise<T | null> {
  const old = keysOf(before);
  const wanted = keysOf(set);
  const has = (keys: ReadonlyArray<[AccountKeyKind, string]>, [kind, value]: [AccountKeyKind, string]) => keys.some(([k, v]) => k === kind && v === value);
  const fresh = wanted.filter((key) => !has(old, key));
  const claimed: Array<[AccountKeyKind, string]> = [];
  let written: T | null = null;
  try {
    for (const [kind, value] of fresh) {
      await claim(userId, kind, value);
      claimed.push([kind, value]);
    }
    written = await write();
  } finally {
    if (written === null) await letGo(userId, claimed);
  }
  // The values the write replaced: of the kinds it set, those the account no longer holds.
  if (written !== null) await letGo(userId, old.filter((key) => wanted.some(([kind]) => kind === key[0]) && !has(wanted, key)));
  return written;
}

/**
 * A new account, its e-mail, url and API key claimed first. No follow-up: nothing anywhere holds an account that
 * did not exist (unknown keys are never cached, and no stamp or kept read names its id). Throws AccountKeyTaken
 * for a taken e-mail or url.
 */
export async function insertAccount(fields: mongoose.AnyKeys<UserDoc>): Promise<UserDoc> {
  const _id = new mongoose.Types.ObjectId();
  const created = await withKeys(_id, {}, fields, async () => (await UserModel.create({ ...fields, _id })).toObject() as UserDoc);
  return created as UserDoc;
}

/** Sets the account's fields; the account as it now is, or null when it is gone. Throws AccountKeyTaken for a taken url. */
export async function updateAccount(lease: AccountLease, userId: mongoose.Types.ObjectId, set: mongoose.AnyKeys<UserDoc>): Promise<UserDoc | null> {
  const keyed = keysOf(set).length > 0;
  // _id index: the values it holds now, when the write changes any.
  const before = keyed ? await UserModel.findById(userId, KEY_FIELD_PROJECTION).lean<UserDoc>() : null;
  if (keyed && !before) return null;
  // _id index. One round trip: the write answers with the document as it now is.
  const updated = await withKeys(userId, before ?? {}, set, () => UserModel.findOneAndUpdate({ _id: userId }, { $set: set }, { returnDocument: "after" }).lean<UserDoc>());
  if (updated) await settle(lease, userId);
  return updated;
}

const KEY_FIELD_PROJECTION = Object.fromEntries(Object.values(KEY_FIELD).map((f) => [f, 1]));

/** Tries of one picture swap racing others of the same account. */
const SWAP_ATTEMPTS = 8;

/**
 * Points the account's picture field at `publicId` (or at none); answers what it pointed at before (undefined: no
 * such account). Of racing swaps each sees a different "before": the write is conditional on the value read (not a
 * findAndModify, whose condition the embedded server drops: src/db/takeOnce.ts), and a swap that lost reads again.
 */
export async function swapAccountPicture(lease: AccountLease, userId: mongoose.Types.ObjectId, field: "picture_id" | "logo_id", publicId: string | null): Promise<string | null | undefined> {
  for (let attempt = 1; ; attempt++) {
    // _id index.
    const read = await UserModel.findById(userId, { [field]: 1 }).lean<Pick<UserDoc, typeof field>>();
    if (!read) return undefined;
    const before = read[field] ?? null;
    // _id index; null matches a field never set as well.
    const swapped = await UserModel.updateOne({ _id: userId, [field]: before }, { $set: { [field]: publicId } });
    if (swapped.matchedCount === 1) {
      await settle(lease, userId);
      return before;
    }
    if (attempt === SWAP_ATTEMPTS) throw refusal(REASONS.changedMeanwhile, "the account was changed meanwhile; try again");
  }
}

/**
 * Replaces the account's API key, conditional on the digest it had: of two concurrent replacements with the same
 * old key only one succeeds. False when the key was no longer the account's.
 */
export async function replaceApiKey(lease: AccountLease, user: Pick<UserDoc, "_id" | "api_key_digest">, key: Pick<UserDoc, "api_key_digest" | "api_key_encrypted">): Promise<boolean> {
  const replaced = await withKeys(user._id, { api_key_digest: user.api_key_digest }, key, async () => {
    // _id index.
    const res = await UserModel.updateOne({ _id: user._id, api_key_digest: user.api_key_digest }, { $set: key });
    return res.modifiedCount === 1 ? true : null;
  });
  if (!replaced) return false;
  await settle(lease, user._id);
  return true;
}

/**
 * Re-keys every user whose url forms were made by an older rule: none, once done (they carry url_rule). Of two stored
 * urls the rule now makes one (`bob1` and `bobl`; an old look-alike of another account's url), the account that holds
 * the key already keeps it (else the older one); the other keeps its old key, so its page is the first one's from
 * now on, and `warn` names it on every start for an operator to rename. Runs on every start, on every replica,
 * before the port opens: the stamp is the follow-up (no request has read the account through this process yet).
 */
export async function rekeyUserUrls(warn: (message: string) => void): Promise<number> {
  // (url_rule, _id) index: the users not marked with this rule, oldest first.
  const users = await UserModel.find({ url_rule: mongoose.trusted({ $ne: URL_RULE }) }, { url: 1, url_key: 1, url_shape: 1, url_looks: 1 }).sort({ _id: 1 }).lean<Pick<UserDoc, "_id" | "url" | "url_key" | "url_shape" | "url_looks">[]>();
  let changed = 0;
  for (const u of users) {
    try {
      // _id index; only if the url did not change meanwhile.
      const written = await withKeys(u._id, u, userUrlKeys(u.url), async () => ((await UserModel.updateOne({ _id: u._id, url: u.url }, { $set: userUrlKeys(u.url) })).modifiedCount > 0 ? true : null));
      if (written) {
        changed++;
        await accountChanged([u._id], "settings");
      }
    } catch (err) {
      if (!(err instanceof AccountKeyTaken)) throw err;
      warn(`the url of user ${u._id.toHexString()} reads as another account's url now (look-alike letters); it keeps its old key and should be renamed`);
    }
  }
  return changed;
}

/** Accounts read per batch when their claims are checked at start. */
const CLAIM_BATCH = 500;

/**
 * Claims for every account the values that name it, where an earlier version kept them unique by indexes of the
 * users collection instead; answers how many claims were new. Runs at every start, before the port opens, reading
 * the accounts in _id order and writing only the claims that are missing.
 */
export async function claimAccountKeys(): Promise<number> {
  let made = 0;
  let batch: Array<Pick<UserDoc, "_id" | "email" | "url_key" | "url_shape" | "url_looks" | "api_key_digest">> = [];
  const flush = async () => {
    const wanted = batch.flatMap((u) => keysOf(u).map(([kind, value]) => ({ _id: keyId(kind, value), user_id: u._id })));
    batch = [];
    if (wanted.length === 0) return;
    // _id index.
    const present = new Map((await AccountKeyModel.find({ _id: mongoose.trusted({ $in: wanted.map((w) => w._id) }) }, { user_id: 1 }).lean<AccountKeyDoc[]>()).map((k) => [k._id, k.user_id]));
    // A claim naming another account than the one holding the value is left over (the accounts' fields are the
    // truth, and an earlier version kept each value on one account): it is taken back.
    const stale = wanted.filter((w) => present.has(w._id) && !present.get(w._id)!.equals(w.user_id));
    for (const w of stale) await AccountKeyModel.deleteOne({ _id: w._id, user_id: present.get(w._id)! });
    const missing = wanted.filter((w) => !present.has(w._id) || stale.includes(w));
    if (missing.length === 0) return;
    const at = systemClock.now();
    try {
      made += (await AccountKeyModel.insertMany(missing.map((m) => ({ ...m, at })), { ordered: false })).length;
    } catch (err) {
      // Claimed meanwhile (another replica starting): the rest went in.
      if (!onlyDuplicateKeys(err)) throw err;
      made += (err as { insertedDocs?: unknown[] }).insertedDocs?.length ?? 0;
    }
  };
  // _id index, in its order.
  for await (const u of UserModel.find({}, KEY_FIELD_PROJECTION).sort({ _id: 1 }).lean().cursor()) {
    batch.push(u as unknown as (typeof batch)[number]);
    if (batch.length >= CLAIM_BATCH) await flush();
  }
  await flush();
  return made;
}
