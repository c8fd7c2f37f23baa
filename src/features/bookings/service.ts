// BookingService: the host's bookings of an event (five categories, counts, attendees) and actions on one booking.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import { BookingService, ListBookingsResponseSchema, type ListBookingsResponse } from "../../../gen/scheduling/v1/booking_pb.js";
import { deepFreeze } from "../../domain/frozen.js";
import type { BookingDoc } from "../../db/models/booking.js";
import { EventModel } from "../../db/models/event.js";
import { UserModel } from "../../db/models/user.js";
import {
  aggregateAttendees,
  categoryRule,
  checkCancelReason,
  checkInternalNotes,
  inCategory,
  listingRange,
  paginationOf,
  readCategory,
  readPage,
  selectCategory,
  type AttendeeAccount,
  type Category,
} from "../../domain/booking.js";
import { notFound, requireObject } from "../../domain/errors.js";
import { ianaForServiceZone } from "../../domain/timezones.js";
import type { ServiceDeps } from "../accounts/index.js";
import { pictureUrl } from "../accounts/index.js";
import { ownEvent } from "../events/index.js";
import { objectIdOf } from "../../db/ids.js";
import { hostFormats, presentBooking, presentRecord, type EventSummary } from "./present.js";
import { bookingsOfEvent, snapshotOf, type SnapshotBooking } from "./snapshots.js";
import { cancelBooking, canceledBefore, hostBooking, updateHostFields } from "./writes.js";
import { keyedWriteOf } from "../../platform/transport/idempotency.js";
import type { OutboxWake } from "../../outbox/wake.js";

/** The event of a booking for display; a deleted event still names its old bookings. */
async function eventOf(b: BookingDoc): Promise<EventSummary> {
  // _id index.
  const event = await EventModel.findById(b.event_id, { name: 1, color: 1, location: 1 }).lean<EventSummary>();
  if (!event) throw notFound("event not found");
  return event;
}


/**
 * Pages of a list computed within the last PAGE_REUSE_MS, per snapshot. A snapshot's bookings array is replaced by
 * every write that reaches it, so a page kept under it never shows an older state of the bookings than a fresh
 * read would; only the clock may have moved on by up to PAGE_REUSE_MS (a meeting that started in that second may
 * still show as upcoming). It makes N hosts' tabs, or one client's concurrent identical reads, cost one
 * selection and one page of records instead of N; test/api/snapshots.test.ts compares it with a fresh read.
 */
const PAGE_REUSE_MS = 1000;
const MAX_PAGES_PER_SNAPSHOT = 64;
const recentPages = new WeakMap<readonly SnapshotBooking[], Map<string, { at: number; answer: ListBookingsResponse }>>();

/** The page of `key` under this snapshot, made by `compute` unless made within PAGE_REUSE_MS; frozen, so the transports encode it once too (src/domain/frozen.ts). */
function reusablePage(bookings: readonly SnapshotBooking[], key: string, compute: () => MessageInitShape<typeof ListBookingsResponseSchema>): ListBookingsResponse {
  const now = Date.now();
  let pages = recentPages.get(bookings);
  if (!pages) recentPages.set(bookings, (pages = new Map()));
  const hit = pages.get(key);
  if (hit && now - hit.at < PAGE_REUSE_MS) return hit.answer;
  if (pages.size >= MAX_PAGES_PER_SNAPSHOT) for (const [k, p] of pages) if (now - p.at >= PAGE_REUSE_MS) pages.delete(k);
  const answer = deepFreeze(create(ListBookingsResponseSchema, compute()));
  if (pages.size < MAX_PAGES_PER_SNAPSHOT) pages.set(key, { at: now, answer });
  return answer;
}

export function createBookingService(deps: ServiceDeps & { wake: OutboxWake }): ServiceImpl<typeof BookingService> {
  return {
    async listBookings(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const event = await ownEvent(host, req.eventId, true);
      const formats = hostFormats(host);
      const now = new Date();
      const category = readCategory(req.category);
      const range = listingRange(category, req.dateFrom, req.dateTo, formats.zone, now);
      const rule = categoryRule(category, range, now);
      const page = readPage(req.page);
      const bookings = await bookingsOfEvent(event._id);
      // Everything the answer depends on but the bookings (the key of the snapshot's page memo) and the clock.
      const key = JSON.stringify([event.name, event.color, event.location, formats, category, range, page]);
      return reusablePage(bookings, key, () => {
        const selected = selectCategory(bookings, rule);
        return {
          page: paginationOf(page, selected.length),
          records: selected.slice(page.skip, page.skip + page.limit).map((b) => presentRecord(b, event, formats, now)),
        };
      });
    },

    async countBookings(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const event = await ownEvent(host, req.eventId, true);
      const zone = ianaForServiceZone(host.timezone);
      const now = new Date();
      const bookings = await bookingsOfEvent(event._id);
      // Each category with its own default range, so every count equals its list's total_records.
      const count = (c: Category) => {
        const rule = categoryRule(c, listingRange(c, req.dateFrom, req.dateTo, zone, now), now);
        return bookings.reduce((n, b) => (inCategory(b, rule) ? n + 1 : n), 0);
      };
      return { recent: count("recent"), upcoming: count("upcoming"), past: count("past"), canceled: count("canceled"), archived: count("archived") };
    },

    async listAttendees(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const event = await ownEvent(host, req.eventId, true);
      const bookings = (await bookingsOfEvent(event._id)).filter((b) => b.status === "confirmed" || b.status === "canceled");
      const emails = [...new Set(bookings.map((b) => b.attendeeEmail))];
      // email unique index.
      const users = emails.length === 0 ? [] : await UserModel.find({ email: mongoose.trusted({ $in: emails }) }, { email: 1, picture_id: 1 }).lean();
      const appUrl = deps.appUrl();
      const accounts = new Map<string, AttendeeAccount>(users.map((u) => [u.email, { logo: u.picture_id ? pictureUrl(appUrl, u.picture_id) : undefined }]));
      const attendees = aggregateAttendees(
        bookings.map((b) => ({ id: b.id, email: b.attendeeEmail, name: b.attendeeName, status: b.status, start: b.start })),
        hostFormats(host),
        accounts,
      );
      return { attendees };
    },

    async getBooking(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const booking = await hostBooking(host._id, objectIdOf(req.id));
      return { booking: await presentBooking(booking, await eventOf(booking), hostFormats(host), new Date(), true) };
    },

    async updateBooking(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const input = req.booking;
      requireObject("booking", input);
      const booking = await hostBooking(host._id, objectIdOf(req.id));
      const changes: { internal_notes?: string | null; archived?: boolean } = {};
      if (input.internalNotes !== undefined) changes.internal_notes = checkInternalNotes(input.internalNotes);
      if (input.archived !== undefined) changes.archived = input.archived;
      await updateHostFields(booking, changes);
      return { booking: presentRecord(snapshotOf({ ...booking, ...changes }), await eventOf(booking), hostFormats(host), new Date()) };
    },

    async cancelBooking(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      requireObject("booking", req.booking);
      const booking = await hostBooking(host._id, objectIdOf(req.id));
      // A retry of a keyed cancel whose answer was lost finds it done, and answers the booking as it is.
      const keyed = keyedWriteOf(ctx);
      const canceled = canceledBefore(booking, keyed) ? booking : await cancelBooking(deps.wake, booking, checkCancelReason(req.booking.reason), "host", undefined, keyed ?? null);
      return { booking: presentRecord(snapshotOf(canceled), await eventOf(booking), hostFormats(host), new Date()) };
    },
  };
}
