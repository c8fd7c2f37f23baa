// Busy periods of iCalendar text (src/integrations/ical/busy.ts): recurrences, zones, exceptions and what does not block.
import { describe, expect, it } from "vitest";
import { busyPeriods, IcsParseError } from "../../src/integrations/ical/busy.js";

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

  it("a feed's own VTIMEZONE does not change how another feed's times are read", () => {
    const odd = ["BEGIN:VTIMEZONE", "TZID:Europe/Berlin", "BEGIN:STANDARD", "TZOFFSETFROM:+0500", "TZOFFSETTO:+0500", "DTSTART:19700101T000000", "END:STANDARD", "END:VTIMEZONE"].join("\r\n");
    expect(spans(cal(odd, vevent("x", "DTSTART;TZID=Europe/Berlin:20260310T090000", "DTEND;TZID=Europe/Berlin:20260310T100000")))).toEqual(["2026-03-10T04:00/05:00"]);
    expect(spans(cal(vevent("y", "DTSTART;TZID=Europe/Berlin:20260310T090000", "DTEND;TZID=Europe/Berlin:20260310T100000")))).toEqual(["2026-03-10T08:00/09:00"]);
  });

  it("throws IcsParseError on text that is not iCalendar", () => {
    expect(() => busyPeriods("<html>hello</html>", range, opts)).toThrow(IcsParseError);
  });
});
