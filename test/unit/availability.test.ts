// Availability rules: defaults, the validator's field-named messages, and the stored form.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_AVAILABILITY,
  fromStoredAvailability,
  intervalsOn,
  isCalendarDate,
  parseTimeOfDay,
  toStoredAvailability,
  validateAvailability,
  weekdayOf,
  type AvailabilityCheck,
  type AvailabilityInput,
  type TimeInterval,
} from "../../src/domain/availability.js";

const base: AvailabilityInput = { minimumNoticeMinutes: 240, bookingWindowDays: 60 };

function failure(check: AvailabilityCheck): { field: string; message: string } {
  if (check.ok) throw new Error("expected a validation failure");
  return { field: check.field, message: check.message };
}

function monday(...intervals: TimeInterval[]): AvailabilityInput {
  return { ...base, weeklyHours: { monday: intervals } };
}

describe("DEFAULT_AVAILABILITY", () => {
  it("is Monday to Friday 09:00-17:00, weekend empty, 240 minutes notice, 60 days window", () => {
    const workday = [{ start: "09:00", end: "17:00" }];
    expect(DEFAULT_AVAILABILITY).toEqual({
      weeklyHours: {
        monday: workday,
        tuesday: workday,
        wednesday: workday,
        thursday: workday,
        friday: workday,
        saturday: [],
        sunday: [],
      },
      dateOverrides: [],
      minimumNoticeMinutes: 240,
      bookingWindowDays: 60,
    });
  });

  it("passes its own validator", () => {
    const check = validateAvailability(DEFAULT_AVAILABILITY);
    expect(check).toEqual({ ok: true, value: DEFAULT_AVAILABILITY });
  });

  it("cannot be changed by accident", () => {
    expect(Object.isFrozen(DEFAULT_AVAILABILITY)).toBe(true);
    expect(Object.isFrozen(DEFAULT_AVAILABILITY.weeklyHours)).toBe(true);
    expect(Object.isFrozen(DEFAULT_AVAILABILITY.weeklyHours.monday)).toBe(true);
  });
});

describe("validateAvailability: accepted input", () => {
  it("fills weekdays and overrides left out with none", () => {
    const check = validateAvailability({ ...base, weeklyHours: { tuesday: [{ start: "10:00", end: "11:00" }] } });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.value.weeklyHours.monday).toEqual([]);
    expect(check.value.weeklyHours.sunday).toEqual([]);
    expect(check.value.weeklyHours.tuesday).toEqual([{ start: "10:00", end: "11:00" }]);
    expect(check.value.dateOverrides).toEqual([]);
  });

  it("allows touching intervals, 00:00 starts and 24:00 ends", () => {
    const check = validateAvailability(
      monday({ start: "00:00", end: "09:00" }, { start: "09:00", end: "12:00" }, { start: "13:00", end: "24:00" }),
    );
    expect(check.ok).toBe(true);
  });

  it("returns a copy that later changes to the input do not reach", () => {
    const intervals = [{ start: "09:00", end: "10:00" }];
    const check = validateAvailability(monday(...intervals));
    intervals[0].start = "08:00";
    expect(check.ok && check.value.weeklyHours.monday[0].start).toBe("09:00");
  });

  it("keeps overrides, including empty ones, in the order given", () => {
    const check = validateAvailability({
      ...base,
      dateOverrides: [
        { date: "2026-12-25", intervals: [] },
        { date: "2026-12-24", intervals: [{ start: "09:00", end: "12:00" }] },
      ],
    });
    expect(check.ok && check.value.dateOverrides.map((o) => o.date)).toEqual(["2026-12-25", "2026-12-24"]);
  });
});

