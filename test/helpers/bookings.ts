// Booking test fixtures: a host who can be booked any time, their events, imported bookings, and calls of the booking services.
import type { JsonObject } from "@bufbuild/protobuf";
import { expect } from "vitest";
import { BookingService } from "../../gen/scheduling/v1/booking_pb.js";
import { PublicBookingService } from "../../gen/scheduling/v1/public_booking_pb.js";
import { addDays, utcToWallClock } from "../../src/domain/timezones.js";
import { newAccount, rest, type Json } from "./api.js";
import type { Call } from "./calls.js";

const ALL_DAY = [{ start: "00:00", end: "24:00" }];
const WEEK = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;

/** Availability every day around the clock, no notice: any grid time in the window is bookable. */
export const ALWAYS_OPEN = {
  weekly_hours: Object.fromEntries(WEEK.map((d) => [d, ALL_DAY])),
  date_overrides: [],
  minimum_notice_minutes: 0,
  booking_window_days: 60,
};

/** The date `days` from today in `zone` (IANA). */
export function dayFromToday(days: number, zone = "UTC"): string {
  return addDays(utcToWallClock(zone, new Date()).date, days);
}

/** The ISO instant of `time` (HH:MM) on `day` (YYYY-MM-DD) in UTC. */
export function utcIso(day: string, time: string): string {
  return new Date(`${day}T${time}:00Z`).toISOString();
}

export interface Host {
  key: string;
  user: Json;
}

/** A fresh account; `availability` (default ALWAYS_OPEN) is PUT as given. */
export async function newHost(account: Record<string, unknown> = {}, availability: Json = ALWAYS_OPEN): Promise<Host> {
  const host = await newAccount(account);
  const res = await rest("PUT", "/user/availability", { key: host.key, body: { availability } });
  if (res.status !== 200) throw new Error(`availability failed: ${JSON.stringify(res.body)}`);
  return host;
}

let seq = 0;

/** An event of the host through REST; returns the event object. */
export async function newEvent(host: Host, event: Json = {}): Promise<Json> {
  const res = await rest("POST", "/events", {
    key: host.key,
    body: { event: { name: "Meeting", url: `meet-${process.pid}-${++seq}`, slot_duration: "30_minutes", padding_duration: "0_minutes", ...event } },
  });
  if (res.status !== 201) throw new Error(`event creation failed: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Bookings moved in through the admin import; returns their ids in order. */
export async function importBookings(bookings: Json[]): Promise<string[]> {
  const res = await rest("POST", "/admin/bookings/import", { admin: true, body: { bookings } });
  if (res.status !== 201) throw new Error(`import failed: ${JSON.stringify(res.body)}`);
  return res.body.data.ids;
}

/** The path parts of an event's booking page. */
export function pageOf(host: Host, event: Json): { user: string; event: string } {
  return { user: host.user.url, event: event.url };
}

/** Books through REST and expects success; returns the booking. */
export async function book(host: Host, event: Json, booking: Json): Promise<Json> {
  const res = await rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, {
    body: { booking: { attendee_name: "Ada Lovelace", attendee_email: "ada@example.com", ...booking } },
  });
  if (res.status !== 201) throw new Error(`booking failed: ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.body.message).toBe("booking confirmed");
  return res.body.data;
}

const query = (q: Record<string, string | undefined>): string => {
  const parts = Object.entries(q).filter(([, v]) => v !== undefined).map(([k, v]) => `${encodeURIComponent(k).replace(/%5B/g, "[").replace(/%5D/g, "]")}=${encodeURIComponent(v!)}`);
  return parts.length === 0 ? "" : `?${parts.join("&")}`;
};

/** The body object under `name`; `null` leaves it out (a body without its object is 400 `missing params`). */
const withObject = (name: string, value: Json | null): JsonObject => (value === null ? {} : { [name]: value });

