// The schedules collection: an account's named weekly hours and date overrides, which events may be booked by instead of its availability.
import mongoose, { Schema, type InferSchemaType } from "mongoose";
import { hoursFields } from "./user.js";

const scheduleSchema = new Schema(
  {
    user_id: { type: Schema.Types.ObjectId, required: true },
    /**
     * The schedule's place among the account's (0 to SCHEDULES_PER_ACCOUNT − 1): the unique (user_id, place) index
     * keeps an account within the limit whatever requests race, as reservation cells keep bookings apart.
     */
    place: { type: Number, required: true },
    name: { type: String, required: true },
    ...hoursFields,
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: "schedules", versionKey: false },
);

// Indexes and the queries they serve:
//   (user_id, place) unique: creating a schedule takes a free place, and the places an account holds (find by user_id)
//   (user_id, created_at desc): GET /schedules, newest first
//   _id: one schedule (with user_id checked on the document), and an event's schedule when its slots are read
scheduleSchema.index({ user_id: 1, place: 1 }, { unique: true });
scheduleSchema.index({ user_id: 1, created_at: -1 });

export type ScheduleDoc = InferSchemaType<typeof scheduleSchema> & { _id: mongoose.Types.ObjectId };
export const ScheduleModel = mongoose.model("Schedule", scheduleSchema);
