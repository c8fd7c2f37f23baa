// Event rules as pure functions: why a time is refused, daily and weekly limits, limit periods, the checks of the rule fields, an event's availability, the booker's cancel notice.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { ApiError } from "../../src/domain/errors.js";
import { DEFAULT_AVAILABILITY, validateAvailability, WEEKDAYS, type Availability } from "../../src/domain/availability.js";
import {
  bookerChangeRefusal,
  changeableUntil,
  checkEventRules,
  eventAvailability,
  limitsOf,
  SCHEDULES_PER_ACCOUNT,
  slotNotAvailable,
  storedRules,
} from "../../src/domain/eventRules.js";
import { freePlaces } from "../../src/db/places.js";
import { computeSlots, limitPeriods, limitReadRange, whyRefused, type BookingLimits, type SlotQuery } from "../../src/domain/slots.js";
import { addDays, utcToWallClock } from "../../src/domain/timezones.js";

const MINUTE = 60_000;
const weekdays9to5: Availability = { ...DEFAULT_AVAILABILITY, minimumNoticeMinutes: 0 };

function query(over: Partial<SlotQuery>): SlotQuery {
  return {
    hostZone: "UTC",
    availability: weekdays9to5,
    slotMinutes: 30,
    paddingMinutes: 0,
    rangeStartDate: "2026-03-02",
    rangeEndDate: "2026-03-08",
    viewerZone: "UTC",
    now: new Date("2026-03-01T00:00:00Z"),
    busy: [],
    ...over,
  };
}

const at = (iso: string) => new Date(iso);
const days = (q: SlotQuery) => [...new Set(computeSlots(q).map((s) => s.start.toISOString().slice(0, 10)))];
const limits = (over: Partial<BookingLimits>): BookingLimits => ({ daily: null, weekly: null, weekStartsOn: 1, booked: [], ...over });

describe("whyRefused: each reason", () => {
  const rules = query({ now: at("2026-03-02T08:00:00Z") });
  const why = (iso: string, over: Partial<SlotQuery> = {}) => whyRefused({ ...rules, ...over, start: at(iso) });

  it("a free slot has no reason", () => {
    expect(why("2026-03-02T09:00:00Z")).toBeUndefined();
  });
  it("in_the_past, too_soon, too_far", () => {
    expect(why("2026-03-02T07:30:00Z")).toBe("in_the_past");
    const notice = { availability: { ...weekdays9to5, minimumNoticeMinutes: 120 } };
    expect(why("2026-03-02T09:30:00Z", notice)).toBe("too_soon");
    expect(why("2026-03-02T10:00:00Z", notice)).toBeUndefined();
    // 60 days counting today (2026-03-02): 2026-04-30 is the last.
    expect(why("2026-04-30T09:00:00Z")).toBeUndefined();
    expect(why("2026-05-01T09:00:00Z")).toBe("too_far");
  });
  it("outside_hours: off every interval, or running past the end of the one it starts in", () => {
    expect(why("2026-03-02T17:00:00Z")).toBe("outside_hours");
    expect(why("2026-03-07T10:00:00Z")).toBe("outside_hours"); // Saturday
    expect(why("2026-03-02T16:45:00Z")).toBe("outside_hours"); // would end 17:15
  });
  it("not_on_the_grid: inside the hours, between slot starts", () => {
    expect(why("2026-03-02T09:10:00Z")).toBe("not_on_the_grid");
    expect(why("2026-03-02T09:00:00.001Z")).toBe("not_on_the_grid");
  });
  it("taken by a booking, calendar_busy by a calendar; a booking wins when both", () => {
    const meeting = { start: at("2026-03-02T10:00:00Z"), end: at("2026-03-02T10:30:00Z"), paddingMinutes: 0 };
    expect(why("2026-03-02T10:00:00Z", { busy: [meeting] })).toBe("taken");
    expect(why("2026-03-02T10:00:00Z", { calendarBusy: [meeting] })).toBe("calendar_busy");
    expect(why("2026-03-02T10:00:00Z", { busy: [meeting], calendarBusy: [meeting] })).toBe("taken");
    // The buffer of the event being booked reaches back into the booking.
    expect(why("2026-03-02T10:30:00Z", { busy: [meeting], bufferBeforeMinutes: 15 })).toBe("taken");
  });
  it("daily_limit and weekly_limit, before taken", () => {
    const booked = [{ start: at("2026-03-02T09:00:00Z") }, { start: at("2026-03-03T09:00:00Z") }];
    expect(why("2026-03-02T11:00:00Z", { limits: limits({ daily: 1, booked }) })).toBe("daily_limit");
    expect(why("2026-03-04T11:00:00Z", { limits: limits({ daily: 1, booked }) })).toBeUndefined();
    expect(why("2026-03-04T11:00:00Z", { limits: limits({ weekly: 2, booked }) })).toBe("weekly_limit");
    const meeting = { start: at("2026-03-02T11:00:00Z"), end: at("2026-03-02T11:30:00Z"), paddingMinutes: 0 };
    expect(why("2026-03-02T11:00:00Z", { busy: [meeting], limits: limits({ daily: 1, booked }) })).toBe("daily_limit");
  });
});

