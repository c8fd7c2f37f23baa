// BookingService: the host's bookings of an event (five categories, counts, attendees) and actions on one booking.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import { BookingService, type BookingRecordSchema } from "../../gen/scheduling/v1/booking_pb.js";
import { BookingModel, type BookingDoc } from "../db/models/booking.js";
import { EventModel, type EventDoc } from "../db/models/event.js";
import { UserModel, type UserDoc } from "../db/models/user.js";
import {
  aggregateAttendees,
  bookingDuration,
  bookingRangeForHost,
  CATEGORIES,
  categoryRule,
  changeProblem,
  checkCancelReason,
  checkInternalNotes,
  listingRange,
  paginationOf,
  readCategory,
  readPage,
  type AttendeeAccount,
  type Category,
  type CategoryRule,
  type HostFormats,
} from "../domain/booking.js";
import { notFound } from "../domain/errors.js";
import { locationDisplayName } from "../domain/event.js";
import { ianaForServiceZone } from "../domain/timezones.js";
import { authenticate, type ServiceDeps } from "./context.js";
import { pictureUrl } from "./present.js";
import { objectIdOf } from "./question.js";
import { cancelBooking, hostBooking } from "./reservations.js";

export type BookingRecordMessage = MessageInitShape<typeof BookingRecordSchema>;

/** What a booking record shows of its event. */
export type EventSummary = Pick<EventDoc, "_id" | "name" | "color" | "location">;

export function hostFormats(host: UserDoc): HostFormats {
  return { zone: ianaForServiceZone(host.timezone), dateFormat: host.date_format, timeFormat: host.time_format };
}

export function presentRecord(b: BookingDoc, event: EventSummary, host: HostFormats, now: Date): BookingRecordMessage {
  const times = { status: b.status, start: b.start_time, end: b.end_time };
  return {
    id: b._id.toHexString(),
    status: b.status,
    eventName: event.name,
    color: event.color,
    attendeeName: b.attendee_name,
    attendeeEmail: b.attendee_email,
    hostUiBookingRangeWithDate: bookingRangeForHost(times, host),
    uiDuration: bookingDuration(times),
    formattedLocationName: locationDisplayName(event.location),
    internalNotes: b.internal_notes ?? undefined,
    canBeRescheduled: changeProblem(times, now) === undefined,
    privateKey: b.private_key,
    eventId: b.event_id.toHexString(),
    startTime: b.start_time.toISOString(),
    endTime: b.end_time.toISOString(),
    bookedAt: b.booked_at.toISOString(),
    archived: b.archived,
  };
}

async function ownEvent(host: UserDoc, id: string): Promise<EventDoc> {
  const _id = objectIdOf(id);
  // _id index; another account's or a deleted event is as unknown as a missing one.
  const event = _id === null ? null : await EventModel.findOne({ _id, user_id: host._id, deleted: false }).lean<EventDoc>();
  if (!event) throw notFound("event not found");
  return event;
}

/** The database filter of one category (index notes in src/db/models/booking.ts). */
function filterOf(eventId: mongoose.Types.ObjectId, rule: CategoryRule): Record<string, unknown> {
  return {
    event_id: eventId,
    ...(rule.status === undefined ? {} : { status: rule.status }),
    archived: rule.archived,
    start_time: mongoose.trusted({ $gte: rule.startFrom, $lt: rule.startBefore }),
  };
}

const isEmptySpan = (rule: CategoryRule): boolean => rule.startFrom.getTime() >= rule.startBefore.getTime();

function count(eventId: mongoose.Types.ObjectId, rule: CategoryRule): Promise<number> {
  return isEmptySpan(rule) ? Promise.resolve(0) : BookingModel.countDocuments(filterOf(eventId, rule));
}

/** The event of a booking for display; a deleted event still names its old bookings. */
async function eventOf(b: BookingDoc): Promise<EventSummary> {
  // _id index.
  const event = await EventModel.findById(b.event_id, { name: 1, color: 1, location: 1 }).lean<EventSummary>();
  if (!event) throw notFound("event not found");
  return event;
}

