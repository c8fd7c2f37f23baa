// Which start times a visitor may book: availability, notice, window and busy bookings turned into UTC slots.
import { intervalsOn, isCalendarDate, parseTimeOfDay, weekdayOf, type Availability } from "./availability.js";
import { addDays, utcToWallClock, wallClockToUtc } from "./timezones.js";

/*
 * The rules, exactly (docs/spec/extensions.md "Public booking" leaves these choices to us):
 *
 * Grid. For every host-local date D, the intervals are D's date override if there is one, else
 * D's weekday hours. Inside each interval, candidate starts are the wall-clock times
 * start, start + step, start + 2·step, … of D in the host zone, step being the event's
 * slot interval (booking-kinds.md `slot_interval_minutes`) or else slotMinutes, as long as the
 * wall-clock start plus slotMinutes does not pass the interval's wall-clock end. Each candidate is
 * converted to UTC and the slot is [start, start + slotMinutes) in real time. With a step shorter
 * than the length, the slots offered overlap one another: a visitor takes one of them.
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
 * candidate that starts less than a step after the previous slot of the same interval (the clock jumped
 * forward inside that step) is dropped, so offered slots start at least a step apart. None of this
 * depends on `now` or on bookings, so the slot a visitor saw is still the same instant when they
 * book it.
 *
 * Notice. start ≥ now + minimumNoticeMinutes.
 *
 * Window. Let today be the host-local date of `now`. start < the instant of 00:00 host time on
 * today + bookingWindowDays. So the window is bookingWindowDays whole host calendar days counting
 * today: with 1, only the rest of today can be booked.
 *
 * Padding and buffer. Padding is the gap kept after each meeting (docs/spec/scheduling-api.md
 * `padding_duration`); the buffer is the gap kept before it (extensions.md "Event rules" `buffer_before`,
 * none unless the event sets one). A booking blocks [start − buffer, end + padding) with its own event's
 * buffer and padding (`blockedRange`). A slot is free when [start − buffer, end + padding), with the
 * buffer and padding of the event being booked, does not intersect the blocked range of any busy
 * booking (half-open ranges, so touching is fine). With 30-minute slots and 30-minute padding, a
 * booking at 10:00 blocks [10:00, 11:00): 09:00 and 11:00 stay free, 09:30 and 10:30 are taken. The
 * rule is symmetric, so whichever of two bookings is made first, the second is refused if their
 * blocked ranges would meet: two bookings made through these functions never overlap, the gaps around
 * each included. Buffer and padding may reach outside the availability interval.
 *
 * Limits. With a daily or weekly limit (`BookingLimits`), a host-local day on which the event already
 * has `daily` confirmed bookings (by their start, in the host's zone), or that lies in a week holding
 * `weekly` of them, offers no slot. Weeks start on the host's first day of the week.
 *
 * Viewer days. The returned slots are those whose start lies in [rangeStartDate 00:00,
 * rangeEndDate + 1 day 00:00) read in viewerZone (a midnight that does not exist there moves
 * forward, like any wall-clock time), so the host's and the viewer's calendars may differ.
 */

export interface Slot {
  start: Date;
  end: Date;
  /** A seated event's slot: its seats still free. */
  seatsLeft?: number;
}

/**
 * The seats of a seated event (booking-kinds.md "Seats"): how many each slot has, and the slots of the event that
 * already hold seats (each with the times of its bookings and how many seats are taken). Those bookings are not
 * in `busy`: they leave their own slot offered until every seat is taken, and block every other start they meet.
 */
export interface Seats {
  perSlot: number;
  taken: readonly (BusyBooking & { count: number })[];
}

/** A confirmed booking of any of the host's events (or a busy time of a calendar), with the gaps of its own event. */
export interface BusyBooking {
  start: Date;
  end: Date;
  paddingMinutes: number;
  /** Minutes kept free before it (its event's buffer_before); absent: none. */
  bufferBeforeMinutes?: number;
}

