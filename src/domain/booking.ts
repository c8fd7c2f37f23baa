// Rules of bookings: listing categories and date ranges, pagination, attendees, display fields, and input checks.
import { DATE_BOUNDS, DATE_MAX, DATE_MIN, isCalendarDate, isDateInBounds } from "./availability.js";
import { invalid, notInList } from "./errors.js";
import { avatarName, formatBookingRange, formatDate, formatDurationMinutes } from "./format.js";
import { addDays, utcToWallClock, wallClockToUtc } from "./timezones.js";
import { charLength, isEmail, normaliseEmail } from "./user.js";

/**
 * Every status a booking may have: a request waits for the host as `pending` and ends `confirmed`, `declined` or
 * `expired` (booking-kinds.md "Bookings that wait for the host").
 */
export const BOOKING_STATUSES = ["confirmed", "canceled", "rescheduled", "pending", "declined", "expired"] as const;
type BookingStatus = (typeof BOOKING_STATUSES)[number];
/** What an import may say a booking was: history, never a request. */
export const IMPORT_STATUSES = ["confirmed", "canceled", "rescheduled"] as const satisfies readonly BookingStatus[];

/** The statuses of a booking that holds its time: confirmed, and a request waiting for the host. */
export const HOLDING_STATUSES: readonly BookingStatus[] = ["confirmed", "pending"];

export const CATEGORIES = ["upcoming", "recent", "past", "canceled", "archived", "pending"] as const;
export type Category = (typeof CATEGORIES)[number];

/** The longest attendee name, in characters; the event page's name field takes no more (maxlength). */
export const ATTENDEE_NAME_MAX = 80;
const INTERNAL_NOTES_MAX = 2000;
const CANCEL_REASON_MAX = 500;
export const IMPORT_MAX_ENTRIES = 1000;

/** Listings: the default range runs from today this many days on (docs/spec/scheduling-api.md, Limits). */
const DEFAULT_RANGE_DAYS = 15;
const PAGE_LIMIT_DEFAULT = 10;
const PAGE_LIMIT_MAX = 500;

/** Slots: the default range runs from today this many days on, and a range spans at most SLOT_RANGE_MAX_DAYS. */
const SLOT_RANGE_DEFAULT_DAYS = 7;
const SLOT_RANGE_MAX_DAYS = 31;

/**
 * How far from a time span a booking may start and still reach into it with its padding. A
 * booking blocks [start, end + padding) (padding only after the meeting); a meeting lasts at
 * most 2 hours and pads at most 2 hours, so a booking starting 4 hours before a span is the
 * earliest that can reach it, and none starting after the span's end can. A day each side keeps
 * the busy query right if those lists grow, at the cost of a few more rows.
 */
export const BUSY_MARGIN_MS = 86_400_000;

export function readCategory(value: string | undefined): Category {
  return (CATEGORIES as readonly string[]).includes(value ?? "") ? (value as Category) : "upcoming";
}

export interface DateRange {
  /** Host-zone days, inclusive, as applied. */
  dateFrom: string;
  dateTo: string;
  /** [from, to) in real time: dateFrom 00:00 to the midnight after dateTo, host zone. */
  from: Date;
  to: Date;
}

/**
 * A listing's date: unreadable is undefined (the default applies, as the spec says); a real date beyond the
 * bounds is clamped to them, since `date_to=9999-12-31` plainly means "everything ahead" and the spec wants
 * listings to answer rather than fail.
 */
function readDate(value: string | undefined): string | undefined {
  if (value === undefined || !isCalendarDate(value)) return undefined;
  return value < DATE_MIN ? DATE_MIN : value > DATE_MAX ? DATE_MAX : value;
}

/**
 * The days a listing covers. Each unreadable (or absent) date falls back to its default; a range
 * that ends before it starts falls back to the whole default. The default is today to 15 days
 * on, except for `past`, whose default is the 15 days up to today: a host opening "past" wants the
 * meetings that just happened, and "today to 15 days on" would hold at most today's.
 */
export function listingRange(category: Category, dateFrom: string | undefined, dateTo: string | undefined, hostZone: string, now: Date): DateRange {
  const today = utcToWallClock(hostZone, now).date;
  const defaults =
    category === "past" ? { from: addDays(today, -DEFAULT_RANGE_DAYS), to: today } : { from: today, to: addDays(today, DEFAULT_RANGE_DAYS) };
  let from = readDate(dateFrom) ?? defaults.from;
  let to = readDate(dateTo) ?? defaults.to;
  if (to < from) {
    from = defaults.from;
    to = defaults.to;
  }
  return {
    dateFrom: from,
    dateTo: to,
    from: wallClockToUtc(hostZone, from, "00:00"),
    to: wallClockToUtc(hostZone, addDays(to, 1), "00:00"),
  };
}

