// The busy time of iCalendar texts within a range (pure): each event read on its own, recurrences expanded from the range asked for, transparent, cancelled and declined events left out, all within stated limits.
import ICAL from "ical.js";
import { addDays } from "../timezones.js";
import { componentLines, IcsLimitError, scanCalendar, valueColon, type ScanResult } from "./scan.js";
import { ianaZone, isoDate, UTC_ZONE, ZoneResolver, type Wall, type Zone } from "./zones.js";

export { IcsLimitError, IcsParseError, SCAN_LIMITS } from "./scan.js";

/** A stretch of busy time. */
export interface BusySpan {
  start: Date;
  end: Date;
}

/** A stretch of busy time and the event (UID) it comes from. */
export interface BusyPeriod extends BusySpan {
  uid: string;
}

/*
 * The rules (docs/spec/integrations.md "Busy times" and "Limits that keep one host from hurting the others", RFC 5545):
 *
 * - Busy: every VEVENT instance overlapping [from, to) that is not TRANSP:TRANSPARENT, not STATUS:CANCELLED, not
 *   X-MICROSOFT-CDO-BUSYSTATUS:FREE (Outlook's "show as free") and not declined by the host (an ATTENDEE whose
 *   address or EMAIL parameter is one of hostEmails, case-insensitive, with PARTSTAT=DECLINED). Tentative counts.
 * - The recurrence set (RFC 5545 3.8.5): DTSTART (always its first instance, also with RDATE and no RRULE), the
 *   RRULE instances (on the wall clock of DTSTART's zone so 09:00 stays 09:00 across DST), RDATE values
 *   (DATE-TIME, DATE, PERIOD with its own length), minus EXDATE values (several per line; a DATE EXDATE removes that
 *   local date's instances). Instances are matched by instant, so an EXDATE or RECURRENCE-ID in UTC or another zone
 *   still names the right one.
 * - RECURRENCE-ID overrides replace the instance they name and stand as events of their own (their own time, their
 *   own TRANSP/STATUS/ATTENDEE), also when that instance is not in the set: an override a calendar shows is busy.
 *   RANGE=THISANDFUTURE also moves (by the override's shift) and restyles every later instance.
 * - Times: TZID per zones.ts; UTC as given; floating times in X-WR-TIMEZONE, else the host's zone. All-day (DATE)
 *   events block their dates from midnight to midnight in the host's zone.
 * - Length: DTEND (exact length for date-times, whole days for dates), else DURATION (days nominal, time exact),
 *   else a date lasts one day and a date-time lasts nothing (RFC 5545 3.6.1: it ends when it starts), so it blocks
 *   no time at all. A DTEND not after DTSTART: a date still blocks its day, a date-time blocks nothing.
 *
 * Expansion starts at the range, whatever DTSTART is (a daily event since 1850 costs what one since last week
 * does), and is exact or fails:
 * - A rule of fixed period without BY parts (every N seconds, minutes, hours, days or weeks) is arithmetic: the
 *   instances in the range are computed, not iterated. Instances closer together than MERGE_GAP_MS come back as
 *   one period per stretch (an event every second is one busy stretch, not 2.9 million periods).
 * - Any other rule is iterated by ical.js, from a start moved forward by whole periods of the rule to just before
 *   the range (the defaults the rule takes from DTSTART made explicit first), when that keeps the rule's instances
 *   the same: no COUNT (its counting starts at DTSTART), no BYWEEKNO or BYYEARDAY. Otherwise from DTSTART, at most
 *   EXPANSION_LIMITS.instancesFromStart instances.
 * - What cannot be expanded within EXPANSION_LIMITS makes the calendar unreadable (IcsLimitError): failure closed.
 *   The rule no date satisfies that ical.js would loop on for ever (BYMONTHDAY=30 in February) is recognised and
 *   has no instances.
 *
 * Reading is lenient where calendar programs are (docs/spec/integrations.md "Real feeds are read as calendar programs read
 * them"): a DTSTART/DTEND/EXDATE/RDATE/RECURRENCE-ID of 8 digits without VALUE=DATE is a date, an empty RRULE,
 * RDATE or EXDATE is none, spaces inside a rule and a COUNT below 1 are dropped, blank lines are skipped (scan.ts). An event that still cannot be read is left out and counted in the
 * warnings; everything else still blocks. Not iCalendar, or cut off: IcsParseError.
 */

/** What the service expands of one calendar for one range (docs/calendars-and-meetings.md "Limits"). */
export const EXPANSION_LIMITS = {
  /** Busy periods of one calendar in the range asked for (at most 34 days: a 31-day listing with margins). */
  periods: 100_000,
  /** Steps of ical.js's rule iteration for one calendar and range, every rule counted together. */
  steps: 500_000,
  /** Instances of one rule iterated from its DTSTART when it cannot be moved forward to the range. */
  instancesFromStart: 50_000,
} as const;

/**
 * Instances of one event closer together than this are one busy period. The shortest thing anyone books is a
 * 15-minute slot (SLOT_DURATIONS), so closing a gap shorter than a minute changes no answer of the service: a slot
 * that would fit in such a gap is still refused.
 */
export const MERGE_GAP_MS = 60_000;

/** The iCalendar properties whose value must be read for an event to be read at all. */
const ESSENTIAL = new Set(["DTSTART", "DTEND", "DURATION", "RRULE", "RDATE", "EXDATE", "RECURRENCE-ID"]);
/** Date properties that real feeds write as 8 digits without VALUE=DATE (CalendarLabs' holiday feeds, for one). */
const DATE_VALUED = new Set(["DTSTART", "DTEND", "EXDATE", "RDATE", "RECURRENCE-ID"]);

