// The `email` effect kind: one message per recipient group (booker, guests, host) per booking change, rendered and sent over SMTP.
import type { BookingDoc } from "../../db/models/booking.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { appHostOf, oneLine } from "../../domain/bookingEvent.js";
import { publicLocation } from "../../domain/event.js";
import { ROOT_PATHS } from "../../domain/user.js";
import { ianaForServiceZone } from "../../domain/timezones.js";
import { eventWords } from "../../i18n/index.js";
import { logEvent as log } from "../../platform/log.js";
import { invitationsFor, type InviteFacts } from "./invite.js";
import { renderMail, type Audience, type MailBooking, type MailChange, type RenderedMail } from "./render.js";
import { mailSender, type Address, type MailSender, type OutgoingMail } from "./smtp.js";
import type { BookingChange, EffectKind, EffectRecord, PlannedEffect, RunResult } from "../../outbox/types.js";
import { answersWithQuestions, bookingById } from "../bookings/index.js";
import type { Recipient, ReminderFields } from "../../domain/reminder.js";
import { renderReminderMail } from "./reminder.js";

export interface MailSetup {
  sender: MailSender;
  /** MAIL_FROM, or undefined for `Scheduling <no-reply@HOST of APP_URL>` (APP_URL may only be known once listening). */
  from: Address | undefined;
}

const AUDIENCES: readonly Audience[] = ["booker", "guests", "host"];

/** What `run` needs beyond the booking: frozen when the change is planned. */
interface EmailPayload {
  type: BookingChange["type"];
  audience: Audience;
  canceledBy?: "host" | "booker";
  previousBookingId?: string;
}

function readPayload(p: Record<string, unknown>): EmailPayload | undefined {
  const type = p.type;
  const audience = p.audience;
  if (type !== "created" && type !== "rescheduled" && type !== "canceled") return undefined;
  if (typeof audience !== "string" || !(AUDIENCES as readonly string[]).includes(audience)) return undefined;
  return {
    type,
    audience: audience as Audience,
    ...(p.canceledBy === "host" || p.canceledBy === "booker" ? { canceledBy: p.canceledBy } : {}),
    ...(typeof p.previousBookingId === "string" ? { previousBookingId: p.previousBookingId } : {}),
  };
}


function changeOf(p: EmailPayload, previous: BookingDoc | null): MailChange {
  switch (p.type) {
    case "created":
      return { type: "created" };
    case "rescheduled":
      // The old booking is never deleted; should it be gone all the same, the mail says "moved" without the old time.
      return previous ? { type: "rescheduled", previous: { start: previous.start_time, end: previous.end_time } } : { type: "created" };
    case "canceled":
      return { type: "canceled", canceledBy: p.canceledBy ?? "booker" };
  }
}

function mailBooking(b: BookingDoc, event: Pick<EventDoc, "name" | "location"> | null, host: UserDoc, answers: MailBooking["answers"], appUrl: string): MailBooking {
  return {
    eventName: event?.name ?? "",
    host: { name: host.full_name, locale: host.locale, zone: ianaForServiceZone(host.timezone), dateFormat: host.date_format, timeFormat: host.time_format },
    attendee: { name: b.attendee_name, email: b.attendee_email, zone: b.timezone, locale: b.locale ?? null },
    guests: b.guest_emails,
    start: b.start_time,
    end: b.end_time,
    location: event?.location ?? { name: "no_location" },
    meetingUrl: b.meeting_url ?? null,
    meetingLinkMissing: !b.meeting_url && (b.meeting_status === "pending" || b.meeting_status === "failed"),
    answers,
    cancelReason: b.cancel_reason,
    manageUrl: `${appUrl}/${ROOT_PATHS.booking}/${b.private_key}`,
  };
}

function recipients(audience: Audience, b: BookingDoc, host: UserDoc): { to: Address[]; replyTo: Address | undefined } {
  const hostAddress = { name: oneLine(host.full_name), address: host.email };
  const booker = { name: oneLine(b.attendee_name), address: b.attendee_email };
  switch (audience) {
    case "booker":
      return { to: [booker], replyTo: hostAddress };
    case "guests":
      return { to: b.guest_emails.map((address) => ({ name: "", address })), replyTo: hostAddress };
    case "host":
      return { to: [hostAddress], replyTo: booker };
  }
}

