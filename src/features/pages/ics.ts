// The booker's calendar file (GET /booking/<key>/invite.ics): the booking as the e-mails' iCalendar invitation.
import type { PublicBooking } from "../../../gen/scheduling/v1/public_booking_pb.js";
import { calendarPlace, calendarTitle } from "../../domain/calendarLinks.js";
import { bookingUid, invitation, type IcsBooking } from "../../domain/ical/writer.js";

/**
 * A confirmed booking is a REQUEST, as the confirmation e-mail attaches it; a canceled or moved one a CANCEL, so
 * opening the file of an old time takes it off the calendar. SEQUENCE: 0 while confirmed, 1 once it ended, as a
 * booking changes state once (a reschedule is a new booking with its own UID).
 */
export function icsOfBooking(b: PublicBooking, appHost: string): string {
  const confirmed = b.status === "confirmed";
  // The meeting URL is where a video meeting happens; an in-person location_name is its address.
  const location = calendarPlace(b.meetingUrl, b.locationKind, b.locationName) || null;
  const ics: IcsBooking = {
    uid: bookingUid(b.id, appHost),
    sequence: confirmed ? 0 : 1,
    start: new Date(b.startTime),
    end: new Date(b.endTime),
    summary: calendarTitle(b.eventName, b.hostFullName),
    description: b.meetingUrl ? b.meetingUrl : "",
    location,
    organizer: { name: b.hostFullName, email: b.hostEmail },
    attendees: [{ name: b.attendeeName, email: b.attendeeEmail }, ...b.guestEmails.map((email) => ({ email }))],
    status: confirmed ? "CONFIRMED" : "CANCELLED",
    url: b.meetingUrl,
  };
  return invitation(ics, confirmed ? "REQUEST" : "CANCEL");
}
