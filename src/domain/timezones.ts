// Service time-zone names (Rails ActiveSupport::TimeZone::MAPPING) and wall-clock <-> UTC arithmetic on IANA zones.

// Copied entry for entry, in order, from Rails main (activesupport/lib/active_support/values/time_zone.rb),
// because hosts migrating from the Rails app hold exactly these names; some targets are old IANA aliases
// ("Europe/Kiev", "Asia/Rangoon") kept as Rails has them, and ICU still resolves every one of them.
const MAPPING: ReadonlyArray<readonly [string, string]> = [
  ["International Date Line West", "Etc/GMT+12"],
  ["Midway Island", "Pacific/Midway"],
  ["American Samoa", "Pacific/Pago_Pago"],
  ["Hawaii", "Pacific/Honolulu"],
  ["Alaska", "America/Juneau"],
  ["Pacific Time (US & Canada)", "America/Los_Angeles"],
  ["Tijuana", "America/Tijuana"],
  ["Mountain Time (US & Canada)", "America/Denver"],
  ["Arizona", "America/Phoenix"],
  ["Chihuahua", "America/Chihuahua"],
  ["Mazatlan", "America/Mazatlan"],
  ["Central Time (US & Canada)", "America/Chicago"],
  ["Saskatchewan", "America/Regina"],
  ["Guadalajara", "America/Mexico_City"],
  ["Mexico City", "America/Mexico_City"],
  ["Monterrey", "America/Monterrey"],
  ["Central America", "America/Guatemala"],
  ["Eastern Time (US & Canada)", "America/New_York"],
  ["Indiana (East)", "America/Indiana/Indianapolis"],
  ["Bogota", "America/Bogota"],
  ["Lima", "America/Lima"],
  ["Quito", "America/Lima"],
  ["Atlantic Time (Canada)", "America/Halifax"],
  ["Caracas", "America/Caracas"],
  ["La Paz", "America/La_Paz"],
  ["Santiago", "America/Santiago"],
  ["Asuncion", "America/Asuncion"],
  ["Newfoundland", "America/St_Johns"],
  ["Brasilia", "America/Sao_Paulo"],
  ["Buenos Aires", "America/Argentina/Buenos_Aires"],
  ["Montevideo", "America/Montevideo"],
  ["Georgetown", "America/Guyana"],
  ["Puerto Rico", "America/Puerto_Rico"],
  ["Greenland", "America/Nuuk"],
  ["Mid-Atlantic", "Atlantic/South_Georgia"],
  ["Azores", "Atlantic/Azores"],
  ["Cape Verde Is.", "Atlantic/Cape_Verde"],
  ["Dublin", "Europe/Dublin"],
  ["Edinburgh", "Europe/London"],
  ["Lisbon", "Europe/Lisbon"],
  ["London", "Europe/London"],
  ["Casablanca", "Africa/Casablanca"],
  ["Monrovia", "Africa/Monrovia"],
  ["UTC", "Etc/UTC"],
  ["Belgrade", "Europe/Belgrade"],
  ["Bratislava", "Europe/Bratislava"],
  ["Budapest", "Europe/Budapest"],
  ["Ljubljana", "Europe/Ljubljana"],
  ["Prague", "Europe/Prague"],
  ["Sarajevo", "Europe/Sarajevo"],
  ["Skopje", "Europe/Skopje"],
  ["Warsaw", "Europe/Warsaw"],
  ["Zagreb", "Europe/Zagreb"],
  ["Brussels", "Europe/Brussels"],
  ["Copenhagen", "Europe/Copenhagen"],
  ["Madrid", "Europe/Madrid"],
  ["Paris", "Europe/Paris"],
  ["Amsterdam", "Europe/Amsterdam"],
  ["Berlin", "Europe/Berlin"],
  ["Bern", "Europe/Zurich"],
  ["Zurich", "Europe/Zurich"],
  ["Rome", "Europe/Rome"],
  ["Stockholm", "Europe/Stockholm"],
  ["Vienna", "Europe/Vienna"],
  ["West Central Africa", "Africa/Algiers"],
  ["Bucharest", "Europe/Bucharest"],
  ["Cairo", "Africa/Cairo"],
  ["Helsinki", "Europe/Helsinki"],
  ["Kyiv", "Europe/Kiev"],
  ["Riga", "Europe/Riga"],
  ["Sofia", "Europe/Sofia"],
  ["Tallinn", "Europe/Tallinn"],
  ["Vilnius", "Europe/Vilnius"],
  ["Athens", "Europe/Athens"],
  ["Istanbul", "Europe/Istanbul"],
  ["Minsk", "Europe/Minsk"],
  ["Jerusalem", "Asia/Jerusalem"],
  ["Harare", "Africa/Harare"],
  ["Pretoria", "Africa/Johannesburg"],
  ["Kaliningrad", "Europe/Kaliningrad"],
  ["Moscow", "Europe/Moscow"],
  ["St. Petersburg", "Europe/Moscow"],
  ["Volgograd", "Europe/Volgograd"],
  ["Samara", "Europe/Samara"],
  ["Kuwait", "Asia/Kuwait"],
  ["Riyadh", "Asia/Riyadh"],
  ["Nairobi", "Africa/Nairobi"],
  ["Baghdad", "Asia/Baghdad"],
  ["Tehran", "Asia/Tehran"],
  ["Abu Dhabi", "Asia/Muscat"],
  ["Muscat", "Asia/Muscat"],
  ["Baku", "Asia/Baku"],
  ["Tbilisi", "Asia/Tbilisi"],
  ["Yerevan", "Asia/Yerevan"],
  ["Kabul", "Asia/Kabul"],
  ["Ekaterinburg", "Asia/Yekaterinburg"],
  ["Islamabad", "Asia/Karachi"],
  ["Karachi", "Asia/Karachi"],
  ["Tashkent", "Asia/Tashkent"],
  ["Chennai", "Asia/Kolkata"],
  ["Kolkata", "Asia/Kolkata"],
  ["Mumbai", "Asia/Kolkata"],
  ["New Delhi", "Asia/Kolkata"],
  ["Kathmandu", "Asia/Kathmandu"],
  ["Dhaka", "Asia/Dhaka"],
  ["Sri Jayawardenepura", "Asia/Colombo"],
  ["Almaty", "Asia/Almaty"],
  ["Astana", "Asia/Almaty"],
  ["Novosibirsk", "Asia/Novosibirsk"],
  ["Rangoon", "Asia/Rangoon"],
  ["Bangkok", "Asia/Bangkok"],
  ["Hanoi", "Asia/Bangkok"],
  ["Jakarta", "Asia/Jakarta"],
  ["Krasnoyarsk", "Asia/Krasnoyarsk"],
  ["Beijing", "Asia/Shanghai"],
  ["Chongqing", "Asia/Chongqing"],
  ["Hong Kong", "Asia/Hong_Kong"],
  ["Urumqi", "Asia/Urumqi"],
  ["Kuala Lumpur", "Asia/Kuala_Lumpur"],
  ["Singapore", "Asia/Singapore"],
  ["Taipei", "Asia/Taipei"],
  ["Perth", "Australia/Perth"],
  ["Irkutsk", "Asia/Irkutsk"],
  ["Ulaanbaatar", "Asia/Ulaanbaatar"],
  ["Seoul", "Asia/Seoul"],
  ["Osaka", "Asia/Tokyo"],
  ["Sapporo", "Asia/Tokyo"],
  ["Tokyo", "Asia/Tokyo"],
  ["Yakutsk", "Asia/Yakutsk"],
  ["Darwin", "Australia/Darwin"],
  ["Adelaide", "Australia/Adelaide"],
  ["Canberra", "Australia/Canberra"],
  ["Melbourne", "Australia/Melbourne"],
  ["Sydney", "Australia/Sydney"],
  ["Brisbane", "Australia/Brisbane"],
  ["Hobart", "Australia/Hobart"],
  ["Vladivostok", "Asia/Vladivostok"],
  ["Guam", "Pacific/Guam"],
  ["Port Moresby", "Pacific/Port_Moresby"],
  ["Magadan", "Asia/Magadan"],
  ["Srednekolymsk", "Asia/Srednekolymsk"],
  ["Solomon Is.", "Pacific/Guadalcanal"],
  ["New Caledonia", "Pacific/Noumea"],
  ["Fiji", "Pacific/Fiji"],
  ["Kamchatka", "Asia/Kamchatka"],
  ["Marshall Is.", "Pacific/Majuro"],
  ["Auckland", "Pacific/Auckland"],
  ["Wellington", "Pacific/Auckland"],
  ["Nuku'alofa", "Pacific/Tongatapu"],
  ["Tokelau Is.", "Pacific/Fakaofo"],
  ["Chatham Is.", "Pacific/Chatham"],
  ["Samoa", "Pacific/Apia"],
];

