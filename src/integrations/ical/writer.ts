// Stand-in for the iCalendar writer of branch `ical` (PLAN.md contract 2), for the booker's invite.ics until that branch is merged; its version replaces this file.
import ical, { ICalAttendeeRole, ICalAttendeeStatus, ICalCalendarMethod, ICalEventStatus } from "ical-generator";

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

/** An iTIP message (RFC 5546) of one booking: REQUEST to add or update it, CANCEL to take it off a calendar. */
export function invitation(b: IcsBooking, method: "REQUEST" | "CANCEL"): string {
  const calendar = ical({ prodId: { company: "scheduling", product: "bookings", language: "EN" }, method: method === "REQUEST" ? ICalCalendarMethod.REQUEST : ICalCalendarMethod.CANCEL });
  calendar.createEvent({
    id: b.uid,
    sequence: b.sequence,
    start: b.start,
    end: b.end,
    stamp: new Date(),
    summary: b.summary,
    description: b.description,
    location: b.location ?? undefined,
    organizer: { name: b.organizer.name, email: b.organizer.email },
    attendees: b.attendees.map((a) => ({ name: a.name, email: a.email, role: ICalAttendeeRole.REQ, status: ICalAttendeeStatus.NEEDSACTION })),
    status: b.status === "CONFIRMED" ? ICalEventStatus.CONFIRMED : ICalEventStatus.CANCELLED,
    url: b.url,
  });
  return calendar.toString();
}

/** The UID of a booking's calendar event: stable for the booking, unique to this service. */
export function bookingUid(bookingId: string, appHost: string): string {
  return `${bookingId}@${appHost}`;
}
