// Slot computation: worked examples (notice, window, overrides, padding, zones, DST days) and properties over random input.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_AVAILABILITY,
  validateAvailability,
  weekdayOf,
  WEEKDAYS,
  type Availability,
  type AvailabilityInput,
  type TimeInterval,
  type Weekday,
} from "../../src/domain/availability.js";
import { blockedRange, computeSlots, isSlotFree, slotsUnchangedUntil, whyRefused, type BusyBooking, type SlotQuery } from "../../src/domain/slots.js";
import { addDays } from "../../src/domain/timezones.js";

const MINUTE = 60_000;
const DAY = 86_400_000;

function availability(input: Partial<AvailabilityInput>): Availability {
  const check = validateAvailability({ minimumNoticeMinutes: 0, bookingWindowDays: 60, ...input });
  if (!check.ok) throw new Error(check.message);
  return check.value;
}

const everyDay = (intervals: TimeInterval[]): Record<Weekday, TimeInterval[]> =>
  Object.fromEntries(WEEKDAYS.map((d) => [d, intervals])) as Record<Weekday, TimeInterval[]>;

const weekdays9to5 = availability({ ...DEFAULT_AVAILABILITY, minimumNoticeMinutes: 0 });

function query(over: Partial<SlotQuery>): SlotQuery {
  return {
    hostZone: "UTC",
    availability: weekdays9to5,
    slotMinutes: 30,
    paddingMinutes: 0,
    rangeStartDate: "2026-03-02",
    rangeEndDate: "2026-03-02",
    viewerZone: "UTC",
    now: new Date("2026-03-01T00:00:00Z"),
    busy: [],
    ...over,
  };
}

const iso = (q: SlotQuery): string[] => computeSlots(q).map((s) => s.start.toISOString());

describe("computeSlots: a plain day", () => {
  it("offers every slot of 09:00-17:00 on a Monday in UTC", () => {
    const slots = computeSlots(query({}));
    expect(slots).toHaveLength(16);
    expect(slots[0]).toEqual({ start: new Date("2026-03-02T09:00:00Z"), end: new Date("2026-03-02T09:30:00Z") });
    expect(slots[15]).toEqual({ start: new Date("2026-03-02T16:30:00Z"), end: new Date("2026-03-02T17:00:00Z") });
  });

  it("starts slots from each interval's start and drops one that would run past its end", () => {
    const av = availability({ weeklyHours: { monday: [{ start: "09:00", end: "10:00" }, { start: "10:10", end: "12:00" }] } });
    expect(iso(query({ availability: av, slotMinutes: 45 }))).toEqual(["2026-03-02T09:00:00.000Z", "2026-03-02T10:10:00.000Z", "2026-03-02T10:55:00.000Z"]);
  });

  it("offers nothing on a weekend day of the default hours", () => {
    expect(iso(query({ rangeStartDate: "2026-03-07", rangeEndDate: "2026-03-08" }))).toEqual([]);
  });

  it("reads an interval ending at 24:00 up to midnight", () => {
    const av = availability({ weeklyHours: { monday: [{ start: "22:00", end: "24:00" }] } });
    expect(iso(query({ availability: av, slotMinutes: 60 }))).toEqual(["2026-03-02T22:00:00.000Z", "2026-03-02T23:00:00.000Z"]);
  });

  it("returns nothing for an empty or reversed range and refuses malformed input", () => {
    expect(iso(query({ rangeStartDate: "2026-03-03", rangeEndDate: "2026-03-02" }))).toEqual([]);
    expect(() => computeSlots(query({ rangeStartDate: "2026-02-30" }))).toThrow(RangeError);
    expect(() => computeSlots(query({ slotMinutes: 0 }))).toThrow(RangeError);
    expect(() => computeSlots(query({ paddingMinutes: -1 }))).toThrow(RangeError);
  });
});

