// The read of one booking that the effects of other features make (calendar, meeting, e-mail) when their turn comes.
import { objectIdOf } from "../../db/ids.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";

/** The booking as stored now; null for an id that is not one, or a booking that is gone. */
export async function bookingById(id: string | undefined): Promise<BookingDoc | null> {
  const _id = objectIdOf(id);
  // _id index.
  return _id === null ? null : BookingModel.findById(_id).lean<BookingDoc>();
}
