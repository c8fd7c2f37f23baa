// Unit tests for the busy periods of iCalendar text: real-world shaped feeds, each rule of docs/spec/integrations.md "Busy times" as an example, and properties.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { busyPeriods, EXPANSION_LIMITS, IcsLimitError, IcsParseError, mergeBusy, type BusyPeriod } from "../../src/domain/ical/busy.js";
import { calendarObject, type IcsBooking } from "../../src/domain/ical/writer.js";
import { utcToWallClock, wallClockToUtc } from "../../src/domain/timezones.js";
import { ianaZone } from "../../src/domain/ical/zones.js";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/ical/${name}`, import.meta.url), "utf8");

function cal(events: string[], head: string[] = []): string {
  return ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", ...head, ...events, "END:VCALENDAR", ""].join("\r\n");
}

function ev(uid: string, ...lines: string[]): string {
  return ["BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20250101T000000Z", ...lines, "END:VEVENT"].join("\r\n");
}

const range = (from: string, to: string) => ({ from: new Date(from), to: new Date(to) });
const spans = (ps: BusyPeriod[]) => ps.map((p) => [p.start.toISOString(), p.end.toISOString()]);
const UTC = { hostZone: "UTC", hostEmails: [] as string[] };
const BERLIN = { hostZone: "Europe/Berlin", hostEmails: ["ada@example.com"] };

describe("feeds shaped like real exports", () => {
  it("Google secret-address feed: weekly with EXDATE, UNTIL and a moved instance across DST; declined, transparent, cancelled left out; floating time in X-WR-TIMEZONE", () => {
    const ps = busyPeriods(fixture("google.ics"), range("2025-03-01T00:00:00Z", "2025-04-14T00:00:00Z"), { hostZone: "America/New_York", hostEmails: ["ada@example.com"] });
    expect(spans(ps)).toEqual([
      ["2025-03-03T08:00:00.000Z", "2025-03-03T08:30:00.000Z"],
      // The dentist: 13:00 floating, read in X-WR-TIMEZONE (Berlin), not in the host's New York.
      ["2025-03-12T12:00:00.000Z", "2025-03-12T13:00:00.000Z"],
      // 17 March moved from 09:00 to 14:00 by its override.
      ["2025-03-17T13:00:00.000Z", "2025-03-17T13:30:00.000Z"],
      ["2025-03-24T08:00:00.000Z", "2025-03-24T08:30:00.000Z"],
      // After the change to summer time still 09:00 in Berlin; 7 April is past UNTIL.
      ["2025-03-31T07:00:00.000Z", "2025-03-31T07:30:00.000Z"],
    ]);
    expect(ps[0]?.uid).toBe("5v3n1q2o8r7p6s5t4u3v2w1x0y@google.com");
  });

  it("Outlook export: Windows TZIDs read from their VTIMEZONE across both DST changes, show-as-free left out, tentative and out-of-office busy, a Windows name without VTIMEZONE mapped to IANA", () => {
    const ps = busyPeriods(fixture("outlook.ics"), range("2025-10-20T00:00:00Z", "2025-11-10T00:00:00Z"), BERLIN);
    expect(spans(ps)).toEqual([
      ["2025-10-24T08:00:00.000Z", "2025-10-24T09:00:00.000Z"],
      ["2025-10-29T00:00:00.000Z", "2025-10-29T01:00:00.000Z"],
      ["2025-10-31T09:00:00.000Z", "2025-10-31T10:00:00.000Z"],
      ["2025-11-03T17:00:00.000Z", "2025-11-03T18:00:00.000Z"],
      ["2025-11-07T09:00:00.000Z", "2025-11-07T10:00:00.000Z"],
    ]);
  });

  it("Apple iCloud export: a two-day VALUE=DATE event blocks its dates in the host's zone; transparent birthday and cancelled event left out", () => {
    const text = fixture("icloud.ics");
    const r = range("2025-11-01T00:00:00Z", "2025-12-01T00:00:00Z");
    expect(spans(busyPeriods(text, r, { hostZone: "America/New_York", hostEmails: [] }))).toEqual([
      ["2025-11-10T05:00:00.000Z", "2025-11-12T05:00:00.000Z"],
      ["2025-11-15T15:00:00.000Z", "2025-11-15T16:30:00.000Z"],
    ]);
    expect(spans(busyPeriods(text, r, { hostZone: "Europe/Berlin", hostEmails: [] }))[0]).toEqual(["2025-11-09T23:00:00.000Z", "2025-11-11T23:00:00.000Z"]);
  });
});

describe("what blocks", () => {
  const r = range("2025-06-01T00:00:00Z", "2025-06-30T00:00:00Z");
  const at = "DTSTART:20250602T100000Z\r\nDTEND:20250602T110000Z";

  it("an opaque confirmed event blocks; TRANSP:TRANSPARENT, STATUS:CANCELLED and X-MICROSOFT-CDO-BUSYSTATUS:FREE do not; STATUS:TENTATIVE does", () => {
    expect(busyPeriods(cal([ev("a", at)]), r, UTC)).toHaveLength(1);
    expect(busyPeriods(cal([ev("a", at, "TRANSP:TRANSPARENT")]), r, UTC)).toEqual([]);
    expect(busyPeriods(cal([ev("a", at, "STATUS:CANCELLED")]), r, UTC)).toEqual([]);
    expect(busyPeriods(cal([ev("a", at, "X-MICROSOFT-CDO-BUSYSTATUS:FREE")]), r, UTC)).toEqual([]);
    expect(busyPeriods(cal([ev("a", at, "STATUS:TENTATIVE")]), r, UTC)).toHaveLength(1);
  });

  it("declined by the host (address or EMAIL parameter, any case) does not block; declined by someone else, or accepted by the host, does", () => {
    const opts = { hostZone: "UTC", hostEmails: ["Host@Example.com", "other@example.net"] };
    expect(busyPeriods(cal([ev("a", at, "ATTENDEE;PARTSTAT=DECLINED:MAILTO:HOST@example.COM")]), r, opts)).toEqual([]);
    expect(busyPeriods(cal([ev("a", at, "ATTENDEE;PARTSTAT=DECLINED;EMAIL=other@example.net:urn:uuid:1234")]), r, opts)).toEqual([]);
    expect(busyPeriods(cal([ev("a", at, "ATTENDEE;PARTSTAT=DECLINED:mailto:someone@example.com")]), r, opts)).toHaveLength(1);
    expect(busyPeriods(cal([ev("a", at, "ATTENDEE;PARTSTAT=ACCEPTED:mailto:host@example.com")]), r, opts)).toHaveLength(1);
  });

  it("events the service wrote are left out by ignoreUid, with their overrides", () => {
    const text = cal([ev("ours@app", at, "RRULE:FREQ=DAILY;COUNT=3"), ev("ours@app", "RECURRENCE-ID:20250603T100000Z", "DTSTART:20250603T150000Z", "DTEND:20250603T160000Z"), ev("theirs", at)]);
    expect(busyPeriods(text, r, { ...UTC, ignoreUid: (u) => u === "ours@app" }).map((p) => p.uid)).toEqual(["theirs"]);
  });

  it("two VEVENTs with one UID and no RECURRENCE-ID both count; several VCALENDARs in one text are all read", () => {
    const a = ev("dup", "DTSTART:20250602T100000Z", "DTEND:20250602T110000Z");
    const b = ev("dup", "DTSTART:20250603T100000Z", "DTEND:20250603T110000Z");
    expect(busyPeriods(cal([a, b]), r, UTC)).toHaveLength(2);
    expect(busyPeriods(cal([a]) + cal([b]), r, UTC)).toHaveLength(2);
  });

  it("only periods overlapping [from, to) come back, cut to nothing outside", () => {
    const text = cal([ev("a", "DTSTART:20250601T230000Z", "DTEND:20250602T010000Z"), ev("b", "DTSTART:20250530T000000Z", "DTEND:20250601T000000Z")]);
    expect(spans(busyPeriods(text, r, UTC))).toEqual([["2025-06-01T23:00:00.000Z", "2025-06-02T01:00:00.000Z"]]);
  });
});

describe("lengths", () => {
  const r = range("2025-03-01T00:00:00Z", "2025-04-30T00:00:00Z");

  it("DURATION instead of DTEND; a day of DURATION is a calendar day (23 hours over the spring change)", () => {
    expect(spans(busyPeriods(cal([ev("a", "DTSTART:20250303T100000Z", "DURATION:PT1H30M")]), r, UTC))).toEqual([["2025-03-03T10:00:00.000Z", "2025-03-03T11:30:00.000Z"]]);
    expect(spans(busyPeriods(cal([ev("a", "DTSTART;TZID=Europe/Berlin:20250329T120000", "DURATION:P1D")]), r, UTC))).toEqual([["2025-03-29T11:00:00.000Z", "2025-03-30T10:00:00.000Z"]]);
  });

  it("DTSTART without DTEND: a date blocks its day; a date-time lasts nothing and blocks nothing (RFC 5545 3.6.1)", () => {
    expect(spans(busyPeriods(cal([ev("a", "DTSTART;VALUE=DATE:20250305")]), r, BERLIN))).toEqual([["2025-03-04T23:00:00.000Z", "2025-03-05T23:00:00.000Z"]]);
    expect(busyPeriods(cal([ev("a", "DTSTART:20250305T100000Z")]), r, UTC)).toEqual([]);
  });

  it("a DTEND before DTSTART blocks nothing for a date-time, its day for a date", () => {
    expect(busyPeriods(cal([ev("a", "DTSTART:20250305T100000Z", "DTEND:20250305T090000Z")]), r, UTC)).toEqual([]);
    expect(spans(busyPeriods(cal([ev("a", "DTSTART;VALUE=DATE:20250305", "DTEND;VALUE=DATE:20250305")]), r, UTC))).toEqual([["2025-03-05T00:00:00.000Z", "2025-03-06T00:00:00.000Z"]]);
  });
});

describe("recurrences", () => {
  const r = range("2025-01-01T00:00:00Z", "2025-12-31T00:00:00Z");
  const starts = (ps: BusyPeriod[]) => ps.map((p) => p.start.toISOString().slice(0, 16));

  it("RRULE with COUNT, UNTIL, BYDAY, INTERVAL and BYDAY with an ordinal", () => {
    expect(starts(busyPeriods(cal([ev("a", "DTSTART:20250303T090000Z", "DTEND:20250303T100000Z", "RRULE:FREQ=WEEKLY;BYDAY=MO,WE;COUNT=4")]), r, UTC))).toEqual([
      "2025-03-03T09:00",
      "2025-03-05T09:00",
      "2025-03-10T09:00",
      "2025-03-12T09:00",
    ]);
    expect(starts(busyPeriods(cal([ev("a", "DTSTART:20250303T090000Z", "DTEND:20250303T100000Z", "RRULE:FREQ=DAILY;INTERVAL=2;UNTIL=20250309T090000Z")]), r, UTC))).toEqual([
      "2025-03-03T09:00",
      "2025-03-05T09:00",
      "2025-03-07T09:00",
      "2025-03-09T09:00",
    ]);
    expect(starts(busyPeriods(cal([ev("a", "DTSTART:20250131T090000Z", "DTEND:20250131T100000Z", "RRULE:FREQ=MONTHLY;BYDAY=-1FR;COUNT=3")]), r, UTC))).toEqual([
      "2025-01-31T09:00",
      "2025-02-28T09:00",
      "2025-03-28T09:00",
    ]);
  });

  it("UNTIL in UTC ends a zoned series at the right instance (Outlook and Google write UTC)", () => {
    // 09:00 Berlin is 08:00Z in March; UNTIL at 08:00Z of the 10th includes that day's instance, 07:59Z would not.
    const base = ["DTSTART;TZID=Europe/Berlin:20250303T090000", "DTEND;TZID=Europe/Berlin:20250303T100000"];
    expect(busyPeriods(cal([ev("a", ...base, "RRULE:FREQ=WEEKLY;UNTIL=20250310T080000Z")]), r, UTC)).toHaveLength(2);
    expect(busyPeriods(cal([ev("a", ...base, "RRULE:FREQ=WEEKLY;UNTIL=20250310T075959Z")]), r, UTC)).toHaveLength(1);
    // A floating UNTIL (not valid with a TZID, written anyway) is DTSTART's wall clock; a date UNTIL includes its day.
    expect(busyPeriods(cal([ev("a", ...base, "RRULE:FREQ=WEEKLY;UNTIL=20250310T090000")]), r, { hostZone: "Asia/Tokyo", hostEmails: [] })).toHaveLength(2);
    expect(busyPeriods(cal([ev("a", ...base, "RRULE:FREQ=WEEKLY;UNTIL=20250310")]), r, UTC)).toHaveLength(2);
  });

  it("dates that do not exist are skipped, not moved (a yearly 29 February; BYMONTHDAY=30 in February)", () => {
    const leap = busyPeriods(cal([ev("a", "DTSTART;VALUE=DATE:20240229", "RRULE:FREQ=YEARLY")]), range("2024-01-01T00:00:00Z", "2029-01-01T00:00:00Z"), UTC);
    expect(starts(leap)).toEqual(["2024-02-29T00:00", "2028-02-29T00:00"]);
    const thirtieth = busyPeriods(cal([ev("a", "DTSTART:20250130T090000Z", "DTEND:20250130T100000Z", "RRULE:FREQ=MONTHLY;BYMONTHDAY=30;COUNT=3")]), r, UTC);
    expect(starts(thirtieth)).toEqual(["2025-01-30T09:00", "2025-03-30T09:00", "2025-04-30T09:00"]);
  });

  it("RDATE: DATE-TIME (several per line, another zone), DATE, and PERIOD with an end or a duration", () => {
    const ps = busyPeriods(
      cal([
        ev(
          "a",
          "DTSTART:20250303T090000Z",
          "DTEND:20250303T100000Z",
          "RDATE:20250304T090000Z,20250305T090000Z",
          "RDATE;TZID=America/New_York:20250306T090000",
          "RDATE;VALUE=PERIOD:20250307T120000Z/20250307T150000Z,20250308T120000Z/PT30M",
        ),
        ev("b", "DTSTART;VALUE=DATE:20250310", "RDATE;VALUE=DATE:20250312,20250314"),
      ]),
      r,
      UTC,
    );
    expect(spans(ps)).toEqual([
      ["2025-03-03T09:00:00.000Z", "2025-03-03T10:00:00.000Z"],
      ["2025-03-04T09:00:00.000Z", "2025-03-04T10:00:00.000Z"],
      ["2025-03-05T09:00:00.000Z", "2025-03-05T10:00:00.000Z"],
      ["2025-03-06T14:00:00.000Z", "2025-03-06T15:00:00.000Z"],
      ["2025-03-07T12:00:00.000Z", "2025-03-07T15:00:00.000Z"],
      ["2025-03-08T12:00:00.000Z", "2025-03-08T12:30:00.000Z"],
      ["2025-03-10T00:00:00.000Z", "2025-03-11T00:00:00.000Z"],
      ["2025-03-12T00:00:00.000Z", "2025-03-13T00:00:00.000Z"],
      ["2025-03-14T00:00:00.000Z", "2025-03-15T00:00:00.000Z"],
    ]);
  });

  it("the ical.js pitfall: with RDATE and no RRULE, DTSTART is still the first instance (RFC 5545 3.8.5.2)", () => {
    const ps = busyPeriods(cal([ev("a", "DTSTART:20250303T090000Z", "DTEND:20250303T100000Z", "RDATE:20250310T090000Z")]), r, UTC);
    expect(starts(ps)).toEqual(["2025-03-03T09:00", "2025-03-10T09:00"]);
  });

  it("EXDATE: several on a line, in UTC for a zoned series, and VALUE=DATE (that local day's instances)", () => {
    const base = ["DTSTART;TZID=Europe/Berlin:20250303T090000", "DTEND;TZID=Europe/Berlin:20250303T100000", "RRULE:FREQ=DAILY;COUNT=7"];
    expect(starts(busyPeriods(cal([ev("a", ...base, "EXDATE;TZID=Europe/Berlin:20250304T090000,20250306T090000", "EXDATE:20250308T080000Z")]), r, UTC))).toEqual([
      "2025-03-03T08:00",
      "2025-03-05T08:00",
      "2025-03-07T08:00",
      "2025-03-09T08:00",
    ]);
    expect(starts(busyPeriods(cal([ev("a", ...base, "EXDATE;VALUE=DATE:20250305,20250307")]), r, UTC))).toHaveLength(5);
    expect(starts(busyPeriods(cal([ev("a", "DTSTART;VALUE=DATE:20250303", "RRULE:FREQ=DAILY;COUNT=3", "EXDATE;VALUE=DATE:20250304")]), r, UTC))).toEqual(["2025-03-03T00:00", "2025-03-05T00:00"]);
  });

  describe("RECURRENCE-ID overrides", () => {
    const master = ev("s", "DTSTART;TZID=Europe/Berlin:20250303T090000", "DTEND;TZID=Europe/Berlin:20250303T100000", "RRULE:FREQ=WEEKLY;COUNT=4");
    const override = (...lines: string[]) => ev("s", ...lines);

    it("a moved instance (RECURRENCE-ID in the series' zone or in UTC) is busy at its new time only; its length is its own", () => {
      for (const rid of ["RECURRENCE-ID;TZID=Europe/Berlin:20250310T090000", "RECURRENCE-ID:20250310T080000Z"]) {
        const ps = busyPeriods(cal([override(rid, "DTSTART:20250311T150000Z", "DTEND:20250311T170000Z"), master]), r, UTC);
        expect(spans(ps)).toEqual([
          ["2025-03-03T08:00:00.000Z", "2025-03-03T09:00:00.000Z"],
          ["2025-03-11T15:00:00.000Z", "2025-03-11T17:00:00.000Z"],
          ["2025-03-17T08:00:00.000Z", "2025-03-17T09:00:00.000Z"],
          ["2025-03-24T08:00:00.000Z", "2025-03-24T09:00:00.000Z"],
        ]);
      }
    });

    it("a cancelled instance, a transparent one and one the host declined block nothing", () => {
      for (const extra of ["STATUS:CANCELLED", "TRANSP:TRANSPARENT", "ATTENDEE;PARTSTAT=DECLINED:mailto:ada@example.com"]) {
        const ps = busyPeriods(cal([master, override("RECURRENCE-ID;TZID=Europe/Berlin:20250310T090000", "DTSTART;TZID=Europe/Berlin:20250310T090000", "DTEND;TZID=Europe/Berlin:20250310T100000", extra)]), r, BERLIN);
        expect(starts(ps)).toEqual(["2025-03-03T08:00", "2025-03-17T08:00", "2025-03-24T08:00"]);
      }
    });

    it("an override that makes a free series busy for one instance", () => {
      const free = ev("f", "DTSTART:20250303T090000Z", "DTEND:20250303T100000Z", "RRULE:FREQ=DAILY;COUNT=3", "TRANSP:TRANSPARENT");
      const busy = ev("f", "RECURRENCE-ID:20250304T090000Z", "DTSTART:20250304T090000Z", "DTEND:20250304T100000Z", "TRANSP:OPAQUE");
      expect(starts(busyPeriods(cal([free, busy]), r, UTC))).toEqual(["2025-03-04T09:00"]);
    });

    it("RANGE=THISANDFUTURE moves and restyles that instance and every later one", () => {
      const future = override("RECURRENCE-ID;RANGE=THISANDFUTURE;TZID=Europe/Berlin:20250317T090000", "DTSTART;TZID=Europe/Berlin:20250317T110000", "DTEND;TZID=Europe/Berlin:20250317T113000");
      const six = master.replace("COUNT=4", "COUNT=6");
      // From 17 March on at 11:00 Berlin for 30 minutes, also after the change to summer time on 30 March.
      expect(spans(busyPeriods(cal([six, future]), r, UTC))).toEqual([
        ["2025-03-03T08:00:00.000Z", "2025-03-03T09:00:00.000Z"],
        ["2025-03-10T08:00:00.000Z", "2025-03-10T09:00:00.000Z"],
        ["2025-03-17T10:00:00.000Z", "2025-03-17T10:30:00.000Z"],
        ["2025-03-24T10:00:00.000Z", "2025-03-24T10:30:00.000Z"],
        ["2025-03-31T09:00:00.000Z", "2025-03-31T09:30:00.000Z"],
        ["2025-04-07T09:00:00.000Z", "2025-04-07T09:30:00.000Z"],
      ]);
      const cancelled = override("RECURRENCE-ID;RANGE=THISANDFUTURE;TZID=Europe/Berlin:20250317T090000", "DTSTART;TZID=Europe/Berlin:20250317T090000", "DTEND;TZID=Europe/Berlin:20250317T100000", "STATUS:CANCELLED");
      expect(starts(busyPeriods(cal([master, cancelled]), r, UTC))).toEqual(["2025-03-03T08:00", "2025-03-10T08:00"]);
    });

    it("an override without its series stands for itself", () => {
      expect(starts(busyPeriods(cal([override("RECURRENCE-ID:20250310T080000Z", "DTSTART:20250310T120000Z", "DTEND:20250310T130000Z")]), r, UTC))).toEqual(["2025-03-10T12:00"]);
    });
  });

  it("across DST: a weekly 09:00 Europe/Berlin stays 09:00 local over the March and October changes", () => {
    const ps = busyPeriods(
      cal([ev("w", "DTSTART;TZID=Europe/Berlin:20250303T090000", "DTEND;TZID=Europe/Berlin:20250303T100000", "RRULE:FREQ=WEEKLY;BYDAY=MO")]),
      range("2025-03-01T00:00:00Z", "2025-11-30T00:00:00Z"),
      UTC,
    );
    expect(ps.length).toBe(39);
    for (const p of ps) {
      expect(utcToWallClock("Europe/Berlin", p.start).time).toBe("09:00");
      expect(utcToWallClock("Europe/Berlin", p.end).time).toBe("10:00");
    }
    const hours = ps.map((p) => p.start.getUTCHours());
    expect(hours.slice(0, 4)).toEqual([8, 8, 8, 8]);
    expect(hours.slice(4, 34).every((h) => h === 7)).toBe(true);
    expect(hours.slice(-5)).toEqual([8, 8, 8, 8, 8]);
  });

  it("an instance in the spring gap is read with the offset before it: 02:30 becomes 03:30 (RFC 5545 3.3.5)", () => {
    const ps = busyPeriods(cal([ev("g", "DTSTART;TZID=America/New_York:20250302T023000", "DTEND;TZID=America/New_York:20250302T033000", "RRULE:FREQ=WEEKLY;COUNT=3")]), r, UTC);
    expect(ps.map((p) => utcToWallClock("America/New_York", p.start).time)).toEqual(["02:30", "03:30", "02:30"]);
  });

  it("an unbounded rule expands only the range, however long before it the series started", () => {
    const daily = cal([ev("d", "DTSTART:20000101T090000Z", "DTEND:20000101T100000Z", "RRULE:FREQ=DAILY")]);
    expect(busyPeriods(daily, range("2025-03-01T00:00:00Z", "2025-03-08T00:00:00Z"), UTC)).toHaveLength(7);
    // More than 50 000 minutes after DTSTART (where the old cap counted from, and then saw nothing: open).
    const minutely = cal([ev("m", "DTSTART:20250101T000000Z", "DURATION:PT30S", "RRULE:FREQ=MINUTELY")]);
    const busy = (from: string, to: string) => mergeBusy(busyPeriods(minutely, range(from, to), UTC)).map((p) => [p.start.toISOString(), p.end.toISOString()]);
    expect(busy("2025-03-01T00:00:00Z", "2025-03-02T00:00:00Z")).toEqual([["2025-03-01T00:00:00.000Z", "2025-03-01T23:59:30.000Z"]]);
    expect(busy("2025-01-10T00:00:00Z", "2025-01-10T00:10:00Z")).toEqual([["2025-01-10T00:00:00.000Z", "2025-01-10T00:09:30.000Z"]]);
  });

  it("a rule no date satisfies ends (ical.js alone would loop for ever inside next()); the rest of the feed still counts", () => {
    const text = cal([ev("never", "DTSTART:20250101T090000Z", "DTEND:20250101T100000Z", "RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30"), ev("other", "DTSTART:20250305T090000Z", "DTEND:20250305T100000Z")]);
    const r = range("2025-01-01T00:00:00Z", "2025-12-31T00:00:00Z");
    expect(busyPeriods(text, r, UTC).map((p) => p.uid)).toEqual(["never", "other"]);
    // Not caught by the quick check: the next 29 February on a Monday is 20 years of minutes away. Over a month
    // (what the service asks for) every minute is tested and none passes; over a year that is past the step budget,
    // and the calendar is unreadable rather than read as free.
    const minutely = cal([ev("never", "DTSTART:20250101T090000Z", "DTEND:20250101T100000Z", "RRULE:FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO"), ev("other", "DTSTART:20250105T090000Z", "DTEND:20250105T100000Z")]);
    expect(busyPeriods(minutely, range("2025-01-01T00:00:00Z", "2025-02-01T00:00:00Z"), UTC).map((p) => p.uid)).toEqual(["never", "other"]);
    expect(EXPANSION_LIMITS.steps).toBe(500_000);
    expect(() => busyPeriods(minutely, r, UTC)).toThrow(IcsLimitError);
  });
});

describe("time zones", () => {
  const r = range("2025-01-01T00:00:00Z", "2025-12-31T00:00:00Z");
  const at = (tzid: string) => [`DTSTART;TZID=${tzid}:20250115T090000`, `DTEND;TZID=${tzid}:20250115T100000`];

  it("a custom VTIMEZONE with a non-IANA TZID is read from its definition", () => {
    const vtz = ["BEGIN:VTIMEZONE", "TZID:My Office Zone", "BEGIN:STANDARD", "DTSTART:19700101T000000", "TZOFFSETFROM:+0530", "TZOFFSETTO:+0530", "END:STANDARD", "END:VTIMEZONE"].join("\r\n");
    expect(spans(busyPeriods(cal([ev("a", ...at("My Office Zone"))], [vtz]), r, UTC))).toEqual([["2025-01-15T03:30:00.000Z", "2025-01-15T04:30:00.000Z"]]);
  });

  it("Windows names without a VTIMEZONE through CLDR's table; Mozilla-prefixed IANA names; quoted TZIDs", () => {
    expect(spans(busyPeriods(cal([ev("a", ...at("Pacific Standard Time"))]), r, UTC))[0]?.[0]).toBe("2025-01-15T17:00:00.000Z");
    expect(spans(busyPeriods(cal([ev("a", ...at('"W. Europe Standard Time"'))]), r, UTC))[0]?.[0]).toBe("2025-01-15T08:00:00.000Z");
    expect(spans(busyPeriods(cal([ev("a", ...at("/mozilla.org/20050126_1/Asia/Tokyo"))]), r, UTC))[0]?.[0]).toBe("2025-01-15T00:00:00.000Z");
  });

  it("floating times and unknown TZIDs are read in X-WR-TIMEZONE, else in the host's zone", () => {
    const floating = ev("a", "DTSTART:20250115T090000", "DTEND:20250115T100000");
    const unknown = ev("b", ...at("Nowhere Standard Time"));
    expect(spans(busyPeriods(cal([floating, unknown]), r, { hostZone: "America/New_York", hostEmails: [] })).map((s) => s[0])).toEqual(["2025-01-15T14:00:00.000Z", "2025-01-15T14:00:00.000Z"]);
    expect(spans(busyPeriods(cal([floating], ["X-WR-TIMEZONE:Asia/Tokyo"]), r, { hostZone: "America/New_York", hostEmails: [] }))[0]?.[0]).toBe("2025-01-15T00:00:00.000Z");
  });

  it("an all-day event blocks its dates in the host's zone, whatever X-WR-TIMEZONE says", () => {
    const text = cal([ev("a", "DTSTART;VALUE=DATE:20250115", "DTEND;VALUE=DATE:20250116")], ["X-WR-TIMEZONE:Asia/Tokyo"]);
    expect(spans(busyPeriods(text, r, { hostZone: "America/Los_Angeles", hostEmails: [] }))).toEqual([["2025-01-15T08:00:00.000Z", "2025-01-16T08:00:00.000Z"]]);
  });

  it("property: the per-day offset shortcut gives what wallClockToUtc gives, DST days included", () => {
    const zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/St_Johns", "Pacific/Chatham", "Asia/Kolkata", "UTC"];
    fc.assert(
      fc.property(fc.constantFrom(...zones), fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2040-01-01T00:00:00Z"), noInvalidDate: true }), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), (zone, d, hour, minute) => {
        const w = { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour, minute, second: 0 };
        const day = d.toISOString().slice(0, 10);
        expect(ianaZone(zone).toUtc(w)).toBe(wallClockToUtc(zone, day, `${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}`).getTime());
      }),
      { numRuns: 500 },
    );
    // The days of the changes themselves, every hour.
    for (const [zone, day] of [["Europe/Berlin", "2025-03-30"], ["Europe/Berlin", "2025-10-26"], ["America/New_York", "2025-03-09"], ["America/New_York", "2025-11-02"]] as const) {
      for (let h = 0; h < 24; h++) {
        const w = { year: Number(day.slice(0, 4)), month: Number(day.slice(5, 7)), day: Number(day.slice(8, 10)), hour: h, minute: 30, second: 0 };
        expect(ianaZone(zone).toUtc(w)).toBe(wallClockToUtc(zone, day, `${String(h).padStart(2, "0")}:30`).getTime());
      }
    }
  });

  it("does not leak zones between texts (nothing registered globally)", () => {
    const vtz = (off: string) => ["BEGIN:VTIMEZONE", "TZID:Shared Name", "BEGIN:STANDARD", "DTSTART:19700101T000000", `TZOFFSETFROM:${off}`, `TZOFFSETTO:${off}`, "END:STANDARD", "END:VTIMEZONE"].join("\r\n");
    expect(spans(busyPeriods(cal([ev("a", ...at("Shared Name"))], [vtz("+0200")]), r, UTC))[0]?.[0]).toBe("2025-01-15T07:00:00.000Z");
    expect(spans(busyPeriods(cal([ev("a", ...at("Shared Name"))], [vtz("-0300")]), r, UTC))[0]?.[0]).toBe("2025-01-15T12:00:00.000Z");
  });
});

describe("text that is not iCalendar", () => {
  const r = range("2025-01-01T00:00:00Z", "2025-02-01T00:00:00Z");
  it.each([
    ["empty", ""],
    ["prose", "hello world"],
    ["an HTML page", "<!doctype html><html><body>Sign in</body></html>"],
    ["a vCard", "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Ada\r\nEND:VCARD\r\n"],
    ["a calendar cut off inside an event", cal([ev("a", "DTSTART:20250101T100000Z")]).slice(0, -40)],
  ])("%s throws IcsParseError", (_name, text) => {
    expect(() => busyPeriods(text, r, UTC)).toThrow(IcsParseError);
  });

  it("an empty calendar is fine", () => {
    expect(busyPeriods(cal([]), r, UTC)).toEqual([]);
  });
});

describe("properties", () => {
  const BASE = Date.parse("2025-01-06T00:00:00Z");
  const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]|\.\d{3}/g, "");
  const eventArb = fc.record({
    startMin: fc.integer({ min: 0, max: 60 * 24 * 60 }),
    lengthMin: fc.integer({ min: 1, max: 600 }),
    weekly: fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
    zone: fc.constantFrom("UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"),
    transparent: fc.boolean(),
  });
  const toEvent = (e: { startMin: number; lengthMin: number; weekly: number | undefined; zone: string; transparent: boolean }, i: number) => {
    const start = BASE + e.startMin * 60_000;
    const wall = stamp(start).slice(0, -1);
    const startLine = e.zone === "UTC" ? `DTSTART:${stamp(start)}` : `DTSTART;TZID=${e.zone}:${wall}`;
    return ev(`e${i}`, startLine, `DURATION:PT${e.lengthMin}M`, ...(e.weekly ? [`RRULE:FREQ=WEEKLY;COUNT=${e.weekly}`] : []), ...(e.transparent ? ["TRANSP:TRANSPARENT"] : []));
  };

  it("every period overlaps the range and is not empty", () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 8 }), fc.integer({ min: 0, max: 90 * 24 }), fc.integer({ min: 1, max: 30 * 24 }), (events, fromH, lenH) => {
        const from = new Date(BASE + fromH * 3_600_000);
        const to = new Date(from.getTime() + lenH * 3_600_000);
        for (const p of busyPeriods(cal(events.map(toEvent)), { from, to }, UTC)) {
          expect(p.start.getTime()).toBeLessThan(to.getTime());
          expect(p.end.getTime()).toBeGreaterThan(from.getTime());
          expect(p.end.getTime()).toBeGreaterThan(p.start.getTime());
        }
      }),
      { numRuns: 60 },
    );
  });

  it("a weekly RRULE with COUNT n yields n instances when the range covers them, one week apart in local time", () => {
    fc.assert(
      // Wall hours 04-22: a start at 02:30 falls into the spring gap once a year and is read as 03:30 (RFC 5545 3.3.5, the example below).
      fc.property(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 0, max: 6 }), fc.integer({ min: 4 * 60, max: 22 * 60 }), fc.constantFrom("UTC", "Europe/Berlin", "America/New_York"), (n, day, minuteOfDay, zone) => {
        const startMin = day * 24 * 60 + minuteOfDay;
        const ps = busyPeriods(cal([toEvent({ startMin, lengthMin: 45, weekly: n, zone, transparent: false }, 0)]), range("2025-01-01T00:00:00Z", "2027-01-01T00:00:00Z"), UTC);
        expect(ps).toHaveLength(n);
        const local = ps.map((p) => utcToWallClock(zone === "UTC" ? "UTC" : zone, p.start).time);
        expect(new Set(local).size).toBe(1);
      }),
      { numRuns: 60 },
    );
  });

  it("an EXDATE removes exactly that instance", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 30 }), fc.nat(), fc.constantFrom("UTC", "Europe/Berlin"), (n, pick, zone) => {
        const k = pick % n;
        const r = range("2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z");
        const all = busyPeriods(cal([toEvent({ startMin: 600, lengthMin: 30, weekly: n, zone, transparent: false }, 0)]), r, UTC);
        const removed = all[k]!;
        const ex = `EXDATE:${stamp(removed.start.getTime())}`;
        const text = cal([toEvent({ startMin: 600, lengthMin: 30, weekly: n, zone, transparent: false }, 0).replace("END:VEVENT", `${ex}\r\nEND:VEVENT`)]);
        expect(busyPeriods(text, r, UTC)).toEqual(all.filter((_, i) => i !== k));
      }),
      { numRuns: 60 },
    );
  });

  it("the result does not depend on the order of the VEVENTs (overrides included)", () => {
    const override = ev("e0", "RECURRENCE-ID:20250106T100000Z", "DTSTART:20250107T100000Z", "DTEND:20250107T110000Z");
    fc.assert(
      fc.property(fc.array(eventArb, { minLength: 1, maxLength: 8 }), fc.integer(), (events, seed) => {
        const texts = [...events.map(toEvent), override];
        const shuffled = fc.sample(fc.shuffledSubarray(texts, { minLength: texts.length, maxLength: texts.length }), { numRuns: 1, seed })[0]!;
        const r = range("2025-01-01T00:00:00Z", "2025-06-01T00:00:00Z");
        expect(busyPeriods(cal(shuffled), r, UTC)).toEqual(busyPeriods(cal(texts), r, UTC));
      }),
      { numRuns: 60 },
    );
  });

  it("a booking written by calendarObject comes back as its own period, and not at all when its UID is ignored", () => {
    const bookingArb = fc.record({
      startMin: fc.integer({ min: 0, max: 365 * 24 * 60 }),
      lengthMin: fc.integer({ min: 5, max: 480 }),
      summary: fc.string({ maxLength: 80 }),
      description: fc.string({ maxLength: 200 }),
      name: fc.string({ maxLength: 40 }),
    });
    fc.assert(
      fc.property(bookingArb, (g) => {
        const start = new Date(BASE + g.startMin * 60_000);
        const b: IcsBooking = {
          uid: "65f0c0ffee0000000000abcd@app.example",
          sequence: 1,
          start,
          end: new Date(start.getTime() + g.lengthMin * 60_000),
          summary: g.summary,
          description: g.description,
          location: null,
          organizer: { name: g.name, email: "host@example.com" },
          attendees: [{ name: g.name, email: "booker@example.org" }],
          status: "CONFIRMED",
        };
        const text = calendarObject(b);
        const r = { from: new Date(BASE), to: new Date(BASE + 400 * 86_400_000) };
        expect(busyPeriods(text, r, { hostZone: "Europe/Berlin", hostEmails: ["host@example.com"] })).toEqual([{ start: b.start, end: b.end, uid: b.uid }]);
        expect(busyPeriods(text, r, { hostZone: "Europe/Berlin", hostEmails: [], ignoreUid: (u) => u === b.uid })).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });
});

describe("a 5 000-event feed", () => {
  it("parses and expands (time reported, not asserted)", () => {
    const events: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const day = 1 + (i % 28);
      const hour = 8 + (i % 9);
      const ds = `202503${String(day).padStart(2, "0")}T${String(hour).padStart(2, "0")}0000`;
      if (i % 5 === 0) events.push(ev(`r${i}@feed`, `DTSTART;TZID=Europe/Berlin:${ds}`, "DURATION:PT30M", "RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR", `EXDATE;TZID=Europe/Berlin:${ds}`));
      else if (i % 7 === 0) events.push(ev(`a${i}@feed`, `DTSTART;VALUE=DATE:${ds.slice(0, 8)}`, "TRANSP:TRANSPARENT"));
      else events.push(ev(`s${i}@feed`, `DTSTART:${ds}Z`, "DURATION:PT45M", `SUMMARY:Meeting ${i}`, "ATTENDEE;PARTSTAT=ACCEPTED:mailto:ada@example.com"));
    }
    const text = cal(events, ["X-WR-CALNAME:Big", "X-WR-TIMEZONE:Europe/Berlin"]);
    const t0 = performance.now();
    const ps = busyPeriods(text, range("2025-03-01T00:00:00Z", "2025-04-01T00:00:00Z"), BERLIN);
    const ms = performance.now() - t0;
    console.log(`5 000-event feed (${(text.length / 1024).toFixed(0)} KiB): ${ps.length} busy periods in ${ms.toFixed(0)} ms`);
    expect(ps.length).toBeGreaterThan(4000);
  });
});
