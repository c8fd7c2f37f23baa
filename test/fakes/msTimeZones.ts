// Time-zone arithmetic of the Microsoft Graph fake: Windows or IANA zone names, Graph's `dateTimeTimeZone` wall-clock strings to instants and back.

/**
 * Graph accepts Windows zone names and IANA names in `dateTimeTimeZone.timeZone` and in
 * `Prefer: outlook.timezone` (learn.microsoft.com/graph/api/resources/datetimetimezone). These are the Windows
 * names a test is likely to meet, mapped to IANA as CLDR's windowsZones.xml does (its "001" territory).
 */
const WINDOWS_ZONES: Record<string, string> = {
  UTC: "UTC",
  "Coordinated Universal Time": "UTC",
  "GMT Standard Time": "Europe/London",
  "Greenwich Standard Time": "Atlantic/Reykjavik",
  "W. Europe Standard Time": "Europe/Berlin",
  "Central Europe Standard Time": "Europe/Budapest",
  "Central European Standard Time": "Europe/Warsaw",
  "Romance Standard Time": "Europe/Paris",
  "E. Europe Standard Time": "Europe/Chisinau",
  "FLE Standard Time": "Europe/Kiev",
  "Russian Standard Time": "Europe/Moscow",
  "India Standard Time": "Asia/Calcutta",
  "China Standard Time": "Asia/Shanghai",
  "Tokyo Standard Time": "Asia/Tokyo",
  "AUS Eastern Standard Time": "Australia/Sydney",
  "New Zealand Standard Time": "Pacific/Auckland",
  "Eastern Standard Time": "America/New_York",
  "Central Standard Time": "America/Chicago",
  "Mountain Standard Time": "America/Denver",
  "US Mountain Standard Time": "America/Phoenix",
  "Pacific Standard Time": "America/Los_Angeles",
  "Alaskan Standard Time": "America/Anchorage",
  "Hawaiian Standard Time": "Pacific/Honolulu",
  "E. South America Standard Time": "America/Sao_Paulo",
};

/** The IANA zone a Graph zone name stands for, or undefined when Graph would answer TimeZoneNotSupportedException. */
export function ianaZone(name: string): string | undefined {
  const windows = WINDOWS_ZONES[name];
  if (windows) return windows;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return name;
  } catch {
    return undefined;
  }
}

/** Wall-clock fields of an instant in a zone. */
function wallClock(ms: number, zone: string): { y: number; mo: number; d: number; h: number; mi: number; s: number } {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(new Date(ms));
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value);
  return { y: get("year"), mo: get("month"), d: get("day"), h: get("hour"), mi: get("minute"), s: get("second") };
}

const pad = (n: number, width = 2): string => String(n).padStart(width, "0");

/** Graph writes wall-clock times with seven fractional digits and no offset: `2019-03-15T12:00:00.0000000`. */
export function graphDateTime(ms: number, zone: string): string {
  const w = wallClock(ms, zone);
  const fraction = pad(((ms % 1000) + 1000) % 1000, 3) + "0000";
  return `${pad(w.y, 4)}-${pad(w.mo)}-${pad(w.d)}T${pad(w.h)}:${pad(w.mi)}:${pad(w.s)}.${fraction}`;
}

const WALL = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?)?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * The instant a Graph wall-clock string means in a zone, or undefined when it is not a date-time. A value
 * carrying its own offset (`Z`, `+02:00`) is taken at that offset. A wall-clock time that a DST change skips or
 * repeats resolves to the earlier instant, as Exchange does for ambiguous local times.
 */
export function instantOf(dateTime: string, zone: string): number | undefined {
  const m = WALL.exec(dateTime);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4] ?? "0", m[5] ?? "0", m[6] ?? "0"].map(Number);
  const ms = Math.floor(Number(`0.${m[7] ?? "0"}`) * 1000);
  const asUtc = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  if (Number.isNaN(asUtc) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return undefined;
  if (m[8] === "Z") return asUtc;
  if (m[8]) {
    const sign = m[8].startsWith("-") ? -1 : 1;
    return asUtc - sign * (Number(m[8].slice(1, 3)) * 60 + Number(m[8].slice(4, 6))) * 60_000;
  }
  // Two passes of "guess, see what wall clock the guess shows, correct by the difference" settle every offset.
  let guess = asUtc;
  for (let i = 0; i < 2; i++) {
    const w = wallClock(guess, zone);
    const shown = Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi, w.s, ms);
    guess += asUtc - shown;
  }
  const earlier = guess - 3_600_000;
  const w = wallClock(earlier, zone);
  return Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi, w.s, ms) === asUtc ? earlier : guess;
}
