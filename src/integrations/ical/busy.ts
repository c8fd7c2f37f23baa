// The busy periods of an iCalendar text within a range (pure): recurrences expanded, transparent, cancelled and declined events left out.
import ICAL from "ical.js";
import { addDays, isIanaTimeZone, wallClockToUtc } from "../../domain/timezones.js";

export interface BusyPeriod {
  start: Date;
  end: Date;
  uid: string;
}

export class IcsParseError extends Error {}

/** Occurrences looked at per recurring event at most: a guard against rules that never reach the range. */
const MAX_OCCURRENCES = 20_000;

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** An ICAL.Time as an instant: dates at midnight and floating times in the host zone (or the TZID when it is an IANA name ical.js did not know). */
function instantOf(t: ICAL.Time, hostZone: string, tzid: string | null): Date {
  const date = `${t.year}-${pad(t.month)}-${pad(t.day)}`;
  const time = t.isDate ? "00:00" : `${pad(t.hour)}:${pad(t.minute)}`;
  const zone = t.zone;
  if (t.isDate || zone === undefined || zone === null || zone.tzid === "floating") {
    const wallZone = !t.isDate && tzid !== null && isIanaTimeZone(tzid) ? tzid : hostZone;
    return new Date(wallClockToUtc(wallZone, date, time).getTime() + (t.isDate ? 0 : t.second * 1000));
  }
  return new Date(t.toUnixTime() * 1000);
}

function declinedBy(event: ICAL.Component, emails: ReadonlySet<string>): boolean {
  for (const attendee of event.getAllProperties("attendee")) {
    const address = String(attendee.getFirstValue() ?? "").replace(/^mailto:/i, "").toLowerCase();
    if (emails.has(address) && String(attendee.getParameter("partstat") ?? "").toUpperCase() === "DECLINED") return true;
  }
  return false;
}

function blocks(event: ICAL.Component, emails: ReadonlySet<string>): boolean {
  if (String(event.getFirstPropertyValue("transp") ?? "").toUpperCase() === "TRANSPARENT") return false;
  if (String(event.getFirstPropertyValue("status") ?? "").toUpperCase() === "CANCELLED") return false;
  return !declinedBy(event, emails);
}

function tzidOf(event: ICAL.Component, name: string): string | null {
  const p = event.getFirstProperty(name);
  const v = p?.getParameter("tzid");
  return typeof v === "string" ? v : null;
}

/** End of an occurrence: DTEND, else DTSTART + DURATION, else a day for a date and nothing for a time (RFC 5545 3.6.1). */
function endOf(start: ICAL.Time, end: ICAL.Time | null, hostZone: string, startTzid: string | null, endTzid: string | null): Date {
  if (end !== null) return instantOf(end, hostZone, endTzid);
  const s = instantOf(start, hostZone, startTzid);
  if (start.isDate) return wallClockToUtc(hostZone, addDays(`${start.year}-${pad(start.month)}-${pad(start.day)}`, 1), "00:00");
  return s;
}

/** Whether an EXDATE of the event names this start. */
function excluded(event: ICAL.Component, start: ICAL.Time): boolean {
  return event.getAllProperties("exdate").some((p) => p.getValues().some((v) => v instanceof ICAL.Time && v.compare(start) === 0));
}

