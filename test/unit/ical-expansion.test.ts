// Recurrence expanded from the range asked for (src/domain/ical/busy.ts): the fast paths (arithmetic, a start moved to the range) against plain iteration from DTSTART, and series that started long ago.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EXPANSION_LIMITS, IcsLimitError, mergeBusy, MERGE_GAP_MS, readCalendar, type ReadOptions } from "../../src/domain/ical/busy.js";
import { SLOT_DURATIONS } from "../../src/domain/event.js";

const cal = (...events: string[]) => ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", ...events, "END:VCALENDAR", ""].join("\r\n");
const ev = (uid: string, ...lines: string[]) => ["BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20250101T000000Z", ...lines, "END:VEVENT"].join("\r\n");
const UTC: ReadOptions = { hostZone: "UTC", hostEmails: [] };

/** The busy time as the service uses it (merged stretches), as ISO pairs. */
function merged(text: string, from: Date, to: Date, opts: ReadOptions): string[] {
  return mergeBusy(readCalendar([text], { from, to }, opts).periods).map((p) => `${p.start.toISOString()}/${p.end.toISOString()}`);
}

function stamp(ms: number, zone: string | null): string {
  const iso = new Date(ms).toISOString().replace(/[-:]|\.\d{3}/g, "");
  return zone === "UTC" ? iso : iso.slice(0, -1);
}

const UNIT: Record<string, number> = { SECONDLY: 1000, MINUTELY: 60_000, HOURLY: 3_600_000, DAILY: 86_400_000, WEEKLY: 7 * 86_400_000, MONTHLY: 31 * 86_400_000, YEARLY: 366 * 86_400_000 };

