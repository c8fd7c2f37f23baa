// ScheduleService: an account's named weekly hours (at most 20), which its events may be booked by instead of its availability.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import { ScheduleService, type ScheduleInput, type ScheduleSchema } from "../../../gen/scheduling/v1/schedule_pb.js";
import { objectIdOf } from "../../db/ids.js";
import { EventModel } from "../../db/models/event.js";
import { ScheduleModel, type ScheduleDoc } from "../../db/models/schedule.js";
import { freePlaces, insertInFreePlace } from "../../db/places.js";
import type { UserDoc } from "../../db/models/user.js";
import { DEFAULT_AVAILABILITY, fromStoredHours, toStoredHours, validateHours, type Hours } from "../../domain/availability.js";
import { invalid, notFound, REASONS, refusal, requireFields, requireObject } from "../../domain/errors.js";
import { checkScheduleName, scheduleInUse, SCHEDULES_PER_ACCOUNT } from "../../domain/eventRules.js";
import { hoursInput, hoursMessage, type Access } from "../accounts/index.js";
import { deleteSchedule, insertSchedule, updateSchedule } from "./writes.js";

type ScheduleMessage = MessageInitShape<typeof ScheduleSchema>;

const TOO_MANY = `an account may have at most ${SCHEDULES_PER_ACCOUNT} schedules`;
const UPDATABLE = ["name", "weekly_hours", "date_overrides"] as const;

function present(s: ScheduleDoc): ScheduleMessage {
  return { id: s._id.toHexString(), name: s.name, ...hoursMessage(fromStoredHours(s)) };
}

async function ownSchedule(host: Readonly<UserDoc>, id: string): Promise<ScheduleDoc> {
  const _id = objectIdOf(id);
  // _id index; the owner test makes another account's schedule as unknown as a missing one.
  const schedule = _id === null ? null : await ScheduleModel.findOne({ _id, user_id: host._id }).lean<ScheduleDoc>();
  if (!schedule) throw notFound("schedule not found");
  return schedule;
}

function checkedHours(input: ScheduleInput, fallback: Hours): Hours {
  const sent = input.weeklyHours !== undefined || input.dateOverrides.length > 0;
  if (!sent) return fallback;
  const checked = validateHours(hoursInput(input.weeklyHours ?? undefined, input.dateOverrides));
  if (!checked.ok) throw invalid(checked.message, checked.field);
  return checked.value;
}

/** The fields an update changes: the mask's paths, else those the input holds (AIP-134). */
function fieldsToChange(input: ScheduleInput, mask: readonly string[]): Set<(typeof UPDATABLE)[number]> {
  if (mask.length === 0) {
    return new Set(UPDATABLE.filter((f) => (f === "name" ? input.name !== undefined : f === "weekly_hours" ? input.weeklyHours !== undefined : input.dateOverrides.length > 0)));
  }
  const unknown = mask.filter((p) => !(UPDATABLE as readonly string[]).includes(p));
  if (unknown.length > 0) throw invalid(`update_mask names ${unknown.join(", ")}, which a schedule does not have (it has ${UPDATABLE.join(", ")})`);
  return new Set(mask as (typeof UPDATABLE)[number][]);
}

