// Reservation cells: the keys a confirmed booking claims so a unique index can refuse any overlapping booking.
import { blockedRange } from "./slots.js";

/*
 * Why cells. Two confirmed bookings of one host must never overlap, padding included, even when
 * requests race. A booking claims one document per key of its blocked range ([start − buffer,
 * end + padding): src/domain/slots.ts blockedRange) in booking_cells, under a unique (user_id, key) index; a second booking whose
 * range meets the first shares at least one key, so its insert fails with a duplicate key and it
 * is refused. The database decides, not a read-then-write in our code.
 *
 * Exactness. One key per minute would be exact but costs a key per minute (240 for a two-hour
 * meeting with two hours of padding after it); one key per coarse cell is cheap but refuses
 * bookings that merely touch inside a cell. This scheme is exact with few keys. Minutes are
 * grouped in 15-minute blocks, blocks in 5-minute sub-blocks. Every range is at least 5 minutes
 * long (booking-kinds.md: a length is 5 minutes or more), so it meets a block fully, as a prefix
 * [0, q) (it ends inside), as a suffix [p, 15) (it starts inside), or strictly inside [p, q), and
 * then it holds minute 5 or minute 10 of the block (1 ≤ p, q ≤ 14, q − p ≥ 5).
 *
 *   block fully covered      → "P15:b", "S15:b", "C15:b:5" and "C15:b:10"
 *   block as prefix [0, q)   → "P15:b" plus the keys of the piece at the 5-minute level
 *   block as suffix [p, 15)  → "S15:b" plus the keys of the piece at the 5-minute level
 *   block strictly inside    → "C15:b:5" and/or "C15:b:10", the ones it holds, plus the keys of the
 *                              piece at the 5-minute level
 *   and inside a piece, the same again with 5-minute sub-blocks ("P5:s", "S5:s") and, for a
 *   sub-block met only partly, one "M:m" key per minute. A piece is never strictly inside a
 *   5-minute sub-block: it touches an end of its 15-minute block, or it is 5 minutes or longer.
 *
 * Two ranges share "P15:b" only if both contain the first minute of b, "S15:b" only if both
 * contain its last, "C15:b:m" only if both contain its minute m, and so on down the levels, so a
 * shared key always means a real overlap. A real overlap is always found: in the block b where
 * they meet, full/full, full/prefix, full/suffix, prefix/prefix and suffix/suffix share a P15 or
 * S15 key, full/inside a C15 key; prefix/suffix and the pairings of an inside range with a prefix,
 * a suffix or another inside range may be disjoint, and they are decided one level down by the
 * same argument, finally by the shared minute. test/unit/reservation.test.ts checks "keys meet ⇔
 * ranges meet" with fast-check.
 *
 * Order. Keys are returned sorted and inserted in that order (ordered insertMany), so two
 * requests that want the same keys collide on the first shared one and the later of the two
 * stops there: of many requests for one slot exactly one gets all its keys.
 */

const MINUTE_MS = 60_000;
/** Block sizes in minutes, coarsest first; below the last level come single minutes. */
const LEVELS = [15, 5] as const;

/** The shortest range the scheme is exact for: one inside a top-level block holds one of its CENTRE_MINUTES. */
export const MIN_RESERVED_MINUTES = LEVELS[1];
/** Minutes of a top-level block of which every range of MIN_RESERVED_MINUTES or more strictly inside it holds one. */
const CENTRE_MINUTES = [5, 10] as const;

/**
 * Keys of the minutes [from, to) at `level`. At the top level [from, to) is the whole range; below
 * it, a piece of one block that touches one of the block's ends, so every block it meets is met
 * fully, as a prefix or as a suffix.
 */
function levelKeys(from: number, to: number, level: number, out: string[]): void {
  if (level === LEVELS.length) {
    for (let m = from; m < to; m++) out.push(`M:${m}`);
    return;
  }
  const size = LEVELS[level];
  for (let b = Math.floor(from / size); b * size < to; b++) {
    const start = b * size;
    const lo = Math.max(from, start);
    const hi = Math.min(to, start + size);
    if (lo === start && hi === start + size) {
      out.push(`P${size}:${b}`, `S${size}:${b}`);
      if (level === 0) for (const m of CENTRE_MINUTES) out.push(`C${size}:${b}:${m}`);
    } else if (lo > start && hi < start + size) {
      // Strictly inside: only at the top level (a piece below it touches an end of its block).
      for (const m of CENTRE_MINUTES) if (lo <= start + m && start + m < hi) out.push(`C${size}:${b}:${m}`);
      levelKeys(lo, hi, level + 1, out);
    } else {
      out.push(lo === start ? `P${size}:${b}` : `S${size}:${b}`);
      levelKeys(lo, hi, level + 1, out);
    }
  }
}

/**
 * The sorted cell keys of the blocked range [start, end), outward to whole minutes. Throws for a
 * range shorter than MIN_RESERVED_MINUTES, for which the scheme would not be exact.
 */
export function reservationCells(start: Date, end: Date): string[] {
  const from = Math.floor(start.getTime() / MINUTE_MS);
  const to = Math.ceil(end.getTime() / MINUTE_MS);
  if (!Number.isFinite(from) || !Number.isFinite(to)) throw new RangeError("invalid Date");
  if (to - from < MIN_RESERVED_MINUTES) {
    throw new RangeError(`a reserved range must last at least ${MIN_RESERVED_MINUTES} minutes, got ${to - from}`);
  }
  const out: string[] = [];
  levelKeys(from, to, 0, out);
  return out.sort();
}

/**
 * Prefix of the keys of bookings claimed under the present blocked range. Until 2026-11 a booking blocked its
 * padding before it too, and its cells still cover that time in databases written then: without a prefix of
 * their own, new claims would run into them and refuse slots the present rule offers. Keys of the two schemes
 * never meet, so an old booking stops no new claim; it still blocks slots through the availability check,
 * which reads bookings, not cells, and its cells go when it is canceled, rescheduled or expires.
 */
export const BOOKING_CELL_PREFIX = "a:";

/** The cell keys a booking claims: those of its blocked range [start − buffer, end + padding) (src/domain/slots.ts blockedRange). */
export function bookingCells(start: Date, end: Date, paddingMinutes: number, bufferBeforeMinutes = 0): string[] {
  const blocked = blockedRange(start, end, paddingMinutes, bufferBeforeMinutes);
  return reservationCells(blocked.start, blocked.end).map((key) => BOOKING_CELL_PREFIX + key);
}