describe("the fast paths give what plain iteration from DTSTART gives", () => {
  const zones = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"];
  const byDay = fc.subarray(["MO", "TU", "WE", "TH", "FR", "SA", "SU"], { minLength: 1, maxLength: 3 });
  const ruleArb = fc.oneof(
    // Fixed periods without BY parts: the arithmetic path (dense ones become stretches).
    fc.record({ freq: fc.constantFrom("SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY"), interval: fc.integer({ min: 1, max: 40 }), parts: fc.constant("") }),
    // BY parts: ical.js from a start moved to the range.
    fc.record({ freq: fc.constant("WEEKLY"), interval: fc.integer({ min: 1, max: 3 }), parts: byDay.map((d) => `;BYDAY=${d.join(",")}`) }),
    fc.record({ freq: fc.constant("DAILY"), interval: fc.integer({ min: 1, max: 3 }), parts: fc.constantFrom(";BYHOUR=9,17", ";BYDAY=MO,WE", ";BYMONTH=1,3,11") }),
    fc.record({ freq: fc.constant("HOURLY"), interval: fc.integer({ min: 1, max: 7 }), parts: fc.constantFrom(";BYMINUTE=0,30", ";BYDAY=SA", ";BYHOUR=8,9,10") }),
    fc.record({ freq: fc.constant("MONTHLY"), interval: fc.integer({ min: 1, max: 4 }), parts: fc.constantFrom("", ";BYMONTHDAY=31", ";BYMONTHDAY=-1", ";BYDAY=2TU", ";BYDAY=-1FR", ";BYDAY=MO,TU;BYSETPOS=1") }),
    fc.record({ freq: fc.constant("YEARLY"), interval: fc.integer({ min: 1, max: 3 }), parts: fc.constantFrom("", ";BYMONTH=3", ";BYMONTH=2;BYMONTHDAY=29", ";BYDAY=20MO", ";BYMONTH=10;BYDAY=-1SU") }),
  );
  const caseArb = fc.record({
    rule: ruleArb,
    zone: fc.constantFrom(...zones),
    allDay: fc.boolean(),
    // How many periods before the range the series started.
    periodsBefore: fc.integer({ min: 0, max: 400 }),
    offsetMs: fc.integer({ min: 0, max: 86_400_000 }),
    lengthMs: fc.constantFrom(0, 1000, 30_000, 45 * 60_000, 3_600_000, 26 * 3_600_000),
    end: fc.constantFrom("none", "count", "until"),
    endAfter: fc.integer({ min: 1, max: 600 }),
    exdates: fc.array(fc.integer({ min: 0, max: 700 }), { maxLength: 4 }),
    moved: fc.option(fc.integer({ min: 0, max: 700 }), { nil: undefined }),
    future: fc.option(fc.integer({ min: 0, max: 700 }), { nil: undefined }),
    transparent: fc.boolean(),
    rangeStartDay: fc.integer({ min: 0, max: 365 }),
  });

  it("property: the same busy time for every rule shape, zone and start (merged as the service uses it)", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const unit = UNIT[c.rule.freq]! * c.rule.interval;
        // Plain iteration must stay feasible: sub-daily series start a bounded number of instances back, over a short range.
        const rangeMs = c.rule.freq === "SECONDLY" ? 2 * 3_600_000 : c.rule.freq === "MINUTELY" ? 2 * 86_400_000 : 20 * 86_400_000;
        const from = Date.UTC(2026, 0, 1) + c.rangeStartDay * 86_400_000;
        const allDay = c.allDay && ["DAILY", "WEEKLY", "MONTHLY", "YEARLY"].includes(c.rule.freq);
        const startMs = Math.floor((from - c.periodsBefore * unit - c.offsetMs) / 1000) * 1000;
        const zone = c.zone === "UTC" ? "UTC" : c.zone;
        const tz = zone === "UTC" ? "" : `;TZID=${zone}`;
        const at = (ms: number) => (allDay ? `;VALUE=DATE:${stamp(ms, null).slice(0, 8)}` : `${tz}:${stamp(ms, zone)}`);
        const lines = [`DTSTART${at(startMs)}`];
        if (allDay) lines.push(`DURATION:P${1 + Math.floor(c.lengthMs / 86_400_000)}D`);
        else lines.push(`DURATION:PT${c.lengthMs / 1000}S`);
        let rule = `RRULE:FREQ=${c.rule.freq};INTERVAL=${c.rule.interval}${c.rule.parts}`;
        if (c.end === "count") rule += `;COUNT=${c.periodsBefore + c.endAfter}`;
        if (c.end === "until") rule += `;UNTIL=${allDay ? stamp(startMs + (c.periodsBefore + c.endAfter / 40) * unit, null).slice(0, 8) : stamp(startMs + (c.periodsBefore + c.endAfter / 40) * unit, "UTC")}`;
        lines.push(rule);
        // EXDATEs and a moved instance on the rule's grid near the range (a grid instant need not be an instance).
        for (const k of c.exdates) lines.push(`EXDATE${at(startMs + (c.periodsBefore + Math.floor(k / 100)) * unit)}`);
        if (c.transparent) lines.push("TRANSP:TRANSPARENT");
        const events = [ev("s", ...lines)];
        if (c.future !== undefined) {
          // From this instance on, the series moves by 2 hours and blocks (restyled by the override).
          const rid = startMs + (c.periodsBefore + Math.floor(c.future / 100)) * unit;
          events.push(ev("s", `RECURRENCE-ID;RANGE=THISANDFUTURE${at(rid)}`, `DTSTART${at(rid + 7_200_000)}`, allDay ? "DURATION:P1D" : "DURATION:PT20M", "TRANSP:OPAQUE"));
        }
        if (c.moved !== undefined) {
          const rid = startMs + (c.periodsBefore + Math.floor(c.moved / 100)) * unit;
          events.push(ev("s", `RECURRENCE-ID${at(rid)}`, `DTSTART${at(rid + 3_600_000)}`, allDay ? "DURATION:P1D" : "DURATION:PT10M"));
        }
        const text = cal(...events);
        const opts: ReadOptions = { hostZone: "Europe/Berlin", hostEmails: [] };
        const range = [new Date(from), new Date(from + rangeMs)] as const;
        const plain = merged(text, ...range, { ...opts, plain: true });
        let fast: string[];
        try {
          fast = merged(text, ...range, opts);
        } catch (err) {
          /*
           * Failing closed is the contract past EXPANSION_LIMITS.steps, and a series a THISANDFUTURE override
           * restyles is iterated (two steps an instance at least) from DTSTART to two days past the range (the
           * zone slack): a secondly one that started a day back needs more. Any other failure, or one where the
           * iteration needs less than half the budget, is a fault of the fast path.
           */
          const iteratedSteps = (2 * (from + rangeMs + 2 * 86_400_000 - startMs)) / unit;
          if (err instanceof IcsLimitError && c.future !== undefined && iteratedSteps > EXPANSION_LIMITS.steps / 2) return;
          throw err;
        }
        expect(fast).toEqual(plain);
      }),
      { numRuns: Number(process.env.EXPANSION_RUNS ?? 300) },
    );
  }, 120_000);

  it("a dense series across both DST changes of a zone, with exceptions: stretches equal to the instances", () => {
    const exceptions = ["EXDATE;TZID=America/New_York:20250309T013000,20250309T023000,20250309T033000", "EXDATE;VALUE=DATE:20251103"];
    for (const [since, from, to] of [["20250306", "2025-03-08T00:00:00Z", "2025-03-11T00:00:00Z"], ["20251030", "2025-11-01T00:00:00Z", "2025-11-04T00:00:00Z"]] as const) {
      const text = cal(ev("d", `DTSTART;TZID=America/New_York:${since}T000000`, "DURATION:PT45S", "RRULE:FREQ=MINUTELY", ...exceptions));
      const range = [new Date(from), new Date(to)] as const;
      const fast = merged(text, ...range, UTC);
      expect(fast).toEqual(merged(text, ...range, { ...UTC, plain: true }));
      expect(fast.length).toBeGreaterThan(1);
    }
  });
});

