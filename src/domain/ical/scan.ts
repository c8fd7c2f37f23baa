// The pre-scan of an iCalendar text: its content lines walked as bytes, the limits checked, and only the lines busy times need kept, before any of it reaches ical.js.

/*
 * Why a pre-scan. ical.js parses a whole text into arrays of arrays before anything can look at it: a feed of deep
 * nesting, a 10 MB line or 300 000 dates on one line took hundreds of MB that way. Here the text stays the bytes it
 * arrived as; one pass over them (memchr-fast `indexOf` of line feeds) checks the limits and notes where the events
 * and time-zone definitions are, and a second hands each event's few relevant lines, as text, to the reader. A line
 * of a property busy times do not use (DESCRIPTION, ATTACH, X-ALT-DESC, ...) is stepped over whatever its length:
 * it never becomes a string.
 *
 * Content lines (RFC 5545 3.1): a line ends with CRLF (or a bare LF, as some exporters write); a line that begins
 * with a space or a tab continues the one before (folding). Blank lines are skipped.
 */

/** What the service reads of one calendar (docs/calendars-and-meetings.md "Limits"); past any of them the calendar is unreadable. */
export const SCAN_LIMITS = {
  /** Bytes of one line of a property busy times are read from (times, rules, dates, attendees), folding included. */
  lineBytes: 65_536,
  /** Bytes of the lines read from one event or one time-zone definition. */
  componentBytes: 262_144,
  /** Components of any kind (events, time zones and their parts, alarms, to-dos, ...) in the calendar. */
  components: 100_000,
  /** Components inside one another: VCALENDAR > VEVENT > VALARM is 3; real calendars stay at 4. */
  depth: 8,
  /** Time-zone definitions (VTIMEZONE); a real calendar has one per zone its events use. */
  zones: 1_000,
} as const;

/** The text holds more than the service reads: the message names the limit, in plain words. */
export class IcsLimitError extends Error {
  override name = "IcsLimitError";
}

/** The text is not iCalendar, or is cut off: nothing of it can be trusted. */
export class IcsParseError extends Error {
  override name = "IcsParseError";
}

/** The properties read from an event (docs/spec/integrations.md "Busy times"); an ATTENDEE only matters when declined. */
const EVENT_PROPERTIES = new Set([
  "UID",
  "DTSTART",
  "DTEND",
  "DURATION",
  "RRULE",
  "RDATE",
  "EXDATE",
  "RECURRENCE-ID",
  "TRANSP",
  "STATUS",
  "X-MICROSOFT-CDO-BUSYSTATUS",
  "ATTENDEE",
]);
/** The properties of a VTIMEZONE and of its STANDARD and DAYLIGHT parts that define the zone. */
const ZONE_PROPERTIES = new Set(["TZID", "DTSTART", "TZOFFSETFROM", "TZOFFSETTO", "RRULE", "RDATE"]);
const ZONE_PARTS = new Set(["STANDARD", "DAYLIGHT"]);

const LF = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;
const COLON = 58;
const SEMICOLON = 59;
/** Bytes of an event's SUMMARY kept to name it in a warning (a warning quotes 40 characters of it). */
const SUMMARY_BYTES = 256;
/** Longer names are no property this scan keeps (the longest is X-MICROSOFT-CDO-BUSYSTATUS). */
const NAME_MAX = 40;

/** A byte range [start, end) of the text. */
export interface Span {
  start: number;
  end: number;
}

/** Where a calendar's parts are: its events, its zone definitions by TZID, and the zone its floating times are in. */
export interface ScanResult {
  bytes: Uint8Array;
  /** The byte ranges of the VEVENTs (BEGIN line to END line), in text order. */
  events: Span[];
  /** TZID -> the byte range of its VTIMEZONE; the first definition of a TZID wins. */
  zones: Map<string, Span>;
  /** The first X-WR-TIMEZONE (Google, Apple): the zone of floating times. */
  floatingTzid: string | null;
}