/** How often a message waiting for its meeting link looks again. */
const MEETING_POLL_MS = 1000;

/** The booking as its mails show it, with its host and event as they are now; null when the host is gone (no one to write for). */
export async function mailContextOf(booking: BookingDoc, withAnswers: boolean, appUrl: string): Promise<MailContext | null> {
  // _id indexes. A deleted event still names its bookings.
  const [host, event, answers] = await Promise.all([
    UserModel.findById(booking.user_id).lean<UserDoc>(),
    EventModel.findById(booking.event_id, { name: 1, location: 1 }).lean<Pick<EventDoc, "name" | "location">>(),
    withAnswers ? answersWithQuestions(booking) : Promise.resolve([]),
  ]);
  return host ? { host, answers, data: mailBooking(booking, event, host, answers, appUrl) } : null;
}

interface MailContext {
  host: UserDoc;
  answers: Awaited<ReturnType<typeof answersWithQuestions>>;
  data: MailBooking;
}

/** What the calendar invitation of `doc` says (`booking` is the one the mail is about: a reschedule's old time is `doc`). */
function inviteFacts(doc: BookingDoc, booking: BookingDoc, c: MailContext, appHost: string): InviteFacts {
  const { host, data, answers } = c;
  return {
    bookingId: doc._id.toHexString(),
    appHost,
    start: doc.start_time,
    end: doc.end_time,
    eventName: data.eventName,
    host: { name: host.full_name, email: host.email },
    attendee: { name: booking.attendee_name, email: booking.attendee_email },
    guests: booking.guest_emails,
    place: publicLocation(data.location),
    meetingUrl: data.meetingUrl,
    words: eventWords(host.locale),
    cancelReason: data.cancelReason,
    manageUrl: data.manageUrl,
    answers,
    notes: booking.internal_notes,
  };
}

/**
 * Builds the message of one e-mail effect from the booking as it is now; a RunResult when it cannot be built, or
 * cannot be built yet: while a provider makes the meeting link, the message waits for it (up to MEETING_WAIT_SECONDS
 * from when it was planned), then goes without it, saying the host will send it.
 */
async function composeMail(effect: EffectRecord, p: EmailPayload, from: Address | undefined, appUrl: string, meetingWaitMs: number): Promise<OutgoingMail | RunResult> {
  const booking = await bookingById(effect.bookingId ?? undefined);
  if (!booking) return { ok: false, error: "booking not found", permanent: true };
  if (booking.meeting_status === "pending" && p.type !== "canceled" && Date.now() - effect.createdAt.getTime() < meetingWaitMs) {
    return { ok: "later", until: new Date(Date.now() + MEETING_POLL_MS), reason: "waiting for the meeting link" };
  }
  const [context, previous] = await Promise.all([
    mailContextOf(booking, p.audience === "host", appUrl),
    p.type === "rescheduled" ? bookingById(p.previousBookingId) : Promise.resolve(null),
  ]);
  if (!context) return { ok: false, error: "host not found", permanent: true };
  const { to, replyTo } = recipients(p.audience, booking, context.host);
  if (to.length === 0) return { ok: true };

  const appHost = appHostOf(appUrl);
  const change = changeOf(p, previous);
  const rendered = renderMail(p.audience, change, context.data);
  const calendars = invitationsFor(change, inviteFacts(booking, booking, context, appHost), previous ? inviteFacts(previous, booking, context, appHost) : undefined, p.audience);
  return outgoing(effect.id, { from, appUrl, appHost }, { to, replyTo }, rendered, calendars);
}

/**
 * A rendered mail as handed to the sender. The id is the effect's, the same on every attempt: a retry after an
 * unknown outcome repeats the Message-ID.
 */
function outgoing(
  id: string,
  site: { from: Address | undefined; appUrl: string; appHost: string },
  to: { to: Address[]; replyTo: Address | undefined },
  rendered: RenderedMail,
  calendars: OutgoingMail["calendars"],
): OutgoingMail {
  const { subject, text, html, locale: language } = rendered;
  return { messageId: `${id}@${site.appHost}`, from: mailSender(site.from, site.appUrl), ...to, subject, text, html, language, calendars };
}

