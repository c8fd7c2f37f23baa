// Time zones of an iCalendar text: a TZID (IANA, a Windows name, or one defined by the text's own VTIMEZONE) as wall clock <-> UTC.
import ICAL from "ical.js";
import { isIanaTimeZone, utcToWallClock, wallClockToUtc, zoneOffsetMinutes, type WallParts } from "../timezones.js";

/** A wall-clock reading: what DTSTART says before a zone makes it an instant. */
export type Wall = WallParts;

export interface Zone {
  toUtc(w: Wall): number;
  wallOf(ms: number): Wall;
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

export function isoDate(w: Pick<Wall, "year" | "month" | "day">): string {
  return `${String(w.year).padStart(4, "0")}-${pad(w.month)}-${pad(w.day)}`;
}

export const UTC_ZONE: Zone = {
  toUtc: (w) => Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second),
  wallOf: (ms) => {
    const d = new Date(ms);
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
  },
};

const HOUR_MS = 3_600_000;

const ianaZones = new Map<string, Zone>();

/** An IANA zone through the runtime's tz database (Intl); one per name, shared by every text (it only remembers offsets). */
export function ianaZone(iana: string): Zone {
  let zone = ianaZones.get(iana);
  if (zone === undefined) {
    zone = makeIanaZone(iana);
    ianaZones.set(iana, zone);
  }
  return zone;
}

function makeIanaZone(iana: string): Zone {
  /*
   * Intl is the costly part of a feed (some 20 µs a reading). A wall day whose UTC offset is the same 15 hours before
   * it starts and 15 hours after it ends (every offset is within -12..+14 h, and no zone changes twice in two days)
   * has that offset all day: remembered per day, so a feed's many events on one day cost two readings. Days with a
   * change take the exact path (gap and overlap rules of wallClockToUtc).
   */
  const dayOffsets = new Map<number, number | null>();
  /** Readings on days with a change, by wall minute: a feed's many series meet the same few times of those days. */
  const changeDays = new Map<number, number>();
  const exact = (w: Wall) => {
    const key = ((w.year * 13 + w.month) * 32 + w.day) * 1440 + w.hour * 60 + w.minute;
    let ms = changeDays.get(key);
    if (ms === undefined) {
      ms = wallClockToUtc(iana, isoDate(w), `${pad(w.hour)}:${pad(w.minute)}`).getTime();
      if (changeDays.size < 20_000) changeDays.set(key, ms);
    }
    return ms + w.second * 1000;
  };
  return {
    toUtc: (w) => {
      const day = (w.year * 13 + w.month) * 32 + w.day;
      let offset = dayOffsets.get(day);
      if (offset === undefined) {
        const midnight = Date.UTC(w.year, w.month - 1, w.day);
        const before = zoneOffsetMinutes(iana, new Date(midnight - 15 * HOUR_MS));
        const after = zoneOffsetMinutes(iana, new Date(midnight + 39 * HOUR_MS));
        offset = before === after ? before : null;
        if (dayOffsets.size < 20_000) dayOffsets.set(day, offset);
      }
      if (offset === null) return exact(w);
      return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - offset * 60_000;
    },
    wallOf: (ms) => {
      const { date, time } = utcToWallClock(iana, new Date(ms));
      return {
        year: Number(date.slice(0, 4)),
        month: Number(date.slice(5, 7)),
        day: Number(date.slice(8, 10)),
        hour: Number(time.slice(0, 2)),
        minute: Number(time.slice(3, 5)),
        second: Math.floor((((ms / 1000) % 60) + 60) % 60),
      };
    },
  };
}

/** A zone defined by a VTIMEZONE, through ical.js (its STANDARD/DAYLIGHT rules). */
function vtimezoneZone(tz: ICAL.Timezone): Zone {
  return {
    toUtc: (w) => new ICAL.Time({ ...w, isDate: false }, tz).toUnixTime() * 1000,
    wallOf: (ms) => {
      const t = ICAL.Time.fromJSDate(new Date(ms), true).convertToZone(tz);
      return { year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute, second: t.second };
    },
  };
}

/*
 * Windows time-zone names (Outlook, Exchange) to IANA: CLDR's windowsZones.xml, territory "001" (the zone each name
 * stands for). Only used when the text has no VTIMEZONE of that name; Outlook normally sends one.
 */
