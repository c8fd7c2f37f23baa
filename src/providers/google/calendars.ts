// Google's calendar list: the account a connection belongs to (its primary calendar) and the calendars it holds.
import type { ProviderIdentity, OAuthSession } from "../shared/oauth.js";
import { ProviderError, type ProviderCalendar } from "../shared/types.js";
import { calendarApi } from "./api.js";

interface CalendarListEntry {
  id: string;
  summary?: string;
  summaryOverride?: string;
  accessRole?: string;
  primary?: boolean;
  deleted?: boolean;
}

interface CalendarListPage {
  items?: CalendarListEntry[];
  nextPageToken?: string;
}

/** Pages a calendar list may take before we call it too long: 2 500 calendars is beyond any person's. */
const MAX_PAGES = 10;
const SIMPLE_ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Every entry of the user's calendar list (calendarList.list, all pages). */
async function calendarList(session: OAuthSession, signal: AbortSignal): Promise<CalendarListEntry[]> {
  const all: CalendarListEntry[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const query: Record<string, string> = { maxResults: "250" };
    if (pageToken) query.pageToken = pageToken;
    const answer = await calendarApi<CalendarListPage>(session, "/users/me/calendarList", { method: "GET", query }, "the calendar list", signal);
    all.push(...(answer.items ?? []).filter((c) => typeof c.id === "string" && c.deleted !== true));
    pageToken = answer.nextPageToken;
    if (!pageToken) return all;
  }
  throw new ProviderError("bad_response", `google's calendar list is longer than ${MAX_PAGES * 250} calendars`);
}

/**
 * A calendar's id is an e-mail address for a person's calendars (the primary one is the account's address);
 * group, holiday and resource calendars have address-shaped ids under calendar.google.com, which nobody reads.
 */
function emailOf(id: string): string | null {
  return SIMPLE_ADDRESS.test(id) && !/\.calendar\.google\.com$/i.test(id) ? id.toLowerCase() : null;
}

/** The account: its primary calendar's id, which Google makes the account's address. */
export async function googleIdentity(session: OAuthSession, signal: AbortSignal): Promise<ProviderIdentity> {
  const primary = (await calendarList(session, signal)).find((c) => c.primary === true);
  if (!primary) throw new ProviderError("bad_response", "google's calendar list has no primary calendar");
  return { id: primary.id.toLowerCase(), email: primary.id.toLowerCase() };
}

/** The calendars of the list: owner and writer roles can take bookings; readers and free/busy readers only block time. */
export async function googleCalendars(session: OAuthSession, signal: AbortSignal): Promise<ProviderCalendar[]> {
  return (await calendarList(session, signal)).map((c) => ({
    url: c.id,
    name: c.summaryOverride ?? c.summary ?? c.id,
    canWrite: c.accessRole === "owner" || c.accessRole === "writer",
    email: emailOf(c.id),
  }));
}