describe("computeSlots: notice and window", () => {
  it("needs the minimum notice before a slot's start, and a start exactly at it counts", () => {
    const av = availability({ ...DEFAULT_AVAILABILITY, minimumNoticeMinutes: 240 });
    const starts = iso(query({ availability: av, now: new Date("2026-03-02T08:00:00Z") }));
    expect(starts[0]).toBe("2026-03-02T12:00:00.000Z");
    expect(starts).toHaveLength(10);
  });

  it("never offers a slot in the past", () => {
    const starts = iso(query({ now: new Date("2026-03-02T10:10:00Z") }));
    expect(starts[0]).toBe("2026-03-02T10:30:00.000Z");
  });

  it("counts the window in whole host days from the host's today", () => {
    // 2026-03-02 23:30 in Tokyo: today's hours are over.
    const now = new Date("2026-03-02T14:30:00Z");
    const host = { hostZone: "Asia/Tokyo", now, slotMinutes: 60, rangeStartDate: "2026-03-01", rangeEndDate: "2026-03-10" };
    expect(iso(query({ ...host, availability: availability({ ...DEFAULT_AVAILABILITY, minimumNoticeMinutes: 0, bookingWindowDays: 1 }) }))).toEqual([]);
    const two = iso(query({ ...host, availability: availability({ ...DEFAULT_AVAILABILITY, minimumNoticeMinutes: 0, bookingWindowDays: 2 }) }));
    expect(two).toHaveLength(8);
    expect(two[0]).toBe("2026-03-03T00:00:00.000Z"); // 09:00 in Tokyo
    expect(two[7]).toBe("2026-03-03T07:00:00.000Z");
  });

  it("with a one-day window offers only the rest of today", () => {
    const av = availability({ ...DEFAULT_AVAILABILITY, minimumNoticeMinutes: 0, bookingWindowDays: 1 });
    const starts = iso(query({ availability: av, now: new Date("2026-03-02T15:00:00Z"), rangeEndDate: "2026-03-06" }));
    expect(starts).toEqual(["2026-03-02T15:00:00.000Z", "2026-03-02T15:30:00.000Z", "2026-03-02T16:00:00.000Z", "2026-03-02T16:30:00.000Z"]);
  });
});

describe("computeSlots: date overrides", () => {
  it("an override with no intervals closes a working day", () => {
    const av = availability({ ...DEFAULT_AVAILABILITY, minimumNoticeMinutes: 0, dateOverrides: [{ date: "2026-03-02", intervals: [] }] });
    expect(iso(query({ availability: av, rangeEndDate: "2026-03-03" }))[0]).toBe("2026-03-03T09:00:00.000Z");
  });

  it("an override replaces the weekday's hours, and opens a day off", () => {
    const av = availability({
      ...DEFAULT_AVAILABILITY,
      minimumNoticeMinutes: 0,
      dateOverrides: [
        { date: "2026-03-02", intervals: [{ start: "13:00", end: "14:00" }] },
        { date: "2026-03-07", intervals: [{ start: "10:00", end: "11:00" }] },
      ],
    });
    expect(iso(query({ availability: av, slotMinutes: 60 }))).toEqual(["2026-03-02T13:00:00.000Z"]);
    expect(iso(query({ availability: av, slotMinutes: 60, rangeStartDate: "2026-03-07", rangeEndDate: "2026-03-08" }))).toEqual(["2026-03-07T10:00:00.000Z"]);
    expect(iso(query({ availability: av, slotMinutes: 60, rangeStartDate: "2026-03-03", rangeEndDate: "2026-03-03" }))).toHaveLength(8);
  });

  it("overrides are host-local dates", () => {
    // Tokyo's 2026-03-03 runs from 2026-03-02T15:00Z.
    const av = availability({ ...DEFAULT_AVAILABILITY, minimumNoticeMinutes: 0, dateOverrides: [{ date: "2026-03-03", intervals: [] }] });
    expect(iso(query({ hostZone: "Asia/Tokyo", availability: av, slotMinutes: 60, rangeStartDate: "2026-03-02", rangeEndDate: "2026-03-03" }))).toEqual(
      ["00", "01", "02", "03", "04", "05", "06", "07"].map((h) => `2026-03-02T${h}:00:00.000Z`),
    );
  });
});

