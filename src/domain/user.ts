// Rules of the user object: allowed values, limits, url format, and the checked form of an update.
import { ROOT_PATHS } from "./rootPaths.js";
import { normaliseBrandColor } from "./brand.js";
import { blank, invalid, notInList, tooLong } from "./errors.js";
import { IANA_TIME_ZONES, isIanaTimeZone, isServiceTimeZone, SERVICE_TIME_ZONES } from "./timezones.js";
import { closestAllowed } from "./nearest.js";
import { serviceZoneNameOf } from "./zoneNames.js";
import { DATE_FORMATS, TIME_FORMATS } from "./format.js";
import { LOCALES, type Locale } from "./locales.js";
import { urlKey, urlShape, userUrlKeys } from "./urlKey.js";
import { isHighlyRestrictiveIdentifier } from "./uts39.js";

export const EVENTS_LAYOUTS = ["grid_layout", "table_layout"] as const;
const FULL_NAME_MAX = 80;
const URL_MIN = 2;
export const URL_MAX = 80;
const BIO_MAX = 500;
const DESIGNATION_MAX = 180;
export const EMAIL_MAX = 254;
/** Profile picture size limit: 5 MB. */
export const PICTURE_MAX_BYTES = 5 * 1024 * 1024;

/**
 * Largest picture accepted, read from the image's header before a pixel is decoded. A 48 MP phone photo (8064 ×
 * 6048) passes; a few hundred bytes can announce 65 000 × 65 000 pixels, which no avatar needs and which would
 * take gigabytes to decode. Most pictures are reduced while they are read (a JPEG at an eighth of its size, a PNG
 * line by line), but a progressive JPEG, an interlaced PNG and a GIF's frame are decoded whole first (3 to 5
 * bytes a pixel, plus the decoder's own buffers): those have a lower limit, so decoding one stays under about
 * 50 MB and 16 uploads at once keep the service under 250 MB (bench/pictures.ts; docs/limits.md, "Profile
 * pictures"). 8 megapixels is still far more than the 1024 px the served picture is reduced to.
 */
const PICTURE_MAX_SIDE = 10_000;
export const PICTURE_MAX_PIXELS = 50_000_000;
const PICTURE_MAX_PIXELS_WHOLE = 8_000_000;

/** The 422 of a picture whose dimensions are over the limits. */
export const PICTURE_TOO_LARGE =
  `image must be at most ${PICTURE_MAX_SIDE} pixels wide and high and ${PICTURE_MAX_PIXELS / 1_000_000} megapixels in all ` +
  `(${PICTURE_MAX_PIXELS_WHOLE / 1_000_000} for a progressive or interlaced image or a GIF)`;

/** What a picture's header says of it. */
export interface PictureHeader {
  width: number;
  height: number;
  /** sharp's format name: jpeg, png, webp, gif. */
  format: string;
  /** A progressive JPEG or an interlaced PNG. */
  progressive: boolean;
}

/** Whether a picture of this header is accepted. */
export function pictureDimensionsAllowed(p: PictureHeader): boolean {
  const pixels = p.width * p.height;
  const most = p.format === "gif" || p.progressive ? PICTURE_MAX_PIXELS_WHOLE : PICTURE_MAX_PIXELS;
  return p.width > 0 && p.height > 0 && p.width <= PICTURE_MAX_SIDE && p.height <= PICTURE_MAX_SIDE && pixels <= most;
}

export const USER_DEFAULTS = {
  time_format: "12_hours",
  date_format: "12/31/2024",
  locale: "en",
  currency: "usd",
  calendar_view: "week",
  start_day_of_week: 0,
  events_layout: "grid_layout",
  timezone: "UTC",
} as const;

/** Lowercase ISO 4217 codes, as the runtime's Intl knows them. */
export const CURRENCIES: readonly string[] = Object.freeze(Intl.supportedValuesOf("currency").map((c) => c.toLowerCase()));
const CURRENCY_SET: ReadonlySet<string> = new Set(CURRENCIES);

export function isCurrency(code: string): boolean {
  return CURRENCY_SET.has(code);
}

/** start_day_of_week: 0 (Sunday) to 6 (Saturday). */
export const DAYS_OF_WEEK: readonly number[] = Object.freeze([0, 1, 2, 3, 4, 5, 6]);

