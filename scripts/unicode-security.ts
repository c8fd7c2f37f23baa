// Writes src/domain/uts39Data.ts, the UTS #39 data urls are checked and compared by, from one Unicode version's published files: `node --import tsx scripts/unicode-security.ts <folder>`.
//
// The folder holds that version's security/IdentifierStatus.txt, security/confusables.txt, ucd/Scripts.txt,
// ucd/ScriptExtensions.txt and ucd/PropertyValueAliases.txt (all five side by side). What is kept of them:
// - the code points whose Identifier_Status is Allowed, each range with its Script_Extensions (short names), since a
//   url holds no other character and the script rule reads no other;
// - the confusables.txt prototypes of the characters a url's key can meet: the allowed ones, what NFD and case
//   mapping make of them, and what their prototypes are made of (the key maps twice), so not the ~6 000 symbols,
//   historic scripts and the like that no url can hold.
// The header records the version and each file's SHA-256, so a check can tell which files made it.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = process.argv[2];
if (dir === undefined) {
  console.error("usage: node --import tsx scripts/unicode-security.ts <folder with IdentifierStatus.txt, confusables.txt, Scripts.txt, ScriptExtensions.txt, PropertyValueAliases.txt>");
  process.exit(2);
}
const FILES = ["IdentifierStatus.txt", "confusables.txt", "Scripts.txt", "ScriptExtensions.txt", "PropertyValueAliases.txt"] as const;
const text = Object.fromEntries(FILES.map((f) => [f, readFileSync(join(dir, f), "utf8").replace(/^\uFEFF/, "")])) as Record<(typeof FILES)[number], string>;

const version = /^# Version: (\d+\.\d+\.\d+)/m.exec(text["IdentifierStatus.txt"])?.[1];
for (const f of FILES) {
  const v = /-(\d+\.\d+\.\d+)\.txt|^# Version: (\d+\.\d+\.\d+)/m.exec(text[f]);
  if (v !== null && (v[1] ?? v[2]) !== version) throw new Error(`${f} is of Unicode ${v[1] ?? v[2]}, IdentifierStatus.txt of ${version}`);
}

/** `start..end ; value` lines (comments dropped) as [start, end, value]. */
function rangeLines(body: string): Array<[number, number, string]> {
  const out: Array<[number, number, string]> = [];
  for (const line of body.split("\n")) {
    const m = /^([0-9A-F]{4,6})(?:\.\.([0-9A-F]{4,6}))?\s*;\s*([^#]+?)\s*(#|$)/.exec(line);
    if (m) out.push([parseInt(m[1], 16), parseInt(m[2] ?? m[1], 16), m[3]]);
  }
  return out;
}

const shortScript = new Map<string, string>();
for (const line of text["PropertyValueAliases.txt"].split("\n")) {
  const m = /^sc\s*;\s*(\w+)\s*;\s*(\w+)/.exec(line);
  if (m) shortScript.set(m[2], m[1]);
}

const allowed = new Set<number>();
for (const [a, b, v] of rangeLines(text["IdentifierStatus.txt"])) if (v === "Allowed") for (let c = a; c <= b; c++) allowed.add(c);

const scx = new Map<number, string>();
for (const [a, b, v] of rangeLines(text["Scripts.txt"])) {
  const short = shortScript.get(v);
  if (short === undefined) throw new Error(`no short name for script ${v}`);
  for (let c = a; c <= b; c++) scx.set(c, short);
}
for (const [a, b, v] of rangeLines(text["ScriptExtensions.txt"])) for (let c = a; c <= b; c++) scx.set(c, v.split(/\s+/).sort().join(" "));

const confusables = new Map<number, number[]>();
for (const line of text["confusables.txt"].split("\n")) {
  const m = /^([0-9A-F]{4,6})\s*;\s*([0-9A-F ]+?)\s*;\s*MA/.exec(line);
  if (m) confusables.set(parseInt(m[1], 16), m[2].split(" ").map((h) => parseInt(h, 16)));
}

// The characters a key can meet, grown until nothing new comes (see the top of this file).
const met = new Set<number>([...allowed]);
const pending = [...met];
const meet = (s: string): void => {
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (!met.has(c)) {
      met.add(c);
      pending.push(c);
    }
  }
};
while (pending.length > 0) {
  const c = pending.pop()!;
  const ch = String.fromCodePoint(c);
  for (const form of [ch.normalize("NFD"), ch.toLowerCase().normalize("NFD"), ch.toUpperCase().normalize("NFD")]) meet(form);
  const proto = confusables.get(c);
  if (proto !== undefined) {
    const s = String.fromCodePoint(...proto).normalize("NFD");
    meet(s);
    meet(s.toLowerCase().normalize("NFD"));
  }
}

const hex = (c: number): string => c.toString(16);

// Allowed ranges with one script set each: "start-end:set" (or "start:set"), sets listed once.
const sets: string[] = [];
const setIndex = (s: string): number => {
  const i = sets.indexOf(s);
  return i >= 0 ? i : sets.push(s) - 1;
};
const ranges: string[] = [];
const codes = [...allowed].sort((x, y) => x - y);
for (let i = 0; i < codes.length; ) {
  const set = scx.get(codes[i]) ?? "Zzzz";
  let j = i;
  while (j + 1 < codes.length && codes[j + 1] === codes[j] + 1 && (scx.get(codes[j + 1]) ?? "Zzzz") === set) j++;
  ranges.push(`${hex(codes[i])}${j > i ? `-${hex(codes[j])}` : ""}:${setIndex(set)}`);
  i = j + 1;
}

const pairs = [...confusables].filter(([c]) => met.has(c)).sort(([x], [y]) => x - y).map(([c, p]) => `${hex(c)}:${p.map(hex).join(" ")}`);

const sha = (f: (typeof FILES)[number]): string => createHash("sha256").update(readFileSync(join(dir, f))).digest("hex");
const out = `// UTS #39 data of Unicode ${version} that urls are checked and compared by (src/domain/uts39.ts): written by scripts/unicode-security.ts, not by hand.
// Made from (SHA-256): ${FILES.map((f) => `${f} ${sha(f)}`).join(", ")}.

/** The Unicode version of the files below. */
export const UNICODE_VERSION = "${version}";

/** Script_Extensions sets (short names, space-separated) that the ranges below refer to by index. */
export const SCRIPT_SETS: readonly string[] = ${JSON.stringify(sets)};

/** Code points with Identifier_Status Allowed: "start-end:set" or "code:set", hexadecimal, the set an index of SCRIPT_SETS. */
export const ALLOWED_RANGES = "${ranges.join(",")}";

/** confusables.txt prototypes of the characters a url's key can meet: "code:prototype code points", hexadecimal. */
export const PROTOTYPES = "${pairs.join(",")}";
`;
const target = fileURLToPath(new URL("../src/domain/uts39Data.ts", import.meta.url));
writeFileSync(target, out);
console.log(`${target}: Unicode ${version}, ${allowed.size} allowed code points in ${ranges.length} ranges, ${sets.length} script sets, ${pairs.length} of ${confusables.size} prototypes, ${out.length} bytes`);
