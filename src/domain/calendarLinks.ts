// "Add to calendar" links of a booking for the calendars that take an event by link (Google Calendar, Outlook on the web); Apple's and others' take the .ics file.

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

/** The title a booking has in the booker's calendar: the event and its host, as the .ics SUMMARY writes it. */
export function calendarTitle(eventName: string, hostName: string): string {
  return `${eventName} (${hostName})`;
}

/**
 * Where a booking happens in a calendar entry: its meeting's address, else the location's words (locationName of
 * the public booking), else nothing when the event names no location.
 */
export function calendarPlace(meetingUrl: string | null | undefined, locationKind: string, locationName: string): string {
  if (meetingUrl) return meetingUrl;
  return locationKind === "no_location" ? "" : locationName;
}

/** A booking as its calendar entry: the meeting link and the booker's manage link in its notes. */
export function bookingCalendarEntry(b: {
  eventName: string;
  hostName: string;
  start: Date;
  end: Date;
  meetingUrl: string | null | undefined;
  locationKind: string;
  locationName: string;
  manageUrl: string;
}): CalendarEntry {
  return {
    title: calendarTitle(b.eventName, b.hostName),
    start: b.start,
    end: b.end,
    details: [b.meetingUrl, b.manageUrl].filter((x) => x).join("\n"),
    location: calendarPlace(b.meetingUrl, b.locationKind, b.locationName),
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
