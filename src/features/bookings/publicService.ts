// PublicBookingService: what the booking page calls without a key — the event, its free slots, booking, and the booker's own booking.
import { create, fromJson, type JsonObject, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { plainValue } from "../../platform/rest/json.js";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import {
  ListSlotsResponseSchema,
  PublicBookingService,
  type BookingInput,
  type ListSlotsResponse,
  type PublicBookingSchema,
  type PublicEventSchema,
  type PublicEventSummarySchema,
} from "../../../gen/scheduling/v1/public_booking_pb.js";
import type { SingleUseLinkDoc } from "../../db/models/singleUseLink.js";
import { linkGone, linkOpenTo, linkStatus } from "../../domain/singleUseLink.js";
import { claimLink, linkByToken, releaseLink } from "../events/index.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { EventQuestionModel, QuestionModel, type QuestionDoc } from "../../db/models/question.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { TeamModel, type TeamDoc } from "../../db/models/team.js";
import {
  changeProblem,
  meetingStatusOf,
  checkAttendee,
  checkCancelReason,
  checkGuestEmails,
  readIsoTime,
  requestExpiresAt,
  slotDays,
} from "../../domain/booking.js";
import { checkAnswers, questionSettings, type AnswerValue, type FormQuestion } from "../../domain/questions.js";
import { ApiError, notFound, REASONS, refusal, requireFields, requireObject } from "../../domain/errors.js";
import { hostsOf, questionOwnersOf } from "../../domain/team.js";
import { descriptionForDisplay, locationDisplayName, NO_CALENDAR_SELECTED, publicLocation } from "../../domain/event.js";
import { avatarName } from "../../domain/format.js";
import { chosenDuration, eventDurations, slotDurationShown, slotStep } from "../../domain/lengths.js";
import { fromStoredAvailability, type Availability, type Hours } from "../../domain/availability.js";
import { bookerChangeRefusal, changeableUntil, eventAvailability, limitsOf, slotNotAvailable, storedRules, type StoredEventRules } from "../../domain/eventRules.js";
import { computeSlots, limitPeriods, limitReadRange, slotsUnchangedUntil, whyRefused, type BookingLimits, type BusyBooking, type LimitPeriod, type Seats } from "../../domain/slots.js";
import { addDays, ianaForServiceZone, wallClockToUtc } from "../../domain/timezones.js";
import { ianaZoneOf } from "../../domain/zoneNames.js";
import { checkLocale, USER_DEFAULTS } from "../../domain/user.js";
import { urlKey } from "../../domain/urlKey.js";
import type { AccountReads } from "../../db/accountVersions.js";
import { bookingByPrivateKey } from "./keys.js";
import { seatsOfSlot } from "./reads.js";
import { busyAround, PublicReads, SlotReplies, type HostBooking } from "./publicReads.js";
import { deepFreeze } from "../../domain/frozen.js";
import { accountByUrlKey, pictureUrl } from "../accounts/index.js";
import type { ServiceDeps } from "../accounts/index.js";
import { scheduleHours } from "../schedules/index.js";
import { seatedSlotId } from "./cells.js";
import { hostUsersOf, shownHosts } from "./hosts.js";
import { calendarFields, cancelBooking, canceledBefore, confirmBooking, requestBooking, rescheduleBooking, setRemindersUnsubscribed, writtenBefore, type BookWrite, type ConfirmedFields } from "./writes.js";
import { keyedWriteOf } from "../../platform/transport/idempotency.js";
import type { BookingAnswer } from "../../../gen/scheduling/v1/booking_pb.js";
import { ReminderDeliveryModel, type ReminderDeliveryDoc } from "../../db/models/reminder.js";
import { remindsBooker } from "../../domain/reminder.js";
import type { OutboxWake } from "../../outbox/wake.js";
import { NOTIFY_EVERYONE, type Notify } from "../../domain/owed.js";

const MINUTE = 60_000;

export interface PublicEventContext {
  host: UserDoc;
  event: EventDoc;
  /** The host's IANA zone. */
  zone: string;
}

/** An active, undeleted event by the two parts of its absolute_url, or 404; `since`: when the request began (performance.now()). */
async function bookableEvent(reads: PublicReads, userUrl: string, eventUrl: string, since = performance.now()): Promise<PublicEventContext> {
  const host = userUrl === "" ? null : await reads.hostByUrlKey(urlKey(userUrl), since);
  const event = host === null || eventUrl === "" ? null : await reads.eventByUrlKey(host._id, urlKey(eventUrl), since);
  if (!host || !event || !event.active) throw notFound("event not found");
  return { host, event, zone: ianaForServiceZone(host.timezone) };
}

/**
 * The event of a single-use link (booking-kinds.md): found by the token whatever its is_public, 404 when the link
 * or its event is unknown or the event is inactive or deleted, 410 once the link is used, revoked or expired. A
 * team event's link (kept under the team's id, as the event) answers as the team's paths do (`team`).
 */
async function linkedEvent(
  reads: PublicReads,
  teamLinks: TeamLinks,
  token: string,
  now: Date,
  since = performance.now(),
  retriedBy?: mongoose.Types.ObjectId,
): Promise<{ ctx: PublicEventContext; team?: undefined; link: SingleUseLinkDoc } | { ctx?: undefined; team: TeamLinkAnswers; link: SingleUseLinkDoc }> {
  const link = token === "" ? null : await linkByToken(token);
  if (!link) throw notFound("link not found");
  // A retry of the booking that used the link (the same Idempotency-Key) is answered that booking.
  const usedByRetry = retriedBy !== undefined && link.booking_id?.equals(retriedBy) === true;
  if (linkStatus(link, now) !== "active" && !usedByRetry) throw linkGone();
  // _id index, the account's shard; the host as the public reads keep it.
  const event = await EventModel.findOne({ _id: link.event_id, user_id: link.user_id, deleted: false }).lean<EventDoc>();
  if (event?.active && event.team_id) {
    const team = await teamLinks.of(event, since);
    if (!team) throw notFound("event not found");
    return { team, link };
  }
  const host = event ? await reads.hostById(link.user_id, since) : null;
  if (!event || !event.active || !host) throw notFound("event not found");
  return { ctx: { host, event, zone: ianaForServiceZone(host.timezone) }, link };
}

/** What a slot listing asks, by the event's urls or a link's token. */
interface SlotsAsked {
  dateFrom?: string;
  dateTo?: string;
  timezone?: string;
  duration?: number;
}

export type PublicEventMessage = MessageInitShape<typeof PublicEventSchema>;

/**
 * How a single-use link of a team event answers (booking-kinds.md "Single-use links"): as the team's public paths
 * answer for that event (teamPublic.ts createTeamLinks, handed in by src/app).
 */
export interface TeamLinks {
  /** The answers for the link's event, or undefined when it is no team's (or its team is gone). */
  of(event: EventDoc, since: number): Promise<TeamLinkAnswers | undefined>;
}

interface TeamLinkAnswers {
  event(): Promise<PublicEventMessage>;
  slots(req: SlotsAsked, since: number): Promise<{ timezone: string; slots: { startTime: string; endTime: string }[] }>;
  book(input: BookingInput | undefined, hctx: HandlerContext, link: SingleUseLinkDoc): Promise<MessageInitShape<typeof PublicBookingSchema>>;
}

interface FormEntry {
  question: QuestionDoc;
  required: boolean;
  orderNumber: number;
}

/** The event's active form questions, in form order. */
async function formOf(event: EventDoc): Promise<FormEntry[]> {
  // (user_id, event_id, order_number) index.
  const links = await EventQuestionModel.find({ user_id: event.user_id, event_id: event._id }).sort({ order_number: 1, _id: 1 }).lean();
  if (links.length === 0) return [];
  // _id index; only active questions of their owners (the host; a team event's owner and admins who put them on it) show on a booking form.
  const questions = await QuestionModel.find({ _id: mongoose.trusted({ $in: links.map((l) => l.question_id) }), user_id: mongoose.trusted({ $in: questionOwnersOf(links) }), state: "active" }).lean<QuestionDoc[]>();
  const byId = new Map(questions.map((q) => [q._id.toHexString(), q]));
  return links.flatMap((l) => {
    const question = byId.get(l.question_id.toHexString());
    return question ? [{ question, required: l.required, orderNumber: l.order_number }] : [];
  });
}

function formQuestions(form: readonly FormEntry[]): FormQuestion[] {
  return form.map(({ question: q, required }) => ({
    id: q._id.toHexString(),
    title: q.title,
    questionType: q.question_type,
    required,
    ...questionSettings(q.question_type, q.question_details),
  }));
}

type PublicBookingMessage = MessageInitShape<typeof PublicBookingSchema>;

/** Whether reminders of the booking's event e-mail its booker (deliveries planned for it that reach the booker). */
async function hasBookerReminders(b: BookingDoc): Promise<boolean> {
  // (user_id, booking_id, reminder_id) unique index.
  const deliveries = await ReminderDeliveryModel.find({ user_id: b.user_id, booking_id: b._id }, { recipients: 1, channel: 1 }).lean<Pick<ReminderDeliveryDoc, "recipients" | "channel">[]>();
  return deliveries.some(remindsBooker);
}

/** What a request already read of a booking's event, host and (a team booking) team and hosts: presentPublic need not read it again. */
interface KnownOfBooking {
  event: EventDoc;
  host: UserDoc;
  team?: Pick<TeamDoc, "_id" | "name" | "url">;
  /** Every host the team booking holds, in its order (hostsOf); absent: read with the booking's other parts. */
  hosts?: readonly UserDoc[];
}

/**
 * The booker's view. `known` is the event and host the request already read (a booking or a reschedule): asking
 * the database for them again would cost two round trips per booking (bench:writes). `withReminders`: whether the
 * event's reminders e-mail the booker is read too (the manage page's switch). A team booking's view names its hosts
 * and why round robin chose its host (teams.md), the same whichever call answers it: the booking's answer, the
 * attendee's later reads of it (GetBooking), a cancel or a move.
 */
export async function presentPublic(appUrl: string, now: Date, b: BookingDoc, known?: KnownOfBooking, withReminders = false): Promise<PublicBookingMessage> {
  // _id indexes. A deleted event or a host gone still leave the booking readable.
  const [event, host] = known
    ? [known.event, known.host]
    : await Promise.all([
        EventModel.findById(b.event_id, { name: 1, location: 1, url: 1, cancel_notice_minutes: 1, show_attendees_to_attendees: 1 }).lean<
          Pick<EventDoc, "name" | "location" | "url" | "cancel_notice_minutes" | "show_attendees_to_attendees">
        >(),
        UserModel.findById(b.user_id, { full_name: 1, url: 1, email: 1, locale: 1, time_format: 1, timezone: 1, start_day_of_week: 1, picture_id: 1, brand_color: 1, logo_id: 1 }).lean<
          Pick<UserDoc, "full_name" | "url" | "email" | "locale" | "time_format" | "timezone" | "start_day_of_week" | "picture_id" | "brand_color" | "logo_id">
        >(),
      ]);
  // _id indexes; only a moved booking has a successor to read, only a team booking a team (its pages are the team's).
  const [next, bookerReminders, others, team, hosts] = await Promise.all([
    b.rescheduled_to ? BookingModel.findById(b.rescheduled_to, { private_key: 1 }).lean<Pick<BookingDoc, "private_key">>() : null,
    withReminders ? hasBookerReminders(b) : false,
    otherAttendeeNames(b, event),
    b.team_id ? (known?.team ?? TeamModel.findById(b.team_id, { name: 1, url: 1 }).lean<Pick<TeamDoc, "_id" | "name" | "url">>()) : null,
    b.team_id ? (known?.hosts ?? hostUsersOf(b)) : [],
  ]);
  const location = event ? publicLocation(event.location) : { kind: "no_location", details: undefined };
  const cancelNotice = storedRules(event ?? {}).cancel_notice_minutes;
  return {
    id: b._id.toHexString(),
    privateKey: b.private_key,
    status: b.status,
    startTime: b.start_time.toISOString(),
    endTime: b.end_time.toISOString(),
    eventName: event?.name ?? "",
    attendeeName: b.attendee_name,
    attendeeEmail: b.attendee_email,
    timezone: b.timezone ?? undefined,
    locale: b.locale ?? undefined,
    guestEmails: b.guest_emails,
    answers: b.answers.map((a) => ({ questionId: a.question_id, value: fromJson(ValueSchema, (a.value ?? null) as JsonValue) })),
    hostFullName: host?.full_name ?? "",
    locationName: event ? locationDisplayName(event.location) : "",
    cancelReason: b.cancel_reason ?? undefined,
    meetingUrl: b.meeting_url ?? undefined,
    meetingStatus: meetingStatusOf({ meetingUrl: b.meeting_url, meetingStatus: b.meeting_status }),
    meetingError: b.meeting_error ?? undefined,
    userUrl: host?.url ?? "",
    eventUrl: event?.url ?? "",
    hostLocale: host?.locale ?? USER_DEFAULTS.locale,
    hostTimeFormat: host?.time_format ?? USER_DEFAULTS.time_format,
    hostEmail: host?.email ?? "",
    locationKind: location.kind,
    locationDetails: location.details,
    changeable: bookerChangeRefusal({ status: b.status, start: b.start_time, end: b.end_time }, now, cancelNotice) === undefined,
    changeableUntil: b.status === "confirmed" ? changeableUntil(b.start_time, cancelNotice).toISOString() : undefined,
    hostTimezone: ianaForServiceZone(host?.timezone ?? USER_DEFAULTS.timezone),
    hostStartDayOfWeek: host?.start_day_of_week ?? USER_DEFAULTS.start_day_of_week,
    hostPictureUrl: host?.picture_id ? pictureUrl(appUrl, host.picture_id) : undefined,
    hostBrandColor: host?.brand_color ?? undefined,
    hostBrandLogoUrl: host?.logo_id ? pictureUrl(appUrl, host.logo_id) : undefined,
    nextPrivateKey: next?.private_key,
    durationMinutes: Math.round((b.end_time.getTime() - b.start_time.getTime()) / MINUTE),
    guestsNotified: b.guests_notified ?? true,
    remindersEnabled: b.reminders_unsubscribed !== true,
    bookerReminders,
    otherAttendeeNames: others,
    team: team ? { id: team._id.toHexString(), name: team.name, url: team.url } : undefined,
    hosts: shownHosts(hosts),
    assignmentReason: b.assignment_reason ?? undefined,
  };
}

/** A seat's view of its slot's other seats (booking-kinds.md "Seats"): their names while it holds its seat, if the event shows them. */
async function otherAttendeeNames(b: BookingDoc, event: Pick<EventDoc, "show_attendees_to_attendees"> | null): Promise<string[]> {
  if (!b.seated_slot || b.status !== "confirmed" || event?.show_attendees_to_attendees !== true) return [];
  return (await seatsOfSlot(b)).filter((s) => !s._id.equals(b._id)).map((s) => s.attendee_name);
}

async function bookingByKey(privateKey: string): Promise<BookingDoc> {
  const b = await bookingByPrivateKey(privateKey);
  if (!b) throw notFound("booking not found");
  return b;
}

/**
 * The id of the booking a write makes. Under an Idempotency-Key it is the same for every try of the request, so a
 * retry after an answer that was lost (a 503: the outcome unknown) finds the booking the first try made, and
 * answers it, instead of being refused by it (the time it holds: 409) or making a second one.
 */
export function bookingIdFor(hctx: HandlerContext): mongoose.Types.ObjectId {
  const name = keyedWriteOf(hctx);
  return name === undefined ? new mongoose.Types.ObjectId() : new mongoose.Types.ObjectId(name.slice(0, 24));
}

/** The length a moved booking keeps: its own while the event still offers it, else the event's first. */
function keptLength(event: EventDoc, old: Pick<BookingDoc, "start_time" | "end_time">): number {
  const own = Math.round((old.end_time.getTime() - old.start_time.getTime()) / MINUTE);
  const durations = eventDurations(event);
  return durations.includes(own) ? own : durations[0];
}

function readStart(value: string | undefined): Date {
  return readIsoTime("start_time", value ?? "");
}

/** What decides an event's slots besides the bookings: its rules and the availability they make (its schedule's hours or the account's). */
interface SlotSettings {
  rules: StoredEventRules;
  availability: Availability;
  /** The schedule's hours as read (kept under the account's stamps, so the same object while unchanged), or NO_SCHEDULE. */
  schedule: Hours | typeof NO_SCHEDULE;
}

/** An event without a schedule, or whose schedule is gone (the account's hours apply). */
const NO_SCHEDULE = Object.freeze({});

/**
 * The event's rules and availability. Its schedule, if it has one, is read under the account's stamps
 * (src/db/accountVersions.ts: schedule writes bump them); `since`: when the request began.
 */
async function slotSettings(accountReads: AccountReads, ctx: PublicEventContext, since: number): Promise<SlotSettings> {
  const rules = storedRules(ctx.event);
  const id = rules.schedule_id;
  const hours = id === null ? null : await accountReads.read(ctx.host._id, "settings", `schedule ${id}`, () => scheduleHours(ctx.host._id, id), { since });
  return { rules, schedule: hours ?? NO_SCHEDULE, availability: eventAvailability(fromStoredAvailability(ctx.host.availability), hours ?? undefined, rules) };
}

/** The event's limits over the host's bookings just read (which cover `limitReadRange`), or undefined when it has none. */
function eventLimits(ctx: PublicEventContext, rules: StoredEventRules, booked: readonly HostBooking[]): BookingLimits | undefined {
  if (rules.daily_limit === null && rules.weekly_limit === null) return undefined;
  const own = booked.filter((b) => b.eventId.equals(ctx.event._id)).map((b) => ({ start: b.start, id: b.id.toHexString() }));
  if (rules.seats_per_slot === null) return limitsOf(rules, ctx.host.start_day_of_week, own);
  // Seated: limits count slots, not seats; a slot holds its places under its own id (cells.ts holdSeat).
  const slots = new Map(own.map((b) => [b.start.getTime(), { start: b.start, id: seatedSlotId(ctx.event._id, b.start).toHexString() }]));
  return limitsOf(rules, ctx.host.start_day_of_week, [...slots.values()]);
}

/**
 * The host's bookings as slot computation takes them: for a seated event, its own bookings are the seats taken of
 * their slots (src/domain/slots.ts Seats) rather than busy times.
 */
function busyAndSeats(ctx: PublicEventContext, rules: StoredEventRules, booked: readonly HostBooking[]): { busy: readonly HostBooking[]; seats?: Seats } {
  const perSlot = rules.seats_per_slot;
  if (perSlot === null) return { busy: booked };
  const taken = new Map<number, HostBooking & { count: number }>();
  const busy: HostBooking[] = [];
  for (const b of booked) {
    if (!b.eventId.equals(ctx.event._id)) busy.push(b);
    else {
      const slot = taken.get(b.start.getTime());
      if (!slot) taken.set(b.start.getTime(), { ...b, count: 1 });
      else {
        slot.count++;
        // Seats of one slot may differ in length (an event of several durations): the slot holds the time of its
        // longest (cells.ts holdSeat claims each seat's time cells for the slot), so that is what it blocks.
        if (b.end.getTime() > slot.end.getTime()) slot.end = b.end;
      }
    }
  }
  return { busy, seats: { perSlot, taken: [...taken.values()] } };
}

interface FreeSlot {
  end: Date;
  rules: StoredEventRules;
  /** The limited periods the booking must take a place in (src/features/bookings/cells.ts). */
  places: LimitPeriod[];
}

/** How a time is checked besides the event's rules: the booking a reschedule moves set aside, and whether the host overrides the rules. */
interface SlotCheck {
  except?: mongoose.Types.ObjectId;
  /** A host's booking or move (booking-kinds.md "The host's desk"): only a past time, other bookings and busy calendars refuse it; it takes no place in a limited period. */
  overrideRules?: boolean;
}

/**
 * 409 `slot is not available` with the reason (extensions.md "Why a time is refused") unless `start` is a free
 * slot of the event for its host right now (the old booking of a reschedule set aside).
 */
export async function checkSlotFree(
  ports: BookingPorts,
  accountReads: AccountReads,
  ctx: PublicEventContext,
  start: Date,
  minutes: number,
  now: Date,
  { except, overrideRules = false }: SlotCheck = {},
): Promise<FreeSlot> {
  const { host, event } = ctx;
  const end = new Date(start.getTime() + minutes * MINUTE);
  const rules = storedRules(event);
  const read = limitReadRange(start, end, { daily: rules.daily_limit, weekly: rules.weekly_limit }) ?? { from: start, to: end };
  // The host's calendars are read afresh (a cheap change check at best); one that cannot be read answers 503.
  const [booked, calendars, settings] = await Promise.all([
    busyAround(host._id, read.from, read.to, except),
    ports.calendarBusy(host, start, end, "booking"),
    slotSettings(accountReads, ctx, performance.now()),
  ]);
  const limits = eventLimits(ctx, rules, booked);
  const reason = whyRefused({
    hostZone: ctx.zone,
    availability: settings.availability,
    slotMinutes: minutes,
    intervalMinutes: slotStep(event, minutes),
    paddingMinutes: event.padding_minutes,
    bufferBeforeMinutes: rules.buffer_before_minutes,
    now,
    ...busyAndSeats(ctx, rules, booked),
    calendarBusy: calendars,
    limits,
    start,
    overrideRules,
  });
  if (reason) throw slotNotAvailable(reason, { eventId: event._id.toHexString(), start });
  return { end, rules, places: overrideRules ? [] : limitPeriods(limits, event._id.toHexString(), ctx.zone, start) };
}

/** The calendar the event's bookings are written to, or null. */
function calendarOf(event: Pick<EventDoc, "connected_calendar_id">): string | null {
  return event.connected_calendar_id === NO_CALENDAR_SELECTED ? null : event.connected_calendar_id;
}

function answersOf(list: readonly BookingAnswer[]): { questionId: string; value: AnswerValue }[] {
  return list.map((a) => ({ questionId: a.questionId, value: (a.value === undefined ? null : plainValue(a.value)) as AnswerValue }));
}

/**
 * What booking needs of the host's calendars and video meetings. Those features build on bookings (they write a
 * booking's calendar event and meeting), so src/app hands these in.
 */
export interface BookingPorts {
  /** The busy times of the host's calendars that check for conflicts, read as `mode` allows (fails closed); `since`: when the request began. */
  calendarBusy(host: UserDoc, from: Date, to: Date, mode: "listing" | "booking", since?: number): Promise<BusyBooking[]>;
  /** Whether any calendar of the host checks for conflicts (its busy times then change without a write of ours). */
  checksConflicts(host: UserDoc, since?: number): Promise<boolean>;
  /** The meeting fields of a new booking at the event's location: a link made at once, or pending for the outbox. */
  newMeeting(userId: mongoose.Types.ObjectId, location: string, calendarId: string | null): Promise<Pick<BookingDoc, "meeting_url" | "meeting_status" | "meeting_error" | "meeting_provider">>;
}

/** The booking fields a visitor sends (BookingInput), which the host's booking for someone sends too (HostBookingInput). */
export type BookingFieldsInput = Pick<BookingInput, "startTime" | "attendeeName" | "attendeeEmail" | "timezone" | "answers" | "guestEmails" | "locale" | "durationMinutes">;

/** What a booker sends to book the event, checked (a team event's booking, and the host's for someone, too). */
export async function checkedBooking(event: EventDoc, input: BookingFieldsInput | undefined) {
  requireFields("booking", { start_time: input?.startTime, attendee_name: input?.attendeeName, attendee_email: input?.attendeeEmail });
  const start = readStart(input?.startTime);
  const minutes = chosenDuration(event, input?.durationMinutes, "duration_minutes");
  const attendee = checkAttendee(input?.attendeeName ?? "", input?.attendeeEmail ?? "");
  // Stored as an IANA zone whichever vocabulary the booker's page used.
  const timezone = input?.timezone === undefined || input.timezone === "" ? null : ianaZoneOf("timezone", input.timezone);
  const locale = input?.locale === undefined || input.locale === "" ? null : checkLocale(input.locale);
  const guests = checkGuestEmails(input?.guestEmails ?? [], event.enable_guest_emails, event.guest_emails_limit);
  const answers = checkAnswers(answersOf(input?.answers ?? []), formQuestions(await formOf(event)));
  return { start, minutes, attendee, timezone, locale, guests, answers };
}

/** A request's meeting and calendar: none until the host confirms it (booking-kinds.md "no calendar event or meeting yet"). */
const WAITING: ConfirmedFields = { meeting_url: null, meeting_status: "none", meeting_error: null, meeting_provider: null, ...calendarFields(null) };

/** The meeting and calendar of a booking of `event` for the host `hostId` once confirmed: when booked, or when the host confirms a request. */
export async function answeredFields(ports: Pick<BookingPorts, "newMeeting">, event: SlotEvent, hostId: mongoose.Types.ObjectId, start: Date): Promise<ConfirmedFields> {
  return { ...(await meetingOfNew(ports, event, hostId, start)), ...calendarFields(calendarOf(event)) };
}

/** What the meeting and calendar of a booking read of its event. */
type SlotEvent = Pick<EventDoc, "_id" | "location" | "connected_calendar_id" | "seats_per_slot">;

/** Whether a booking of `event` is a request that waits for the host (booking-kinds.md). */
function waitsForHost(event: EventDoc): boolean {
  return storedRules(event).requires_confirmation;
}

/**
 * A new booking's fields for the host `hostId`: what the booker sent (`checked`), the slot's end and buffer as the
 * host's check found them, the event's meeting and calendar (a request: none yet). A team booking adds its team
 * fields. `waits`: whether it is a request; the host's own booking for someone never is, whatever the event says.
 */
export async function newBookingFields(
  ports: BookingPorts,
  event: EventDoc,
  hostId: mongoose.Types.ObjectId,
  checked: Awaited<ReturnType<typeof checkedBooking>>,
  slot: { end: Date; bufferBeforeMinutes: number },
  waits = waitsForHost(event),
) {
  return {
    event_id: event._id,
    user_id: hostId,
    start_time: checked.start,
    end_time: slot.end,
    padding_minutes: event.padding_minutes,
    buffer_before_minutes: slot.bufferBeforeMinutes,
    attendee_name: checked.attendee.name,
    attendee_email: checked.attendee.email,
    timezone: checked.timezone,
    locale: checked.locale,
    answers: checked.answers.map((a) => ({ question_id: a.questionId, value: a.value })),
    guest_emails: checked.guests,
    internal_notes: null,
    cancel_reason: null,
    canceled_at: null,
    rescheduled_from: null,
    rescheduled_to: null,
    ...(waits ? WAITING : await answeredFields(ports, event, hostId, checked.start)),
  };
}

/**
 * The meeting of a new booking, or of a seat moved to `start`: a seated slot is one meeting (booking-kinds.md
 * "Seats"), so a seat joins the one its slot's seats have (its link, or the link still being made), and only the
 * slot's first seat makes one.
 */
async function meetingOfNew(ports: Pick<BookingPorts, "newMeeting">, event: SlotEvent, hostId: mongoose.Types.ObjectId, start: Date): Promise<Awaited<ReturnType<BookingPorts["newMeeting"]>> & Pick<BookingDoc, "meeting_id">> {
  if (storedRules(event).seats_per_slot !== null) {
    const seats = await seatsOfSlot({ user_id: hostId, event_id: event._id, start_time: start, seated_slot: seatedSlotId(event._id, start) });
    const shared = seats.find((b) => b.meeting_provider && (b.meeting_status === "ready" || b.meeting_status === "pending"));
    if (shared) {
      return { meeting_url: shared.meeting_url ?? null, meeting_status: shared.meeting_status, meeting_error: null, meeting_provider: shared.meeting_provider ?? null, meeting_id: shared.meeting_id ?? null };
    }
  }
  return { ...(await ports.newMeeting(hostId, event.location.name, calendarOf(event))), meeting_id: null };
}

/**
 * Books or requests, as the event says: a request waits for the host, and expires unanswered after the event's
 * confirmation_hours or at its start (src/domain/booking.ts requestExpiresAt).
 */
export function bookOrRequest(event: EventDoc, w: BookWrite): Promise<BookingDoc> {
  if (!waitsForHost(event)) return confirmBooking(w);
  return requestBooking({ ...w, answerBy: requestExpiresAt(w.clock.now(), w.fields.start_time, storedRules(event).confirmation_hours) });
}

/** The days a listing asks for, in the viewer's zone, and what it is computed for. */
export interface SlotRange {
  viewerZone: string;
  days: { dateFrom: string; dateTo: string };
  /** The days' bounds, UTC. */
  from: Date;
  to: Date;
  /** The meeting's length. */
  minutes: number;
  /** When the request began (performance.now()). */
  since: number;
  now: Date;
}

/**
 * What one host's free slots of the event are computed from (computeSlots): their hours or the event's schedule,
 * their bookings of every event, their calendars, and the event's buffers, notice, window and limits. A team
 * event's slots are those of each host's (src/features/bookings/teamPublic.ts).
 */
export async function slotQuery(accountReads: AccountReads, reads: PublicReads, ports: BookingPorts, ctx: PublicEventContext, r: SlotRange) {
  const rules = storedRules(ctx.event);
  // With a daily or weekly limit the bookings of the whole days or weeks are read, to count the event's own.
  const read = limitReadRange(r.from, r.to, { daily: rules.daily_limit, weekly: rules.weekly_limit }) ?? { from: r.from, to: r.to };
  const [booked, calendars, checksConflicts, settings] = await Promise.all([
    reads.busyBetween(ctx.host._id, read.from, read.to, r.since),
    ports.calendarBusy(ctx.host, r.from, r.to, "listing", r.since),
    ports.checksConflicts(ctx.host, r.since),
    slotSettings(accountReads, ctx, r.since),
  ]);
  const query = {
    hostZone: ctx.zone,
    availability: settings.availability,
    slotMinutes: r.minutes,
    intervalMinutes: slotStep(ctx.event, r.minutes),
    paddingMinutes: ctx.event.padding_minutes,
    bufferBeforeMinutes: rules.buffer_before_minutes,
    now: r.now,
    ...busyAndSeats(ctx, rules, booked),
    calendarBusy: calendars,
    limits: eventLimits(ctx, rules, booked),
    rangeStartDate: r.days.dateFrom,
    rangeEndDate: r.days.dateTo,
    viewerZone: r.viewerZone,
  };
  return { query, booked, checksConflicts, settings };
}

/** An event as a profile or a team page lists it. */
export function eventSummary(e: EventDoc): MessageInitShape<typeof PublicEventSummarySchema> {
  return {
    name: e.name,
    url: e.url,
    slotDuration: slotDurationShown(e),
    durations: eventDurations(e),
    description: descriptionForDisplay(e.description),
    locationKind: e.location.name,
    locationName: locationDisplayName(e.location),
    color: e.color,
  };
}

/** Who an event page names as its host: the account, or a team as its page shows it (teams.md). */
export type PageHost = Pick<UserDoc, "full_name" | "locale" | "time_format" | "start_day_of_week" | "picture_id" | "brand_color" | "logo_id">;

/** What the booking page shows of an event: a host's (getPublicEvent, getLinkEvent) or a team's (getPublicTeamEvent). */
export async function publicEventOf(appUrl: string, { host, event, zone }: { host: PageHost; event: EventDoc; zone: string }): Promise<PublicEventMessage> {
  const form = await formOf(event);
  const location = publicLocation(event.location);
  return {
    name: event.name,
    description: descriptionForDisplay(event.description),
    slotDuration: slotDurationShown(event),
    durations: eventDurations(event),
    slotIntervalMinutes: event.slot_interval_minutes ?? undefined,
    locationName: locationDisplayName(event.location),
    hostFullName: host.full_name,
    hostTimezone: zone,
    questions: form.map(({ question: q, required, orderNumber }) => ({
      id: q._id.toHexString(),
      title: q.title,
      questionType: q.question_type,
      required,
      orderNumber,
      questionDetails: (q.question_details ?? {}) as JsonObject,
    })),
    enableGuestEmails: event.enable_guest_emails,
    guestEmailsLimit: event.guest_emails_limit,
    locationKind: location.kind,
    locationDetails: location.details,
    hostLocale: host.locale,
    hostTimeFormat: host.time_format,
    hostStartDayOfWeek: host.start_day_of_week,
    hostAvatarName: avatarName(host.full_name),
    hostPictureUrl: host.picture_id ? pictureUrl(appUrl, host.picture_id) : undefined,
    color: event.color,
    hostBrandColor: host.brand_color ?? undefined,
    hostBrandLogoUrl: host.logo_id ? pictureUrl(appUrl, host.logo_id) : undefined,
    seatsPerSlot: storedRules(event).seats_per_slot ?? undefined,
    requiresConfirmation: storedRules(event).requires_confirmation,
  };
}

/** A booking to make: by a visitor (through the event's page or a single-use link) or by the host for someone. */
export interface PlaceBooking {
  deps: Pick<ServiceDeps, "access" | "clock"> & { accountReads: AccountReads; wake: OutboxWake };
  ports: BookingPorts;
  ctx: PublicEventContext;
  input: BookingFieldsInput | undefined;
  hctx: HandlerContext;
  /** Through a single-use link: taken for this booking once the time is found free, given back if it is refused after all. */
  link?: SingleUseLinkDoc;
  /**
   * The host books for someone (booking-kinds.md "The host's desk"): no booker limits; `notifyAttendee` false mails
   * neither the attendee nor the guests (nor reminds the attendee); `overrideRules` leaves out the event's rules
   * (src/domain/slots.ts whyRefused).
   */
  byHost?: HostBooks;
}

/** How the host books for someone (booking-kinds.md "The host's desk"): whether the attendee is told, whether the event's rules are left out. */
export interface HostBooks {
  notifyAttendee: boolean;
  overrideRules: boolean;
}

/** Nobody but the host is mailed: a host's booking made without telling the attendee. */
const NOTIFY_HOST_ONLY: Notify = Object.freeze({ booker: false, guests: false });

/** Who a host's booking for someone mails: everyone, or (notify_attendee false) the hosts only. */
export const notifyOfHost = (byHost: HostBooks): Notify => (byHost.notifyAttendee ? NOTIFY_EVERYONE : NOTIFY_HOST_ONLY);

/** A new booking's fields as written for `notify`: the attendee who is not to be told is not reminded either. */
export const remindedAs = <F extends object>(fields: F, notify: Notify): F => (notify.booker ? fields : { ...fields, reminders_unsubscribed: true });

/**
 * Books the event: the booking made (or the one a first try of the same keyed request made), confirmed, holding its
 * cells; 409 when the time is not free for it.
 */
export async function placeBooking({ deps, ports, ctx, input, hctx, link, byHost }: PlaceBooking): Promise<BookingDoc> {
  const id = bookingIdFor(hctx);
  const made = keyedWriteOf(hctx) === undefined ? undefined : await writtenBefore(deps.wake, id);
  if (made?.event_id.equals(ctx.event._id)) return made;
  if (link && !linkOpenTo(link, id.toHexString(), deps.clock.now())) throw linkGone();
  const checked = await checkedBooking(ctx.event, input);
  const { start, minutes, attendee, guests } = checked;

  const { end, rules, places } = await checkSlotFree(ports, deps.accountReads, ctx, start, minutes, deps.clock.now(), { overrideRules: byHost?.overrideRules });
  let notify: Notify;
  if (byHost) notify = notifyOfHost(byHost);
  else {
    await deps.access.limitNewBookerOf(hctx, ctx.host._id.toHexString(), attendee.email);
    notify = await deps.access.limitBookingsOf(ctx.host._id.toHexString(), attendee.email, guests);
  }
  if (link && !(await claimLink(link.user_id, link._id, id, deps.clock.now()))) throw linkGone();
  try {
    const fields = await newBookingFields(ports, ctx.event, ctx.host._id, checked, { end, bufferBeforeMinutes: rules.buffer_before_minutes }, byHost ? false : undefined);
    const write = {
      wake: deps.wake,
      clock: deps.clock,
      notify,
      places,
      id,
      seats: rules.seats_per_slot,
      fields: remindedAs(fields, notify),
    };
    // The host's own booking is never a request: it is the host's answer already.
    return await (byHost ? confirmBooking(write) : bookOrRequest(ctx.event, write));
  } catch (err) {
    if (link) await releaseLink(link.user_id, link._id, id, err);
    throw err;
  }
}

/** One way a booking may go to the new time: the slot as its (first) host's check found it, and the host it goes to when that changes. */
export interface MoveTarget {
  free: FreeSlot;
  /** A round robin booking given to another host: that host and round robin's reason (writes.ts rescheduleBooking). */
  host?: { id: mongoose.Types.ObjectId; reason: string };
}

/** Where a team booking may move, in the order to try them (a host another booking takes meanwhile gives way to the next), and how its booker sees it. */
export interface TeamMove {
  targets: MoveTarget[];
  present(b: BookingDoc, appUrl: string, now: Date): Promise<PublicBookingMessage>;
}

/** `old` of the team event `event` moving to `start` for `minutes`, checked at `now` as `check` says (teamMove.ts); 409 (the reason of a host's refusal) when it cannot. */
export type TeamMoves = (old: BookingDoc, event: EventDoc, start: Date, minutes: number, now: Date, check: SlotCheck) => Promise<TeamMove>;

/** Whether `err` says the time is taken (another booking holds a cell of it). */
export const isTaken = (err: unknown): boolean => err instanceof ApiError && err.reason === "TAKEN";

/**
 * The first of `targets` a move to takes (a round robin move's hosts in round robin's order): one another booking
 * takes meanwhile (its cells, 409 `taken`) gives way to the next; the last one's refusal answers.
 */
async function firstTaking(targets: readonly MoveTarget[], moveTo: (t: MoveTarget) => Promise<BookingDoc>): Promise<BookingDoc> {
  for (const [i, target] of targets.entries()) {
    try {
      return await moveTo(target);
    } catch (err) {
      if (i === targets.length - 1 || !isTaken(err)) throw err;
    }
  }
  throw new Error("no time to move the booking to");
}

/** A confirmed booking moved to another time: by its booker (the public reschedule) or by its host (the desk). */
export interface MoveBooking {
  deps: Pick<ServiceDeps, "access" | "clock"> & { accountReads: AccountReads; wake: OutboxWake };
  ports: BookingPorts;
  /** The booking as read: the booker's by its private key, the host's by id (their own only). */
  old: BookingDoc;
  startTime: string | undefined;
  hctx: HandlerContext;
  /**
   * The host moves it (booking-kinds.md "The host's desk"): the event's cancel notice binds the booker only, and so
   * do the booker limits (the host is not a stranger mailing through us); `overrideRules` leaves out the event's
   * rules as placeBooking's byHost does (a past time, other bookings and busy calendars still refuse it); `reason`
   * goes with the change to the e-mails and webhooks, which say the host moved it.
   */
  byHost?: { overrideRules: boolean; reason: string | null };
  /** Where a team booking may move (teamMove.ts). */
  teamMoves: TeamMoves;
}

/**
 * Reschedule, for the booker and the host alike: the new booking (or the one a first try of the same keyed request
 * made), and the event and host it was checked against when this request moved it. The booking moves within its
 * own event and keeps its length while the event still offers it; 422 when it can no longer be changed, 409 when
 * the time is not free for it.
 */
export async function moveBooking({ deps, ports, old, startTime, hctx, byHost, teamMoves }: MoveBooking): Promise<{ booking: BookingDoc; known?: { event: EventDoc; host: UserDoc }; team?: TeamMove }> {
  const id = bookingIdFor(hctx);
  const made = keyedWriteOf(hctx) === undefined ? undefined : await writtenBefore(deps.wake, id, deps.clock.now());
  if (made?.rescheduled_from?.equals(old._id)) return { booking: made };
  requireFields("booking", { start_time: startTime });
  const start = readStart(startTime);
  const problem = changeProblem({ status: old.status, start: old.start_time, end: old.end_time }, deps.clock.now());
  if (problem) throw refusal(REASONS.notChangeable, problem);
  // _id index. The booking moves within its own event, which must still take bookings.
  const event = await EventModel.findOne({ _id: old.event_id, deleted: false, active: true }).lean<EventDoc>();
  const host = await UserModel.findById(old.user_id).lean<UserDoc>();
  // A team booking's hosts are the team event's (teamMove.ts), not the account it is kept under.
  if (!event || (!host && !event.team_id)) throw refusal(REASONS.changedMeanwhile, "the event no longer takes bookings");
  if (!byHost) {
    const refused = bookerChangeRefusal({ status: old.status, start: old.start_time, end: old.end_time }, deps.clock.now(), storedRules(event).cancel_notice_minutes);
    if (refused) throw refused;
  }
  const slotCheck = { except: old._id, overrideRules: byHost?.overrideRules ?? false };
  const minutes = keptLength(event, old);
  const team = event.team_id ? await teamMoves(old, event, start, minutes, deps.clock.now(), slotCheck) : undefined;
  const targets: MoveTarget[] = team?.targets ?? [{ free: await checkSlotFree(ports, deps.accountReads, { host: host!, event, zone: ianaForServiceZone(host!.timezone) }, start, minutes, deps.clock.now(), slotCheck) }];
  const notify = byHost ? NOTIFY_EVERYONE : await deps.access.limitBookingsOf(old.user_id.toHexString(), old.attendee_email, old.guest_emails);
  const moveTo = async ({ free: { end, rules, places }, host: to }: MoveTarget) =>
    rescheduleBooking({
      wake: deps.wake,
      clock: deps.clock,
      old,
      start,
      end,
      paddingMinutes: event.padding_minutes,
      bufferBeforeMinutes: rules.buffer_before_minutes,
      calendarId: calendarOf(event),
      notify,
      places,
      id,
      seats: rules.seats_per_slot,
      ...(to ? { host: to } : {}),
      ...(rules.seats_per_slot !== null ? { meeting: await meetingOfNew(ports, event, to?.id ?? hostsOf(old)[0], start) } : {}),
      movedBy: byHost ? "host" : "booker",
      reason: byHost?.reason ?? null,
    });
  return { booking: await firstTaking(targets, moveTo), known: host ? { event, host } : undefined, team };
}

/**
 * `accountReads`: what the public calls read of a host is kept per process under its account's stamps; `teamMoves`:
 * where a team booking may move (teamMove.ts). The host's answer page's two RPCs are answers.ts
 * createRequestAnswers (src/app/services.ts serves both as one service).
 */
export function createPublicBookingService(
  deps: Pick<ServiceDeps, "appUrl" | "access" | "clock"> & { accountReads: AccountReads; wake: OutboxWake },
  ports: BookingPorts,
  teamMoves: TeamMoves,
  teamLinks: TeamLinks,
): Omit<ServiceImpl<typeof PublicBookingService>, "getRequestForHost" | "answerRequest"> {
  const reads = new PublicReads(deps.accountReads);
  const replies = new SlotReplies<ListSlotsResponse>();

  /** The free slots of the event for the days, zone and length asked (listSlots, by its urls or a link's token). */
  async function slotsOf(ctx: PublicEventContext, req: SlotsAsked, since: number): Promise<ListSlotsResponse> {
      // Either vocabulary ("Tokyo" or "Asia/Tokyo"); the slots are computed, and answered, in the IANA zone.
      const viewerZone = req.timezone === undefined || req.timezone === "" ? ctx.zone : ianaZoneOf("timezone", req.timezone);
      const now = deps.clock.now();
      const days = slotDays(req.dateFrom, req.dateTo, viewerZone, now);
      const from = wallClockToUtc(viewerZone, days.dateFrom, "00:00");
      const to = wallClockToUtc(viewerZone, addDays(days.dateTo, 1), "00:00");
      const minutes = chosenDuration(ctx.event, req.duration, "duration");
      const { query, booked, checksConflicts, settings } = await slotQuery(deps.accountReads, reads, ports, ctx, { viewerZone, days, from, to, minutes, since, now });
      // An answer made from these very reads (a change reads anew) is good until the clock moves past its slots.
      const key = `${ctx.event._id.toHexString()} ${minutes} ${viewerZone} ${days.dateFrom} ${days.dateTo}`;
      const inputs = [ctx.host, ctx.event, booked, settings.schedule];
      const kept = checksConflicts ? undefined : replies.get(key, inputs, now.getTime());
      if (kept !== undefined) return kept;
      const slots = computeSlots(query);
      const reply = deepFreeze(create(ListSlotsResponseSchema, { timezone: viewerZone, slots: slots.map((s) => ({ startTime: s.start.toISOString(), endTime: s.end.toISOString(), seatsLeft: s.seatsLeft })) }));
      if (!checksConflicts) replies.keep(key, inputs, slotsUnchangedUntil(query, slots), reply, slots.length + booked.length);
      return reply;
  }

  /** Books the event (createBooking, by its urls or a link's token) and answers the booker's view. */
  async function book(ctx: PublicEventContext, input: BookingInput | undefined, hctx: HandlerContext, link?: SingleUseLinkDoc): Promise<PublicBookingMessage> {
    return presentPublic(deps.appUrl(), deps.clock.now(), await placeBooking({ deps, ports, ctx, input, hctx, link }), ctx);
  }

  return {
    async getPublicProfile(req) {
      const host = req.userUrl === "" ? null : await accountByUrlKey(urlKey(req.userUrl));
      if (!host) throw notFound("user not found");
      // (user_id, created_at desc) index; the remaining conditions filter the host's few events.
      const events = await EventModel.find({ user_id: host._id, deleted: false, active: true, is_public: true }).sort({ created_at: -1 }).lean<EventDoc[]>();
      return {
        profile: {
          fullName: host.full_name,
          url: host.url,
          avatarName: avatarName(host.full_name),
          bio: host.bio ?? undefined,
          pictureUrl: host.picture_id ? pictureUrl(deps.appUrl(), host.picture_id) : undefined,
          locale: host.locale,
          timeFormat: host.time_format,
          brandColor: host.brand_color ?? undefined,
          brandLogoUrl: host.logo_id ? pictureUrl(deps.appUrl(), host.logo_id) : undefined,
          events: events.map(eventSummary),
        },
      };
    },

    async getPublicEvent(req) {
      return { event: await publicEventOf(deps.appUrl(), await bookableEvent(reads, req.userUrl, req.eventUrl)) };
    },

    async getLinkEvent(req) {
      const found = await linkedEvent(reads, teamLinks, req.token, deps.clock.now());
      return { event: found.team ? await found.team.event() : await publicEventOf(deps.appUrl(), found.ctx) };
    },

    async listSlots(req) {
      const since = performance.now();
      return slotsOf(await bookableEvent(reads, req.userUrl, req.eventUrl, since), req, since);
    },

    async listLinkSlots(req) {
      const since = performance.now();
      const found = await linkedEvent(reads, teamLinks, req.token, deps.clock.now(), since);
      const { timezone, slots } = found.team ? await found.team.slots(req, since) : await slotsOf(found.ctx, req, since);
      return { timezone, slots };
    },

    async createBooking(req, hctx) {
      return { booking: await book(await bookableEvent(reads, req.userUrl, req.eventUrl), req.booking, hctx) };
    },

    async createLinkBooking(req, hctx) {
      const found = await linkedEvent(reads, teamLinks, req.token, deps.clock.now(), undefined, keyedWriteOf(hctx) === undefined ? undefined : bookingIdFor(hctx));
      return { booking: found.team ? await found.team.book(req.booking, hctx, found.link) : await book(found.ctx, req.booking, hctx, found.link) };
    },

    async getBooking(req) {
      return { booking: await presentPublic(deps.appUrl(), deps.clock.now(), await bookingByKey(req.privateKey), undefined, true) };
    },

    async setBookingReminders(req) {
      const booking = await bookingByKey(req.privateKey);
      requireObject("reminders", req.reminders);
      requireFields("reminders", { enabled: req.reminders.enabled });
      const unsubscribed = req.reminders.enabled !== true;
      await setRemindersUnsubscribed(booking, unsubscribed, deps.clock.now());
      return { booking: await presentPublic(deps.appUrl(), deps.clock.now(), { ...booking, reminders_unsubscribed: unsubscribed }, undefined, true) };
    },

    async cancelBooking(req, hctx) {
      requireObject("booking", req.booking);
      const booking = await bookingByKey(req.privateKey);
      const keyed = keyedWriteOf(hctx);
      if (canceledBefore(booking, keyed)) return { booking: await presentPublic(deps.appUrl(), deps.clock.now(), booking) };
      const reason = checkCancelReason(req.booking.reason);
      // _id index. The event's cancel notice binds the booker (a deleted event's still does).
      const event = await EventModel.findById(booking.event_id, { cancel_notice_minutes: 1 }).lean<Pick<EventDoc, "cancel_notice_minutes">>();
      // Counted only for a booking that can still be canceled: a refused cancel writes to nobody.
      const refusal = bookerChangeRefusal({ status: booking.status, start: booking.start_time, end: booking.end_time }, deps.clock.now(), storedRules(event ?? {}).cancel_notice_minutes);
      if (refusal) throw refusal;
      const notify = await deps.access.limitCancelOf(booking.user_id.toHexString(), booking.attendee_email, booking.guest_emails);
      return { booking: await presentPublic(deps.appUrl(), deps.clock.now(), await cancelBooking({ wake: deps.wake, clock: deps.clock, booking, reason, canceledBy: "booker", notify, keyedWrite: keyed ?? null })) };
    },

    async rescheduleBooking(req, hctx) {
      const { booking, known, team } = await moveBooking({ deps, ports, old: await bookingByKey(req.privateKey), startTime: req.booking?.startTime, hctx, teamMoves });
      return { booking: team ? await team.present(booking, deps.appUrl(), deps.clock.now()) : await presentPublic(deps.appUrl(), deps.clock.now(), booking, known) };
    },
  };
}