describe("limits on slots", () => {
  it("a full day offers no slots; other days keep theirs", () => {
    const booked = [{ start: at("2026-03-03T09:00:00Z") }, { start: at("2026-03-03T15:00:00Z") }];
    expect(days(query({ limits: limits({ daily: 2, booked }) }))).toEqual(["2026-03-02", "2026-03-04", "2026-03-05", "2026-03-06"]);
    expect(days(query({ limits: limits({ daily: 3, booked }) }))).toContain("2026-03-03");
  });

  it("a full week offers no slots; weeks start on the host's first day", () => {
    // Thursday and Friday booked; with weeks from Monday the whole week 2–8 March is full; with weeks from
    // Thursday (4) only 5–11 March is, and Monday to Wednesday, in the week before, stay open.
    const booked = [{ start: at("2026-03-05T09:00:00Z") }, { start: at("2026-03-06T09:00:00Z") }];
    expect(days(query({ limits: limits({ weekly: 2, booked, weekStartsOn: 1 }) }))).toEqual([]);
    expect(days(query({ limits: limits({ weekly: 2, booked, weekStartsOn: 4 }) }))).toEqual(["2026-03-02", "2026-03-03", "2026-03-04"]);
    expect(days(query({ rangeEndDate: "2026-03-10", limits: limits({ weekly: 2, booked }) }))).toEqual(["2026-03-09", "2026-03-10"]);
  });

  it("days are the host's: a booking late in the evening in Tokyo counts on Tokyo's next day", () => {
    const allDay = validateAvailability({ weeklyHours: Object.fromEntries(WEEKDAYS.map((d) => [d, [{ start: "00:00", end: "24:00" }]])), minimumNoticeMinutes: 0, bookingWindowDays: 60 });
    if (!allDay.ok) throw new Error(allDay.message);
    const tokyo = { hostZone: "Asia/Tokyo", availability: allDay.value };
    // 2026-03-02T16:00Z is 01:00 on 3 March in Tokyo.
    const booked = [{ start: at("2026-03-02T16:00:00Z") }];
    const slots = computeSlots(query({ ...tokyo, viewerZone: "Asia/Tokyo", limits: limits({ daily: 1, booked }) }));
    const tokyoDays = new Set(slots.map((s) => utcToWallClock("Asia/Tokyo", s.start).date));
    expect(tokyoDays.has("2026-03-03")).toBe(false);
    expect(tokyoDays.has("2026-03-02")).toBe(true);
  });

  it("property: with limits, exactly the slots without them whose host day and week are below the limits", () => {
    fc.assert(
      fc.property(
        fc.record({
          daily: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
          weekly: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
          weekStartsOn: fc.integer({ min: 0, max: 6 }),
          zone: fc.constantFrom("UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo"),
          booked: fc.array(fc.integer({ min: 0, max: 20 * 96 }), { maxLength: 12 }),
        }),
        ({ daily, weekly, weekStartsOn, zone, booked }) => {
          const starts = booked.map((q) => ({ start: new Date(Date.parse("2026-02-26T00:00:00Z") + q * 15 * MINUTE) }));
          const base = query({ hostZone: zone, viewerZone: zone, rangeEndDate: "2026-03-15" });
          const host = (d: Date) => utcToWallClock(zone, d).date;
          const weekOf = (date: string) => addDays(date, -((new Date(`${date}T00:00:00Z`).getUTCDay() - weekStartsOn + 7) % 7));
          const count = (f: (date: string) => boolean) => starts.filter((b) => f(host(b.start))).length;
          const expected = computeSlots(base).filter((s) => {
            const d = host(s.start);
            return (daily === null || count((x) => x === d) < daily) && (weekly === null || count((x) => weekOf(x) === weekOf(d)) < weekly);
          });
          const got = computeSlots({ ...base, limits: { daily, weekly, weekStartsOn, booked: starts } });
          expect(got.map((s) => s.start.toISOString())).toEqual(expected.map((s) => s.start.toISOString()));
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe("limitPeriods and limitReadRange", () => {
  const start = at("2026-03-04T10:00:00Z");
  it("one period per limit, keyed by event, kind and the day or first day of the week, with the bookings in it", () => {
    const booked = [
      { start: at("2026-03-04T09:00:00Z"), id: "a" },
      { start: at("2026-03-02T09:00:00Z"), id: "b" },
      { start: at("2026-03-09T09:00:00Z"), id: "c" },
    ];
    expect(limitPeriods(limits({ daily: 2, weekly: 5, booked }), "E", "UTC", start)).toEqual([
      { key: "L:E:d:2026-03-04:", size: 2, reason: "daily_limit", booked: ["a"] },
      { key: "L:E:w:2026-03-02:", size: 5, reason: "weekly_limit", booked: ["a", "b"] },
    ]);
    expect(limitPeriods(undefined, "E", "UTC", start)).toEqual([]);
  });
  it("reads two days around a question for days, nine for weeks, nothing without limits", () => {
    const to = at("2026-03-05T00:00:00Z");
    expect(limitReadRange(start, to, { daily: null, weekly: null })).toBeUndefined();
    expect(limitReadRange(start, to, { daily: 1, weekly: null })).toEqual({ from: at("2026-03-02T10:00:00Z"), to: at("2026-03-07T00:00:00Z") });
    expect(limitReadRange(start, to, { daily: null, weekly: 1 })).toEqual({ from: at("2026-02-23T10:00:00Z"), to: at("2026-03-14T00:00:00Z") });
  });
});

describe("checkEventRules", () => {
  const problem = (input: Parameters<typeof checkEventRules>[0], ids: string[] = []) => {
    try {
      checkEventRules(input, ids);
    } catch (err) {
      return err as ApiError;
    }
    throw new Error("no problem");
  };

  it("stores the sent rules; null clears; absent leaves", () => {
    expect(checkEventRules({ bufferBefore: "15_minutes", dailyLimit: 3, weeklyLimit: null, cancelNoticeMinutes: 0, scheduleId: "s1" }, ["s1"])).toEqual({
      buffer_before_minutes: 15,
      daily_limit: 3,
      weekly_limit: null,
      cancel_notice_minutes: 0,
      schedule_id: "s1",
    });
    expect(checkEventRules({})).toEqual({});
    expect(checkEventRules({ minimumNoticeMinutes: 43200, bookingWindowDays: 730, scheduleId: null })).toEqual({
      minimum_notice_minutes: 43200,
      booking_window_days: 730,
      schedule_id: null,
    });
  });

  it("422s name the field; listed values come in data", () => {
    const buffer = problem({ bufferBefore: "20_minutes" });
    expect(buffer.rawMessage).toBe("buffer_before is not included in the list");
    expect(buffer.data).toEqual({ field: "buffer_before", allowed: ["0_minutes", "5_minutes", "10_minutes", "15_minutes", "30_minutes", "45_minutes", "1_hour", "2_hours"] });
    for (const [input, text] of [
      [{ dailyLimit: 0 }, "daily_limit must be a whole number from 1 to 1000, or null"],
      [{ weeklyLimit: 1001 }, "weekly_limit must be a whole number from 1 to 1000, or null"],
      [{ dailyLimit: 2.5 }, "daily_limit must be a whole number from 1 to 1000, or null"],
      [{ dailyLimit: "3" }, "daily_limit must be a whole number from 1 to 1000, or null"],
      [{ cancelNoticeMinutes: -1 }, "cancel_notice_minutes must be a whole number from 0 to 43200, or null"],
      [{ minimumNoticeMinutes: 43201 }, "minimum_notice_minutes must be a whole number from 0 to 43200, or null"],
      [{ bookingWindowDays: 0 }, "booking_window_days must be a whole number from 1 to 730, or null"],
    ] as const) {
      const p = problem(input);
      expect(p.rawMessage).toBe(text);
      expect(p.httpStatus).toBe(422);
    }
    const schedule = problem({ scheduleId: "nope" }, ["s1", "s2"]);
    expect(schedule.data).toEqual({ field: "schedule_id", allowed: ["s1", "s2"] });
  });

  it("storedRules reads an event written before the rules as none of them", () => {
    expect(storedRules({})).toEqual({
      buffer_before_minutes: 0,
      minimum_notice_minutes: null,
      booking_window_days: null,
      schedule_id: null,
      daily_limit: null,
      weekly_limit: null,
      cancel_notice_minutes: null,
      seats_per_slot: null,
      show_attendees_to_attendees: false,
      requires_confirmation: false,
      confirmation_hours: 24,
    });
  });

  it("seats_per_slot is 2–1000 or null; confirmation_hours 1–168", () => {
    expect(checkEventRules({ seatsPerSlot: 2 })).toEqual({ seats_per_slot: 2 });
    expect(checkEventRules({ seatsPerSlot: null })).toEqual({ seats_per_slot: null });
    for (const bad of [1, 1001, 2.5, "4"]) expect(() => checkEventRules({ seatsPerSlot: bad })).toThrow("seats_per_slot must be a whole number from 2 to 1000, or null");
    expect(checkEventRules({ requiresConfirmation: true, confirmationHours: 168 })).toEqual({ requires_confirmation: true, confirmation_hours: 168 });
    for (const bad of [0, 169, 1.5]) expect(() => checkEventRules({ confirmationHours: bad })).toThrow("confirmation_hours must be a whole number from 1 to 168");
  });
});

describe("eventAvailability", () => {
  const account = DEFAULT_AVAILABILITY;
  const weekends = validateAvailability({ weeklyHours: { saturday: [{ start: "10:00", end: "12:00" }] }, minimumNoticeMinutes: 0, bookingWindowDays: 1 });
  if (!weekends.ok) throw new Error(weekends.message);

  it("is the account's when the event sets nothing", () => {
    expect(eventAvailability(account, undefined, { minimum_notice_minutes: null, booking_window_days: null })).toBe(account);
  });
  it("takes the schedule's hours and the event's notice and window, else the account's", () => {
    const a = eventAvailability(account, weekends.value, { minimum_notice_minutes: 30, booking_window_days: null });
    expect(a.weeklyHours.saturday).toEqual([{ start: "10:00", end: "12:00" }]);
    expect(a.weeklyHours.monday).toEqual([]);
    expect(a.minimumNoticeMinutes).toBe(30);
    expect(a.bookingWindowDays).toBe(account.bookingWindowDays);
  });
});

describe("the booker's cancel notice", () => {
  const start = at("2026-03-02T10:00:00Z");
  const booking = { status: "confirmed", start, end: at("2026-03-02T10:30:00Z") };

  it("changeableUntil is the start, or the notice before it", () => {
    expect(changeableUntil(start, null)).toEqual(start);
    expect(changeableUntil(start, 0)).toEqual(start);
    expect(changeableUntil(start, 120)).toEqual(at("2026-03-02T08:00:00Z"));
  });
  it("refuses from the cutoff on, with 422 booking can no longer be changed and until when", () => {
    expect(bookerChangeRefusal(booking, at("2026-03-02T07:59:59Z"), 120)).toBeUndefined();
    const late = bookerChangeRefusal(booking, at("2026-03-02T08:00:00Z"), 120);
    expect(late?.rawMessage).toBe("booking can no longer be changed");
    expect(late?.httpStatus).toBe(422);
    expect(late?.data).toEqual({ changeable_until: "2026-03-02T08:00:00.000Z", cancel_notice_minutes: 120 });
    expect(bookerChangeRefusal(booking, at("2026-03-02T09:59:00Z"), null)).toBeUndefined();
    expect(bookerChangeRefusal({ ...booking, status: "canceled" }, at("2026-03-01T00:00:00Z"), null)?.rawMessage).toMatch(/booking is canceled/);
  });
});

describe("schedules and refusals", () => {
  it("freePlaces are the places below the limit that nothing holds", () => {
    expect(freePlaces([], SCHEDULES_PER_ACCOUNT)).toHaveLength(SCHEDULES_PER_ACCOUNT);
    expect(freePlaces([0, 1, 3], SCHEDULES_PER_ACCOUNT).slice(0, 2)).toEqual([2, 4]);
    expect(freePlaces(Array.from({ length: SCHEDULES_PER_ACCOUNT }, (_, i) => i), SCHEDULES_PER_ACCOUNT)).toEqual([]);
    expect(freePlaces([5, 1], 3)).toEqual([0, 2]);
  });
  it("slotNotAvailable keeps the REST message and puts the reason in data and in the RPC message", () => {
    const e = slotNotAvailable("daily_limit");
    expect(e.restMessage).toBe("slot is not available");
    expect(e.data).toEqual({ reason: "daily_limit" });
    expect(e.rawMessage).toBe("slot is not available: daily_limit");
    // callers.md: the reason in capitals; ALREADY_EXISTS only for a taken time; REST stays 409.
    expect({ code: e.code, reason: e.reason, httpStatus: e.httpStatus }).toEqual({ code: Code.FailedPrecondition, reason: "DAILY_LIMIT", httpStatus: 409 });
    const taken = slotNotAvailable("taken");
    expect({ code: taken.code, reason: taken.reason, httpStatus: taken.httpStatus }).toEqual({ code: Code.AlreadyExists, reason: "TAKEN", httpStatus: 409 });
  });
  it("limitsOf is undefined without limits", () => {
    expect(limitsOf({ daily_limit: null, weekly_limit: null }, 1, [])).toBeUndefined();
    expect(limitsOf({ daily_limit: 2, weekly_limit: null }, 1, [])).toEqual({ daily: 2, weekly: null, weekStartsOn: 1, booked: [] });
  });
});