const WINDOWS_ZONES: Record<string, string> = {
  "Dateline Standard Time": "Etc/GMT+12",
  "UTC-11": "Etc/GMT+11",
  "Aleutian Standard Time": "America/Adak",
  "Hawaiian Standard Time": "Pacific/Honolulu",
  "Marquesas Standard Time": "Pacific/Marquesas",
  "Alaskan Standard Time": "America/Anchorage",
  "UTC-09": "Etc/GMT+9",
  "Pacific Standard Time (Mexico)": "America/Tijuana",
  "UTC-08": "Etc/GMT+8",
  "Pacific Standard Time": "America/Los_Angeles",
  "US Mountain Standard Time": "America/Phoenix",
  "Mountain Standard Time (Mexico)": "America/Mazatlan",
  "Mountain Standard Time": "America/Denver",
  "Yukon Standard Time": "America/Whitehorse",
  "Central America Standard Time": "America/Guatemala",
  "Central Standard Time": "America/Chicago",
  "Easter Island Standard Time": "Pacific/Easter",
  "Central Standard Time (Mexico)": "America/Mexico_City",
  "Canada Central Standard Time": "America/Regina",
  "SA Pacific Standard Time": "America/Bogota",
  "Eastern Standard Time (Mexico)": "America/Cancun",
  "Eastern Standard Time": "America/New_York",
  "Haiti Standard Time": "America/Port-au-Prince",
  "Cuba Standard Time": "America/Havana",
  "US Eastern Standard Time": "America/Indiana/Indianapolis",
  "Turks And Caicos Standard Time": "America/Grand_Turk",
  "Paraguay Standard Time": "America/Asuncion",
  "Atlantic Standard Time": "America/Halifax",
  "Venezuela Standard Time": "America/Caracas",
  "Central Brazilian Standard Time": "America/Cuiaba",
  "SA Western Standard Time": "America/La_Paz",
  "Pacific SA Standard Time": "America/Santiago",
  "Newfoundland Standard Time": "America/St_Johns",
  "Tocantins Standard Time": "America/Araguaina",
  "E. South America Standard Time": "America/Sao_Paulo",
  "SA Eastern Standard Time": "America/Cayenne",
  "Argentina Standard Time": "America/Argentina/Buenos_Aires",
  "Greenland Standard Time": "America/Nuuk",
  "Montevideo Standard Time": "America/Montevideo",
  "Magallanes Standard Time": "America/Punta_Arenas",
  "Saint Pierre Standard Time": "America/Miquelon",
  "Bahia Standard Time": "America/Bahia",
  "UTC-02": "Etc/GMT+2",
  "Azores Standard Time": "Atlantic/Azores",
  "Cape Verde Standard Time": "Atlantic/Cape_Verde",
  UTC: "Etc/UTC",
  "GMT Standard Time": "Europe/London",
  "Greenwich Standard Time": "Atlantic/Reykjavik",
  "Sao Tome Standard Time": "Africa/Sao_Tome",
  "Morocco Standard Time": "Africa/Casablanca",
  "W. Europe Standard Time": "Europe/Berlin",
  "Central Europe Standard Time": "Europe/Budapest",
  "Romance Standard Time": "Europe/Paris",
  "Central European Standard Time": "Europe/Warsaw",
  "W. Central Africa Standard Time": "Africa/Lagos",
  "Jordan Standard Time": "Asia/Amman",
  "GTB Standard Time": "Europe/Bucharest",
  "Middle East Standard Time": "Asia/Beirut",
  "Egypt Standard Time": "Africa/Cairo",
  "E. Europe Standard Time": "Europe/Chisinau",
  "Syria Standard Time": "Asia/Damascus",
  "West Bank Standard Time": "Asia/Hebron",
  "South Africa Standard Time": "Africa/Johannesburg",
  "FLE Standard Time": "Europe/Kiev",
  "Israel Standard Time": "Asia/Jerusalem",
  "South Sudan Standard Time": "Africa/Juba",
  "Kaliningrad Standard Time": "Europe/Kaliningrad",
  "Sudan Standard Time": "Africa/Khartoum",
  "Libya Standard Time": "Africa/Tripoli",
  "Namibia Standard Time": "Africa/Windhoek",
  "Arabic Standard Time": "Asia/Baghdad",
  "Turkey Standard Time": "Europe/Istanbul",
  "Arab Standard Time": "Asia/Riyadh",
  "Belarus Standard Time": "Europe/Minsk",
  "Russian Standard Time": "Europe/Moscow",
  "E. Africa Standard Time": "Africa/Nairobi",
  "Volgograd Standard Time": "Europe/Volgograd",
  "Iran Standard Time": "Asia/Tehran",
  "Arabian Standard Time": "Asia/Dubai",
  "Astrakhan Standard Time": "Europe/Astrakhan",
  "Azerbaijan Standard Time": "Asia/Baku",
  "Russia Time Zone 3": "Europe/Samara",
  "Mauritius Standard Time": "Indian/Mauritius",
  "Saratov Standard Time": "Europe/Saratov",
  "Georgian Standard Time": "Asia/Tbilisi",
  "Caucasus Standard Time": "Asia/Yerevan",
  "Afghanistan Standard Time": "Asia/Kabul",
  "West Asia Standard Time": "Asia/Tashkent",
  "Ekaterinburg Standard Time": "Asia/Yekaterinburg",
  "Pakistan Standard Time": "Asia/Karachi",
  "Qyzylorda Standard Time": "Asia/Qyzylorda",
  "India Standard Time": "Asia/Kolkata",
  "Sri Lanka Standard Time": "Asia/Colombo",
  "Nepal Standard Time": "Asia/Kathmandu",
  "Central Asia Standard Time": "Asia/Almaty",
  "Bangladesh Standard Time": "Asia/Dhaka",
  "Omsk Standard Time": "Asia/Omsk",
  "Myanmar Standard Time": "Asia/Yangon",
  "SE Asia Standard Time": "Asia/Bangkok",
  "Altai Standard Time": "Asia/Barnaul",
  "W. Mongolia Standard Time": "Asia/Hovd",
  "North Asia Standard Time": "Asia/Krasnoyarsk",
  "N. Central Asia Standard Time": "Asia/Novosibirsk",
  "Tomsk Standard Time": "Asia/Tomsk",
  "China Standard Time": "Asia/Shanghai",
  "North Asia East Standard Time": "Asia/Irkutsk",
  "Singapore Standard Time": "Asia/Singapore",
  "W. Australia Standard Time": "Australia/Perth",
  "Taipei Standard Time": "Asia/Taipei",
  "Ulaanbaatar Standard Time": "Asia/Ulaanbaatar",
  "Aus Central W. Standard Time": "Australia/Eucla",
  "Transbaikal Standard Time": "Asia/Chita",
  "Tokyo Standard Time": "Asia/Tokyo",
  "North Korea Standard Time": "Asia/Pyongyang",
  "Korea Standard Time": "Asia/Seoul",
  "Yakutsk Standard Time": "Asia/Yakutsk",
  "Cen. Australia Standard Time": "Australia/Adelaide",
  "AUS Central Standard Time": "Australia/Darwin",
  "E. Australia Standard Time": "Australia/Brisbane",
  "AUS Eastern Standard Time": "Australia/Sydney",
  "West Pacific Standard Time": "Pacific/Port_Moresby",
  "Tasmania Standard Time": "Australia/Hobart",
  "Vladivostok Standard Time": "Asia/Vladivostok",
  "Lord Howe Standard Time": "Australia/Lord_Howe",
  "Bougainville Standard Time": "Pacific/Bougainville",
  "Russia Time Zone 10": "Asia/Srednekolymsk",
  "Magadan Standard Time": "Asia/Magadan",
  "Norfolk Standard Time": "Pacific/Norfolk",
  "Sakhalin Standard Time": "Asia/Sakhalin",
  "Central Pacific Standard Time": "Pacific/Guadalcanal",
  "Russia Time Zone 11": "Asia/Kamchatka",
  "New Zealand Standard Time": "Pacific/Auckland",
  "UTC+12": "Etc/GMT-12",
  "Fiji Standard Time": "Pacific/Fiji",
  "Chatham Islands Standard Time": "Pacific/Chatham",
  "UTC+13": "Etc/GMT-13",
  "Tonga Standard Time": "Pacific/Tongatapu",
  "Samoa Standard Time": "Pacific/Apia",
  "Line Islands Standard Time": "Pacific/Kiritimati",
};

