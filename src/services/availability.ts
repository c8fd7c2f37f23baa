// UserService availability RPCs: the host's weekly hours, date overrides, notice and window, in the host's zone.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { AvailabilitySchema, GetAvailabilityRequest, UpdateAvailabilityRequest } from "../../gen/scheduling/v1/user_pb.js";
import { UserModel, type UserDoc } from "../db/models/user.js";
import { WEEKDAYS, validateAvailability, type Availability, type TimeInterval, type Weekday } from "../domain/availability.js";
import { invalid, missingParams } from "../domain/errors.js";
import { authenticate } from "./context.js";

/** The stored (snake_case) form, as the users collection embeds it. */
export interface StoredAvailability {
  weekly_hours: Record<Weekday, TimeInterval[]>;
  date_overrides: { date: string; intervals: TimeInterval[] }[];
  minimum_notice_minutes: number;
  booking_window_days: number;
}

const copy = (list: readonly TimeInterval[]): TimeInterval[] => list.map(({ start, end }) => ({ start, end }));

export function toStoredAvailability(a: Availability): StoredAvailability {
  const weekly = {} as Record<Weekday, TimeInterval[]>;
  for (const day of WEEKDAYS) weekly[day] = copy(a.weeklyHours[day]);
  return {
    weekly_hours: weekly,
    date_overrides: a.dateOverrides.map((o) => ({ date: o.date, intervals: copy(o.intervals) })),
    minimum_notice_minutes: a.minimumNoticeMinutes,
    booking_window_days: a.bookingWindowDays,
  };
}

type StoredShape = UserDoc["availability"];

export function fromStoredAvailability(s: StoredShape): Availability {
  const weekly = {} as Record<Weekday, TimeInterval[]>;
  const hours = (s.weekly_hours ?? {}) as Partial<Record<Weekday, TimeInterval[]>>;
  for (const day of WEEKDAYS) weekly[day] = copy(hours[day] ?? []);
  return {
    weeklyHours: weekly,
    dateOverrides: (s.date_overrides ?? []).map((o) => ({ date: o.date, intervals: copy(o.intervals ?? []) })),
    minimumNoticeMinutes: s.minimum_notice_minutes,
    bookingWindowDays: s.booking_window_days,
  };
}

function present(a: Availability, timezone: string): MessageInitShape<typeof AvailabilitySchema> {
  return {
    weeklyHours: Object.fromEntries(WEEKDAYS.map((d) => [d, copy(a.weeklyHours[d])])),
    dateOverrides: a.dateOverrides.map((o) => ({ date: o.date, intervals: copy(o.intervals) })),
    minimumNoticeMinutes: a.minimumNoticeMinutes,
    bookingWindowDays: a.bookingWindowDays,
    timezone,
  };
}

export function availabilityMethods() {
  return {
    async getAvailability(_req: GetAvailabilityRequest, ctx: HandlerContext) {
      const user = await authenticate(ctx);
      return { availability: present(fromStoredAvailability(user.availability), user.timezone) };
    },

    async updateAvailability(req: UpdateAvailabilityRequest, ctx: HandlerContext) {
      const user = await authenticate(ctx);
      const a = req.availability;
      if (!a) throw missingParams({ availability: ["weekly_hours", "minimum_notice_minutes", "booking_window_days"] });
      const weekly = a.weeklyHours;
      const checked = validateAvailability({
        weeklyHours: weekly ? Object.fromEntries(WEEKDAYS.map((d) => [d, weekly[d]])) : undefined,
        dateOverrides: a.dateOverrides,
        minimumNoticeMinutes: a.minimumNoticeMinutes,
        bookingWindowDays: a.bookingWindowDays,
      });
      if (!checked.ok) throw invalid(checked.message);
      // $set of the whole small object: the embedded server has no positional array updates.
      await UserModel.updateOne({ _id: user._id }, { $set: { availability: toStoredAvailability(checked.value) } });
      return { availability: present(checked.value, user.timezone) };
    },
  };
}
