// Time-zone names in both vocabularies (the seed's service names and IANA names) read into each other, and what a zone's region writes by default (CLDR, as Intl has it).
import { notAllowed } from "./errors.js";
import type { DateFormat, TimeFormat } from "./format.js";
import { IANA_TIME_ZONES, ianaForServiceZone, isIanaTimeZone, isServiceTimeZone, SERVICE_TIME_ZONES } from "./timezones.js";

/** Both vocabularies, as a 422 on a field that takes either lists them (IANA first, then the service names). */
export const ANY_TIME_ZONES: readonly string[] = Object.freeze([...IANA_TIME_ZONES, ...SERVICE_TIME_ZONES.filter((z) => !IANA_TIME_ZONES.includes(z))]);

/** Aliases asked for so far, with the canonical name Intl gave them; Intl also reads other spellings ("europe/kiev"), so it is capped. */
const canonicalOfAlias = new Map<string, string>();
const MAX_ALIASES_KEPT = 2000;
const CANONICAL_NAMES: ReadonlySet<string> = new Set(IANA_TIME_ZONES);

/**
 * Intl's one name of a zone: aliases ("Europe/Kyiv" and "Europe/Kiev", "Asia/Kolkata" and "Asia/Calcutta") read the
 * same. The names Intl lists (IANA_TIME_ZONES, Intl.supportedValuesOf) are its canonical ones already; only an alias
 * costs an Intl.DateTimeFormat (a third of a millisecond of CPU each: asked of all ~570 names at start, ~2 s on a
 * loaded machine), once.
 */
function canonical(iana: string): string {
  if (CANONICAL_NAMES.has(iana)) return iana;
  let name = canonicalOfAlias.get(iana);
  if (name === undefined) {
    name = new Intl.DateTimeFormat("en-US", { timeZone: iana }).resolvedOptions().timeZone;
    if (canonicalOfAlias.size < MAX_ALIASES_KEPT) canonicalOfAlias.set(iana, name);
  }
  return name;
}

/**
 * Service names by the canonical IANA zone they stand for. Where several do ("Edinburgh" and "London" are both
 * Europe/London), the one that is the IANA name's own city comes first, then the seed's order.
 */
const SERVICE_NAMES_BY_ZONE: ReadonlyMap<string, readonly string[]> = (() => {
  const byZone = new Map<string, string[]>();
  for (const name of SERVICE_TIME_ZONES) {
    const zone = canonical(ianaForServiceZone(name));
    byZone.set(zone, [...(byZone.get(zone) ?? []), name]);
  }
  // The city of the seed's own spelling: Intl's canonical name may be an older one ("Asia/Calcutta").
  const isOwnCity = (name: string) => {
    const iana = ianaForServiceZone(name);
    return iana.slice(iana.lastIndexOf("/") + 1).replaceAll("_", " ") === name;
  };
  for (const [zone, names] of byZone) byZone.set(zone, [...names.filter(isOwnCity), ...names.filter((n) => !isOwnCity(n))]);
  return byZone;
})();

/** What an account's zone may be: the service names, then the IANA names one of them stands for. */
export const ACCOUNT_TIME_ZONES: readonly string[] = Object.freeze([
  ...SERVICE_TIME_ZONES,
  ...IANA_TIME_ZONES.filter((z) => !isServiceTimeZone(z) && SERVICE_NAMES_BY_ZONE.has(canonical(z))),
]);

/** The service name an IANA zone stands for (`Europe/Berlin`: `Berlin`, `Asia/Calcutta`: `Kolkata`), or undefined (a name that is no IANA zone, or one no service name stands for). */
export function serviceZoneNameOf(iana: string): string | undefined {
  return isIanaTimeZone(iana) ? SERVICE_NAMES_BY_ZONE.get(canonical(iana))?.[0] : undefined;
}

/**
 * The service name of a zone given in either vocabulary (extensions.md "Accounts": `Europe/Berlin` is stored as
 * `Berlin`). A name that is neither, or an IANA zone no service name stands for, is 422 listing the names taken.
 */
export function serviceZoneOf(field: string, name: string): string {
  if (isServiceTimeZone(name)) return name;
  const named = serviceZoneNameOf(name);
  if (named !== undefined) return named;
  const why = isIanaTimeZone(name) ? `${field} ${name} has no service time-zone name; use one of the listed names` : `${field} is not included in the list`;
  throw notAllowed(field, ACCOUNT_TIME_ZONES, why, name);
}