describe("series that started long ago block every slot they overlap", () => {
  const range = { from: new Date("2026-03-02T00:00:00Z"), to: new Date("2026-04-01T00:00:00Z") };

  it("a daily all-day event since 1850: every date of the range", () => {
    const { periods } = readCalendar([cal(ev("a", "DTSTART;VALUE=DATE:18500101", "RRULE:FREQ=DAILY"))], range, UTC);
    expect(mergeBusy(periods).map((p) => [p.start.toISOString(), p.end.toISOString()])).toEqual([["2026-03-02T00:00:00.000Z", "2026-04-01T00:00:00.000Z"]]);
  });

  it("an hourly event since 2020: every hour of the range", () => {
    const { periods } = readCalendar([cal(ev("h", "DTSTART:20200101T000000Z", "DURATION:PT30M", "RRULE:FREQ=HOURLY"))], range, UTC);
    expect(periods).toHaveLength(30 * 24);
    expect(periods.every((p) => p.start.getUTCMinutes() === 0 && p.end.getTime() - p.start.getTime() === 1_800_000)).toBe(true);
  });

  it("one every second since 2000 (a second long): one busy stretch over the whole range, at once", () => {
    const t0 = performance.now();
    const { periods } = readCalendar([cal(ev("s", "DTSTART:20000101T000000Z", "DURATION:PT1S", "RRULE:FREQ=SECONDLY"))], range, UTC);
    expect(mergeBusy(periods).map((p) => [p.start.toISOString(), p.end.toISOString()])).toEqual([["2026-03-02T00:00:00.000Z", "2026-04-01T00:00:00.000Z"]]);
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it("one every five seconds since 2000, a second long: every slot of the range is blocked (gaps of 4 s fit no slot)", () => {
    const { periods } = readCalendar([cal(ev("s", "DTSTART;TZID=Europe/Berlin:20000101T000000", "DURATION:PT1S", "RRULE:FREQ=SECONDLY;INTERVAL=5"))], range, UTC);
    const busy = mergeBusy(periods);
    expect(busy).toHaveLength(1);
    expect(busy[0]!.start.getTime()).toBe(range.from.getTime());
    expect(busy[0]!.end.getTime()).toBeGreaterThan(range.to.getTime() - 5000);
  });

  it("a weekly series with BYDAY since 1900 and a monthly one since 1850: their instances in the range", () => {
    const text = cal(ev("w", "DTSTART:19000101T090000Z", "DURATION:PT1H", "RRULE:FREQ=WEEKLY;BYDAY=MO,TH"), ev("m", "DTSTART:18500115T120000Z", "DURATION:PT1H", "RRULE:FREQ=MONTHLY;BYDAY=2TU"));
    const { periods } = readCalendar([text], range, UTC);
    expect(periods.filter((p) => p.uid === "w").map((p) => p.start.toISOString().slice(0, 10))).toEqual([
      "2026-03-02", "2026-03-05", "2026-03-09", "2026-03-12", "2026-03-16", "2026-03-19", "2026-03-23", "2026-03-26", "2026-03-30",
    ]);
    expect(periods.filter((p) => p.uid === "m").map((p) => p.start.toISOString())).toEqual(["2026-03-10T12:00:00.000Z"]);
  });

  it("a series that cannot be skipped ahead and has more instances before the range than the service iterates: the calendar is unreadable, never free", () => {
    // COUNT counts from DTSTART; a rule with BY parts and a COUNT past the range must be iterated from DTSTART.
    const text = cal(ev("c", "DTSTART:20000101T000000Z", "DURATION:PT30S", "RRULE:FREQ=MINUTELY;BYSECOND=0;COUNT=100000000"));
    expect(() => readCalendar([text], range, UTC)).toThrow(IcsLimitError);
    expect(() => readCalendar([text], range, UTC)).toThrow(`an event repeats more than 50 000 times before the range`);
    expect(EXPANSION_LIMITS.instancesFromStart).toBe(50_000);
  });

  it("a rule whose BY parts make every second a candidate over a month: over the step budget, unreadable", () => {
    const text = cal(ev("x", "DTSTART:20000101T000000Z", "DURATION:PT1S", "RRULE:FREQ=SECONDLY;BYHOUR=9"));
    expect(() => readCalendar([text], range, UTC)).toThrow(/takes more than 500 000 steps/);
  });

  it("more busy periods in the range than the service keeps: unreadable", () => {
    // 2 000 hourly series: 1.44 million instances in 30 days.
    const events = Array.from({ length: 200 }, (_, i) => ev(`e${i}`, `DTSTART:20200101T00${String(i % 60).padStart(2, "0")}00Z`, "DURATION:PT1M", "RRULE:FREQ=HOURLY"));
    expect(() => readCalendar([cal(...events)], range, UTC)).toThrow(/more than 100 000 busy times in the range/);
  });
});

it("MERGE_GAP_MS is shorter than any slot (merging gaps shorter than it changes no answer)", () => {
  expect(MERGE_GAP_MS).toBeLessThan(Math.min(...Object.values(SLOT_DURATIONS)) * 60_000);
});
