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

/** A bookings list's query (category, dates, page), as the request fields it fills; a team's bookings list reads the same. */
export const listQuery = (query: Record<string, unknown>): Record<string, JsonValue | undefined> => ({
  category: text(query, "category"),
  date_from: text(query, "date_from"),
  date_to: text(query, "date_to"),
  page: withoutUndefined({ number: pageParam(query, "page[number]"), limit: pageParam(query, "page[limit]") }),
});

const listRequest = ({ params, query }: RestInput): JsonValue => withoutUndefined({ event_id: params.id, ...listQuery(query), no_show: text(query, "no_show") });

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
    duration: wholeParam(query, "duration"),
  });
const linkSlotsRequest = ({ params, query }: RestInput): JsonValue =>
  withoutUndefined({
    token: params.token,
    date_from: text(query, "date_from"),
    date_to: text(query, "date_to"),
    timezone: text(query, "timezone"),
    duration: wholeParam(query, "duration"),
  });
const byToken = fromPath({ token: "token" });
const SLOTS_QUERY = [
  { name: "date_from", description: "YYYY-MM-DD; default today" },
  { name: "date_to", description: "YYYY-MM-DD, at most 31 days after date_from; default 7 days on" },
  { name: "timezone", description: "IANA zone the days are read in; default the host's" },
  { name: "duration", description: "the length in minutes the slots are for, one of the event's durations; default the first", schema: { type: "integer" as const } },
];
const newBooking = fromPath(PUBLIC_EVENT_PARAMS, "booking");
const byKey = fromPath({ private_key: "private_key" });
const byKeyWithBooking = fromPath({ private_key: "private_key" }, "booking");

const PUBLIC_EVENT = "/public/users/:user_url/events/:event_url";
const PUBLIC_LINK = "/public/links/:token";

