// A booking as a calendar event (pure): the one model of its title, description, location words, UID and SEQUENCE that the booker's .ics, the e-mail invitations and every calendar provider render from.
import { bookingUid, type IcsBooking } from "./ical/writer.js";
import { ROOT_PATHS } from "./rootPaths.js";

/*
 * Every copy of a booking's event carries the same UID, so a calendar that receives two of them (the host's
 * CalDAV calendar and the host's invitation e-mail; the booker's invitation and the .ics from the booking page)
 * holds one event, and shows whichever it read last. That is why they are made here, once: the title, location and
 * SEQUENCE are the same for every reader; only what is private to one reader differs (below, `EventReader`).
 */

/** The UID's domain: APP_URL's host name, without its port (the same in every copy, whichever port served it). */
export function appHostOf(appUrl: string): string {
  try {
    return new URL(appUrl).hostname || "localhost";
  } catch {
    return "localhost";
  }
}

/** Names and event titles are one line: a line break in one must not start a new line (or header) of its own. */
export function oneLine(value: string): string {
  return value.replace(/[\p{Cc}\u2028\u2029]+/gu, " ").trim();
}

/**
 * The words for a location, in one language: a page's or an e-mail's catalogue (each has these keys), with
 * `{host}`, `{attendee}` and `{phone}` to fill. `locationInPerson` and `locationNone` are optional: without them an
 * in-person meeting is its address alone, and no location has no words.
 */
export interface LocationWords {
  locationConference: string;
  locationCalendarMeet: string;
  locationAskInvitee: string;
  locationPhoneHostCalls: string;
  locationPhoneInviteeCalls: string;
  locationInPerson?: string;
  locationNone?: string;
}

/** The location as a visitor may see it (publicLocation's answer): its token and its one public detail. */
export interface PublicPlace {
  kind: string;
  details?: string | null | undefined;
}

function fillIn(template: string, params: Readonly<Record<string, string>>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => params[name] ?? whole);
}

/**
 * Where the meeting happens, in `words`: the one case analysis the pages, the e-mails and the calendar event share.
 * A booking that has a meeting link is a video conference, whatever its event says now; the invitee's own phone
 * number never appears (PublicPlace holds only the host's, when the invitee calls).
 */
export function locationWords(place: PublicPlace, meetingUrl: string | null | undefined, names: { host: string; attendee: string }, words: LocationWords): string | undefined {
  const params = { host: oneLine(names.host), attendee: oneLine(names.attendee) };
  if (meetingUrl) return words.locationConference;
  const details = place.details ? oneLine(place.details) : undefined;
  switch (place.kind) {
    case "conference":
      return words.locationConference;
    case "calendar_meet":
      return words.locationCalendarMeet;
    case "ask_invitee":
      return fillIn(words.locationAskInvitee, params);
    case "in_person":
      if (words.locationInPerson === undefined) return details;
      return details ? `${words.locationInPerson}: ${details}` : words.locationInPerson;
    case "phone_call":
      return details ? fillIn(words.locationPhoneInviteeCalls, { ...params, phone: details }) : fillIn(words.locationPhoneHostCalls, params);
    default:
      // no_location, or a name these words do not know: nothing is guessed.
      return words.locationNone;
  }
}

/** What the event of a booking is made from. */
export interface BookingFacts {
  bookingId: string;
  /** The host name of APP_URL (no port): the UID's domain, the same for every copy. */
  appHost: string;
  /**
   * The booking id the event was first written under, when a provider keeps that (a moved event keeps its UID:
   * Google refuses to change an iCalUID); else the booking's own.
   */
  uidBookingId?: string;
  /** Whether this copy shows the booking as holding its time (false: canceled, or moved away from this time). */
  confirmed: boolean;
  start: Date;
  end: Date;
  eventName: string;
  host: { name: string; email: string };
  /** A team booking's other hosts (teams.md): every copy lists them beside the booker. */
  cohosts?: readonly { name: string; email: string }[];
  attendee: { name: string; email: string };
  guests: readonly string[];
  place: PublicPlace;
  meetingUrl: string | null;
  /** The host's location words (their language): every copy says the same. */
  words: LocationWords;
  cancelReason?: string | null;
  /** `{APP_URL}/booking/<private_key>`: the booker's alone (it lets its holder cancel). */
  manageUrl?: string;
  /** The answers with their questions' titles, in the order given: the host's. */
  answers?: readonly { question: string; value: unknown }[];
  /** The host's own notes on the booking: the host's. */
  notes?: string | null;
}

/** The booker's page of a booking, `{APP_URL}/booking/<private_key>`: whoever holds it may cancel or move the booking. */
export function bookingPageUrl(appUrl: string, privateKey: string): string {
  return `${appUrl}/${ROOT_PATHS.booking}/${encodeURIComponent(privateKey)}`;
}

/** A booking with its event and host, whichever way it was read (as stored, or as the public booking RPCs show it). */
export interface BookingSource extends Pick<BookingFacts, "start" | "end" | "eventName" | "place" | "host" | "cohosts" | "attendee" | "guests" | "meetingUrl" | "answers" | "notes"> {
  id: string;
  /** As stored: confirmed, canceled, rescheduled, … */
  status: string;
  privateKey: string;
  /** The booking's cancel reason as stored, whatever its status. */
  cancelReason: string | null;
}

/**
 * The facts of a booking's event, made here once for every copy (the page's .ics and add-to-calendar links, the
 * e-mail invitations, the calendar write), so no copy can say otherwise: it holds its time while confirmed; only a
 * canceled booking has a cancel reason (a moved booking's old time has none of its own); the booker's page is its
 * manage link. `words` are the host's location words (their language); `uidBookingId` as in BookingFacts.
 */