/** The IANA zone of a name in either vocabulary (the slots' and bookings' `timezone`); else 422 listing both. */
export function ianaZoneOf(field: string, name: string): string {
  if (isServiceTimeZone(name)) return ianaForServiceZone(name);
  if (isIanaTimeZone(name)) return name;
  throw notAllowed(field, ANY_TIME_ZONES, `${field} is not a valid time zone (an IANA name such as Europe/Berlin, or a service name such as Berlin)`, name);
}

/**
 * The country of each zone the service names stand for (ISO 3166 codes, from the tz database's zone.tab); the
 * two that are no country's (UTC, Etc/GMT+12) are not here. Keyed by the seed's own IANA spelling.
 */
const ZONE_REGIONS: ReadonlyMap<string, string> = new Map(
  Object.entries({
    US: "Pacific/Honolulu America/Juneau America/Los_Angeles America/Denver America/Phoenix America/Chicago America/New_York America/Indiana/Indianapolis",
    UM: "Pacific/Midway", AS: "Pacific/Pago_Pago", MX: "America/Tijuana America/Chihuahua America/Mazatlan America/Mexico_City America/Monterrey",
    CA: "America/Regina America/Halifax America/St_Johns", GT: "America/Guatemala", CO: "America/Bogota", PE: "America/Lima", VE: "America/Caracas",
    BO: "America/La_Paz", CL: "America/Santiago", PY: "America/Asuncion", BR: "America/Sao_Paulo", AR: "America/Argentina/Buenos_Aires",
    UY: "America/Montevideo", GY: "America/Guyana", PR: "America/Puerto_Rico", GL: "America/Nuuk", GS: "Atlantic/South_Georgia",
    PT: "Atlantic/Azores Europe/Lisbon", CV: "Atlantic/Cape_Verde", IE: "Europe/Dublin", GB: "Europe/London", MA: "Africa/Casablanca",
    LR: "Africa/Monrovia", RS: "Europe/Belgrade", SK: "Europe/Bratislava", HU: "Europe/Budapest", SI: "Europe/Ljubljana", CZ: "Europe/Prague",
    BA: "Europe/Sarajevo", MK: "Europe/Skopje", PL: "Europe/Warsaw", HR: "Europe/Zagreb", BE: "Europe/Brussels", DK: "Europe/Copenhagen",
    ES: "Europe/Madrid", FR: "Europe/Paris", NL: "Europe/Amsterdam", DE: "Europe/Berlin", CH: "Europe/Zurich", IT: "Europe/Rome",
    SE: "Europe/Stockholm", AT: "Europe/Vienna", DZ: "Africa/Algiers", RO: "Europe/Bucharest", EG: "Africa/Cairo", FI: "Europe/Helsinki",
    UA: "Europe/Kiev", LV: "Europe/Riga", BG: "Europe/Sofia", EE: "Europe/Tallinn", LT: "Europe/Vilnius", GR: "Europe/Athens", TR: "Europe/Istanbul",
    BY: "Europe/Minsk", IL: "Asia/Jerusalem", ZW: "Africa/Harare", ZA: "Africa/Johannesburg",
    RU: "Europe/Kaliningrad Europe/Moscow Europe/Volgograd Europe/Samara Asia/Yekaterinburg Asia/Novosibirsk Asia/Krasnoyarsk Asia/Irkutsk Asia/Yakutsk Asia/Vladivostok Asia/Magadan Asia/Srednekolymsk Asia/Kamchatka",
    KW: "Asia/Kuwait", SA: "Asia/Riyadh", KE: "Africa/Nairobi", IQ: "Asia/Baghdad", IR: "Asia/Tehran", OM: "Asia/Muscat", AZ: "Asia/Baku",
    GE: "Asia/Tbilisi", AM: "Asia/Yerevan", AF: "Asia/Kabul", PK: "Asia/Karachi", UZ: "Asia/Tashkent", IN: "Asia/Kolkata", NP: "Asia/Kathmandu",
    BD: "Asia/Dhaka", LK: "Asia/Colombo", KZ: "Asia/Almaty", MM: "Asia/Rangoon", TH: "Asia/Bangkok", ID: "Asia/Jakarta",
    CN: "Asia/Shanghai Asia/Chongqing Asia/Urumqi", HK: "Asia/Hong_Kong", MY: "Asia/Kuala_Lumpur", SG: "Asia/Singapore", TW: "Asia/Taipei",
    AU: "Australia/Perth Australia/Darwin Australia/Adelaide Australia/Canberra Australia/Melbourne Australia/Sydney Australia/Brisbane Australia/Hobart",
    MN: "Asia/Ulaanbaatar", KR: "Asia/Seoul", JP: "Asia/Tokyo", GU: "Pacific/Guam", PG: "Pacific/Port_Moresby", SB: "Pacific/Guadalcanal",
    NC: "Pacific/Noumea", FJ: "Pacific/Fiji", MH: "Pacific/Majuro", NZ: "Pacific/Auckland Pacific/Chatham", TO: "Pacific/Tongatapu",
    TK: "Pacific/Fakaofo", WS: "Pacific/Apia",
  }).flatMap(([region, zones]) => zones.split(" ").map((zone) => [zone, region] as const)),
);