const utf8 = new TextDecoder("utf-8");

/** One logical (unfolded) line: where it starts, where its last physical line ends, and its name. */
interface Line {
  start: number;
  /** Exclusive, line break not included. */
  end: number;
  /** Where the next logical line starts. */
  next: number;
  /** Upper-case name (the part before the first ; or :), or "" when longer than NAME_MAX or absent. */
  name: string;
}

/** The end of the physical line starting at `pos` (before CR LF / LF) and where the next one starts. */
function physicalEnd(bytes: Uint8Array, pos: number): [number, number] {
  const lf = bytes.indexOf(LF, pos);
  if (lf === -1) return [bytes.length, bytes.length];
  return [lf > pos && bytes[lf - 1] === CR ? lf - 1 : lf, lf + 1];
}

function readName(bytes: Uint8Array, start: number, end: number): string {
  const stop = Math.min(end, start + NAME_MAX + 1);
  for (let i = start; i < stop; i++) {
    const b = bytes[i]!;
    if (b === SEMICOLON || b === COLON) return i === start ? "" : String.fromCharCode(...bytes.subarray(start, i)).toUpperCase();
    // ASCII letters, digits and '-' make every property name (RFC 5545 3.1: iana-token, x-name).
    if (!((b >= 97 && b <= 122) || (b >= 65 && b <= 90) || (b >= 48 && b <= 57) || b === 45)) return "";
  }
  return "";
}

/** The logical line starting at `pos` (which is not a continuation). */
function lineAt(bytes: Uint8Array, pos: number): Line {
  let [end, next] = physicalEnd(bytes, pos);
  const name = readName(bytes, pos, end);
  while (next < bytes.length && (bytes[next] === SPACE || bytes[next] === TAB)) {
    [end, next] = physicalEnd(bytes, next);
  }
  return { start: pos, end, next, name };
}

/** The text of a logical line, unfolded (each line break with the one space or tab after it removed). */
function lineText(bytes: Uint8Array, line: { start: number; end: number }): string {
  let out = "";
  let pos = line.start;
  for (;;) {
    const [end, next] = physicalEnd(bytes, pos);
    const stop = Math.min(end, line.end);
    out += utf8.decode(bytes.subarray(pos, stop));
    if (next >= line.end || next >= bytes.length) return out;
    // Skip the space or tab that marks the continuation.
    pos = next + 1;
  }
}

const DECLINED = Array.from("DECLINED", (c) => c.charCodeAt(0));

/**
 * Whether a line holds the word DECLINED (any case, across folds): an ATTENDEE matters to busy times only when the
 * host declined, so the others (an all-hands invitation lists thousands) are neither kept nor counted against the
 * limits.
 */
function declines(bytes: Uint8Array, line: Line): boolean {
  let k = 0;
  for (let i = line.start; i < line.end; i++) {
    let b = bytes[i]!;
    if (b === CR || b === LF) {
      // A fold: the line break and the one space or tab after it are not part of the text.
      if (b === CR && bytes[i + 1] === LF) i++;
      i++;
      continue;
    }
    if (b >= 97 && b <= 122) b -= 32;
    if (b === DECLINED[k]) {
      if (++k === DECLINED.length) return true;
    } else k = b === DECLINED[0] ? 1 : 0;
  }
  return false;
}

/** The value of a BEGIN or END line: the component name, upper case (a folded one is unfolded first). */
function componentName(bytes: Uint8Array, line: Line): string {
  const [end] = physicalEnd(bytes, line.start);
  const text = end === line.end && end - line.start <= 200 ? String.fromCharCode(...bytes.subarray(line.start, end)) : lineText(bytes, { start: line.start, end: Math.min(line.end, line.start + 200) });
  return text.slice(text.indexOf(":") + 1).trim().toUpperCase();
}

function grouped(n: number): string {
  return n.toLocaleString("en-US").replace(/,/g, " ");
}

