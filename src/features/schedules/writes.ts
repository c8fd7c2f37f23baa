// The one writer of schedules: every write ends in the account's stamp (what public slots read of it is kept under it: src/db/accountVersions.ts), so no write path can forget it.
import type mongoose from "mongoose";
import { accountChanged } from "../../db/accountVersions.js";
import { ScheduleModel, type ScheduleDoc } from "../../db/models/schedule.js";

/** A new schedule, whole. Throws the duplicate key error of a place another create took a moment ago. */
export async function insertSchedule(doc: ScheduleDoc): Promise<void> {
  await ScheduleModel.collection.insertOne(doc);
  await accountChanged([doc.user_id], "settings");
}

/** Sets the account's schedule's fields; false when it is not there (deleted meanwhile). */
export async function updateSchedule(userId: mongoose.Types.ObjectId, id: mongoose.Types.ObjectId, set: Partial<Omit<ScheduleDoc, "_id" | "user_id">>): Promise<boolean> {
  // _id index, owner checked again so a concurrent delete stays a 404. The whole small lists are $set: the
  // embedded server has no positional array updates.
  const r = await ScheduleModel.updateOne({ _id: id, user_id: userId }, { $set: set });
  if (r.matchedCount === 0) return false;
  await accountChanged([userId], "settings");
  return true;
}

/** Deletes the account's schedule. */
export async function deleteSchedule(userId: mongoose.Types.ObjectId, id: mongoose.Types.ObjectId): Promise<void> {
  // _id index.
  await ScheduleModel.deleteOne({ _id: id, user_id: userId });
  await accountChanged([userId], "settings");
}
