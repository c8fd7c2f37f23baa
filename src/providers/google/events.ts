// A booking as a Google Calendar event: written once under an id of our own (so a retry finds it), moved in place on reschedule, Meet made with it, deleted on cancel.
import type { OAuthSession } from "../shared/oauth.js";
import { ProviderError, type CalendarEvent, type EventRef, type WrittenEvent } from "../shared/types.js";
import { calendarApi, googleFailure, segment } from "./api.js";

/** Google Calendar's eleven event colours, in the order of their colorId (the event colours of scheduling-api.md). */
const COLOR_IDS: Readonly<Record<string, string>> = {
  lavender: "1",
  sage: "2",
  grape: "3",
  flamingo: "4",
  banana: "5",
  tangerine: "6",
  peacock: "7",
  graphite: "8",
  blueberry: "9",
  basil: "10",
  tomato: "11",
};

/** Every write: Meet requests are honoured (version 1), and Google sends no invitations (the e-mails are ours). */
const WRITE_QUERY = { conferenceDataVersion: "1", sendUpdates: "none" } as const;

/** Reads of an event whose Meet link Google is still making, before we leave it to the next try. */
const PENDING_READS = 3;
const PENDING_PAUSE_MS = 400;

interface EventAnswer {
  id: string;
  status?: string;
  hangoutLink?: string;
  conferenceData?: {
    createRequest?: { status?: { statusCode?: string } };
    entryPoints?: { entryPointType?: string; uri?: string }[];
  };
}

/**
 * The id we give the event: Google takes a client's id of base32hex characters (a-v, 0-9), 5 to 1024 long, and a
 * booking's key is hex. Inserting it twice answers 409, so an insert whose answer was lost is found, not repeated.
 */
function eventIdOf(key: string): string {
  return `bk${key.toLowerCase()}`;
}

function bodyOf(event: CalendarEvent): Record<string, unknown> {
  const color = event.color === undefined ? undefined : COLOR_IDS[event.color];
  return {
    // A deleted event keeps its id at Google: writing it again brings it back.
    status: "confirmed",
    summary: event.summary,
    description: event.description,
    // With Meet the link is the event's conference; a location would only repeat it.
    ...(event.meeting ? {} : { location: event.location ?? null }),
    start: { dateTime: event.start.toISOString() },
    end: { dateTime: event.end.toISOString() },
    attendees: event.attendees.map((a) => ({ email: a.email, ...(a.name ? { displayName: a.name } : {}) })),
    ...(color ? { colorId: color } : {}),
    ...(event.meeting ? { conferenceData: { createRequest: { requestId: event.meeting.requestId, conferenceSolutionKey: { type: "hangoutsMeet" } } } } : {}),
  };
}

/** The Meet link of an answer: hangoutLink, or the video entry point; null while Google is still making it. */
function meetLinkOf(answer: EventAnswer): string | null | "failed" {
  const status = answer.conferenceData?.createRequest?.status?.statusCode;
  if (status === "failure") return "failed";
  const link = answer.hangoutLink ?? answer.conferenceData?.entryPoints?.find((p) => p.entryPointType === "video")?.uri;
  return link ?? null;
}

async function readEvent(session: OAuthSession, calendarId: string, id: string, signal: AbortSignal): Promise<EventAnswer> {
  return calendarApi<EventAnswer>(session, `/calendars/${segment(calendarId)}/events/${segment(id)}`, { method: "GET" }, "reading the booking's event", signal);
}

/** Writes `body` over the event `id`; the answer, or 404/410 when the event is not there to write over. */
async function patch(session: OAuthSession, calendarId: string, id: string, body: Record<string, unknown>, signal: AbortSignal): Promise<EventAnswer | "missing"> {
  const res = await session.request(`/calendar/v3/calendars/${segment(calendarId)}/events/${segment(id)}`, { method: "PATCH", query: WRITE_QUERY, json: body }, signal);
  if (res.status === 404 || res.status === 410) {
    await res.body?.cancel();
    return "missing";
  }
  if (!res.ok) throw await googleFailure(res, "updating the booking's event");
  return (await res.json()) as EventAnswer;
}

/** Inserts the event, under `id` when given; "taken" when an event of that id is there already (a lost answer's insert). */
async function insert(session: OAuthSession, calendarId: string, body: Record<string, unknown>, id: string | undefined, event: CalendarEvent, signal: AbortSignal): Promise<EventAnswer | "taken"> {
  const res = await session.request(
    `/calendar/v3/calendars/${segment(calendarId)}/events`,
    { method: "POST", query: WRITE_QUERY, json: { ...body, ...(id ? { id } : {}), iCalUID: event.uid } },
    signal,
  );
  if (res.status === 409) {
    await res.body?.cancel();
    return "taken";
  }
  if (!res.ok) throw await googleFailure(res, "writing the booking's event");
  return (await res.json()) as EventAnswer;
}

/**
 * Makes the calendar hold the booking's event. An event we wrote before (ref.id, or our own id for the booking's
 * key) is written over with PATCH, which also moves it on a reschedule; otherwise it is inserted under our id. With
 * a Meet request, the link comes back with the event, or after a few reads while Google marks it pending.
 */
export async function writeGoogleEvent(session: OAuthSession, calendarId: string, event: CalendarEvent, ref: EventRef, signal: AbortSignal): Promise<WrittenEvent> {
  const body = bodyOf(event);
  const own = eventIdOf(ref.key);
  let answer: EventAnswer | "missing" | "taken" = ref.id !== null ? await patch(session, calendarId, ref.id, body, signal) : await insert(session, calendarId, body, own, event, signal);
  if (answer === "taken") answer = await patch(session, calendarId, own, body, signal);
  if (answer === "missing") {
    // Gone for good at Google (an id it no longer knows): written anew under an id Google picks.
    const fresh = await insert(session, calendarId, body, undefined, event, signal);
    if (fresh === "taken") throw new ProviderError("bad_response", "google refused to write the booking's event");
    answer = fresh;
  }
  if (!event.meeting) return { id: answer.id };
  let link = meetLinkOf(answer);
  for (let read = 0; link === null && read < PENDING_READS; read++) {
    await new Promise((r) => setTimeout(r, PENDING_PAUSE_MS));
    link = meetLinkOf(await readEvent(session, calendarId, answer.id, signal));
  }
  if (link === "failed") throw new ProviderError("bad_response", "google could not make the Meet link");
  return { id: answer.id, meetingUrl: link };
}

/** Deletes the booking's event; one Google no longer has (404, 410) counts as deleted. */
export async function deleteGoogleEvent(session: OAuthSession, calendarId: string, ref: EventRef, signal: AbortSignal): Promise<void> {
  const id = ref.id ?? eventIdOf(ref.key);
  const res = await session.request(`/calendar/v3/calendars/${segment(calendarId)}/events/${segment(id)}`, { method: "DELETE", query: { sendUpdates: "none" } }, signal);
  if (res.status === 404 || res.status === 410 || res.ok) {
    await res.body?.cancel();
    return;
  }
  throw await googleFailure(res, "deleting the booking's event");
}