describe("computeSlots: padding (kept after each meeting) and buffer (kept before it)", () => {
  const busy: BusyBooking[] = [{ start: new Date("2026-03-02T10:00:00Z"), end: new Date("2026-03-02T10:30:00Z"), paddingMinutes: 15 }];

  it("the spec's example: 30-minute slots and padding, a booking at 10:00 leaves 09:00 and 11:00, takes 09:30 and 10:30", () => {
    const booked: BusyBooking[] = [{ start: new Date("2026-03-02T10:00:00Z"), end: new Date("2026-03-02T10:30:00Z"), paddingMinutes: 30 }];
    const starts = iso(query({ busy: booked, paddingMinutes: 30 }));
    expect(starts).toContain("2026-03-02T09:00:00.000Z");
    expect(starts).not.toContain("2026-03-02T09:30:00.000Z"); // its padding 10:00-10:30 meets the booking
    expect(starts).not.toContain("2026-03-02T10:00:00.000Z");
    expect(starts).not.toContain("2026-03-02T10:30:00.000Z"); // inside the booking's padding
    expect(starts).toContain("2026-03-02T11:00:00.000Z");
    // 09:00 is exactly free: the slot's padding ends at 10:00 where the booking starts.
    expect(isSlotFree({ ...query({ busy: booked, paddingMinutes: 30 }), start: new Date("2026-03-02T09:00:00Z") })).toBe(true);
  });

  it("keeps a slot out of a booking's padding after it, not before it", () => {
    const starts = iso(query({ busy }));
    expect(starts).toContain("2026-03-02T09:30:00.000Z"); // ends at 10:00, when the booking starts
    expect(starts).not.toContain("2026-03-02T10:00:00.000Z");
    expect(starts).not.toContain("2026-03-02T10:30:00.000Z"); // starts inside 10:30-10:45
    expect(starts).toContain("2026-03-02T11:00:00.000Z");
  });

  it("adds the booked event's padding after the slot; touching blocked ranges are fine", () => {
    const starts = iso(query({ busy, paddingMinutes: 15 }));
    expect(starts).toContain("2026-03-02T09:00:00.000Z"); // blocks 09:00-09:45
    expect(starts).not.toContain("2026-03-02T09:30:00.000Z"); // blocks 09:30-10:15
    expect(starts).not.toContain("2026-03-02T10:30:00.000Z");
    expect(starts).toContain("2026-03-02T11:00:00.000Z"); // busy blocks until 10:45
    const wider = iso(query({ busy, paddingMinutes: 30 }));
    expect(wider).toContain("2026-03-02T09:00:00.000Z"); // blocks 09:00-10:00, touching the booking
    const widest = iso(query({ busy, paddingMinutes: 31 }));
    expect(widest).not.toContain("2026-03-02T09:00:00.000Z");
    expect(widest).toContain("2026-03-02T11:00:00.000Z");
  });

  it("blockedRange widens the end by the padding, the start by the buffer", () => {
    expect(blockedRange(new Date("2026-03-02T10:00:00Z"), new Date("2026-03-02T10:30:00Z"), 15)).toEqual({
      start: new Date("2026-03-02T10:00:00Z"),
      end: new Date("2026-03-02T10:45:00Z"),
    });
    expect(blockedRange(new Date("2026-03-02T10:00:00Z"), new Date("2026-03-02T10:30:00Z"), 15, 30)).toEqual({
      start: new Date("2026-03-02T09:30:00Z"),
      end: new Date("2026-03-02T10:45:00Z"),
    });
  });

  it("a buffer before: the booked event's keeps the slot's start clear, a booking's keeps the time before it", () => {
    const at10: BusyBooking[] = [{ start: new Date("2026-03-02T10:00:00Z"), end: new Date("2026-03-02T10:30:00Z"), paddingMinutes: 0 }];
    // The slot of this event blocks [start − 30, end): 10:30 meets the booking, 11:00 touches it.
    const mine = iso(query({ busy: at10, bufferBeforeMinutes: 30 }));
    expect(mine).toContain("2026-03-02T09:30:00.000Z");
    expect(mine).not.toContain("2026-03-02T10:30:00.000Z");
    expect(mine).toContain("2026-03-02T11:00:00.000Z");
    // The booking's own buffer blocks [09:30, 10:30): 09:30 meets it, 09:00 touches it; 10:30 is free again.
    const theirs = iso(query({ busy: [{ ...at10[0], bufferBeforeMinutes: 30 }] }));
    expect(theirs).toContain("2026-03-02T09:00:00.000Z");
    expect(theirs).not.toContain("2026-03-02T09:30:00.000Z");
    expect(theirs).toContain("2026-03-02T10:30:00.000Z");
    // The first slot of the day may keep its buffer outside the hours.
    expect(mine[0]).toBe("2026-03-02T09:00:00.000Z");
  });

  it("a booking of length and padding zero blocks nothing", () => {
    const at = new Date("2026-03-02T10:15:00Z");
    expect(iso(query({ busy: [{ start: at, end: at, paddingMinutes: 0 }] }))).toHaveLength(16);
  });
});

describe("computeSlots: host and viewer in different zones", () => {
  const tokyo = { hostZone: "Asia/Tokyo", viewerZone: "America/New_York", slotMinutes: 60 };

  it("a New York Monday shows the end of Tokyo's Monday and the start of Tuesday", () => {
    expect(iso(query({ ...tokyo, rangeStartDate: "2026-03-02", rangeEndDate: "2026-03-02" }))).toEqual([
      // Tokyo Monday 14:00-16:00 = New York Monday 00:00-02:00
      "2026-03-02T05:00:00.000Z",
      "2026-03-02T06:00:00.000Z",
      "2026-03-02T07:00:00.000Z",
      // Tokyo Tuesday 09:00-13:00 = New York Monday 19:00-23:00
      "2026-03-03T00:00:00.000Z",
      "2026-03-03T01:00:00.000Z",
      "2026-03-03T02:00:00.000Z",
      "2026-03-03T03:00:00.000Z",
      "2026-03-03T04:00:00.000Z",
    ]);
  });

  it("a New York Sunday already shows Tokyo's Monday", () => {
    expect(iso(query({ ...tokyo, rangeStartDate: "2026-03-01", rangeEndDate: "2026-03-01" }))).toEqual(
      ["00", "01", "02", "03", "04"].map((h) => `2026-03-02T${h}:00:00.000Z`),
    );
  });

  it("the viewer's days split the same slots without losing or repeating any", () => {
    const week = computeSlots(query({ ...tokyo, rangeStartDate: "2026-03-01", rangeEndDate: "2026-03-07" }));
    const byDay = ["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06", "2026-03-07"].flatMap((d) =>
      computeSlots(query({ ...tokyo, rangeStartDate: d, rangeEndDate: d })),
    );
    expect(byDay).toEqual(week);
    expect(week).toHaveLength(40);
  });
});

