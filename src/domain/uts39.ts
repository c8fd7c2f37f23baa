// Unicode's security rules for identifiers (UTS #39) that urls follow: the identifier profile (Identifier_Status Allowed), the "Highly Restrictive" script rule, and the confusable skeleton.
import { ALLOWED_RANGES, PROTOTYPES, SCRIPT_SETS } from "./uts39Data.js";

/** Script sets as the rule reads them: Common (Zyyy) and Inherited (Zinh) go with any script, so they are no set at all. */
type Scripts = ReadonlySet<string> | "any";

/**
 * Each script set with the writing systems that combine it (UTS #39 section 5.1, "augmented script sets"): Han is
 * written with Bopomofo (Hanb), with Hiragana and Katakana (Jpan) and with Hangul (Kore), so `東京` beside `とうきょう`
 * is one writing system.
 */
function augmented(names: string): Scripts {
  const set = new Set(names.split(" "));
  if (set.has("Zyyy") || set.has("Zinh")) return "any";
  if (set.has("Hani")) for (const s of ["Hanb", "Jpan", "Kore"]) set.add(s);
  if (set.has("Hira") || set.has("Kana")) set.add("Jpan");
  if (set.has("Hang")) set.add("Kore");
  if (set.has("Bopo")) set.add("Hanb");
  return set;
}

const SETS: readonly Scripts[] = SCRIPT_SETS.map(augmented);

/** Allowed ranges, sorted: starts, ends and script sets side by side for a binary search. */
const STARTS: number[] = [];
const ENDS: number[] = [];
const RANGE_SETS: Scripts[] = [];
for (const entry of ALLOWED_RANGES.split(",")) {
  const [range, set] = entry.split(":");
  const [a, b = a] = range.split("-");
  STARTS.push(parseInt(a, 16));
  ENDS.push(parseInt(b, 16));
  RANGE_SETS.push(SETS[Number(set)]);
}

const PROTOTYPE: ReadonlyMap<string, string> = new Map(
  PROTOTYPES.split(",").map((entry) => {
    const [from, to] = entry.split(":");
    return [String.fromCodePoint(parseInt(from, 16)), String.fromCodePoint(...to.split(" ").map((h) => parseInt(h, 16)))];
  }),
);

/** The script set of an allowed character, or undefined for one outside the profile. */
function scriptsOf(codePoint: number): Scripts | undefined {
  let lo = 0;
  let hi = STARTS.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (codePoint < STARTS[mid]) hi = mid - 1;
    else if (codePoint > ENDS[mid]) lo = mid + 1;
    else return RANGE_SETS[mid];
  }
  return undefined;
}

/** The scripts every character of `sets` can be written in, "any" when none limits them (UTS #39 "resolved script set"). */
function resolved(sets: readonly Scripts[]): Scripts {
  let out: ReadonlySet<string> | undefined;
  for (const set of sets) {
    if (set === "any") continue;
    const seen = out;
    out = seen === undefined ? set : new Set([...seen].filter((s) => set.has(s)));
  }
  return out ?? "any";
}

/**
 * Whether every character of `s` is of the identifier profile (Identifier_Status Allowed: no format or invisible
 * characters, private use, unassigned code points, symbols, or letters of historic and limited-use scripts) and the
 * whole is "Highly Restrictive" (UTS #39 section 5.2): one script, Common and Inherited going with any, or Latin
 * with Han and Hiragana/Katakana, Han and Bopomofo, or Han and Hangul. So `josé`, `мария`, `東京`, `ελένη`,
 * `tokyo東京` pass; `pаypal` (a Cyrillic а), Latin with a Georgian letter, U+13430, U+E000, U+FFFC, Braille do not.
 */
export function isHighlyRestrictiveIdentifier(s: string): boolean {
  const sets: Scripts[] = [];
  for (const ch of s) {
    const set = scriptsOf(ch.codePointAt(0)!);
    if (set === undefined) return false;
    sets.push(set);
  }
  const all = resolved(sets);
  if (all === "any" || all.size > 0) return true;
  // Latin goes with the Han writing systems (the steps of UTS #39 section 5.2 as ICU's spoof checker takes them).
  const withoutLatin = resolved(sets.filter((set) => set === "any" || !set.has("Latn")));
  return withoutLatin !== "any" && (withoutLatin.has("Hanb") || withoutLatin.has("Jpan") || withoutLatin.has("Kore"));
}

/**
 * Characters that draw nothing: Unicode's default-ignorable ones (zero-width spaces and joiners, soft hyphens, the
 * Hangul fillers) and the braille blank. No new url holds one (they are outside the profile), but a url stored
 * before that rule, or one a visitor types, is found without them.
 */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\u2800]/gu;

/**
 * UTS #39's skeleton: NFD, without default-ignorable characters, each character replaced by its prototype from
 * confusables.txt, NFD again. Two strings with one skeleton look alike (`m` and `rn`, Cyrillic `а` and `a`, `0` and
 * `O`). Only the prototypes of characters a url can hold are kept (scripts/unicode-security.ts); others stay as they are.
 */
export function confusableSkeleton(s: string): string {
  let out = "";
  for (const ch of s.normalize("NFD").replace(INVISIBLE, "")) out += PROTOTYPE.get(ch) ?? ch;
  return out.normalize("NFD");
}
