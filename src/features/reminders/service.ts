// ReminderService: an event's reminders (create, list, get, update, delete) and the preview of what one sends; every write re-plans its deliveries through the outbox.
import type { JsonObject } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import { ReminderService } from "../../../gen/scheduling/v1/reminder_pb.js";
import { objectIdOf } from "../../db/ids.js";
import type { BookingDoc } from "../../db/models/booking.js";
import { EventModel } from "../../db/models/event.js";
import { ReminderModel, type ReminderDoc } from "../../db/models/reminder.js";
import { freePlaces, insertInFreePlace } from "../../db/places.js";
import type { UserDoc } from "../../db/models/user.js";
import { invalid, notFound, notInList, REASONS, refusal, requireFields, requireObject } from "../../domain/errors.js";
import {
  checkNewReminder,
  checkReminderUpdate,
  deliveryDueAt,
  recipientsOf,
  REMINDER_RECIPIENTS,
  REMINDERS_PER_EVENT,
  type Recipient,
  type ReminderFields,
} from "../../domain/reminder.js";
import type { Owing } from "../../outbox/wake.js";
import type { Access } from "../accounts/index.js";
import { bookingById } from "../bookings/index.js";
import { mailContextOf, renderReminderMail } from "../email/index.js";
import { localeOf } from "../../i18n/index.js";
import { mailMessages } from "../../i18n/mail.js";
import { managedEvent, ownOrManaged } from "../events/index.js";
import { bookingMessageData } from "../webhooks/index.js";
import { planReminderChange } from "./effects.js";
import { presentReminder, reminderJson } from "./present.js";

/**
 * The caller's reminder, or one of a team event of a team the caller owns or administers (a member: 403), of an
 * event that is not deleted; another account's is as unknown as a missing one.
 */
async function ownReminder(host: Readonly<UserDoc>, id: string): Promise<ReminderDoc> {
  const _id = objectIdOf(id);
  if (_id === null) throw notFound("reminder not found");
  // _id index, owner checked on the document (the caller, else the caller's teams).
  const reminder = await ownOrManaged(
    host,
    () => ReminderModel.findOne({ _id, user_id: host._id, deleted: false }).lean<ReminderDoc>(),
    (teams) => ReminderModel.findOne({ _id, user_id: mongoose.trusted({ $in: teams }), deleted: false }).lean<ReminderDoc>(),
    "reminder not found",
  );
  // _id index: the event must still be there.
  if (!(await EventModel.exists({ _id: reminder.event_id, user_id: reminder.user_id, deleted: false }))) throw notFound("reminder not found");
  return reminder;
}

/** The places (0 to REMINDERS_PER_EVENT - 1) the event's reminders do not hold. */
async function freeReminderPlaces(event: { _id: mongoose.Types.ObjectId; user_id: mongoose.Types.ObjectId }): Promise<number[]> {
  // (user_id, event_id, deleted, created_at) index.
  const held = await ReminderModel.find({ user_id: event.user_id, event_id: event._id, deleted: false }, { place: 1 }).lean();
  return freePlaces(held.map((r) => r.place), REMINDERS_PER_EVENT);
}

/**
 * Inserts a new reminder into a free place of its event; two creates at once that pick the same place meet the
 * unique index, and the second tries another. 422 once all are taken.
 */
async function insertInEventPlace(doc: Omit<ReminderDoc, "place">): Promise<ReminderDoc> {
  const placed = await insertInFreePlace(
    () => freeReminderPlaces({ _id: doc.event_id, user_id: doc.user_id }),
    REMINDERS_PER_EVENT,
    async (place) => {
      const reminder: ReminderDoc = { ...doc, place };
      await ReminderModel.collection.insertOne(reminder);
      return reminder;
    },
  );
  if (placed === null) throw refusal(REASONS.limitReached, TOO_MANY);
  return placed;
}

const TOO_MANY = `an event may have at most ${REMINDERS_PER_EVENT} reminders`;

/** Tries of an update or delete when another write changed the reminder between its read and its write. */
const WRITE_ATTEMPTS = 3;

/**
 * Writes a change of the reminder as its next version. The planning effect goes in first, waiting for that version
 * (src/features/reminders/effects.ts): a crash between the two writes leaves an effect that finds no such version
 * and goes, never a changed reminder whose deliveries keep the old plan.
 */
async function writeVersion({ wake, clock }: Owing, host: Readonly<UserDoc>, id: string, change: (r: ReminderDoc) => Partial<ReminderDoc>): Promise<ReminderDoc> {
  for (let attempt = 1; ; attempt++) {
    const current = await ownReminder(host, id);
    const now = clock.now();
    const changes = { ...change(current), version: current.version + 1, updated_at: now };
    await planReminderChange(current, changes.version, now);
    // _id index; over the version read, so two writes at once each plan what they wrote.
    const written = await ReminderModel.updateOne({ _id: current._id, version: current.version, deleted: false }, { $set: changes });
    if (written.matchedCount > 0) {
      wake.owed();
      return { ...current, ...changes };
    }
    if (attempt >= WRITE_ATTEMPTS) throw refusal(REASONS.changedMeanwhile, "reminder was changed meanwhile; try again");
  }
}