/** What one category selects, independent of any database: the service turns it into a filter. */
export interface CategoryRule {
  /** undefined: any status. */
  status: BookingStatus | undefined;
  archived: boolean;
  /** start_time in [startFrom, startBefore). */
  startFrom: Date;
  startBefore: Date;
  sort: { field: "start_time" | "booked_at"; direction: 1 | -1 };
}

const later = (a: Date, b: Date): Date => (a.getTime() >= b.getTime() ? a : b);
const earlier = (a: Date, b: Date): Date => (a.getTime() <= b.getTime() ? a : b);

/**
 * The five categories (docs/spec/scheduling-api.md), all within the date range by start time:
 *   upcoming  confirmed, not archived, starting now or later, soonest first
 *   recent    the same bookings, newest booked first
 *   past      confirmed, not archived, started before now (a meeting in progress is past: every
 *             confirmed booking is either upcoming or past, and it can no longer be canceled), latest first
 *   canceled  canceled, not archived, starting now or later, soonest first
 *   archived  archived, whatever the status, soonest first
 *   pending   requests waiting for the host, not archived, starting now or later, soonest first
 * Rescheduled bookings appear only under archived (when archived): the new booking stands for them.
 */
export function categoryRule(category: Category, range: DateRange, now: Date): CategoryRule {
  const future = { startFrom: later(range.from, now), startBefore: range.to };
  switch (category) {
    case "upcoming":
      return { status: "confirmed", archived: false, ...future, sort: { field: "start_time", direction: 1 } };
    case "recent":
      return { status: "confirmed", archived: false, ...future, sort: { field: "booked_at", direction: -1 } };
    case "past":
      return { status: "confirmed", archived: false, startFrom: range.from, startBefore: earlier(range.to, now), sort: { field: "start_time", direction: -1 } };
    case "canceled":
      return { status: "canceled", archived: false, ...future, sort: { field: "start_time", direction: 1 } };
    case "archived":
      return { status: undefined, archived: true, startFrom: range.from, startBefore: range.to, sort: { field: "start_time", direction: 1 } };
    case "pending":
      return { status: "pending", archived: false, ...future, sort: { field: "start_time", direction: 1 } };
  }
}

/** What the host's lists, counts and attendees read of a booking. */
export interface ListedBooking {
  id: string;
  status: string;
  archived: boolean;
  start: Date;
  end: Date;
  bookedAt: Date;
}

export function inCategory(b: ListedBooking, rule: CategoryRule): boolean {
  const at = b.start.getTime();
  return (
    (rule.status === undefined || b.status === rule.status) &&
    b.archived === rule.archived &&
    at >= rule.startFrom.getTime() &&
    at < rule.startBefore.getTime()
  );
}

