// Unit tests for the display strings: dates, times, ranges, durations, relative ages and initials.
import { describe, it, expect } from "vitest";
import {
  DATE_FORMATS,
  TIME_FORMATS,
  avatarName,
  formatBookingRange,
  formatDate,
  formatDateTimeForHost,
  formatDurationMinutes,
  formatLongDate,
  formatTime,
  isDateFormat,
  isTimeFormat,
  timeAgo,
} from "../../src/domain/format.js";

const at = (s: string): Date => new Date(s);

describe("format lists", () => {
  it("are the values the API accepts", () => {
    expect([...DATE_FORMATS]).toEqual(["31/12/2024", "12/31/2024", "2023-12-31", "31.12.2024", "2024/12/31", "31-12-2024"]);
    expect([...TIME_FORMATS]).toEqual(["12_hours", "24_hours"]);
    expect(isDateFormat("31/12/2024")).toBe(true);
    expect(isDateFormat("dd/mm/yyyy")).toBe(false);
    expect(isTimeFormat("24_hours")).toBe(true);
    expect(isTimeFormat("24h")).toBe(false);
  });
});

describe("formatDate", () => {
  const christmasEve = at("2026-12-24T09:05:00Z");
  const earlyMarch = at("2026-03-05T09:05:00Z");

  it("writes every date format", () => {
    const expected: Array<[string, string, string]> = [
      ["31/12/2024", "24/12/2026", "05/03/2026"],
      ["12/31/2024", "12/24/2026", "03/05/2026"],
      ["2023-12-31", "2026-12-24", "2026-03-05"],
      ["31.12.2024", "24.12.2026", "05.03.2026"],
      ["2024/12/31", "2026/12/24", "2026/03/05"],
      ["31-12-2024", "24-12-2026", "05-03-2026"],
    ];
    expect(expected.map(([f]) => f)).toEqual([...DATE_FORMATS]);
    for (const [fmt, dec, mar] of expected) {
      expect(formatDate(christmasEve, "Etc/UTC", fmt), fmt).toBe(dec);
      expect(formatDate(earlyMarch, "Etc/UTC", fmt), fmt).toBe(mar);
    }
  });

  it("reads the day in the host's zone", () => {
    const lateUtc = at("2026-12-24T23:30:00Z");
    expect(formatDate(lateUtc, "Etc/UTC", "31/12/2024")).toBe("24/12/2026");
    expect(formatDate(lateUtc, "Asia/Tokyo", "31/12/2024")).toBe("25/12/2026");
    expect(formatDate(at("2027-01-01T03:00:00Z"), "America/New_York", "2023-12-31")).toBe("2026-12-31");
  });

  it("throws on an unknown format", () => {
    expect(() => formatDate(christmasEve, "Etc/UTC", "dd/mm/yyyy")).toThrow(/unknown date_format/);
  });
});

describe("formatTime", () => {
  const cases: Array<[string, string, string]> = [
    ["2026-12-24T09:30:00Z", "09:30 AM", "09:30"],
    ["2026-12-24T17:00:00Z", "05:00 PM", "17:00"],
    ["2026-12-24T00:00:00Z", "12:00 AM", "00:00"],
    ["2026-12-24T00:05:00Z", "12:05 AM", "00:05"],
    ["2026-12-24T12:00:00Z", "12:00 PM", "12:00"],
    ["2026-12-24T12:45:00Z", "12:45 PM", "12:45"],
    ["2026-12-24T11:59:00Z", "11:59 AM", "11:59"],
    ["2026-12-24T23:59:59Z", "11:59 PM", "23:59"],
  ];

  it("writes both time formats", () => {
    for (const [utc, twelve, twentyFour] of cases) {
      expect(formatTime(at(utc), "Etc/UTC", "12_hours"), utc).toBe(twelve);
      expect(formatTime(at(utc), "Etc/UTC", "24_hours"), utc).toBe(twentyFour);
    }
  });

  it("reads the time in the host's zone, including half-hour zones and DST", () => {
    expect(formatTime(at("2026-12-24T09:30:00Z"), "Asia/Kolkata", "24_hours")).toBe("15:00");
    expect(formatTime(at("2026-07-01T16:00:00Z"), "America/New_York", "12_hours")).toBe("12:00 PM");
    expect(formatTime(at("2026-01-01T16:00:00Z"), "America/New_York", "12_hours")).toBe("11:00 AM");
  });

  it("throws on an unknown format", () => {
    expect(() => formatTime(at("2026-12-24T09:30:00Z"), "Etc/UTC", "12h")).toThrow(/unknown time_format/);
  });
});

