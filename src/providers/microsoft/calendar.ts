// What the Microsoft 365 provider asks Graph: the account and its calendars, a calendar's busy times, and a booking's event written, moved and deleted (with its Teams meeting).
import { createHash } from "node:crypto";
import type { BusyPeriod } from "../../domain/ical/busy.js";
import type { ProviderIdentity } from "../shared/oauth.js";
import { ProviderError, type BusyOptions, type CalendarEvent, type ProviderCalendar } from "../shared/types.js";
import { BUSY_FIELDS, busyOfEvents, eventBody, instantOf, RECREATED, type EventExtras, type GraphEvent } from "./events.js";
import { PAGE_SIZE, type GraphClient } from "./graph.js";

const DAY_MS = 86_400_000;

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/**
 * Who the tokens speak for (`GET /me`): the Graph user id, the same person whichever of our accounts connects them,
 * and `mail`, else `userPrincipalName` (Graph's `mail` is null for accounts without an Exchange address).
 */
export async function readAccount(graph: GraphClient): Promise<ProviderIdentity> {
  const { body } = await graph.call({ method: "GET", path: "/me?$select=id,mail,userPrincipalName", what: "reading the Microsoft account" });
  const me = (body ?? {}) as { id?: unknown; mail?: unknown; userPrincipalName?: unknown };
  const userId = str(me.id);
  const email = str(me.mail) ?? str(me.userPrincipalName);
  if (!userId || !email) throw new ProviderError("bad_response", "reading the Microsoft account: Graph named no user");
  return { id: userId, email };
}

/** The account's calendars (`GET /me/calendars`, every page): `canEdit` is whether bookings may be written there. */
export async function readCalendars(graph: GraphClient): Promise<ProviderCalendar[]> {
  const items = await graph.all("/me/calendars?$select=id,name,canEdit,owner", {}, "listing the Microsoft calendars");
  return items.flatMap((raw): ProviderCalendar[] => {
    const c = (raw ?? {}) as { id?: unknown; name?: unknown; canEdit?: unknown; owner?: { address?: unknown } };
    const id = str(c.id);
    if (!id) return [];
    return [{ url: id, name: str(c.name) ?? "Calendar", canWrite: c.canEdit === true, email: str(c.owner?.address) ?? null }];
  });
}

function calendarIdOf(calendar: { url: string | null }): string {
  if (calendar.url === null) throw new ProviderError("not_found", "calendar has no Microsoft id");
  return calendar.url;
}

/**
 * The busy periods of one calendar in [from, to): `calendarView` (occurrences of series expanded by Graph), every
 * page. The window is a day wider on each side, because all-day events float and are placed in the host's zone
 * here, not in UTC as the window is read.
 */
export async function readBusy(graph: GraphClient, calendar: { url: string | null }, range: { from: Date; to: Date }, busy: BusyOptions): Promise<BusyPeriod[]> {
  const id = calendarIdOf(calendar);
  const from = encodeURIComponent(new Date(range.from.getTime() - DAY_MS).toISOString());
  const to = encodeURIComponent(new Date(range.to.getTime() + DAY_MS).toISOString());
  // `$select` spelled as Graph's examples do ($ not percent-encoded).
  const query = `startDateTime=${from}&endDateTime=${to}&$select=${BUSY_FIELDS.join(",")}`;
  // Headers are not part of a next link: `all` sends them with every page.
  const prefer = { Prefer: `outlook.timezone="UTC", odata.maxpagesize=${PAGE_SIZE}` };
  const events = await graph.all(`/me/calendars/${encodeURIComponent(id)}/calendarView?${query}`, prefer, "reading the Microsoft calendar");
  return busyOfEvents(events, range, busy);
}

/**
 * The event a write left at Microsoft: its id, the Teams link when one was asked for and made, and whether Outlook
 * saved it as no online meeting at all (a calendar that offers no Teams: a personal account, or an organisation
 * that does not allow Teams meetings in Outlook), in which case no link is coming.
 */
interface WrittenEvent {
  id: string;
  joinUrl: string | null;
  noMeeting: boolean;
}

