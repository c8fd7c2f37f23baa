// The caller's own event by id: read by the event service, its single-use links and the booking and reminder services.
import mongoose from "mongoose";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import type { UserDoc } from "../../db/models/user.js";
import { objectIdOf } from "../../db/ids.js";
import { readOncePerTurn } from "../../db/sharedRead.js";
import { notFound } from "../../domain/errors.js";

function ownEventFilter(host: UserDoc, id: string): { _id: mongoose.Types.ObjectId; user_id: mongoose.Types.ObjectId; deleted: false } | null {
  const _id = objectIdOf(id);
  return _id === null ? null : { _id, user_id: host._id, deleted: false };
}

/**
 * The caller's undeleted event with this id, or NOT_FOUND; shared by the event and booking services. `shared`:
 * concurrent callers asking within one turn get one read and one object (src/db/sharedRead.ts), for the host's
 * read-only booking lists, which many tabs or clients read at once; such a caller must not modify the event.
 */
export async function ownEvent(host: UserDoc, id: string, shared = false): Promise<EventDoc> {
  const filter = ownEventFilter(host, id);
  // _id index; owner and deleted flag make another account's or a deleted event as unknown as a missing one.
  const read = (f: NonNullable<typeof filter>) => EventModel.findOne(f).lean<EventDoc>();
  const event =
    filter === null ? null : shared ? await readOncePerTurn(`events ${filter._id.toHexString()} ${host._id.toHexString()}`, () => read(filter)) : await read(filter);
  if (!event) throw notFound("event not found");
  return event;
}