/** A component name as a message shows it: the letters, digits and dashes of a name, at most 40 of them. */
function shown(component: string): string {
  return component.replace(/[^A-Z0-9-]/g, "?").slice(0, 40) || "?";
}

/*
 * The structure is checked strictly (docs/spec/integrations.md "When a calendar or meeting account needs the host"):
 * a component that ends without beginning, one that begins and never ends, or a VEVENT anywhere but directly in a
 * VCALENDAR makes the text unreadable. Read leniently (as ical.js does: an END pops whatever is open), such a text
 * lost its events without a word: an `END:VEVENT` where `BEGIN:VEVENT` belongs closed the VCALENDAR, and the
 * host's busy time was offered as free.
 */

/** Whether a component may begin here: only VCALENDARs at the top, and a VEVENT only directly inside one. */
function checkPlace(component: string, stack: readonly string[], calendars: number): void {
  if (stack.length === 0 && component !== "VCALENDAR") {
    throw new IcsParseError(calendars === 0 ? "not iCalendar: no VCALENDAR" : `the calendar has a ${shown(component)} outside its VCALENDAR`);
  }
  if (component === "VEVENT" && (stack.length !== 1 || stack[0] !== "VCALENDAR")) throw new IcsParseError(`the calendar has a VEVENT inside a ${shown(stack[stack.length - 1]!)}`);
}

/** Whether `END:<component>` closes the component that is open; answers it. */
function checkEnd(component: string, stack: readonly string[]): string {
  const open = stack[stack.length - 1];
  if (open === component) return open;
  if (open !== undefined && stack.includes(component)) throw new IcsParseError(`the calendar's ${shown(open)} begins and never ends`);
  throw new IcsParseError(`the calendar has END:${shown(component)} without BEGIN:${shown(component)}`);
}

/**
 * The first pass: the whole text walked once. Throws IcsLimitError past a limit and IcsParseError when the text is
 * not iCalendar (no VCALENDAR), its structure is broken (above), or it ends inside a component (a cut-off answer
 * could hide busy times).
 */
export function scanCalendar(bytes: Uint8Array): ScanResult {
  const events: Span[] = [];
  const zones = new Map<string, Span>();
  let floatingTzid: string | null = null;
  const stack: string[] = [];
  let components = 0;
  let zoneCount = 0;
  let calendars = 0;
  /** The component whose kept lines are being counted (an event or a zone), and its start. */
  let openStart = -1;
  let keptBytes = 0;
  let zoneId: string | null = null;
  let pos = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (pos < bytes.length) {
    const line = lineAt(bytes, pos);
    pos = line.next;
    if (line.end === line.start) continue;
    const { name } = line;
    if (name === "BEGIN") {
      const component = componentName(bytes, line);
      if (++components > SCAN_LIMITS.components) throw new IcsLimitError(`the calendar has more than ${grouped(SCAN_LIMITS.components)} components`);
      if (stack.length >= SCAN_LIMITS.depth) throw new IcsLimitError(`the calendar nests components more than ${SCAN_LIMITS.depth} deep`);
      checkPlace(component, stack, calendars);
      if (stack.length === 0) calendars++;
      stack.push(component);
      if (stack.length === 2 && stack[0] === "VCALENDAR" && (component === "VEVENT" || component === "VTIMEZONE")) {
        openStart = line.start;
        keptBytes = 0;
        zoneId = null;
        if (component === "VTIMEZONE" && ++zoneCount > SCAN_LIMITS.zones) throw new IcsLimitError(`the calendar has more than ${grouped(SCAN_LIMITS.zones)} time-zone definitions`);
      }
      continue;
    }
    if (name === "END") {
      const closed = checkEnd(componentName(bytes, line), stack);
      stack.pop();
      if (stack.length === 1 && openStart !== -1) {
        const span = { start: openStart, end: line.next };
        if (closed === "VEVENT") events.push(span);
        else if (closed === "VTIMEZONE" && zoneId !== null && !zones.has(zoneId)) zones.set(zoneId, span);
        openStart = -1;
      }
      continue;
    }
    const depth = stack.length;
    let kept = false;
    if (depth === 1 && stack[0] === "VCALENDAR" && name === "X-WR-TIMEZONE") {
      kept = true;
      if (floatingTzid === null && line.end - line.start <= SCAN_LIMITS.lineBytes) floatingTzid = valueOf(lineText(bytes, line)).trim() || null;
    } else if (openStart !== -1 && depth === 2 && stack[1] === "VEVENT") {
      kept = EVENT_PROPERTIES.has(name) && (name !== "ATTENDEE" || declines(bytes, line));
    } else if (openStart !== -1 && stack[1] === "VTIMEZONE" && (depth === 2 || (depth === 3 && ZONE_PARTS.has(stack[2]!)))) {
      kept = ZONE_PROPERTIES.has(name);
      if (kept && depth === 2 && name === "TZID" && zoneId === null && line.end - line.start <= SCAN_LIMITS.lineBytes) zoneId = valueOf(lineText(bytes, line));
    }
    if (!kept) continue;
    const length = line.end - line.start;
    if (length > SCAN_LIMITS.lineBytes) throw new IcsLimitError(`a ${name} line of the calendar is longer than ${grouped(SCAN_LIMITS.lineBytes)} bytes`);
    if (openStart !== -1) {
      keptBytes += length;
      if (keptBytes > SCAN_LIMITS.componentBytes) throw new IcsLimitError(`an event or time zone of the calendar has more than ${grouped(SCAN_LIMITS.componentBytes)} bytes of times and rules`);
    }
  }
  if (stack.length > 0) throw new IcsParseError(`the calendar ends inside a ${stack[stack.length - 1] || "component"} (cut off?)`);
  if (calendars === 0) throw new IcsParseError("not iCalendar: no VCALENDAR");
  return { bytes, events, zones, floatingTzid };
}

