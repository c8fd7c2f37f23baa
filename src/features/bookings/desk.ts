// The host's desk list (booking-kinds.md "The host's desk"): every booking of the caller's events, personal and team, newest start first, in cursor pages, each as GetBooking shows it.
import type { MessageInitShape } from "@bufbuild/protobuf";
import mongoose from "mongoose";
import type { ListAccountBookingsResponseSchema } from "../../../gen/scheduling/v1/booking_pb.js";
import { objectIdOf } from "../../db/ids.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import type { UserDoc } from "../../db/models/user.js";
import { deskCursorText, readDeskQuery, type DeskQuery } from "../../domain/desk.js";
import { invalid, notFound } from "../../domain/errors.js";
import { ianaForServiceZone } from "../../domain/timezones.js";
import { hostFormats, presentBooking, type EventSummary } from "./present.js";
import { heldBy } from "./reads.js";

type ObjectId = mongoose.Types.ObjectId;

export interface DeskRequest {
  statuses: readonly string[];
  eventIds: readonly string[];
  from?: string;
  to?: string;
  attendeeEmail?: string;
  noShow?: string;
  limit?: number;
  after?: string;
}

/** Whether the caller may see the event's bookings: their own event, or a team event they host. */
function isCallers(host: Pick<UserDoc, "_id">, e: Pick<EventDoc, "user_id" | "hosts">): boolean {
  return e.user_id.equals(host._id) || (e.hosts ?? []).some((h) => h.user_id.equals(host._id));
}

/** The events a filter names, each the caller's (a deleted one still names its old bookings); another's or an unknown one: 404. */
async function filterEvents(host: Pick<UserDoc, "_id">, ids: readonly string[]): Promise<ObjectId[]> {
  const wanted = [...new Set(ids)].map((id) => {
    const _id = objectIdOf(id);
    if (_id === null) throw invalid(`event_id "${id.slice(0, 40)}" is not an id`, "event_id");
    return _id;
  });
  if (wanted.length === 0) return [];
  // _id index.
  const events = await EventModel.find({ _id: mongoose.trusted({ $in: wanted }) }, { user_id: 1, hosts: 1 }).lean<Pick<EventDoc, "_id" | "user_id" | "hosts">[]>();
  if (events.length !== wanted.length || !events.every((e) => isCallers(host, e))) throw notFound("event not found");
  return wanted;
}

/**
 * The bookings filter: those the caller holds (heldBy: personal ones, and team ones they are a host of now), with the
 * filters asked and after the cursor.
 */
function deskFilter(host: Pick<UserDoc, "_id">, q: DeskQuery, eventIds: readonly ObjectId[]): Record<string, unknown> {
  const start: Record<string, Date> = {};
  if (q.from) start.$gte = q.from;
  if (q.to) start.$lt = q.to;
  const and: Record<string, unknown>[] = [heldBy(host._id)];
  if (q.after) {
    const id = new mongoose.Types.ObjectId(q.after.id);
    and.push({ $or: [{ start_time: mongoose.trusted({ $lt: q.after.start }) }, { start_time: q.after.start, _id: mongoose.trusted({ $lt: id }) }] });
  }
  return {
    $and: and,
    ...(q.statuses.length > 0 ? { status: mongoose.trusted({ $in: q.statuses }) } : {}),
    ...(eventIds.length > 0 ? { event_id: mongoose.trusted({ $in: [...eventIds] }) } : {}),
    ...(Object.keys(start).length > 0 ? { start_time: mongoose.trusted(start) } : {}),
    ...(q.attendeeEmail !== undefined ? { attendee_email: q.attendeeEmail } : {}),
    ...(q.noShow !== undefined ? { no_show: q.noShow } : {}),
  };
}

/** One page of the desk: at most `limit` bookings after the cursor, and the cursor of the next page when there is one. */
export async function deskPage(host: UserDoc, req: DeskRequest, now: Date): Promise<MessageInitShape<typeof ListAccountBookingsResponseSchema>> {
  const q = readDeskQuery(req, ianaForServiceZone(host.timezone));
  const eventIds = await filterEvents(host, req.eventIds);
  // (user_id, start_time, _id) and (host_ids, start_time, _id) indexes, one per branch, each in the list's order.
  const rows = await BookingModel.find(deskFilter(host, q, eventIds)).sort({ start_time: -1, _id: -1 }).limit(q.limit + 1).lean<BookingDoc[]>();
  const page = rows.slice(0, q.limit);
  const ids = [...new Map(page.map((b) => [b.event_id.toHexString(), b.event_id])).values()];
  // _id index; a deleted event still names its old bookings.
  const events = ids.length === 0 ? [] : await EventModel.find({ _id: mongoose.trusted({ $in: ids }) }, { name: 1, color: 1, location: 1 }).lean<EventSummary[]>();
  const byId = new Map(events.map((e) => [e._id.toHexString(), e]));
  const formats = hostFormats(host);
  const bookings = await Promise.all(
    page.flatMap((b) => {
      const event = byId.get(b.event_id.toHexString());
      return event ? [presentBooking(b, event, formats, now, true)] : [];
    }),
  );
  const last = page[page.length - 1];
  return { bookings, next: rows.length > q.limit && last ? deskCursorText({ start: last.start_time, id: last._id.toHexString() }) : undefined };
}
