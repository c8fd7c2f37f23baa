// Calls of CalendarService and IntegrationService for every protocol, and REST calls against a server of the test's own.
import { CalendarService } from "../../gen/scheduling/v1/calendar_pb.js";
import { IntegrationService } from "../../gen/scheduling/v1/integration_pb.js";
import { restAt, type Json } from "./api.js";
import { ALWAYS_OPEN, fixturesAt, type Account } from "./fixtures.js";
import { withObject, type Call } from "./calls.js";

export const calendarCalls = {
  connect: (connection?: Json): Call => ({
    service: CalendarService, rpc: "createCalendarConnection", request: withObject("connection", connection),
    rest: { method: "POST", path: "/calendar_connections", body: withObject("connection", connection) }, pick: "connection",
  }),
  connections: (): Call => ({ service: CalendarService, rpc: "listCalendarConnections", request: {}, rest: { method: "GET", path: "/calendar_connections" }, pick: "connections" }),
  disconnect: (id: string): Call => ({
    service: CalendarService, rpc: "deleteCalendarConnection", request: { id }, rest: { method: "DELETE", path: `/calendar_connections/${encodeURIComponent(id)}` },
  }),
  calendars: (): Call => ({ service: CalendarService, rpc: "listCalendars", request: {}, rest: { method: "GET", path: "/calendars" }, pick: "calendars" }),
  update: (id: string, calendar?: Json): Call => ({
    service: CalendarService, rpc: "updateCalendar", request: { id, ...withObject("calendar", calendar) },
    rest: { method: "PATCH", path: `/calendars/${encodeURIComponent(id)}`, body: withObject("calendar", calendar) }, pick: "calendar",
  }),
};

export const integrationCalls = {
  list: (): Call => ({ service: IntegrationService, rpc: "listIntegrations", request: {}, rest: { method: "GET", path: "/integrations" }, pick: "integrations" }),
  connect: (integration?: Json): Call => ({
    service: IntegrationService, rpc: "connectConference", request: withObject("integration", integration),
    rest: { method: "PUT", path: "/integrations/conference", body: withObject("integration", integration) }, pick: "integration",
  }),
  disconnect: (): Call => ({ service: IntegrationService, rpc: "disconnectConference", request: {}, rest: { method: "DELETE", path: "/integrations/conference" } }),
};

/** A fresh account on `base`, open around the clock (UTC), through the admin API. */
export function hostAt(base: string, availability: Json = ALWAYS_OPEN): Promise<Account> {
  return fixturesAt(base).newHost({}, availability);
}

export function eventAt(base: string, key: string, event: Json = {}): Promise<Json> {
  return fixturesAt(base).newEvent({ key }, event);
}

/** The slots of a day (YYYY-MM-DD, UTC) as "HH:MM" starts; the whole answer when it is not a 200. */
export async function slotsAt(base: string, host: Json, event: Json, day: string, to = day): Promise<{ status: number; starts: string[]; body: Json; headers: Headers }> {
  const res = await restAt(base, "GET", `/api/v1/public/users/${host.url}/events/${event.url}/slots?date_from=${day}&date_to=${to}&timezone=UTC`);
  const starts = res.status === 200 ? (res.body.data.slots as Json[]).map((s) => (s.start_time as string).slice(0, 16).replace("T", " ")) : [];
  return { status: res.status, starts, body: res.body, headers: res.headers };
}

export async function bookAt(base: string, host: Json, event: Json, startIso: string): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await restAt(base, "POST", `/api/v1/public/users/${host.url}/events/${event.url}/bookings`, {
    body: { booking: { start_time: startIso, attendee_name: "Ada Lovelace", attendee_email: "ada@example.com" } },
  });
  return { status: res.status, body: res.body, headers: res.headers };
}
