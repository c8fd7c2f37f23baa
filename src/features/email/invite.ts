// The iCalendar parts of the booking e-mails (pure): which invitations a mail carries, for which booking, with which METHOD and SEQUENCE.
import { bookingUid, invitation, type IcsBooking } from "../../domain/ical/writer.js";
import type { MailChange } from "./render.js";
import type { CalendarPart } from "./smtp.js";

/** One booking as the invitations describe it. */
export interface InviteBooking {
  id: string;
  start: Date;
  end: Date;
}

export interface InviteContext {
  /** The host of APP_URL: the UID's domain, the same the calendar writer uses, so both name one event. */
  appHost: string;
  summary: string;
  description: string;
  location: string | null;
  organizer: { name: string; email: string };
  attendees: { name?: string; email: string }[];
  url?: string;
  /** Why the booking was canceled: the COMMENT of its CANCEL (spec: "METHOD:CANCEL, with the reason"). */
  cancelReason?: string;
}

/*
 * UID is the booking's (bookingUid), so it is stable for the booking's whole life. A booking is confirmed once
 * and canceled or rescheduled away at most once (a reschedule makes a new booking with its own UID), so two
 * SEQUENCE values are all it ever needs: 0 for the REQUEST that confirms it, 1 for the CANCEL that ends it,
 * which calendar clients then take as newer than what they hold (RFC 5546 3.2.5).
 */
const REQUEST_SEQUENCE = 0;
const CANCEL_SEQUENCE = 1;

function part(b: InviteBooking, ctx: InviteContext, method: "REQUEST" | "CANCEL", filename: string): CalendarPart {
  const ics: IcsBooking = {
    uid: bookingUid(b.id, ctx.appHost),
    sequence: method === "REQUEST" ? REQUEST_SEQUENCE : CANCEL_SEQUENCE,
    start: b.start,
    end: b.end,
    summary: ctx.summary,
    description: ctx.description,
    location: ctx.location,
    organizer: ctx.organizer,
    attendees: ctx.attendees,
    status: method === "REQUEST" ? "CONFIRMED" : "CANCELLED",
    ...(ctx.url !== undefined ? { url: ctx.url } : {}),
    ...(method === "CANCEL" && ctx.cancelReason !== undefined ? { comment: ctx.cancelReason } : {}),
  };
  return { filename, content: invitation(ics, method), method };
}

/**
 * The invitations of one mail: created REQUEST; canceled CANCEL; rescheduled CANCEL of the old booking's time
 * (cancel.ics) and REQUEST of the new one (invite.ics), in that order so a client that reads both in turn ends
 * with the new time.
 */
export function invitationsFor(change: MailChange, booking: InviteBooking, previous: InviteBooking | undefined, ctx: InviteContext): CalendarPart[] {
  switch (change.type) {
    case "created":
      return [part(booking, ctx, "REQUEST", "invite.ics")];
    case "canceled":
      return [part(booking, ctx, "CANCEL", "invite.ics")];
    case "rescheduled": {
      // The old time's CANCEL is no cancellation with a reason of its own.
      const moved = { ...ctx, cancelReason: undefined };
      return [...(previous ? [part(previous, moved, "CANCEL", "cancel.ics")] : []), part(booking, ctx, "REQUEST", "invite.ics")];
    }
  }
}
