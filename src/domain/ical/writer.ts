// A booking as iCalendar (pure): the VEVENT written to a host's calendar (CalDAV), the iTIP invitation of the e-mails and invite.ics, and the booking's stable UID.
import { systemClock } from "../clock.js";

/*
 * Written by hand rather than with ical-generator: its parameter escaping puts backslashes before `"` and `\` inside
 * a quoted CN, which RFC 5545 does not define (a name with a double quote makes an ORGANIZER line that ical.js reads
 * as `Ann \`), and it TEXT-escapes URI values (`URL;VALUE=URI:https://x/a\,b`). The few properties a booking needs
 * are shorter to write correctly here: TEXT escaped per RFC 5545 3.3.11, parameter values per RFC 6868 (^^, ^', ^n)
 * and always quoted, control characters dropped from everything (so no value can end its line and start a
 * property of its own), lines folded at 75 octets never inside a UTF-8 sequence, CRLF line ends.
 */

export interface IcsBooking {
  uid: string;
  /** Grows with every change of the booking (RFC 5546 3.2.5); a CANCEL carries a higher one than the REQUEST it cancels. */
  sequence: number;
  start: Date;
  end: Date;
  summary: string;
  description: string;
  location: string | null;
  organizer: { name: string; email: string };
  /** The booker first, then a team booking's other hosts (`cohost`: they hold it, they are not the booker's party), then the guests. */
  attendees: { name?: string; email: string; cohost?: boolean }[];
  status: "CONFIRMED" | "CANCELLED";
  url?: string;
  /** COMMENT (RFC 5546 3.2.5 lets a CANCEL carry one): why the booking was canceled. */
  comment?: string;
  /** DTSTAMP: when this text was made; by default now by the system's clock (calendar programs read it against theirs). */
  stamp?: Date;
}

/** `<booking id>@<app host>`: stable per booking, so every write of it names the same event. */
export function bookingUid(bookingId: string, appHost: string): string {
  return `${bookingId}@${appHost}`;
}

/** The booking id of a UID that is one bookingUid made for `appHost` (a 24-hex booking id), else null. */
function bookingIdOfUid(uid: string, appHost: string): string | null {
  const at = uid.lastIndexOf("@");
  return at === 24 && /^[0-9a-f]{24}$/.test(uid.slice(0, 24)) && uid.slice(at + 1).toLowerCase() === appHost.toLowerCase() ? uid.slice(0, 24) : null;
}

/**
 * Whether a UID names one of `own` (what the host's bookings' events are named after, in hex: a booking's id, the
 * id a moved event keeps, a seated slot's id): the event this service wrote for a booking the host's own booking
 * record already blocks. Another host's booking of this service (its invite.ics imported into
 * this host's calendar) is the host's busy time like any event.
 */
export function isOwnBookingUid(uid: string, appHost: string, own: ReadonlySet<string>): boolean {
  const id = bookingIdOfUid(uid, appHost);
  return id !== null && own.has(id);
}

const PRODID = "-//Scheduling service//Bookings//EN";

function utc(d: Date): string {
  return `${d.toISOString().slice(0, 19).replace(/[-:]/g, "")}Z`;
}

/** Control characters other than those TEXT escapes: never valid in a content line (RFC 5545 3.1), and CR/LF would start a new property. */
function withoutControls(s: string, keepNewlines: boolean): string {
  return s.replace(keepNewlines ? /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g : /[\x00-\x1f\x7f]/g, "");
}

/** TEXT (RFC 5545 3.3.11): backslash, semicolon, comma escaped; any line break becomes \n. */
function escapeText(s: string): string {
  return withoutControls(s, true)
    .replace(/\\/g, "\\\\")
    .replace(/;/g, "\\;")
    .replace(/,/g, "\\,")
    .replace(/\r\n|\r|\n/g, "\\n");
}