// A Map rather than an object so names like "constructor" or "__proto__" can never match.
const SERVICE_TO_IANA: ReadonlyMap<string, string> = new Map(MAPPING);

export const SERVICE_TIME_ZONES: readonly string[] = Object.freeze(MAPPING.map(([name]) => name));

export function isServiceTimeZone(name: string): boolean {
  return SERVICE_TO_IANA.has(name);
}

export function ianaForServiceZone(name: string): string {
  const iana = SERVICE_TO_IANA.get(name);
  if (iana === undefined) throw new RangeError(`unknown service time zone: ${JSON.stringify(name)}`);
  return iana;
}

// Building a DateTimeFormat costs far more than using one, and every slot and display string needs one.
// The cap keeps arbitrary spellings from user input (Intl accepts any letter case) from growing it forever.
const FORMATTER_CACHE_LIMIT = 1024;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(iana: string): Intl.DateTimeFormat {
  let f = formatters.get(iana);
  if (f === undefined) {
    // en-US with h23 gives plain ASCII digits and hours 00..23 (never "24"), whatever the host locale.
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: iana,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    if (formatters.size >= FORMATTER_CACHE_LIMIT) formatters.clear();
    formatters.set(iana, f);
  }
  return f;
}

/**
 * The canonical IANA names the runtime knows, and UTC: what a 422 on an IANA zone lists and the OpenAPI document
 * gives as `enum`. isIanaTimeZone also takes the other spellings Intl reads (aliases such as "US/Eastern").
 */
