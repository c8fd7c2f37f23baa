// Graph events and bookings, both ways (pure): a calendarView page's events as busy periods, and a booking as the event body written to Outlook.
import type { BusyPeriod } from "../../domain/ical/busy.js";
import { windowsZoneToIana } from "../../domain/ical/zones.js";
import { addDays, isIanaTimeZone, wallClockToUtc } from "../../domain/timezones.js";
import { ProviderError, type BusyOptions, type CalendarEvent } from "../shared/types.js";

/*
 * Busy (providers.md, integrations.md "Busy times"), per occurrence that calendarView lists (it expands series):
 * - busy unless `showAs` is `free` or `isCancelled` is true; `tentative`, `oof`, `workingElsewhere`, `unknown` and an
 *   absent showAs are busy (failing closed); an event the host declined (`responseStatus.response` `declined`)
 *   blocks nothing, as a declined ATTENDEE does in a feed;
 * - times: the service asks for UTC (`Prefer: outlook.timezone="UTC"`); a value in another zone (Windows or IANA
 *   name) is read in that zone, so an answer that ignored the preference is still right;
 * - all-day (`isAllDay`): Graph's all-day events float (midnight to midnight in whatever zone they are read in), so
 *   their dates are taken from the answer and block midnight to midnight in the host's zone, as a DATE event of a
 *   feed does;
 * - the service's own events are left out (their booking blocks the time already): recognised by `transactionId`
 *   (the booking's UID, written with the event: Graph makes `iCalUId` Exchange's own and read-only), by the event
 *   id stored with the booking, and by an `iCalUId` that is one of our UIDs (an event Outlook took from one of our
 *   invitations);
 * - an event whose times cannot be read makes the calendar unreadable: leaving it out could hide a busy time.
 */

/** The fields the busy read asks for ($select). */
export const BUSY_FIELDS = ["id", "iCalUId", "transactionId", "showAs", "isCancelled", "isAllDay", "start", "end", "responseStatus"] as const;

interface GraphDateTime {
  dateTime?: unknown;
  timeZone?: unknown;
}

/** An event as calendarView answers it (only the selected fields matter). */
export interface GraphEvent {
  id?: unknown;
  iCalUId?: unknown;
  transactionId?: unknown;
  showAs?: unknown;
  isCancelled?: unknown;
  isAllDay?: unknown;
  start?: GraphDateTime;
  end?: GraphDateTime;
  responseStatus?: { response?: unknown };
}

const WALL = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?$/;

/** The IANA zone of a Graph zone name (Windows or IANA), or null. */
function zoneOf(name: string): string | null {
  if (/^(utc|gmt|etc\/utc|coordinated universal time)$/i.test(name)) return "UTC";
  return windowsZoneToIana(name) ?? (isIanaTimeZone(name) ? name : null);
}

/** The instant of a Graph `dateTimeTimeZone` (`2026-06-01T09:00:00.0000000` in `UTC`), or undefined. */
export function instantOf(value: GraphDateTime | undefined): number | undefined {
  if (!value || typeof value.dateTime !== "string" || typeof value.timeZone !== "string") return undefined;
  const m = WALL.exec(value.dateTime);
  const zone = zoneOf(value.timeZone);
  if (!m || !zone) return undefined;
  const millis = Math.floor(Number(`0.${m[5] ?? "0"}`) * 1000);
  const seconds = Number(m[4] ?? "0");
  const ms = zone === "UTC" ? Date.parse(`${m[1]}T${m[2]}:${m[3]}:00Z`) : wallClockToUtc(zone, m[1], `${m[2]}:${m[3]}`).getTime();
  return Number.isNaN(ms) ? undefined : ms + seconds * 1000 + millis;
}

/** The date (`YYYY-MM-DD`) of an all-day event's edge, or undefined. */
function dateOf(value: GraphDateTime | undefined): string | undefined {
  const m = typeof value?.dateTime === "string" ? WALL.exec(value.dateTime) : null;
  return m ? m[1] : undefined;
}

function unreadable(e: GraphEvent): ProviderError {
  const id = typeof e.id === "string" ? ` ${e.id.slice(0, 40)}` : "";
  return new ProviderError("bad_response", `the calendar holds an event whose times cannot be read${id ? ` (event${id})` : ""}`);
}

/** Between a booking's UID and the suffix of the transactionId of an event written anew after the host deleted it. */
export const RECREATED = "#";

