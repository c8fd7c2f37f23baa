// PublicBookingService: what the booking page calls without a key — the event, its free slots, booking, and the booker's own booking.
import { create, fromJson, toJson, type JsonObject, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import { ListSlotsResponseSchema, PublicBookingService, type BookingAnswer, type ListSlotsResponse, type PublicBookingSchema } from "../../../gen/scheduling/v1/public_booking_pb.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { EventQuestionModel, QuestionModel, type QuestionDoc } from "../../db/models/question.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import {
  changeProblem,
  meetingStatusOf,
  checkAttendee,
  checkCancelReason,
  checkGuestEmails,
  readIsoTime,
  slotDays,
} from "../../domain/booking.js";
import { checkAnswers, questionSettings, type AnswerValue, type FormQuestion } from "../../domain/questions.js";
import { invalid, notFound, requireFields, requireObject } from "../../domain/errors.js";
import { descriptionForDisplay, eventUrlKey, locationDisplayName, NO_CALENDAR_SELECTED, publicLocation } from "../../domain/event.js";
import { avatarName, formatDurationMinutes } from "../../domain/format.js";
import { fromStoredAvailability, type Availability, type Hours } from "../../domain/availability.js";
import { bookerChangeRefusal, changeableUntil, eventAvailability, limitsOf, slotNotAvailable, storedRules, type StoredEventRules } from "../../domain/eventRules.js";
import { computeSlots, limitPeriods, limitReadRange, slotsUnchangedUntil, whyRefused, type BookingLimits, type BusyBooking, type LimitPeriod } from "../../domain/slots.js";
import { addDays, ianaForServiceZone, wallClockToUtc } from "../../domain/timezones.js";
import { ianaZoneOf } from "../../domain/zoneNames.js";
import { checkLocale, USER_DEFAULTS } from "../../domain/user.js";
import { userUrlKey } from "../../domain/urlKey.js";
import type { AccountReads } from "../../db/accountVersions.js";
import { PublicReads, SlotReplies } from "./publicReads.js";
import { deepFreeze } from "../../domain/frozen.js";
import { pictureUrl } from "../accounts/index.js";
import type { ServiceDeps } from "../accounts/index.js";
import { scheduleHours } from "../schedules/index.js";
import { busyAround, calendarFields, cancelBooking, canceledBefore, confirmBooking, rescheduleBooking, setRemindersUnsubscribed, writtenBefore, type HostBooking } from "./writes.js";
import { keyedWriteOf } from "../../platform/transport/idempotency.js";
import { ReminderDeliveryModel, type ReminderDeliveryDoc } from "../../db/models/reminder.js";
import { remindsBooker } from "../../domain/reminder.js";
import type { OutboxWake } from "../../outbox/wake.js";

const MINUTE = 60_000;

interface PublicEventContext {
  host: UserDoc;
  event: EventDoc;
  /** The host's IANA zone. */
  zone: string;
}

/** An active, undeleted event by the two parts of its absolute_url, or 404; `since`: when the request began (performance.now()). */
async function bookableEvent(reads: PublicReads, userUrl: string, eventUrl: string, since = performance.now()): Promise<PublicEventContext> {
  const host = userUrl === "" ? null : await reads.hostByUrlKey(userUrlKey(userUrl), since);
  const event = host === null || eventUrl === "" ? null : await reads.eventByUrlKey(host._id, eventUrlKey(eventUrl), since);
  if (!host || !event || !event.active) throw notFound("event not found");
  return { host, event, zone: ianaForServiceZone(host.timezone) };
}

interface FormEntry {
  question: QuestionDoc;
  required: boolean;
  orderNumber: number;
}

/** The event's active form questions, in form order. */
async function formOf(event: EventDoc): Promise<FormEntry[]> {
  // (event_id, order_number) index.
  const links = await EventQuestionModel.find({ event_id: event._id }).sort({ order_number: 1, _id: 1 }).lean();
  if (links.length === 0) return [];
  // _id index; only active questions of the host show on a booking form.
  const questions = await QuestionModel.find({ _id: mongoose.trusted({ $in: links.map((l) => l.question_id) }), user_id: event.user_id, state: "active" }).lean<QuestionDoc[]>();
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
  // (booking_id, reminder_id) unique index.
  const deliveries = await ReminderDeliveryModel.find({ booking_id: b._id }, { recipients: 1, channel: 1 }).lean<Pick<ReminderDeliveryDoc, "recipients" | "channel">[]>();
  return deliveries.some(remindsBooker);
}

/**
 * The booker's view. `known` is the event and host the request already read (a booking or a reschedule): asking
 * the database for them again would cost two round trips per booking (bench:writes). `withReminders`: whether the
 * event's reminders e-mail the booker is read too (the manage page's switch).
 */
async function presentPublic(appUrl: string, b: BookingDoc, known?: { event: EventDoc; host: UserDoc }, withReminders = false): Promise<PublicBookingMessage> {
  // _id indexes. A deleted event or a host gone still leave the booking readable.
  const [event, host] = known
    ? [known.event, known.host]
    : await Promise.all([
        EventModel.findById(b.event_id, { name: 1, location: 1, url: 1, cancel_notice_minutes: 1 }).lean<Pick<EventDoc, "name" | "location" | "url" | "cancel_notice_minutes">>(),
        UserModel.findById(b.user_id, { full_name: 1, url: 1, email: 1, locale: 1, time_format: 1, timezone: 1, start_day_of_week: 1, picture_id: 1, brand_color: 1, logo_id: 1 }).lean<
          Pick<UserDoc, "full_name" | "url" | "email" | "locale" | "time_format" | "timezone" | "start_day_of_week" | "picture_id" | "brand_color" | "logo_id">
        >(),
      ]);
  // _id index; only a moved booking has a successor to read.
  const [next, bookerReminders] = await Promise.all([
    b.rescheduled_to ? BookingModel.findById(b.rescheduled_to, { private_key: 1 }).lean<Pick<BookingDoc, "private_key">>() : null,
    withReminders ? hasBookerReminders(b) : false,
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
    changeable: bookerChangeRefusal({ status: b.status, start: b.start_time, end: b.end_time }, new Date(), cancelNotice) === undefined,
    changeableUntil: b.status === "confirmed" ? changeableUntil(b.start_time, cancelNotice).toISOString() : undefined,
    hostTimezone: ianaForServiceZone(host?.timezone ?? USER_DEFAULTS.timezone),
    hostStartDayOfWeek: host?.start_day_of_week ?? USER_DEFAULTS.start_day_of_week,
    hostPictureUrl: host?.picture_id ? pictureUrl(appUrl, host.picture_id) : undefined,
    hostBrandColor: host?.brand_color ?? undefined,
    hostBrandLogoUrl: host?.logo_id ? pictureUrl(appUrl, host.logo_id) : undefined,
    nextPrivateKey: next?.private_key,
    guestsNotified: b.guests_notified ?? true,
    remindersEnabled: b.reminders_unsubscribed !== true,
    bookerReminders,
  };
}

async function bookingByKey(privateKey: string): Promise<BookingDoc> {
  // private_key unique index.
  const b = privateKey === "" ? null : await BookingModel.findOne({ private_key: privateKey }).lean<BookingDoc>();
  if (!b) throw notFound("booking not found");
  return b;
}

/**
 * The id of the booking a write makes. Under an Idempotency-Key it is the same for every try of the request, so a
 * retry after an answer that was lost (a 503: the outcome unknown) finds the booking the first try made, and
 * answers it, instead of being refused by it (the time it holds: 409) or making a second one.
 */
function bookingIdFor(hctx: HandlerContext): mongoose.Types.ObjectId {
  const name = keyedWriteOf(hctx);
  return name === undefined ? new mongoose.Types.ObjectId() : new mongoose.Types.ObjectId(name.slice(0, 24));
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
  return limitsOf(rules, ctx.host.start_day_of_week, own);
}

interface FreeSlot {
  end: Date;
  rules: StoredEventRules;
  /** The limited periods the booking must take a place in (src/features/bookings/writes.ts). */
  places: LimitPeriod[];
}

/**
 * 409 `slot is not available` with the reason (extensions.md "Why a time is refused") unless `start` is a free
 * slot of the event for its host right now (the old booking of a reschedule set aside).
 */
async function checkSlotFree(
  ports: BookingPorts,
  accountReads: AccountReads,
  ctx: PublicEventContext,
  start: Date,
  except?: mongoose.Types.ObjectId,
): Promise<FreeSlot> {
  const { host, event } = ctx;
  const end = new Date(start.getTime() + event.slot_minutes * MINUTE);
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
    slotMinutes: event.slot_minutes,
    paddingMinutes: event.padding_minutes,
    bufferBeforeMinutes: rules.buffer_before_minutes,
    now: new Date(),
    busy: booked,
    calendarBusy: calendars,
    limits,
    start,
  });
  if (reason) throw slotNotAvailable(reason);
  return { end, rules, places: limitPeriods(limits, event._id.toHexString(), ctx.zone, start) };
}