const WINDOWS_BY_LOWER = new Map(Object.entries(WINDOWS_ZONES).map(([k, v]) => [k.toLowerCase(), v]));

/** The IANA zone of a Windows name (CLDR), or null. */
export function windowsZoneToIana(name: string): string | null {
  return WINDOWS_BY_LOWER.get(name.trim().toLowerCase()) ?? null;
}

/** An IANA name in a TZID: itself, or the tail of a prefixed one ("/mozilla.org/20050126_1/Europe/Berlin", "/citadel.org/.../Europe/Berlin"). */
function ianaIn(tzid: string): string | null {
  const name = tzid.trim();
  if (/^(utc|gmt|z|etc\/utc|etc\/gmt)$/i.test(name)) return "UTC";
  if (isIanaTimeZone(name)) return name;
  const parts = name.split("/").filter((p) => p !== "");
  for (let i = 1; i < parts.length - 1; i++) {
    const tail = parts.slice(i).join("/");
    if (isIanaTimeZone(tail)) return tail;
  }
  return null;
}

/** Where a resolver finds a text's zones: the zone of its floating times (X-WR-TIMEZONE) and its VTIMEZONEs by TZID. */
export interface ZoneSource {
  floatingTzid: string | null;
  /** The VTIMEZONE of this TZID, parsed when first asked for; null when the text has none (or one that cannot be read). */
  definition(tzid: string): ICAL.Component | null;
}

