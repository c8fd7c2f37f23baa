// Busy periods of iCalendar text (src/domain/ical/busy.ts): recurrences, zones, exceptions and what does not block.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { busyPeriods, IcsParseError } from "../../src/domain/ical/busy.js";

const cal = (...events: string[]) => ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", ...events, "END:VCALENDAR", ""].join("\r\n");
const vevent = (uid: string, ...lines: string[]) => ["BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20260101T000000Z", ...lines, "END:VEVENT"].join("\r\n");
const range = { from: new Date("2026-03-01T00:00:00Z"), to: new Date("2026-04-30T00:00:00Z") };
const opts = { hostZone: "Europe/Berlin", hostEmails: ["me@example.com"] };
const spans = (text: string, o: Parameters<typeof busyPeriods>[2] = opts) =>
  busyPeriods(text, range, o).map((p) => `${p.start.toISOString().slice(0, 16)}/${p.end.toISOString().slice(11, 16)}`).sort();

const BERLIN = [
  "BEGIN:VTIMEZONE", "TZID:Europe/Berlin",
  "BEGIN:DAYLIGHT", "TZOFFSETFROM:+0100", "TZOFFSETTO:+0200", "TZNAME:CEST", "DTSTART:19700329T020000", "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU", "END:DAYLIGHT",
  "BEGIN:STANDARD", "TZOFFSETFROM:+0200", "TZOFFSETTO:+0100", "TZNAME:CET", "DTSTART:19701025T030000", "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU", "END:STANDARD",
  "END:VTIMEZONE",
].join("\r\n");

describe("busyPeriods", () => {
  it("counts DTSTART as the first instance of an event with RDATE and no RRULE", () => {
    expect(spans(cal(vevent("r", "DTSTART:20260302T100000Z", "DTEND:20260302T110000Z", "RDATE:20260305T100000Z")))).toEqual(["2026-03-02T10:00/11:00", "2026-03-05T10:00/11:00"]);
    expect(spans(cal(vevent("r", "DTSTART:20260302T100000Z", "DTEND:20260302T110000Z", "RDATE:20260305T100000Z", "EXDATE:20260302T100000Z")))).toEqual(["2026-03-05T10:00/11:00"]);
  });

  it("keeps wall-clock times of a weekly series across DST, with a moved instance (RECURRENCE-ID)", () => {
    const text = cal(
      BERLIN,
      vevent("w", "DTSTART;TZID=Europe/Berlin:20260323T090000", "DTEND;TZID=Europe/Berlin:20260323T100000", "RRULE:FREQ=WEEKLY;COUNT=3"),
      vevent("w", "RECURRENCE-ID;TZID=Europe/Berlin:20260330T090000", "DTSTART;TZID=Europe/Berlin:20260330T140000", "DTEND;TZID=Europe/Berlin:20260330T150000"),
    );
    expect(spans(text)).toEqual(["2026-03-23T08:00/09:00", "2026-03-30T12:00/13:00", "2026-04-06T07:00/08:00"]);
  });

  it("reads an IANA TZID without a VTIMEZONE (as some exports send) in that zone", () => {
    expect(spans(cal(vevent("ny", "DTSTART;TZID=America/New_York:20260310T090000", "DTEND;TZID=America/New_York:20260310T100000")))).toEqual(["2026-03-10T13:00/14:00"]);
  });

  it("leaves out transparent, cancelled, declined-by-the-host and ignored events; EXDATE removes an instance", () => {
    const text = cal(
      vevent("t", "DTSTART:20260310T090000Z", "DTEND:20260310T100000Z", "TRANSP:TRANSPARENT"),
      vevent("c", "DTSTART:20260310T110000Z", "DTEND:20260310T120000Z", "STATUS:CANCELLED"),
      vevent("d", "DTSTART:20260310T130000Z", "DTEND:20260310T140000Z", "ATTENDEE;PARTSTAT=DECLINED:mailto:ME@example.com"),
      vevent("o", "DTSTART:20260310T150000Z", "DTEND:20260310T160000Z", "ATTENDEE;PARTSTAT=DECLINED:mailto:other@example.com"),
      vevent("mine@app", "DTSTART:20260310T170000Z", "DTEND:20260310T180000Z"),
      vevent("x", "DTSTART:20260311T090000Z", "DTEND:20260311T100000Z", "RRULE:FREQ=DAILY;COUNT=3", "EXDATE:20260312T090000Z"),
    );
    expect(spans(text, { ...opts, ignoreUid: (uid) => uid.endsWith("@app") })).toEqual([
      "2026-03-10T15:00/16:00", "2026-03-11T09:00/10:00", "2026-03-13T09:00/10:00",
    ]);
  });

  it("blocks the dates of an all-day event in the host's zone", () => {
    expect(spans(cal(vevent("a", "DTSTART;VALUE=DATE:20260315", "DTEND;VALUE=DATE:20260317")))).toEqual(["2026-03-14T23:00/23:00"]);
    const [p] = busyPeriods(cal(vevent("a", "DTSTART;VALUE=DATE:20260315")), range, opts);
    expect([p.start.toISOString(), p.end.toISOString()]).toEqual(["2026-03-14T23:00:00.000Z", "2026-03-15T23:00:00.000Z"]);
  });

  it("a VTIMEZONE named like an IANA zone does not override the time-zone database, nor another feed's times", () => {
    // IANA names are read with Node's tz database (src/domain/ical/zones.ts): exports often carry stale or
    // trimmed rules for them. A zone only the feed defines (a Windows name, a custom one) is read from its VTIMEZONE.
    const odd = ["BEGIN:VTIMEZONE", "TZID:Europe/Berlin", "BEGIN:STANDARD", "TZOFFSETFROM:+0500", "TZOFFSETTO:+0500", "DTSTART:19700101T000000", "END:STANDARD", "END:VTIMEZONE"].join("\r\n");
    expect(spans(cal(odd, vevent("x", "DTSTART;TZID=Europe/Berlin:20260310T090000", "DTEND;TZID=Europe/Berlin:20260310T100000")))).toEqual(["2026-03-10T08:00/09:00"]);
    expect(spans(cal(vevent("y", "DTSTART;TZID=Europe/Berlin:20260310T090000", "DTEND;TZID=Europe/Berlin:20260310T100000")))).toEqual(["2026-03-10T08:00/09:00"]);
  });

  it("throws IcsParseError on text that is not iCalendar", () => {
    expect(() => busyPeriods("<html>hello</html>", range, opts)).toThrow(IcsParseError);
  });
});

