// Reads every .ics file under a directory as the service reads a calendar (src/domain/ical/busy.ts) and reports which are readable, which events were left out, and which are unreadable and why: the real-world check of issue 25.
//
//   node --import tsx scripts/ical-corpus.ts <directory> [--each]
//
// The calendars are not part of this repository: point it at a checkout of other iCalendar libraries' test data
// (python-recurring-ical-events, icalendar, ical.js have hundreds of real exports and edge cases). Each file is read
// for three ranges of 34 days (what a 31-day listing reads): from its earliest DTSTART, from its latest, and from
// 2026-03-01, with the host in Europe/Berlin. The limits are the service's, except time and memory (a reader
// thread's), which are reported instead: the slowest read is printed.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { IcsLimitError, IcsParseError, readCalendar } from "../src/domain/ical/busy.js";

const DAY_MS = 86_400_000;
const RANGE_DAYS = 34;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : name.toLowerCase().endsWith(".ics") ? [path] : [];
  });
}

/** The earliest and latest DTSTART dates the text names (a quick look, not a parse), as ms. */
function startsOf(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/^DTSTART[^:\r\n]*:(\d{4})(\d{2})(\d{2})/gim)) {
    const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    if (Number.isFinite(ms)) out.push(ms);
  }
  return out.length === 0 ? [] : [Math.min(...out), Math.max(...out)];
}

type Outcome = { kind: "read"; periods: number; warnings: string[] } | { kind: "not iCalendar" | "over a limit" | "failed"; reason: string };

function readOnce(bytes: Uint8Array, from: number): Outcome {
  try {
    const { periods, warnings } = readCalendar([bytes], { from: new Date(from), to: new Date(from + RANGE_DAYS * DAY_MS) }, { hostZone: "Europe/Berlin", hostEmails: ["host@example.com"] });
    return { kind: "read", periods: periods.length, warnings };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    if (err instanceof IcsParseError) return { kind: "not iCalendar", reason };
    if (err instanceof IcsLimitError) return { kind: "over a limit", reason };
    return { kind: "failed", reason: err instanceof Error ? (err.stack ?? reason) : reason };
  }
}

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node --import tsx scripts/ical-corpus.ts <directory> [--each]");
  process.exit(2);
}
const each = process.argv.includes("--each");
const tally = { files: 0, components: 0, clean: 0, withWarnings: 0, eventsLeftOut: 0, notICalendar: 0, overLimit: 0, failed: 0 };
let slowest = { ms: 0, file: "" };
const notes: string[] = [];
for (const path of files(dir).sort()) {
  const bytes = readFileSync(path);
  const name = relative(dir, path);
  const text = bytes.toString("utf8");
  tally.files++;
  // Test data of component parsers: a lone VEVENT, VTIMEZONE, VTODO ... is not a calendar anyone publishes.
  const first = /^BEGIN:(\S+)/im.exec(text)?.[1]?.toUpperCase();
  if (first !== undefined && first !== "VCALENDAR") {
    tally.components++;
    continue;
  }
  const ranges = [...new Set([...startsOf(text), Date.UTC(2026, 2, 1)])];
  const t0 = performance.now();
  const outcomes = ranges.map((from) => readOnce(bytes, from));
  const ms = performance.now() - t0;
  if (ms > slowest.ms) slowest = { ms, file: name };
  // A calendar is as readable as its worst range.
  const bad = outcomes.find((o): o is Exclude<Outcome, { kind: "read" }> => o.kind !== "read");
  if (bad !== undefined) {
    if (bad.kind === "not iCalendar") tally.notICalendar++;
    else if (bad.kind === "over a limit") tally.overLimit++;
    else tally.failed++;
    notes.push(`${bad.kind.padEnd(13)} ${name}: ${bad.reason.split("\n")[0]}`);
    if (bad.kind === "failed") notes.push(bad.reason);
    continue;
  }
  const warnings = [...new Set(outcomes.flatMap((o) => (o.kind === "read" ? o.warnings : [])))];
  if (warnings.length === 0) tally.clean++;
  else {
    tally.withWarnings++;
    tally.eventsLeftOut += Math.max(...warnings.map((w) => Number(/^(\d+) event/.exec(w)?.[1] ?? 0)));
    notes.push(`${"left out".padEnd(13)} ${name}: ${warnings.join(" | ")}`);
  }
  if (each) console.log(`${name}: ${outcomes.map((o) => (o.kind === "read" ? `${o.periods} periods` : o.kind)).join(", ")} (${ms.toFixed(0)} ms)`);
}
console.log(notes.join("\n"));
console.log(
  `\n${tally.files} files, ${tally.components} of them a lone component (not a calendar); of the ${tally.files - tally.components} calendars: ${tally.clean} read whole, ${tally.withWarnings} read with events left out (${tally.eventsLeftOut} events in all, the rest of each still blocks), ` +
    `${tally.notICalendar} not iCalendar, ${tally.overLimit} over a limit, ${tally.failed} failed; slowest ${slowest.ms.toFixed(0)} ms (${slowest.file}, ${RANGE_DAYS}-day ranges)`,
);
