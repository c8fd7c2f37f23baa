// What the service reads of a calendar (src/domain/ical/scan.ts, busy.ts): the limits checked before ical.js sees the text, and the lenient reading of real feeds' deviations.
import { describe, expect, it } from "vitest";
import { IcsLimitError, IcsParseError, NAMED_WARNINGS, readCalendar, SCAN_LIMITS, type ReadOptions } from "../../src/domain/ical/busy.js";

const cal = (...parts: string[]) => ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", ...parts, "END:VCALENDAR", ""].join("\r\n");
const ev = (uid: string, ...lines: string[]) => ["BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20250101T000000Z", ...lines, "END:VEVENT"].join("\r\n");
const UTC: ReadOptions = { hostZone: "UTC", hostEmails: [] };
const range = { from: new Date("2025-03-01T00:00:00Z"), to: new Date("2025-04-01T00:00:00Z") };
const spans = (text: string, opts = UTC) => readCalendar([text], range, opts).periods.map((p) => `${p.uid} ${p.start.toISOString()}/${p.end.toISOString()}`);
const meeting = ev("m", "DTSTART:20250310T100000Z", "DTEND:20250310T110000Z");

/** What `work` gave (or threw) and how long it took. */
function timed<T>(work: () => T): { value: T | Error; ms: number } {
  const t0 = performance.now();
  try {
    return { value: work(), ms: performance.now() - t0 };
  } catch (err) {
    return { value: err as Error, ms: performance.now() - t0 };
  }
}

describe("limits, checked before ical.js sees the text", () => {
  it("components nested deeper than 8: unreadable at once (3 MB of nesting 162 deep took 631 MB before)", () => {
    const depth = 162;
    const nested = `${"BEGIN:X-A\r\n".repeat(depth)}${"X-PAD:".concat("y".repeat(18_000), "\r\n")}${"END:X-A\r\n".repeat(depth)}`;
    const text = cal(meeting, nested.repeat(160));
    expect(text.length).toBeGreaterThan(2_900_000);
    const { value, ms } = timed(() => readCalendar([text], range, UTC));
    expect(value).toBeInstanceOf(IcsLimitError);
    expect((value as Error).message).toBe("the calendar nests components more than 8 deep");
    expect(ms).toBeLessThan(500);
  });

  it("a line the service reads longer than 64 KB (one EXDATE with 300 000 dates, 5 MB): unreadable before any of it is parsed", () => {
    const dates = Array.from({ length: 300_000 }, (_, i) => new Date(Date.UTC(2000, 0, 1) + i * 3_600_000).toISOString().replace(/[-:]|\.\d{3}/g, "")).join(",");
    const text = cal(ev("x", "DTSTART:20000101T000000Z", "DURATION:PT1H", "RRULE:FREQ=HOURLY", `EXDATE:${dates}`));
    const { value, ms } = timed(() => readCalendar([text], range, UTC));
    expect(value).toBeInstanceOf(IcsLimitError);
    expect((value as Error).message).toBe("a EXDATE line of the calendar is longer than 65 536 bytes");
    expect(ms).toBeLessThan(500);
  });

  it("a 10 MB line of a property busy times do not use (a DESCRIPTION, an inline attachment) is stepped over: the calendar still reads", () => {
    const text = cal(ev("big", "DTSTART:20250312T100000Z", "DTEND:20250312T110000Z", `DESCRIPTION:${"z".repeat(10 * 1024 * 1024)}`), meeting);
    const { value, ms } = timed(() => spans(text));
    expect(value).toEqual(["m 2025-03-10T10:00:00.000Z/2025-03-10T11:00:00.000Z", "big 2025-03-12T10:00:00.000Z/2025-03-12T11:00:00.000Z"]);
    expect(ms).toBeLessThan(1000);
  });

  it("more than 100 000 components, more than 1 000 time zones, more than 256 KB of times in one event: unreadable, naming the limit", () => {
    expect(SCAN_LIMITS).toMatchObject({ components: 100_000, zones: 1_000, componentBytes: 262_144, lineBytes: 65_536, depth: 8 });
    const tiny = "BEGIN:X-T\r\nEND:X-T\r\n";
    expect(() => readCalendar([cal(tiny.repeat(100_001))], range, UTC)).toThrow("the calendar has more than 100 000 components");
    const zone = (i: number) => ["BEGIN:VTIMEZONE", `TZID:Zone ${i}`, "BEGIN:STANDARD", "DTSTART:19700101T000000", "TZOFFSETFROM:+0100", "TZOFFSETTO:+0100", "END:STANDARD", "END:VTIMEZONE"].join("\r\n");
    // 20 000 VTIMEZONEs in 6.2 MB took 5-9 s and 638 MB before.
    const { value, ms } = timed(() => readCalendar([cal(...Array.from({ length: 20_000 }, (_, i) => zone(i)), meeting)], range, UTC));
    expect((value as Error).message).toBe("the calendar has more than 1 000 time-zone definitions");
    expect(ms).toBeLessThan(1000);
    const exdates = Array.from({ length: 12_000 }, (_, i) => `EXDATE:2001${String(1 + (i % 12)).padStart(2, "0")}01T000000Z`);
    expect(() => readCalendar([cal(ev("e", "DTSTART:20000101T000000Z", "DURATION:PT1H", "RRULE:FREQ=DAILY", ...exdates))], range, UTC)).toThrow(
      "an event or time zone of the calendar has more than 262 144 bytes of times and rules",
    );
  });

  it("a thousand unused time zones cost only the scan; the one an event names is read", () => {
    const zone = (id: string, off: string) => ["BEGIN:VTIMEZONE", `TZID:${id}`, "BEGIN:STANDARD", "DTSTART:19700101T000000", `TZOFFSETFROM:${off}`, `TZOFFSETTO:${off}`, "END:STANDARD", "END:VTIMEZONE"].join("\r\n");
    const zones = Array.from({ length: 999 }, (_, i) => zone(`Unused ${i}`, "+0100"));
    const text = cal(...zones, ev("z", "DTSTART;TZID=Office:20250310T100000", "DURATION:PT1H"), zone("Office", "+0530"));
    expect(spans(text)).toEqual(["z 2025-03-10T04:30:00.000Z/2025-03-10T05:30:00.000Z"]);
  });

  it("a calendar cut off inside a component is unreadable (it could hide a busy time)", () => {
    expect(() => readCalendar([cal(meeting).slice(0, -30)], range, UTC)).toThrow(IcsParseError);
  });

  it("declined by the host across a folded line, and ATTENDEE lines that are not declines are not kept (an all-hands invitation lists thousands)", () => {
    const declined = ev("d", "DTSTART:20250311T100000Z", "DTEND:20250311T110000Z", "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=DECL\r\n INED;CN=Ada:mailto:ada@example.com");
    const attendees = Array.from({ length: 5000 }, (_, i) => `ATTENDEE;PARTSTAT=ACCEPTED;CN=Person ${i}:mailto:person${i}@example.com`);
    const allHands = ev("all", "DTSTART:20250312T100000Z", "DTEND:20250312T110000Z", ...attendees);
    expect(spans(cal(declined, allHands), { hostZone: "UTC", hostEmails: ["ada@example.com"] })).toEqual(["all 2025-03-12T10:00:00.000Z/2025-03-12T11:00:00.000Z"]);
  });
});

