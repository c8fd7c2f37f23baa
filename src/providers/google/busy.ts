// Google's busy times: freeBusy for one calendar, and where it may hold our own booking events, the events themselves.
import type { BusyPeriod } from "../../domain/ical/busy.js";
import { wallClockToUtc } from "../../domain/timezones.js";
import type { OAuthSession } from "../shared/oauth.js";
import { ProviderError, type BusyOptions } from "../shared/types.js";
import { calendarApi, segment } from "./api.js";

interface FreeBusyAnswer {
  calendars?: Record<string, { busy?: { start: string; end: string }[]; errors?: { domain?: string; reason?: string }[] }>;
}

/** The busy periods freeBusy gives for one calendar; a calendar listed with `errors` cannot be read (failure closed). */
async function freeBusy(session: OAuthSession, calendarId: string, range: { from: Date; to: Date }, signal: AbortSignal): Promise<BusyPeriod[]> {
  const answer = await calendarApi<FreeBusyAnswer>(
    session,
    "/freeBusy",
    { method: "POST", json: { timeMin: range.from.toISOString(), timeMax: range.to.toISOString(), timeZone: "UTC", items: [{ id: calendarId }] } },
    "the free/busy query",
    signal,
  );
  const entry = answer.calendars?.[calendarId];
  if (!entry) throw new ProviderError("bad_response", "google's free/busy answer left the calendar out");
  if (entry.errors && entry.errors.length > 0) {
    throw new ProviderError("bad_response", `google could not tell the calendar's busy times (${entry.errors.map((e) => e.reason ?? "error").join(", ")})`);
  }
  return (entry.busy ?? []).map((b) => periodOf(b.start, b.end));
}

function periodOf(start: string, end: string): BusyPeriod {
  const s = new Date(start);
  const e = new Date(end);
  if (Number.isNaN(s.getTime()) || Number.isNaN(e.getTime())) throw new ProviderError("bad_response", "google answered a busy time that is not a time");
  // freeBusy names no event: the period has no UID of its own.
  return { start: s, end: e, uid: "" };
}

interface EventTime {
  date?: string;
  dateTime?: string;
}

interface GoogleEvent {
  id: string;
  iCalUID?: string;
  status?: string;
  transparency?: string;
  start?: EventTime;
  end?: EventTime;
  attendees?: { self?: boolean; responseStatus?: string }[];
}

interface EventsPage {
  items?: GoogleEvent[];
  nextPageToken?: string;
}

/** Pages of events read for one range at most; a calendar with more is unreadable rather than half read. */
const MAX_EVENT_PAGES = 10;

function instantOf(t: EventTime | undefined, zone: string): Date | undefined {
  if (t?.dateTime) return new Date(t.dateTime);
  // An all-day event blocks its dates in the host's zone (integrations.md).
  if (t?.date) return wallClockToUtc(zone, t.date, "00:00");
  return undefined;
}

/**
 * Busy periods from the events themselves (events.list, recurring events expanded by Google): used instead of
 * freeBusy when the calendar holds events we wrote in the range, since freeBusy merges them with the host's own
 * and names none. Our events are recognised by the id we stored and by their iCalUID.
 */
async function busyOfEvents(session: OAuthSession, calendarId: string, range: { from: Date; to: Date }, busy: BusyOptions, ownIds: ReadonlySet<string>, signal: AbortSignal): Promise<BusyPeriod[]> {
  const periods: BusyPeriod[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_EVENT_PAGES; page++) {
    const query: Record<string, string> = { timeMin: range.from.toISOString(), timeMax: range.to.toISOString(), singleEvents: "true", maxResults: "2500" };
    if (pageToken) query.pageToken = pageToken;
    const answer = await calendarApi<EventsPage>(session, `/calendars/${segment(calendarId)}/events`, { method: "GET", query }, "the events list", signal);
    for (const e of answer.items ?? []) {
      if (e.status === "cancelled" || e.transparency === "transparent") continue;
      if (ownIds.has(e.id) || (e.iCalUID !== undefined && busy.ignoreUid(e.iCalUID))) continue;
      if (e.attendees?.some((a) => a.self === true && a.responseStatus === "declined")) continue;
      const start = instantOf(e.start, busy.hostZone);
      const end = instantOf(e.end, busy.hostZone);
      if (!start || !end || Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) throw new ProviderError("bad_response", "google answered an event without readable times");
      periods.push({ start, end, uid: e.iCalUID ?? e.id });
    }
    pageToken = answer.nextPageToken;
    if (!pageToken) return periods;
  }
  throw new ProviderError("bad_response", `the calendar holds more events in the range than the ${MAX_EVENT_PAGES * 2500} read`);
}

/**
 * A calendar's busy periods, never counting our own booking events: freeBusy answers merged periods without ids,
 * so where one of them touches an event we wrote, the range is read again as events and ours are left out.
 */
export async function googleBusy(session: OAuthSession, calendarId: string, range: { from: Date; to: Date }, busy: BusyOptions, signal: AbortSignal): Promise<BusyPeriod[]> {
  const periods = await freeBusy(session, calendarId, range, signal);
  const own = busy.ownEvents ?? [];
  const touchesOwn = periods.some((p) => own.some((o) => o.start < p.end && o.end > p.start));
  if (!touchesOwn) return periods;
  return busyOfEvents(session, calendarId, range, busy, new Set(own.map((o) => o.id)), signal);
}
