// How the host sees a booking: the record of the bookings list, and the whole booking (GetBooking, webhook messages).
import { fromJson, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import mongoose from "mongoose";
import type { BookingRecord, BookingSchema } from "../../../gen/scheduling/v1/booking_pb.js";
import type { BookingDoc } from "../../db/models/booking.js";
import type { EventDoc } from "../../db/models/event.js";
import { EventQuestionModel, QuestionModel } from "../../db/models/question.js";
import type { UserDoc } from "../../db/models/user.js";
import { bookingDuration, bookingRangeForHost, changeProblem, type HostFormats } from "../../domain/booking.js";
import { locationDisplayName } from "../../domain/event.js";
import { ianaForServiceZone } from "../../domain/timezones.js";
import { snapshotOf, type SnapshotBooking } from "./snapshots.js";
import { hostUsersOf, shownHosts, teamOfBooking } from "./hosts.js";
import { questionOwnersOf } from "../../domain/team.js";
import { TeamModel, type TeamDoc } from "../../db/models/team.js";
import { ReminderDeliveryModel, type ReminderDeliveryDoc } from "../../db/models/reminder.js";
import { shownStatus } from "../../domain/reminder.js";

/** A booking record's fields, plain, so the whole booking can be made of them. */
export type BookingRecordMessage = Omit<BookingRecord, "$typeName" | "$unknown">;
export type BookingMessage = MessageInitShape<typeof BookingSchema>;

/** What a booking record shows of its event. */
export type EventSummary = Pick<EventDoc, "_id" | "name" | "color" | "location">;

export function hostFormats(host: UserDoc): HostFormats {
  return { zone: ianaForServiceZone(host.timezone), dateFormat: host.date_format, timeFormat: host.time_format };
}

export function presentRecord(b: SnapshotBooking, event: EventSummary, host: HostFormats, now: Date): BookingRecordMessage {
  return {
    id: b.id,
    status: b.status,
    eventName: event.name,
    color: event.color,
    attendeeName: b.attendeeName,
    attendeeEmail: b.attendeeEmail,
    hostUiBookingRangeWithDate: bookingRangeForHost(b, host),
    uiDuration: bookingDuration(b),
    formattedLocationName: locationDisplayName(event.location),
    internalNotes: b.internalNotes ?? undefined,
    canBeRescheduled: changeProblem(b, now) === undefined,
    privateKey: b.privateKey,
    eventId: event._id.toHexString(),
    startTime: b.start.toISOString(),
    endTime: b.end.toISOString(),
    bookedAt: b.bookedAt.toISOString(),
    archived: b.archived,
    meetingUrl: b.meetingUrl ?? undefined,
    calendarEventStatus: b.calendarEventStatus,
    calendarEventError: b.calendarEventError ?? undefined,
    meetingStatus: b.meetingStatus,
    meetingError: b.meetingError ?? undefined,
    noShow: b.noShow ?? undefined,
    hosts: [],
  };
}

/** The questions a booking's answers refer to: their titles now, and their places on the event's form. */
interface AnsweredQuestions {
  titles: ReadonlyMap<string, string>;
  places: ReadonlyMap<string, number>;
}

const NO_QUESTIONS: AnsweredQuestions = { titles: new Map(), places: new Map() };

/**
 * Whose questions a team booking's answers may name: those its event's form names now (questionOwnersOf) and every
 * member of its team (an owner or admin who put a question on the form and took it off since).
 */
async function teamQuestionOwners(teamId: mongoose.Types.ObjectId, form: readonly { user_id: mongoose.Types.ObjectId; question_owner_id?: mongoose.Types.ObjectId | null }[]): Promise<mongoose.Types.ObjectId[]> {
  // _id index.
  const team = await TeamModel.findById(teamId, { members: 1 }).lean<Pick<TeamDoc, "members">>();
  return questionOwnersOf([...form, ...(team?.members ?? [])]);
}

async function answeredQuestions(b: Pick<BookingDoc, "event_id" | "user_id" | "team_id" | "answers">): Promise<AnsweredQuestions> {
  if (b.answers.length === 0) return NO_QUESTIONS;
  const ids = b.answers.flatMap((a) => (mongoose.isObjectIdOrHexString(a.question_id) ? [new mongoose.Types.ObjectId(a.question_id)] : []));
  // A team booking's event and form are its team's; their questions its owners' and admins' (teamQuestionOwners).
  const team = b.team_id ?? null;
  // _id index; the host's own questions only (a team booking's: of the accounts that may have put them on its form).
  const titled = (owners: readonly mongoose.Types.ObjectId[]) => QuestionModel.find({ _id: mongoose.trusted({ $in: ids }), user_id: mongoose.trusted({ $in: [...owners] }) }, { title: 1 }).lean();
  const [form, questions] = await Promise.all([
    // (user_id, event_id, order_number) index: the form as it is now, in order; a booking's event is its host's (or team's).
    EventQuestionModel.find({ user_id: team ?? b.user_id, event_id: b.event_id }, { question_id: 1, user_id: 1, question_owner_id: 1, _id: 0 }).sort({ order_number: 1, _id: 1 }).lean(),
    team === null ? titled([b.user_id]) : null,
  ]);
  const asked = questions ?? (await titled(await teamQuestionOwners(team as mongoose.Types.ObjectId, form)));
  return {
    titles: new Map(asked.map((q) => [q._id.toHexString(), q.title])),
    places: new Map(form.map((l, i) => [l.question_id.toHexString(), i])),
  };
}

/** A booking's reminder deliveries, oldest reminder first, each with the status the API shows (src/domain/reminder.ts). */
async function remindersOf(b: BookingDoc): Promise<NonNullable<BookingMessage["reminders"]>> {
  // (user_id, booking_id, reminder_id) unique index.
  const deliveries = await ReminderDeliveryModel.find({ user_id: b.user_id, booking_id: b._id }).lean<ReminderDeliveryDoc[]>();
  const booking = { status: b.status, remindersUnsubscribed: b.reminders_unsubscribed === true };
  return deliveries
    .sort((x, y) => x.reminder_id.toHexString().localeCompare(y.reminder_id.toHexString()))
    .map((d) => ({ reminderId: d.reminder_id.toHexString(), dueAt: d.due_at.toISOString(), status: shownStatus(d, booking), sentAt: d.sent_at?.toISOString() }));
}

/**
 * The host's whole booking (extensions.md "GET /api/v1/bookings/<booking_id>"): the record of the bookings list plus
 * the answers in the order of the event's form (answers to questions no longer on it after those, as sent), the
 * guests, the booker's zone, what became of it (cancel, reschedule links) and its meeting link; `withReminders`
 * (GetBooking) adds its reminders' deliveries.
 */
export async function presentBooking(b: BookingDoc, event: EventSummary, host: HostFormats, now: Date, withReminders = false): Promise<BookingMessage> {
  const [answers, reminders, team] = await Promise.all([presentAnswers(b), withReminders ? remindersOf(b) : Promise.resolve([]), teamFieldsOf(b)]);
  return {
    ...presentRecord(snapshotOf(b), event, host, now),
    answers,
    guestEmails: b.guest_emails ?? [],
    timezone: b.timezone ?? undefined,
    cancelReason: b.cancel_reason ?? undefined,
    canceledBy: b.canceled_by ?? undefined,
    canceledAt: b.canceled_at?.toISOString(),
    previousBookingId: b.rescheduled_from?.toHexString(),
    nextBookingId: b.rescheduled_to?.toHexString(),
    reminders,
    ...team,
  };
}

/** A booking's answers beside their questions' titles now, in the order of the event's form (answers to questions no longer on it after those, as sent). */
export async function presentAnswers(b: Pick<BookingDoc, "event_id" | "user_id" | "answers">): Promise<NonNullable<BookingMessage["answers"]>> {
  const questions = await answeredQuestions(b);
  const place = (questionId: string) => questions.places.get(questionId) ?? Number.MAX_SAFE_INTEGER;
  // A stable sort: answers off the form keep the order they were sent in.
  const answers = [...b.answers].sort((x, y) => place(x.question_id) - place(y.question_id));
  return answers.map((a) => ({
    questionId: a.question_id,
    question: questions.titles.get(a.question_id),
    value: fromJson(ValueSchema, (a.value ?? null) as JsonValue),
  }));
}

/** A team booking's hosts, why round robin chose its host, and its team (teams.md); nothing for a personal booking. */
async function teamFieldsOf(b: BookingDoc): Promise<Pick<BookingMessage, "hosts" | "assignmentReason" | "team">> {
  if (!b.team_id) return {};
  const [hosts, team] = await Promise.all([hostUsersOf(b), teamOfBooking(b)]);
  return {
    hosts: shownHosts(hosts),
    assignmentReason: b.assignment_reason ?? undefined,
    ...(team ? { team } : {}),
  };
}