describe("real feeds' deviations, read as calendar programs read them", () => {
  it("DTSTART/DTEND/EXDATE of 8 digits without VALUE=DATE are dates (CalendarLabs' holiday feeds)", () => {
    const holidays = cal(
      ev("ny", "DTSTART:20250317", "DTEND:20250318", "SUMMARY:St. Patrick's Day"),
      ev("w", "DTSTART:20250301", "RRULE:FREQ=WEEKLY;COUNT=4", "EXDATE:20250308"),
    );
    expect(spans(holidays)).toEqual([
      "w 2025-03-01T00:00:00.000Z/2025-03-02T00:00:00.000Z",
      "w 2025-03-15T00:00:00.000Z/2025-03-16T00:00:00.000Z",
      "ny 2025-03-17T00:00:00.000Z/2025-03-18T00:00:00.000Z",
      "w 2025-03-22T00:00:00.000Z/2025-03-23T00:00:00.000Z",
    ]);
  });

  it("an empty RRULE is no rule; blank lines are skipped; LF line ends and a byte-order mark are read", () => {
    const text = `\uFEFF${cal(ev("e", "DTSTART:20250310T100000Z", "", "DTEND:20250310T110000Z", "RRULE:"), "", "")}`.replace(/\r\n/g, "\n");
    expect(readCalendar([text], range, UTC)).toEqual({ periods: [{ uid: "e", start: new Date("2025-03-10T10:00:00Z"), end: new Date("2025-03-10T11:00:00Z") }], warnings: [] });
  });

  it("an empty RDATE or EXDATE is none; spaces inside a rule (Outlook) and a COUNT below 1 (Confluence) are dropped", () => {
    const starts = (...lines: string[]) => readCalendar([cal(ev("r", "DTSTART:20250303T090000Z", "DURATION:PT1H", ...lines))], range, UTC).periods.map((p) => p.start.toISOString().slice(5, 10));
    expect(starts("RRULE:FREQ=DAILY;UNTIL=20250307T090000Z;BYDAY=MO, WE, FR", "RDATE:", "EXDATE:")).toEqual(["03-03", "03-05", "03-07"]);
    expect(starts("RRULE:FREQ=WEEKLY;UNTIL=20250318;COUNT=-1;INTERVAL=1")).toEqual(["03-03", "03-10", "03-17"]);
  });

  it("an event that still cannot be read is left out and named in the warnings; the rest still blocks", () => {
    const text = cal(meeting, ev("bad", "DTSTART:2019-01-01T::", "DTEND:20190101T100000Z"), ev("ok", "DTSTART:20250311T100000Z", "DURATION:PT1H"));
    const read = readCalendar([text], range, UTC);
    expect(read.warnings).toEqual(['event "bad" could not be read: DTSTART "2019-01-01T::"']);
    expect(read.periods.map((p) => p.uid)).toEqual(["m", "ok"]);
  });

  it("several unreadable events: each named by its title (else its UID) in a warning of its own, one line of plain words", () => {
    const bad = [
      ev("a", "DTSTART:tomorrow"),
      ev("b", "DTSTART:20250310T100000Z", "RRULE:FREQ=SOMETIMES", "SUMMARY:Weekly\\, team sync"),
      ev("c", "DTSTART:20250310T100000Z", "RRULE:COUNT=3"),
      ev("d", "DTSTART:20250310T100000Z", "DURATION:soon\u0007\u202e"),
      ev("e", "DTSTART:tomorrow"),
    ];
    const { warnings, periods } = readCalendar([cal(meeting, ...bad)], range, UTC);
    expect(periods.map((p) => p.uid)).toEqual(["m"]);
    expect(warnings).toEqual([
      'event "a" could not be read: DTSTART "tomorrow"',
      'event "Weekly, team sync" could not be read: RRULE "FREQ=SOMETIMES"',
      'event "c" could not be read: RRULE "COUNT=3"',
      'event "d" could not be read: DURATION "soon"',
      'event "e" could not be read: DTSTART "tomorrow"',
    ]);
  });

  it("an event without DTSTART, with a negative DURATION or a DTEND before DTSTART is left out and named, never dropped in silence", () => {
    const { warnings, periods } = readCalendar(
      [
        cal(
          meeting,
          ev("no-start", "SUMMARY:Dentist", "DTEND:20250311T100000Z"),
          ev("negative", "DTSTART:20250311T090000Z", "DURATION:-PT1H"),
          ev("backwards", "SUMMARY:Board meeting", "DTSTART:20250311T090000Z", "DTEND:20250311T080000Z"),
          ev("backwards-day", "DTSTART;VALUE=DATE:20250312", "DTEND;VALUE=DATE:20250311"),
          ev("period", "DTSTART:20250311T090000Z", "DURATION:PT1H", "RDATE;VALUE=PERIOD:20250312T090000Z/20250312T080000Z"),
          ev("instant", "DTSTART:20250311T120000Z", "DTEND:20250311T120000Z"),
        ),
      ],
      range,
      UTC,
    );
    expect(warnings).toEqual([
      'event "Dentist" could not be read: it has no DTSTART',
      'event "negative" could not be read: DURATION "-PT1H" is negative',
      'event "Board meeting" could not be read: DTEND "20250311T080000Z" is before DTSTART',
      'event "backwards-day" could not be read: DTEND "20250311" is before DTSTART',
      'event "period" could not be read: RDATE "20250312T090000Z/20250312T080000Z" ends before it starts',
    ]);
    // An event of no length (DTEND equal to DTSTART) is read, and blocks nothing.
    expect(periods.map((p) => p.uid)).toEqual(["m"]);
  });

  it(`past ${NAMED_WARNINGS} events left out, one more line counts the rest`, () => {
    const bad = Array.from({ length: NAMED_WARNINGS + 5 }, (_, i) => ev(`bad-${i}`, "DTSTART:tomorrow"));
    const { warnings } = readCalendar([cal(meeting, ...bad)], range, UTC);
    expect(warnings).toHaveLength(NAMED_WARNINGS + 1);
    expect(warnings.at(-1)).toBe("and 5 more events could not be read");
  });
});