export const IANA_TIME_ZONES: readonly string[] = Object.freeze(["UTC", ...Intl.supportedValuesOf("timeZone").filter((z) => z !== "UTC")]);

export function isIanaTimeZone(name: string): boolean {
  if (!name.includes("/") && name !== "UTC") return false;
  try {
    formatterFor(name);
    return true;
  } catch {
    return false;
  }
}

/** A wall-clock reading in some zone, to the second. */
export interface WallParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallPartsAt(iana: string, epochMs: number): WallParts {
  const out: WallParts = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const part of formatterFor(iana).formatToParts(epochMs)) {
    switch (part.type) {
      case "year":
      case "month":
      case "day":
      case "hour":
      case "minute":
      case "second":
        out[part.type] = Number(part.value);
        break;
      default:
        break;
    }
  }
  return out;
}

// Date.UTC maps years 0..99 onto 1900..1999; setUTCFullYear does not.
function utcEpochMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getTime();
}

function checkedEpochMs(at: Date): number {
  const ms = at.getTime();
  if (!Number.isFinite(ms)) throw new RangeError("invalid Date");
  return ms;
}

/*
 * Offsets by lookup. Intl is the only source of zone rules the service and the booking page share, but asking it for
 * one instant's wall clock costs about 8 µs, and a month of slots asks thousands of times. A zone's offset is
 * constant between its transitions, so the first time an instant of a UTC day is asked for, Intl is read at the
 * day's start and end (a neighbouring day already read lends its reading), and where the two differ the instant of
 * each change is found by halving to the second. Every instant of that day is then answered from the day's entry:
 * one offset for most days, the offset at the start and the changes for the few with a transition.
 *
 * What this relies on: no zone changes its offset and back within one day (a round trip between two readings would
 * not be seen). In the tz database the shortest such round trip lasts almost four days (Africa/Freetown, 1939);
 * test/unit/timezone-tables.test.ts compares every zone the runtime knows with Intl read per instant, at random
 * instants and around the transitions, gaps and folds of random years. Transitions and offsets are whole seconds in
 * the tz database, so an instant's offset is that of its second, as Intl (which has no milliseconds) gives it.
 */
