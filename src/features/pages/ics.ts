// The booker's calendar file (GET /booking/<key>/invite.ics): the booker's copy of the booking's event, as their invitation e-mail carries it.
import type { PublicBooking } from "../../../gen/scheduling/v1/public_booking_pb.js";
import { appHostOf, bookingAsEvent } from "../../domain/bookingEvent.js";
import { invitation, type IcsBooking } from "../../domain/ical/writer.js";
import { ROOT_PATHS } from "../../domain/user.js";
import { eventWords } from "../../i18n/index.js";

/** The booker's page of a booking: what its calendar copies lead back to. */
export function manageUrlOf(b: PublicBooking, appUrl: string): string {
  return `${appUrl}/${ROOT_PATHS.booking}/${encodeURIComponent(b.privateKey)}`;
}

/** The booker's copy of the booking's event: the .ics file and the add-to-calendar links are made from it. */
export function bookerCopy(b: PublicBooking, appUrl: string): IcsBooking {
  return bookingAsEvent(
    {
      bookingId: b.id,
      appHost: appHostOf(appUrl),
      confirmed: b.status === "confirmed",
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
      manageUrl: manageUrlOf(b, appUrl),
    },
    "booker",
  );
}

/**
 * A confirmed booking is a REQUEST, as the confirmation e-mail attaches it; a canceled or moved one a CANCEL, so
 * opening the file of an old time takes it off the calendar.
 */
export function icsOfBooking(b: PublicBooking, appUrl: string): string {
  return invitation(bookerCopy(b, appUrl), b.status === "confirmed" ? "REQUEST" : "CANCEL");
}
