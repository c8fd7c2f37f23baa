// Calls of the booking services (host and public) for every protocol; the booking test data itself is made in fixtures.ts.
import type { JsonObject } from "@bufbuild/protobuf";
import { BookingService } from "../../gen/scheduling/v1/booking_pb.js";
import { EventService } from "../../gen/scheduling/v1/event_pb.js";
import { PublicBookingService } from "../../gen/scheduling/v1/public_booking_pb.js";
import type { Json } from "./api.js";
import type { Call } from "./calls.js";

// Made in fixtures.ts with the other test data; exported here too for the tests that import them from this file.
export { ALWAYS_OPEN, book, dayFromToday, importBookings, newEvent, newHost, pageOf, utcIso, type Host } from "./fixtures.js";

const query = (q: Record<string, string | undefined>): string => {
  const parts = Object.entries(q).filter(([, v]) => v !== undefined).map(([k, v]) => `${encodeURIComponent(k).replace(/%5B/g, "[").replace(/%5D/g, "]")}=${encodeURIComponent(v!)}`);
  return parts.length === 0 ? "" : `?${parts.join("&")}`;
};

/** The body object under `name`; `null` leaves it out (a body without its object is 400 `missing params`). */
const withObject = (name: string, value: Json | null): JsonObject => (value === null ? {} : { [name]: value });

/** Calls of the host's BookingService, runnable over every protocol with calls.ts `invoke`. */
export const hostCalls = {
  list: (eventId: string, q: { category?: string; date_from?: string; date_to?: string; number?: number; limit?: number; no_show?: string } = {}): Call => ({
    service: BookingService,
    rpc: "listBookings",
    request: {
      event_id: eventId,
      ...(q.category === undefined ? {} : { category: q.category }),
      ...(q.date_from === undefined ? {} : { date_from: q.date_from }),
      ...(q.date_to === undefined ? {} : { date_to: q.date_to }),
      ...(q.no_show === undefined ? {} : { no_show: q.no_show }),
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
        no_show: q.no_show,
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
  /** The host says yes to a request (booking-kinds.md "Bookings that wait for the host"). */
  confirm: (id: string): Call => ({
    service: BookingService,
    rpc: "confirmBooking",
    request: { id },
    rest: { method: "POST", path: `/bookings/${encodeURIComponent(id)}/confirm` },
    pick: "booking",
  }),
  /** The host says no to a request, with `{reason}` if given; `null` sends no body. */
  decline: (id: string, booking: Json | null = null): Call => ({
    service: BookingService,
    rpc: "declineBooking",
    request: { id, ...withObject("booking", booking) },
    rest: { method: "POST", path: `/bookings/${encodeURIComponent(id)}/decline`, ...(booking === null ? {} : { body: withObject("booking", booking) }) },
    pick: "booking",
  }),
  /** The host records who did not come (`attendee`, `host`, or null to clear it). */
  noShow: (id: string, noShow: string | null): Call => ({
    service: BookingService,
    rpc: "recordNoShow",
    request: { id, booking: noShow === null ? {} : { no_show: noShow } },
    rest: { method: "POST", path: `/bookings/${encodeURIComponent(id)}/no_show`, body: { booking: { no_show: noShow } } },
    pick: "booking",
  }),
};

/** What the host's desk list (GET /bookings) takes: repeatable filters as lists. */
export interface DeskAsk {
  status?: string[];
  event_id?: string[];
  from?: string;
  to?: string;
  attendee_email?: string;
  no_show?: string;
  limit?: number;
  after?: string;
}

/** The host's desk calls (booking-kinds.md "The host's desk"). */
export const deskCalls = {
  /** The host books the event for someone. */
  book: (eventId: string, booking: Json | null): Call => ({
    service: BookingService,
    rpc: "bookForAttendee",
    request: { event_id: eventId, ...withObject("booking", booking) },
    rest: { method: "POST", path: `/events/${encodeURIComponent(eventId)}/bookings`, body: withObject("booking", booking) },
    pick: "booking",
  }),
  /** The host moves their booking to another time. */
  reschedule: (id: string, booking: Json | null): Call => ({
    service: BookingService,
    rpc: "rescheduleBooking",
    request: { id, ...withObject("booking", booking) },
    rest: { method: "POST", path: `/bookings/${encodeURIComponent(id)}/reschedule`, body: withObject("booking", booking) },
    pick: "booking",
  }),
  list: (q: DeskAsk = {}): Call => {
    const pairs: [string, string][] = [
      ...(q.status ?? []).map((v): [string, string] => ["status", v]),
      ...(q.event_id ?? []).map((v): [string, string] => ["event_id", v]),
      ...Object.entries({ from: q.from, to: q.to, attendee_email: q.attendee_email, no_show: q.no_show, "page[limit]": q.limit?.toString(), "page[after]": q.after }).filter((e): e is [string, string] => e[1] !== undefined),
    ];
    const search = pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&");
    return {
      service: BookingService,
      rpc: "listAccountBookings",
      request: {
        statuses: q.status ?? [],
        event_ids: q.event_id ?? [],
        ...Object.fromEntries(Object.entries({ from: q.from, to: q.to, attendee_email: q.attendee_email, no_show: q.no_show, limit: q.limit, after: q.after }).filter(([, v]) => v !== undefined)),
      },
      rest: { method: "GET", path: `/bookings${search === "" ? "" : `?${search}`}` },
    };
  },
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
  slots: (user: string, event: string, q: { date_from?: string; date_to?: string; timezone?: string; duration?: string } = {}): Call => ({
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

/** Single-use links (booking-kinds.md "Single-use links"): the host's calls under the event, and the public ones under the token. */
export const links = {
  create: (eventId: string, link?: Json): Call => ({
    service: EventService,
    rpc: "createSingleUseLink",
    request: { event_id: eventId, ...(link === undefined ? {} : { link }) },
    rest: { method: "POST", path: `/events/${eventId}/single_use_links`, ...(link === undefined ? {} : { body: { link } }) },
    pick: "link",
  }),
  list: (eventId: string): Call => ({ service: EventService, rpc: "listSingleUseLinks", request: { event_id: eventId }, rest: { method: "GET", path: `/events/${eventId}/single_use_links` }, pick: "links" }),
  revoke: (eventId: string, id: string): Call => ({
    service: EventService, rpc: "revokeSingleUseLink", request: { event_id: eventId, id }, rest: { method: "DELETE", path: `/events/${eventId}/single_use_links/${id}` }, pick: "link",
  }),
  event: (token: string): Call => ({ service: PublicBookingService, rpc: "getLinkEvent", request: { token }, rest: { method: "GET", path: `/public/links/${token}` }, pick: "event" }),
  slots: (token: string, day: string): Call => ({
    service: PublicBookingService, rpc: "listLinkSlots", request: { token, date_from: day, date_to: day, timezone: "UTC" }, rest: { method: "GET", path: `/public/links/${token}/slots?date_from=${day}&date_to=${day}&timezone=UTC` },
  }),
  book: (token: string, start: string, email = "ada@example.com"): Call => {
    const booking = { start_time: start, attendee_name: "Ada Lovelace", attendee_email: email };
    return { service: PublicBookingService, rpc: "createLinkBooking", request: { token, booking }, rest: { method: "POST", path: `/public/links/${token}/bookings`, body: { booking } }, pick: "booking" };
  },
};

/** The token of a single-use link's url (`<APP_URL>/d/<token>`). */
export const tokenOf = (url: string): string => url.slice(url.lastIndexOf("/d/") + 3);
