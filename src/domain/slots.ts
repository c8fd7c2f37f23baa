// Which start times a visitor may book: availability, notice, window and busy bookings turned into UTC slots.
import { intervalsOn, isCalendarDate, parseTimeOfDay, weekdayOf, type Availability } from "./availability.js";
import { addDays, utcToWallClock, wallClockToUtc } from "./timezones.js";

/*
 * The rules, exactly (docs/spec/extensions.md "Public booking" leaves these choices to us):
 *
 * Grid. For every host-local date D, the intervals are D's date override if there is one, else
 * D's weekday hours. Inside each interval, candidate starts are the wall-clock times
 * start, start + slotMinutes, start + 2·slotMinutes, … of D in the host zone, as long as the
 * wall-clock start plus slotMinutes does not pass the interval's wall-clock end. Each candidate is
 * converted to UTC and the slot is [start, start + slotMinutes) in real time.
 *
 * DST. A candidate whose wall-clock start does not exist on D (it falls in a spring-forward gap) is
 * skipped, not moved: moving it would put it off the grid the host sees. An ambiguous wall-clock
 * start (fall-back) means its earlier instant, so each grid time is offered once and the repeated
 * hour gets no grid times of its own (Berlin's 00:00–24:00 on 2026-10-25 gives 24 one-hour slots
 * in 25 hours). An interval runs in real time from the first instant the host's clock shows its
 * start (or later) on D to the first instant it shows its end (or later), "24:00" being the next
 * day's 00:00. So an ambiguous bound is its first occurrence, and a bound inside a gap is the
 * instant of the jump: 01:00–02:30 on a US spring-forward day ends at 03:00 EDT, when the clock
 * passes 02:30, not at 03:30 where `wallClockToUtc` would move 02:30 (the host who works "until
 * 02:30" stops when the clock shows later than that). A slot must end, in real time, no later than
 * its interval's end: 01:00–04:00 on that day lasts two real hours and holds two one-hour slots. A
 * candidate that starts before the previous slot of the same interval ends (the clock jumped
 * forward inside that slot) is dropped, so offered slots never overlap one another. None of this
 * depends on `now` or on bookings, so the slot a visitor saw is still the same instant when they
 * book it.
 *
 * Notice. start ≥ now + minimumNoticeMinutes.
 *
 * Window. Let today be the host-local date of `now`. start < the instant of 00:00 host time on
 * today + bookingWindowDays. So the window is bookingWindowDays whole host calendar days counting
 * today: with 1, only the rest of today can be booked.
 *
 * Padding. Padding is the gap kept after each meeting, never before it (docs/spec/scheduling-api.md
 * `padding_duration`, docs/spec/extensions.md "Public booking"). A booking blocks [start, end + padding)
 * with its own event's padding (`blockedRange`). A slot is free when [start, end + padding), with
 * the padding of the event being booked, does not intersect the blocked range of any busy booking
 * (half-open ranges, so touching is fine). With 30-minute slots and 30-minute padding, a booking
 * at 10:00 blocks [10:00, 11:00): 09:00 and 11:00 stay free, 09:30 and 10:30 are taken. The rule
 * is symmetric, so whichever of two bookings is made first, the second is refused if their
 * blocked ranges would meet: two bookings made through these functions never overlap, the
 * padding after each included. Padding may reach outside the availability interval.
 *
 * Viewer days. The returned slots are those whose start lies in [rangeStartDate 00:00,
 * rangeEndDate + 1 day 00:00) read in viewerZone (a midnight that does not exist there moves
 * forward, like any wall-clock time), so the host's and the viewer's calendars may differ.
 */

export interface Slot {
  start: Date;
  end: Date;
}

/** A confirmed booking of any of the host's events, with the padding of its own event. */
export interface BusyBooking {
  start: Date;
  end: Date;
  paddingMinutes: number;
}

/** Everything that decides whether a start time is bookable. */
export interface SlotRules {
  /** IANA name of the host's zone, in which availability is read. */
  hostZone: string;
  /** Already validated (`validateAvailability`). */
  availability: Availability;
  /** Length of the event being booked, a whole number of minutes ≥ 1. */
  slotMinutes: number;
  /** Padding of the event being booked, minutes ≥ 0, kept after the meeting. */
  paddingMinutes: number;
  now: Date;
  busy: readonly BusyBooking[];
}