/** A booking to preview with: the host's own booking of the reminder's event, or a sample one a day ahead. */
async function previewBooking(host: Readonly<UserDoc>, r: ReminderDoc, bookingId: string | undefined, now: Date): Promise<BookingDoc> {
  if (bookingId !== undefined && bookingId !== "") {
    const booking = await bookingById(bookingId);
    // The reminder's account holds it: the host's own booking, or a booking of the team's (kept under a host of it).
    if (!booking || !(booking.user_id.equals(r.user_id) || booking.team_id?.equals(r.user_id) === true)) throw notFound("booking not found");
    if (!booking.event_id.equals(r.event_id)) throw invalid("booking_id is a booking of another event");
    return booking;
  }
  const start = new Date(Math.ceil(now.getTime() / 3_600_000) * 3_600_000 + 24 * 3_600_000);
  // _id index.
  const event = await EventModel.findById(r.event_id, { slot_minutes: 1 }).lean();
  return {
    _id: new mongoose.Types.ObjectId(),
    event_id: r.event_id,
    user_id: host._id,
    start_time: start,
    end_time: new Date(start.getTime() + (event?.slot_minutes ?? 30) * 60_000),
    padding_minutes: 0,
    status: "confirmed",
    archived: false,
    attendee_name: "",
    attendee_email: "booker@example.com",
    timezone: null,
    answers: [],
    guest_emails: [],
    booked_at: now,
    private_key: "sample",
    internal_notes: null,
    cancel_reason: null,
    canceled_at: null,
    rescheduled_from: null,
    rescheduled_to: null,
    imported: false,
    updated_at: now,
  };
}

/** The booker of a sample booking, a name of the host's language. */
function sampleName(locale: string): string {
  return mailMessages[localeOf(locale)].sampleAttendee;
}

function readRecipient(value: string | undefined, r: Pick<ReminderFields, "recipients">): Recipient {
  if (value === undefined || value === "") return recipientsOf(r.recipients)[0];
  if (value !== "booker" && value !== "host") notInList("recipient", REMINDER_RECIPIENTS.filter((x) => x !== "both"), value);
  return value;
}

export function createReminderService(deps: { access: Access; appUrl(): string } & Owing): ServiceImpl<typeof ReminderService> {
  return {
    async createReminder(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const event = await managedEvent(host, req.eventId);
      const input = req.reminder;
      requireFields("reminder", { timing: input?.timing, offset_minutes: input?.offsetMinutes });
      const fields = checkNewReminder(input as Required<Pick<NonNullable<typeof input>, "timing" | "offsetMinutes">>);
      if ((await freeReminderPlaces(event)).length === 0) throw refusal(REASONS.limitReached, TOO_MANY);
      const now = deps.clock.now();
      // Kept under the event's account: a team event's reminders are the team's, for each of its owner and admins.
      const doc = { _id: new mongoose.Types.ObjectId(), user_id: event.user_id, event_id: event._id, ...fields, version: 1, deleted: false, created_at: now, updated_at: now };
      // The planning effect first (it waits for the reminder): no crash leaves a reminder without its deliveries.
      await planReminderChange(doc, doc.version, now);
      const placed = await insertInEventPlace(doc);
      deps.wake.owed();
      return { reminder: presentReminder(placed, host.locale) };
    },

    async listReminders(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const event = await managedEvent(host, req.eventId, true);
      // (user_id, event_id, deleted, created_at) index.
      const reminders = await ReminderModel.find({ user_id: event.user_id, event_id: event._id, deleted: false }).sort({ created_at: 1, _id: 1 }).lean<ReminderDoc[]>();
      return { reminders: reminders.map((r) => presentReminder(r, host.locale)) };
    },

    async getReminder(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      return { reminder: presentReminder(await ownReminder(host, req.id), host.locale) };
    },

    async updateReminder(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      requireObject("reminder", req.reminder);
      const changes = checkReminderUpdate(req.reminder);
      if (Object.keys(changes).length === 0) return { reminder: presentReminder(await ownReminder(host, req.id), host.locale) };
      return { reminder: presentReminder(await writeVersion(deps, host, req.id, () => changes), host.locale) };
    },

    async deleteReminder(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      // Kept as deleted: its deliveries (sent ones included) still name it; the pending ones are canceled.
      await writeVersion(deps, host, req.id, () => ({ deleted: true, active: false }));
      return {};
    },

    async previewReminder(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const reminder = await ownReminder(host, req.id);
      const reader = readRecipient(req.recipient, reminder);
      const booking = await previewBooking(host, reminder, req.bookingId, deps.clock.now());
      const appUrl = deps.appUrl();
      const context = await mailContextOf(booking, reader === "host", appUrl);
      if (!context) throw notFound("reminder not found");
      const sample = booking.private_key === "sample";
      const data = sample ? { ...context.data, attendee: { ...context.data.attendee, name: sampleName(context.data.host.locale) } } : context.data;
      const unsubscribeUrl = reader === "booker" ? `${appUrl}/booking/${booking.private_key}/unsubscribe` : undefined;
      const mail = renderReminderMail(reader, data, reminder, unsubscribeUrl);
      const dueAt = deliveryDueAt(reminder, { start: booking.start_time, end: booking.end_time });
      let webhookMessage: JsonObject | undefined;
      if (reminder.channel === "webhook") {
        const bookingData = await bookingMessageData(sample ? { ...booking, attendee_name: data.attendee.name } : booking, appUrl, deps.clock.now());
        webhookMessage = { type: "booking.reminder", timestamp: dueAt.toISOString(), data: { ...bookingData, reminder: reminderJson(reminder, host.locale), due_at: dueAt.toISOString() } };
      }
      return {
        preview: {
          recipient: reader,
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
          dueAt: dueAt.toISOString(),
          ...(webhookMessage !== undefined ? { webhookMessage } : {}),
        },
      };
    },
  };
}
