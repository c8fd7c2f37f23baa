// Booking rules without a database: categories, date ranges, pagination, attendees, display fields and input checks.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  aggregateAttendees,
  bookingDuration,
  bookingRangeForHost,
  CATEGORIES,
  categoryRule,
  changeProblem,
  checkGuestEmails,
  checkImportEntry,
  listingRange,
  paginationOf,
  parseIsoTime,
  readCategory,
  readPage,
  selectCategory,
  slotDays,
  type AttendeeBooking,
  answerProblem,
  matchesNoShow,
  noShowProblem,
  readNoShow,
  requestExpiresAt,
} from "../../src/domain/booking.js";
import { ApiError } from "../../src/domain/errors.js";

const NOW = new Date("2026-03-10T15:00:00Z");
const d = (s: string): Date => new Date(s);

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err.rawMessage;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("readCategory", () => {
  it("knows the five categories and reads anything else as upcoming", () => {
    for (const c of CATEGORIES) expect(readCategory(c)).toBe(c);
    expect(readCategory(undefined)).toBe("upcoming");
    expect(readCategory("Past")).toBe("upcoming");
    expect(readCategory("constructor")).toBe("upcoming");
  });
});

describe("listingRange", () => {
  it("defaults to today .. today+15 in the host's zone, both days whole", () => {
    const r = listingRange("upcoming", undefined, undefined, "America/New_York", NOW);
    // New York is on EDT (UTC-4) since 8 March.
    expect(r).toEqual({ dateFrom: "2026-03-10", dateTo: "2026-03-25", from: d("2026-03-10T04:00:00Z"), to: d("2026-03-26T04:00:00Z") });
  });

  it("uses the host's today: late evening in Los Angeles is the next day in UTC", () => {
    const late = new Date("2026-03-11T06:30:00Z");
    expect(listingRange("upcoming", undefined, undefined, "America/Los_Angeles", late).dateFrom).toBe("2026-03-10");
    expect(listingRange("upcoming", undefined, undefined, "Etc/UTC", late).dateFrom).toBe("2026-03-11");
  });

  it("defaults past to the 15 days up to today", () => {
    const r = listingRange("past", undefined, undefined, "Etc/UTC", NOW);
    expect([r.dateFrom, r.dateTo]).toEqual(["2026-02-23", "2026-03-10"]);
  });

  it("replaces each unreadable date by its default, and a reversed range by the whole default", () => {
    expect(listingRange("upcoming", "2026-03-12", "not a date", "Etc/UTC", NOW)).toMatchObject({ dateFrom: "2026-03-12", dateTo: "2026-03-25" });
    expect(listingRange("upcoming", "2026-02-30", "2026-03-11", "Etc/UTC", NOW)).toMatchObject({ dateFrom: "2026-03-10", dateTo: "2026-03-11" });
    expect(listingRange("upcoming", "2026-04-01", "2026-03-01", "Etc/UTC", NOW)).toMatchObject({ dateFrom: "2026-03-10", dateTo: "2026-03-25" });
    expect(listingRange("past", "", "2026-1-1", "Etc/UTC", NOW)).toMatchObject({ dateFrom: "2026-02-23", dateTo: "2026-03-10" });
  });

  it("runs from the first to the last instant of the host's days across a DST change", () => {
    const r = listingRange("archived", "2026-03-08", "2026-03-08", "America/New_York", NOW);
    // 8 March 2026 is the US spring-forward day: 23 hours.
    expect(r.to.getTime() - r.from.getTime()).toBe(23 * 3_600_000);
  });
});

describe("categoryRule", () => {
  const range = listingRange("upcoming", "2026-03-01", "2026-03-31", "Etc/UTC", NOW);

  it("splits confirmed bookings at now: upcoming and recent from now, past before", () => {
    expect(categoryRule("upcoming", range, NOW)).toEqual({ status: "confirmed", archived: false, startFrom: NOW, startBefore: range.to, sort: { field: "start_time", direction: 1 } });
    expect(categoryRule("recent", range, NOW)).toMatchObject({ status: "confirmed", startFrom: NOW, sort: { field: "booked_at", direction: -1 } });
    expect(categoryRule("past", range, NOW)).toEqual({ status: "confirmed", archived: false, startFrom: range.from, startBefore: NOW, sort: { field: "start_time", direction: -1 } });
    expect(categoryRule("canceled", range, NOW)).toMatchObject({ status: "canceled", archived: false, startFrom: NOW });
    expect(categoryRule("archived", range, NOW)).toMatchObject({ status: undefined, archived: true, startFrom: range.from, startBefore: range.to });
  });

  it("keeps a range that lies wholly in the past or the future as it is", () => {
    const later = listingRange("upcoming", "2026-04-01", "2026-04-02", "Etc/UTC", NOW);
    expect(categoryRule("upcoming", later, NOW).startFrom).toEqual(later.from);
    const earlier = listingRange("past", "2026-01-01", "2026-01-02", "Etc/UTC", NOW);
    expect(categoryRule("past", earlier, NOW).startBefore).toEqual(earlier.to);
  });
});

