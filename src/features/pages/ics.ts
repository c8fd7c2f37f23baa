// The booker's calendar file (GET /booking/<key>/invite.ics): the booker's copy of the booking's event, as their invitation e-mail carries it.
import type { PublicBooking } from "../../../gen/scheduling/v1/public_booking_pb.js";
import { bookingAsEvent, bookingFacts, bookingPageUrl } from "../../domain/bookingEvent.js";
import { invitation, type IcsBooking } from "../../domain/ical/writer.js";
import { eventWords } from "../../i18n/index.js";

/** The booker's page of a booking: what its calendar copies lead back to. */
export function manageUrlOf(b: PublicBooking, appUrl: string): string {
  return bookingPageUrl(appUrl, b.privateKey);
}

/** The booker's copy of the booking's event: the .ics file and the add-to-calendar links are made from it. */
export function bookerCopy(b: PublicBooking, appUrl: string): IcsBooking {
  const facts = bookingFacts(
    {
      id: b.id,
      status: b.status,
      start: new Date(b.startTime),
      end: new Date(b.endTime),
      privateKey: b.privateKey,
      eventName: b.eventName,
      place: { kind: b.locationKind, details: b.locationDetails },
      host: { name: b.hostFullName, email: b.hostEmail },
      attendee: { name: b.attendeeName, email: b.attendeeEmail },
      guests: b.guestEmails,
      meetingUrl: b.meetingUrl ?? null,
      cancelReason: b.cancelReason ?? null,
    },
    { appUrl, words: eventWords(b.hostLocale) },
  );
  return bookingAsEvent(facts, "booker");
}

/**
 * A confirmed booking is a REQUEST, as the confirmation e-mail attaches it; a canceled or moved one a CANCEL, so
 * opening the file of an old time takes it off the calendar.
 */
export function icsOfBooking(b: PublicBooking, appUrl: string): string {
  return invitation(bookerCopy(b, appUrl), b.status === "confirmed" ? "REQUEST" : "CANCEL");
}
