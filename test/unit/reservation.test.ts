// Reservation cells: shared keys exactly when two blocked ranges overlap, few keys for ordinary bookings.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PADDING_DURATIONS, SLOT_DURATIONS } from "../../src/domain/event.js";
import { BOOKING_CELL_PREFIX, bookingCells, MIN_RESERVED_MINUTES, reservationCells } from "../../src/domain/reservation.js";

const MINUTE = 60_000;
const BASE = Date.UTC(2026, 2, 2, 9, 0);

const at = (minutes: number): Date => new Date(BASE + minutes * MINUTE);
const cells = (from: number, to: number): string[] => reservationCells(at(from), at(to));
const meet = (a: string[], b: string[]): boolean => {
  const set = new Set(a);
  return b.some((k) => set.has(k));
};

describe("reservationCells", () => {
  it("claims four keys per fully covered 15-minute block", () => {
    expect(cells(0, 30)).toHaveLength(8);
    expect(cells(-120, 240)).toHaveLength(96);
  });

  it("finds a five-minute range strictly inside a block under a range covering the block, and lets two such ranges sit side by side", () => {
    expect(meet(cells(0, 15), cells(5, 10))).toBe(true);
    expect(meet(cells(-15, 30), cells(9, 14))).toBe(true);
    expect(meet(cells(1, 6), cells(6, 11))).toBe(false);
    expect(meet(cells(1, 6), cells(9, 14))).toBe(false);
    expect(meet(cells(0, 5), cells(5, 10))).toBe(false);
    expect(meet(cells(0, 6), cells(5, 10))).toBe(true);
  });

  it("lets bookings touch, at block ends and at odd minutes", () => {
    expect(meet(cells(0, 30), cells(30, 60))).toBe(false);
    expect(meet(cells(7, 22), cells(22, 37))).toBe(false);
    expect(meet(cells(3, 33), cells(33, 63))).toBe(false);
  });

  it("refuses a one-minute overlap anywhere in a block", () => {
    expect(meet(cells(7, 23), cells(22, 37))).toBe(true);
    expect(meet(cells(0, 30), cells(29, 60))).toBe(true);
    expect(meet(cells(0, 60), cells(14, 29))).toBe(true);
  });

  it("rounds seconds outward, so a range never claims less than it covers", () => {
    const a = reservationCells(new Date(BASE + 30_000), new Date(BASE + 20 * MINUTE + 1));
    expect(meet(a, cells(20, 40))).toBe(true);
    expect(meet(a, cells(-20, 1))).toBe(true);
  });

  it("returns sorted, distinct keys", () => {
    const keys = cells(-13, 200);
    expect([...keys].sort()).toEqual(keys);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("refuses ranges shorter than a block, for which it would not be exact", () => {
    expect(() => cells(0, MIN_RESERVED_MINUTES - 1)).toThrow(RangeError);
    expect(() => reservationCells(new Date(NaN), at(30))).toThrow(RangeError);
  });

  const range = fc
    .tuple(fc.integer({ min: -200, max: 200 }), fc.oneof(fc.integer({ min: MIN_RESERVED_MINUTES, max: 20 }), fc.integer({ min: MIN_RESERVED_MINUTES, max: 400 })))
    .map(([start, length]) => [start, start + length] as const);

  it("property: keys meet exactly when the ranges overlap", () => {
    fc.assert(
      fc.property(range, range, ([a1, a2], [b1, b2]) => {
        const overlap = a1 < b2 && b1 < a2;
        expect(meet(cells(a1, a2), cells(b1, b2))).toBe(overlap);
      }),
      { numRuns: 20_000 },
    );
  });

  describe("bookingCells: the range a booking claims is [start − buffer, end + padding)", () => {
    const booking = (start: number, slot: number, padding: number, before = 0) => bookingCells(at(start), at(start + slot), padding, before);

    it("the spec's example: a 30+30 booking at 10:00 shares no cell with 09:00 or 11:00, and one with 09:30 and 10:30", () => {
      const ten = booking(60, 30, 30);
      expect(meet(ten, booking(0, 30, 30))).toBe(false);
      expect(meet(ten, booking(120, 30, 30))).toBe(false);
      expect(meet(ten, booking(30, 30, 30))).toBe(true);
      expect(meet(ten, booking(90, 30, 30))).toBe(true);
    });

    it("uses keys of its own, which never meet the unprefixed keys of cells claimed under the earlier rule", () => {
      const keys = booking(60, 30, 30);
      expect(keys.every((k) => k.startsWith(BOOKING_CELL_PREFIX))).toBe(true);
      // The earlier rule blocked [start − padding, end + padding): 09:30-11:00 for this booking.
      expect(meet(keys, cells(30, 120))).toBe(false);
    });

    const bookingArb = fc.record({
      start: fc.integer({ min: -300, max: 300 }),
      slot: fc.constantFrom(...Object.values(SLOT_DURATIONS)),
      padding: fc.constantFrom(...Object.values(PADDING_DURATIONS)),
      before: fc.constantFrom(...Object.values(PADDING_DURATIONS)),
    });

    it("property: two bookings share a cell exactly when the slot rule keeps them apart", () => {
      fc.assert(
        fc.property(bookingArb, bookingArb, (a, b) => {
          // The slot rule written out: each blocks its meeting, the buffer before it and the padding after it.
          const conflict = a.start - a.before < b.start + b.slot + b.padding && b.start - b.before < a.start + a.slot + a.padding;
          expect(meet(booking(a.start, a.slot, a.padding, a.before), booking(b.start, b.slot, b.padding, b.before))).toBe(conflict);
        }),
        { numRuns: 20_000 },
      );
    });
  });
});