describe("selectCategory", () => {
  const range = listingRange("upcoming", "2026-03-01", "2026-03-31", "Etc/UTC", NOW);
  const b = (id: string, status: string, start: string, bookedAt: string, archived = false) => ({ id, status, archived, start: d(start), end: d(start), bookedAt: d(bookedAt) });
  const all = [
    b("b", "confirmed", "2026-03-12T09:00:00Z", "2026-03-01T00:00:00Z"),
    b("a", "confirmed", "2026-03-12T09:00:00Z", "2026-03-02T00:00:00Z"),
    b("c", "confirmed", "2026-03-11T09:00:00Z", "2026-03-03T00:00:00Z"),
    b("p", "confirmed", "2026-03-10T14:59:59Z", "2026-03-03T00:00:00Z"),
    b("n", "confirmed", "2026-03-10T15:00:00Z", "2026-03-01T00:00:00Z"),
    b("x", "canceled", "2026-03-12T09:00:00Z", "2026-03-03T00:00:00Z"),
    b("r", "rescheduled", "2026-03-12T09:00:00Z", "2026-03-03T00:00:00Z"),
    b("z", "confirmed", "2026-04-01T00:00:00Z", "2026-03-03T00:00:00Z"),
    b("h", "rescheduled", "2026-03-13T09:00:00Z", "2026-03-03T00:00:00Z", true),
  ];
  const ids = (c: (typeof CATEGORIES)[number]) => selectCategory(all, categoryRule(c, range, NOW)).map((x) => x.id);

  it("filters and orders each category, equal times by id", () => {
    expect(ids("upcoming")).toEqual(["n", "c", "a", "b"]);
    expect(ids("recent")).toEqual(["c", "a", "n", "b"]);
    expect(ids("past")).toEqual(["p"]);
    expect(ids("canceled")).toEqual(["x"]);
    expect(ids("archived")).toEqual(["h"]);
  });
});

describe("readPage and paginationOf", () => {
  it("defaults to page 1 of 10, caps the limit at 500, and reads nonsense as the default", () => {
    expect(readPage(undefined)).toEqual({ number: 1, limit: 10, skip: 0 });
    expect(readPage({ number: 3, limit: 25 })).toEqual({ number: 3, limit: 25, skip: 50 });
    expect(readPage({ limit: 500 }).limit).toBe(500);
    expect(readPage({ limit: 501 }).limit).toBe(500);
    expect(readPage({ limit: 0 }).limit).toBe(10);
    expect(readPage({ limit: -1, number: -4 })).toEqual({ number: 1, limit: 10, skip: 0 });
    expect(readPage({ limit: 2.5, number: 1.5 })).toEqual({ number: 1, limit: 10, skip: 0 });
  });

  it("counts pages", () => {
    expect(paginationOf(readPage({ number: 2, limit: 10 }), 25)).toEqual({ limit: 10, number: 2, totalPages: 3, totalRecords: 25, currentPage: 2 });
    expect(paginationOf(readPage({}), 0)).toEqual({ limit: 10, number: 1, totalPages: 0, totalRecords: 0, currentPage: 1 });
    expect(paginationOf(readPage({ limit: 5 }), 5).totalPages).toBe(1);
  });

  it("property: the pages of a listing hold every record once", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 1, max: 600 }), (total, limit) => {
        const first = paginationOf(readPage({ limit }), total);
        let seen = 0;
        for (let n = 1; n <= first.totalPages; n++) {
          const page = readPage({ number: n, limit });
          seen += Math.max(0, Math.min(page.limit, total - page.skip));
        }
        expect(seen).toBe(total);
      }),
    );
  });
});

describe("display fields", () => {
  const host = { zone: "Europe/Berlin", dateFormat: "31/12/2024", timeFormat: "12_hours" };

  it("writes the range in the host's zone and formats, crossing midnight and a DST change", () => {
    const b = { status: "confirmed", start: d("2026-03-28T22:30:00Z"), end: d("2026-03-29T01:30:00Z") };
    // Berlin springs forward at 02:00 on 29 March 2026: 23:30 CET to 03:30 CEST.
    expect(bookingRangeForHost(b, host)).toBe("28/03/2026 11:30 PM - 29/03/2026 03:30 AM");
    expect(bookingDuration(b)).toBe("3 hours");
    expect(bookingDuration({ ...b, end: d("2026-03-28T23:15:00Z") })).toBe("45 minutes");
  });

  it("lets only a confirmed booking that has not started be changed", () => {
    const ahead = { status: "confirmed", start: d("2026-03-10T15:00:01Z"), end: d("2026-03-10T16:00:00Z") };
    expect(changeProblem(ahead, NOW)).toBeUndefined();
    expect(changeProblem({ ...ahead, start: NOW }, NOW)).toBe("booking has already started");
    expect(changeProblem({ ...ahead, status: "canceled" }, NOW)).toBe("booking is canceled, only a confirmed booking can be changed");
  });
});