export interface SlotQuery extends SlotRules {
  /** First and last day shown (inclusive), "YYYY-MM-DD" read in viewerZone. */
  rangeStartDate: string;
  rangeEndDate: string;
  viewerZone: string;
}

const MINUTE = 60_000;

/** The time a booking keeps others out of: the meeting and the padding after it, [start, end + padding). */
export function blockedRange(start: Date, end: Date, paddingMinutes: number): Slot {
  return { start, end: new Date(end.getTime() + paddingMinutes * MINUTE) };
}

/** The free slots that start within the viewer's days, ascending. */
export function computeSlots(query: SlotQuery): Slot[] {
  for (const [name, value] of [["rangeStartDate", query.rangeStartDate], ["rangeEndDate", query.rangeEndDate]] as const) {
    if (!isCalendarDate(value)) throw new RangeError(`${name} is not a valid date: ${value}`);
  }
  if (query.rangeEndDate < query.rangeStartDate) return [];
  const from = wallClockToUtc(query.viewerZone, query.rangeStartDate, "00:00").getTime();
  const to = wallClockToUtc(query.viewerZone, addDays(query.rangeEndDate, 1), "00:00").getTime();
  return slotsStartingIn(query, from, to);
}

/**
 * Until when (epoch ms, exclusive) `computeSlots` gives `slots`, its answer to `query`, as `query.now` moves on and
 * all else stays: what a listing may be answered from again. The clock takes slots away as the notice passes their
 * start (the first one goes first; a candidate not offered stays out), and the host's day decides the window's end.
 */
export function slotsUnchangedUntil(query: SlotQuery, slots: readonly Slot[]): number {
  const today = utcToWallClock(query.hostZone, query.now).date;
  // The first instant the host's clock shows the next date.
  const nextDay = wallClockToUtc(query.hostZone, addDays(today, 1), "00:00").getTime();
  if (slots.length === 0) return nextDay;
  return Math.min(nextDay, slots[0].start.getTime() - query.availability.minimumNoticeMinutes * MINUTE + 1);
}

/** Whether `start` is exactly the start of a slot `computeSlots` would offer; the check a booking request must pass. */
export function isSlotFree(params: SlotRules & { start: Date }): boolean {
  const at = params.start.getTime();
  if (!Number.isFinite(at)) return false;
  const found = slotsStartingIn(params, at, at + 1);
  return found.length === 1 && found[0].start.getTime() === at;
}

function checkRules(rules: SlotRules): void {
  if (!Number.isInteger(rules.slotMinutes) || rules.slotMinutes < 1) {
    throw new RangeError(`slotMinutes must be a whole number ≥ 1, got ${rules.slotMinutes}`);
  }
  if (!Number.isFinite(rules.paddingMinutes) || rules.paddingMinutes < 0) {
    throw new RangeError(`paddingMinutes must be ≥ 0, got ${rules.paddingMinutes}`);
  }
}

/** Free slots whose start lies in [from, to) (epoch milliseconds), ascending. */
function slotsStartingIn(rules: SlotRules, from: number, to: number): Slot[] {
  checkRules(rules);
  const { availability, hostZone, slotMinutes } = rules;
  const now = rules.now.getTime();
  const today = utcToWallClock(hostZone, rules.now).date;
  const windowEnd = wallClockToUtc(hostZone, addDays(today, availability.bookingWindowDays), "00:00").getTime();
  const lower = Math.max(from, now + availability.minimumNoticeMinutes * MINUTE);
  const upper = Math.min(to, windowEnd);
  if (!(lower < upper)) return [];

  const isFree = freeChecker(rules.busy, rules.paddingMinutes);
  const slots: Slot[] = [];
  // One day of margin each side: where a fall-back crosses midnight, the host date is not monotonic in UTC.
  const lastDate = addDays(utcToWallClock(hostZone, new Date(upper - 1)).date, 1);
  for (let date = addDays(utcToWallClock(hostZone, new Date(lower)).date, -1); date <= lastDate; date = addDays(date, 1)) {
    const intervals = intervalsOn(availability, date, weekdayOf(weekdayNumber(date)));
    if (intervals.length === 0) continue;
    const clock = dayClock(hostZone, date);
    for (const interval of intervals) {
      const first = parseTimeOfDay(interval.start);
      const last = parseTimeOfDay(interval.end, true);
      if (first === undefined || last === undefined) continue; // unreachable for validated availability
      const intervalEnd = clock.reach(last);
      let previousEnd = -Infinity;
      for (let minute = first; minute + slotMinutes <= last; minute += slotMinutes) {
        const candidate = clock.at(minute);
        if (!candidate.exists) continue;
        const start = candidate.at;
        const end = start + slotMinutes * MINUTE;
        if (end > intervalEnd) break;
        if (start < previousEnd) continue;
        previousEnd = end;
        if (start >= lower && start < upper && isFree(start, end)) {
          slots.push({ start: new Date(start), end: new Date(end) });
        }
      }
    }
  }
  // Days come in order and intervals are ordered within a day; sorting only guards the fall-back-at-midnight margin days.
  slots.sort((a, b) => a.start.getTime() - b.start.getTime());
  return slots;
}

