// UserService availability RPCs: the host's weekly hours, date overrides, notice and window, in the host's zone.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { AvailabilitySchema, DateOverride, GetAvailabilityRequest, UpdateAvailabilityRequest, WeeklyHours } from "../../../gen/scheduling/v1/user_pb.js";
import {
  WEEKDAYS,
  fromStoredAvailability,
  toStoredAvailability,
  validateAvailability,
  type Availability,
  type Hours,
  type HoursInput,
  type TimeInterval,
} from "../../domain/availability.js";
import { invalid, missingParams } from "../../domain/errors.js";
import type { Access } from "./context.js";
import { updateAccount } from "./writes.js";

const copy = (list: readonly TimeInterval[]): TimeInterval[] => list.map(({ start, end }) => ({ start, end }));

/** Weekly hours and date overrides as the proto messages carry them (Availability, Schedule). */
export function hoursMessage(h: Hours): Pick<MessageInitShape<typeof AvailabilitySchema>, "weeklyHours" | "dateOverrides"> {
  return {
    weeklyHours: Object.fromEntries(WEEKDAYS.map((d) => [d, copy(h.weeklyHours[d])])),
    dateOverrides: h.dateOverrides.map((o) => ({ date: o.date, intervals: copy(o.intervals) })),
  };
}

/** The proto messages' hours as the validator takes them (a weekday or list left out is none). */
export function hoursInput(weekly: WeeklyHours | undefined, overrides: readonly DateOverride[]): HoursInput {
  return { weeklyHours: weekly ? Object.fromEntries(WEEKDAYS.map((d) => [d, weekly[d]])) : undefined, dateOverrides: overrides };
}

function present(a: Availability, timezone: string): MessageInitShape<typeof AvailabilitySchema> {
  return {
    ...hoursMessage(a),
    minimumNoticeMinutes: a.minimumNoticeMinutes,
    bookingWindowDays: a.bookingWindowDays,
    timezone,
  };
}

export function availabilityMethods(access: Access) {
  return {
    async getAvailability(_req: GetAvailabilityRequest, ctx: HandlerContext) {
      const user = await access.authenticate(ctx);
      return { availability: present(fromStoredAvailability(user.availability), user.timezone) };
    },

    async updateAvailability(req: UpdateAvailabilityRequest, ctx: HandlerContext) {
      const user = await access.authenticate(ctx);
      const a = req.availability;
      if (!a) throw missingParams({ availability: ["weekly_hours", "minimum_notice_minutes", "booking_window_days"] });
      const checked = validateAvailability({
        ...hoursInput(a.weeklyHours, a.dateOverrides),
        minimumNoticeMinutes: a.minimumNoticeMinutes,
        bookingWindowDays: a.bookingWindowDays,
      });
      if (!checked.ok) throw invalid(checked.message, checked.field);
      // $set of the whole small object: the embedded server has no positional array updates.
      await updateAccount(access, user._id, { availability: toStoredAvailability(checked.value) });
      return { availability: present(checked.value, user.timezone) };
    },
  };
}
