// What the providers that speak iCalendar (CalDAV, feeds) share: their raw read, and its expansion into busy periods.
import { busyPeriods, type BusyPeriod } from "../../domain/ical/busy.js";
import { errorText } from "../../platform/log.js";
import { CalendarSourceError, type BusyOptions } from "./types.js";

/** A calendar's iCalendar objects in a range, with the token that says when they change (ctag, sync token, ETag). */
export type ObjectsRead = { unchanged: true; version: string | null } | { unchanged: false; version: string | null; objects: string[] };

/** The busy periods of the objects within the range; an object that cannot be read makes the calendar unreadable. */
export function busyOfObjects(objects: readonly string[], range: { from: Date; to: Date }, busy: BusyOptions): BusyPeriod[] {
  const opts = { hostZone: busy.hostZone, hostEmails: [...busy.hostEmails], ignoreUid: busy.ignoreUid };
  try {
    return objects.flatMap((text) => busyPeriods(text, range, opts));
  } catch (err) {
    // One unreadable object could hide a busy time: the calendar counts as unreadable rather than free.
    throw new CalendarSourceError("bad_response", `the calendar holds data that is not valid iCalendar (${errorText(err)})`);
  }
}

/** An objects read as busy periods. */
export function busyOfRead(read: ObjectsRead, range: { from: Date; to: Date }, busy: BusyOptions) {
  return read.unchanged ? read : { unchanged: false as const, version: read.version, periods: busyOfObjects(read.objects, range, busy) };
}