/** A VTIMEZONE's parts repeat once a year (or are listed by RDATE); any other rule is not a zone's and is not expanded. */
function plausible(component: ICAL.Component): boolean {
  const parts = [...component.getAllSubcomponents("standard"), ...component.getAllSubcomponents("daylight")];
  if (parts.length === 0) return false;
  return parts.every((part) =>
    part.getAllProperties("rrule").every((p) => {
      const rule = p.getFirstValue();
      return rule instanceof ICAL.Recur && rule.freq === "YEARLY";
    }),
  );
}

/*
 * Which definition of a TZID wins. An IANA name is read from the runtime's tz database even when the text carries a
 * VTIMEZONE for it: exporters (Google, Apple, Outlook) write the same rules, often cut down to the current ones, and
 * the database also knows rule changes made after the file was written. Any other name (Outlook's "W. Europe
 * Standard Time", a custom zone) is read from the text's VTIMEZONE; without one, a Windows name through CLDR's table;
 * an unknown name without a VTIMEZONE is read in the calendar's zone (X-WR-TIMEZONE, else the host's), as a
 * floating time would be, rather than failing the whole calendar. A VTIMEZONE is only parsed when an event names it.
 */
export class ZoneResolver {
  private readonly cache = new Map<string, Zone>();
  /** The zone floating times are read in: X-WR-TIMEZONE (Google, Apple write it) when known, else the host's. */
  readonly floating: Zone;

  constructor(
    private readonly source: ZoneSource,
    hostZone: string,
  ) {
    const host = ianaZone(hostZone);
    const wr = source.floatingTzid?.trim() ?? "";
    this.floating = wr === "" ? host : (this.known(wr) ?? host);
  }

  /** The zone of a TZID parameter; null for no TZID (a floating time). */
  zone(tzid: string | null): Zone {
    if (tzid === null) return this.floating;
    let z = this.cache.get(tzid);
    if (z === undefined) {
      z = this.known(tzid) ?? this.floating;
      this.cache.set(tzid, z);
    }
    return z;
  }

  private known(tzid: string): Zone | null {
    const iana = ianaIn(tzid);
    if (iana === "UTC") return UTC_ZONE;
    if (iana !== null) return ianaZone(iana);
    const component = this.source.definition(tzid);
    if (component !== null && plausible(component)) {
      const zone = vtimezoneZone(new ICAL.Timezone({ component, tzid }));
      try {
        zone.toUtc({ year: 2000, month: 1, day: 1, hour: 0, minute: 0, second: 0 });
        return zone;
      } catch {
        // A VTIMEZONE ical.js cannot read: the Windows table or the calendar's zone instead.
      }
    }
    const windows = windowsZoneToIana(tzid);
    return windows === null ? null : ianaZone(windows);
  }
}