/**
 * One reminder's mail to one reader (`messageId` the effect's id, the same on every retry): the reminder's words
 * for the booking as it is now, and the booking's invitation as its confirmation carried it (same UID and
 * SEQUENCE: a reminder is no update). The booker's carries the one-click unsubscribe (RFC 8058). Null when the host
 * is gone.
 */
export async function composeReminderMail(o: {
  messageId: string;
  booking: BookingDoc;
  reader: Recipient;
  reminder: Pick<ReminderFields, "timing" | "subject" | "body">;
  from: Address | undefined;
  appUrl: string;
  unsubscribeUrl: string | undefined;
}): Promise<OutgoingMail | null> {
  const context = await mailContextOf(o.booking, o.reader === "host", o.appUrl);
  if (!context) return null;
  const appHost = appHostOf(o.appUrl);
  const rendered = renderReminderMail(o.reader, context.data, o.reminder, o.unsubscribeUrl);
  const calendars = invitationsFor({ type: "created" }, inviteFacts(o.booking, o.booking, context, appHost), undefined, o.reader);
  return {
    ...outgoing(o.messageId, { from: o.from, appUrl: o.appUrl, appHost }, recipients(o.reader, o.booking, context.host), rendered, calendars),
    ...(o.unsubscribeUrl !== undefined ? { unsubscribeUrl: o.unsubscribeUrl } : {}),
  };
}

/**
 * Sends one e-mail of an effect and logs the outcome under `fields`. Who and what stay out of the log (addresses
 * are personal data): the effect id finds the booking or the connection.
 */
export async function sendLogged(setup: MailSetup, mail: OutgoingMail, fields: Record<string, unknown>, signal: AbortSignal): Promise<RunResult> {
  const outcome = await setup.sender.send(mail, signal);
  if (outcome.ok) {
    log("info", "e-mail sent", { ...fields, outcome: "sent" });
    return { ok: true };
  }
  if (!signal.aborted) log("warn", "e-mail not sent", { ...fields, outcome: outcome.permanent ? "refused" : "failed", error: outcome.error });
  return { ok: false, error: outcome.error, permanent: outcome.permanent };
}

/**
 * The e-mail effect kind. Without a mail setup (SMTP_URL unset) booking changes plan no e-mail at all; the app URL
 * is read when a mail is made (APP_URL may only be known once listening).
 */
export function createEmailKind(deps: { mail: MailSetup | undefined; appUrl(): string; meetingWaitMs: number }): EffectKind {
  const setup = deps.mail;
  return {
    name: "email",

    async plan(change: BookingChange): Promise<PlannedEffect[]> {
      if (!setup) return [];
      const booking = await bookingById(change.bookingId);
      if (!booking) return [];
      // Guests get a message of their own only when there are any; booker and host always, unless the booker
      // limits withheld the booker's or the guests' message when the change was made (recorded with it).
      const withheld = change.withheld ?? [];
      const audiences = AUDIENCES.filter((a) => (a !== "guests" || booking.guest_emails.length > 0) && !(withheld as readonly string[]).includes(a));
      return audiences.map((audience) => {
        const payload: EmailPayload = {
          type: change.type,
          audience,
          ...(change.canceledBy !== undefined ? { canceledBy: change.canceledBy } : {}),
          ...(change.previousBookingId !== undefined ? { previousBookingId: change.previousBookingId } : {}),
        };
        return { key: audience, payload: { ...payload } };
      });
    },

    async run(effect: EffectRecord, signal: AbortSignal): Promise<RunResult> {
      const payload = readPayload(effect.payload);
      if (!payload) return { ok: false, error: "unreadable e-mail payload", permanent: true };
      if (!setup) return { ok: false, error: "SMTP_URL is not set" };
      const mail = await composeMail(effect, payload, setup.from, deps.appUrl(), deps.meetingWaitMs);
      if (!("messageId" in mail)) return mail;
      return sendLogged(setup, mail, { effect_id: effect.id, kind: "email", audience: payload.audience, change: payload.type, attempt: effect.attempts }, signal);
    },
  };
}
