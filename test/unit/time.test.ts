// Time has one source: no code in src/ reads the wall clock but src/domain/clock.ts (Deps.clock, or systemClock where real time is meant), and no test sleeps 2 s or more by a literal (tests move a server's clock instead: test/helpers/clock.ts).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLOCK_MODULE = "src/domain/clock.ts";
const THIS_FILE = "test/unit/time.test.ts";
/** Tests may not sleep this long or longer by a literal: what waits for time moves the clock, what waits for an event polls for it. */
const SLEEP_LIMIT_MS = 2000;
/**
 * Waits no clock can shorten, each for something that must not happen outside the service, and why. Keep it short.
 */
const ALLOWED_SLEEPS: Record<string, string> = {};

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== "node_modules") yield* sourceFiles(path);
    } else if (/\.(ts|tsx|mts|js|mjs)$/.test(name)) yield path;
  }
}

const lineOf = (text: string, index: number) => text.slice(0, index).split("\n").length;

/** Where `text` reads the wall clock: `Date.now` (called or handed on), `new Date()` or `new Date` without arguments, `Date()`. */
export function wallClockReads(text: string): { line: number; code: string }[] {
  const found: { line: number; code: string }[] = [];
  const patterns = [/\bDate\s*\.\s*now\b/g, /\bnew\s+Date\s*\(\s*\)/g, /\bnew\s+Date\b(?!\s*\()/g, /(?<![.\w]|new\s)Date\s*\(\s*\)/g];
  for (const re of patterns) for (const m of text.matchAll(re)) found.push({ line: lineOf(text, m.index), code: m[0] });
  return found.sort((a, b) => a.line - b.line);
}

/** The arguments of the call whose "(" ends just before `start`, split at top-level commas. */
function callArguments(text: string, start: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let current = "";
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if ("([{".includes(c)) depth++;
    else if (")]}".includes(c)) {
      if (depth === 0) {
        args.push(current.trim());
        return args.filter((a) => a !== "");
      }
      depth--;
    } else if (c === "," && depth === 0) {
      args.push(current.trim());
      current = "";
      continue;
    }
    current += c;
  }
  return [];
}

/** A literal number of milliseconds ("2500", "2_500", "2 * 1000"), else undefined. */
function literalMs(arg: string | undefined): number | undefined {
  if (arg === undefined || !/^[\d_.\s*+]+$/.test(arg)) return undefined;
  const terms = arg.replace(/_/g, "").split("+").map((sum) => sum.split("*").reduce((p, f) => p * Number(f.trim()), 1));
  const total = terms.reduce((a, b) => a + b, 0);
  return Number.isFinite(total) ? total : undefined;
}

/**
 * Sleeps of `limitMs` or more by a literal: `sleep(N)`, `delay(N)`, `pause(N)`, `wait(N)`, timers/promises'
 * `setTimeout(N)`, and a timer that only resolves a promise, `setTimeout(resolve, N)`. A timer that does something
 * else (`setTimeout(() => reject(...), N)`: a deadline) is no sleep.
 */
export function literalSleeps(text: string, limitMs = SLEEP_LIMIT_MS): { line: number; code: string }[] {
  const found: { line: number; code: string }[] = [];
  for (const m of text.matchAll(/\b(setTimeout|sleep|delay|pause|wait)\s*\(/g)) {
    const args = callArguments(text, m.index + m[0].length);
    let ms: number | undefined;
    if (m[1] !== "setTimeout") ms = literalMs(args[0]);
    else if (args.length === 1) ms = literalMs(args[0]);
    else if (/^[A-Za-z_$][\w$]*$/.test(args[0] ?? "")) ms = literalMs(args[1]);
    if (ms !== undefined && ms >= limitMs) found.push({ line: lineOf(text, m.index), code: `${m[1]}(${args.join(", ")})` });
  }
  return found;
}

describe("the checks themselves", () => {
  it("find the wall clock read in any of its spellings, and not the clock's own reads", () => {
    const code = ["const a = Date.now();", "const b = new Date();", "const c = new Date;", "const d = Date();", "const f = [1].map(Date.now);"].join("\n");
    expect(wallClockReads(code).map((r) => r.line)).toEqual([1, 2, 3, 4, 5]);
    expect(wallClockReads("deps.clock.now(); new Date(ms); new Date(start.getTime() + 1); x.toDate(); updatedDate()")).toEqual([]);
  });

  it("find sleeps of 2 s or more by a literal, and leave shorter ones, deadlines and variables alone", () => {
    // The numbers built from pieces below 2 000: the samples are the same strings at run time, and this file's own
    // text holds no number a scan of test/ (this one, or another tool's) would take for a sleep.
    const ms = (seconds: number) => String(seconds * 1000);
    const sleeps = [`await sleep(${ms(2)});`, `await new Promise((r) => setTimeout(r, ${2}_${500}));`, `await setTimeout(${3} * ${1000});`, `await delay(${60}_${"000"});`, `await new Promise((resolve) => setTimeout(resolve, ${ms(2)} + ${500}));`];
    for (const s of sleeps) expect(literalSleeps(s), s).toHaveLength(1);
    const fine = ["await sleep(1999);", "setTimeout(() => reject(new Error('late')), 10_000);", "await sleep(ms);", "setTimeout(r, POLL_MS)", "await new Promise((r) => setTimeout(r, 300));"];
    for (const s of fine) expect(literalSleeps(s), s).toEqual([]);
  });
});

describe("time", () => {
  it("has one source in src/: nothing reads the wall clock but src/domain/clock.ts", () => {
    const reads: string[] = [];
    for (const path of sourceFiles(join(ROOT, "src"))) {
      const file = relative(ROOT, path);
      if (file === CLOCK_MODULE) continue;
      for (const r of wallClockReads(readFileSync(path, "utf8"))) reads.push(`${file}:${r.line} ${r.code}`);
    }
    expect(reads, "read the time from Deps.clock (or pass `now` in); systemClock where real time is meant").toEqual([]);
  });

  it("is never waited for in tests: no test sleeps 2 s or more by a literal", () => {
    const sleeps: string[] = [];
    for (const path of sourceFiles(join(ROOT, "test"))) {
      const file = relative(ROOT, path);
      if (file === THIS_FILE) continue;
      for (const s of literalSleeps(readFileSync(path, "utf8"))) if (ALLOWED_SLEEPS[file] !== s.code) sleeps.push(`${file}:${s.line} ${s.code}`);
    }
    expect(sleeps, "move the server's clock (test/helpers/clock.ts) or poll for the condition (test/helpers/wait.ts)").toEqual([]);
  });
});
