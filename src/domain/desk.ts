// Rules of the host's desk (booking-kinds.md "The host's desk"): what the list of all the caller's bookings takes as filters and pages, and its cursor.
import { BOOKING_STATUSES, readIsoTime, readNoShow, type NoShow } from "./booking.js";
import { isCalendarDate, isDateInBounds } from "./availability.js";
import { invalid, isOneOf, notInList } from "./errors.js";
import { wallClockToUtc } from "./timezones.js";
import { normaliseEmail } from "./user.js";

/** Every status a booking can have (a filter may name any). */
const LISTED_STATUSES = BOOKING_STATUSES;
const DESK_PAGE = { min: 1, max: 100, default: 25 } as const;

/** Where a page starts: after the booking that starts at `start` with id `id` (the list runs newest start, then newest id, first). */
export interface DeskCursor {
  start: Date;
  id: string;
}

export interface DeskQuery {
  statuses: string[];
  from?: Date;
  to?: Date;
  attendeeEmail?: string;
  noShow?: NoShow;
  limit: number;
  after?: DeskCursor;
}

/** The cursor as a `next` shows it: opaque to the caller, url-safe. */
export function deskCursorText(c: DeskCursor): string {
  return Buffer.from(`${c.start.getTime()}.${c.id}`).toString("base64url");
}

function readCursor(text: string): DeskCursor {
  const m = /^(-?\d{1,15})\.([0-9a-f]{24})$/.exec(Buffer.from(text, "base64url").toString("latin1"));
  const start = m ? new Date(Number(m[1])) : undefined;
  if (!m || !start || Number.isNaN(start.getTime()) || deskCursorText({ start, id: m[2] }) !== text) throw invalid("page[after] is not a next of this list", "page[after]");
  return { start, id: m[2] };
}

/**
 * `from` or `to` as the desk reads it: an ISO 8601 time, or an ISO 8601 date, which is the start of that day in the
 * host's zone (`iana`): `from=2026-12-20&to=2026-12-21` lists the host's 20 December.
 */
function deskBound(field: "from" | "to", value: string, iana: string): Date {
  const text = value.trim();
  if (isCalendarDate(text) && isDateInBounds(text)) return wallClockToUtc(iana, text, "00:00");
  return readIsoTime(field, value);
}

/** The list's filters and page as asked (each a 422 naming its field when it cannot be read); `iana`: the host's zone, whose days a date names. */
export function readDeskQuery(req: { statuses: readonly string[]; from?: string; to?: string; attendeeEmail?: string; noShow?: string; limit?: number; after?: string }, iana: string): DeskQuery {
  for (const s of req.statuses) if (!isOneOf(LISTED_STATUSES, s)) notInList("status", LISTED_STATUSES, s);
  const noShow = readNoShow(req.noShow) ?? undefined;
  const limit = req.limit ?? DESK_PAGE.default;
  if (!Number.isInteger(limit) || limit < DESK_PAGE.min || limit > DESK_PAGE.max) throw invalid(`page[limit] must be between ${DESK_PAGE.min} and ${DESK_PAGE.max}`, "page[limit]");
  const email = req.attendeeEmail === undefined ? "" : normaliseEmail(req.attendeeEmail);
  return {
    statuses: [...new Set(req.statuses)],
    from: req.from === undefined || req.from === "" ? undefined : deskBound("from", req.from, iana),
    to: req.to === undefined || req.to === "" ? undefined : deskBound("to", req.to, iana),
    attendeeEmail: email === "" ? undefined : email,
    noShow,
    limit,
    after: req.after === undefined || req.after === "" ? undefined : readCursor(req.after),
  };
}
