// Stand-in for helper D's iCalendar writer (PLAN.md contract 2: invitation, bookingUid), so e-mail runs until the ical branch lands; at merge D's file replaces this one.
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

export function invitation(b: IcsBooking, method: "REQUEST" | "CANCEL"): string {
  const cal = ical({ prodId: { company: "scheduling", product: "scheduling" }, method: method === "REQUEST" ? ICalCalendarMethod.REQUEST : ICalCalendarMethod.CANCEL });
  cal.createEvent({
    id: b.uid,
    sequence: b.sequence,
    start: b.start,
    end: b.end,
    summary: b.summary,
    description: b.description,
    location: b.location,
    organizer: b.organizer,
    attendees: b.attendees.map((a) => ({ name: a.name, email: a.email, role: ICalAttendeeRole.REQ, status: ICalAttendeeStatus.NEEDSACTION, rsvp: true })),
    status: b.status === "CONFIRMED" ? ICalEventStatus.CONFIRMED : ICalEventStatus.CANCELLED,
    url: b.url,
  });
  return cal.toString();
}

export function bookingUid(bookingId: string, appHost: string): string {
  return `${bookingId}@${appHost}`;
}