/** A repeatable query key's values (`event_id=a&event_id=b`). */
function texts(query: Record<string, unknown>, key: string): string[] {
  const v = query[key];
  return typeof v === "string" ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/**
 * A whole number of the query (`limit`, `page[limit]`, a slots' `duration`) as written; anything else (a word, a
 * fraction, empty) is 0, which the service refuses with its own rule: the range a limit takes, or 422 `duration is not
 * one of the event's durations` (booking-kinds.md), not a generic "not valid".
 */
export function wholeParam(query: Record<string, unknown>, key: string): number | undefined {
  const v = query[key];
  if (v === undefined) return undefined;
  return typeof v === "string" && /^\s*\d{1,9}\s*$/.test(v) ? Number(v) : 0;
}

/** What a change holds only sometimes: a bookmark has no booking, only a move a previous_booking_id, only a team booking a team (teams.md). */
const SOMETIMES = new Set(["booking", "previous_booking_id", "team"]);

/** A change as REST shows it: what callers.md and teams.md say is absent is left out, not null. */
function changeJson(change: JsonValue): JsonValue {
  if (typeof change !== "object" || change === null || Array.isArray(change)) return change;
  return Object.fromEntries(Object.entries(change).filter(([k, v]) => !(v === null && SOMETIMES.has(k))));
}

const changesData = (response: JsonObject): JsonValue => ({ changes: Array.isArray(response.changes) ? response.changes.map(changeJson) : response.changes, next: response.next });

/**
 * A change feed's `after`: given more than once or nested (`after[]=`), it is no token the service gave, so it is
 * answered as one (410), never read as absent, which would list the feed from its start again to a reader resuming.
 */
function tokenParam(query: Record<string, unknown>, key: string): string | undefined {
  const v = query[key];
  return v === undefined || typeof v === "string" ? v : "(not one token)";
}

const changesRequest = ({ query }: RestInput): JsonValue => withoutUndefined({ after: tokenParam(query, "after"), limit: wholeParam(query, "limit"), event_ids: texts(query, "event_id") });

const deskRequest = ({ query }: RestInput): JsonValue =>
  withoutUndefined({
    statuses: texts(query, "status"),
    event_ids: texts(query, "event_id"),
    from: text(query, "from"),
    to: text(query, "to"),
    attendee_email: text(query, "attendee_email"),
    no_show: text(query, "no_show"),
    limit: wholeParam(query, "page[limit]"),
    after: text(query, "page[after]"),
  });

const deskData = (response: JsonObject): JsonValue => ({ bookings: response.bookings ?? [], next: response.next ?? null });

/** A new booking's message: a request waiting for the host is `booking requested` (booking-kinds.md). */
export const bookedMessage = {
  pick(response: JsonObject): string {
    const booking = response.booking;
    const pending = typeof booking === "object" && booking !== null && !Array.isArray(booking) && booking.status === "pending";
    return pending ? "booking requested" : "booking confirmed";
  },
  all: ["booking confirmed", "booking requested"],
};

export const bookingRoutes: RestRoute[] = [
  {
    kind: "rpc", method: "GET", path: "/bookings", service: BookingService, rpc: "listAccountBookings", body: "none", request: deskRequest,
    query: [
      { name: "status", description: "only bookings in this status (repeatable): confirmed, canceled, rescheduled, pending, declined, expired" },
      { name: "event_id", description: "only this event's bookings (repeatable); another account's event: 404" },
      { name: "from", description: "ISO 8601 time, or a date (the start of that day in the host's zone); bookings starting at or after it" },
      { name: "to", description: "ISO 8601 time, or a date (the start of that day in the host's zone); bookings starting before it" },
      { name: "attendee_email", description: "only this attendee's bookings" },
      { name: "no_show", description: "attendee or host" },
      { name: "page[limit]", description: "bookings per page, 1 to 100, default 25", schema: { type: "integer", minimum: 1, maximum: 100 } },
      { name: "page[after]", description: "the next of the previous page" },
    ],
    data: deskData, message: "bookings found", summary: "Every booking of the caller's events (personal and team), newest start first, in cursor pages",
  },
  {
    kind: "rpc", method: "GET", path: "/events/:id/bookings", service: BookingService, rpc: "listBookings", body: "none", request: listRequest,
    query: [{ name: "category", description: "upcoming (default), recent, past, canceled, archived or pending" }, { name: "date_from", description: "YYYY-MM-DD" }, { name: "date_to", description: "YYYY-MM-DD" }, { name: "page[number]", description: "page to return, default 1", schema: { type: "integer", minimum: 1 } }, { name: "page[limit]", description: "bookings per page, default 10, up to 500", schema: { type: "integer", minimum: 1, maximum: 500 } }, { name: "no_show", description: "only the bookings with this no-show: attendee or host" }],
    message: "Bookings found", summary: "List bookings of an event",
  },
  {
    kind: "rpc", method: "POST", path: "/events/:id/bookings", service: BookingService, rpc: "bookForAttendee", request: fromPath({ event_id: "id" }, "booking"), status: 201,
    required: ["start_time", "attendee_name", "attendee_email"],
    data: field("booking"), message: "booking confirmed", summary: "Book the event for someone (host): always confirmed; override_rules sets the event's rules aside, notify_attendee false mails nobody but the host",
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
    kind: "rpc", method: "POST", path: "/bookings/:id/confirm", service: BookingService, rpc: "confirmBooking", body: "none", request: fromPath({ id: "id" }),
    data: field("booking"), message: "booking confirmed", summary: "Confirm a request waiting for the host (host)",
  },
  {
    kind: "rpc", method: "POST", path: "/bookings/:id/decline", service: BookingService, rpc: "declineBooking", request: byIdWithBooking, bodyOptional: true,
    data: field("booking"), message: "booking declined", summary: "Decline a request waiting for the host, with a reason if given (host)",
  },
  {
    kind: "rpc", method: "POST", path: "/bookings/:id/reschedule", service: BookingService, rpc: "rescheduleBooking", request: byIdWithBooking, status: 201, required: ["start_time"],
    data: field("booking"), message: "booking rescheduled", summary: "Move a booking to another time (host): not bound by the cancel notice; override_rules sets the event's rules aside; the booker is told the host moved it, with the reason",
  },
  {
    kind: "rpc", method: "POST", path: "/bookings/:id/no_show", service: BookingService, rpc: "recordNoShow", request: byIdWithBooking,
    data: field("booking"), message: "no-show recorded", summary: "Record who did not come to a booking that has started, or clear it with null (host)",
  },
  {
    kind: "rpc", method: "GET", path: "/booking_changes", service: BookingService, rpc: "listBookingChanges", body: "none", request: changesRequest,
    query: [{ name: "after", description: "a change's token or a list's next; absent: the oldest kept change" }, { name: "limit", description: "changes per page, 1 to 500, default 100", schema: { type: "integer", minimum: 1, maximum: 500 } }, { name: "event_id", description: "only this event's changes (repeatable)" }],
    data: changesData, message: "booking changes found", summary: "The account's booking changes in commit order; with Accept: text/event-stream, a live stream (Last-Event-ID resumes)",
    events: {
      rpc: "watchBookingChanges",
      request: ({ query }, lastEventId) => withoutUndefined({ after: lastEventId ?? tokenParam(query, "after"), event_ids: texts(query, "event_id") }),
      data: changeJson,
      id: (change) => String(change.token),
      event: (change) => String(change.type),
    },
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
    query: SLOTS_QUERY,
    message: "slots found", summary: "Free slots of the event (public)",
  },
  {
    kind: "rpc", method: "POST", path: `${PUBLIC_EVENT}/bookings`, service: PublicBookingService, rpc: "createBooking", request: newBooking, status: 201,
    required: ["start_time", "attendee_name", "attendee_email"],
    data: field("booking"), message: "booking confirmed", messageOf: bookedMessage, summary: "Book a slot (public)",
  },
  {
    kind: "rpc", method: "GET", path: PUBLIC_LINK, service: PublicBookingService, rpc: "getLinkEvent", body: "none", request: byToken,
    data: field("event"), message: "event found", summary: "The event of a single-use link, public or not (public; 410 once used, revoked or expired)",
  },
  {
    kind: "rpc", method: "GET", path: `${PUBLIC_LINK}/slots`, service: PublicBookingService, rpc: "listLinkSlots", body: "none", request: linkSlotsRequest,
    query: SLOTS_QUERY,
    message: "slots found", summary: "Free slots of a single-use link's event (public)",
  },
  {
    kind: "rpc", method: "POST", path: `${PUBLIC_LINK}/bookings`, service: PublicBookingService, rpc: "createLinkBooking", request: fromPath({ token: "token" }, "booking"), status: 201,
    required: ["start_time", "attendee_name", "attendee_email"],
    data: field("booking"), message: "booking confirmed", messageOf: bookedMessage, summary: "Book through a single-use link, which it uses up (public)",
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