/** The bookings of one category in its order; ties broken by id so pages never overlap or skip. */
export function selectCategory<B extends ListedBooking>(bookings: readonly B[], rule: CategoryRule): B[] {
  const key = rule.sort.field === "start_time" ? (b: B) => b.start.getTime() : (b: B) => b.bookedAt.getTime();
  const dir = rule.sort.direction;
  return bookings
    .filter((b) => inCategory(b, rule))
    .sort((a, b) => dir * (key(a) - key(b)) || dir * (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export interface PageRequestInput {
  number?: number;
  limit?: number;
}

export interface Page {
  number: number;
  limit: number;
  skip: number;
}

const isPositiveInteger = (n: number | undefined): n is number => n !== undefined && Number.isInteger(n) && n > 0;

/** page[limit]: default 10, at most 500 (more reads as 500); page[number]: default 1. Zero, negatives and non-numbers read as the default. */
export function readPage(input: PageRequestInput | undefined): Page {
  const limit = isPositiveInteger(input?.limit) ? Math.min(input.limit, PAGE_LIMIT_MAX) : PAGE_LIMIT_DEFAULT;
  const number = isPositiveInteger(input?.number) ? input.number : 1;
  return { number, limit, skip: (number - 1) * limit };
}

export interface Pagination {
  limit: number;
  /** The page number asked for (after defaults); current_page is the page served, the same number. */
  number: number;
  totalPages: number;
  totalRecords: number;
  currentPage: number;
}

export function paginationOf(page: Page, totalRecords: number): Pagination {
  return {
    limit: page.limit,
    number: page.number,
    totalPages: Math.ceil(totalRecords / page.limit),
    totalRecords,
    currentPage: page.number,
  };
}

/** How the host writes dates and times. */
export interface HostFormats {
  /** IANA zone. */
  zone: string;
  dateFormat: string;
  timeFormat: string;
}

export interface BookingTimes {
  status: string;
  start: Date;
  end: Date;
}

export function bookingRangeForHost(b: BookingTimes, host: HostFormats): string {
  return formatBookingRange(b.start, b.end, host.zone, host.dateFormat, host.timeFormat);
}

export function bookingDuration(b: BookingTimes): string {
  return formatDurationMinutes(Math.round((b.end.getTime() - b.start.getTime()) / 60_000));
}

/** Who canceled a booking. */
export const CANCELED_BY = ["host", "booker"] as const;

/** Where a booking's meeting link stands (providers.md "Video meetings"). */
export const MEETING_STATUSES = ["none", "pending", "ready", "failed"] as const;
export type MeetingStatus = (typeof MEETING_STATUSES)[number];

/**
 * The one place a booking's `meeting_status` is decided. A status the booking recorded (links a provider makes
 * later, through the outbox: pending, then ready or failed) is taken as it is; a booking without one has what the
 * links of today give: Jitsi's link is made with the booking, so a link means `ready`, and no link means the
 * location has none (`none`).
 */
export function meetingStatusOf(b: { meetingUrl: string | null | undefined; meetingStatus?: string | null }): MeetingStatus {
  const recorded = b.meetingStatus;
  if (recorded !== undefined && recorded !== null && (MEETING_STATUSES as readonly string[]).includes(recorded)) return recorded as MeetingStatus;
  return typeof b.meetingUrl === "string" && b.meetingUrl !== "" ? "ready" : "none";
}

/**
 * When an unanswered request expires: `confirmationHours` after it was made, or at its start if that is sooner
 * (booking-kinds.md "Bookings that wait for the host").
 */
export function requestExpiresAt(bookedAt: Date, start: Date, confirmationHours: number): Date {
  return new Date(Math.min(bookedAt.getTime() + confirmationHours * 3_600_000, start.getTime()));
}

export const NOT_PENDING = "booking is not pending";

/** Only a pending request whose time to answer has not run out can be confirmed or declined. */
export function answerProblem(b: { status: string; expiresAt: Date | null | undefined }, now: Date): string | undefined {
  if (b.status !== "pending") return NOT_PENDING;
  if (b.expiresAt && b.expiresAt.getTime() <= now.getTime()) return NOT_PENDING;
  return undefined;
}

/** Who did not come to a booking (booking-kinds.md "No-shows"). */
const NO_SHOWS = ["attendee", "host"] as const;
export type NoShow = (typeof NO_SHOWS)[number];

/** A no-show as recorded (POST /bookings/<id>/no_show): attendee, host, or null (unset or cleared); anything else 422. */
export function readNoShow(value: string | undefined): NoShow | null {
  if (value === undefined || value === "") return null;
  if (!(NO_SHOWS as readonly string[]).includes(value)) notInList("no_show", NO_SHOWS, value);
  return value as NoShow;
}

/** The meaning of a listing's `no_show` filter: only the bookings whose no-show is the one named; no filter keeps all. */
export function matchesNoShow(b: { noShow: string | null | undefined }, filter: NoShow | null): boolean {
  return filter === null || b.noShow === filter;
}

/** A no-show is recorded only on a confirmed booking that has started. */
export function noShowProblem(b: BookingTimes, now: Date): string | undefined {
  if (b.status !== "confirmed") return `booking is ${b.status}, only a confirmed booking has no-shows`;
  if (b.start.getTime() > now.getTime()) return "booking has not started yet";
  return undefined;
}

/** Only a confirmed booking that has not started can be canceled or moved. */
export function changeProblem(b: BookingTimes, now: Date): string | undefined {
  if (b.status !== "confirmed") return `booking is ${b.status}, only a confirmed booking can be changed`;
  if (b.start.getTime() <= now.getTime()) return "booking has already started";
  return undefined;
}

export interface AttendeeBooking {
  id: string;
  email: string;
  name: string;
  status: string;
  start: Date;
}

export interface AttendeeSummary {
  email: string;
  fullName: string;
  avatarName: string;
  bookingsCount: number;
  canceledCount: number;
  firstAppeared: string;
  lastAppeared: string;
  firstAppearedAt: string;
  lastAppearedAt: string;
  isTimelydoUser: boolean;
  logo: string | undefined;
  ids: string[];
}

/** What the service knows of an attendee's own account, by lowercased e-mail. */
export interface AttendeeAccount {
  logo: string | undefined;
}

/**
 * One entry per e-mail. bookings_count counts the confirmed bookings, canceled_count the
 * canceled ones; rescheduled bookings are left out (the booking that replaced them counts).
 * first/last appeared are the earliest and latest meeting start among the counted bookings; the
 * name is the one given on the latest. Most recently seen first.
 */
export function aggregateAttendees(bookings: readonly AttendeeBooking[], host: HostFormats, accounts: ReadonlyMap<string, AttendeeAccount>): AttendeeSummary[] {
  interface Acc {
    email: string;
    name: string;
    confirmed: number;
    canceled: number;
    first: Date;
    last: Date;
    ids: string[];
  }
  const byEmail = new Map<string, Acc>();
  const ordered = [...bookings].sort((a, b) => a.start.getTime() - b.start.getTime() || a.id.localeCompare(b.id));
  for (const b of ordered) {
    if (b.status !== "confirmed" && b.status !== "canceled") continue;
    let acc = byEmail.get(b.email);
    if (!acc) {
      acc = { email: b.email, name: b.name, confirmed: 0, canceled: 0, first: b.start, last: b.start, ids: [] };
      byEmail.set(b.email, acc);
    }
    if (b.status === "confirmed") acc.confirmed++;
    else acc.canceled++;
    acc.last = b.start;
    acc.name = b.name;
    acc.ids.push(b.id);
  }
  return [...byEmail.values()]
    .sort((a, b) => b.last.getTime() - a.last.getTime() || a.email.localeCompare(b.email))
    .map((a) => {
      const account = accounts.get(a.email);
      return {
        email: a.email,
        fullName: a.name,
        avatarName: avatarName(a.name),
        bookingsCount: a.confirmed,
        canceledCount: a.canceled,
        firstAppeared: formatDate(a.first, host.zone, host.dateFormat),
        lastAppeared: formatDate(a.last, host.zone, host.dateFormat),
        firstAppearedAt: a.first.toISOString(),
        lastAppearedAt: a.last.toISOString(),
        isTimelydoUser: account !== undefined,
        logo: account?.logo,
        ids: a.ids,
      };
    });
}

// ---------------------------------------------------------------------------------------------
// Input checks shared by the public booking form, the host's actions and the import.

const ISO_TIME_RE = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * An ISO 8601 date and time with a zone designator (Z or an offset), or undefined. A time without
 * one is refused rather than guessed: it names no instant.
 */
export function parseIsoTime(value: string): Date | undefined {
  const m = ISO_TIME_RE.exec(value.trim());
  if (!m || !isCalendarDate(m[1])) return undefined;
  if (Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4] ?? 0) > 59) return undefined;
  const offset = m[5].toUpperCase();
  if (offset !== "Z" && Number(offset.slice(-2)) > 59) return undefined;
  const ms = Date.parse(value.trim());
  return Number.isFinite(ms) ? new Date(ms) : undefined;
}

/**
 * A date and time as a wall clock, with no zone designator: which instant it means depends on a zone nobody named.
 * The date and time may stand apart by a space as well (`2026-12-20 10:00:00`, as SQL and RFC 3339 write them).
 */
const LOCAL_TIME_RE = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?$/i;

/**
 * A booking time the API reads (`field` names it in the 422): an ISO 8601 time (parseIsoTime) on a date within the
 * bounds. One without its offset is told what it lacks (extensions.md "Allowed values"), not just that it is wrong.
 */
export function readIsoTime(field: string, value: string): Date {
  const at = parseIsoTime(value);
  if (!at && LOCAL_TIME_RE.test(value.trim())) throw invalid(`${field} needs a UTC offset or Z, e.g. 2026-12-09T13:00:00Z`);
  if (!at) throw invalid(`${field} is not a valid ISO 8601 time`);
  // The date as written (the instant may fall a day either side in UTC).
  if (!isDateInBounds(value.trim().slice(0, 10))) throw invalid(`${field} must be on a date ${DATE_BOUNDS}`);
  return at;
}

/** Name and e-mail of the person booking; `field` prefixes the messages (e.g. "bookings[3]."). */
export function checkAttendee(name: string, email: string, prefix = ""): { name: string; email: string } {
  const trimmed = name.trim();
  if (trimmed === "") throw invalid(`${prefix}attendee_name can't be blank`);
  if (charLength(trimmed) > ATTENDEE_NAME_MAX) throw invalid(`${prefix}attendee_name is too long (maximum is ${ATTENDEE_NAME_MAX} characters)`);
  const address = normaliseEmail(email);
  if (!isEmail(address)) throw invalid(`${prefix}attendee_email is invalid`);
  return { name: trimmed, email: address };
}

export function checkInternalNotes(notes: string, prefix = ""): string | null {
  if (charLength(notes) > INTERNAL_NOTES_MAX) throw invalid(`${prefix}internal_notes is too long (maximum is ${INTERNAL_NOTES_MAX} characters)`);
  return notes.trim() === "" ? null : notes;
}

export function checkCancelReason(reason: string | undefined): string | null {
  if (reason === undefined || reason.trim() === "") return null;
  if (charLength(reason) > CANCEL_REASON_MAX) throw invalid(`reason is too long (maximum is ${CANCEL_REASON_MAX} characters)`);
  return reason.trim();
}

/** Guests the booker invites: only when the event allows them, at most its limit, each an e-mail. */
export function checkGuestEmails(guests: readonly string[], enabled: boolean, limit: number): string[] {
  if (guests.length === 0) return [];
  if (!enabled) throw invalid("guest_emails are not allowed for this event");
  guests.forEach((g, i) => {
    if (!isEmail(normaliseEmail(g))) throw invalid(`guest_emails[${i}] is invalid`);
  });
  const addresses = [...new Set(guests.map(normaliseEmail))];
  if (addresses.length > limit) throw invalid(`guest_emails has more than ${limit} entries (the event's limit)`);
  return addresses;
}

export interface SlotDays {
  dateFrom: string;
  dateTo: string;
}

/** The days of a slot listing in the viewer's zone: default today to 7 days on; at most 31 days apart; unreadable dates are 422. */
export function slotDays(dateFrom: string | undefined, dateTo: string | undefined, viewerZone: string, now: Date): SlotDays {
  const today = utcToWallClock(viewerZone, now).date;
  for (const [field, value] of [["date_from", dateFrom], ["date_to", dateTo]] as const) {
    if (value !== undefined && value !== "" && !isCalendarDate(value)) throw invalid(`${field} is not a valid date (YYYY-MM-DD)`);
    if (value !== undefined && value !== "" && !isDateInBounds(value)) throw invalid(`${field} must be a date ${DATE_BOUNDS}`);
  }
  const from = dateFrom || today;
  const to = dateTo || addDays(from, SLOT_RANGE_DEFAULT_DAYS);
  if (to < from) throw invalid("date_to must not be before date_from");
  // Both in bounds, so neither this nor the caller's day after `to` leaves four-digit years.
  if (to > addDays(from, SLOT_RANGE_MAX_DAYS)) throw invalid(`date_to must be at most ${SLOT_RANGE_MAX_DAYS} days after date_from`);
  return { dateFrom: from, dateTo: to };
}

export interface ImportEntryInput {
  eventId?: string;
  startTime?: string;
  attendeeName?: string;
  attendeeEmail?: string;
  status?: string;
  archived?: boolean;
  bookedAt?: string;
  internalNotes?: string;
}

export interface CheckedImportEntry {
  eventId: string;
  start: Date;
  attendeeName: string;
  attendeeEmail: string;
  status: BookingStatus;
  archived: boolean;
  bookedAt: Date | undefined;
  internalNotes: string | null;
}

/** One import entry, without the database: the message names the entry and field, e.g. "bookings[3].start_time ...". */
export function checkImportEntry(entry: ImportEntryInput, index: number): CheckedImportEntry {
  const at = `bookings[${index}].`;
  const required = { event_id: entry.eventId, start_time: entry.startTime, attendee_name: entry.attendeeName, attendee_email: entry.attendeeEmail };
  for (const [field, value] of Object.entries(required)) {
    if (value === undefined || value.trim() === "") throw invalid(`${at}${field} can't be blank`);
  }
  if (!/^[0-9a-f]{24}$/i.test(entry.eventId ?? "")) throw invalid(`${at}event_id does not name an event`);
  const start = readIsoTime(`${at}start_time`, entry.startTime ?? "");
  const attendee = checkAttendee(entry.attendeeName ?? "", entry.attendeeEmail ?? "", at);
  const status = entry.status ?? "confirmed";
  if (!(IMPORT_STATUSES as readonly string[]).includes(status)) notInList(`${at}status`, IMPORT_STATUSES, status);
  let bookedAt: Date | undefined;
  if (entry.bookedAt !== undefined) {
    bookedAt = readIsoTime(`${at}booked_at`, entry.bookedAt);
  }
  return {
    eventId: (entry.eventId ?? "").toLowerCase(),
    start,
    attendeeName: attendee.name,
    attendeeEmail: attendee.email,
    status: status as BookingStatus,
    archived: entry.archived ?? false,
    bookedAt,
    internalNotes: entry.internalNotes === undefined ? null : checkInternalNotes(entry.internalNotes, at),
  };
}
