// REST rows of bookings: the host's lists, counts and attendees (docs/spec/scheduling-api.md), host actions, public booking and admin import (docs/spec/extensions.md).
import type { JsonValue } from "@bufbuild/protobuf";
import { AdminService } from "../../../gen/scheduling/v1/admin_pb.js";
import { BookingService } from "../../../gen/scheduling/v1/booking_pb.js";
import { PublicBookingService } from "../../../gen/scheduling/v1/public_booking_pb.js";
import type { JsonObject } from "../../platform/rest/json.js";
import { fromPath, responseField as field, type RestInput, type RestRoute } from "../../platform/rest/table.js";


/** A query value as a string, or nothing (repeated or nested query keys are not ours to read). */
function text(query: Record<string, unknown>, key: string): JsonValue | undefined {
  const v = query[key];
  return typeof v === "string" ? v : undefined;
}

const INT32_MAX = 2_147_483_647;

/** A decimal number as JSON writes one ("500", "1e9", "2.0"); hex, "Infinity" and empty strings are not. */
const DECIMAL_NUMBER = /^\s*-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i;

/**
 * page[number] / page[limit]: read as the number it writes, as a Connect client's JSON `1e9` is read, so one
 * rule holds over every protocol: a whole number is taken (over the int32 range it is clamped to it, and
 * readPage caps page[limit] at 500); anything else (a fraction, a word) is left out so the default applies.
 */
function pageParam(query: Record<string, unknown>, key: string): number | undefined {
  const v = query[key];
  if (typeof v !== "string" || !DECIMAL_NUMBER.test(v)) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) return Number.isFinite(n) ? undefined : Math.sign(n) * INT32_MAX;
  return Math.max(-INT32_MAX, Math.min(INT32_MAX, n));
}

function withoutUndefined(o: Record<string, JsonValue | undefined>): JsonObject {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as JsonObject;
}

const listRequest = ({ params, query }: RestInput): JsonValue =>
  withoutUndefined({
    event_id: params.id,
    category: text(query, "category"),
    date_from: text(query, "date_from"),
    date_to: text(query, "date_to"),
    page: withoutUndefined({ number: pageParam(query, "page[number]"), limit: pageParam(query, "page[limit]") }),
  });

const countRequest = ({ params, query }: RestInput): JsonValue =>
  withoutUndefined({ event_id: params.id, date_from: text(query, "date_from"), date_to: text(query, "date_to") });

const byEventId = fromPath({ event_id: "id" });
const byIdWithBooking = fromPath({ id: "id" }, "booking");
const PUBLIC_EVENT_PARAMS = { user_url: "user_url", event_url: "event_url" };
const publicEvent = fromPath(PUBLIC_EVENT_PARAMS);
const slotsRequest = ({ params, query }: RestInput): JsonValue =>
  withoutUndefined({
    user_url: params.user_url,
    event_url: params.event_url,
    date_from: text(query, "date_from"),
    date_to: text(query, "date_to"),
    timezone: text(query, "timezone"),
  });
const newBooking = fromPath(PUBLIC_EVENT_PARAMS, "booking");
const byKey = fromPath({ private_key: "private_key" });
const byKeyWithBooking = fromPath({ private_key: "private_key" }, "booking");

const PUBLIC_EVENT = "/public/users/:user_url/events/:event_url";