/**
 * Builds a test "does [start, end + paddingMinutes) miss every busy blocked range?" (`blockedRange` in numbers).
 * Ranges sorted by start with a running maximum of ends answer it with one binary search.
 */
function freeChecker(busy: readonly BusyBooking[], paddingMinutes: number): (start: number, end: number) => boolean {
  const ranges = busy
    .map((b) => ({ start: b.start.getTime(), end: b.end.getTime() + b.paddingMinutes * MINUTE }))
    // An empty range blocks nothing, and would spoil the running maximum.
    .filter((r) => r.start < r.end)
    .sort((a, b) => a.start - b.start);
  const maxEndUpTo: number[] = [];
  let runningMax = -Infinity;
  for (const r of ranges) {
    runningMax = Math.max(runningMax, r.end);
    maxEndUpTo.push(runningMax);
  }
  return (start, end) => {
    const blockedStart = start;
    const blockedEnd = end + paddingMinutes * MINUTE;
    // Count the ranges that start before blockedEnd; any of them ending after blockedStart intersects.
    let lo = 0;
    let hi = ranges.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ranges[mid].start < blockedEnd) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 || maxEndUpTo[lo - 1] <= blockedStart;
  };
}

// ---------------------------------------------------------------------------------------------
// Wall-clock instants of one host day, on top of ./timezones.ts.

const DAY = 86_400_000;

/** 0 = Sunday. */
function weekdayNumber(date: string): number {
  return new Date(`${date}T00:00:00Z`).getUTCDay();
}

function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY);
}

interface DayClock {
  /** The instant the clock shows `minute` of the date (earlier one if shown twice), and whether it is shown at all. */
  at(minute: number): { at: number; exists: boolean };
  /** The first instant at which the clock shows `minute` of the date or later: for a time in a gap, the jump. */
  reach(minute: number): number;
}

/** Wall-clock minutes counted from `date`'s midnight; 1440 and beyond fall on the following days. */
function dayClock(zone: string, date: string): DayClock {
  const exact = (minute: number): { at: number; exists: boolean } => {
    const day = addDays(date, Math.floor(minute / 1440));
    const m = minute % 1440;
    const time = `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`;
    const at = wallClockToUtc(zone, day, time);
    const back = utcToWallClock(zone, at);
    return { at: at.getTime(), exists: back.date === day && back.time === time };
  };
  // Most days have one offset throughout; then every wall time occurs once and is midnight plus
  // minutes, which keeps a month of fifteen-minute slots cheap. Agreeing offsets at midnight,
  // noon and the next midnight are taken to mean that (no zone changes its offset and back
  // within twelve hours); any other day takes the exact path for every time.
  const midnight = exact(0);
  const noon = exact(720);
  const next = exact(1440);
  if (midnight.exists && noon.exists && next.exists && noon.at - midnight.at === DAY / 2 && next.at - noon.at === DAY / 2) {
    return {
      at: (minute) => ({ at: midnight.at + minute * MINUTE, exists: true }),
      reach: (minute) => midnight.at + minute * MINUTE,
    };
  }
  return {
    at: exact,
    reach(minute) {
      const found = exact(minute);
      if (found.exists) return found.at;
      // wallClockToUtc moved the time forward past the gap; the gap's end, the first wall minute
      // that exists, lies between, and it is shown at the very instant of the jump.
      const shown = utcToWallClock(zone, new Date(found.at));
      let missing = minute;
      let present = daysBetween(date, shown.date) * 1440 + Number(shown.time.slice(0, 2)) * 60 + Number(shown.time.slice(3, 5));
      while (present - missing > 1) {
        const mid = Math.floor((missing + present) / 2);
        if (exact(mid).exists) present = mid;
        else missing = mid;
      }
      return exact(present).at;
    },
  };
}