describe("computeSlots: DST change days", () => {
  const allDay = availability({ weeklyHours: everyDay([{ start: "00:00", end: "24:00" }]) });

  it("New York 2026-03-08: 01:00-04:00 is two real hours; 02:00 does not exist and is skipped", () => {
    const av = availability({ dateOverrides: [{ date: "2026-03-08", intervals: [{ start: "01:00", end: "04:00" }] }] });
    const q = query({ hostZone: "America/New_York", viewerZone: "America/New_York", availability: av, rangeStartDate: "2026-03-08", rangeEndDate: "2026-03-08" });
    expect(iso({ ...q, slotMinutes: 60 })).toEqual(["2026-03-08T06:00:00.000Z", "2026-03-08T07:00:00.000Z"]); // 01:00 EST, 03:00 EDT
    expect(iso({ ...q, slotMinutes: 30 })).toEqual(["2026-03-08T06:00:00.000Z", "2026-03-08T06:30:00.000Z", "2026-03-08T07:00:00.000Z", "2026-03-08T07:30:00.000Z"]);
    // 120 minutes fit the wall-clock grid but not the two real hours after 01:00.
    expect(iso({ ...q, slotMinutes: 120 })).toEqual(["2026-03-08T06:00:00.000Z"]);
    expect(iso({ ...q, slotMinutes: 180 })).toEqual([]);
  });

  it("New York 2026-03-08: an interval bound inside the gap is the instant of the jump", () => {
    const on = (start: string, end: string) =>
      query({
        hostZone: "America/New_York",
        availability: availability({ dateOverrides: [{ date: "2026-03-08", intervals: [{ start, end }] }] }),
        rangeStartDate: "2026-03-08",
        rangeEndDate: "2026-03-08",
      });
    // 01:00-02:30 ends at 03:00 EDT, when the clock passes 02:30: one real hour.
    expect(iso({ ...on("01:00", "02:30"), slotMinutes: 30 })).toEqual(["2026-03-08T06:00:00.000Z", "2026-03-08T06:30:00.000Z"]);
    expect(iso({ ...on("01:00", "02:30"), slotMinutes: 90 })).toEqual([]);
    // 02:15-03:15 is open while the clock shows 03:00-03:15 EDT.
    expect(iso({ ...on("02:15", "03:15"), slotMinutes: 15 })).toEqual(["2026-03-08T07:00:00.000Z"]);
  });

  it("New York 2026-03-08: a grid start that falls inside the previous slot after the jump is dropped", () => {
    const av = availability({ dateOverrides: [{ date: "2026-03-08", intervals: [{ start: "01:30", end: "05:00" }] }] });
    const q = query({ hostZone: "America/New_York", availability: av, slotMinutes: 90, rangeStartDate: "2026-03-08", rangeEndDate: "2026-03-08" });
    // 01:30 EST runs to 04:00 EDT; the next grid time, 03:00 EDT, would overlap it.
    expect(iso(q)).toEqual(["2026-03-08T06:30:00.000Z"]);
  });

  it("New York 2026-03-08 is a 23-hour day for a viewer and for a host", () => {
    const viewer = computeSlots(query({ availability: allDay, slotMinutes: 60, viewerZone: "America/New_York", rangeStartDate: "2026-03-08", rangeEndDate: "2026-03-08" }));
    expect(viewer).toHaveLength(23);
    expect(viewer[0].start.toISOString()).toBe("2026-03-08T05:00:00.000Z");
    expect(viewer[22].start.toISOString()).toBe("2026-03-09T03:00:00.000Z");
    const host = iso(query({ hostZone: "America/New_York", viewerZone: "America/New_York", availability: allDay, slotMinutes: 60, rangeStartDate: "2026-03-08", rangeEndDate: "2026-03-08" }));
    expect(host).toHaveLength(23);
    expect(host.slice(0, 3)).toEqual(["2026-03-08T05:00:00.000Z", "2026-03-08T06:00:00.000Z", "2026-03-08T07:00:00.000Z"]); // 00:00 EST, 01:00 EST, 03:00 EDT
  });

  it("Berlin 2026-10-25: the repeated 02:00 means its first occurrence; the wall-clock grid has 24 slots in 25 hours", () => {
    const q = query({ hostZone: "Europe/Berlin", viewerZone: "Europe/Berlin", availability: allDay, slotMinutes: 60, rangeStartDate: "2026-10-25", rangeEndDate: "2026-10-25", now: new Date("2026-10-01T00:00:00Z") });
    const starts = iso(q);
    expect(starts).toHaveLength(24);
    expect(starts.slice(0, 4)).toEqual([
      "2026-10-24T22:00:00.000Z", // 00:00 CEST
      "2026-10-24T23:00:00.000Z", // 01:00 CEST
      "2026-10-25T00:00:00.000Z", // 02:00 CEST, the first 02:00
      "2026-10-25T02:00:00.000Z", // 03:00 CET
    ]);
    expect(starts[23]).toBe("2026-10-25T22:00:00.000Z"); // 23:00 CET
  });

  it("Berlin 2026-10-25: 01:00-04:00 is four real hours", () => {
    const av = availability({ dateOverrides: [{ date: "2026-10-25", intervals: [{ start: "01:00", end: "04:00" }] }] });
    const q = query({ hostZone: "Europe/Berlin", availability: av, rangeStartDate: "2026-10-24", rangeEndDate: "2026-10-25", now: new Date("2026-10-01T00:00:00Z") });
    expect(iso({ ...q, slotMinutes: 60 })).toEqual(["2026-10-24T23:00:00.000Z", "2026-10-25T00:00:00.000Z", "2026-10-25T02:00:00.000Z"]);
    // A 3-hour slot from 01:00 CEST ends at 03:00 CET, one real hour before the interval's 04:00 CET end.
    expect(iso({ ...q, slotMinutes: 180 })).toEqual(["2026-10-24T23:00:00.000Z"]);
  });

  it("a Berlin viewer's 2026-10-25 is 25 hours long", () => {
    const slots = computeSlots(query({ availability: allDay, slotMinutes: 60, viewerZone: "Europe/Berlin", rangeStartDate: "2026-10-25", rangeEndDate: "2026-10-25", now: new Date("2026-10-01T00:00:00Z") }));
    expect(slots).toHaveLength(25);
    expect(slots[0].start.toISOString()).toBe("2026-10-24T22:00:00.000Z");
    expect(slots[24].start.toISOString()).toBe("2026-10-25T22:00:00.000Z");
  });
});