describe("busyPeriods, properties", () => {
  const stamp = (d: Date) => `${d.toISOString().slice(0, 19).replace(/[-:]/g, "")}Z`;

  it("a single UTC event is returned exactly, and only when it overlaps the range", () => {
    const base = Date.UTC(2026, 0, 1);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 60 * 24 * 90 }), fc.integer({ min: 1, max: 60 * 48 }), fc.integer({ min: 0, max: 60 * 24 * 90 }), fc.integer({ min: 1, max: 60 * 24 * 10 }), (s, len, f, span) => {
        const start = new Date(base + s * 60_000);
        const end = new Date(start.getTime() + len * 60_000);
        const r = { from: new Date(base + f * 60_000), to: new Date(base + (f + span) * 60_000) };
        const out = busyPeriods(cal(vevent("p", `DTSTART:${stamp(start)}`, `DTEND:${stamp(end)}`)), r, { hostZone: "UTC", hostEmails: [] });
        const overlaps = start < r.to && end > r.from;
        expect(out.map((p) => [p.start.getTime(), p.end.getTime()])).toEqual(overlaps ? [[start.getTime(), end.getTime()]] : []);
      }),
      { numRuns: 200 },
    );
  });

  it("a daily series with COUNT gives COUNT instances a day apart, less the EXDATEs", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.uniqueArray(fc.integer({ min: 0, max: 39 }), { maxLength: 5 }), (count, skips) => {
        const first = new Date(Date.UTC(2026, 2, 1, 9));
        const day = (i: number) => new Date(first.getTime() + i * 86_400_000);
        const ex = skips.filter((i) => i < count).map((i) => `EXDATE:${stamp(day(i))}`);
        const text = cal(vevent("d", `DTSTART:${stamp(first)}`, `DTEND:${stamp(new Date(first.getTime() + 1_800_000))}`, `RRULE:FREQ=DAILY;COUNT=${count}`, ...ex));
        const out = busyPeriods(text, { from: new Date(Date.UTC(2026, 1, 1)), to: new Date(Date.UTC(2026, 5, 1)) }, { hostZone: "UTC", hostEmails: [] });
        const expected = Array.from({ length: count }, (_, i) => i).filter((i) => !skips.includes(i)).map((i) => day(i).getTime());
        expect(out.map((p) => p.start.getTime()).sort((a, b) => a - b)).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });

  it("reads a 5 000-event feed", () => {
    const events: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const start = new Date(Date.UTC(2024, 0, 1) + i * 6 * 3_600_000);
      events.push(vevent(`e${i}`, `DTSTART:${stamp(start)}`, `DTEND:${stamp(new Date(start.getTime() + 3_600_000))}`, ...(i % 50 === 0 ? ["RRULE:FREQ=WEEKLY"] : [])));
    }
    const out = busyPeriods(cal(...events), { from: new Date(Date.UTC(2025, 2, 1)), to: new Date(Date.UTC(2025, 2, 8)) }, { hostZone: "UTC", hostEmails: [] });
    // 28 events start in the week (one every 6 hours), one of them a series' first instance; the 35 weekly series
    // begun before its end (every 50th event) have one instance each in any 7 days.
    expect(out).toHaveLength(27 + 35);
  });
});
