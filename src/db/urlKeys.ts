// Brings the stored keys of user urls to the current rule at start (src/domain/user.ts userUrlKey), so a url stored before the rule folded more characters is still found by it.
import mongoose from "mongoose";
import { userUrlKey } from "../domain/user.js";
import { accountChanged } from "./accountVersions.js";
import { isDuplicateKeyError } from "./errors.js";
import { UserModel } from "./models/user.js";

/**
 * Re-keys every user whose stored url_key is not what userUrlKey makes of its url. Only a key with a character
 * outside ASCII can differ (the rule folds nothing in ASCII), so only those are read: none, nearly always. Two
 * stored urls that the rule now makes one (an old look-alike of another account's url) cannot both have the key:
 * the later one keeps its old key, so its page is the other account's from now on, and `warn` names it for an
 * operator to rename. Runs on every start, on every replica; it changes nothing once done.
 */
export async function rekeyUserUrls(warn: (message: string) => void): Promise<number> {
  // url_key unique index (a scan of its non-ASCII entries).
  const users = await UserModel.find({ url_key: mongoose.trusted({ $regex: "[^\\x00-\\x7F]" }) }, { url: 1, url_key: 1 }).lean();
  let changed = 0;
  for (const u of users) {
    const key = userUrlKey(u.url);
    if (key === u.url_key) continue;
    try {
      // _id index; only if nothing changed it meanwhile.
      const r = await UserModel.updateOne({ _id: u._id, url_key: u.url_key }, { $set: { url_key: key } });
      changed += r.modifiedCount;
      if (r.modifiedCount > 0) await accountChanged([u._id], "settings");
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      warn(`the url of user ${u._id.toHexString()} reads as another account's url now (look-alike letters); it keeps its old key and should be renamed`);
    }
  }
  return changed;
}
