// The busy periods of an iCalendar text within a range (pure): recurrences expanded, transparent, cancelled and declined events left out.
import ICAL from "ical.js";
import { addDays } from "../timezones.js";
import { ianaZone, isoDate, UTC_ZONE, ZoneResolver, type Wall, type Zone } from "./zones.js";

export interface BusyPeriod {
  start: Date;
  end: Date;
  uid: string;
}

export class IcsParseError extends Error {
  override name = "IcsParseError";
}

/*
 * The rules (docs/spec/integrations.md "Busy times", RFC 5545), all kept here rather than in ical.js's RecurExpansion, whose
 * zone handling needs every TZID registered globally and which leaves DTSTART out of an RDATE-only set:
 *
 * - Busy: every VEVENT instance overlapping [from, to) that is not TRANSP:TRANSPARENT, not STATUS:CANCELLED, not
 *   X-MICROSOFT-CDO-BUSYSTATUS:FREE (Outlook's "show as free") and not declined by the host (an ATTENDEE whose
 *   address or EMAIL parameter is one of hostEmails, case-insensitive, with PARTSTAT=DECLINED). Tentative counts.
 * - The recurrence set (RFC 5545 3.8.5): DTSTART (always its first instance, also with RDATE and no RRULE), the
 *   RRULE instances (ical.js's RecurIterator, run on the wall clock of DTSTART's zone so 09:00 stays 09:00 across
 *   DST), RDATE values (DATE-TIME, DATE, PERIOD with its own length), minus EXDATE values (several per line; a DATE
 *   EXDATE removes that local date's instances). Instances are matched by instant, so an EXDATE or RECURRENCE-ID in
 *   UTC or another zone still names the right one.
 * - RECURRENCE-ID overrides replace the instance they name and stand as events of their own (their own time, their
 *   own TRANSP/STATUS/ATTENDEE), also when that instance is not in the set: an override a calendar shows is busy.
 *   RANGE=THISANDFUTURE also moves (by the override's shift) and restyles every later instance.
 * - Times: TZID per zones.ts; UTC as given; floating times in X-WR-TIMEZONE, else the host's zone. All-day (DATE)
 *   events block their dates from midnight to midnight in the host's zone.
 * - Length: DTEND (exact length for date-times, whole days for dates), else DURATION (days nominal, time exact),
 *   else a date lasts one day and a date-time lasts nothing (RFC 5545 3.6.1: it ends when it starts), so it blocks
 *   no time at all. A DTEND not after DTSTART: a date still blocks its day, a date-time blocks nothing.
 * - Bounds: an RRULE is iterated only until its instances pass range.to, and at most MAX_INSTANCES_PER_EVENT times
 *   (from DTSTART, as COUNT and BYSETPOS need) over at most MAX_CANDIDATES_PER_RULE candidate dates; instances past
 *   either cap are not looked at (a daily event since 1900 still fits; a rule no date satisfies ends there).
 * - Not iCalendar (no VCALENDAR, a line ical.js cannot read, an event time that is not a time): IcsParseError.
 */

/** RRULE instances looked at per rule at most. */
export const MAX_INSTANCES_PER_EVENT = 50_000;

/**
 * Candidate dates ical.js may test per rule at most. Its iterator loops inside one next() until a candidate passes
 * the BY* rules, and for a rule no date satisfies (FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30) that loop never ends: one
 * such event in a feed would hang the process. Past the budget the rule is treated like one past its instance cap.
 */
export const MAX_CANDIDATES_PER_RULE = 100_000;

class RuleBudgetSpent extends Error {}

function budgeted(it: ICAL.RecurIterator): ICAL.RecurIterator {
  const check = it.check_contracting_rules.bind(it);
  let n = 0;
  it.check_contracting_rules = () => {
    if (++n > MAX_CANDIDATES_PER_RULE) throw new RuleBudgetSpent();
    return check();
  };
  return it;
}

const DAY_MS = 86_400_000;
/** More than any zone's offset from UTC: wall clocks read as UTC are this close to their instants. */
const ZONE_SLACK_MS = 2 * DAY_MS;

/** A start: a date (all-day), or a date-time as an instant with the zone its wall clock belongs to. */
type When = { kind: "date"; day: string } | { kind: "time"; ms: number; wall: Wall; zone: Zone };

/** A length: nominal days (wall clock) plus exact milliseconds. */
interface Length {
  days: number;
  ms: number;
}

interface EventInfo {
  component: ICAL.Component;
  uid: string;
  start: When;
  length: Length;
  blocks: boolean;
}

