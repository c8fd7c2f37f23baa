// "Add to calendar" links of a booking for the calendars that take an event by link (Google Calendar, Outlook on the web); Apple's and others' take the .ics file.
import { eventTitle } from "./bookingEvent.js";
import type { IcsBooking } from "./ical/writer.js";

/** A booking as a calendar entry: the same title, place and words the .ics file and the invitations carry. */
export interface CalendarEntry {
  title: string;
  start: Date;
  end: Date;
  /** Plain text: the meeting link and the booker's manage link. */
  details: string;
  /** Where: the meeting URL or the location's words; "" for none. */
  location: string;
}

/**
 * The booker's copy of the booking's event (bookingAsEvent) as a calendar entry: the same title and place as the
 * .ics file and the invitations; in its notes the meeting link and the booker's manage link.
 */
export function calendarEntryOf(copy: IcsBooking, meetingUrl: string | null | undefined, manageUrl: string): CalendarEntry {
  return { title: copy.summary, start: copy.start, end: copy.end, details: [meetingUrl, manageUrl].filter((x) => x).join("\n"), location: copy.location ?? "" };
}

/**
 * The entry as the confirmation script makes it from the booking's JSON: the model's title; the place the meeting
 * link, else the API's location_name (the script carries no catalogue of the host's words, so a phone call or
 * "ask invitee" location reads in the API's short English words there, where the .ics has the host's language).
 */
export function bookingCalendarEntry(b: {
  eventName: string;
  hostName: string;
  attendeeName: string;
  start: Date;
  end: Date;
  meetingUrl: string | null | undefined;
  locationKind: string;
  locationName: string;
  manageUrl: string;
}): CalendarEntry {
  return {
    title: eventTitle(b.eventName, b.hostName, b.attendeeName),
    start: b.start,
    end: b.end,
    details: [b.meetingUrl, b.manageUrl].filter((x) => x).join("\n"),
    location: b.meetingUrl ? b.meetingUrl : b.locationKind === "no_location" ? "" : b.locationName,
  };
}

/** 20260706T133000Z: Google's form of an instant (UTC, no separators). */
function googleInstant(at: Date): string {
  return at.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
}

/** Google Calendar's event template link (calendar.google.com/calendar/render?action=TEMPLATE): opens the event to save. */
export function googleCalendarUrl(e: CalendarEntry): string {
  const q = new URLSearchParams({ action: "TEMPLATE", text: e.title, dates: `${googleInstant(e.start)}/${googleInstant(e.end)}`, details: e.details });
  if (e.location !== "") q.set("location", e.location);
  return `https://calendar.google.com/calendar/render?${q}`;
}

/** Outlook on the web's compose link (personal accounts; work accounts are sent on by Microsoft's sign-in): the event to save. */
export function outlookCalendarUrl(e: CalendarEntry): string {
  const q = new URLSearchParams({
    path: "/calendar/action/compose",
    rru: "addevent",
    subject: e.title,
    startdt: e.start.toISOString(),
    enddt: e.end.toISOString(),
    body: e.details,
  });
  if (e.location !== "") q.set("location", e.location);
  return `https://outlook.live.com/calendar/0/deeplink/compose?${q}`;
}
