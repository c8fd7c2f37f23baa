// The `email` effect kind: one message per recipient group (booker, guests, host) per booking change, rendered and sent over SMTP.
import type { Clock } from "../../domain/clock.js";
import type { BookingDoc } from "../../db/models/booking.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { answerPath, answerToken } from "../../domain/answerLink.js";
import { appHostOf, bookingPageUrl, oneLine } from "../../domain/bookingEvent.js";
import { ianaForServiceZone } from "../../domain/timezones.js";
import { logEvent as log } from "../../platform/log.js";
import { invitationsFor, type InviteFacts } from "./invite.js";
import { AUDIENCES_OF, renderMail, type Audience, type MailBooking, type MailChange, type RenderedMail } from "./render.js";
import { mailSender, type Address, type MailSender, type OutgoingMail } from "./smtp.js";
import type { BookingChange, EffectKind, EffectRecord, PlanReads, PlannedEffect, RunResult } from "../../outbox/types.js";
import { answersWithQuestions, bookingById, hostUsersOf, storedBookingFacts } from "../bookings/index.js";
import { hostShares, hostsOf } from "../../domain/team.js";
import type { Recipient, ReminderFields } from "../../domain/reminder.js";
import { renderReminderMail } from "./reminder.js";

export interface MailSetup {
  sender: MailSender;
  /** MAIL_FROM, or undefined for `Scheduling <no-reply@HOST of APP_URL>` (APP_URL may only be known once listening). */
  from: Address | undefined;
}

const AUDIENCES: readonly Audience[] = ["booker", "guests", "host"];
const CHANGE_TYPES: readonly MailChange["type"][] = ["created", "rescheduled", "canceled", "requested", "declined", "reassigned"];

/** What `run` needs beyond the booking: frozen when the change is planned. */
interface EmailPayload {
  type: MailChange["type"];
  audience: Audience;
  canceledBy?: "host" | "booker";
  previousBookingId?: string;
  /** rescheduled: who moved it (absent: the booker), and the host's reason if they gave one. */
  movedBy?: "host" | "booker";
  reason?: string;
  /** A team booking's host mail to a host other than its first (teams.md: every host gets what a host gets). */
  hostId?: string;
  /** reassigned: the mail to the host the booking was taken from (`hostId`). */
  away?: true;
}

function readPayload(p: Record<string, unknown>): EmailPayload | undefined {
  const type = p.type;
  const audience = p.audience;
  if (typeof type !== "string" || !(CHANGE_TYPES as readonly string[]).includes(type)) return undefined;
  if (typeof audience !== "string" || !(AUDIENCES as readonly string[]).includes(audience)) return undefined;
  return {
    type: type as MailChange["type"],
    audience: audience as Audience,
    ...(p.canceledBy === "host" || p.canceledBy === "booker" ? { canceledBy: p.canceledBy } : {}),
    ...(typeof p.previousBookingId === "string" ? { previousBookingId: p.previousBookingId } : {}),
    ...(p.movedBy === "host" || p.movedBy === "booker" ? { movedBy: p.movedBy } : {}),
    ...(typeof p.reason === "string" ? { reason: p.reason } : {}),
    ...(typeof p.hostId === "string" ? { hostId: p.hostId } : {}),
    ...(p.away === true ? { away: true as const } : {}),
  };
}


