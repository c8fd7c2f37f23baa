// The iCalendar parts of the booking e-mails (pure): which invitations a mail carries, for which booking, with which METHOD.
import { bookingAsEvent, type BookingFacts, type EventReader } from "../../domain/bookingEvent.js";
import { invitation } from "../../domain/ical/writer.js";
import type { MailChange } from "./render.js";
import type { CalendarPart } from "./smtp.js";

/** A booking as the invitations describe it, whether it holds its time aside (the part's METHOD says that). */
export type InviteFacts = Omit<BookingFacts, "confirmed">;

function part(b: InviteFacts, reader: EventReader, method: "REQUEST" | "CANCEL", filename: string): CalendarPart {
  return { filename, content: invitation(bookingAsEvent({ ...b, confirmed: method === "REQUEST" }, reader), method), method };
}

/**
 * The invitations of one mail: created REQUEST; canceled CANCEL; reassigned REQUEST (the old host's: CANCEL); rescheduled CANCEL of the old booking's time
 * (cancel.ics) and REQUEST of the new one (invite.ics), in that order so a client that reads both in turn ends
 * with the new time. A request and its end carry none: nothing is in a calendar until the host confirms.
 */
export function invitationsFor(change: MailChange, booking: InviteFacts, previous: InviteFacts | undefined, reader: EventReader): CalendarPart[] {
  switch (change.type) {
    case "created":
      return [part(booking, reader, "REQUEST", "invite.ics")];
    case "canceled":
      return [part(booking, reader, "CANCEL", "invite.ics")];
    case "reassigned":
      // The host it was taken from: off their calendar; everyone else: the same event, with its new host.
      return [part({ ...booking, cancelReason: null }, reader, change.away ? "CANCEL" : "REQUEST", "invite.ics")];
    case "rescheduled": {
      // The old time's CANCEL is no cancellation with a reason of its own.
      return [...(previous ? [part({ ...previous, cancelReason: null }, reader, "CANCEL", "cancel.ics")] : []), part(booking, reader, "REQUEST", "invite.ics")];
    }
    case "requested":
    case "declined":
      return [];
  }
}