export function bookingFacts(b: BookingSource, site: { appUrl: string; words: LocationWords; uidBookingId?: string }): BookingFacts {
  return {
    bookingId: b.id,
    appHost: appHostOf(site.appUrl),
    ...(site.uidBookingId !== undefined ? { uidBookingId: site.uidBookingId } : {}),
    confirmed: b.status === "confirmed",
    start: b.start,
    end: b.end,
    eventName: b.eventName,
    host: b.host,
    ...(b.cohosts !== undefined && b.cohosts.length > 0 ? { cohosts: b.cohosts } : {}),
    attendee: b.attendee,
    guests: b.guests,
    place: b.place,
    meetingUrl: b.meetingUrl,
    words: site.words,
    cancelReason: b.status === "canceled" ? b.cancelReason : null,
    manageUrl: bookingPageUrl(site.appUrl, b.privateKey),
    answers: b.answers ?? [],
    notes: b.notes ?? null,
  };
}

/** Whose copy: the booker's carries the manage link, the host's the answers and notes, the guests' neither. */
export type EventReader = "booker" | "guests" | "host";

/*
 * A booking holds its time once and gives it up at most once (a reschedule makes a new booking with its own UID),
 * so two SEQUENCE values are all its event ever needs: 0 while it holds the time, 1 once it does not. A CANCEL is then
 * always newer than the REQUEST it ends (RFC 5546 3.2.5), and every copy of one state carries the same number, so no
 * copy reads as out of date beside another.
 */
const HELD_SEQUENCE = 0;
const ENDED_SEQUENCE = 1;

function answerText(value: unknown): string {
  if (Array.isArray(value)) return value.map(answerText).join(", ");
  return value === null || value === undefined ? "" : typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** DESCRIPTION: the booker's manage link; the host's answers, guests and notes (integrations.md); nothing for guests. */
function descriptionFor(b: BookingFacts, reader: EventReader): string {
  if (reader === "booker") return b.manageUrl ?? "";
  if (reader === "guests") return "";
  const lines = (b.answers ?? []).map((a) => `${oneLine(a.question)}: ${answerText(a.value)}`);
  if (b.guests.length > 0) lines.push(`Guests: ${b.guests.join(", ")}`);
  if (b.notes) lines.push(`Notes: ${b.notes}`);
  return lines.join("\n");
}

/** SUMMARY: the event and both people, in no language's words, so the host's calendar and the booker's read alike. */
export function eventTitle(eventName: string, hostName: string, attendeeName: string): string {
  const event = oneLine(eventName);
  const people = `${oneLine(hostName)}, ${oneLine(attendeeName)}`;
  return event === "" ? people : `${event} (${people})`;
}

/** The booking as `reader`'s copy of its calendar event. */
export function bookingAsEvent(b: BookingFacts, reader: EventReader): IcsBooking {
  const url = reader === "booker" ? b.manageUrl : (b.meetingUrl ?? undefined);
  return {
    uid: bookingUid(b.uidBookingId ?? b.bookingId, b.appHost),
    sequence: b.confirmed ? HELD_SEQUENCE : ENDED_SEQUENCE,
    start: b.start,
    end: b.end,
    summary: eventTitle(b.eventName, b.host.name, b.attendee.name),
    description: descriptionFor(b, reader),
    // A video meeting's place is its link; else the words, in the host's language.
    location: b.meetingUrl ?? locationWords(b.place, null, { host: b.host.name, attendee: b.attendee.name }, b.words) ?? null,
    organizer: { name: oneLine(b.host.name), email: b.host.email },
    attendees: [
      { name: oneLine(b.attendee.name), email: b.attendee.email },
      ...(b.cohosts ?? []).map((h) => ({ name: oneLine(h.name), email: h.email, cohost: true })),
      ...b.guests.map((email) => ({ email })),
    ],
    status: b.confirmed ? "CONFIRMED" : "CANCELLED",
    ...(url ? { url } : {}),
    ...(!b.confirmed && b.cancelReason ? { comment: b.cancelReason } : {}),
  };
}

/**
 * A seated slot as the host's one calendar event (booking-kinds.md "Seats"): made from its confirmed seats (in
 * booking order, at least one), under the slot's own UID, so seats taken and freed change its attendees, never
 * the event. The title names the event and the host (the attendees are many, and change); the place and
 * meeting link are the slot's, which its seats share.
 */
export function seatedSlotAsEvent(seats: readonly BookingFacts[], slotId: string): IcsBooking {
  const first = seats[0];
  const seen = new Set<string>();
  const attendees: IcsBooking["attendees"] = [];
  for (const s of seats) {
    for (const a of [{ name: oneLine(s.attendee.name), email: s.attendee.email }, ...s.guests.map((email) => ({ email }))]) {
      if (seen.has(a.email.toLowerCase())) continue;
      seen.add(a.email.toLowerCase());
      attendees.push(a);
    }
  }
  // A collective slot's other hosts (teams.md: each host's copy lists the others), as a collective booking lists them.
  for (const h of first.cohosts ?? []) if (!seen.has(h.email.toLowerCase())) attendees.push({ name: oneLine(h.name), email: h.email, cohost: true });
  const event = oneLine(first.eventName);
  const host = oneLine(first.host.name);
  return {
    ...bookingAsEvent({ ...first, uidBookingId: slotId, confirmed: true, guests: [], answers: [], notes: null }, "host"),
    summary: event === "" ? host : `${event} (${host})`,
    // The attendees are the seats: nothing of one seat's own (answers, notes) is the slot's.
    description: "",
    attendees,
  };
}