describe("isSlotFree", () => {
  const rules = { hostZone: "UTC", availability: weekdays9to5, slotMinutes: 30, paddingMinutes: 0, now: new Date("2026-03-01T00:00:00Z"), busy: [] };

  it("accepts exactly the offered starts", () => {
    expect(isSlotFree({ ...rules, start: new Date("2026-03-02T09:00:00Z") })).toBe(true);
    expect(isSlotFree({ ...rules, start: new Date("2026-03-02T16:30:00Z") })).toBe(true);
    expect(isSlotFree({ ...rules, start: new Date("2026-03-02T09:15:00Z") })).toBe(false); // off the grid
    expect(isSlotFree({ ...rules, start: new Date("2026-03-02T09:00:00.001Z") })).toBe(false);
    expect(isSlotFree({ ...rules, start: new Date("2026-03-02T17:00:00Z") })).toBe(false); // after hours
    expect(isSlotFree({ ...rules, start: new Date("2026-03-01T09:00:00Z") })).toBe(false); // Sunday
    expect(isSlotFree({ ...rules, start: new Date(Number.NaN) })).toBe(false);
  });

  it("refuses taken, too-soon and too-far starts", () => {
    const start = new Date("2026-03-02T10:00:00Z");
    expect(isSlotFree({ ...rules, start, busy: [{ start, end: new Date("2026-03-02T10:30:00Z"), paddingMinutes: 0 }] })).toBe(false);
    expect(isSlotFree({ ...rules, start, now: new Date("2026-03-02T09:59:00Z") })).toBe(true);
    expect(isSlotFree({ ...rules, start, now: new Date("2026-03-02T06:01:00Z"), availability: { ...DEFAULT_AVAILABILITY } })).toBe(false); // 240 minutes notice
    // Today (2026-03-01) is day 1 of the 60-day window, so 2026-04-29 is the last day.
    expect(isSlotFree({ ...rules, start: new Date("2026-04-29T16:30:00Z") })).toBe(true);
    expect(isSlotFree({ ...rules, start: new Date("2026-04-30T09:00:00Z") })).toBe(false);
    expect(isSlotFree({ ...rules, start: new Date("2026-04-30T09:00:00Z"), now: new Date("2026-03-02T00:00:00Z") })).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties. The oracle reads wall clocks with Intl directly rather than through the code under test.

const ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Tokyo", "Australia/Lord_Howe", "Asia/Kolkata", "America/Santiago", "Pacific/Chatham", "Asia/Kathmandu"];

const oracleFormatters = new Map<string, Intl.DateTimeFormat>();
function wallOf(zone: string, at: Date): { date: string; minute: number } {
  let f = oracleFormatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" });
    oracleFormatters.set(zone, f);
  }
  const p = Object.fromEntries(f.formatToParts(at).map((x) => [x.type, x.value]));
  return { date: `${p.year}-${p.month}-${p.day}`, minute: Number(p.hour) * 60 + Number(p.minute) };
}

const toMinutes = (t: string): number => Number(t.slice(0, 2)) * 60 + Number(t.slice(3, 5));
const hhmm = (m: number): string => (m === 1440 ? "24:00" : `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`);

/** Sorted distinct five-minute boundaries paired up: ordered, non-overlapping intervals of one day. */
const dayIntervals = fc
  .uniqueArray(fc.integer({ min: 0, max: 288 }), { maxLength: 8 })
  .map((marks) => {
    const sorted = [...marks].sort((a, b) => a - b);
    const out: TimeInterval[] = [];
    for (let i = 0; i + 1 < sorted.length; i += 2) out.push({ start: hhmm(sorted[i] * 5), end: hhmm(sorted[i + 1] * 5) });
    return out;
  });

// Near DST changes of the zones above, or anywhere in 2026.
const TRANSITIONS = ["2026-03-08T07:00:00Z", "2026-03-29T01:00:00Z", "2026-10-25T01:00:00Z", "2026-11-01T06:00:00Z", "2026-04-04T15:00:00Z", "2026-04-05T03:00:00Z", "2026-09-06T04:00:00Z", "2026-10-03T15:30:00Z", "2026-09-26T14:00:00Z"].map(Date.parse);
const nowArb = fc.oneof(
  fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2027, 0, 1) }),
  fc.tuple(fc.constantFrom(...TRANSITIONS), fc.integer({ min: -4 * DAY, max: 2 * DAY })).map(([t, d]) => t + d),
);