/** A parameter value (RFC 5545 3.2 with RFC 6868): quoted, ^ as ^^, " as ^', a line break as ^n. */
function paramValue(s: string): string {
  const encoded = withoutControls(s, true)
    .replace(/\^/g, "^^")
    .replace(/"/g, "^'")
    .replace(/\r\n|\r|\n/g, "^n");
  return `"${encoded}"`;
}

/** A URI or CAL-ADDRESS value: not escaped (it is not TEXT), only kept on its line. */
function uriValue(s: string): string {
  return withoutControls(s, false).trim();
}

/** Lines folded at 75 octets (RFC 5545 3.1): continuation lines start with a space, never inside a UTF-8 sequence. */
export function foldLine(line: string): string {
  if (Buffer.byteLength(line, "utf8") <= 75) return line;
  const parts: string[] = [];
  let chunk = "";
  let size = 0;
  for (const ch of line) {
    const n = Buffer.byteLength(ch, "utf8");
    // The first line holds 75 octets; the others 74 after their leading space.
    if (size + n > (parts.length === 0 ? 75 : 74)) {
      parts.push(chunk);
      chunk = "";
      size = 0;
    }
    chunk += ch;
    size += n;
  }
  parts.push(chunk);
  return parts.join("\r\n ");
}

function address(email: string): string {
  return `mailto:${uriValue(email)}`;
}

function cn(name: string | undefined): string {
  return name !== undefined && name.trim() !== "" ? `;CN=${paramValue(name)}` : "";
}

type Attendance = "calendar" | "REQUEST" | "CANCEL";

/**
 * ATTENDEE lines. The booker chose the time, so they have accepted it; guests were invited by the booker and have
 * not answered (NEEDS-ACTION, and in an invitation RSVP=TRUE so their client offers to). In the calendar object every
 * attendee carries SCHEDULE-AGENT=CLIENT (RFC 6638 7.1): the CalDAV server must not send invitations of its own,
 * the service's e-mails are the invitations.
 */
function attendeeLines(b: IcsBooking, kind: Attendance): string[] {
  return b.attendees.map((a, i) => {
    const booker = i === 0;
    const partstat = booker ? "ACCEPTED" : "NEEDS-ACTION";
    const rsvp = kind === "calendar" ? "" : `;RSVP=${booker || kind === "CANCEL" ? "FALSE" : "TRUE"}`;
    const agent = kind === "calendar" ? ";SCHEDULE-AGENT=CLIENT" : "";
    return `ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=${partstat}${rsvp}${agent}${cn(a.name)}:${address(a.email)}`;
  });
}

function calendar(b: IcsBooking, method: "REQUEST" | "CANCEL" | null, status: IcsBooking["status"], attendees: string[], organizerParams: string): string {
  const lines = [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    `PRODID:${PRODID}`,
    "CALSCALE:GREGORIAN",
    ...(method === null ? [] : [`METHOD:${method}`]),
    "BEGIN:VEVENT",
    `UID:${escapeText(b.uid)}`,
    `SEQUENCE:${Math.max(0, Math.trunc(b.sequence))}`,
    `DTSTAMP:${utc(b.stamp ?? systemClock.now())}`,
    `DTSTART:${utc(b.start)}`,
    `DTEND:${utc(b.end)}`,
    `SUMMARY:${escapeText(b.summary)}`,
    ...(b.description === "" ? [] : [`DESCRIPTION:${escapeText(b.description)}`]),
    ...(b.location === null || b.location === "" ? [] : [`LOCATION:${escapeText(b.location)}`]),
    ...(b.url === undefined || b.url === "" ? [] : [`URL:${uriValue(b.url)}`]),
    ...(b.comment === undefined || b.comment.trim() === "" ? [] : [`COMMENT:${escapeText(b.comment.trim())}`]),
    `STATUS:${status}`,
    "TRANSP:OPAQUE",
    `ORGANIZER${cn(b.organizer.name)}${organizerParams}:${address(b.organizer.email)}`,
    ...attendees,
    "END:VEVENT",
    "END:VCALENDAR",
  ];
  return `${lines.map(foldLine).join("\r\n")}\r\n`;
}

/** For a CalDAV PUT (RFC 4791 4.1): one VEVENT, no METHOD, every participant with SCHEDULE-AGENT=CLIENT so the server sends nothing. */
export function calendarObject(b: IcsBooking): string {
  return calendar(b, null, b.status, attendeeLines(b, "calendar"), ";SCHEDULE-AGENT=CLIENT");
}

/**
 * An iTIP message (RFC 5546) for e-mail and invite.ics: REQUEST adds or updates the event (organizer the host), CANCEL
 * removes it (STATUS:CANCELLED, the same UID; the caller gives it a SEQUENCE above the REQUEST's, 3.2.5).
 */
export function invitation(b: IcsBooking, method: "REQUEST" | "CANCEL"): string {
  return calendar(b, method, method === "CANCEL" ? "CANCELLED" : b.status, attendeeLines(b, method), "");
}