/** The settings a zone's region writes by default; the ones a region does not decide keep the service's defaults. */
export interface RegionalSettings {
  time_format: TimeFormat;
  date_format: DateFormat;
  start_day_of_week: number;
}

/**
 * The region's locale as CLDR's likely subtags have it ("DE" → de-DE, "GB" → en-GB): the way dates are written
 * there. Without the script subtag maximize() adds: ICU has no data of its own for "en-Latn-GB" and falls back
 * to American English.
 */
function regionLocale(region: string): Intl.Locale {
  const likely = new Intl.Locale(`und-${region}`).maximize();
  return new Intl.Locale(`${likely.language}-${region}`);
}

/** The region's numeric date (31 Dec 2024) read as one of DATE_FORMATS: its order of day, month and year, and its separator. */
function dateFormatOf(locale: Intl.Locale): DateFormat {
  const parts = new Intl.DateTimeFormat(locale.toString(), { year: "numeric", month: "2-digit", day: "2-digit", timeZone: "UTC", numberingSystem: "latn" })
    .formatToParts(new Date(Date.UTC(2024, 11, 31)));
  const order = parts.filter((p) => p.type === "day" || p.type === "month" || p.type === "year").map((p) => p.type[0]).join("");
  // Bidirectional marks and spaces around the separator are not part of it.
  const separator = parts.find((p) => p.type === "literal")?.value.replace(/[\s\u200e\u200f\u061c]/g, "").charAt(0) ?? "/";
  if (order === "mdy") return "12/31/2024";
  if (order === "ymd") return separator === "-" ? "2023-12-31" : "2024/12/31";
  return separator === "." ? "31.12.2024" : separator === "-" ? "31-12-2024" : "31/12/2024";
}

interface WeekAndHours {
  getWeekInfo?: () => { firstDay: number };
  weekInfo?: { firstDay: number };
  getHourCycles?: () => string[];
  hourCycles?: string[];
}

/**
 * extensions.md "Accounts": fields not given default from the zone's region, as CLDR (through Intl) has it: a
 * `Berlin` host gets `24_hours`, `31.12.2024` and Monday weeks, a `Pacific Time (US & Canada)` one `12_hours`,
 * `12/31/2024` and Sunday weeks. A zone of no region (UTC) gets undefined: the service's defaults.
 */
export function regionalSettings(serviceZone: string): RegionalSettings | undefined {
  const region = ZONE_REGIONS.get(ianaForServiceZone(serviceZone));
  if (region === undefined) return undefined;
  const locale = regionLocale(region);
  // Node 20's V8 has these as getters (weekInfo, hourCycles), later ones as methods: either is CLDR's data.
  const cldr = locale as unknown as WeekAndHours;
  const firstDay = (cldr.getWeekInfo?.() ?? cldr.weekInfo)?.firstDay ?? 7;
  const hourCycle = (cldr.getHourCycles?.() ?? cldr.hourCycles)?.[0] ?? "h12";
  return {
    time_format: hourCycle === "h23" || hourCycle === "h24" ? "24_hours" : "12_hours",
    date_format: dateFormatOf(locale),
    // CLDR counts 1 (Monday) to 7 (Sunday); start_day_of_week 0 (Sunday) to 6.
    start_day_of_week: firstDay % 7,
  };
}