/** Calls of the host's BookingService, runnable over every protocol with calls.ts `invoke`. */
export const hostCalls = {
  list: (eventId: string, q: { category?: string; date_from?: string; date_to?: string; number?: number; limit?: number } = {}): Call => ({
    service: BookingService,
    rpc: "listBookings",
    request: {
      event_id: eventId,
      ...(q.category === undefined ? {} : { category: q.category }),
      ...(q.date_from === undefined ? {} : { date_from: q.date_from }),
      ...(q.date_to === undefined ? {} : { date_to: q.date_to }),
      page: { ...(q.number === undefined ? {} : { number: q.number }), ...(q.limit === undefined ? {} : { limit: q.limit }) },
    },
    rest: {
      method: "GET",
      path: `/events/${encodeURIComponent(eventId)}/bookings${query({
        category: q.category,
        date_from: q.date_from,
        date_to: q.date_to,
        "page[number]": q.number?.toString(),
        "page[limit]": q.limit?.toString(),
      })}`,
    },
  }),
  counts: (eventId: string, q: { date_from?: string; date_to?: string } = {}): Call => ({
    service: BookingService,
    rpc: "countBookings",
    request: { event_id: eventId, ...q },
    rest: { method: "GET", path: `/events/${encodeURIComponent(eventId)}/bookings_counts${query(q)}` },
  }),
  attendees: (eventId: string): Call => ({
    service: BookingService,
    rpc: "listAttendees",
    request: { event_id: eventId },
    rest: { method: "GET", path: `/events/${encodeURIComponent(eventId)}/attendees` },
    pick: "attendees",
  }),
  get: (id: string): Call => ({
    service: BookingService,
    rpc: "getBooking",
    request: { id },
    rest: { method: "GET", path: `/bookings/${encodeURIComponent(id)}` },
    pick: "booking",
  }),
  update: (id: string, booking: Json | null = {}): Call => ({
    service: BookingService,
    rpc: "updateBooking",
    request: { id, ...withObject("booking", booking) },
    rest: { method: "PATCH", path: `/bookings/${encodeURIComponent(id)}`, body: withObject("booking", booking) },
    pick: "booking",
  }),
  cancel: (id: string, booking: Json | null = {}): Call => ({
    service: BookingService,
    rpc: "cancelBooking",
    request: { id, ...withObject("booking", booking) },
    rest: { method: "POST", path: `/bookings/${encodeURIComponent(id)}/cancel`, body: withObject("booking", booking) },
    pick: "booking",
  }),
};

/** Calls of PublicBookingService (no key). */
export const publicCalls = {
  event: (user: string, event: string): Call => ({
    service: PublicBookingService,
    rpc: "getPublicEvent",
    request: { user_url: user, event_url: event },
    rest: { method: "GET", path: `/public/users/${encodeURIComponent(user)}/events/${encodeURIComponent(event)}` },
    pick: "event",
  }),
  slots: (user: string, event: string, q: { date_from?: string; date_to?: string; timezone?: string } = {}): Call => ({
    service: PublicBookingService,
    rpc: "listSlots",
    request: { user_url: user, event_url: event, ...q },
    rest: { method: "GET", path: `/public/users/${encodeURIComponent(user)}/events/${encodeURIComponent(event)}/slots${query(q)}` },
  }),
  book: (user: string, event: string, booking: Json | null = null): Call => ({
    service: PublicBookingService,
    rpc: "createBooking",
    request: { user_url: user, event_url: event, ...withObject("booking", booking) },
    rest: { method: "POST", path: `/public/users/${encodeURIComponent(user)}/events/${encodeURIComponent(event)}/bookings`, body: withObject("booking", booking) },
    pick: "booking",
  }),
  get: (key: string): Call => ({
    service: PublicBookingService,
    rpc: "getBooking",
    request: { private_key: key },
    rest: { method: "GET", path: `/public/bookings/${encodeURIComponent(key)}` },
    pick: "booking",
  }),
  cancel: (key: string, booking: Json | null = {}): Call => ({
    service: PublicBookingService,
    rpc: "cancelBooking",
    request: { private_key: key, ...withObject("booking", booking) },
    rest: { method: "POST", path: `/public/bookings/${encodeURIComponent(key)}/cancel`, body: withObject("booking", booking) },
    pick: "booking",
  }),
  reschedule: (key: string, booking: Json | null = null): Call => ({
    service: PublicBookingService,
    rpc: "rescheduleBooking",
    request: { private_key: key, ...withObject("booking", booking) },
    rest: { method: "POST", path: `/public/bookings/${encodeURIComponent(key)}/reschedule`, body: withObject("booking", booking) },
    pick: "booking",
  }),
};