function changeOf(p: EmailPayload, previous: BookingDoc | null, booking: BookingDoc): MailChange {
  switch (p.type) {
    case "created":
      return { type: "created" };
    case "rescheduled":
      // The old booking is never deleted; should it be gone all the same, the mail says "moved" without the old time.
      return previous ? { type: "rescheduled", previous: { start: previous.start_time, end: previous.end_time }, movedBy: p.movedBy ?? "booker", reason: p.reason ?? null } : { type: "created" };
    case "canceled":
      return { type: "canceled", canceledBy: p.canceledBy ?? "booker" };
    case "requested":
      return { type: "requested" };
    case "declined":
      return { type: "declined", expired: booking.status === "expired" };
    case "reassigned":
      return { type: "reassigned", away: p.away === true };
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
    manageUrl: bookingPageUrl(appUrl, b.private_key),
    ...(b.answer_by ? { request: { answerBy: b.answer_by } } : {}),
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

/**
 * The booking as its mails show it, with its host and event as they are now; null when the host is gone (no one to
 * write for). The host is its first (hostsOf), or `hostId` for a team booking's other host reading their own mail;
 * a team booking's other hosts are listed beside the booker in its invitation.
 */
export async function mailContextOf(booking: BookingDoc, withAnswers: boolean, appUrl: string, hostId?: string): Promise<MailContext | null> {
  // _id indexes. A deleted event still names its bookings.
  const [hosts, event, answers] = await Promise.all([
    hostUsersOf(booking),
    EventModel.findById(booking.event_id, { name: 1, location: 1 }).lean<Pick<EventDoc, "name" | "location">>(),
    withAnswers ? answersWithQuestions(booking) : Promise.resolve([]),
  ]);
  // _id index: a host the booking no longer holds (a reassign's old host) is read on their own.
  const host = hostId === undefined ? hosts[0] : (hosts.find((h) => h._id.toHexString() === hostId) ?? (await UserModel.findById(hostId).lean<UserDoc>()));
  if (!host) return null;
  const cohosts = hosts.filter((h) => h !== host);
  return { host, cohosts, answers, data: mailBooking(booking, event, host, answers, appUrl) };
}

interface MailContext {
  host: UserDoc;
  cohosts: UserDoc[];
  answers: Awaited<ReturnType<typeof answersWithQuestions>>;
  data: MailBooking;
}

/** What the calendar invitation of `doc` says (`booking` is the one the mail is about: a reschedule's old time is `doc`). */
function inviteFacts(doc: BookingDoc, booking: BookingDoc, c: MailContext, appUrl: string): InviteFacts {
  const { host, cohosts, data, answers } = c;
  const facts = storedBookingFacts({ booking, event: { name: data.eventName, location: data.location }, host, cohosts, answers, appUrl });
  // A reschedule's old time: the booking's event as it stood at that time, under the old booking's UID.
  return doc === booking ? facts : { ...facts, bookingId: doc._id.toHexString(), start: doc.start_time, end: doc.end_time };
}

/**
 * Builds the message of one e-mail effect from the booking as it is now; a RunResult when it cannot be built, or
 * cannot be built yet: while a provider makes the meeting link, the message waits for it (up to MEETING_WAIT_SECONDS
 * from when it was planned), then goes without it, saying the host will send it.
 */
async function composeMail(effect: EffectRecord, planned: EmailPayload, site: MailSite, meetingWaitMs: number, now: number): Promise<OutgoingMail | RunResult> {
  const { from, appUrl } = site;
  // A round robin move's old host: told about the time they had (the old booking), as the host a reassign took it from is.
  const leaving = planned.type === "rescheduled" && planned.away === true;
  const p: EmailPayload = leaving ? { ...planned, type: "reassigned" } : planned;
  const booking = await bookingById(leaving ? planned.previousBookingId : (effect.bookingId ?? undefined));
  if (!booking) return { ok: false, error: "booking not found", permanent: true };
  if (booking.meeting_status === "pending" && p.type !== "canceled" && now - effect.createdAt.getTime() < meetingWaitMs) {
    return { ok: "later", until: new Date(now + MEETING_POLL_MS), reason: "waiting for the meeting link" };
  }
  const [context, previous] = await Promise.all([
    mailContextOf(booking, p.audience === "host", appUrl, p.hostId),
    p.type === "rescheduled" ? bookingById(p.previousBookingId) : Promise.resolve(null),
  ]);
  if (!context) return { ok: false, error: "host not found", permanent: true };
  const { to, replyTo } = recipients(p.audience, booking, context.host);
  if (to.length === 0) return { ok: true };

  const appHost = appHostOf(appUrl);
  const change = changeOf(p, previous, booking);
  const rendered = renderMail(p.audience, change, withAnswerLink(context.data, booking, p, site));
  const calendars = invitationsFor(change, inviteFacts(booking, booking, context, appUrl), previous ? inviteFacts(previous, booking, context, appUrl) : undefined, p.audience);
  return outgoing(effect.id, { from, appUrl, appHost }, { to, replyTo }, rendered, calendars);
}

/** Where the mails come from and lead to: the sender, APP_URL, and the key of the hosts' answer links. */
interface MailSite {
  from: Address | undefined;
  appUrl: string;
  answerKey: Buffer;
}

/**
 * The host's request mail leads to the request's answer page (src/domain/answerLink.ts), whose token is made here
 * and nowhere stored: no other mail, and no page of the booker's, carries it.
 */
function withAnswerLink(data: MailBooking, booking: BookingDoc, p: EmailPayload, site: MailSite): MailBooking {
  if (p.type !== "requested" || p.audience !== "host" || !data.request) return data;
  const token = answerToken(site.answerKey, { id: booking._id.toHexString(), privateKey: booking.private_key });
  return { ...data, request: { ...data.request, answerUrl: `${site.appUrl}${answerPath(booking.private_key, token)}` } };
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
  /** A team booking's other host reading their own copy (mailContextOf). */
  hostId?: string;
  reminder: Pick<ReminderFields, "timing" | "subject" | "body">;
  from: Address | undefined;
  appUrl: string;
  unsubscribeUrl: string | undefined;
}): Promise<OutgoingMail | null> {
  const context = await mailContextOf(o.booking, o.reader === "host", o.appUrl, o.hostId);
  if (!context) return null;
  const appHost = appHostOf(o.appUrl);
  const rendered = renderReminderMail(o.reader, context.data, o.reminder, o.unsubscribeUrl);
  const calendars = invitationsFor({ type: "created" }, inviteFacts(o.booking, o.booking, context, o.appUrl), undefined, o.reader);
  return {
    ...outgoing(o.messageId, { from: o.from, appUrl: o.appUrl, appHost }, recipients(o.reader, o.booking, context.host), rendered, calendars),
    ...(o.unsubscribeUrl !== undefined ? { unsubscribeUrl: o.unsubscribeUrl } : {}),
  };
}

/**
 * Sends one e-mail of an effect and logs the outcome under `fields`. Who and what stay out of the log (addresses
 * are personal data): the effect id finds the booking, the connection or the reminder delivery.
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
 * The hosts a reschedule of a team booking changed (teams.md: a round robin move to a time its host is busy at goes
 * to another host): those the new booking holds that the old one did not, and those it no longer holds.
 */
async function hostsMoved(change: BookingChange, booking: BookingDoc, reads: PlanReads): Promise<{ joined: string[]; left: string[] }> {
  if (change.type !== "rescheduled" || !booking.team_id || change.previousBookingId === undefined) return { joined: [], left: [] };
  const previous = await reads.booking(change.previousBookingId);
  if (!previous) return { joined: [], left: [] };
  const before = hostsOf(previous).map((id) => id.toHexString());
  const after = hostsOf(booking).map((id) => id.toHexString());
  return { joined: after.filter((id) => !before.includes(id)), left: before.filter((id) => !after.includes(id)) };
}

/**
 * The e-mail effect kind. Without a mail setup (SMTP_URL unset) booking changes plan no e-mail at all; the app URL
 * is read when a mail is made (APP_URL may only be known once listening).
 */
export function createEmailKind(deps: { mail: MailSetup | undefined; appUrl(): string; meetingWaitMs: number; clock: Clock; answerKey: Buffer }): EffectKind {
  const setup = deps.mail;
  return {
    name: "email",

    async plan(change: BookingChange, reads: PlanReads): Promise<PlannedEffect[]> {
      // A no-show is the host's record: nobody is mailed about it.
      if (!setup || change.type === "no_show") return [];
      const type = change.type;
      const booking = await reads.booking(change.bookingId);
      if (!booking) return [];
      // Guests get a message of their own only when there are any; booker and host always, unless the booker
      // limits withheld the booker's or the guests' message when the change was made (recorded with it).
      const withheld = change.withheld ?? [];
      const audiences = AUDIENCES_OF[type].filter((a) => (a !== "guests" || booking.guest_emails.length > 0) && !(withheld as readonly string[]).includes(a));
      const hosts = hostsOf(booking).map((id) => id.toHexString());
      const moved = await hostsMoved(change, booking, reads);
      return audiences.flatMap((audience) => {
        const payload: EmailPayload = {
          type,
          audience,
          ...(change.canceledBy !== undefined ? { canceledBy: change.canceledBy } : {}),
          ...(change.previousBookingId !== undefined ? { previousBookingId: change.previousBookingId } : {}),
          ...(change.movedBy !== undefined ? { movedBy: change.movedBy } : {}),
          ...(change.reason !== undefined ? { reason: change.reason } : {}),
        };
        if (audience !== "host") return [{ key: audience, payload: { ...payload } }];
        // Every host of a team booking gets the host's mail; the first under the key a personal booking's host has.
        // A host a round robin move gave the booking to gets it as a new booking: they never had the old time.
        const shares = hostShares(hosts, audience).map((share) => ({
          key: share.key,
          payload: { ...payload, ...(share.first ? {} : { hostId: share.hostId }), ...(moved.joined.includes(share.hostId) ? { type: "created" as const } : {}) },
        }));
        // Reassigned: the host it was taken from is told too; and so is the host a round robin move took it from,
        // about the time they had (composeMail).
        const away = change.previousHostId === undefined ? [] : [{ key: "host:away", payload: { ...payload, hostId: change.previousHostId, away: true } }];
        const left = moved.left.map((hostId) => ({ key: `host:away:${hostId}`, payload: { ...payload, hostId, away: true } }));
        return [...shares, ...away, ...left];
      });
    },

    async run(effect: EffectRecord, signal: AbortSignal): Promise<RunResult> {
      const payload = readPayload(effect.payload);
      if (!payload) return { ok: false, error: "unreadable e-mail payload", permanent: true };
      if (!setup) return { ok: false, error: "SMTP_URL is not set" };
      const mail = await composeMail(effect, payload, { from: setup.from, appUrl: deps.appUrl(), answerKey: deps.answerKey }, deps.meetingWaitMs, deps.clock.nowMs());
      if (!("messageId" in mail)) return mail;
      return sendLogged(setup, mail, { effect_id: effect.id, kind: "email", audience: payload.audience, change: payload.type, attempt: effect.attempts }, signal);
    },
  };
}