/** At most `daily` / `weekly` confirmed bookings of the event being booked per host-local day / week (null: no limit). */
export interface BookingLimits {
  daily: number | null;
  weekly: number | null;
  /** First day of the host's week: 0 = Sunday … 6 = Saturday (start_day_of_week). */
  weekStartsOn: number;
  /**
   * The confirmed bookings of this event (the one being moved left out), at least those within `limitReadRange`
   * of the time asked about: the days and weeks are counted from their starts. `id` is needed by `limitPeriods` only.
   */
  booked: readonly { start: Date; id?: string }[];
}

/**
 * One limited period a new booking of the event takes a place in: the day or week of its start. Places are the
 * keys `<key><n>`, n from 0 to size − 1, claimed under a unique index (src/features/bookings/cells.ts) so that
 * no period ever holds more than `size` bookings, whatever races.
 */
export interface LimitPeriod {
  key: string;
  size: number;
  reason: "daily_limit" | "weekly_limit";
  /** Ids of the event's confirmed bookings in the period (the one being moved left out). */
  booked: readonly string[];
}

/** Why a start time is not a free slot (extensions.md "Why a time is refused"), in the order they are tested. */
export const REFUSAL_REASONS = [
  "in_the_past",
  "too_soon",
  "too_far",
  "outside_hours",
  "not_on_the_grid",
  "daily_limit",
  "weekly_limit",
  "full",
  "taken",
  "calendar_busy",
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** Everything that decides whether a start time is bookable. */
export interface SlotRules {
  /** IANA name of the host's zone, in which availability is read. */
  hostZone: string;
  /** Already validated (`validateAvailability`). */
  availability: Availability;
  /** Length of the event being booked, a whole number of minutes ≥ 1. */
  slotMinutes: number;
  /** Minutes between grid starts (the event's slot interval); absent: slotMinutes. */
  intervalMinutes?: number;
  /** Padding of the event being booked, minutes ≥ 0, kept after the meeting. */
  paddingMinutes: number;
  /** Buffer of the event being booked, minutes ≥ 0, kept before the meeting; absent: none. */
  bufferBeforeMinutes?: number;
  now: Date;
  /** The host's confirmed bookings. */
  busy: readonly BusyBooking[];
  /** Busy times of the host's calendars: apart from `busy` only so that a refusal can say which one it met. */
  calendarBusy?: readonly BusyBooking[];
  limits?: BookingLimits;
  seats?: Seats;
}

export interface SlotQuery extends SlotRules {
  /** First and last day shown (inclusive), "YYYY-MM-DD" read in viewerZone. */
  rangeStartDate: string;
  rangeEndDate: string;
  viewerZone: string;
}

const MINUTE = 60_000;

/** The time a booking keeps others out of: the meeting with the buffer before and the padding after it, [start − buffer, end + padding). */
export function blockedRange(start: Date, end: Date, paddingMinutes: number, bufferBeforeMinutes = 0): Slot {
  return { start: bufferBeforeMinutes === 0 ? start : new Date(start.getTime() - bufferBeforeMinutes * MINUTE), end: new Date(end.getTime() + paddingMinutes * MINUTE) };
}

const DAY_MS = 86_400_000;

/**
 * The span whose bookings of the event a question about [from, to) needs counted (`BookingLimits.booked`), or
 * undefined without limits: every host-local day, or week, that an instant of [from, to) falls in. Host days
 * reach at most 26 hours from an instant in them; a week, 7 days more.
 */
export function limitReadRange(from: Date, to: Date, limits: Pick<BookingLimits, "daily" | "weekly"> | undefined): { from: Date; to: Date } | undefined {
  if (!limits || (limits.daily === null && limits.weekly === null)) return undefined;
  const margin = (limits.weekly === null ? 2 : 9) * DAY_MS;
  return { from: new Date(from.getTime() - margin), to: new Date(to.getTime() + margin) };
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
  return whyRefused(params) === undefined;
}

/**
 * Why `start` is not a slot `computeSlots` would offer, or undefined when it is one: the first of
 * REFUSAL_REASONS that holds. A time off every interval is `outside_hours`, also when the meeting would run
 * past the end of the interval it starts in; one inside an interval that is no start of its grid is
 * `not_on_the_grid`. `overrideRules` (a host booking for someone, booking-kinds.md "The host's desk"): notice,
 * window, hours, grid and limits do not apply; only a past time, other bookings (a full seated slot too) and busy
 * calendars refuse it, and a start off the whole minute (the reservation cells' finest unit).
 */
export function whyRefused(params: SlotRules & { start: Date; overrideRules?: boolean }): RefusalReason | undefined {
  checkRules(params);
  const at = params.start.getTime();
  const ruled = params.overrideRules !== true;
  if (!Number.isFinite(at) || (!ruled && at % MINUTE !== 0)) return "not_on_the_grid";
  const { hostZone, availability, slotMinutes } = params;
  const now = params.now.getTime();
  if (at < now) return "in_the_past";
  let slotDate: string | undefined;
  if (ruled) {
    if (at < now + availability.minimumNoticeMinutes * MINUTE) return "too_soon";
    if (at >= windowEndOf(params)) return "too_far";
    const date = utcToWallClock(hostZone, params.start).date;
    eachGridSlot(params, addDays(date, -1), addDays(date, 1), undefined, (start, _end, day) => {
      if (start === at) slotDate = day;
      return slotDate !== undefined;
    });
    if (slotDate === undefined) {
      const inside = intervalAround(params, date, at);
      return inside !== undefined && at + slotMinutes * MINUTE <= inside.end ? "not_on_the_grid" : "outside_hours";
    }
  }
  const seated = params.seats ? seatChecker(params.seats, params.paddingMinutes, params.bufferBeforeMinutes ?? 0)(at, at + slotMinutes * MINUTE) : undefined;
  // A slot that already holds seats is past its day's limit check: it counted when its first seat was taken.
  const limit = slotDate !== undefined && params.limits && seated?.seatsLeft === undefined ? limitChecker(params.limits, hostZone)(slotDate) : undefined;
  if (limit) return limit;
  if (seated?.refused) return seated.refused;
  const end = at + slotMinutes * MINUTE;
  const before = params.bufferBeforeMinutes ?? 0;
  if (!freeChecker(params.busy, params.paddingMinutes, before)(at, end)) return "taken";
  if (params.calendarBusy && !freeChecker(params.calendarBusy, params.paddingMinutes, before)(at, end)) return "calendar_busy";
  return undefined;
}

function checkRules(rules: SlotRules): void {
  if (!Number.isInteger(rules.slotMinutes) || rules.slotMinutes < 1) {
    throw new RangeError(`slotMinutes must be a whole number ≥ 1, got ${rules.slotMinutes}`);
  }
  if (rules.intervalMinutes !== undefined && (!Number.isInteger(rules.intervalMinutes) || rules.intervalMinutes < 1)) {
    throw new RangeError(`intervalMinutes must be a whole number ≥ 1, got ${rules.intervalMinutes}`);
  }
  if (!Number.isFinite(rules.paddingMinutes) || rules.paddingMinutes < 0) {
    throw new RangeError(`paddingMinutes must be ≥ 0, got ${rules.paddingMinutes}`);
  }
  const before = rules.bufferBeforeMinutes ?? 0;
  if (!Number.isFinite(before) || before < 0) throw new RangeError(`bufferBeforeMinutes must be ≥ 0, got ${before}`);
}

/** The first instant past the booking window: 00:00 host time, bookingWindowDays after the host's today. */
function windowEndOf(rules: Pick<SlotRules, "hostZone" | "availability" | "now">): number {
  const today = utcToWallClock(rules.hostZone, rules.now).date;
  return wallClockToUtc(rules.hostZone, addDays(today, rules.availability.bookingWindowDays), "00:00").getTime();
}

/** The real-time span of the availability interval of host-local `date` (or a day either side) that holds `at`, if any. */
function intervalAround(rules: Pick<SlotRules, "hostZone" | "availability">, date: string, at: number): { start: number; end: number } | undefined {
  for (let day = addDays(date, -1); day <= addDays(date, 1); day = addDays(day, 1)) {
    const intervals = intervalsOn(rules.availability, day, weekdayOf(weekdayNumber(day)));
    if (intervals.length === 0) continue;
    const clock = dayClock(rules.hostZone, day);
    for (const interval of intervals) {
      const first = parseTimeOfDay(interval.start);
      const last = parseTimeOfDay(interval.end, true);
      if (first === undefined || last === undefined) continue;
      const span = { start: clock.reach(first), end: clock.reach(last) };
      if (at >= span.start && at < span.end) return span;
    }
  }
  return undefined;
}

/**
 * A test "is host-local `date` full?" for the limits: `daily_limit` when the day holds `daily` bookings of
 * the event, `weekly_limit` when its week holds `weekly`, else undefined. Each booking is placed once.
 */
function limitChecker(limits: BookingLimits, hostZone: string): (date: string) => "daily_limit" | "weekly_limit" | undefined {
  const perDay = new Map<string, number>();
  const perWeek = new Map<string, number>();
  const weekOf = weekStart(limits.weekStartsOn);
  for (const { start } of limits.booked) {
    const day = utcToWallClock(hostZone, start).date;
    perDay.set(day, (perDay.get(day) ?? 0) + 1);
    if (limits.weekly !== null) perWeek.set(weekOf(day), (perWeek.get(weekOf(day)) ?? 0) + 1);
  }
  return (date) => {
    if (limits.daily !== null && (perDay.get(date) ?? 0) >= limits.daily) return "daily_limit";
    if (limits.weekly !== null && (perWeek.get(weekOf(date)) ?? 0) >= limits.weekly) return "weekly_limit";
    return undefined;
  };
}

/** Free slots whose start lies in [from, to) (epoch milliseconds), ascending. */
function slotsStartingIn(rules: SlotRules, from: number, to: number): Slot[] {
  checkRules(rules);
  const { availability, hostZone } = rules;
  const lower = Math.max(from, rules.now.getTime() + availability.minimumNoticeMinutes * MINUTE);
  const upper = Math.min(to, windowEndOf(rules));
  if (!(lower < upper)) return [];

  const busy = rules.calendarBusy && rules.calendarBusy.length > 0 ? [...rules.busy, ...rules.calendarBusy] : rules.busy;
  const isFree = freeChecker(busy, rules.paddingMinutes, rules.bufferBeforeMinutes ?? 0);
  const full = rules.limits ? limitChecker(rules.limits, hostZone) : undefined;
  const seated = rules.seats ? seatChecker(rules.seats, rules.paddingMinutes, rules.bufferBeforeMinutes ?? 0) : undefined;
  const slots: Slot[] = [];
  // One day of margin each side: where a fall-back crosses midnight, the host date is not monotonic in UTC.
  const firstDate = addDays(utcToWallClock(hostZone, new Date(lower)).date, -1);
  const lastDate = addDays(utcToWallClock(hostZone, new Date(upper - 1)).date, 1);
  eachGridSlot(rules, firstDate, lastDate, full && !seated ? (date) => full(date) !== undefined : undefined, (start, end, date) => {
    if (start < lower || start >= upper || !isFree(start, end)) return false;
    if (!seated) {
      slots.push({ start: new Date(start), end: new Date(end) });
      return false;
    }
    const seats = seated(start, end);
    // A slot already holding seats counted towards its day's limit when its first seat was taken.
    if (seats.refused || (seats.seatsLeft === undefined && full?.(date) !== undefined)) return false;
    slots.push({ start: new Date(start), end: new Date(end), seatsLeft: seats.seatsLeft ?? rules.seats!.perSlot });
    return false;
  });
  // Days come in order and intervals are ordered within a day; sorting only guards the fall-back-at-midnight margin days.
  slots.sort((a, b) => a.start.getTime() - b.start.getTime());
  return slots;
}

/**
 * Calls `visit(start, end, date)` for every grid slot of the host-local days firstDate..lastDate (the rules of
 * the grid and of DST above), in order, skipping the days `skipDay` says; stops when `visit` returns true.
 */
function eachGridSlot(
  rules: Pick<SlotRules, "hostZone" | "availability" | "slotMinutes" | "intervalMinutes">,
  firstDate: string,
  lastDate: string,
  skipDay: ((date: string) => boolean) | undefined,
  visit: (start: number, end: number, date: string) => boolean,
): void {
  const { availability, hostZone, slotMinutes } = rules;
  const step = rules.intervalMinutes ?? slotMinutes;
  for (let date = firstDate; date <= lastDate; date = addDays(date, 1)) {
    const intervals = intervalsOn(availability, date, weekdayOf(weekdayNumber(date)));
    if (intervals.length === 0 || skipDay?.(date)) continue;
    const clock = dayClock(hostZone, date);
    for (const interval of intervals) {
      const first = parseTimeOfDay(interval.start);
      const last = parseTimeOfDay(interval.end, true);
      if (first === undefined || last === undefined) continue; // unreachable for validated availability
      const intervalEnd = clock.reach(last);
      let nextAllowed = -Infinity;
      for (let minute = first; minute + slotMinutes <= last; minute += step) {
        const candidate = clock.at(minute);
        if (!candidate.exists) continue;
        const start = candidate.at;
        const end = start + slotMinutes * MINUTE;
        if (end > intervalEnd) break;
        if (start < nextAllowed) continue;
        nextAllowed = start + step * MINUTE;
        if (visit(start, end, date)) return;
      }
    }
  }
}

/**
 * Builds a test "does [start − bufferBeforeMinutes, end + paddingMinutes) miss every busy blocked range?"
 * (`blockedRange` in numbers). Ranges sorted by start with a running maximum of ends answer it with one binary search.
 */
function freeChecker(busy: readonly BusyBooking[], paddingMinutes: number, bufferBeforeMinutes: number): (start: number, end: number) => boolean {
  const ranges = busy
    .map((b) => ({ start: b.start.getTime() - (b.bufferBeforeMinutes ?? 0) * MINUTE, end: b.end.getTime() + b.paddingMinutes * MINUTE }))
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
    const blockedStart = start - bufferBeforeMinutes * MINUTE;
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

/**
 * Builds a test of a seated event's slot [start, end): `full` when its seats are all taken, `taken` when a slot
 * of the event holding seats at another start meets it (gaps included), else the seats it has left when some
 * are taken (undefined: none taken yet).
 */
function seatChecker(seats: Seats, paddingMinutes: number, bufferBeforeMinutes: number): (start: number, end: number) => { refused?: "full" | "taken"; seatsLeft?: number } {
  const byStart = new Map(seats.taken.map((s) => [s.start.getTime(), s]));
  return (start, end) => {
    const here = byStart.get(start);
    const others = seats.taken.filter((s) => s.start.getTime() !== start);
    if (others.length > 0 && !freeChecker(others, paddingMinutes, bufferBeforeMinutes)(start, end)) return { refused: "taken" };
    if (here === undefined) return {};
    const seatsLeft = Math.max(0, seats.perSlot - here.count);
    return seatsLeft === 0 ? { refused: "full", seatsLeft } : { seatsLeft };
  };
}

/** The first day of the week holding a date, weeks starting on `weekStartsOn` (0 = Sunday). */
function weekStart(weekStartsOn: number): (date: string) => string {
  return (date) => addDays(date, -((weekdayNumber(date) - weekStartsOn + 7) % 7));
}

/** The limited periods (day, then week) a booking of event `eventId` starting at `start` takes a place in. */
export function limitPeriods(limits: BookingLimits | undefined, eventId: string, hostZone: string, start: Date): LimitPeriod[] {
  if (!limits) return [];
  const day = utcToWallClock(hostZone, start).date;
  const week = weekStart(limits.weekStartsOn)(day);
  const ids = (inPeriod: (date: string) => boolean) =>
    limits.booked.flatMap((b) => (b.id !== undefined && inPeriod(utcToWallClock(hostZone, b.start).date) ? [b.id] : []));
  const periods: LimitPeriod[] = [];
  if (limits.daily !== null) periods.push({ key: `L:${eventId}:d:${day}:`, size: limits.daily, reason: "daily_limit", booked: ids((d) => d === day) });
  if (limits.weekly !== null) {
    const end = addDays(week, 7);
    periods.push({ key: `L:${eventId}:w:${week}:`, size: limits.weekly, reason: "weekly_limit", booked: ids((d) => d >= week && d < end) });
  }
  return periods;
}

// ---------------------------------------------------------------------------------------------
// Wall-clock instants of one host day, on top of ./timezones.ts.

const DAY = DAY_MS;

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