const DAY_SPAN_MS = 86_400_000;
/** The instants a Date can hold: the days at the edges read Intl no further than these. */
const LAST_INSTANT = 8.64e15;
/** A day's entry costs a few dozen bytes: the cap keeps odd zones and years asked by users from growing the tables forever. */
const DAY_CACHE_LIMIT = 200_000;

/** A day with transitions: the offset (ms) at its start, the instants (ascending) at which it changes, and the offset from each. */
interface ChangeDay {
  first: number;
  at: number[];
  after: number[];
}

/** Per zone, per UTC day number: its offset in ms when it has one all day, else its changes. */
const daysByZone = new Map<string, Map<number, number | ChangeDay>>();
let dayCount = 0;

/** The zone's offset in ms at a whole second, as Intl gives it: its wall clock read as UTC, less the instant. */
function intlOffsetMs(iana: string, wholeSecond: number): number {
  const p = wallPartsAt(iana, wholeSecond);
  return utcEpochMs(p.year, p.month, p.day, p.hour, p.minute, p.second) - wholeSecond;
}

const firstOffset = (entry: number | ChangeDay): number => (typeof entry === "number" ? entry : entry.first);
const lastOffset = (entry: number | ChangeDay): number => (typeof entry === "number" ? entry : entry.after[entry.after.length - 1]);

function readDay(iana: string, days: Map<number, number | ChangeDay>, day: number): number | ChangeDay {
  const start = Math.max(-LAST_INSTANT, day * DAY_SPAN_MS);
  const end = Math.min(LAST_INSTANT, (day + 1) * DAY_SPAN_MS);
  const previous = days.get(day - 1);
  const next = days.get(day + 1);
  const first = previous === undefined ? intlOffsetMs(iana, start) : lastOffset(previous);
  const last = next === undefined ? intlOffsetMs(iana, end) : firstOffset(next);
  if (first === last) return first;
  const at: number[] = [];
  const after: number[] = [];
  let from = start;
  let offset = first;
  // One change or several within the day: find the first, then look on from it.
  while (offset !== last) {
    let same = from;
    let changed = end;
    let changedTo = last;
    while (changed - same > 1000) {
      const mid = same + Math.floor((changed - same) / 2000) * 1000;
      const o = intlOffsetMs(iana, mid);
      if (o === offset) same = mid;
      else [changed, changedTo] = [mid, o];
    }
    at.push(changed);
    after.push(changedTo);
    from = changed;
    offset = changedTo;
  }
  return { first, at, after };
}

/** The zone's offset at an instant in ms (wall clock = instant + offset); throws RangeError for a zone Intl does not know. */
function offsetMsAt(iana: string, epochMs: number): number {
  let days = daysByZone.get(iana);
  if (days === undefined) {
    formatterFor(iana);
    if (daysByZone.size >= FORMATTER_CACHE_LIMIT) {
      daysByZone.clear();
      dayCount = 0;
    }
    days = new Map();
    daysByZone.set(iana, days);
  }
  const day = Math.floor(epochMs / DAY_SPAN_MS);
  let entry = days.get(day);
  if (entry === undefined) {
    if (dayCount >= DAY_CACHE_LIMIT) {
      daysByZone.clear();
      daysByZone.set(iana, days);
      days.clear();
      dayCount = 0;
    }
    entry = readDay(iana, days, day);
    days.set(day, entry);
    dayCount++;
  }
  if (typeof entry === "number") return entry;
  let i = entry.at.length - 1;
  while (i >= 0 && entry.at[i] > epochMs) i--;
  return i < 0 ? entry.first : entry.after[i];
}