const DAY_MS = 86_400_000;
/** More than any zone's offset from UTC: wall clocks read as UTC are this close to their instants. */
const ZONE_SLACK_MS = 2 * DAY_MS;
const UNIT_MS: Readonly<Record<string, number>> = { SECONDLY: 1000, MINUTELY: 60_000, HOURLY: 3_600_000, DAILY: DAY_MS, WEEKLY: 7 * DAY_MS };
const RULE_PARTS = ["BYSECOND", "BYMINUTE", "BYHOUR", "BYDAY", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYMONTH", "BYSETPOS"] as const;
const PART_RANGES: Readonly<Record<string, [number, number]>> = {
  BYSECOND: [0, 60],
  BYMINUTE: [0, 59],
  BYHOUR: [0, 23],
  BYMONTHDAY: [-31, 31],
  BYYEARDAY: [-366, 366],
  BYWEEKNO: [-53, 53],
  BYMONTH: [1, 12],
  BYSETPOS: [-366, 366],
};

/** One event that cannot be read: the reason is the property and its value, as the warning shows it. */
class EventUnreadable extends Error {}

/** A value as a warning quotes it: one line, no control or invisible characters, at most 40 characters. */
function quoted(value: string): string {
  // Control characters and the invisible ones that reorder or hide text (bidi overrides) are no plain words.
  const clean = value.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]+/g, " ").trim();
  return JSON.stringify(clean.length > 40 ? `${clean.slice(0, 39)}…` : clean);
}

function nameOf(line: string): string {
  const head = line.slice(0, valueColon(line));
  const semi = head.indexOf(";");
  return (semi === -1 ? head : head.slice(0, semi)).toUpperCase();
}

function reasonOf(p: ICAL.Property): string {
  let raw: string;
  try {
    raw = p.toICALString();
  } catch {
    raw = "";
  }
  return `${p.name.toUpperCase()} ${quoted(raw.slice(valueColon(raw) + 1))}`;
}

/** Budgets of one calendar and range (EXPANSION_LIMITS), spent across all its texts and rules. */
class Budget {
  steps: number;
  periods: number;

  constructor(unlimited: boolean) {
    this.steps = unlimited ? Infinity : EXPANSION_LIMITS.steps;
    this.periods = unlimited ? Infinity : EXPANSION_LIMITS.periods;
  }

  step(): void {
    if (--this.steps < 0) throw new IcsLimitError(`expanding the calendar's repeating events for this range takes more than ${grouped(EXPANSION_LIMITS.steps)} steps`);
  }

  period(): void {
    if (--this.periods < 0) throw new IcsLimitError(`the calendar has more than ${grouped(EXPANSION_LIMITS.periods)} busy times in the range`);
  }
}

function grouped(n: number): string {
  return n.toLocaleString("en-US").replace(/,/g, " ");
}

/** Thrown from inside ical.js's next() when its candidates have passed the range: no instance of the range is left. */
class PastRange extends Error {}

/**
 * ical.js's iterator tests candidate dates inside one next() until one passes the BY* rules (for a rule whose next
 * instance is years away, all of those years' minutes): every test is a step, and a candidate past `stopNaive`
 * (a wall clock read as UTC) ends the iteration there, since later candidates are later still.
 */
function budgeted(it: ICAL.RecurIterator, budget: Budget, stopNaive: number): ICAL.RecurIterator {
  const check = it.check_contracting_rules.bind(it);
  it.check_contracting_rules = () => {
    budget.step();
    if (naiveMs(wallOfTime(it.last)) > stopNaive) throw new PastRange();
    return check();
  };
  return it;
}

/** A start: a date (all-day), or a date-time as an instant with the zone its wall clock belongs to. */
type When = { kind: "date"; day: string } | { kind: "time"; ms: number; wall: Wall; zone: Zone };

/** A length: nominal days (wall clock) plus exact milliseconds. */
interface Length {
  days: number;
  ms: number;
}

/** What is kept of a VEVENT once read (its ical.js objects are let go, except its rules). */
interface EventRecord {
  uid: string;
  /** How a warning names it (eventName), kept for a series only. */
  name: string | null;
  start: When;
  length: Length;
  blocks: boolean;
  rules: ICAL.Recur[];
  rdates: Array<{ start: When; length: Length | null }>;
  exTimes: Set<string>;
  exDays: Set<string>;
  recurrenceId: When | null;
  thisAndFuture: boolean;
}

type Override = EventRecord & { recurrenceId: When };

function wallOfTime(t: ICAL.Time): Wall {
  return { year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute, second: t.second };
}

function naiveMs(w: Wall): number {
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
}

function dayMs(day: string): number {
  return Date.parse(`${day}T00:00:00Z`);
}

function wallOfDay(day: string): Wall {
  return { year: Number(day.slice(0, 4)), month: Number(day.slice(5, 7)), day: Number(day.slice(8, 10)), hour: 0, minute: 0, second: 0 };
}

