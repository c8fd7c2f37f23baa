// AdminService.ImportBookings: all-or-nothing import of existing bookings from another platform.
import mongoose from "mongoose";
import type { ImportBookingsRequest } from "../../../gen/scheduling/v1/admin_pb.js";
import type { BookingDoc } from "../../db/models/booking.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { checkImportEntry, IMPORT_MAX_ENTRIES } from "../../domain/booking.js";
import { invalid, missingParams } from "../../domain/errors.js";
import { insertImported, newPrivateKey } from "./writes.js";

const MINUTE = 60_000;

/**
 * Every entry is checked before anything is written; the first bad one rejects the whole call
 * with a message naming its index and field. The event may belong to any account (the admin
 * token is trusted to speak for all of them) but must exist and not be deleted. The bookings take
 * the event's slot length and padding, keep their host's id, and claim no reservation cells:
 * imports move history in, so there is no availability check (docs/spec/extensions.md), and imported
 * bookings block later slots only through the availability check. One insertMany in one
 * transaction: all or nothing.
 */
/**
 * What happens right before the insert, for the events the import writes to (their ids and owners) and the first
 * new booking's id (a later reader can tell from it whether the import is in): src/app hands the reminders'
 * planning in, which must be recorded before the bookings so that no crash leaves them without their reminders.
 */
export type BeforeImport = (events: readonly { eventId: string; userId: string }[], firstBookingId: string, at: Date) => Promise<void>;

export async function importBookings(req: ImportBookingsRequest, now: Date, beforeInsert?: BeforeImport): Promise<{ imported: number; ids: string[] }> {
  const entries = req.bookings;
  // Proto3 cannot tell an empty list from none, so over every protocol an empty import is an import without its
  // `bookings` array (docs/spec/extensions.md "Bodies without their object"): there is nothing to import either way.
  if (entries.length === 0) throw missingParams({ bookings: [] });
  if (entries.length > IMPORT_MAX_ENTRIES) throw invalid(`bookings has more than ${IMPORT_MAX_ENTRIES} entries (${entries.length})`);
  const checked = entries.map((e, i) => checkImportEntry(e, i));

  const eventIds = [...new Set(checked.map((c) => c.eventId))].map((id) => new mongoose.Types.ObjectId(id));
  // _id index.
  const events = await EventModel.find({ _id: mongoose.trusted({ $in: eventIds }), deleted: false }, { user_id: 1, slot_minutes: 1, padding_minutes: 1 }).lean<
    Pick<EventDoc, "_id" | "user_id" | "slot_minutes" | "padding_minutes">[]
  >();
  const byId = new Map(events.map((e) => [e._id.toHexString(), e]));
  checked.forEach((c, i) => {
    if (!byId.has(c.eventId)) throw invalid(`bookings[${i}].event_id does not name an event`);
  });

  const docs: BookingDoc[] = checked.map((c) => {
    const event = byId.get(c.eventId)!;
    return {
      _id: new mongoose.Types.ObjectId(),
      event_id: event._id,
      user_id: event.user_id,
      start_time: c.start,
      end_time: new Date(c.start.getTime() + event.slot_minutes * MINUTE),
      padding_minutes: event.padding_minutes,
      status: c.status,
      archived: c.archived,
      attendee_name: c.attendeeName,
      attendee_email: c.attendeeEmail,
      timezone: null,
      answers: [],
      guest_emails: [],
      booked_at: c.bookedAt ?? now,
      private_key: newPrivateKey(event.user_id),
      internal_notes: c.internalNotes,
      cancel_reason: null,
      canceled_at: c.status === "canceled" ? now : null,
      rescheduled_from: null,
      rescheduled_to: null,
      imported: true,
      updated_at: now,
    };
  });
  await beforeInsert?.(events.map((e) => ({ eventId: e._id.toHexString(), userId: e.user_id.toHexString() })), docs[0]._id.toHexString(), now);
  await insertImported(docs, now);
  return { imported: docs.length, ids: docs.map((d) => d._id.toHexString()) };
}
