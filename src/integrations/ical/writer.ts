// A booking as iCalendar (pure): the VEVENT written to a host's calendar, and the booking's stable UID.

export interface IcsBooking {
  uid: string;
  sequence: number;
  start: Date;
  end: Date;
  summary: string;
  description: string;
  location: string | null;
  organizer: { name: string; email: string };
  attendees: { name?: string; email: string }[];
  status: "CONFIRMED" | "CANCELLED";
  url?: string;
}

/** `<booking id>@<app host>`: stable per booking, so every write of it names the same event. */
export function bookingUid(bookingId: string, appHost: string): string {
  return `${bookingId}@${appHost}`;
}

function utc(d: Date): string {
  return `${d.toISOString().slice(0, 19).replace(/[-:]/g, "")}Z`;
}

/** TEXT escaping (RFC 5545 3.3.11). */
function text(s: string): string {
  return s.replace(/\\/g, "\\\\").replace(/;/g, "\\;").replace(/,/g, "\\,").replace(/\r\n|\r|\n/g, "\\n");
}

/** A parameter value, quoted (RFC 5545 3.2); double quotes cannot be escaped, so they go. */
function param(s: string): string {
  return `"${s.replace(/"/g, "'").replace(/[\r\n]/g, " ")}"`;
}

/** Lines folded at 75 octets (RFC 5545 3.1), never inside a UTF-8 sequence. */
function fold(line: string): string {
  const bytes = Buffer.from(line, "utf8");
  if (bytes.length <= 75) return line;
  const parts: string[] = [];
  let chunk = "";
  let size = 0;
  for (const ch of line) {
    const n = Buffer.byteLength(ch, "utf8");
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

/** For a CalDAV PUT: one VEVENT, no METHOD, attendees with SCHEDULE-AGENT=CLIENT so the server sends no invitations. */
export function calendarObject(b: IcsBooking): string {
  const lines = [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    "PRODID:-//Scheduling service//EN",
    "CALSCALE:GREGORIAN",
    "BEGIN:VEVENT",
    `UID:${b.uid}`,
    `DTSTAMP:${utc(new Date())}`,
    `SEQUENCE:${b.sequence}`,
    `DTSTART:${utc(b.start)}`,
    `DTEND:${utc(b.end)}`,
    `SUMMARY:${text(b.summary)}`,
    ...(b.description === "" ? [] : [`DESCRIPTION:${text(b.description)}`]),
    ...(b.location === null ? [] : [`LOCATION:${text(b.location)}`]),
    ...(b.url === undefined ? [] : [`URL:${b.url}`]),
    `STATUS:${b.status}`,
    `ORGANIZER;CN=${param(b.organizer.name)}:mailto:${b.organizer.email}`,
    ...b.attendees.map((a) => `ATTENDEE;${a.name ? `CN=${param(a.name)};` : ""}ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;SCHEDULE-AGENT=CLIENT:mailto:${a.email}`),
    "END:VEVENT",
    "END:VCALENDAR",
  ];
  return `${lines.map(fold).join("\r\n")}\r\n`;
}