/** The calendar the event's bookings are written to, or null. */
function calendarOf(event: Pick<EventDoc, "connected_calendar_id">): string | null {
  return event.connected_calendar_id === NO_CALENDAR_SELECTED ? null : event.connected_calendar_id;
}

function answersOf(list: readonly BookingAnswer[]): { questionId: string; value: AnswerValue }[] {
  return list.map((a) => ({ questionId: a.questionId, value: (a.value === undefined ? null : toJson(ValueSchema, a.value)) as AnswerValue }));
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

/** `accountReads`: what the public calls read of a host is kept per process under its account's stamps. */
export function createPublicBookingService(deps: Pick<ServiceDeps, "appUrl" | "access"> & { accountReads: AccountReads; wake: OutboxWake }, ports: BookingPorts): ServiceImpl<typeof PublicBookingService> {
  const reads = new PublicReads(deps.accountReads);
  const replies = new SlotReplies<ListSlotsResponse>();
  return {
    async getPublicProfile(req) {
      // url_key unique index.
      const host = req.userUrl === "" ? null : await UserModel.findOne({ url_key: userUrlKey(req.userUrl) }).lean<UserDoc>();
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
          events: events.map((e) => ({
            name: e.name,
            url: e.url,
            slotDuration: formatDurationMinutes(e.slot_minutes),
            description: descriptionForDisplay(e.description),
            locationKind: e.location.name,
            locationName: locationDisplayName(e.location),
            color: e.color,
          })),
        },
      };
    },

    async getPublicEvent(req) {
      const { host, event, zone } = await bookableEvent(reads, req.userUrl, req.eventUrl);
      const form = await formOf(event);
      const location = publicLocation(event.location);
      return {
        event: {
          name: event.name,
          description: descriptionForDisplay(event.description),
          slotDuration: formatDurationMinutes(event.slot_minutes),
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
          hostPictureUrl: host.picture_id ? pictureUrl(deps.appUrl(), host.picture_id) : undefined,
          color: event.color,
          hostBrandColor: host.brand_color ?? undefined,
          hostBrandLogoUrl: host.logo_id ? pictureUrl(deps.appUrl(), host.logo_id) : undefined,
        },
      };
    },

    async listSlots(req) {
      const since = performance.now();
      const ctx = await bookableEvent(reads, req.userUrl, req.eventUrl, since);
      // Either vocabulary ("Tokyo" or "Asia/Tokyo"); the slots are computed, and answered, in the IANA zone.
      const viewerZone = req.timezone === undefined || req.timezone === "" ? ctx.zone : ianaZoneOf("timezone", req.timezone);
      const now = new Date();
      const days = slotDays(req.dateFrom, req.dateTo, viewerZone, now);
      const from = wallClockToUtc(viewerZone, days.dateFrom, "00:00");
      const to = wallClockToUtc(viewerZone, addDays(days.dateTo, 1), "00:00");
      const rules = storedRules(ctx.event);
      // With a daily or weekly limit the bookings of the whole days or weeks are read, to count the event's own.
      const read = limitReadRange(from, to, { daily: rules.daily_limit, weekly: rules.weekly_limit }) ?? { from, to };
      const [booked, calendars, checksConflicts, settings] = await Promise.all([
        reads.busyBetween(ctx.host._id, read.from, read.to, since),
        ports.calendarBusy(ctx.host, from, to, "listing", since),
        ports.checksConflicts(ctx.host, since),
        slotSettings(deps.accountReads, ctx, since),
      ]);
      // An answer made from these very reads (a change reads anew) is good until the clock moves past its slots.
      const key = `${ctx.event._id.toHexString()} ${viewerZone} ${days.dateFrom} ${days.dateTo}`;
      const inputs = [ctx.host, ctx.event, booked, settings.schedule];
      const kept = checksConflicts ? undefined : replies.get(key, inputs, now.getTime());
      if (kept !== undefined) return kept;
      const query = {
        hostZone: ctx.zone,
        availability: settings.availability,
        slotMinutes: ctx.event.slot_minutes,
        paddingMinutes: ctx.event.padding_minutes,
        bufferBeforeMinutes: rules.buffer_before_minutes,
        now,
        busy: booked,
        calendarBusy: calendars,
        limits: eventLimits(ctx, rules, booked),
        rangeStartDate: days.dateFrom,
        rangeEndDate: days.dateTo,
        viewerZone,
      };
      const slots = computeSlots(query);
      const reply = deepFreeze(create(ListSlotsResponseSchema, { timezone: viewerZone, slots: slots.map((s) => ({ startTime: s.start.toISOString(), endTime: s.end.toISOString() })) }));
      if (!checksConflicts) replies.keep(key, inputs, slotsUnchangedUntil(query, slots), reply, slots.length + booked.length);
      return reply;
    },

    async createBooking(req, hctx) {
      const ctx = await bookableEvent(reads, req.userUrl, req.eventUrl);
      const id = bookingIdFor(hctx);
      const made = keyedWriteOf(hctx) === undefined ? undefined : await writtenBefore(deps.wake, id);
      if (made?.event_id.equals(ctx.event._id)) return { booking: await presentPublic(deps.appUrl(), made, ctx) };
      const input = req.booking;
      requireFields("booking", { start_time: input?.startTime, attendee_name: input?.attendeeName, attendee_email: input?.attendeeEmail });
      const start = readStart(input?.startTime);
      const attendee = checkAttendee(input?.attendeeName ?? "", input?.attendeeEmail ?? "");
      // Stored as an IANA zone whichever vocabulary the booker's page used.
      const timezone = input?.timezone === undefined || input.timezone === "" ? null : ianaZoneOf("timezone", input.timezone);
      const locale = input?.locale === undefined || input.locale === "" ? null : checkLocale(input.locale);
      const guests = checkGuestEmails(input?.guestEmails ?? [], ctx.event.enable_guest_emails, ctx.event.guest_emails_limit);
      const answers = checkAnswers(answersOf(input?.answers ?? []), formQuestions(await formOf(ctx.event)));

      const { end, rules, places } = await checkSlotFree(ports, deps.accountReads, ctx, start);
      await deps.access.limitNewBookerOf(hctx, ctx.host._id.toHexString(), attendee.email);
      const notify = await deps.access.limitBookingsOf(ctx.host._id.toHexString(), attendee.email, guests);
      const booking = await confirmBooking(deps.wake, {
        event_id: ctx.event._id,
        user_id: ctx.host._id,
        start_time: start,
        end_time: end,
        padding_minutes: ctx.event.padding_minutes,
        buffer_before_minutes: rules.buffer_before_minutes,
        attendee_name: attendee.name,
        attendee_email: attendee.email,
        timezone,
        locale,
        answers: answers.map((a) => ({ question_id: a.questionId, value: a.value })),
        guest_emails: guests,
        internal_notes: null,
        cancel_reason: null,
        canceled_at: null,
        rescheduled_from: null,
        rescheduled_to: null,
        ...(await ports.newMeeting(ctx.host._id, ctx.event.location.name, calendarOf(ctx.event))),
        ...calendarFields(calendarOf(ctx.event)),
      }, notify, places, id);
      return { booking: await presentPublic(deps.appUrl(), booking, ctx) };
    },

    async getBooking(req) {
      return { booking: await presentPublic(deps.appUrl(), await bookingByKey(req.privateKey), undefined, true) };
    },

    async setBookingReminders(req) {
      const booking = await bookingByKey(req.privateKey);
      requireObject("reminders", req.reminders);
      requireFields("reminders", { enabled: req.reminders.enabled });
      const unsubscribed = req.reminders.enabled !== true;
      await setRemindersUnsubscribed(booking, unsubscribed);
      return { booking: await presentPublic(deps.appUrl(), { ...booking, reminders_unsubscribed: unsubscribed }, undefined, true) };
    },

    async cancelBooking(req, hctx) {
      requireObject("booking", req.booking);
      const booking = await bookingByKey(req.privateKey);
      const keyed = keyedWriteOf(hctx);
      if (canceledBefore(booking, keyed)) return { booking: await presentPublic(deps.appUrl(), booking) };
      const reason = checkCancelReason(req.booking.reason);
      // _id index. The event's cancel notice binds the booker (a deleted event's still does).
      const event = await EventModel.findById(booking.event_id, { cancel_notice_minutes: 1 }).lean<Pick<EventDoc, "cancel_notice_minutes">>();
      // Counted only for a booking that can still be canceled: a refused cancel writes to nobody.
      const refusal = bookerChangeRefusal({ status: booking.status, start: booking.start_time, end: booking.end_time }, new Date(), storedRules(event ?? {}).cancel_notice_minutes);
      if (refusal) throw refusal;
      const notify = await deps.access.limitCancelOf(booking.user_id.toHexString(), booking.attendee_email, booking.guest_emails);
      return { booking: await presentPublic(deps.appUrl(), await cancelBooking(deps.wake, booking, reason, "booker", notify, keyed ?? null)) };
    },

    async rescheduleBooking(req, hctx) {
      const old = await bookingByKey(req.privateKey);
      const id = bookingIdFor(hctx);
      const made = keyedWriteOf(hctx) === undefined ? undefined : await writtenBefore(deps.wake, id);
      if (made?.rescheduled_from?.equals(old._id)) return { booking: await presentPublic(deps.appUrl(), made) };
      requireFields("booking", { start_time: req.booking?.startTime });
      const start = readStart(req.booking?.startTime);
      const problem = changeProblem({ status: old.status, start: old.start_time, end: old.end_time }, new Date());
      if (problem) throw invalid(problem);
      // _id index. The booking moves within its own event, which must still take bookings.
      const event = await EventModel.findOne({ _id: old.event_id, deleted: false, active: true }).lean<EventDoc>();
      const host = await UserModel.findById(old.user_id).lean<UserDoc>();
      if (!event || !host) throw invalid("the event no longer takes bookings");
      const refusal = bookerChangeRefusal({ status: old.status, start: old.start_time, end: old.end_time }, new Date(), storedRules(event).cancel_notice_minutes);
      if (refusal) throw refusal;
      const { end, rules, places } = await checkSlotFree(ports, deps.accountReads, { host, event, zone: ianaForServiceZone(host.timezone) }, start, old._id);
      const notify = await deps.access.limitBookingsOf(host._id.toHexString(), old.attendee_email, old.guest_emails);
      const moved = await rescheduleBooking(deps.wake, old, start, end, event.padding_minutes, calendarOf(event), notify, rules.buffer_before_minutes, places, id);
      return { booking: await presentPublic(deps.appUrl(), moved, { event, host }) };
    },
  };
}