export function createBookingService(deps: ServiceDeps): ServiceImpl<typeof BookingService> {
  return {
    async listBookings(req, ctx) {
      const host = await authenticate(ctx);
      const event = await ownEvent(host, req.eventId);
      const formats = hostFormats(host);
      const now = new Date();
      const category = readCategory(req.category);
      const rule = categoryRule(category, listingRange(category, req.dateFrom, req.dateTo, formats.zone, now), now);
      const page = readPage(req.page);
      const filter = filterOf(event._id, rule);
      const [total, rows] = isEmptySpan(rule)
        ? [0, []]
        : await Promise.all([
            BookingModel.countDocuments(filter),
            BookingModel.find(filter)
              .sort({ [rule.sort.field]: rule.sort.direction, _id: rule.sort.direction })
              .skip(page.skip)
              .limit(page.limit)
              .lean<BookingDoc[]>(),
          ]);
      return { page: paginationOf(page, total), records: rows.map((b) => presentRecord(b, event, formats, now)) };
    },

    async countBookings(req, ctx) {
      const host = await authenticate(ctx);
      const event = await ownEvent(host, req.eventId);
      const zone = ianaForServiceZone(host.timezone);
      const now = new Date();
      // Each category with its own default range, so every count equals its list's total_records.
      const counts = await Promise.all(
        CATEGORIES.map((c: Category) => count(event._id, categoryRule(c, listingRange(c, req.dateFrom, req.dateTo, zone, now), now))),
      );
      const by = Object.fromEntries(CATEGORIES.map((c, i) => [c, counts[i]])) as Record<Category, number>;
      return { recent: by.recent, upcoming: by.upcoming, past: by.past, canceled: by.canceled, archived: by.archived };
    },

    async listAttendees(req, ctx) {
      const host = await authenticate(ctx);
      const event = await ownEvent(host, req.eventId);
      // (event_id, status, …) index, status $in on its second field.
      const rows = await BookingModel.find(
        { event_id: event._id, status: mongoose.trusted({ $in: ["confirmed", "canceled"] }) },
        { attendee_email: 1, attendee_name: 1, status: 1, start_time: 1 },
      ).lean();
      const emails = [...new Set(rows.map((r) => r.attendee_email))];
      // email unique index.
      const users = emails.length === 0 ? [] : await UserModel.find({ email: mongoose.trusted({ $in: emails }) }, { email: 1, picture_id: 1 }).lean();
      const appUrl = deps.appUrl();
      const accounts = new Map<string, AttendeeAccount>(users.map((u) => [u.email, { logo: u.picture_id ? pictureUrl(appUrl, u.picture_id) : undefined }]));
      const attendees = aggregateAttendees(
        rows.map((r) => ({ id: r._id.toHexString(), email: r.attendee_email, name: r.attendee_name, status: r.status, start: r.start_time })),
        hostFormats(host),
        accounts,
      );
      return { attendees };
    },

    async updateBooking(req, ctx) {
      const host = await authenticate(ctx);
      const booking = await hostBooking(host._id, objectIdOf(req.id));
      const input = req.booking;
      const changes: { internal_notes?: string | null; archived?: boolean } = {};
      if (input?.internalNotes !== undefined) changes.internal_notes = checkInternalNotes(input.internalNotes);
      if (input?.archived !== undefined) changes.archived = input.archived;
      if (Object.keys(changes).length > 0) await BookingModel.updateOne({ _id: booking._id }, { $set: changes });
      return { booking: presentRecord({ ...booking, ...changes }, await eventOf(booking), hostFormats(host), new Date()) };
    },

    async cancelBooking(req, ctx) {
      const host = await authenticate(ctx);
      const booking = await hostBooking(host._id, objectIdOf(req.id));
      const canceled = await cancelBooking(booking, checkCancelReason(req.booking?.reason));
      return { booking: presentRecord(canceled, await eventOf(booking), hostFormats(host), new Date()) };
    },
  };
}