/** Length in characters as a person counts them (code points), not UTF-16 units. */
export function charLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * Booking-page url rules shared by users and events: no scheme-looking or rooted start, none of `.`, `?`, `#`.
 * We also refuse `/`, whitespace and control characters anywhere: the url is one path segment of
 * `/<user url>/<event url>`, and such characters could never be typed back into it. Then only what people can
 * tell apart (extensions.md "Urls people can tell apart"): characters of UTS #39's identifier profile, one script.
 */
export function urlFormatProblem(field: string, url: string, min: number, max: number): string | undefined {
  const len = charLength(url);
  if (len < min) return `${field} is too short (minimum is ${min} characters)`;
  if (len > max) return `${field} is too long (maximum is ${max} characters)`;
  if (/^(https?|\/)/i.test(url)) return `${field} must not start with http, https or /`;
  if (/[.?#]/.test(url)) return `${field} must not contain ., ? or #`;
  // Unicode's White_Space, not JS's \s: \s holds U+FEFF, an invisible format character that the profile refuses below.
  if (/[\/\p{White_Space}\p{Cc}]/u.test(url)) return `${field} must not contain /, spaces or control characters`;
  if (!isHighlyRestrictiveIdentifier(url)) return `${field} contains characters that are not allowed`;
  return undefined;
}

/** The reserved paths as a url's key would be (`admin` reads as `adrnin` to the skeleton), so a look-alike of one is reserved too. */
const RESERVED_USER_URLS: ReadonlySet<string> = new Set(Object.values(ROOT_PATHS).map(urlKey));

function isReservedUserUrl(url: string): boolean {
  return RESERVED_USER_URLS.has(urlKey(url)) || RESERVED_USER_URLS.has(urlShape(url));
}

export function checkUserUrl(url: string): void {
  const problem = urlFormatProblem("url", url, URL_MIN, URL_MAX);
  if (problem) throw invalid(problem);
  if (isReservedUserUrl(url)) throw invalid("url is reserved");
}

/**
 * A url as stored: NFKC, so compatibility look-alikes (full-width "ＢＯＢ", ligatures, circled letters) become the
 * characters they stand for before any rule or uniqueness check sees them. Case is kept for display.
 */
export function normaliseUrl(url: string): string {
  return url.normalize("NFKC");
}

/*
 * The e-mail rule (docs/limits.md, Input rules and limits). An address is at most 254 characters: a local part, "@", a
 * domain. The local part is 1 to 64 characters: letters and digits of any script and ! # $ % & ' * + / = ? ^ _ `
 * { | } ~ -, in runs separated by single dots (no quoted local parts, no comments). The domain is two or more
 * labels separated by dots, each 1 to 63 letters, digits or hyphens, not starting or ending with a hyphen; the last
 * label is not all digits (no address literals). Deliverability is not ours to judge; this refuses what no mail
 * system delivers to and what could break a header or a page (spaces, quotes, angle brackets, controls).
 */
const LOCAL_PART = /^[\p{L}\p{M}\p{N}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{M}\p{N}!#$%&'*+/=?^_`{|}~-]+)*$/u;
const DOMAIN_LABEL = /^[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}-]*[\p{L}\p{M}\p{N}])?$/u;
const EMAIL_LOCAL_MAX = 64;
const EMAIL_LABEL_MAX = 63;

/** An e-mail address as it is compared and stored: trimmed and lowercased. */
export function normaliseEmail(value: string): string {
  return value.trim().toLowerCase();
}

export function isEmail(value: string): boolean {
  if (value.length > EMAIL_MAX) return false;
  const at = value.lastIndexOf("@");
  if (at <= 0) return false;
  const local = value.slice(0, at);
  const labels = value.slice(at + 1).split(".");
  if (local.length > EMAIL_LOCAL_MAX || !LOCAL_PART.test(local)) return false;
  if (labels.length < 2 || /^\d+$/.test(labels[labels.length - 1])) return false;
  return labels.every((l) => l.length <= EMAIL_LABEL_MAX && DOMAIN_LABEL.test(l));
}

export interface UserPatchInput {
  full_name?: string;
  url?: string;
  bio?: string;
  designation?: string;
  timezone?: string;
  time_format?: string;
  date_format?: string;
  locale?: string;
  currency?: string;
  start_day_of_week?: number;
  events_layout?: string;
  show_message_button_on_profile?: boolean;
  show_message_button_on_events?: boolean;
  brand_color?: string;
}

/** The stored form of a checked update: only the fields that were sent. `bio` and `brand_color` "" clear them (null). */
export type UserPatch = Omit<UserPatchInput, "bio" | "brand_color"> & { bio?: string | null; brand_color?: string | null; url_key?: string; url_shape?: string; url_rule?: number };

/**
 * A service zone name; an IANA name is refused too (PATCH /user takes the seed's names), suggesting its service
 * name (`Europe/Berlin`: `Berlin`), also for a slip in it (`Europe/Berlim`).
 */
function checkTimezone(field: string, zone: string): void {
  if (isServiceTimeZone(zone)) return;
  const iana = isIanaTimeZone(zone) ? zone : closestAllowed(zone, IANA_TIME_ZONES);
  notInList(field, SERVICE_TIME_ZONES, zone, iana === undefined ? undefined : serviceZoneNameOf(iana));
}

export function checkFullName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") blank("full_name");
  if (charLength(trimmed) > FULL_NAME_MAX) tooLong("full_name", FULL_NAME_MAX);
  return trimmed;
}

