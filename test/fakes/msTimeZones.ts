// Graph's side of time zones for the Microsoft fake: Windows zone names, and `dateTimeTimeZone` wall-clock strings to instants and back (arithmetic from zones.ts).
import { offsetMinutes, validZone, zonedToUtc } from "./zones.js";

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
  return WINDOWS_ZONES[name] ?? (name !== "" && validZone(name) ? name : undefined);
}

/** Graph writes wall-clock times with seven fractional digits and no offset: `2019-03-15T12:00:00.0000000`. */
export function graphDateTime(ms: number, zone: string): string {
  const local = new Date(ms + offsetMinutes(zone, ms) * 60_000).toISOString();
  return `${local.slice(0, 19)}.${local.slice(20, 23)}0000`;
}

const WALL = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2})(:\d{2})?(?:\.(\d{1,7}))?)?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * The instant a Graph wall-clock string means in a zone, or undefined when it is not a date-time. A value that
 * carries its own offset (`Z`, `+02:00`) is taken at that offset; a bare date means its midnight.
 */
export function instantOf(dateTime: string, zone: string): number | undefined {
  const m = WALL.exec(dateTime);
  if (!m) return undefined;
  const wall = `${m[1]}T${m[2] ?? "00:00"}${m[3] ?? ":00"}`;
  const fraction = Math.floor(Number(`0.${m[4] ?? "0"}`) * 1000);
  const asUtc = Date.parse(`${wall}Z`);
  // Date.parse rolls 2026-02-30 over into March; Graph refuses it.
  if (Number.isNaN(asUtc) || new Date(asUtc).toISOString().slice(0, 19) !== wall) return undefined;
  if (m[5] === "Z") return asUtc + fraction;
  if (m[5]) return Date.parse(`${wall}${m[5]}`) + fraction;
  return zonedToUtc(wall, zone) + fraction;
}