export const bookingRoutes: RestRoute[] = [
  {
    kind: "rpc", method: "GET", path: "/events/:id/bookings", service: BookingService, rpc: "listBookings", body: "none", request: listRequest,
    query: [{ name: "category", description: "upcoming (default), recent, past, canceled or archived" }, { name: "date_from", description: "YYYY-MM-DD" }, { name: "date_to", description: "YYYY-MM-DD" }, { name: "page[number]", description: "page to return, default 1", schema: { type: "integer", minimum: 1 } }, { name: "page[limit]", description: "bookings per page, default 10, up to 500", schema: { type: "integer", minimum: 1, maximum: 500 } }],
    message: "Bookings found", summary: "List bookings of an event",
  },
  {
    kind: "rpc", method: "GET", path: "/events/:id/bookings_counts", service: BookingService, rpc: "countBookings", body: "none", request: countRequest,
    query: [{ name: "date_from", description: "YYYY-MM-DD" }, { name: "date_to", description: "YYYY-MM-DD" }],
    message: "Counts fetched", summary: "Count bookings per category",
  },
  {
    kind: "rpc", method: "GET", path: "/events/:id/attendees", service: BookingService, rpc: "listAttendees", body: "none", request: byEventId,
    data: field("attendees"), message: "Attendees found", summary: "List attendees of an event",
  },
  {
    kind: "rpc", method: "GET", path: "/bookings/:id", service: BookingService, rpc: "getBooking", body: "none", request: fromPath({ id: "id" }),
    data: field("booking"), message: "booking found", summary: "The host's whole booking: answers, guests, cancel and reschedule links, meeting",
  },
  {
    kind: "rpc", method: "PATCH", path: "/bookings/:id", service: BookingService, rpc: "updateBooking", request: byIdWithBooking,
    data: field("booking"), message: "booking updated", summary: "Change a booking's notes or archive it",
  },
  {
    kind: "rpc", method: "POST", path: "/bookings/:id/cancel", service: BookingService, rpc: "cancelBooking", request: byIdWithBooking,
    data: field("booking"), message: "booking canceled", summary: "Cancel a booking (host)",
  },
  {
    kind: "rpc", method: "GET", path: "/public/users/:user_url", service: PublicBookingService, rpc: "getPublicProfile", body: "none",
    request: fromPath({ user_url: "user_url" }), data: field("profile"), message: "profile found", summary: "The host's public profile and listed events (public)",
  },
  {
    kind: "rpc", method: "GET", path: PUBLIC_EVENT, service: PublicBookingService, rpc: "getPublicEvent", body: "none", request: publicEvent,
    data: field("event"), message: "event found", summary: "The bookable event (public)",
  },
  {
    kind: "rpc", method: "GET", path: `${PUBLIC_EVENT}/slots`, service: PublicBookingService, rpc: "listSlots", body: "none", request: slotsRequest,
    query: [{ name: "date_from", description: "YYYY-MM-DD; default today" }, { name: "date_to", description: "YYYY-MM-DD, at most 31 days after date_from; default 7 days on" }, { name: "timezone", description: "IANA zone the days are read in; default the host's" }],
    message: "slots found", summary: "Free slots of the event (public)",
  },
  {
    kind: "rpc", method: "POST", path: `${PUBLIC_EVENT}/bookings`, service: PublicBookingService, rpc: "createBooking", request: newBooking, status: 201,
    required: ["start_time", "attendee_name", "attendee_email"],
    data: field("booking"), message: "booking confirmed", summary: "Book a slot (public)",
  },
  {
    kind: "rpc", method: "GET", path: "/public/bookings/:private_key", service: PublicBookingService, rpc: "getBooking", body: "none", request: byKey,
    data: field("booking"), message: "booking found", summary: "The booker's view of a booking (public)",
  },
  {
    kind: "rpc", method: "POST", path: "/public/bookings/:private_key/cancel", service: PublicBookingService, rpc: "cancelBooking", request: byKeyWithBooking,
    data: field("booking"), message: "booking canceled", summary: "Cancel a booking (booker)",
  },
  {
    kind: "rpc", method: "POST", path: "/public/bookings/:private_key/reschedule", service: PublicBookingService, rpc: "rescheduleBooking",
    request: byKeyWithBooking, status: 201, required: ["start_time"], data: field("booking"), message: "booking rescheduled", summary: "Move a booking to another slot (booker)",
  },
  {
    kind: "rpc", method: "POST", path: "/public/bookings/:private_key/reminders", service: PublicBookingService, rpc: "setBookingReminders",
    request: fromPath({ private_key: "private_key" }, "reminders"), required: ["enabled"], data: field("booking"), message: "reminders updated",
    summary: "Turn the booker's reminder e-mails of this booking off or on (booker)",
  },
  {
    kind: "rpc", method: "POST", path: "/admin/bookings/import", service: AdminService, rpc: "importBookings", status: 201,
    required: ["event_id", "start_time", "attendee_name", "attendee_email"],
    message: "bookings imported", summary: "Import bookings, all or nothing (X-ADMIN-TOKEN)",
  },
];
