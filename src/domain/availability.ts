// When a host can be booked: the availability object, its defaults, and the one validator every protocol shares.

export const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Wall-clock times "HH:MM" in the host's zone; `end` may be "24:00" so a day can run to midnight. */
export interface TimeInterval {
  start: string;
  end: string;
}

type WeeklyHours = Record<Weekday, readonly TimeInterval[]>;

/** Replaces the weekly hours of one host-local date; no intervals makes the date unavailable. */
interface DateOverride {
  date: string;
  intervals: readonly TimeInterval[];
}

export interface Availability {
  weeklyHours: WeeklyHours;
  dateOverrides: readonly DateOverride[];
  minimumNoticeMinutes: number;
  bookingWindowDays: number;
}

/**
 * What a caller may hand to the validator: a PUT replaces the whole object, and a weekday or
 * the override list that is left out means "none", as an absent repeated proto field does.
 */
export interface AvailabilityInput {
  weeklyHours?: Partial<Record<Weekday, readonly TimeInterval[]>>;
  dateOverrides?: readonly DateOverride[];
  minimumNoticeMinutes: number;
  bookingWindowDays: number;
}

export const MINIMUM_NOTICE_MAX_MINUTES = 43_200;
export const BOOKING_WINDOW_MIN_DAYS = 1;
export const BOOKING_WINDOW_MAX_DAYS = 730;
const INTERVALS_PER_DAY_MAX = 20;
const DATE_OVERRIDES_MAX = 400;
const MINUTES_PER_DAY = 1440;

const workday: readonly TimeInterval[] = Object.freeze([Object.freeze({ start: "09:00", end: "17:00" })]);
const dayOff: readonly TimeInterval[] = Object.freeze([]);

/** What a new account gets. Frozen, because every account shares this one object until it PUTs its own. */
export const DEFAULT_AVAILABILITY: Readonly<Availability> = Object.freeze({
  weeklyHours: Object.freeze({
    monday: workday,
    tuesday: workday,
    wednesday: workday,
    thursday: workday,
    friday: workday,
    saturday: dayOff,
    sunday: dayOff,
  }),
  dateOverrides: Object.freeze([]),
  minimumNoticeMinutes: 240,
  bookingWindowDays: 60,
});

/** Weekday name of a JavaScript day number (0 = Sunday, as `Date.getUTCDay`). */
export function weekdayOf(dayNumber: number): Weekday {
  return WEEKDAYS[(dayNumber + 6) % 7];
}