const scenario = fc
  .record({
    hostZone: fc.constantFrom(...ZONES),
    viewerZone: fc.constantFrom(...ZONES),
    weekly: fc.tuple(dayIntervals, dayIntervals, dayIntervals, dayIntervals, dayIntervals, dayIntervals, dayIntervals),
    overrides: fc.array(fc.record({ dayOffset: fc.integer({ min: -1, max: 8 }), intervals: dayIntervals }), { maxLength: 4 }),
    notice: fc.oneof(fc.constantFrom(0, 240, 1440), fc.integer({ min: 0, max: 3000 })),
    window: fc.oneof(fc.integer({ min: 1, max: 10 }), fc.constant(60)),
    slotMinutes: fc.oneof(fc.constantFrom(15, 30, 45, 60, 90), fc.integer({ min: 5, max: 180 })),
    paddingMinutes: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 60 })),
    bufferBeforeMinutes: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 60 })),
    now: nowArb,
    rangeOffset: fc.integer({ min: -2, max: 6 }),
    rangeLength: fc.integer({ min: 0, max: 4 }),
    busy: fc.array(
      fc.record({
        offset: fc.integer({ min: -2 * 1440, max: 10 * 1440 }),
        length: fc.integer({ min: 5, max: 240 }),
        padding: fc.integer({ min: 0, max: 60 }),
        before: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 60 })),
      }),
      { maxLength: 12 },
    ),
  })
  .map((s): SlotQuery => {
    const hostToday = wallOf(s.hostZone, new Date(s.now)).date;
    const seen = new Set<string>();
    const dateOverrides = s.overrides
      .map((o) => ({ date: addDays(hostToday, o.dayOffset), intervals: o.intervals }))
      .filter((o) => !seen.has(o.date) && Boolean(seen.add(o.date)));
    const av = availability({
      weeklyHours: Object.fromEntries(WEEKDAYS.map((d, i) => [d, s.weekly[i]])),
      dateOverrides,
      minimumNoticeMinutes: s.notice,
      bookingWindowDays: s.window,
    });
    // Busy starts on the minute grid near now, so they meet the offered slots often.
    const base = Math.floor(s.now / MINUTE) * MINUTE;
    const busy = s.busy.map((b) => ({
      start: new Date(base + b.offset * MINUTE),
      end: new Date(base + (b.offset + b.length) * MINUTE),
      paddingMinutes: b.padding,
      bufferBeforeMinutes: b.before,
    }));
    const rangeStartDate = addDays(wallOf(s.viewerZone, new Date(s.now)).date, s.rangeOffset);
    return {
      hostZone: s.hostZone,
      viewerZone: s.viewerZone,
      availability: av,
      slotMinutes: s.slotMinutes,
      paddingMinutes: s.paddingMinutes,
      bufferBeforeMinutes: s.bufferBeforeMinutes,
      now: new Date(s.now),
      busy,
      rangeStartDate,
      rangeEndDate: addDays(rangeStartDate, s.rangeLength),
    };
  });