interface Override extends EventInfo {
  recurrenceId: When;
  thisAndFuture: boolean;
}

function wallOfTime(t: ICAL.Time): Wall {
  return { year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute, second: t.second };
}

function naiveMs(w: Wall): number {
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
}

function dayMs(day: string): number {
  return Date.parse(`${day}T00:00:00Z`);
}

function addWallDays(w: Wall, days: number): Wall {
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day + days));
  return { ...w, year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

class Reader {
  constructor(
    readonly zones: ZoneResolver,
    private readonly hostZone: string,
  ) {}

  when(t: ICAL.Time, tzid: string | null): When {
    if (![t.year, t.month, t.day, t.hour, t.minute, t.second].every(Number.isFinite)) throw new IcsParseError(`not a date or time: ${String(t)}`);
    if (t.isDate) return { kind: "date", day: isoDate(t) };
    const zone = t.zone === ICAL.Timezone.utcTimezone ? UTC_ZONE : this.zones.zone(tzid);
    const wall = wallOfTime(t);
    return { kind: "time", ms: zone.toUtc(wall), wall, zone };
  }

  /** The host-zone instant a date starts at. */
  midnight(day: string): number {
    return ianaZone(this.hostZone).toUtc({ year: Number(day.slice(0, 4)), month: Number(day.slice(5, 7)), day: Number(day.slice(8, 10)), hour: 0, minute: 0, second: 0 });
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

function firstWhen(reader: Reader, c: ICAL.Component, name: string): When | null {
  const p = c.getFirstProperty(name);
  if (!p) return null;
  const v = p.getFirstValue();
  if (!(v instanceof ICAL.Time)) throw new IcsParseError(`${name.toUpperCase()} is not a date or time`);
  return reader.when(v, tzidOf(p));
}

function lengthOf(reader: Reader, c: ICAL.Component, start: When): Length {
  const end = firstWhen(reader, c, "dtend");
  if (end !== null) {
    if (start.kind === "date") {
      const endDay = end.kind === "date" ? end.day : isoDate(end.wall);
      return { days: Math.max(1, Math.round((dayMs(endDay) - dayMs(start.day)) / DAY_MS)), ms: 0 };
    }
    const endMs = end.kind === "time" ? end.ms : reader.midnight(end.day);
    return { days: 0, ms: Math.max(0, endMs - start.ms) };
  }
  const d = c.getFirstPropertyValue("duration");
  if (d instanceof ICAL.Duration) {
    if (d.isNegative) return { days: 0, ms: 0 };
    const days = d.weeks * 7 + d.days;
    const ms = ((d.hours * 60 + d.minutes) * 60 + d.seconds) * 1000;
    if (start.kind === "date") return { days: Math.max(1, days + Math.ceil(ms / DAY_MS)), ms: 0 };
    return { days, ms };
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

/** ical.js normalises impossible dates (Feb 30 -> Mar 2, a yearly Feb 29 -> Mar 1) instead of skipping them (RFC 5545 3.3.10). */
function impossible(rule: ICAL.Recur, t: ICAL.Time, dtstart: ICAL.Time): boolean {
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

/** The common rule no date satisfies, caught before ical.js spends its budget on it: BYMONTHDAY past the end of every BYMONTH month. */
function neverMatches(rule: ICAL.Recur): boolean {
  const parts = rule.parts as Record<string, number[] | undefined>;
  const days = parts.BYMONTHDAY;
  if (!days || days.length === 0) return false;
  const months = parts.BYMONTH && parts.BYMONTH.length > 0 ? parts.BYMONTH : [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
  const longest = Math.max(...months.map((m) => MAX_DAYS[m - 1] ?? 31));
  return days.every((d) => Math.abs(d) > longest);
}

function readEvent(reader: Reader, c: ICAL.Component, uid: string, emails: ReadonlySet<string>): EventInfo | null {
  const start = firstWhen(reader, c, "dtstart");
  // An event without DTSTART has no time to block (only valid in iTIP messages, which feeds are not).
  if (start === null) return null;
  return { component: c, uid, start, length: lengthOf(reader, c, start), blocks: blocks(c, emails) };
}

/** Every instance start of a master (before overrides), up to range.to; each with its own length when an RDATE PERIOD gave one. */
function instancesOf(reader: Reader, master: EventInfo, toMs: number, fromMs: number): Map<string, { start: When; length: Length | null }> {
  const out = new Map<string, { start: When; length: Length | null }>();
  const start = master.start;
  out.set(keyOf(start), { start, length: null });
  const maxLengthMs = master.length.days * DAY_MS + master.length.ms + DAY_MS;
  for (const p of master.component.getAllProperties("rrule")) {
    const rule = p.getFirstValue();
    if (!(rule instanceof ICAL.Recur)) continue;
    const recur = rule.clone();
    const dtstart =
      start.kind === "date"
        ? new ICAL.Time({ year: Number(start.day.slice(0, 4)), month: Number(start.day.slice(5, 7)), day: Number(start.day.slice(8, 10)), isDate: true }, ICAL.Timezone.localTimezone)
        : new ICAL.Time({ ...start.wall, isDate: false }, ICAL.Timezone.localTimezone);
    if (recur.until) {
      /*
       * The iterator compares UNTIL with DTSTART's wall clock, so UNTIL becomes one too: a UTC UNTIL (what RFC 5545
       * asks for with a TZID) is read in DTSTART's zone; a floating one (written by some clients anyway) is taken as
       * that zone's wall clock already; a date UNTIL on a date-time series lasts to the end of its day.
       */
      const u = recur.until;
      const floating = (w: Wall, isDate: boolean) => new ICAL.Time({ ...w, isDate }, ICAL.Timezone.localTimezone);
      if (start.kind === "date") recur.until = floating(wallOfTime(u), true);
      else if (u.isDate) recur.until = floating({ ...wallOfTime(u), hour: 23, minute: 59, second: 59 }, false);
      else if (u.zone === ICAL.Timezone.utcTimezone) recur.until = floating(start.zone.wallOf(UTC_ZONE.toUtc(wallOfTime(u))), false);
      else recur.until = floating(wallOfTime(u), false);
    }
    if (neverMatches(recur)) continue;
    const it = budgeted(recur.iterator(dtstart));
    for (let n = 0; n < MAX_INSTANCES_PER_EVENT; n++) {
      let next: ICAL.Time | null;
      try {
        next = it.next();
      } catch (err) {
        if (err instanceof RuleBudgetSpent) break;
        throw err;
      }
      if (!next) break;
      const wall = wallOfTime(next);
      const naive = naiveMs(wall);
      if (naive - ZONE_SLACK_MS >= toMs) break;
      // Far before the range: no need to read the zone (the costly part) for an instance that cannot reach it.
      if (naive + maxLengthMs + ZONE_SLACK_MS < fromMs) continue;
      if (impossible(recur, next, dtstart)) continue;
      const when: When = start.kind === "date" ? { kind: "date", day: isoDate(wall) } : { kind: "time", ms: start.zone.toUtc(wall), wall, zone: start.zone };
      const key = keyOf(when);
      if (!out.has(key)) out.set(key, { start: when, length: null });
    }
  }
  for (const p of master.component.getAllProperties("rdate")) {
    const tzid = tzidOf(p);
    for (const v of p.getValues()) {
      if (v instanceof ICAL.Period) {
        const s = reader.when(v.start, tzid);
        let length: Length;
        if (v.end) {
          const e = reader.when(v.end, tzid);
          length = s.kind === "time" && e.kind === "time" ? { days: 0, ms: Math.max(0, e.ms - s.ms) } : master.length;
        } else {
          const d = v.duration;
          length = d.isNegative ? { days: 0, ms: 0 } : { days: d.weeks * 7 + d.days, ms: ((d.hours * 60 + d.minutes) * 60 + d.seconds) * 1000 };
        }
        out.set(keyOf(s), { start: s, length });
      } else if (v instanceof ICAL.Time) {
        const s = reader.when(v, tzid);
        if (!out.has(keyOf(s))) out.set(keyOf(s), { start: s, length: null });
      }
    }
  }
  const exTimes = new Set<string>();
  const exDays = new Set<string>();
  for (const p of master.component.getAllProperties("exdate")) {
    const tzid = tzidOf(p);
    for (const v of p.getValues()) {
      if (!(v instanceof ICAL.Time)) continue;
      const ex = reader.when(v, tzid);
      if (ex.kind === "date") exDays.add(ex.day);
      else exTimes.add(keyOf(ex));
    }
  }
  for (const [key, inst] of out) {
    if (exTimes.has(key) || exDays.has(localDay(inst.start)) || (inst.start.kind === "date" && exDateTimeOnDay(exTimes, inst.start.day))) out.delete(key);
  }
  return out;
}

/** A DATE-TIME EXDATE on an all-day series (not valid, but written): it removes the instance of its UTC date. */
function exDateTimeOnDay(exTimes: ReadonlySet<string>, day: string): boolean {
  for (const k of exTimes) if (new Date(Number(k.slice(1))).toISOString().slice(0, 10) === day) return true;
  return false;
}

function shifted(reader: Reader, start: When, o: Override): When {
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

function parse(icsText: string): ICAL.Component[] {
  let parsed: unknown;
  try {
    parsed = ICAL.parse(icsText);
  } catch (err) {
    throw new IcsParseError(`not iCalendar: ${err instanceof Error ? err.message : String(err)}`);
  }
  // One component comes back as its jCal array, several as an array of them (a feed of concatenated VCALENDARs).
  const list = Array.isArray(parsed) && typeof parsed[0] === "string" ? [parsed] : Array.isArray(parsed) ? parsed : [];
  const calendars = list.map((j) => new ICAL.Component(j as unknown[])).filter((c) => c.name === "vcalendar");
  if (calendars.length === 0) throw new IcsParseError("not iCalendar: no VCALENDAR");
  return calendars;
}

export function busyPeriods(
  icsText: string,
  range: { from: Date; to: Date },
  opts: { hostZone: string; hostEmails: string[]; ignoreUid?: (uid: string) => boolean },
): BusyPeriod[] {
  const calendars = parse(icsText);
  const reader = new Reader(new ZoneResolver(calendars, opts.hostZone), opts.hostZone);
  const emails = new Set(opts.hostEmails.map((e) => e.trim().toLowerCase()));
  const fromMs = range.from.getTime();
  const toMs = range.to.getTime();
  const out: BusyPeriod[] = [];
  if (!(toMs > fromMs)) return out;
  const push = (start: When, length: Length, uid: string) => {
    const [s, e] = reader.span(start, length);
    if (s < toMs && e > fromMs && e > s) out.push({ start: new Date(s), end: new Date(e), uid });
  };

  const masters = new Map<string, EventInfo[]>();
  const overrides = new Map<string, Override[]>();
  for (const cal of calendars) {
    for (const c of cal.getAllSubcomponents("vevent")) {
      const uid = String(c.getFirstPropertyValue("uid") ?? "");
      if (opts.ignoreUid?.(uid)) continue;
      let info: EventInfo | null;
      let rid: When | null;
      try {
        info = readEvent(reader, c, uid, emails);
        rid = info === null ? null : firstWhen(reader, c, "recurrence-id");
      } catch (err) {
        if (err instanceof IcsParseError) throw new IcsParseError(`event ${uid}: ${err.message}`);
        throw new IcsParseError(`event ${uid}: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (info === null) continue;
      if (rid === null) {
        masters.set(uid, [...(masters.get(uid) ?? []), info]);
      } else {
        const range = upper(c.getFirstProperty("recurrence-id")?.getParameter("range"));
        overrides.set(uid, [...(overrides.get(uid) ?? []), { ...info, recurrenceId: rid, thisAndFuture: range === "THISANDFUTURE" }]);
      }
    }
  }

  for (const list of overrides.values()) for (const o of list) if (o.blocks) push(o.start, o.length, o.uid);

  for (const [uid, list] of masters) {
    const own = overrides.get(uid) ?? [];
    const replaced = new Set(own.map((o) => keyOf(o.recurrenceId)));
    const futures = own.filter((o) => o.thisAndFuture).sort((a, b) => sortKey(a.recurrenceId) - sortKey(b.recurrenceId));
    for (const master of list) {
      let instances: Map<string, { start: When; length: Length | null }>;
      try {
        instances = instancesOf(reader, master, toMs, fromMs);
      } catch (err) {
        throw new IcsParseError(`event ${uid}: ${err instanceof Error ? err.message : String(err)}`);
      }
      for (const [key, inst] of instances) {
        if (replaced.has(key)) continue;
        // The latest THISANDFUTURE override at or before this instance restyles and moves it.
        let governing: Override | null = null;
        for (const f of futures) if (sortKey(f.recurrenceId) <= sortKey(inst.start)) governing = f;
        if (governing === null) {
          if (master.blocks) push(inst.start, inst.length ?? master.length, uid);
        } else if (governing.blocks) {
          push(shifted(reader, inst.start, governing), inst.length ?? governing.length, uid);
        }
      }
    }
  }
  // A stable order, whatever the order of the VEVENTs.
  return out.sort((a, b) => a.start.getTime() - b.start.getTime() || a.end.getTime() - b.end.getTime() || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
}

function sortKey(w: When): number {
  return w.kind === "date" ? dayMs(w.day) : w.ms;
}
