// The key user and event urls are unique by and found by: what a reader sees, after Unicode's confusable skeleton (UTS #39), so no url is taken that reads as a taken one.
import { confusableSkeleton } from "./uts39.js";

/**
 * Letters drawn as small capitals, which the confusables data keeps as prototypes of their own (it tells case
 * apart). Urls are compared without case, where a small capital reads as its letter: `hʜstai` is `hHstai`, so
 * `hhstai`. The Cherokee small letters map to these too (ꭺ → ᴀ): a Cherokee look-alike of a capital is its letter.
 * ĸ (kra) is the prototype of the small capital K and ʍ of the small capital M.
 */
const SMALL_CAPITALS: ReadonlyMap<string, string> = new Map(
  Object.entries({ ᴀ: "a", ʙ: "b", ᴅ: "d", ᴇ: "e", ꜰ: "f", ɢ: "g", ʜ: "h", ᴊ: "j", ĸ: "k", ʟ: "l", ʍ: "m", ɴ: "n", ᴘ: "p", ꞯ: "q", ʀ: "r", ᴛ: "t" }),
);
const SMALL_CAPITAL = new RegExp(`[${[...SMALL_CAPITALS.keys()].join("")}]`, "gu");

/**
 * A mark (accent, dot, overlay, enclosing circle) on a letter that reads as a Latin one, on a digit or sign, or on
 * nothing: `hóstai`, `hostai` + U+0323 read as `hostai`. A reader takes a small mark for a smudge or a font's
 * accent, so `josé` is `jose` too; marks on other scripts' letters (after the skeleton) are theirs and stay.
 */
const MARK_ON_LATIN = /(^|\p{Script=Latin}|\p{Script=Common})\p{M}+/gu;

/** What a reader takes a url for once its case is ignored: its skeleton, lowercase, small capitals as their letters, no marks on Latin letters. */
function readAs(url: string): string {
  const folded = confusableSkeleton(url.normalize("NFKC")).toLowerCase();
  return confusableSkeleton(folded.replace(SMALL_CAPITAL, (c) => SMALL_CAPITALS.get(c) ?? c))
    .replace(MARK_ON_LATIN, "$1")
    .normalize("NFC");
}

/**
 * The key a user or event url is found by and unique by: what its lowercase reads as (the API compares urls in
 * lowercase). A `0` is an `O` to the skeleton, so `o` here. So `hostaı`, `HOSTAİ`, `hostаi` (Cyrillic а), `hóstai`
 * and `hostai` + a combining mark are all `hostai`, and so is `host\u200bai` when a visitor types it (no new url may
 * hold it: src/domain/uts39.ts); `modern` is `rnodern` and `bob1` is `bobl`. A key is for comparing only, never shown.
 */
export function urlKey(url: string): string {
  return readAs(url.normalize("NFKC").toLowerCase());
}

/**
 * What the url reads as where it is shown: with its case, as stored. A capital can read as another letter than
 * its small form: `biII` shows as `bill` (a capital I is drawn like an l), Greek `ΗOSTAI` as `HOSTAI` (the small
 * η reads as n). Lowercase first, neither is seen; so a url is unique by both its key and its shape.
 */
export function urlShape(url: string): string {
  return readAs(url);
}

/**
 * What the url reads as with its case kept, as typed, in capitals and in small letters: urls are found without
 * case, so a link may show any of the three, and a new url as typed must not read as a taken url in any of them.
 * `ALICE-SMlTH` (a small l) reads as `ALICE-SMITH`, the taken `alice-smith` in capitals, though neither its key
 * (`alice-smlth`) nor its shape does; `aIice` reads as `alice`, the taken `ALICE` in small letters. Kept apart from
 * the shape, which reads without case after the skeleton and so would make `ali` (`ALl` in capitals, the skeleton's
 * l for I) one with `all`: only readings that keep their case are compared with each other (one claim namespace).
 */
export function urlLooks(url: string): string[] {
  return [...new Set([url, url.toUpperCase(), url.toLowerCase()].map(readCased))];
}

/** readAs with the case kept: the skeleton, small capitals as their (capital) letters, no marks on Latin letters. */
function readCased(url: string): string {
  const skeleton = confusableSkeleton(url.normalize("NFKC"));
  return confusableSkeleton(skeleton.replace(SMALL_CAPITAL, (c) => (SMALL_CAPITALS.get(c) ?? c).toUpperCase()))
    .replace(MARK_ON_LATIN, "$1")
    .normalize("NFC");
}

/**
 * The rule the keys are made by, stored beside them so start re-keys only older ones: 4 = rule 3 and the cased
 * readings (urlLooks), and events keyed by their shape too; 3 = this skeleton on Unicode's own confusables.txt of
 * src/domain/uts39Data.ts (2: the same steps on the unhomoglyph package's older copy of it; before it, a short
 * hand-written table of look-alikes). Event urls are keyed by the skeleton from rule 3 on (before: NFKC and
 * lowercase).
 */
export const URL_RULE = 4;

/** The stored forms of a user or team url: key, shape and looks, each claimed (account_keys, team_keys), and the rule. */
export function userUrlKeys(url: string): { url_key: string; url_shape: string; url_looks: string[]; url_rule: number } {
  return { url_key: urlKey(url), url_shape: urlShape(url), url_looks: urlLooks(url), url_rule: URL_RULE };
}

/**
 * The stored forms of an event url: key and shape, each unique among the account's undeleted events
 * (src/db/models/event.ts), its looks, checked against theirs by the events' writer, and the rule.
 */
export function eventUrlKeys(url: string): { url_key: string; url_shape: string; url_looks: string[]; url_rule: number } {
  return userUrlKeys(url);
}
