// Display strings the API returns (dates, times, ranges, durations, relative ages, initials) in the host's zone and formats.
import { utcToWallClock } from "./timezones.js";

// Each value is itself the pattern: the example date 31 Dec written the way the host wants dates written.
export const DATE_FORMATS = ["31/12/2024", "12/31/2024", "2023-12-31", "31.12.2024", "2024/12/31", "31-12-2024"] as const;
export type DateFormat = (typeof DATE_FORMATS)[number];

export const TIME_FORMATS = ["12_hours", "24_hours"] as const;
export type TimeFormat = (typeof TIME_FORMATS)[number];

export function isDateFormat(value: string): value is DateFormat {
  return (DATE_FORMATS as readonly string[]).includes(value);
}

export function isTimeFormat(value: string): value is TimeFormat {
  return (TIME_FORMATS as readonly string[]).includes(value);
}

const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
] as const;

function splitIsoDate(isoDate: string): { yyyy: string; mm: string; dd: string } {
  const [yyyy, mm, dd] = isoDate.split("-");
  return { yyyy, mm, dd };
}

// Formats arrive as stored strings, so an unknown one is a data fault worth failing loudly on, not a blank.
function writeDate(isoDate: string, dateFormat: string): string {
  const { yyyy, mm, dd } = splitIsoDate(isoDate);
  switch (dateFormat) {
    case "31/12/2024":
      return `${dd}/${mm}/${yyyy}`;
    case "12/31/2024":
      return `${mm}/${dd}/${yyyy}`;
    case "2023-12-31":
      return `${yyyy}-${mm}-${dd}`;
    case "31.12.2024":
      return `${dd}.${mm}.${yyyy}`;
    case "2024/12/31":
      return `${yyyy}/${mm}/${dd}`;
    case "31-12-2024":
      return `${dd}-${mm}-${yyyy}`;
    default:
      throw new RangeError(`unknown date_format: ${JSON.stringify(dateFormat)}`);
  }
}

function writeTime(hhmm: string, timeFormat: string): string {
  switch (timeFormat) {
    case "24_hours":
      return hhmm;
    case "12_hours": {
      const hour = Number(hhmm.slice(0, 2));
      const hour12 = hour % 12 === 0 ? 12 : hour % 12;
      return `${String(hour12).padStart(2, "0")}:${hhmm.slice(3, 5)} ${hour < 12 ? "AM" : "PM"}`;
    }
    default:
      throw new RangeError(`unknown time_format: ${JSON.stringify(timeFormat)}`);
  }
}

export function formatDate(at: Date, zone: string, dateFormat: string): string {
  return writeDate(utcToWallClock(zone, at).date, dateFormat);
}

export function formatTime(at: Date, zone: string, timeFormat: string): string {
  return writeTime(utcToWallClock(zone, at).time, timeFormat);
}

// Day zero-padded like every other date the API writes ("%d %B %Y").
export function formatLongDate(at: Date, zone: string): string {
  const { yyyy, mm, dd } = splitIsoDate(utcToWallClock(zone, at).date);
  return `${dd} ${MONTH_NAMES[Number(mm) - 1]} ${yyyy}`;
}

export function formatDateTimeForHost(at: Date, zone: string, dateFormat: string, timeFormat: string): string {
  const wall = utcToWallClock(zone, at);
  return `${writeDate(wall.date, dateFormat)} ${writeTime(wall.time, timeFormat)}`;
}

export function formatBookingRange(start: Date, end: Date, zone: string, dateFormat: string, timeFormat: string): string {
  const from = utcToWallClock(zone, start);
  const to = utcToWallClock(zone, end);
  const head = `${writeDate(from.date, dateFormat)} ${writeTime(from.time, timeFormat)}`;
  const endDate = to.date === from.date ? "" : `${writeDate(to.date, dateFormat)} `;
  return `${head} - ${endDate}${writeTime(to.time, timeFormat)}`;
}

function plural(count: number, unit: string): string {
  return `${count} ${unit}${count === 1 ? "" : "s"}`;
}

export function formatDurationMinutes(min: number): string {
  if (!Number.isInteger(min) || min < 0) throw new RangeError(`duration must be a whole number of minutes >= 0: ${min}`);
  const hours = Math.floor(min / 60);
  const minutes = min % 60;
  if (hours === 0) return plural(minutes, "minute");
  if (minutes === 0) return plural(hours, "hour");
  return `${plural(hours, "hour")} ${plural(minutes, "minute")}`;
}

const MINUTES_IN_YEAR = 525_600;
const MINUTES_IN_QUARTER_YEAR = 131_400;
const MINUTES_IN_THREE_QUARTERS_YEAR = 394_200;

function leapDaysThrough(year: number): number {
  return Math.floor(year / 4) - Math.floor(year / 100) + Math.floor(year / 400);
}

// Port of ActionView distance_of_time_in_words (include_seconds: false, English locale), thresholds unchanged,
// so hosts moving from the Rails app read the same words. Calendar fields are read in UTC.
function distanceOfTimeInWords(a: Date, b: Date): string {
  const aMs = a.getTime();
  const bMs = b.getTime();
  if (!Number.isFinite(aMs) || !Number.isFinite(bMs)) throw new RangeError("invalid Date");
  const [from, to] = aMs <= bMs ? [a, b] : [b, a];
  const minutes = Math.round((to.getTime() - from.getTime()) / 60_000);

  if (minutes === 0) return "less than a minute";
  if (minutes < 45) return plural(minutes, "minute");
  if (minutes < 90) return "about 1 hour";
  if (minutes < 1440) return `about ${plural(Math.round(minutes / 60), "hour")}`;
  if (minutes < 2520) return "1 day";
  if (minutes < 43_200) return plural(Math.round(minutes / 1440), "day");
  if (minutes < 86_400) return `about ${plural(Math.round(minutes / 43_200), "month")}`;
  if (minutes < MINUTES_IN_YEAR) return plural(Math.round(minutes / 43_200), "month");

  // Rails discounts the 29 Februaries in between so exact anniversaries read "about N years", not "over".
  let fromYear = from.getUTCFullYear();
  if (from.getUTCMonth() + 1 >= 3) fromYear += 1;
  let toYear = to.getUTCFullYear();
  if (to.getUTCMonth() + 1 < 3) toYear -= 1;
  const leapYears = fromYear > toYear ? 0 : leapDaysThrough(toYear) - leapDaysThrough(fromYear - 1);
  const withOffset = minutes - leapYears * 1440;
  const remainder = withOffset % MINUTES_IN_YEAR;
  const years = Math.floor(withOffset / MINUTES_IN_YEAR);
  if (remainder < MINUTES_IN_QUARTER_YEAR) return `about ${plural(years, "year")}`;
  if (remainder < MINUTES_IN_THREE_QUARTERS_YEAR) return `over ${plural(years, "year")}`;
  return `almost ${plural(years + 1, "year")}`;
}

// Like Rails, the distance is symmetric: a time in the future also reads "... ago".
export function timeAgo(then: Date, now: Date): string {
  return `${distanceOfTimeInWords(then, now)} ago`;
}

export function avatarName(fullName: string): string {
  const words = fullName.trim().split(/\s+/u).filter((w) => w !== "");
  if (words.length === 0) return "";
  // Code points, not UTF-16 units, so a name starting with an astral character keeps it whole;
  // only the first code point of the upper-cased letter, because "ß" upper-cases to "SS".
  const initial = (word: string): string => Array.from(Array.from(word)[0].toUpperCase())[0];
  const first = initial(words[0]);
  return words.length === 1 ? first : first + initial(words[words.length - 1]);
}