describe("aggregateAttendees", () => {
  const host = { zone: "Asia/Tokyo", dateFormat: "2023-12-31", timeFormat: "24_hours" };
  const b = (id: string, email: string, name: string, status: string, start: string): AttendeeBooking => ({ id, email, name, status, start: d(start) });

  it("groups by e-mail, counts canceled apart, leaves rescheduled out, takes the latest name, most recent first", () => {
    const list = aggregateAttendees(
      [
        b("3", "a@x.io", "Ann Later", "confirmed", "2026-03-05T16:00:00Z"),
        b("1", "a@x.io", "Ann", "confirmed", "2026-03-01T10:00:00Z"),
        b("2", "a@x.io", "Ann", "canceled", "2026-03-03T10:00:00Z"),
        b("4", "a@x.io", "Ann Moved", "rescheduled", "2026-03-09T10:00:00Z"),
        b("5", "b@x.io", "Bob", "confirmed", "2026-03-07T10:00:00Z"),
        b("6", "c@x.io", "Cy", "rescheduled", "2026-03-08T10:00:00Z"),
      ],
      host,
      new Map([["b@x.io", { logo: "http://app/pictures/p1" }]]),
    );
    expect(list).toEqual([
      {
        email: "b@x.io", fullName: "Bob", avatarName: "B", bookingsCount: 1, canceledCount: 0, firstAppeared: "2026-03-07", lastAppeared: "2026-03-07",
        firstAppearedAt: "2026-03-07T10:00:00.000Z", lastAppearedAt: "2026-03-07T10:00:00.000Z", isTimelydoUser: true, logo: "http://app/pictures/p1", ids: ["5"],
      },
      {
        // 16:00 UTC on the 5th is the 6th in Tokyo.
        email: "a@x.io", fullName: "Ann Later", avatarName: "AL", bookingsCount: 2, canceledCount: 1, firstAppeared: "2026-03-01", lastAppeared: "2026-03-06",
        firstAppearedAt: "2026-03-01T10:00:00.000Z", lastAppearedAt: "2026-03-05T16:00:00.000Z", isTimelydoUser: false, logo: undefined, ids: ["1", "2", "3"],
      },
    ]);
  });
});

describe("parseIsoTime", () => {
  it("reads ISO 8601 date-times with a zone designator", () => {
    expect(parseIsoTime("2026-03-10T09:00:00Z")).toEqual(d("2026-03-10T09:00:00Z"));
    expect(parseIsoTime("2026-03-10T09:00Z")).toEqual(d("2026-03-10T09:00:00Z"));
    expect(parseIsoTime("2026-03-10T10:00:00.250+01:00")).toEqual(d("2026-03-10T09:00:00.250Z"));
    expect(parseIsoTime("2026-03-10t09:00:00z")).toEqual(d("2026-03-10T09:00:00Z"));
  });

  it("refuses times without a zone, impossible dates and times, and other shapes", () => {
    for (const bad of ["2026-03-10T09:00:00", "2026-02-30T09:00:00Z", "2026-03-10T24:00:00Z", "2026-03-10T09:60:00Z", "2026-03-10", "1741597200", "", "2026-03-10T09:00:00+01:75"]) {
      expect(parseIsoTime(bad), bad).toBeUndefined();
    }
  });
});

describe("checkGuestEmails", () => {
  it("allows guests only when the event does, within its limit, lowercased and once each", () => {
    expect(checkGuestEmails([], false, 0)).toEqual([]);
    expect(checkGuestEmails(["A@x.io", "a@x.io", "b@x.io"], true, 2)).toEqual(["a@x.io", "b@x.io"]);
    expect(message(() => checkGuestEmails(["a@x.io"], false, 5))).toBe("guest_emails are not allowed for this event");
    expect(message(() => checkGuestEmails(["a@x.io", "b@x.io"], true, 1))).toBe("guest_emails has more than 1 entries (the event's limit)");
    expect(message(() => checkGuestEmails(["a@x.io", "oops"], true, 5))).toBe("guest_emails[1] is invalid");
  });
});