describe("formatLongDate and formatDateTimeForHost", () => {
  it("writes day, month name and year", () => {
    expect(formatLongDate(at("2026-12-24T10:00:00Z"), "Etc/UTC")).toBe("24 December 2026");
    expect(formatLongDate(at("2026-03-05T10:00:00Z"), "Etc/UTC")).toBe("05 March 2026");
    expect(formatLongDate(at("2026-12-31T23:00:00Z"), "Europe/Berlin")).toBe("01 January 2027");
    expect(formatLongDate(at("2026-01-01T03:00:00Z"), "America/New_York")).toBe("31 December 2025");
  });

  it("joins the host's date and time", () => {
    const t = at("2026-12-24T17:00:00Z");
    expect(formatDateTimeForHost(t, "Etc/UTC", "31/12/2024", "12_hours")).toBe("24/12/2026 05:00 PM");
    expect(formatDateTimeForHost(t, "Etc/UTC", "2023-12-31", "24_hours")).toBe("2026-12-24 17:00");
    expect(formatDateTimeForHost(t, "Asia/Tokyo", "12/31/2024", "12_hours")).toBe("12/25/2026 02:00 AM");
  });
});

describe("formatBookingRange", () => {
  it("writes the date once when start and end share a day", () => {
    expect(formatBookingRange(at("2026-12-24T09:00:00Z"), at("2026-12-24T09:30:00Z"), "Etc/UTC", "31/12/2024", "12_hours")).toBe(
      "24/12/2026 09:00 AM - 09:30 AM",
    );
    expect(formatBookingRange(at("2026-12-24T11:30:00Z"), at("2026-12-24T12:30:00Z"), "Etc/UTC", "2024/12/31", "24_hours")).toBe(
      "2026/12/24 11:30 - 12:30",
    );
  });

  it("writes the end's date too when the range crosses midnight in the zone", () => {
    const start = at("2026-12-24T23:30:00Z");
    const end = at("2026-12-25T00:30:00Z");
    expect(formatBookingRange(start, end, "Etc/UTC", "31/12/2024", "24_hours")).toBe("24/12/2026 23:30 - 25/12/2026 00:30");
    expect(formatBookingRange(start, end, "Etc/UTC", "12/31/2024", "12_hours")).toBe("12/24/2026 11:30 PM - 12/25/2026 12:30 AM");
    // Same instants, no midnight in between for Tokyo.
    expect(formatBookingRange(start, end, "Asia/Tokyo", "31.12.2024", "12_hours")).toBe("25.12.2026 08:30 AM - 09:30 AM");
    // Crossing happens only in New York.
    expect(formatBookingRange(at("2026-12-25T04:30:00Z"), at("2026-12-25T05:30:00Z"), "America/New_York", "31-12-2024", "12_hours")).toBe(
      "24-12-2026 11:30 PM - 25-12-2026 12:30 AM",
    );
  });

  it("ends at midnight on the next day's date", () => {
    expect(formatBookingRange(at("2026-12-24T23:30:00Z"), at("2026-12-25T00:00:00Z"), "Etc/UTC", "2023-12-31", "24_hours")).toBe(
      "2026-12-24 23:30 - 2026-12-25 00:00",
    );
  });

  it("shows the repeated hour of a fall-back as wall-clock times", () => {
    expect(formatBookingRange(at("2026-11-01T05:30:00Z"), at("2026-11-01T06:30:00Z"), "America/New_York", "12/31/2024", "12_hours")).toBe(
      "11/01/2026 01:30 AM - 01:30 AM",
    );
  });
});

describe("formatDurationMinutes", () => {
  it("writes minutes, hours and both", () => {
    const cases: Array<[number, string]> = [
      [0, "0 minutes"],
      [1, "1 minute"],
      [5, "5 minutes"],
      [10, "10 minutes"],
      [15, "15 minutes"],
      [30, "30 minutes"],
      [45, "45 minutes"],
      [60, "1 hour"],
      [61, "1 hour 1 minute"],
      [90, "1 hour 30 minutes"],
      [120, "2 hours"],
      [150, "2 hours 30 minutes"],
    ];
    for (const [min, text] of cases) expect(formatDurationMinutes(min), String(min)).toBe(text);
  });

  it("refuses negative and fractional durations", () => {
    expect(() => formatDurationMinutes(-5)).toThrow(RangeError);
    expect(() => formatDurationMinutes(1.5)).toThrow(RangeError);
    expect(() => formatDurationMinutes(Number.NaN)).toThrow(RangeError);
  });
});