describe("validateAvailability: times", () => {
  it.each([
    ["9:00", "weekly_hours.monday[0].start"],
    ["09:60", "weekly_hours.monday[0].start"],
    ["25:00", "weekly_hours.monday[0].start"],
    ["24:00", "weekly_hours.monday[0].start"],
    ["", "weekly_hours.monday[0].start"],
    ["09:00:00", "weekly_hours.monday[0].start"],
    [" 09:00", "weekly_hours.monday[0].start"],
  ])("refuses start %j", (start, field) => {
    const f = failure(validateAvailability(monday({ start, end: "17:00" })));
    expect(f.field).toBe(field);
    expect(f.message).toMatch(/^weekly_hours\.monday\[0\]\.start is not a valid time/);
  });

  it.each(["24:01", "24:30", "17", "5pm", "1700"])("refuses end %j", (end) => {
    const f = failure(validateAvailability(monday({ start: "09:00", end })));
    expect(f.field).toBe("weekly_hours.monday[0].end");
    expect(f.message).toMatch(/^weekly_hours\.monday\[0\]\.end is not a valid time/);
  });

  it("refuses a start at or after its end", () => {
    expect(failure(validateAvailability(monday({ start: "10:00", end: "10:00" })))).toEqual({
      field: "weekly_hours.monday[0]",
      message: "weekly_hours.monday[0].start must be before weekly_hours.monday[0].end",
    });
    expect(failure(validateAvailability(monday({ start: "17:00", end: "09:00" }))).field).toBe("weekly_hours.monday[0]");
  });

  it("refuses overlapping intervals, naming both", () => {
    const f = failure(validateAvailability(monday({ start: "09:00", end: "12:00" }, { start: "11:00", end: "13:00" })));
    expect(f).toEqual({ field: "weekly_hours.monday[1]", message: "weekly_hours.monday[1] overlaps weekly_hours.monday[0]" });
  });

  it("refuses an interval inside another", () => {
    const f = failure(validateAvailability(monday({ start: "09:00", end: "17:00" }, { start: "10:00", end: "11:00" })));
    expect(f.message).toBe("weekly_hours.monday[1] overlaps weekly_hours.monday[0]");
  });

  it("refuses disjoint intervals out of time order", () => {
    const f = failure(validateAvailability(monday({ start: "13:00", end: "17:00" }, { start: "09:00", end: "12:00" })));
    expect(f.field).toBe("weekly_hours.monday[1]");
    expect(f.message).toBe("weekly_hours.monday[1] must come after weekly_hours.monday[0] (intervals in time order)");
  });

  it("names the weekday and index of a later problem", () => {
    const f = failure(
      validateAvailability({
        ...base,
        weeklyHours: { friday: [{ start: "08:00", end: "09:00" }, { start: "10:00", end: "10:61" }] },
      }),
    );
    expect(f.field).toBe("weekly_hours.friday[1].end");
  });

  it("allows 20 intervals a day and refuses 21", () => {
    const intervals = (n: number): TimeInterval[] =>
      Array.from({ length: n }, (_, i) => ({ start: `${String(i).padStart(2, "0")}:00`, end: `${String(i).padStart(2, "0")}:30` }));
    expect(validateAvailability(monday(...intervals(20))).ok).toBe(true);
    expect(failure(validateAvailability(monday(...intervals(21))))).toEqual({
      field: "weekly_hours.monday",
      message: "weekly_hours.monday has more than 20 intervals",
    });
  });
});

describe("validateAvailability: date overrides", () => {
  const withOverrides = (...dateOverrides: AvailabilityInput["dateOverrides"] & object): AvailabilityInput => ({
    ...base,
    dateOverrides,
  });

  it.each(["2026-02-30", "2027-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "2026-4-1", "26-04-01", "0000-01-01", "2026-04-01T00:00", "tomorrow"])(
    "refuses the date %j",
    (date) => {
      expect(failure(validateAvailability(withOverrides({ date, intervals: [] })))).toEqual({
        field: "date_overrides[0].date",
        message: "date_overrides[0].date is not a valid date",
      });
    },
  );

  it("accepts a leap day in a leap year", () => {
    expect(validateAvailability(withOverrides({ date: "2028-02-29", intervals: [] })).ok).toBe(true);
    expect(validateAvailability(withOverrides({ date: "2000-02-29", intervals: [] })).ok).toBe(true);
    expect(validateAvailability(withOverrides({ date: "2100-02-29", intervals: [] })).ok).toBe(false);
  });

  it("refuses a date given twice", () => {
    const f = failure(
      validateAvailability(
        withOverrides({ date: "2026-12-24", intervals: [] }, { date: "2026-12-25", intervals: [] }, { date: "2026-12-24", intervals: [] }),
      ),
    );
    expect(f.field).toBe("date_overrides[2].date");
    expect(f.message).toBe("date_overrides[2].date repeats date_overrides[0].date (2026-12-24)");
  });

  it("checks override intervals like weekly ones", () => {
    const f = failure(
      validateAvailability(
        withOverrides(
          { date: "2026-12-24", intervals: [] },
          { date: "2026-12-31", intervals: [{ start: "09:00", end: "12:00" }, { start: "10:00", end: "11:00" }] },
        ),
      ),
    );
    expect(f).toEqual({
      field: "date_overrides[1].intervals[1]",
      message: "date_overrides[1].intervals[1] overlaps date_overrides[1].intervals[0]",
    });
    expect(failure(validateAvailability(withOverrides({ date: "2026-12-24", intervals: [{ start: "24:00", end: "24:00" }] }))).field).toBe(
      "date_overrides[0].intervals[0].start",
    );
  });

  it("allows 400 overrides and refuses 401", () => {
    const overrides = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ date: new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10), intervals: [] }));
    expect(validateAvailability({ ...base, dateOverrides: overrides(400) }).ok).toBe(true);
    expect(failure(validateAvailability({ ...base, dateOverrides: overrides(401) }))).toEqual({
      field: "date_overrides",
      message: "date_overrides has more than 400 entries",
    });
  });
});