export function createScheduleService(access: Access): ServiceImpl<typeof ScheduleService> {
  return {
    async createSchedule(req, ctx) {
      const host = await access.authenticate(ctx);
      const input = req.schedule;
      requireFields("schedule", { name: input?.name });
      const name = checkScheduleName(input?.name ?? "");
      const hours = checkedHours(input as ScheduleInput, DEFAULT_AVAILABILITY);
      const now = access.clock.now();
      // (user_id, place) unique index: the places the account holds, and the database refuses a taken one.
      const readFree = async () => freePlaces((await ScheduleModel.find({ user_id: host._id }, { place: 1, _id: 0 }).lean()).map((s) => s.place), SCHEDULES_PER_ACCOUNT);
      const placed = await insertInFreePlace(readFree, SCHEDULES_PER_ACCOUNT, async (place) => {
        const doc = { _id: new mongoose.Types.ObjectId(), user_id: host._id, place, name, ...toStoredHours(hours), created_at: now, updated_at: now } as ScheduleDoc;
        await insertSchedule(doc);
        return doc;
      });
      if (placed === null) throw refusal(REASONS.limitReached, TOO_MANY);
      return { schedule: present(placed) };
    },

    async listSchedules(_req, ctx) {
      const host = await access.authenticate(ctx);
      // (user_id, created_at desc) index.
      const schedules = await ScheduleModel.find({ user_id: host._id }).sort({ created_at: -1, _id: -1 }).lean<ScheduleDoc[]>();
      return { schedules: schedules.map(present) };
    },

    async getSchedule(req, ctx) {
      const host = await access.authenticate(ctx);
      return { schedule: present(await ownSchedule(host, req.id)) };
    },

    async updateSchedule(req, ctx) {
      const host = await access.authenticate(ctx);
      const input = req.schedule;
      requireObject("schedule", input);
      const schedule = await ownSchedule(host, req.id);
      const fields = fieldsToChange(input, req.updateMask?.paths ?? []);
      const changes: Partial<Pick<ScheduleDoc, "name" | "weekly_hours" | "date_overrides" | "updated_at">> = {};
      if (fields.has("name")) changes.name = checkScheduleName(input.name ?? "");
      if (fields.has("weekly_hours") || fields.has("date_overrides")) {
        const checked = validateHours(
          hoursInput(fields.has("weekly_hours") ? input.weeklyHours : undefined, fields.has("date_overrides") ? input.dateOverrides : []),
        );
        if (!checked.ok) throw invalid(checked.message, checked.field);
        const stored = toStoredHours(checked.value);
        // Only the lists asked for: the other is not written back as read, which would undo a change another request
        // made to it meanwhile.
        Object.assign(changes, Object.fromEntries(Object.entries(stored).filter(([field]) => fields.has(field as keyof typeof stored))));
      }
      if (Object.keys(changes).length > 0) {
        changes.updated_at = access.clock.now();
        if (!(await updateSchedule(host._id, schedule._id, changes))) throw notFound("schedule not found");
      }
      return { schedule: present({ ...schedule, ...changes } as ScheduleDoc) };
    },

    async deleteSchedule(req, ctx) {
      const host = await access.authenticate(ctx);
      const schedule = await ownSchedule(host, req.id);
      // (user_id, created_at) index: the account's few events, filtered on the schedule.
      const users = await EventModel.find({ user_id: host._id, deleted: false, schedule_id: schedule._id.toHexString() }, { name: 1 })
        .sort({ created_at: 1, _id: 1 })
        .lean();
      if (users.length > 0) throw scheduleInUse(users.map((e) => ({ id: e._id.toHexString(), name: e.name })));
      await deleteSchedule(host._id, schedule._id);
      return {};
    },
  };
}

/** The ids of the account's schedules, for an event's schedule_id. */
export async function scheduleIdsOf(userId: mongoose.Types.ObjectId): Promise<string[]> {
  // (user_id, place) unique index.
  const held = await ScheduleModel.find({ user_id: userId }, { _id: 1 }).lean();
  return held.map((s) => s._id.toHexString());
}

/** The hours of the account's schedule `id`, or null when it is gone (the event is then booked by the account's availability). */
export async function scheduleHours(userId: mongoose.Types.ObjectId, id: string): Promise<Hours | null> {
  const _id = objectIdOf(id);
  // _id index.
  const schedule = _id === null ? null : await ScheduleModel.findOne({ _id, user_id: userId }, { weekly_hours: 1, date_overrides: 1 }).lean<ScheduleDoc>();
  return schedule ? fromStoredHours(schedule) : null;
}
