// Brings the stored keys of user urls to the current rule at start (src/domain/urlKey.ts), so a url stored before the rule folded more characters is still found by it.
import mongoose from "mongoose";
import { URL_RULE, userUrlKeys } from "../domain/urlKey.js";
import { accountChanged } from "./accountVersions.js";
import { isDuplicateKey, isDuplicateKeyError } from "./errors.js";
import { UserModel } from "./models/user.js";

/** True when a write failed because the url reads as another account's (its key or its shape is taken). */
export function isUserUrlTaken(err: unknown): boolean {
  return isDuplicateKey(err, "url_key") || isDuplicateKey(err, "url_shape");
}

/**
 * Re-keys every user whose url forms were made by an older rule: none, once done (they carry url_rule). Of two stored
 * urls the rule now makes one (`bob1` and `bobl`; an old look-alike of another account's url), the account that holds
 * the key already keeps it (else the older one); the other keeps its old key, so its page is the first one's from
 * now on, and `warn` names it on every start for an operator to rename. Runs on every start, on every replica.
 */
export async function rekeyUserUrls(warn: (message: string) => void): Promise<number> {
  // (url_rule, _id) index: the users not marked with this rule, oldest first.
  const users = await UserModel.find({ url_rule: mongoose.trusted({ $ne: URL_RULE }) }, { url: 1 }).sort({ _id: 1 }).lean();
  let changed = 0;
  for (const u of users) {
    try {
      // _id index; only if the url did not change meanwhile.
      const r = await UserModel.updateOne({ _id: u._id, url: u.url }, { $set: userUrlKeys(u.url) });
      changed += r.modifiedCount;
      if (r.modifiedCount > 0) await accountChanged([u._id], "settings");
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      warn(`the url of user ${u._id.toHexString()} reads as another account's url now (look-alike letters); it keeps its old key and should be renamed`);
    }
  }
  return changed;
}