/** The value of a content line: after the first colon that is not inside a quoted parameter value. */
function valueOf(line: string): string {
  return line.slice(valueColon(line) + 1);
}

/** Where the value of a content line starts (its colon), or the line's length when it has none. */
export function valueColon(line: string): number {
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 34) quoted = !quoted;
    else if (c === COLON && !quoted) return i;
  }
  return line.length;
}

/**
 * The kept lines of one component found by scanCalendar (an event, or a zone with its STANDARD and DAYLIGHT
 * parts, whose BEGIN and END lines are kept so ical.js can read the zone): each unfolded, blank lines left out.
 */
export function componentLines(scan: ScanResult, span: Span): string[] {
  const { bytes } = scan;
  const out: string[] = [];
  const stack: string[] = [];
  let pos = span.start;
  while (pos < span.end) {
    const line = lineAt(bytes, pos);
    pos = line.next;
    if (line.end === line.start) continue;
    const { name } = line;
    if (name === "BEGIN" || name === "END") {
      const component = componentName(bytes, line);
      if (name === "BEGIN") stack.push(component);
      const top = stack[0];
      if (stack.length === 1 || (top === "VTIMEZONE" && stack.length === 2 && ZONE_PARTS.has(stack[1]!))) out.push(`${name}:${component}`);
      if (name === "END") stack.pop();
      continue;
    }
    const top = stack[0];
    if (top === "VEVENT" && stack.length === 1 && EVENT_PROPERTIES.has(name) && (name !== "ATTENDEE" || declines(bytes, line))) out.push(lineText(bytes, line));
    // The title, cut short: only a warning that names an event left out reads it, so it counts against no limit.
    else if (top === "VEVENT" && stack.length === 1 && name === "SUMMARY") out.push(lineText(bytes, { start: line.start, end: Math.min(line.end, line.start + SUMMARY_BYTES) }));
    else if (top === "VTIMEZONE" && (stack.length === 1 || (stack.length === 2 && ZONE_PARTS.has(stack[1]!))) && ZONE_PROPERTIES.has(name)) out.push(lineText(bytes, line));
  }
  return out;
}