describe("slotDays", () => {
  it("defaults to today and 7 days on in the viewer's zone", () => {
    expect(slotDays(undefined, undefined, "Pacific/Kiritimati", NOW)).toEqual({ dateFrom: "2026-03-11", dateTo: "2026-03-18" });
    expect(slotDays("2026-04-01", undefined, "Etc/UTC", NOW)).toEqual({ dateFrom: "2026-04-01", dateTo: "2026-04-08" });
  });

  it("allows at most 31 days and refuses unreadable or reversed dates", () => {
    expect(slotDays("2026-03-01", "2026-04-01", "Etc/UTC", NOW)).toEqual({ dateFrom: "2026-03-01", dateTo: "2026-04-01" });
    expect(message(() => slotDays("2026-03-01", "2026-04-02", "Etc/UTC", NOW))).toBe("date_to must be at most 31 days after date_from");
    expect(message(() => slotDays("2026-03-05", "2026-03-04", "Etc/UTC", NOW))).toBe("date_to must not be before date_from");
    expect(message(() => slotDays("03/05/2026", undefined, "Etc/UTC", NOW))).toBe("date_from is not a valid date (YYYY-MM-DD)");
  });
});

describe("checkImportEntry", () => {
  const entry = { eventId: "0123456789ABCDEF01234567", startTime: "2026-03-10T09:00:00Z", attendeeName: " Ann ", attendeeEmail: "ANN@x.io" };

  it("fills the defaults and normalises", () => {
    expect(checkImportEntry(entry, 0)).toEqual({
      eventId: "0123456789abcdef01234567",
      start: d("2026-03-10T09:00:00Z"),
      attendeeName: "Ann",
      attendeeEmail: "ann@x.io",
      status: "confirmed",
      archived: false,
      bookedAt: undefined,
      internalNotes: null,
    });
  });

  it("names the entry and the field", () => {
    expect(message(() => checkImportEntry({ ...entry, startTime: "2026-03-10 at 09:00" }, 3))).toBe("bookings[3].start_time is not a valid ISO 8601 time");
    expect(message(() => checkImportEntry({ ...entry, startTime: "2026-03-10 09:00" }, 3))).toBe("bookings[3].start_time needs a UTC offset or Z, e.g. 2026-12-09T13:00:00Z");
    expect(message(() => checkImportEntry({ ...entry, eventId: undefined }, 0))).toBe("bookings[0].event_id can't be blank");
    expect(message(() => checkImportEntry({ ...entry, status: "done" }, 7))).toBe("bookings[7].status is not included in the list");
    expect(message(() => checkImportEntry({ ...entry, bookedAt: "yesterday" }, 1))).toBe("bookings[1].booked_at is not a valid ISO 8601 time");
  });
});

describe("requests and no-shows (booking-kinds.md)", () => {
  const at = (iso: string) => new Date(iso);
  it("a request expires after confirmation_hours, or at its start if that is sooner", () => {
    expect(requestExpiresAt(at("2030-01-01T10:00:00Z"), at("2030-01-03T10:00:00Z"), 24)).toEqual(at("2030-01-02T10:00:00Z"));
    expect(requestExpiresAt(at("2030-01-01T10:00:00Z"), at("2030-01-01T12:00:00Z"), 24)).toEqual(at("2030-01-01T12:00:00Z"));
  });
  it("only a pending request not yet expired can be answered", () => {
    const expiresAt = at("2030-01-02T10:00:00Z");
    expect(answerProblem({ status: "pending", expiresAt }, at("2030-01-02T09:59:59Z"))).toBeUndefined();
    expect(answerProblem({ status: "pending", expiresAt }, expiresAt)).toBe("booking is not pending");
    for (const status of ["confirmed", "declined", "expired", "canceled"]) expect(answerProblem({ status, expiresAt }, at("2030-01-01T00:00:00Z"))).toBe("booking is not pending");
  });
  it("a no-show is recorded once a confirmed booking has started; the filter keeps only the one named", () => {
    const b = { status: "confirmed", start: at("2030-01-01T10:00:00Z"), end: at("2030-01-01T10:30:00Z") };
    expect(noShowProblem(b, at("2030-01-01T09:59:00Z"))).toBe("booking has not started yet");
    expect(noShowProblem(b, b.start)).toBeUndefined();
    expect(noShowProblem({ ...b, status: "pending" }, b.end)).toMatch(/only a confirmed booking/);
    expect(readNoShow(undefined)).toBeNull();
    expect(readNoShow("host")).toBe("host");
    expect(() => readNoShow("nobody")).toThrow();
    expect([matchesNoShow({ noShow: "attendee" }, "attendee"), matchesNoShow({ noShow: null }, "attendee"), matchesNoShow({ noShow: null }, null)]).toEqual([true, false, true]);
  });
});