/** A locale of the list (a visitor's language at booking), or 422 listing them. */
export function checkLocale(value: string): Locale {
  if (!(LOCALES as readonly string[]).includes(value)) notInList("locale", LOCALES, value);
  return value as Locale;
}

/** Fields whose value must be one of a fixed list. */
const LISTED_FIELDS: ReadonlyArray<readonly ["time_format" | "date_format" | "locale" | "events_layout", readonly string[]]> = [
  ["time_format", TIME_FORMATS],
  ["date_format", DATE_FORMATS],
  ["locale", LOCALES],
  ["events_layout", EVENTS_LAYOUTS],
];

/** Checks every sent field of PATCH /user; the first broken rule answers (422, naming the field). */
export function checkUserPatch(input: UserPatchInput): UserPatch {
  const out: UserPatch = {};
  if (input.full_name !== undefined) out.full_name = checkFullName(input.full_name);
  if (input.url !== undefined) {
    const url = normaliseUrl(input.url);
    checkUserUrl(url);
    out.url = url;
    Object.assign(out, userUrlKeys(url));
  }
  if (input.bio !== undefined) {
    if (charLength(input.bio) > BIO_MAX) tooLong("bio", BIO_MAX);
    out.bio = input.bio === "" ? null : input.bio;
  }
  if (input.designation !== undefined) {
    if (charLength(input.designation) > DESIGNATION_MAX) tooLong("designation", DESIGNATION_MAX);
    out.designation = input.designation;
  }
  if (input.timezone !== undefined) {
    checkTimezone("timezone", input.timezone);
    out.timezone = input.timezone;
  }
  for (const [field, allowed] of LISTED_FIELDS) {
    const value = input[field];
    if (value === undefined) continue;
    if (!allowed.includes(value)) notInList(field, allowed, value);
    out[field] = value;
  }
  if (input.currency !== undefined) {
    if (!isCurrency(input.currency)) notInList("currency", CURRENCIES, input.currency);
    out.currency = input.currency;
  }
  if (input.start_day_of_week !== undefined) {
    if (!DAYS_OF_WEEK.includes(input.start_day_of_week)) notInList("start_day_of_week", DAYS_OF_WEEK, input.start_day_of_week);
    out.start_day_of_week = input.start_day_of_week;
  }
  if (input.brand_color !== undefined) out.brand_color = normaliseBrandColor(input.brand_color);
  if (input.show_message_button_on_profile !== undefined) out.show_message_button_on_profile = input.show_message_button_on_profile;
  if (input.show_message_button_on_events !== undefined) out.show_message_button_on_events = input.show_message_button_on_events;
  return out;
}

/** A url for a new account from its name: lowercase words joined by "-", padded to the minimum length. */
export function urlFromName(fullName: string): string {
  const words = fullName
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  // The url rules refuse a start of "http", so such names get the same prefix as too short ones.
  const base = words.length >= URL_MIN && !words.startsWith("http") && !isReservedUserUrl(words) ? words : `user-${words}`;
  // Room for a uniqueness suffix; a cut between words must not leave a trailing dash.
  return base.slice(0, URL_MAX - 6).replace(/-+$/, "");
}