describe("validateAvailability: notice and window", () => {
  it.each([0, 1, 240, 43_200])("accepts %d minutes notice", (minimumNoticeMinutes) => {
    expect(validateAvailability({ ...base, minimumNoticeMinutes }).ok).toBe(true);
  });

  it.each([-1, 43_201, 1.5, Number.NaN, Number.POSITIVE_INFINITY])("refuses %d minutes notice", (minimumNoticeMinutes) => {
    expect(failure(validateAvailability({ ...base, minimumNoticeMinutes }))).toEqual({
      field: "minimum_notice_minutes",
      message: "minimum_notice_minutes must be a whole number from 0 to 43200",
    });
  });

  it.each([1, 60, 730])("accepts a %d-day window", (bookingWindowDays) => {
    expect(validateAvailability({ ...base, bookingWindowDays }).ok).toBe(true);
  });

  it.each([0, -5, 731, 2.5, Number.NaN])("refuses a %d-day window", (bookingWindowDays) => {
    expect(failure(validateAvailability({ ...base, bookingWindowDays }))).toEqual({
      field: "booking_window_days",
      message: "booking_window_days must be a whole number from 1 to 730",
    });
  });
});

describe("helpers", () => {
  it("parseTimeOfDay reads minutes and allows 24:00 only as an end", () => {
    expect(parseTimeOfDay("00:00")).toBe(0);
    expect(parseTimeOfDay("23:59")).toBe(1439);
    expect(parseTimeOfDay("24:00")).toBeUndefined();
    expect(parseTimeOfDay("24:00", true)).toBe(1440);
  });

  it("isCalendarDate knows month lengths", () => {
    expect(isCalendarDate("2026-01-31")).toBe(true);
    expect(isCalendarDate("2026-06-31")).toBe(false);
  });

  it("weekdayOf maps JavaScript day numbers (0 = Sunday)", () => {
    expect([0, 1, 2, 3, 4, 5, 6].map(weekdayOf)).toEqual(["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]);
  });

  it("intervalsOn prefers the date's override, even an empty one", () => {
    const check = validateAvailability({
      ...DEFAULT_AVAILABILITY,
      dateOverrides: [
        { date: "2026-12-24", intervals: [] },
        { date: "2026-12-26", intervals: [{ start: "10:00", end: "12:00" }] },
      ],
    });
    if (!check.ok) throw new Error(check.message);
    expect(intervalsOn(check.value, "2026-12-24", "thursday")).toEqual([]);
    expect(intervalsOn(check.value, "2026-12-26", "saturday")).toEqual([{ start: "10:00", end: "12:00" }]);
    expect(intervalsOn(check.value, "2026-12-23", "wednesday")).toEqual([{ start: "09:00", end: "17:00" }]);
  });

  it("the stored form round-trips and tolerates absent days", () => {
    const stored = toStoredAvailability(DEFAULT_AVAILABILITY);
    expect(stored.weekly_hours.monday).toEqual([{ start: "09:00", end: "17:00" }]);
    expect(stored.minimum_notice_minutes).toBe(240);
    expect(fromStoredAvailability(stored)).toEqual(DEFAULT_AVAILABILITY);
    const sparse = fromStoredAvailability({ weekly_hours: { monday: [{ start: "09:00", end: "10:00" }] }, minimum_notice_minutes: 0, booking_window_days: 1 });
    expect(sparse.weeklyHours.sunday).toEqual([]);
    expect(sparse.dateOverrides).toEqual([]);
  });
});
