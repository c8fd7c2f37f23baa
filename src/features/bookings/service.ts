// BookingService: the host's bookings of an event (five categories, counts, attendees), the desk of all of them, and actions on one booking.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { BookingService, ListBookingsResponseSchema, type ListBookingsResponse } from "../../../gen/scheduling/v1/booking_pb.js";
import { deepFreeze } from "../../domain/frozen.js";
import type { BookingDoc } from "../../db/models/booking.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import type { UserDoc } from "../../db/models/user.js";
import type { Clock } from "../../domain/clock.js";
import {
  aggregateAttendees,
  categoryRule,
  checkCancelReason,
  checkInternalNotes,
  inCategory,
  listingRange,
  matchesNoShow,
  readNoShow,
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
import { accountsByKey, pictureUrl } from "../accounts/index.js";
import { managedEvent } from "../events/index.js";
import { objectIdOf } from "../../db/ids.js";
import { hostFormats, presentBooking, presentRecord, type EventSummary } from "./present.js";
import { eventBookingHolders } from "./hosts.js";
import { bookingsOfEvent, snapshotOf, type SnapshotBooking } from "./snapshots.js";
import { cancelBooking, canceledBefore, recordNoShow, updateHostFields } from "./writes.js";
import { confirmPending, declinePending } from "./answers.js";
import { hostBooking, managedBooking } from "./reads.js";
import type { TeamBookForAttendee } from "./teamPublic.js";
import { keyedWriteOf } from "../../platform/transport/idempotency.js";
import type { OutboxWake } from "../../outbox/wake.js";
import type { ChangeFeed } from "./changes.js";
import { deskPage } from "./desk.js";
import { moveBooking, placeBooking, type BookingPorts, type TeamMoves } from "./publicService.js";
import type { AccountReads } from "../../db/accountVersions.js";

/**
 * The caller's event, or a team's the caller owns or administers, with every booking of it (a team event's are kept
 * under its hosts' accounts), as the host's lists, counts and attendees read them. Do not modify either.
 */
async function managedEventBookings(host: UserDoc, eventId: string, clock: Clock): Promise<{ event: EventDoc; bookings: readonly SnapshotBooking[] }> {
  const event = await managedEvent(host, eventId, true);
  const holders = await eventBookingHolders(event);
  return { event, bookings: await bookingsOfEvent(holders === undefined ? event : { ...event, holders }, clock) };
}

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
function reusablePage(bookings: readonly SnapshotBooking[], key: string, at: Date, compute: () => MessageInitShape<typeof ListBookingsResponseSchema>): ListBookingsResponse {
  const now = at.getTime();
  let pages = recentPages.get(bookings);
  if (!pages) recentPages.set(bookings, (pages = new Map()));
  const hit = pages.get(key);
  if (hit && now - hit.at < PAGE_REUSE_MS) return hit.answer;
  if (pages.size >= MAX_PAGES_PER_SNAPSHOT) for (const [k, p] of pages) if (now - p.at >= PAGE_REUSE_MS) pages.delete(k);
  const answer = deepFreeze(create(ListBookingsResponseSchema, compute()));
  if (pages.size < MAX_PAGES_PER_SNAPSHOT) pages.set(key, { at: now, answer });
  return answer;
}

/** `teamMoves`: where a team booking may move (teamMove.ts), the host's move as the booker's; `teamBook`: a team event booked for someone (teamPublic.ts). */
export function createBookingService(
  deps: ServiceDeps & { wake: OutboxWake; changeFeed: ChangeFeed; accountReads: AccountReads },
  ports: BookingPorts,
  teamMoves: TeamMoves,
  teamBook: TeamBookForAttendee,
): ServiceImpl<typeof BookingService> {
  return {
    async listBookings(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const { event, bookings } = await managedEventBookings(host, req.eventId, deps.clock);
      const formats = hostFormats(host);
      const now = deps.clock.now();
      const category = readCategory(req.category);
      const range = listingRange(category, req.dateFrom, req.dateTo, formats.zone, now);
      const rule = categoryRule(category, range, now);
      const page = readPage(req.page);
      const noShow = readNoShow(req.noShow);
      // Everything the answer depends on but the bookings (the key of the snapshot's page memo) and the clock.
      const key = JSON.stringify([event.name, event.color, event.location, formats, category, range, page, noShow]);
      return reusablePage(bookings, key, now, () => {
        const selected = selectCategory(bookings, rule).filter((b) => matchesNoShow(b, noShow));
        return {
          page: paginationOf(page, selected.length),
          records: selected.slice(page.skip, page.skip + page.limit).map((b) => presentRecord(b, event, formats, now)),
        };
      });
    },

    async countBookings(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const { bookings } = await managedEventBookings(host, req.eventId, deps.clock);
      const zone = ianaForServiceZone(host.timezone);
      const now = deps.clock.now();
      // Each category with its own default range, so every count equals its list's total_records.
      const count = (c: Category) => {
        const rule = categoryRule(c, listingRange(c, req.dateFrom, req.dateTo, zone, now), now);
        return bookings.reduce((n, b) => (inCategory(b, rule) ? n + 1 : n), 0);
      };
      return { recent: count("recent"), upcoming: count("upcoming"), past: count("past"), canceled: count("canceled"), archived: count("archived"), pending: count("pending") };
    },

    async listAttendees(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const bookings = (await managedEventBookings(host, req.eventId, deps.clock)).bookings.filter((b) => b.status === "confirmed" || b.status === "canceled");
      const emails = [...new Set(bookings.map((b) => b.attendeeEmail))];
      const users = await accountsByKey("email", emails, ["email", "picture_id"]);
      const appUrl = deps.appUrl();
      const accounts = new Map<string, AttendeeAccount>([...users].map(([email, u]) => [email, { logo: u.picture_id ? pictureUrl(appUrl, u.picture_id) : undefined }]));
      const attendees = aggregateAttendees(
        bookings.map((b) => ({ id: b.id, email: b.attendeeEmail, name: b.attendeeName, status: b.status, start: b.start })),
        hostFormats(host),
        accounts,
      );
      return { attendees };
    },

    async getBooking(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const booking = await managedBooking(host, objectIdOf(req.id));
      return { booking: await presentBooking(booking, await eventOf(booking), hostFormats(host), deps.clock.now(), true) };
    },

    async updateBooking(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const input = req.booking;
      requireObject("booking", input);
      const booking = await hostBooking(host._id, objectIdOf(req.id));
      const changes: { internal_notes?: string | null; archived?: boolean } = {};
      if (input.internalNotes !== undefined) changes.internal_notes = checkInternalNotes(input.internalNotes);
      if (input.archived !== undefined) changes.archived = input.archived;
      const updated = await updateHostFields(booking, changes, deps.clock.now());
      return { booking: presentRecord(snapshotOf(updated), await eventOf(booking), hostFormats(host), deps.clock.now()) };
    },

    async cancelBooking(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      requireObject("booking", req.booking);
      const booking = await hostBooking(host._id, objectIdOf(req.id));
      // A retry of a keyed cancel whose answer was lost finds it done, and answers the booking as it is.
      const keyed = keyedWriteOf(ctx);
      const canceled = canceledBefore(booking, keyed) ? booking : await cancelBooking({ wake: deps.wake, clock: deps.clock, booking, reason: checkCancelReason(req.booking.reason), canceledBy: "host", keyedWrite: keyed ?? null });
      return { booking: presentRecord(snapshotOf(canceled), await eventOf(booking), hostFormats(host), deps.clock.now()) };
    },

    async confirmBooking(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const booking = await managedBooking(host, objectIdOf(req.id));
      const confirmed = await confirmPending(deps, ports, booking);
      return { booking: await presentBooking(confirmed, await eventOf(booking), hostFormats(host), deps.clock.now()) };
    },

    async declineBooking(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const booking = await managedBooking(host, objectIdOf(req.id));
      const declined = await declinePending(deps, booking, req.booking?.reason);
      return { booking: await presentBooking(declined, await eventOf(booking), hostFormats(host), deps.clock.now()) };
    },

    async recordNoShow(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      requireObject("booking", req.booking);
      const booking = await hostBooking(host._id, objectIdOf(req.id));
      const recorded = await recordNoShow({ wake: deps.wake, clock: deps.clock, booking, noShow: readNoShow(req.booking.noShow) });
      return { booking: await presentBooking(recorded, await eventOf(booking), hostFormats(host), deps.clock.now()) };
    },

    async listBookingChanges(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      return deps.changeFeed.list(host, { after: req.after, limit: req.limit, eventIds: req.eventIds });
    },

    async listAccountBookings(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      return deskPage(host, req, deps.clock.now());
    },

    async bookForAttendee(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      // The caller's event, or a team's they own or administer (docs/teams.md "Booking for someone"): a plain member 403.
      const event = await managedEvent(host, req.eventId);
      const input = req.booking;
      requireObject("booking", input);
      const byHost = { notifyAttendee: input.notifyAttendee ?? true, overrideRules: input.overrideRules ?? false };
      const booking = event.team_id
        ? await teamBook(event, input, ctx, byHost)
        : await placeBooking({ deps, ports, ctx: { host, event, zone: ianaForServiceZone(host.timezone) }, input, hctx: ctx, byHost });
      return { booking: await presentBooking(booking, event, hostFormats(host), deps.clock.now(), true) };
    },

    async rescheduleBooking(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      // A booking they hold (hostBooking), else 404; a team booking moves as its booker's link moves it (moveBooking).
      const old = await hostBooking(host._id, objectIdOf(req.id));
      const byHost = { overrideRules: req.booking?.overrideRules ?? false, reason: checkCancelReason(req.booking?.reason) };
      const { booking, known } = await moveBooking({ deps, ports, old, startTime: req.booking?.startTime, hctx: ctx, byHost, teamMoves });
      return { booking: await presentBooking(booking, known?.event ?? (await eventOf(booking)), hostFormats(host), deps.clock.now(), true) };
    },

    async *watchBookingChanges(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      // The key is asked about again before each delivery: a regenerated key's stream ends UNAUTHENTICATED (guarantees.md).
      yield* deps.changeFeed.watch(host, { after: req.after, eventIds: req.eventIds }, { signal: ctx.signal, keyStillValid: () => deps.access.keyStillValid(ctx, host) });
    },
  };
}