const RUNS = { numRuns: 200 };

function intervalsOfDay(av: Availability, date: string): readonly TimeInterval[] {
  const override = av.dateOverrides.find((o) => o.date === date);
  return override ? override.intervals : av.weeklyHours[weekdayOf(new Date(`${date}T00:00:00Z`).getUTCDay())];
}

describe("computeSlots: properties", () => {
  it("(a) no offered slot's blocked range meets a busy booking's blocked range", () => {
    fc.assert(
      fc.property(scenario, (q) => {
        for (const slot of computeSlots(q)) {
          const mine = blockedRange(slot.start, slot.end, q.paddingMinutes, q.bufferBeforeMinutes);
          for (const b of q.busy) {
            const theirs = blockedRange(b.start, b.end, b.paddingMinutes, b.bufferBeforeMinutes);
            const meets = mine.start < theirs.end && theirs.start < mine.end && theirs.start < theirs.end;
            expect(meets, `${slot.start.toISOString()} meets busy ${b.start.toISOString()}`).toBe(false);
          }
        }
      }),
      RUNS,
    );
  });

  it("(a2) with bookings, exactly the slots offered without them whose [start − buffer, end + padding) misses every [start − buffer, end + padding) of a booking", () => {
    fc.assert(
      fc.property(scenario, (q) => {
        // Written out with arithmetic rather than blockedRange, so it checks the rule itself: buffer before, padding after.
        const pad = q.paddingMinutes * MINUTE;
        const before = (q.bufferBeforeMinutes ?? 0) * MINUTE;
        const expected = computeSlots({ ...q, busy: [] })
          .filter((slot) =>
            q.busy.every((b) => {
              const bStart = b.start.getTime() - (b.bufferBeforeMinutes ?? 0) * MINUTE;
              const bEnd = b.end.getTime() + b.paddingMinutes * MINUTE;
              return bStart >= bEnd || !(slot.start.getTime() - before < bEnd && bStart < slot.end.getTime() + pad);
            }),
          )
          .map((s) => s.start.toISOString());
        expect(iso(q)).toEqual(expected);
      }),
      RUNS,
    );
  });

  it("(b) every slot starts on the wall-clock grid of an interval of its host-local day and ends inside it", () => {
    fc.assert(
      fc.property(scenario, (q) => {
        for (const slot of computeSlots(q)) {
          const wall = wallOf(q.hostZone, slot.start);
          // The host's clock in the slot's last millisecond, in minutes from the start of the slot's day.
          const last = wallOf(q.hostZone, new Date(slot.end.getTime() - 1));
          const lastMinute = (Date.parse(`${last.date}T00:00:00Z`) - Date.parse(`${wall.date}T00:00:00Z`)) / MINUTE + last.minute;
          const inside = intervalsOfDay(q.availability, wall.date).some((iv) => {
            const start = toMinutes(iv.start);
            const end = iv.end === "24:00" ? 1440 : toMinutes(iv.end);
            return wall.minute >= start && (wall.minute - start) % q.slotMinutes === 0 && lastMinute < end;
          });
          expect(inside, `${slot.start.toISOString()} (${wall.date} ${hhmm(wall.minute)} in ${q.hostZone})`).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it("(c) slots ascend without overlapping, each exactly slotMinutes long, within the viewer's days", () => {
    fc.assert(
      fc.property(scenario, (q) => {
        const slots = computeSlots(q);
        slots.forEach((slot, i) => {
          expect(slot.end.getTime() - slot.start.getTime()).toBe(q.slotMinutes * MINUTE);
          if (i > 0) expect(slots[i - 1].end.getTime()).toBeLessThanOrEqual(slot.start.getTime());
          const viewerDate = wallOf(q.viewerZone, slot.start).date;
          expect(viewerDate >= q.rangeStartDate && viewerDate <= q.rangeEndDate).toBe(true);
        });
      }),
      RUNS,
    );
  });

  it("(d) every slot starts at or after now + notice and before the window ends", () => {
    fc.assert(
      fc.property(scenario, (q) => {
        const hostToday = wallOf(q.hostZone, q.now).date;
        const lastDay = addDays(hostToday, q.availability.bookingWindowDays - 1);
        for (const slot of computeSlots(q)) {
          expect(slot.start.getTime()).toBeGreaterThanOrEqual(q.now.getTime() + q.availability.minimumNoticeMinutes * MINUTE);
          expect(wallOf(q.hostZone, slot.start).date <= lastDay).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it("isSlotFree accepts every offered start and nothing a minute off it", () => {
    fc.assert(
      fc.property(scenario, (q) => {
        const slots = computeSlots(q);
        const offered = new Set(slots.map((s) => s.start.getTime()));
        for (const slot of slots) {
          expect(isSlotFree({ ...q, start: slot.start })).toBe(true);
          const off = new Date(slot.start.getTime() + MINUTE);
          if (!offered.has(off.getTime()) && q.slotMinutes > 1) expect(isSlotFree({ ...q, start: off })).toBe(false);
        }
      }),
      { numRuns: 100 },
    );
  });

  it("booking offered slots one after another never makes two bookings meet, padding included", () => {
    fc.assert(
      fc.property(scenario, fc.array(fc.nat(), { maxLength: 6 }), (q, picks) => {
        const busy = [...q.busy];
        const made: BusyBooking[] = [];
        for (const pick of picks) {
          const slots = computeSlots({ ...q, busy });
          if (slots.length === 0) break;
          const chosen = slots[pick % slots.length];
          const booking = { start: chosen.start, end: chosen.end, paddingMinutes: q.paddingMinutes, bufferBeforeMinutes: q.bufferBeforeMinutes };
          for (const other of made) {
            const a = blockedRange(booking.start, booking.end, booking.paddingMinutes, booking.bufferBeforeMinutes);
            const b = blockedRange(other.start, other.end, other.paddingMinutes, other.bufferBeforeMinutes);
            expect(a.start < b.end && b.start < a.end).toBe(false);
          }
          made.push(booking);
          busy.push(booking);
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe("slotsUnchangedUntil: how long a listing may be answered again", () => {
  it("computeSlots gives the same slots at every later instant before it, and other slots at it when the first slot bounds it", () => {
    fc.assert(
      fc.property(scenario, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 4 }), (q, fractions) => {
        const slots = computeSlots(q);
        const until = slotsUnchangedUntil(q, slots);
        const now = q.now.getTime();
        for (const t of [now, now + 1, until - 1, ...fractions.map((f) => now + Math.floor(f * (until - now)))]) {
          if (t < now || t >= until) continue;
          expect(computeSlots({ ...q, now: new Date(t) }), new Date(t).toISOString()).toEqual(slots);
        }
        // Not needlessly short: when a slot bounds it, that slot is gone at `until`.
        if (slots.length > 0 && until - 1 + q.availability.minimumNoticeMinutes * MINUTE === slots[0].start.getTime() && until > now) {
          expect(computeSlots({ ...q, now: new Date(until) })[0]?.start.getTime()).not.toBe(slots[0].start.getTime());
        }
      }),
      RUNS,
    );
  });
});

describe("computeSlots and whyRefused: seats", () => {
  const seat = (start: string, count: number) => ({ start: new Date(start), end: new Date(new Date(start).getTime() + 30 * MINUTE), paddingMinutes: 0, count });

  it("a slot holding seats stays offered with the seats it has left until they are all taken; other slots show every seat", () => {
    const q = query({ seats: { perSlot: 3, taken: [seat("2026-03-02T09:00:00Z", 2), seat("2026-03-02T10:00:00Z", 3)] } });
    const slots = computeSlots(q);
    expect(slots[0]).toEqual({ start: new Date("2026-03-02T09:00:00Z"), end: new Date("2026-03-02T09:30:00Z"), seatsLeft: 1 });
    expect(slots.find((s) => s.start.toISOString() === "2026-03-02T10:00:00.000Z")).toBeUndefined();
    expect(slots.find((s) => s.start.toISOString() === "2026-03-02T09:30:00.000Z")?.seatsLeft).toBe(3);
    expect(whyRefused({ ...q, start: new Date("2026-03-02T10:00:00Z") })).toBe("full");
    expect(whyRefused({ ...q, start: new Date("2026-03-02T09:00:00Z") })).toBeUndefined();
  });

  it("a seated slot blocks the starts of the event that meet it, as any booking does", () => {
    const q = query({ slotMinutes: 60, availability: availability({ weeklyHours: { monday: [{ start: "09:30", end: "12:00" }] } }), seats: { perSlot: 3, taken: [{ ...seat("2026-03-02T09:00:00Z", 1), end: new Date("2026-03-02T10:00:00Z") }] } });
    expect(whyRefused({ ...q, start: new Date("2026-03-02T09:30:00Z") })).toBe("taken");
  });

  it("a day at its limit still offers the seats left of its slots that hold some", () => {
    const q = query({ seats: { perSlot: 2, taken: [seat("2026-03-02T09:00:00Z", 1)] }, limits: { daily: 1, weekly: null, weekStartsOn: 1, booked: [{ start: new Date("2026-03-02T09:00:00Z") }] } });
    expect(iso(q)).toEqual(["2026-03-02T09:00:00.000Z"]);
    expect(whyRefused({ ...q, start: new Date("2026-03-02T11:00:00Z") })).toBe("daily_limit");
  });
});