describe("a calendar whose structure is broken is unreadable, never a calendar with fewer events", () => {
  const cases: Array<[string, string, string]> = [
    ["END:VEVENT where BEGIN:VEVENT belongs", cal(meeting).replace("BEGIN:VEVENT", "END:VEVENT"), "the calendar has END:VEVENT without BEGIN:VEVENT"],
    ["a VEVENT inside a VTODO", cal(["BEGIN:VTODO", "UID:t", meeting, "END:VTODO"].join("\r\n")), "the calendar has a VEVENT inside a VTODO"],
    ["a VEVENT that begins and never ends", cal(meeting.replace("END:VEVENT", "")), "the calendar's VEVENT begins and never ends"],
    ["a VEVENT inside a VEVENT", cal(meeting.replace("END:VEVENT", `${ev("inner", "DTSTART:20250311T100000Z")}\r\nEND:VEVENT`)), "the calendar has a VEVENT inside a VEVENT"],
    ["an END of a component that never began, after the calendar", `${cal(meeting)}END:VALARM\r\n`, "the calendar has END:VALARM without BEGIN:VALARM"],
    ["a VEVENT after the VCALENDAR", `${cal()}${meeting}\r\n`, "the calendar has a VEVENT outside its VCALENDAR"],
  ];
  it.each(cases)("%s", (_name, text, message) => {
    expect(() => readCalendar([text], range, UTC)).toThrow(new IcsParseError(message));
  });

  it("alarms inside events, time zones with their parts and two calendars in one text stay readable", () => {
    const alarm = meeting.replace("END:VEVENT", "BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT5M\r\nEND:VALARM\r\nEND:VEVENT");
    expect(readCalendar([`${cal(alarm)}${cal(ev("second", "DTSTART:20250311T100000Z", "DURATION:PT1H"))}`], range, UTC).periods.map((p) => p.uid)).toEqual(["m", "second"]);
  });
});