const TIME_RE = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Minutes after midnight of "HH:MM", or undefined when malformed; "24:00" only when `asEnd`. */
export function parseTimeOfDay(value: string, asEnd = false): number | undefined {
  if (asEnd && value === "24:00") return MINUTES_PER_DAY;
  const m = TIME_RE.exec(value);
  return m ? Number(m[1]) * 60 + Number(m[2]) : undefined;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a "YYYY-MM-DD" that names a real day of the (proleptic Gregorian) calendar, year 0001 or later. */
export function isCalendarDate(value: string): boolean {
  const m = DATE_RE.exec(value);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return day <= lengths[month - 1];
}

/**
 * Every date the API reads (listing ranges, slot ranges, date overrides, booking times) lies in these bounds.
 * Nothing a scheduling product books or lists happens before the Unix epoch or a thousand years ahead, and
 * the bounds keep every day arithmetic on a date (a range's day after, a week on) within four-digit years:
 * 9999-12-31 plus a day was a 500.
 */
export const DATE_MIN = "1970-01-01";
export const DATE_MAX = "2999-12-31";
export const DATE_BOUNDS = `from ${DATE_MIN} to ${DATE_MAX}`;

/** A calendar date (isCalendarDate) within DATE_MIN..DATE_MAX. */
export function isDateInBounds(value: string): boolean {
  return isCalendarDate(value) && value >= DATE_MIN && value <= DATE_MAX;
}

export type AvailabilityCheck =
  | { ok: true; value: Availability }
  | { ok: false; field: string; message: string };

type Problem = { field: string; message: string };

function problem(field: string, message: string): Problem {
  return { field, message };
}

// Intervals are half-open, so one may start exactly where the previous one ends. Requiring each
// to start at or after the previous end both orders them and rules out every overlap, so
// comparing neighbours is enough.
function checkIntervals(path: string, intervals: readonly TimeInterval[]): Problem | undefined {
  if (intervals.length > INTERVALS_PER_DAY_MAX) {
    return problem(path, `${path} has more than ${INTERVALS_PER_DAY_MAX} intervals`);
  }
  let previous: { start: number; end: number } | undefined;
  for (let i = 0; i < intervals.length; i++) {
    const here = `${path}[${i}]`;
    const { start, end } = intervals[i];
    const s = typeof start === "string" ? parseTimeOfDay(start) : undefined;
    if (s === undefined) return problem(`${here}.start`, `${here}.start is not a valid time (HH:MM, 00:00 to 23:59)`);
    const e = typeof end === "string" ? parseTimeOfDay(end, true) : undefined;
    if (e === undefined) return problem(`${here}.end`, `${here}.end is not a valid time (HH:MM, 00:01 to 24:00)`);
    if (s >= e) return problem(here, `${here}.start must be before ${here}.end`);
    if (previous && s < previous.end) {
      const before = `${path}[${i - 1}]`;
      const message = e > previous.start ? `${here} overlaps ${before}` : `${here} must come after ${before} (intervals in time order)`;
      return problem(here, message);
    }
    previous = { start: s, end: e };
  }
  return undefined;
}

function isWholeNumberIn(value: number, min: number, max: number): boolean {
  return Number.isInteger(value) && value >= min && value <= max;
}

function copyIntervals(intervals: readonly TimeInterval[]): TimeInterval[] {
  return intervals.map(({ start, end }) => ({ start, end }));
}

/** Weekly hours and date overrides, as a schedule holds them (extensions.md "Event rules"): an availability without notice and window. */
export type Hours = Pick<Availability, "weeklyHours" | "dateOverrides">;
export type HoursInput = Pick<AvailabilityInput, "weeklyHours" | "dateOverrides">;

export type HoursCheck = { ok: true; value: Hours } | { ok: false; field: string; message: string };

/**
 * Checks weekly hours and date overrides and returns a normalised copy (every weekday present, overrides in the
 * order given). Stops at the first problem; `field` is the snake_case path the API shows, and the message starts
 * with it.
 */
export function validateHours(input: HoursInput): HoursCheck {
  const hours = input.weeklyHours ?? {};
  const weeklyHours = {} as Record<Weekday, TimeInterval[]>;
  for (const day of WEEKDAYS) {
    const intervals = hours[day] ?? [];
    const found = checkIntervals(`weekly_hours.${day}`, intervals);
    if (found) return { ok: false, ...found };
    weeklyHours[day] = copyIntervals(intervals);
  }

  const overrides = input.dateOverrides ?? [];
  if (overrides.length > DATE_OVERRIDES_MAX) {
    return { ok: false, field: "date_overrides", message: `date_overrides has more than ${DATE_OVERRIDES_MAX} entries` };
  }
  const seen = new Map<string, number>();
  const dateOverrides: DateOverride[] = [];
  for (let i = 0; i < overrides.length; i++) {
    const here = `date_overrides[${i}]`;
    const { date, intervals } = overrides[i];
    if (typeof date !== "string" || !isCalendarDate(date)) {
      return { ok: false, field: `${here}.date`, message: `${here}.date is not a valid date` };
    }
    if (!isDateInBounds(date)) return { ok: false, field: `${here}.date`, message: `${here}.date must be a date ${DATE_BOUNDS}` };
    const first = seen.get(date);
    if (first !== undefined) {
      return { ok: false, field: `${here}.date`, message: `${here}.date repeats date_overrides[${first}].date (${date})` };
    }
    seen.set(date, i);
    const list = intervals ?? [];
    const found = checkIntervals(`${here}.intervals`, list);
    if (found) return { ok: false, ...found };
    dateOverrides.push({ date, intervals: copyIntervals(list) });
  }
  return { ok: true, value: { weeklyHours, dateOverrides } };
}

/** Checks a whole availability object (`validateHours`, then notice and window) and returns a normalised copy. */
export function validateAvailability(input: AvailabilityInput): AvailabilityCheck {
  const hours = validateHours(input);
  if (!hours.ok) return hours;

  if (!isWholeNumberIn(input.minimumNoticeMinutes, 0, MINIMUM_NOTICE_MAX_MINUTES)) {
    return {
      ok: false,
      field: "minimum_notice_minutes",
      message: `minimum_notice_minutes must be a whole number from 0 to ${MINIMUM_NOTICE_MAX_MINUTES}`,
    };
  }
  if (!isWholeNumberIn(input.bookingWindowDays, BOOKING_WINDOW_MIN_DAYS, BOOKING_WINDOW_MAX_DAYS)) {
    return {
      ok: false,
      field: "booking_window_days",
      message: `booking_window_days must be a whole number from ${BOOKING_WINDOW_MIN_DAYS} to ${BOOKING_WINDOW_MAX_DAYS}`,
    };
  }

  return {
    ok: true,
    value: {
      ...hours.value,
      minimumNoticeMinutes: input.minimumNoticeMinutes,
      bookingWindowDays: input.bookingWindowDays,
    },
  };
}

/** The intervals that apply on one host-local date: its override when there is one, else its weekday's hours. */
export function intervalsOn(availability: Availability, date: string, weekday: Weekday): readonly TimeInterval[] {
  const override = availability.dateOverrides.find((o) => o.date === date);
  return override ? override.intervals : availability.weeklyHours[weekday];
}

/** The availability as the users collection and the API spell it (snake_case). */
export interface StoredAvailability {
  weekly_hours: Record<Weekday, TimeInterval[]>;
  date_overrides: Array<{ date: string; intervals: TimeInterval[] }>;
  minimum_notice_minutes: number;
  booking_window_days: number;
}

/** What a stored document may look like on the way back: days or lists never written come back absent. */
export interface StoredAvailabilityInput {
  weekly_hours?: Partial<Record<Weekday, readonly TimeInterval[] | null>> | null;
  date_overrides?: ReadonlyArray<{ date: string; intervals?: readonly TimeInterval[] | null }> | null;
  minimum_notice_minutes: number;
  booking_window_days: number;
}

/** Plain copies, so Mongoose subdocuments never leak into domain values or the other way round. */
export function toStoredAvailability(availability: Availability): StoredAvailability {
  return {
    ...toStoredHours(availability),
    minimum_notice_minutes: availability.minimumNoticeMinutes,
    booking_window_days: availability.bookingWindowDays,
  };
}

export function toStoredHours(hours: Hours): Pick<StoredAvailability, "weekly_hours" | "date_overrides"> {
  const weekly = {} as Record<Weekday, TimeInterval[]>;
  for (const day of WEEKDAYS) weekly[day] = copyIntervals(hours.weeklyHours[day]);
  return { weekly_hours: weekly, date_overrides: hours.dateOverrides.map((o) => ({ date: o.date, intervals: copyIntervals(o.intervals) })) };
}

export function fromStoredAvailability(stored: StoredAvailabilityInput): Availability {
  return { ...fromStoredHours(stored), minimumNoticeMinutes: stored.minimum_notice_minutes, bookingWindowDays: stored.booking_window_days };
}

/** Hours as the collections store them (users' availability, schedules), back to domain values. */
export function fromStoredHours(stored: Pick<StoredAvailabilityInput, "weekly_hours" | "date_overrides">): Hours {
  const hours = stored.weekly_hours ?? {};
  const weekly = {} as Record<Weekday, TimeInterval[]>;
  for (const day of WEEKDAYS) weekly[day] = copyIntervals(hours[day] ?? []);
  return {
    weeklyHours: weekly,
    dateOverrides: (stored.date_overrides ?? []).map((o) => ({ date: o.date, intervals: copyIntervals(o.intervals ?? []) })),
  };
}
