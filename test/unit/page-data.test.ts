// Unit tests for what a page hands its script about its free times (src/features/pages/shared/data.ts): the times as runs and a seated event's seats left come back the same, in far fewer bytes.
import { describe, expect, it } from "vitest";
import { seatsLeftAt, seatsLeftOf, startRuns, startsOfRuns } from "../../src/features/pages/shared/data.js";

const iso = (ms: number) => new Date(ms).toISOString();

describe("startRuns", () => {
  it("gives back exactly the times it was given", () => {
    const t0 = Date.parse("2026-12-01T09:00:00.000Z");
    const cases = [
      [],
      [iso(t0)],
      [iso(t0), iso(t0 + 30 * 60_000)],
      // Two days of 9-17 every 30 minutes, then a lone 20-minute step and an odd time.
      [...Array.from({ length: 16 }, (_, i) => iso(t0 + i * 30 * 60_000)), ...Array.from({ length: 16 }, (_, i) => iso(t0 + 86_400_000 + i * 30 * 60_000)), iso(t0 + 2 * 86_400_000), iso(t0 + 2 * 86_400_000 + 20 * 60_000), iso(t0 + 2 * 86_400_000 + 20 * 60_000 + 7_000)],
    ];
    for (const starts of cases) expect(startsOfRuns(startRuns(starts))).toEqual(starts);
  });

  it("makes a month of a host open all day a handful of runs", () => {
    const t0 = Date.parse("2026-12-01T00:00:00.000Z");
    const month = Array.from({ length: 31 * 48 }, (_, i) => iso(t0 + i * 30 * 60_000));
    const runs = startRuns(month);
    expect(runs).toEqual([[month[0], 30, month.length]]);
    expect(JSON.stringify(runs).length).toBeLessThan(JSON.stringify(month).length / 100);
  });
});

describe("seatsLeftOf", () => {
  it("keeps the usual count once and the times that differ; seatsLeftAt gives each time's back; no seats, none", () => {
    const slots = [
      { start_time: "2026-03-10T09:00:00.000Z", seats_left: 5 },
      { start_time: "2026-03-10T09:30:00.000Z", seats_left: 2 },
      { start_time: "2026-03-10T10:00:00.000Z", seats_left: 5 },
      { start_time: "2026-03-10T10:30:00.000Z", seats_left: 1 },
    ];
    const seats = seatsLeftOf(slots);
    expect(seats).toEqual({ usual: 5, other: [["2026-03-10T09:30:00.000Z", 2], ["2026-03-10T10:30:00.000Z", 1]] });
    for (const s of slots) expect(seatsLeftAt(seats, s.start_time)).toBe(s.seats_left);
    expect(seatsLeftOf([{ start_time: "2026-03-10T09:00:00.000Z" }])).toBeUndefined();
    expect(seatsLeftAt(undefined, "2026-03-10T09:00:00.000Z")).toBeUndefined();
  });
});