export function busyPeriods(
  icsText: string,
  range: { from: Date; to: Date },
  opts: { hostZone: string; hostEmails: string[]; ignoreUid?: (uid: string) => boolean },
): BusyPeriod[] {
  let root: ICAL.Component;
  try {
    const parsed = ICAL.parse(icsText);
    root = new ICAL.Component(parsed as unknown as unknown[]);
  } catch (err) {
    throw new IcsParseError(`not iCalendar: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (root.name !== "vcalendar") throw new IcsParseError("not iCalendar: no VCALENDAR");
  // ical.js keeps zones in one registry for the whole process; a feed's VTIMEZONEs are registered only while its
  // own text is read (synchronously), so one host's feed can never change how another's times are read.
  const registered: string[] = [];
  for (const tz of root.getAllSubcomponents("vtimezone")) {
    try {
      const tzid = String(tz.getFirstPropertyValue("tzid") ?? "");
      if (tzid === "" || ICAL.TimezoneService.has(tzid)) continue;
      ICAL.TimezoneService.register(tz);
      registered.push(tzid);
    } catch {
      // A broken VTIMEZONE leaves its times to the TZID fallback.
    }
  }
  try {
    return expandAll(root, range, opts);
  } finally {
    for (const tzid of registered) ICAL.TimezoneService.remove(tzid);
  }
}

function expandAll(
  root: ICAL.Component,
  range: { from: Date; to: Date },
  opts: { hostZone: string; hostEmails: string[]; ignoreUid?: (uid: string) => boolean },
): BusyPeriod[] {
  const emails = new Set(opts.hostEmails.map((e) => e.toLowerCase()));
  const from = range.from.getTime();
  const to = range.to.getTime();
  const byUid = new Map<string, { master?: ICAL.Component; overrides: ICAL.Component[] }>();
  for (const ve of root.getAllSubcomponents("vevent")) {
    const uid = String(ve.getFirstPropertyValue("uid") ?? "");
    if (opts.ignoreUid?.(uid)) continue;
    const entry = byUid.get(uid) ?? { overrides: [] };
    if (ve.hasProperty("recurrence-id")) entry.overrides.push(ve);
    else entry.master = ve;
    byUid.set(uid, entry);
  }
  const out: BusyPeriod[] = [];
  const push = (start: Date, end: Date, uid: string) => {
    if (start.getTime() < to && end.getTime() > from && end.getTime() > start.getTime()) out.push({ start, end, uid });
  };
  for (const [uid, { master, overrides }] of byUid) {
    if (!master) {
      // Overrides of a series we do not have: each stands for itself.
      for (const o of overrides) {
        const ev = new ICAL.Event(o);
        if (blocks(o, emails)) push(instantOf(ev.startDate, opts.hostZone, tzidOf(o, "dtstart")), endOf(ev.startDate, o.hasProperty("dtend") || o.hasProperty("duration") ? ev.endDate : null, opts.hostZone, tzidOf(o, "dtstart"), tzidOf(o, "dtend")), uid);
      }
      continue;
    }
    if (overrides.length === 0 && !master.hasProperty("rrule") && !master.hasProperty("rdate")) {
      // The common case of a long feed, read straight from the properties: building an ICAL.Event for each of
      // thousands of past events was most of the time spent on a 5 000-event feed.
      const startValue = master.getFirstPropertyValue("dtstart");
      if (!(startValue instanceof ICAL.Time) || !blocks(master, emails)) continue;
      const start = instantOf(startValue, opts.hostZone, tzidOf(master, "dtstart"));
      if (start.getTime() >= to) continue;
      const endValue = master.getFirstPropertyValue("dtend");
      const duration = master.getFirstPropertyValue("duration");
      const end =
        endValue instanceof ICAL.Time
          ? instantOf(endValue, opts.hostZone, tzidOf(master, "dtend"))
          : duration instanceof ICAL.Duration
            ? new Date(start.getTime() + duration.toSeconds() * 1000)
            : endOf(startValue, null, opts.hostZone, tzidOf(master, "dtstart"), null);
      push(start, end, uid);
      continue;
    }
    const event = new ICAL.Event(master, { exceptions: overrides, strictExceptions: false });
    const hasEnd = master.hasProperty("dtend") || master.hasProperty("duration");
    if (!event.isRecurring()) {
      if (blocks(master, emails)) push(instantOf(event.startDate, opts.hostZone, tzidOf(master, "dtstart")), endOf(event.startDate, hasEnd ? event.endDate : null, opts.hostZone, tzidOf(master, "dtstart"), tzidOf(master, "dtend")), uid);
      continue;
    }
    const it = event.iterator();
    // ical.js 2.2.1 leaves DTSTART out of the instances of an event with RDATE and no RRULE; RFC 5545 counts it
    // as the first instance (unless an EXDATE removes it).
    const starts: ICAL.Time[] = [];
    if (!master.hasProperty("rrule") && !excluded(master, event.startDate)) starts.push(event.startDate);
    const nextStart = (): ICAL.Time | null => starts.shift() ?? it.next() ?? null;
    for (let n = 0, next = nextStart(); next && n < MAX_OCCURRENCES; n++, next = nextStart()) {
      const details = event.getOccurrenceDetails(next);
      const item = details.item.component;
      const start = instantOf(details.startDate, opts.hostZone, tzidOf(item, "dtstart"));
      if (start.getTime() >= to) break;
      if (!blocks(item, emails)) continue;
      const itemHasEnd = item.hasProperty("dtend") || item.hasProperty("duration");
      push(start, endOf(details.startDate, itemHasEnd ? details.endDate : null, opts.hostZone, tzidOf(item, "dtstart"), tzidOf(item, "dtend")), uid);
    }
  }
  return out;
}
