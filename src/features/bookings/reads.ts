// The reads of one booking: the host's own by id, and what the effects of other features read (calendar, meeting, e-mail) when their turn comes: the booking, its answers with their questions.
import mongoose from "mongoose";
import { objectIdOf } from "../../db/ids.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { QuestionModel } from "../../db/models/question.js";
import { Code } from "@connectrpc/connect";
import { ApiError, notFound } from "../../domain/errors.js";
import type { UserDoc } from "../../db/models/user.js";
import { ownOrManaged } from "../events/index.js";

type ObjectId = mongoose.Types.ObjectId;

/** The booking as stored now; null for an id that is not one, or a booking that is gone. */
export async function bookingById(id: string | undefined): Promise<BookingDoc | null> {
  const _id = objectIdOf(id);
  // _id index.
  return _id === null ? null : BookingModel.findById(_id).lean<BookingDoc>();
}

/** The answers with their questions' titles, in the order they were given; a question deleted since is left out. */
export async function answersWithQuestions(b: Pick<BookingDoc, "answers">): Promise<{ question: string; value: unknown }[]> {
  const ids = b.answers.map((a) => objectIdOf(a.question_id)).filter((id): id is mongoose.Types.ObjectId => id !== null);
  if (ids.length === 0) return [];
  // _id index.
  const questions = await QuestionModel.find({ _id: mongoose.trusted({ $in: ids }) }, { title: 1 }).lean<{ _id: mongoose.Types.ObjectId; title: string }[]>();
  const titles = new Map(questions.map((q) => [q._id.toHexString(), q.title]));
  return b.answers.flatMap((a) => {
    const title = titles.get(a.question_id);
    return title === undefined ? [] : [{ question: title, value: a.value }];
  });
}

/**
 * Every booking of the seated slot `seat` belongs to (booking-kinds.md "Seats"), in any status, in the order they
 * were booked: the seats that left still name the slot's calendar event and meeting.
 */
export async function bookingsOfSlot(seat: Pick<BookingDoc, "user_id" | "event_id" | "start_time" | "seated_slot">): Promise<BookingDoc[]> {
  if (!seat.seated_slot) return [];
  // (user_id, event_id, start_time) index.
  const rows = await BookingModel.find({ user_id: seat.user_id, event_id: seat.event_id, start_time: seat.start_time }).lean<BookingDoc[]>();
  // Booking time first: ids made on different replicas in one second do not sort by time.
  const order = (b: BookingDoc) => `${String(b.booked_at?.getTime() ?? 0).padStart(15, "0")}:${b._id.toHexString()}`;
  return rows.filter((b) => b.seated_slot?.equals(seat.seated_slot!)).sort((a, b) => order(a).localeCompare(order(b)));
}

/**
 * The confirmed seats of the seated slot `seat` belongs to, in booking order: what the slot's one calendar event,
 * its one meeting and a seat's view of the others are made from, read afresh each time.
 */
export async function seatsOfSlot(seat: Pick<BookingDoc, "user_id" | "event_id" | "start_time" | "seated_slot">): Promise<BookingDoc[]> {
  return (await bookingsOfSlot(seat)).filter((b) => b.status === "confirmed");
}

/**
 * The bookings `hostId` holds: their personal ones (kept under their account, no host list), and the team ones
 * whose hosts they are now (host_ids). A team booking stays under the account of the host it was first given to
 * (user_id, its shard key), so after a reassign that host holds it no more.
 */
export function heldBy(hostId: ObjectId): Record<string, unknown> {
  return { $or: [{ host_ids: hostId }, { user_id: hostId, host_ids: mongoose.trusted({ $exists: false }) }] };
}

/** A booking by id that the host holds (heldBy: any host of a team booking may act on it), or null. */
function heldBooking(hostId: ObjectId, id: ObjectId | null): Promise<BookingDoc | null> {
  // _id index; a booking the caller holds no part of is as unknown as a missing one.
  return id === null ? Promise.resolve(null) : BookingModel.findOne({ _id: id, ...heldBy(hostId) }).lean<BookingDoc>().exec();
}

/** A booking by id that the host holds, or 404. */
export async function hostBooking(hostId: ObjectId, id: ObjectId | null): Promise<BookingDoc> {
  const b = await heldBooking(hostId, id);
  if (!b) throw notFound("booking not found");
  return b;
}

/**
 * A booking by id that the caller holds (hostBooking), else a team booking of a team whose owner or admin the
 * caller is (teams.md: they manage the team's bookings, docs/teams.md "Requests of team events"); else 404, a plain
 * member of that team too: a booking they hold no part of is as unknown to them as on every other booking route.
 */
export async function managedBooking(caller: Pick<UserDoc, "_id">, id: ObjectId | null): Promise<BookingDoc> {
  const found = await ownOrManaged(
    caller,
    // The booking as held, named by the caller for ownOrManaged's question.
    async () => {
      const b = await heldBooking(caller._id, id);
      return b && { user_id: caller._id, booking: b };
    },
    // _id index; a team booking names its team (team_id), which ownOrManaged asks the caller's role in.
    async (teams) => {
      const b = id === null ? null : await BookingModel.findOne({ _id: id, team_id: mongoose.trusted({ $in: teams }) }).lean<BookingDoc>();
      return b?.team_id ? { user_id: b.team_id, booking: b } : null;
    },
    "booking not found",
  ).catch((err: unknown) => {
    throw err instanceof ApiError && err.code === Code.PermissionDenied ? notFound("booking not found") : err;
  });
  return found.booking;
}
