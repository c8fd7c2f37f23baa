// A stored booking's calendar-event facts (domain/bookingEvent.ts bookingFacts), for the effects that write its event: the e-mail invitations and the host's calendar.
import type { BookingDoc } from "../../db/models/booking.js";
import type { UserDoc } from "../../db/models/user.js";
import { bookingFacts, type BookingFacts } from "../../domain/bookingEvent.js";
import { publicLocation } from "../../domain/event.js";
import { eventWords } from "../../i18n/index.js";

/**
 * The facts of `booking`'s event with its event and host as they are now (null when deleted: a deleted event or
 * host still names its bookings), in the host's location words; `uidBookingId` as in BookingFacts.
 */
export function storedBookingFacts(o: {
  booking: BookingDoc;
  event: { name: string; location: Parameters<typeof publicLocation>[0] } | null;
  host: Pick<UserDoc, "full_name" | "email" | "locale"> | null;
  /** A team booking's other hosts, listed beside the booker (teams.md). */
  cohosts?: readonly Pick<UserDoc, "full_name" | "email">[];
  answers: readonly { question: string; value: unknown }[];
  appUrl: string;
  uidBookingId?: string;
}): BookingFacts {
  const { booking: b, event, host } = o;
  return bookingFacts(
    {
      id: b._id.toHexString(),
      status: b.status,
      start: b.start_time,
      end: b.end_time,
      privateKey: b.private_key,
      eventName: event?.name ?? "",
      place: publicLocation(event?.location ?? { name: "no_location" }),
      host: { name: host?.full_name ?? "", email: host?.email ?? "" },
      cohosts: (o.cohosts ?? []).map((h) => ({ name: h.full_name, email: h.email })),
      attendee: { name: b.attendee_name, email: b.attendee_email },
      guests: b.guest_emails,
      meetingUrl: b.meeting_url ?? null,
      cancelReason: b.cancel_reason,
      answers: o.answers,
      notes: b.internal_notes,
    },
    { appUrl: o.appUrl, words: eventWords(host?.locale), ...(o.uidBookingId !== undefined ? { uidBookingId: o.uidBookingId } : {}) },
  );
}