function addWallDays(w: Wall, days: number): Wall {
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day + days));
  return { ...w, year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function lengthMs(l: Length): number {
  return l.days * DAY_MS + l.ms;
}

class Reader {
  constructor(
    readonly zones: ZoneResolver,
    private readonly hostZone: string,
  ) {}

  when(t: ICAL.Time, tzid: string | null): When {
    if (![t.year, t.month, t.day, t.hour, t.minute, t.second].every(Number.isFinite)) throw new Error("not a date or time");
    if (t.isDate) return { kind: "date", day: isoDate(t) };
    const zone = t.zone === ICAL.Timezone.utcTimezone ? UTC_ZONE : this.zones.zone(tzid);
    const wall = wallOfTime(t);
    return { kind: "time", ms: zone.toUtc(wall), wall, zone };
  }

  /** The host-zone instant a date starts at. */
  midnight(day: string): number {
    return ianaZone(this.hostZone).toUtc(wallOfDay(day));
  }

  /** [start, end) of an instance. */
  span(start: When, length: Length): [number, number] {
    if (start.kind === "date") return [this.midnight(start.day), this.midnight(addDays(start.day, Math.max(1, length.days)))];
    if (length.days === 0) return [start.ms, start.ms + length.ms];
    return [start.ms, start.zone.toUtc(addWallDays(start.wall, length.days)) + length.ms];
  }
}

function tzidOf(p: ICAL.Property): string | null {
  const v = p.getParameter("tzid");
  return typeof v === "string" && v !== "" ? v : null;
}

function whenOf(reader: Reader, p: ICAL.Property, v: unknown): When {
  if (!(v instanceof ICAL.Time)) throw new EventUnreadable(reasonOf(p));
  try {
    return reader.when(v, tzidOf(p));
  } catch {
    throw new EventUnreadable(reasonOf(p));
  }
}

function firstWhen(reader: Reader, c: ICAL.Component, name: string): When | null {
  const p = c.getFirstProperty(name);
  if (!p) return null;
  return whenOf(reader, p, p.getFirstValue());
}

/** A DURATION's length; a negative one is no length an event can have: the event cannot be read (`p` names it). */
function durationLength(d: ICAL.Duration, p: ICAL.Property): Length {
  if (d.isNegative) throw new EventUnreadable(`${reasonOf(p)} is negative`);
  return { days: d.weeks * 7 + d.days, ms: ((d.hours * 60 + d.minutes) * 60 + d.seconds) * 1000 };
}

/**
 * An event's length from DTEND or DURATION. A DTEND before DTSTART (or a negative DURATION) says nothing a calendar
 * program could show: the event cannot be read, and is named in the warnings rather than dropped in silence. A
 * DTEND equal to DTSTART is an event of no length (a date still blocks its day).
 */
function lengthOf(reader: Reader, c: ICAL.Component, start: When): Length {
  const endProperty = c.getFirstProperty("dtend");
  const end = endProperty ? whenOf(reader, endProperty, endProperty.getFirstValue()) : null;
  if (endProperty && end !== null) {
    if (start.kind === "date") {
      const endDay = end.kind === "date" ? end.day : isoDate(end.wall);
      if (endDay < start.day) throw new EventUnreadable(`${reasonOf(endProperty)} is before DTSTART`);
      return { days: Math.max(1, Math.round((dayMs(endDay) - dayMs(start.day)) / DAY_MS)), ms: 0 };
    }
    const endMs = end.kind === "time" ? end.ms : reader.midnight(end.day);
    if (endMs < start.ms) throw new EventUnreadable(`${reasonOf(endProperty)} is before DTSTART`);
    return { days: 0, ms: endMs - start.ms };
  }
  const p = c.getFirstProperty("duration");
  if (p) {
    const d = p.getFirstValue();
    if (!(d instanceof ICAL.Duration)) throw new EventUnreadable(reasonOf(p));
    const l = durationLength(d, p);
    if (start.kind === "date") return { days: Math.max(1, l.days + Math.ceil(l.ms / DAY_MS)), ms: 0 };
    return l;
  }
  return start.kind === "date" ? { days: 1, ms: 0 } : { days: 0, ms: 0 };
}

function upper(v: unknown): string {
  return typeof v === "string" ? v.trim().toUpperCase() : "";
}

function declinedBy(event: ICAL.Component, emails: ReadonlySet<string>): boolean {
  for (const attendee of event.getAllProperties("attendee")) {
    if (upper(attendee.getParameter("partstat")) !== "DECLINED") continue;
    const value = String(attendee.getFirstValue() ?? "")
      .replace(/^mailto:/i, "")
      .trim()
      .toLowerCase();
    const email = attendee.getParameter("email");
    if (emails.has(value) || (typeof email === "string" && emails.has(email.trim().toLowerCase()))) return true;
  }
  return false;
}

function blocks(event: ICAL.Component, emails: ReadonlySet<string>): boolean {
  if (upper(event.getFirstPropertyValue("transp")) === "TRANSPARENT") return false;
  if (upper(event.getFirstPropertyValue("status")) === "CANCELLED") return false;
  if (upper(event.getFirstPropertyValue("x-microsoft-cdo-busystatus")) === "FREE") return false;
  return !declinedBy(event, emails);
}

/** The key an instance is matched by (EXDATE, RECURRENCE-ID): its instant, or its date for all-day ones. */
function keyOf(w: When): string {
  return w.kind === "date" ? `d${w.day}` : `t${w.ms}`;
}

function localDay(w: When): string {
  return w.kind === "date" ? w.day : isoDate(w.wall);
}

function sortKey(w: When): number {
  return w.kind === "date" ? dayMs(w.day) : w.ms;
}

/** ical.js normalises impossible dates (Feb 30 -> Mar 2, a yearly Feb 29 -> Mar 1) instead of skipping them (RFC 5545 3.3.10). */
function impossible(rule: ICAL.Recur, t: ICAL.Time, dtstart: Wall): boolean {
  const parts = rule.parts as Record<string, unknown[] | undefined>;
  const byMonth = parts.BYMONTH as number[] | undefined;
  const byMonthDay = parts.BYMONTHDAY as number[] | undefined;
  if (byMonth && !byMonth.includes(t.month)) return true;
  if (byMonthDay) {
    const inMonth = ICAL.Time.daysInMonth(t.month, t.year);
    if (!byMonthDay.some((d) => (d > 0 ? d === t.day : inMonth + 1 + d === t.day))) return true;
  }
  if (rule.freq === "YEARLY" && !byMonth && !parts.BYWEEKNO && !parts.BYYEARDAY && !parts.BYDAY) {
    if (t.month !== dtstart.month) return true;
    if (!byMonthDay && t.day !== dtstart.day) return true;
  }
  return false;
}

const MAX_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The common rule no date satisfies, caught before ical.js would loop on it: BYMONTHDAY past the end of every BYMONTH month. */
function neverMatches(rule: ICAL.Recur): boolean {
  const parts = rule.parts as Record<string, number[] | undefined>;
  const days = parts.BYMONTHDAY;
  if (!days || days.length === 0) return false;
  const months = parts.BYMONTH && parts.BYMONTH.length > 0 ? parts.BYMONTH : [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
  const longest = Math.max(...months.map((m) => MAX_DAYS[m - 1] ?? 31));
  return days.every((d) => Math.abs(d) > longest);
}

/** A rule ical.js can iterate without looping or misreading: a frequency, a positive interval, BY values in range. */
function validRule(rule: ICAL.Recur): boolean {
  if (!rule.freq || !(rule.freq in UNIT_MS || rule.freq === "MONTHLY" || rule.freq === "YEARLY")) return false;
  if (!Number.isInteger(rule.interval) || rule.interval < 1) return false;
  if (rule.count !== null && rule.count !== undefined && !(Number.isInteger(rule.count) && rule.count >= 1)) return false;
  const parts = rule.parts as Record<string, unknown[] | undefined>;
  for (const [name, values] of Object.entries(parts)) {
    if (!Array.isArray(values)) continue;
    const range = PART_RANGES[name];
    if (range && !values.every((v) => Number.isInteger(v) && (v as number) >= range[0] && (v as number) <= range[1] && (v !== 0 || range[0] >= 0))) return false;
    if (name === "BYDAY" && !values.every((v) => typeof v === "string" && /^([+-]?([1-9]|[1-4]\d|5[0-3]))?(MO|TU|WE|TH|FR|SA|SU)$/i.test(v))) return false;
  }
  return true;
}

function hasParts(rule: ICAL.Recur): boolean {
  const parts = rule.parts as Record<string, unknown[] | undefined>;
  return RULE_PARTS.some((p) => (parts[p]?.length ?? 0) > 0);
}

/** A line as ical.js should read it: the deviations real feeds contain, read as their authors meant them; null drops it. */
function lenient(line: string): string | null {
  const colon = valueColon(line);
  const head = line.slice(0, colon);
  const name = nameOf(line);
  const value = line.slice(colon + 1);
  // Kept only to name an event that is left out (eventName): nothing of busy time.
  if (name === "SUMMARY") return null;
  if ((name === "RRULE" || name === "RDATE" || name === "EXDATE") && value.trim() === "") return null;
  if (name === "RRULE") {
    // Spaces inside the rule (Outlook: "BYDAY=MO, TU"), and a COUNT of 0 or less (Confluence writes COUNT=-1 once
    // the later events are deleted; its UNTIL still ends the series), as python-recurring-ical-events reads them.
    const rule = value.replace(/\s+/g, "").replace(/(^|;)COUNT=-?\d+(?=;|$)/i, (m, lead: string) => (Number(m.slice(m.indexOf("=") + 1)) > 0 ? m : lead)).replace(/^;|;$/g, "");
    return rule === "" ? null : `${head}:${rule}`;
  }
  if (DATE_VALUED.has(name) && /^\d{8}(,\d{8})*$/.test(value.trim()) && !/;VALUE=/i.test(head)) return `${head};VALUE=DATE:${value.trim()}`;
  if (ESSENTIAL.has(name) && value !== value.trim()) return `${head}:${value.trim()}`;
  return line;
}

/** The VEVENT of its kept lines (scan.ts), each property parsed on its own so a bad one is named. */
function eventComponent(lines: readonly string[]): ICAL.Component {
  const event = new ICAL.Component("vevent");
  for (const raw of lines) {
    if (raw.startsWith("BEGIN:") || raw.startsWith("END:")) continue;
    const line = lenient(raw);
    if (line === null) continue;
    try {
      const property = new ICAL.Property(ICAL.parse.property(line) as unknown[]);
      // ical.js reads a value only when asked (a bad date fails there, not in the parse): asked here, once.
      property.getValues();
      event.addProperty(property);
    } catch {
      const name = nameOf(line);
      // A bad TRANSP, STATUS or ATTENDEE is left out: without it the event blocks, which is the safe side.
      if (ESSENTIAL.has(name)) throw new EventUnreadable(`${name} ${quoted(line.slice(valueColon(line) + 1))}`);
    }
  }
  return event;
}

/** How far around the range an instance or an exception still matters. */
interface Window {
  fromMs: number;
  toMs: number;
}

function readRecord(reader: Reader, lines: readonly string[], emails: ReadonlySet<string>, window: Window): EventRecord {
  const c = eventComponent(lines);
  const uid = String(c.getFirstPropertyValue("uid") ?? "");
  const start = firstWhen(reader, c, "dtstart");
  // Only valid in iTIP messages, which calendars are not: an event without a time is named, never dropped in silence.
  if (start === null) throw new EventUnreadable("it has no DTSTART");
  const length = lengthOf(reader, c, start);
  const recurrenceId = firstWhen(reader, c, "recurrence-id");
  const rules: ICAL.Recur[] = [];
  for (const p of c.getAllProperties("rrule")) {
    const rule = p.getFirstValue();
    if (!(rule instanceof ICAL.Recur) || !validRule(rule)) throw new EventUnreadable(reasonOf(p));
    rules.push(rule);
  }
  // Exceptions and extra dates far from the range name no instance in it (a long series gathers hundreds).
  const near = (ms: number, extraMs: number) => ms >= window.fromMs - extraMs && ms < window.toMs + extraMs;
  const reach = lengthMs(length) + ZONE_SLACK_MS + DAY_MS;
  const rdates: EventRecord["rdates"] = [];
  for (const p of c.getAllProperties("rdate")) {
    for (const v of p.getValues()) {
      if (v instanceof ICAL.Period) {
        const s = whenOf(reader, p, v.start);
        let own: Length;
        if (v.end) {
          const e = whenOf(reader, p, v.end);
          if (s.kind === "time" && e.kind === "time" && e.ms < s.ms) throw new EventUnreadable(`${reasonOf(p)} ends before it starts`);
          own = s.kind === "time" && e.kind === "time" ? { days: 0, ms: e.ms - s.ms } : length;
        } else own = durationLength(v.duration, p);
        if (near(sortKey(s), lengthMs(own) + ZONE_SLACK_MS + DAY_MS)) rdates.push({ start: s, length: own });
      } else {
        const s = whenOf(reader, p, v);
        if (near(sortKey(s), reach)) rdates.push({ start: s, length: null });
      }
    }
  }
  let exTimes: Set<string> = NONE;
  let exDays: Set<string> = NONE;
  for (const p of c.getAllProperties("exdate")) {
    for (const v of p.getValues()) {
      const ex = whenOf(reader, p, v);
      if (!near(sortKey(ex), reach)) continue;
      if (ex.kind === "date") (exDays === NONE ? (exDays = new Set()) : exDays).add(ex.day);
      else (exTimes === NONE ? (exTimes = new Set()) : exTimes).add(keyOf(ex));
    }
  }
  const range = upper(c.getFirstProperty("recurrence-id")?.getParameter("range"));
  // A series keeps its name: should its rule fail to expand later, the warning names it.
  const name = rules.length > 0 || rdates.length > 0 ? eventName(lines) : null;
  return { uid, name, start, length, blocks: blocks(c, emails), rules, rdates, exTimes, exDays, recurrenceId, thisAndFuture: range === "THISANDFUTURE" };
}

/** The exceptions of the many events that have none: one shared empty set, never written to. */
const NONE: Set<string> = new Set();

/** A DATE-TIME EXDATE on an all-day series (not valid, but written): it removes the instance of its UTC date. */
function exDateTimeOnDay(exTimes: ReadonlySet<string>, day: string): boolean {
  for (const k of exTimes) if (new Date(Number(k.slice(1))).toISOString().slice(0, 10) === day) return true;
  return false;
}

function excluded(master: EventRecord, inst: When): boolean {
  if (master.exTimes.size === 0 && master.exDays.size === 0) return false;
  return master.exTimes.has(keyOf(inst)) || master.exDays.has(localDay(inst)) || (inst.kind === "date" && exDateTimeOnDay(master.exTimes, inst.day));
}

function shifted(start: When, o: Override): When {
  if (start.kind === "date") {
    const shift = o.start.kind === "date" && o.recurrenceId.kind === "date" ? Math.round((dayMs(o.start.day) - dayMs(o.recurrenceId.day)) / DAY_MS) : 0;
    return { kind: "date", day: addDays(start.day, shift) };
  }
  if (o.start.kind === "time" && o.recurrenceId.kind === "time") {
    // The shift is on the series' wall clock (11:00 instead of 09:00 stays 11:00 after a DST change).
    const shift = naiveMs(start.zone.wallOf(o.start.ms)) - naiveMs(start.zone.wallOf(o.recurrenceId.ms));
    const wall = UTC_ZONE.wallOf(naiveMs(start.wall) + shift);
    return { kind: "time", ms: start.zone.toUtc(wall), wall, zone: start.zone };
  }
  return start;
}

/** The wall clock of DTSTART as the floating ICAL.Time the iterator runs on. */
function floatingTime(w: Wall, isDate: boolean): ICAL.Time {
  return new ICAL.Time({ ...w, isDate }, ICAL.Timezone.localTimezone);
}

/**
 * The iterator compares UNTIL with DTSTART's wall clock, so UNTIL becomes one too: a UTC UNTIL (what RFC 5545
 * asks for with a TZID) is read in DTSTART's zone; a floating one (written by some clients anyway) is taken as
 * that zone's wall clock already; a date UNTIL on a date-time series lasts to the end of its day.
 */
function untilOnWallClock(recur: ICAL.Recur, start: When): void {
  const u = recur.until;
  if (!u) return;
  if (start.kind === "date") recur.until = floatingTime(wallOfTime(u), true);
  else if (u.isDate) recur.until = floatingTime({ ...wallOfTime(u), hour: 23, minute: 59, second: 59 }, false);
  else if (u.zone === ICAL.Timezone.utcTimezone) recur.until = floatingTime(start.zone.wallOf(UTC_ZONE.toUtc(wallOfTime(u))), false);
  else recur.until = floatingTime(wallOfTime(u), false);
}

/**
 * A start for ical.js whole periods of the rule after DTSTART and at least one period before `beforeNaive` (a wall
 * clock read as UTC), with the rule's DTSTART-given defaults made explicit on `recur`; null when the rule's
 * instances would not stay the same (COUNT, BYWEEKNO, BYYEARDAY, a yearly BYMONTHDAY without BYMONTH), or when the
 * start is already close.
 */
function movedStart(recur: ICAL.Recur, start: Wall, beforeNaive: number): Wall | null {
  if (recur.count) return null;
  const parts = recur.parts as Record<string, unknown[] | undefined>;
  const has = (p: string) => (parts[p]?.length ?? 0) > 0;
  if (has("BYWEEKNO") || has("BYYEARDAY")) return null;
  const s = naiveMs(start);
  const unit = UNIT_MS[recur.freq];
  if (unit !== undefined) {
    const period = unit * recur.interval;
    const k = Math.floor((beforeNaive - period - s) / period);
    return k >= 1 ? UTC_ZONE.wallOf(s + k * period) : null;
  }
  const target = new Date(beforeNaive);
  if (recur.freq === "MONTHLY") {
    const index = (y: number, m: number) => y * 12 + (m - 1);
    const k = Math.floor((index(target.getUTCFullYear(), target.getUTCMonth() + 1) - recur.interval - 1 - index(start.year, start.month)) / recur.interval);
    if (k < 1) return null;
    if (!has("BYDAY") && !has("BYMONTHDAY")) parts.BYMONTHDAY = [start.day];
    const moved = index(start.year, start.month) + k * recur.interval;
    return { ...start, year: Math.floor(moved / 12), month: (moved % 12) + 1, day: 1 };
  }
  // YEARLY
  if (has("BYMONTHDAY") && !has("BYMONTH")) return null;
  const k = Math.floor((target.getUTCFullYear() - 1 - recur.interval - start.year) / recur.interval);
  if (k < 1) return null;
  if (!has("BYMONTH") && !has("BYDAY") && !has("BYMONTHDAY")) {
    parts.BYMONTH = [start.month];
    parts.BYMONTHDAY = [start.day];
  } else if (has("BYMONTH") && !has("BYDAY") && !has("BYMONTHDAY")) parts.BYMONTHDAY = [start.day];
  return { ...start, year: start.year + k * recur.interval, month: 1, day: 1 };
}

/** How far from the range an override's RECURRENCE-ID may name an instance that reaches into it (a series' events are shorter). */
const OVERRIDE_REACH_MS = 62 * DAY_MS;

/** Where the expansion of one calendar writes and what it needs to know. */
interface Expansion {
  reader: Reader;
  fromMs: number;
  toMs: number;
  budget: Budget;
  /** ReadOptions.plain: every rule iterated from DTSTART, no limit on instances. */
  plain: boolean;
  push(start: When, length: Length, uid: string): void;
  /** An already computed [start, end) of the master's own instances (the arithmetic path). */
  pushSpan(s: number, e: number, uid: string): void;
}

type Instances = Map<string, { start: When; length: Length | null }>;

/**
 * The arithmetic path: a rule of fixed period without BY parts (n-th instance at DTSTART + n periods on the wall
 * clock), with no THISANDFUTURE override to restyle it. Instances closer than MERGE_GAP_MS become one period per
 * stretch, computed per wall-clock day (a day whose zone offset changes is split where it changes).
 */
function arithmetic(x: Expansion, master: EventRecord, recur: ICAL.Recur, replaced: ReadonlySet<string>, listed: Instances): void {
  const start = master.start;
  const period = UNIT_MS[recur.freq]! * recur.interval;
  const s = start.kind === "date" ? dayMs(start.day) : naiveMs(start.wall);
  const reach = lengthMs(master.length) + ZONE_SLACK_MS;
  let last = Math.floor((x.toMs + ZONE_SLACK_MS - s) / period);
  if (recur.count) last = Math.min(last, recur.count - 1);
  if (recur.until) last = Math.min(last, Math.floor((naiveMs(wallOfTime(recur.until)) - s) / period));
  // Instance 0 is DTSTART, which the caller lists with the RDATEs.
  const first = Math.max(1, Math.ceil((x.fromMs - reach - s) / period));
  if (last < first) return;
  const whenAt = (n: number): When => {
    const wall = UTC_ZONE.wallOf(s + n * period);
    return start.kind === "date" ? { kind: "date", day: isoDate(wall) } : { kind: "time", ms: start.zone.toUtc(wall), wall, zone: start.zone };
  };
  const skip = (w: When) => {
    const key = keyOf(w);
    return replaced.has(key) || listed.has(key) || excluded(master, w);
  };
  const lengthAt = master.length.ms;
  // A date-time without a length blocks nothing (RFC 5545 3.6.1), however often it repeats.
  if (start.kind === "time" && master.length.days === 0 && lengthAt === 0) return;
  if (start.kind === "date" || master.length.days > 0 || period - lengthAt >= MERGE_GAP_MS) {
    // At most one instance a minute: the range holds at most some 50 000 of them, each pushed on its own.
    for (let n = first; n <= last; n++) {
      const w = whenAt(n);
      if (!skip(w)) x.push(w, master.length, master.uid);
    }
    return;
  }
  // Dense: stretches. The excluded instances in the range (EXDATE, moved by an override) split them.
  const cuts = new Set<number>();
  const cutAt = (ms: number) => {
    /*
     * Every instance at that instant: in a spring-forward gap two wall clocks (02:30, read with the offset before
     * the change, and 03:30) are one instant, and iteration keys instances by instant. So each offset the zone has
     * around it is tried.
     */
    for (const around of [ms - DAY_MS, ms, ms + DAY_MS]) {
      const offset = naiveMs(start.zone.wallOf(around)) - around;
      const d = ms + offset - s;
      if (d % period !== 0 || d / period < first || d / period > last) continue;
      const w = whenAt(d / period);
      if (w.kind === "time" && w.ms === ms) cuts.add(d / period);
    }
  };
  for (const k of [...master.exTimes, ...replaced]) if (k.startsWith("t")) cutAt(Number(k.slice(1)));
  for (const day of master.exDays) {
    const a = Math.max(first, Math.ceil((dayMs(day) - s) / period));
    const b = Math.min(last, Math.floor((dayMs(day) + DAY_MS - 1 - s) / period));
    for (let n = a; n <= b; n++) cuts.add(n);
  }
  const zone = start.zone;
  const offsetAt = (n: number) => {
    const wall = UTC_ZONE.wallOf(s + n * period);
    return s + n * period - zone.toUtc(wall);
  };
  const run = (a: number, b: number) => {
    if (a > b) return;
    const offset = offsetAt(a);
    if (a === b || offset === offsetAt(b)) {
      // Instance n is [s + n·period - offset, + length): only those that reach into the range, as iteration gives.
      const lo = Math.max(a, Math.floor((x.fromMs - lengthAt - s + offset) / period) + 1);
      const hi = Math.min(b, Math.ceil((x.toMs - s + offset) / period) - 1);
      if (lo <= hi) x.pushSpan(s + lo * period - offset, s + hi * period - offset + lengthAt, master.uid);
      return;
    }
    const mid = Math.floor((a + b) / 2);
    run(a, mid);
    run(mid + 1, b);
  };
  const sorted = [...cuts].sort((p, q) => p - q);
  let from = first;
  for (const cut of [...sorted, last + 1]) {
    // Stretches of one wall-clock day each: a zone changes its offset at most once a day (zones.ts assumes the same).
    for (let a = from; a <= cut - 1; ) {
      const dayEnd = Math.floor((s + a * period) / DAY_MS) * DAY_MS + DAY_MS;
      const b = Math.min(cut - 1, Math.ceil((dayEnd - s) / period) - 1);
      run(a, b);
      a = b + 1;
    }
    from = cut + 1;
  }
}

/** ical.js's iteration of one rule: from a start moved to the range when that is exact, else from DTSTART within limits. */
function iterated(x: Expansion, master: EventRecord, recur: ICAL.Recur, out: Instances): void {
  const start = master.start;
  const dtstart = start.kind === "date" ? wallOfDay(start.day) : start.wall;
  const reach = lengthMs(master.length) + ZONE_SLACK_MS + DAY_MS;
  const moved = x.plain ? null : movedStart(recur, dtstart, x.fromMs - reach);
  // Candidates come in order, but within one period not always (BYSETPOS, BYDAY lists): a period of margin.
  const period = (UNIT_MS[recur.freq] ?? (recur.freq === "MONTHLY" ? 31 : 366) * DAY_MS) * recur.interval;
  const it = budgeted(recur.iterator(floatingTime(moved ?? dtstart, start.kind === "date")), x.budget, x.toMs + ZONE_SLACK_MS + period);
  let before = 0;
  for (;;) {
    x.budget.step();
    let next: ICAL.Time | null;
    try {
      next = it.next();
    } catch (err) {
      if (err instanceof PastRange) return;
      throw err;
    }
    if (!next) return;
    const wall = wallOfTime(next);
    const naive = naiveMs(wall);
    if (naive - ZONE_SLACK_MS >= x.toMs) return;
    // Far before the range: no need to read the zone (the costly part) for an instance that cannot reach it.
    if (naive + reach < x.fromMs) {
      if (moved === null && !x.plain && ++before > EXPANSION_LIMITS.instancesFromStart) {
        throw new IcsLimitError(`an event repeats more than ${grouped(EXPANSION_LIMITS.instancesFromStart)} times before the range and its rule cannot be skipped ahead`);
      }
      continue;
    }
    if (impossible(recur, next, dtstart)) continue;
    const when: When = start.kind === "date" ? { kind: "date", day: isoDate(wall) } : { kind: "time", ms: start.zone.toUtc(wall), wall, zone: start.zone };
    const key = keyOf(when);
    if (!out.has(key)) out.set(key, { start: when, length: null });
  }
}

function expandMaster(x: Expansion, master: EventRecord, replaced: ReadonlySet<string>, futures: readonly Override[]): void {
  const out: Instances = new Map();
  out.set(keyOf(master.start), { start: master.start, length: null });
  for (const r of master.rdates) {
    const key = keyOf(r.start);
    if (r.length !== null || !out.has(key)) out.set(key, r);
  }
  for (const rule of master.rules) {
    const recur = rule.clone();
    untilOnWallClock(recur, master.start);
    if (neverMatches(recur)) continue;
    try {
      if (!x.plain && futures.length === 0 && master.blocks && recur.freq in UNIT_MS && !hasParts(recur)) arithmetic(x, master, recur, replaced, out);
      else iterated(x, master, recur, out);
    } catch (err) {
      if (err instanceof IcsLimitError) throw err;
      throw new EventUnreadable(`RRULE ${quoted(rule.toString())}`);
    }
  }
  for (const [key, inst] of out) {
    if (replaced.has(key) || excluded(master, inst.start)) continue;
    // The latest THISANDFUTURE override at or before this instance restyles and moves it.
    let governing: Override | null = null;
    for (const f of futures) if (sortKey(f.recurrenceId) <= sortKey(inst.start)) governing = f;
    if (governing === null) {
      if (master.blocks) x.push(inst.start, inst.length ?? master.length, master.uid);
    } else if (governing.blocks) {
      x.push(shifted(inst.start, governing), inst.length ?? governing.length, master.uid);
    }
  }
}

/** Events named one by one in the warnings; past this many, one more line counts the rest. */
export const NAMED_WARNINGS = 20;

/**
 * The events a read leaves out, each named in its own warning (docs/spec/integrations.md: every event a read leaves
 * out is named): `event "Team sync" could not be read: DTEND "20260302T080000Z" is before DTSTART`. The same line
 * twice (one event in several CalDAV objects) is said once.
 */
class LeftOut {
  private readonly named = new Set<string>();
  private more = 0;

  add(name: string | null, reason: string): void {
    const line = `${name === null ? "an event" : `event ${name}`} could not be read: ${reason}`;
    if (this.named.has(line)) return;
    if (this.named.size < NAMED_WARNINGS) this.named.add(line);
    else this.more++;
  }

  warnings(): string[] {
    return this.more === 0 ? [...this.named] : [...this.named, `and ${this.more} more event${this.more === 1 ? "" : "s"} could not be read`];
  }
}

/**
 * How a warning names an event: its SUMMARY (the title a host sees in their calendar program), else its UID, quoted;
 * null when it has neither. Read from the kept lines only when an event is left out.
 */
function eventName(lines: readonly string[]): string | null {
  let uid: string | null = null;
  for (const line of lines) {
    const name = nameOf(line);
    const value = line.slice(valueColon(line) + 1).replace(/\\([,;\\])/g, "$1").replace(/\\[nN]/g, " ").trim();
    if (name === "SUMMARY" && value !== "") return quoted(value);
    if (name === "UID" && value !== "" && uid === null) uid = quoted(value);
  }
  return uid;
}

/** What reading a calendar gave: its busy periods in the range, and what could not be read of it, in plain words. */
export interface CalendarRead {
  periods: BusyPeriod[];
  warnings: string[];
}

export interface ReadOptions {
  /** The host's IANA zone: all-day events block their dates there, floating times are read there. */
  hostZone: string;
  /** The host's addresses: an event the host declined blocks nothing. */
  hostEmails: readonly string[];
  /** Events to leave out (the ones this service wrote for its bookings). */
  ignoreUid?: (uid: string) => boolean;
  /**
   * Every rule iterated by ical.js from its DTSTART, without the arithmetic and the moved start, and without
   * EXPANSION_LIMITS: the reference the tests hold the fast paths to. Never for a calendar from outside.
   */
  plain?: boolean;
}

const encoder = new TextEncoder();

/** The VTIMEZONEs of a scanned text, each parsed when an event first names it. */
function zoneSource(scan: ScanResult) {
  const parsed = new Map<string, ICAL.Component | null>();
  return {
    floatingTzid: scan.floatingTzid,
    definition(tzid: string): ICAL.Component | null {
      if (parsed.has(tzid)) return parsed.get(tzid)!;
      const span = scan.zones.get(tzid);
      let component: ICAL.Component | null = null;
      if (span !== undefined) {
        try {
          component = new ICAL.Component(ICAL.parse(componentLines(scan, span).join("\r\n")) as unknown[]);
        } catch {
          // A VTIMEZONE ical.js cannot parse: the resolver falls back as for a missing one.
        }
      }
      parsed.set(tzid, component);
      return component;
    },
  };
}

/**
 * The busy periods of one calendar (one or more iCalendar texts: a feed, or a CalDAV calendar's objects) within
 * [from, to). Throws IcsParseError when a text is not iCalendar and IcsLimitError past a limit (scan.ts
 * SCAN_LIMITS, EXPANSION_LIMITS); events that cannot be read are left out and counted in `warnings`.
 */
export function readCalendar(texts: ReadonlyArray<string | Uint8Array>, range: { from: Date; to: Date }, opts: ReadOptions): CalendarRead {
  const fromMs = range.from.getTime();
  const toMs = range.to.getTime();
  const emails = new Set(opts.hostEmails.map((e) => e.trim().toLowerCase()));
  const budget = new Budget(opts.plain === true);
  const periods: BusyPeriod[] = [];
  const leftOut = new LeftOut();
  for (const text of texts) {
    const scan = scanCalendar(typeof text === "string" ? encoder.encode(text) : text);
    if (!(toMs > fromMs)) continue;
    const reader = new Reader(new ZoneResolver(zoneSource(scan), opts.hostZone), opts.hostZone);
    const pushSpan = (s: number, e: number, uid: string) => {
      if (s < toMs && e > fromMs && e > s) {
        budget.period();
        periods.push({ start: new Date(s), end: new Date(e), uid });
      }
    };
    const x: Expansion = { reader, fromMs, toMs, budget, plain: opts.plain === true, pushSpan, push: (start, length, uid) => pushSpan(...reader.span(start, length), uid) };
    const masters = new Map<string, EventRecord[]>();
    const overrides = new Map<string, Override[]>();
    const window = { fromMs, toMs };
    for (const span of scan.events) {
      let record: EventRecord;
      const lines = componentLines(scan, span);
      try {
        record = readRecord(reader, lines, emails, window);
      } catch (err) {
        if (err instanceof IcsLimitError) throw err;
        leftOut.add(eventName(lines), err instanceof EventUnreadable ? err.message : "ical.js cannot read it");
        continue;
      }
      if (opts.ignoreUid?.(record.uid)) continue;
      if (record.recurrenceId !== null) {
        const o = record as Override;
        const [s, e] = reader.span(o.start, o.length);
        /*
         * An override far from the range neither blocks in it nor names an instance in it. Letting one go can only
         * add busy time (the instance it replaced blocks as the series does), never remove it.
         */
        const rid = sortKey(o.recurrenceId);
        if (o.thisAndFuture || (s < toMs && e > fromMs) || (rid > fromMs - OVERRIDE_REACH_MS && rid < toMs + OVERRIDE_REACH_MS)) {
          overrides.set(o.uid, [...(overrides.get(o.uid) ?? []), o]);
        }
      } else if (record.rules.length > 0 || record.rdates.length > 0) {
        masters.set(record.uid, [...(masters.get(record.uid) ?? []), record]);
      } else {
        // A single event far from the range is let go at once: a feed of years holds tens of thousands.
        const [s, e] = reader.span(record.start, record.length);
        if (s < toMs && e > fromMs) masters.set(record.uid, [...(masters.get(record.uid) ?? []), record]);
      }
    }

    for (const list of overrides.values()) for (const o of list) if (o.blocks) x.push(o.start, o.length, o.uid);

    for (const [uid, list] of masters) {
      const own = overrides.get(uid) ?? [];
      const replaced = new Set(own.map((o) => keyOf(o.recurrenceId)));
      const futures = own.filter((o) => o.thisAndFuture).sort((a, b) => sortKey(a.recurrenceId) - sortKey(b.recurrenceId));
      for (const master of list) {
        // A series that does not block and that no THISANDFUTURE override restyles has nothing busy to expand.
        if (!master.blocks && futures.length === 0) continue;
        try {
          expandMaster(x, master, replaced, futures);
        } catch (err) {
          if (!(err instanceof EventUnreadable)) throw err;
          leftOut.add(master.name, err.message);
        }
      }
    }
  }
  // A stable order, whatever the order of the VEVENTs.
  periods.sort((a, b) => a.start.getTime() - b.start.getTime() || a.end.getTime() - b.end.getTime() || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  return { periods, warnings: leftOut.warnings() };
}

/** The busy periods of one iCalendar text within [from, to) (readCalendar without its warnings). */
export function busyPeriods(icsText: string, range: { from: Date; to: Date }, opts: ReadOptions): BusyPeriod[] {
  return readCalendar([icsText], range, opts).periods;
}

/**
 * The busy time of periods as sorted, disjoint stretches: overlapping ones, touching ones and ones less than
 * `gapMs` apart become one (MERGE_GAP_MS: no slot fits between them anyway).
 */
export function mergeBusy(periods: readonly BusySpan[], gapMs = MERGE_GAP_MS): BusySpan[] {
  const sorted = [...periods].sort((a, b) => a.start.getTime() - b.start.getTime());
  const out: BusySpan[] = [];
  let start = NaN;
  let end = NaN;
  for (const p of sorted) {
    const s = p.start.getTime();
    const e = p.end.getTime();
    if (out.length > 0 || !Number.isNaN(start)) {
      if (s - end < gapMs) {
        if (e > end) end = e;
        continue;
      }
      out.push({ start: new Date(start), end: new Date(end) });
    }
    start = s;
    end = e;
  }
  if (!Number.isNaN(start)) out.push({ start: new Date(start), end: new Date(end) });
  return out;
}