type EventAnswer = GraphEvent & { isOnlineMeeting?: unknown; onlineMeeting?: { joinUrl?: unknown } | null };

function written(body: unknown, what: string): WrittenEvent & { event: EventAnswer } {
  const event = (body ?? {}) as EventAnswer;
  const id = str(event.id);
  if (!id) throw new ProviderError("bad_response", `${what}: Microsoft Graph answered no event id`);
  return { id, joinUrl: str(event.onlineMeeting?.joinUrl) ?? null, noMeeting: event.isOnlineMeeting === false, event };
}

/** Whether the answered event is at the booking's times (a create answered by an earlier one of the same transaction may not be). */
function sameTimes(e: GraphEvent, booking: CalendarEvent): boolean {
  return instantOf(e.start) === booking.start.getTime() && instantOf(e.end) === booking.end.getTime();
}

/**
 * Makes the calendar hold the booking's event. With `knownId` (the event a previous write made, kept with the
 * booking; for a reschedule the old booking's), the event is moved in place with PATCH, which keeps its Teams
 * meeting and link; when it is gone (404, the host deleted it), or without an id, it is created with POST carrying
 * `transactionId` = the event's UID (named after the first booking of a chain of reschedules), so a create retried
 * after a lost answer is answered with the event the first one made instead of a second event ("to avoid redundant
 * POST operations in case of client retries", resources/event).
 */
export async function writeEvent(graph: GraphClient, calendar: { url: string | null }, event: CalendarEvent, extras: EventExtras, knownId: string | null): Promise<WrittenEvent> {
  const what = "writing the booking to the Microsoft calendar";
  let transactionId = event.uid;
  if (knownId !== null) {
    const moved = await graph.call({ method: "PATCH", path: `/me/events/${encodeURIComponent(knownId)}`, body: eventBody(event, extras, {}), accept: [404], what });
    if (moved.status !== 404) return meetingOf(graph, written(moved.body, what), extras, what);
    // Written anew: under a transaction of its own (the first create's could answer with the event now gone), the
    // same for every retry of this re-creation, so a lost answer still makes one event.
    transactionId = `${event.uid}${RECREATED}${createHash("sha256").update(knownId).digest("hex").slice(0, 16)}`;
  }
  const id = calendarIdOf(calendar);
  const created = await graph.call({ method: "POST", path: `/me/calendars/${encodeURIComponent(id)}/events`, body: eventBody(event, extras, { transactionId }), what });
  const result = written(created.body, what);
  // The same transactionId answers the event an earlier create made, as it was: when its id was never stored and the
  // booking has been rescheduled since, that event is at the old times and is moved to the new ones.
  if (!sameTimes(result.event, event)) {
    const moved = await graph.call({ method: "PATCH", path: `/me/events/${encodeURIComponent(result.id)}`, body: eventBody(event, extras, {}), what });
    return meetingOf(graph, written(moved.body, what), extras, what);
  }
  return meetingOf(graph, result, extras, what);
}

/** The Teams link of a written event; when the answer carries none yet, the event is read once more. */
async function meetingOf(graph: GraphClient, w: WrittenEvent, extras: EventExtras, what: string): Promise<WrittenEvent> {
  if (!extras.teamsMeeting || w.joinUrl !== null) return { id: w.id, joinUrl: w.joinUrl, noMeeting: false };
  const again = written((await graph.call({ method: "GET", path: `/me/events/${encodeURIComponent(w.id)}?$select=id,isOnlineMeeting,onlineMeeting`, what })).body, what);
  return { id: w.id, joinUrl: again.joinUrl, noMeeting: again.joinUrl === null && again.noMeeting };
}

/** Removes the booking's event; one already gone (404) counts as removed, and without an id nothing was written. */
export async function deleteEvent(graph: GraphClient, knownId: string | null): Promise<void> {
  if (knownId === null) return;
  await graph.call({ method: "DELETE", path: `/me/events/${encodeURIComponent(knownId)}`, accept: [404], what: "removing the booking from the Microsoft calendar" });
}