// The offset is exact, not rounded: zones before ~1900 used local mean time with odd seconds.
export function zoneOffsetMinutes(iana: string, at: Date): number {
  return offsetMsAt(iana, checkedEpochMs(at)) / 60_000;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME_RE = /^([01]\d|2[0-3]):([0-5]\d)$/;

function parseDate(date: string): { year: number; month: number; day: number } {
  const m = DATE_RE.exec(date);
  if (m === null) throw new RangeError(`date must be YYYY-MM-DD: ${JSON.stringify(date)}`);
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  // Round-tripping through a Date rejects 2026-02-30 instead of silently rolling it into March.
  if (formatIsoDate(utcEpochMs(year, month, day)) !== date) {
    throw new RangeError(`no such calendar date: ${JSON.stringify(date)}`);
  }
  return { year, month, day };
}

function parseTime(time: string): { hour: number; minute: number } {
  const m = TIME_RE.exec(time);
  if (m === null) throw new RangeError(`time must be HH:MM (00:00 to 23:59): ${JSON.stringify(time)}`);
  return { hour: Number(m[1]), minute: Number(m[2]) };
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

function formatIsoDate(epochMs: number): string {
  return isoDateOf(new Date(epochMs));
}

function isoDateOf(d: Date): string {
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
}

const DAY_MS = 86_400_000;

export function wallClockToUtc(iana: string, date: string, time: string): Date {
  const { year, month, day } = parseDate(date);
  const { hour, minute } = parseTime(time);
  const wallMs = utcEpochMs(year, month, day, hour, minute);
  // Offsets never exceed 14 h, so a day either side lands safely before and after any transition
  // that could affect this wall time; those two offsets are the only candidates.
  const offsetBefore = zoneOffsetMinutes(iana, new Date(wallMs - DAY_MS));
  const offsetAfter = zoneOffsetMinutes(iana, new Date(wallMs + DAY_MS));
  const fits = (offset: number): number | undefined => {
    const candidate = wallMs - offset * 60_000;
    return zoneOffsetMinutes(iana, new Date(candidate)) === offset ? candidate : undefined;
  };
  const early = fits(offsetBefore);
  const late = fits(offsetAfter);
  // Ambiguous (fall back): both readings exist; the earlier instant is the first time the clock shows it.
  if (early !== undefined && late !== undefined) return new Date(Math.min(early, late));
  if (early !== undefined) return new Date(early);
  if (late !== undefined) return new Date(late);
  // Nonexistent (spring forward): reading the time with the pre-transition offset lands after the jump,
  // at the wall time pushed forward by exactly the gap.
  return new Date(wallMs - offsetBefore * 60_000);
}

export interface WallClock {
  date: string;
  time: string;
  /** 0 = Sunday … 6 = Saturday */
  weekday: 0 | 1 | 2 | 3 | 4 | 5 | 6;
}

export function utcToWallClock(iana: string, at: Date): WallClock {
  const ms = checkedEpochMs(at);
  const wall = new Date(ms + offsetMsAt(iana, ms));
  return {
    date: isoDateOf(wall),
    time: `${pad(wall.getUTCHours(), 2)}:${pad(wall.getUTCMinutes(), 2)}`,
    weekday: wall.getUTCDay() as WallClock["weekday"],
  };
}

export function addDays(date: string, n: number): string {
  if (!Number.isInteger(n)) throw new RangeError(`days must be an integer: ${n}`);
  const { year, month, day } = parseDate(date);
  return formatIsoDate(utcEpochMs(year, month, day + n));
}