function isOwn(e: GraphEvent, busy: BusyOptions): boolean {
  if (typeof e.transactionId === "string" && busy.ignoreUid(e.transactionId.split(RECREATED)[0])) return true;
  if (typeof e.iCalUId === "string" && busy.ignoreUid(e.iCalUId)) return true;
  return typeof e.id === "string" && (busy.ownEvents?.some((own) => own.id === e.id) ?? false);
}

/** The busy periods of calendarView's events that touch [from, to). */
export function busyOfEvents(events: readonly unknown[], range: { from: Date; to: Date }, busy: BusyOptions): BusyPeriod[] {
  const out: BusyPeriod[] = [];
  for (const raw of events) {
    if (typeof raw !== "object" || raw === null) throw new ProviderError("bad_response", "the calendar's answer holds an event that is not an object");
    const e = raw as GraphEvent;
    if (e.isCancelled === true || e.showAs === "free" || e.responseStatus?.response === "declined") continue;
    if (isOwn(e, busy)) continue;
    let start: number | undefined;
    let end: number | undefined;
    if (e.isAllDay === true) {
      const first = dateOf(e.start);
      const after = dateOf(e.end);
      if (!first || !after) throw unreadable(e);
      // An all-day event lasts at least its first day, whatever its end says.
      const last = after > first ? after : addDays(first, 1);
      start = wallClockToUtc(busy.hostZone, first, "00:00").getTime();
      end = wallClockToUtc(busy.hostZone, last, "00:00").getTime();
    } else {
      start = instantOf(e.start);
      end = instantOf(e.end);
      if (start === undefined || end === undefined) throw unreadable(e);
    }
    if (end <= start || start >= range.to.getTime() || end <= range.from.getTime()) continue;
    const uid = typeof e.iCalUId === "string" ? e.iCalUId : typeof e.id === "string" ? e.id : "";
    out.push({ start: new Date(start), end: new Date(end), uid });
  }
  return out;
}

/** What a booking's event carries besides the VEVENT's fields. */
export interface EventExtras {
  /** `calendar_meet`: Outlook makes a Teams meeting for the event. */
  teamsMeeting: boolean;
}

/** Graph's `dateTimeTimeZone` of an instant, in UTC. */
function utc(d: Date): { dateTime: string; timeZone: string } {
  return { dateTime: d.toISOString().slice(0, 23), timeZone: "UTC" };
}

function person(a: { name?: string; email: string }): string {
  return a.name ? `${a.name} <${a.email}>` : a.email;
}

/*
 * Nobody is added as an attendee. Graph has no way to save an organizer's event with attendees without Exchange
 * mailing them an invitation (and an update or cancellation with every later change); Google's sendUpdates=none
 * has no Graph counterpart. The service's own e-mails are the only ones a booker and guests get
 * (integrations.md), so the booker and guests are named in the event's body instead, where the host sees them.
 */

/** The event body for `POST /me/calendars/{id}/events` (with `transactionId`) or `PATCH /me/events/{id}` (without). */
export function eventBody(event: CalendarEvent, extras: EventExtras, opts: { transactionId?: string }): Record<string, unknown> {
  const lines = [`Booked by: ${event.attendees.filter((a) => !a.cohost).map(person).join(", ")}`];
  // A team booking's other hosts hold it as this calendar's host does: named as hosts, not among who booked.
  const cohosts = event.attendees.filter((a) => a.cohost);
  if (cohosts.length > 0) lines.push(`Other hosts: ${cohosts.map(person).join(", ")}`);
  if (!extras.teamsMeeting && event.url) lines.push(`Meeting link: ${event.url}`);
  if (event.description) lines.push("", event.description);
  const body: Record<string, unknown> = {
    subject: event.summary,
    body: { contentType: "text", content: lines.join("\n") },
    start: utc(event.start),
    end: utc(event.end),
    isAllDay: false,
    showAs: "busy",
    // Without attendees there is nobody to answer; the host's own calendar needs no proposals either.
    responseRequested: false,
    allowNewTimeProposals: false,
  };
  // A Teams meeting names itself as the location; another meeting's link, or a place, is the location.
  if (!extras.teamsMeeting) body.location = { displayName: event.location ?? "" };
  if (extras.teamsMeeting) {
    body.isOnlineMeeting = true;
    body.onlineMeetingProvider = "teamsForBusiness";
  }
  if (opts.transactionId !== undefined) body.transactionId = opts.transactionId;
  return body;
}
