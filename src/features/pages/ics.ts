// The booker's calendar file (GET /booking/<key>/invite.ics): the booker's copy of the booking's event, as their invitation e-mail carries it.
import type { PublicBooking } from "../../../gen/scheduling/v1/public_booking_pb.js";
import { appHostOf, bookingAsEvent } from "../../domain/bookingEvent.js";
import { invitation } from "../../domain/ical/writer.js";
import { ROOT_PATHS } from "../../domain/user.js";
import { eventWords } from "../../i18n/index.js";

/**
 * A confirmed booking is a REQUEST, as the confirmation e-mail attaches it; a canceled or moved one a CANCEL, so
 * opening the file of an old time takes it off the calendar. Its description and URL are this booking's page.
 */
export function icsOfBooking(b: PublicBooking, appUrl: string): string {
  const confirmed = b.status === "confirmed";
  const ics = bookingAsEvent(
    {
      bookingId: b.id,
      appHost: appHostOf(appUrl),
      confirmed,
      start: new Date(b.startTime),
      end: new Date(b.endTime),
      eventName: b.eventName,
      host: { name: b.hostFullName, email: b.hostEmail },
      attendee: { name: b.attendeeName, email: b.attendeeEmail },
      guests: b.guestEmails,
      place: { kind: b.locationKind, details: b.locationDetails },
      meetingUrl: b.meetingUrl ?? null,
      words: eventWords(b.hostLocale),
      // A moved booking's old time is no cancellation with a reason of its own.
      cancelReason: b.status === "canceled" ? (b.cancelReason ?? null) : null,
      manageUrl: `${appUrl}/${ROOT_PATHS.booking}/${b.privateKey}`,
    },
    "booker",
  );
  return invitation(ics, confirmed ? "REQUEST" : "CANCEL");
}