describe("timeAgo (Rails distance_of_time_in_words thresholds)", () => {
  const now = at("2026-06-15T12:00:00Z");
  const secondsBefore = (s: number): Date => new Date(now.getTime() - s * 1000);
  const MIN = 60;
  const HOUR = 3600;
  const DAY = 86_400;

  it("follows every boundary below a year", () => {
    const cases: Array<[number, string]> = [
      [0, "less than a minute ago"],
      [29, "less than a minute ago"],
      [30, "1 minute ago"],
      [89, "1 minute ago"],
      [90, "2 minutes ago"],
      [5 * MIN, "5 minutes ago"],
      [44 * MIN + 29, "44 minutes ago"],
      [44 * MIN + 30, "about 1 hour ago"],
      [89 * MIN + 29, "about 1 hour ago"],
      [89 * MIN + 30, "about 2 hours ago"],
      [3 * HOUR, "about 3 hours ago"],
      [23 * HOUR + 59 * MIN + 29, "about 24 hours ago"],
      [23 * HOUR + 59 * MIN + 30, "1 day ago"],
      [41 * HOUR + 59 * MIN + 29, "1 day ago"],
      [41 * HOUR + 59 * MIN + 30, "2 days ago"],
      [60 * HOUR, "3 days ago"],
      [29 * DAY + 23 * HOUR + 59 * MIN + 29, "30 days ago"],
      [29 * DAY + 23 * HOUR + 59 * MIN + 30, "about 1 month ago"],
      [44 * DAY + 23 * HOUR + 59 * MIN + 29, "about 1 month ago"],
      [44 * DAY + 23 * HOUR + 59 * MIN + 30, "about 2 months ago"],
      [59 * DAY + 23 * HOUR + 59 * MIN + 29, "about 2 months ago"],
      [59 * DAY + 23 * HOUR + 59 * MIN + 30, "2 months ago"],
      [90 * DAY, "3 months ago"],
      [364 * DAY, "12 months ago"],
      [365 * DAY - 31, "12 months ago"],
    ];
    for (const [s, text] of cases) expect(timeAgo(secondsBefore(s), now), `${s}s`).toBe(text);
  });

  it("reads years as about, over and almost", () => {
    expect(timeAgo(at("2025-06-15T12:00:00Z"), now)).toBe("about 1 year ago");
    expect(timeAgo(at("2025-06-12T12:00:00Z"), now)).toBe("about 1 year ago");
    expect(timeAgo(at("2025-01-15T12:00:00Z"), now)).toBe("over 1 year ago");
    expect(timeAgo(at("2024-08-15T12:00:00Z"), now)).toBe("almost 2 years ago");
    expect(timeAgo(at("2024-06-15T12:00:00Z"), now)).toBe("about 2 years ago");
    expect(timeAgo(at("2022-12-15T12:00:00Z"), now)).toBe("over 3 years ago");
  });

  it("matches the Rails documentation examples", () => {
    const from = at("2026-06-15T12:00:00Z");
    expect(timeAgo(from, at("2027-06-18T12:00:00Z"))).toBe("about 1 year ago"); // 1.year + 3.days
    expect(timeAgo(from, at("2029-12-15T12:00:00Z"))).toBe("over 3 years ago"); // 3.years + 6.months
    expect(timeAgo(from, at("2030-06-24T12:30:05Z"))).toBe("about 4 years ago"); // 4.years + 9.days + 30.minutes + 5.seconds
    expect(timeAgo(from, at("2032-07-04T12:00:00Z"))).toBe("about 6 years ago"); // 6.years + 19.days
    expect(timeAgo(from, new Date(from.getTime() + 50 * 60_000))).toBe("about 1 hour ago");
    expect(timeAgo(from, new Date(from.getTime() + 76_000))).toBe("1 minute ago");
  });

  it("discounts leap days before splitting years", () => {
    // 2000-01-01 to 2040-03-26 is 14695 days = 21160800 min. Without the discount the remainder over
    // 40 * 525600 is 136800 (>= 131400, "over"); Rails removes the 11 leap days 2000..2040 (15840 min),
    // leaving 120960, which is "about".
    expect(timeAgo(at("2000-01-01T00:00:00Z"), at("2040-03-26T00:00:00Z"))).toBe("about 40 years ago");
  });

  it("is symmetric, like Rails, for a time in the future", () => {
    expect(timeAgo(new Date(now.getTime() + 3 * DAY * 1000), now)).toBe("3 days ago");
  });

  it("rejects invalid dates", () => {
    expect(() => timeAgo(new Date("nope"), now)).toThrow(RangeError);
  });
});

describe("avatarName", () => {
  it("takes the first letters of the first and last words, upper-cased", () => {
    const cases: Array<[string, string]> = [
      ["Ada Lovelace", "AL"],
      ["ada lovelace", "AL"],
      ["Ada King Lovelace", "AL"],
      ["cher", "C"],
      ["  ", ""],
      ["", ""],
      ["  grace   hopper  ", "GH"],
      ["Jean-Luc Picard", "JP"],
      ["émile zola", "ÉZ"],
      ["\u{1D4D0}lice Smith", "\u{1D4D0}S"],
      ["straße", "S"],
    ];
    for (const [name, initials] of cases) expect(avatarName(name), JSON.stringify(name)).toBe(initials);
  });
});
