// The offset tables of src/domain/timezones.ts give the answers of Intl read per instant (the old path, test/helpers/intlTimezones.ts), in every IANA zone the runtime knows, at random instants and around the transitions, gaps and folds of random years.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SERVICE_TIME_ZONES, ianaForServiceZone, utcToWallClock, wallClockToUtc, zoneOffsetMinutes } from "../../src/domain/timezones.js";
import { intlUtcToWallClock, intlWallClockToUtc, intlZoneOffsetMinutes } from "../helpers/intlTimezones.js";

const DAY = 86_400_000;
const MINUTE = 60_000;

/** Every canonical zone, UTC, and the older spellings the service's zone names map to (Europe/Kiev, Asia/Rangoon, ...). */
const ZONES = [...new Set([...Intl.supportedValuesOf("timeZone"), "UTC", ...SERVICE_TIME_ZONES.map(ianaForServiceZone)])];

const yearStart = (year: number) => {
  const d = new Date(0);
  d.setUTCFullYear(year, 0, 1);
  return d.getTime();
};

/** Mostly recent and coming years, where bookings are; also the odd local mean times of the 1800s, and years 100 to 9999 (Intl names no era, so both paths misread years before 1). */
const instantArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: yearStart(1970), max: yearStart(2040) }) },
  { weight: 3, arbitrary: fc.integer({ min: yearStart(1850), max: yearStart(2101) }) },
  { weight: 1, arbitrary: fc.integer({ min: yearStart(100), max: yearStart(10_000) - 1 }) },
);

const pad = (n: number) => String(n).padStart(2, "0");

/** The wall clock an epoch-ms value shows when read as UTC, as the date and minute wallClockToUtc takes. */
function wallOf(ms: number): { date: string; time: string } {
  const d = new Date(ms);
  return { date: `${String(d.getUTCFullYear()).padStart(4, "0")}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`, time: `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}` };
}

function sameInstant(zone: string, ms: number): void {
  const at = new Date(ms);
  expect(zoneOffsetMinutes(zone, at), `${zone} offset at ${at.toISOString()}`).toBe(intlZoneOffsetMinutes(zone, at));
  expect(utcToWallClock(zone, at), `${zone} wall clock at ${at.toISOString()}`).toEqual(intlUtcToWallClock(zone, at));
}

function sameWallTime(zone: string, wallMs: number): void {
  const { date, time } = wallOf(wallMs);
  expect(wallClockToUtc(zone, date, time).getTime(), `${zone} ${date} ${time}`).toBe(intlWallClockToUtc(zone, date, time).getTime());
}

/** The oracle's transitions in [from, to): read every `step` ms, each change found by halving to the second. */
function intlTransitions(zone: string, from: number, to: number, step: number): { at: number; before: number; after: number }[] {
  const offset = (ms: number) => intlZoneOffsetMinutes(zone, new Date(ms));
  const found: { at: number; before: number; after: number }[] = [];
  let previous = from;
  let before = offset(from);
  for (let t = from + step; t <= to; t += step) {
    const now = offset(t);
    if (now !== before) {
      let same = previous;
      let changed = t;
      while (changed - same > 1000) {
        const mid = same + Math.floor((changed - same) / 2000) * 1000;
        if (offset(mid) === before) same = mid;
        else changed = mid;
      }
      found.push({ at: changed, before, after: offset(changed) });
    }
    previous = t;
    before = now;
  }
  return found;
}

// A fixed amount of CPU work (Intl read per instant in 428 zones): 15-30 s on a quiet core, longer when the machine is shared.
describe("time-zone offset tables against Intl per instant", { timeout: 240_000 }, () => {
  it(`agree at random instants in every zone (${ZONES.length} zones)`, () => {
    for (const zone of ZONES) {
      fc.assert(
        fc.property(instantArb, fc.integer({ min: 0, max: 999 }), (ms, extra) => sameInstant(zone, ms + extra)),
        { numRuns: 8 },
      );
    }
  });

  it("agree on random wall-clock times in every zone", () => {
    for (const zone of ZONES) {
      fc.assert(
        fc.property(instantArb, (ms) => sameWallTime(zone, ms)),
        { numRuns: 6 },
      );
    }
  });

  it("agree around every transition of a random year in every zone: the instants either side, and each minute edge of its gap or fold", () => {
    let transitions = 0;
    let gaps = 0;
    let folds = 0;
    for (const zone of ZONES) {
      fc.assert(
        // Unbiased: fast-check's integer leans to its bounds (238 of 428 zones got a year within ten of 1880 or 2060,
        // few with changes then), and one full run counted only 100 transitions; uniform years give 155-206.
        fc.property(fc.noBias(fc.integer({ min: 1880, max: 2060 })), (year) => {
          const from = yearStart(year);
          // Two days apart: the tz database's shortest stay in an offset is almost four days (Africa/Freetown, 1939).
          for (const { at, before, after } of intlTransitions(zone, from, yearStart(year + 1), 2 * DAY)) {
            transitions++;
            for (const d of [-DAY, -30 * MINUTE, -1000, -1, 0, 1, 999, 1000, 30 * MINUTE, DAY]) sameInstant(zone, at + d);
            // The wall clock jumps from at + before to at + after: forward over a gap, back over a fold (minutes may be fractional before 1900).
            const low = at + Math.min(before, after) * MINUTE;
            const high = at + Math.max(before, after) * MINUTE;
            if (after > before) gaps++;
            else folds++;
            for (const wall of [low - 2 * MINUTE, low - MINUTE, low, low + MINUTE, (low + high) / 2, high - MINUTE, high, high + MINUTE, high + 2 * MINUTE]) sameWallTime(zone, wall);
          }
          // And a reading a month apart across the year.
          for (let t = from; t < yearStart(year + 1); t += 30 * DAY) sameInstant(zone, t);
        }),
        { numRuns: 1 },
      );
    }
    // Sanity: a random year of 400-odd zones holds hundreds of DST changes.
    expect(transitions).toBeGreaterThan(100);
    expect(gaps).toBeGreaterThan(20);
    expect(folds).toBeGreaterThan(20);
  });

  it("agree around this year's transitions in every zone", () => {
    const year = new Date().getUTCFullYear();
    for (const zone of ZONES) {
      // A week apart: this year's changes are months apart in every zone.
      for (const { at, before, after } of intlTransitions(zone, yearStart(year), yearStart(year + 1), 7 * DAY)) {
        for (const d of [-1000, -1, 0, 1, 1000]) sameInstant(zone, at + d);
        const low = at + Math.min(before, after) * MINUTE;
        const high = at + Math.max(before, after) * MINUTE;
        for (const wall of [low - MINUTE, low, (low + high) / 2, high - MINUTE, high]) sameWallTime(zone, wall);
      }
    }
  });
});
