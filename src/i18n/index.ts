// The message catalogues of the e-mails and booking pages: lookup with parameters, text direction, and dates and times through Intl.
import { formatDate } from "../domain/format.js";
import { LOCALES, type Locale } from "../domain/locales.js";
import { mailMessages } from "./mail.js";
import { noticeMessages } from "./notices.js";
import { oauthMessages } from "./oauth.js";
import { pageMessages } from "./pages.js";

export type { Locale };
export { LOCALES };

function isLocale(value: string): value is Locale {
  return (LOCALES as readonly string[]).includes(value);
}

/** A stored locale, or English for anything else (a stored value outside the list is a data fault, not a reason to stay silent). */
export function localeOf(value: string | null | undefined): Locale {
  return value !== null && value !== undefined && isLocale(value) ? value : "en";
}

/** Arabic is the one right-to-left language of the list. */
export function direction(locale: Locale): "ltr" | "rtl" {
  return locale === "ar" ? "rtl" : "ltr";
}

/** Every catalogue, by name: the completeness test walks them all (pages add theirs here). */
export const catalogues = { mail: mailMessages, pages: pageMessages, oauth: oauthMessages, notices: noticeMessages } as const;

/** The words of a booking's calendar event (its location): the e-mails', in the host's language, for every copy of it. */
export function eventWords(hostLocale: string | null | undefined): (typeof mailMessages)[Locale] {
  return mailMessages[localeOf(hostLocale)];
}

export type Params = Readonly<Record<string, string>>;

/** The `{name}` placeholders of a template, sorted and without repeats. */
export function placeholders(template: string): string[] {
  return [...new Set([...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]))].sort();
}

/**
 * Fills `{name}` placeholders. A placeholder without a value is a programming fault: it throws rather than
 * sending a mail with a literal `{host}` in it. Values are inserted as they are; escaping is the caller's
 * (HTML) business, so the same words serve plain text and HTML.
 */
export function fill(template: string, params: Params = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new RangeError(`no value for {${name}} in ${JSON.stringify(template)}`);
    return value;
  });
}

export interface TimeSettings {
  /** IANA zone the reader sees the time in. */
  zone: string;
  /** The host's `date_format` (src/domain/format.ts DATE_FORMATS). */
  dateFormat: string;
  /** The host's `time_format`: `12_hours` or `24_hours`. */
  timeFormat: string;
}

/** The pieces of a meeting's time as a reader in `zone` reads it, words in `locale`. */
export interface WhenParts {
  weekday: string;
  /** The start date in the host's date_format. */
  date: string;
  start: string;
  end: string;
  /** The zone's name in the locale, with its IANA id, e.g. "Mitteleuropäische Normalzeit (Europe/Berlin)". */
  zone: string;
}

// Building a DateTimeFormat costs far more than using one; locales x zones x options stay few in practice.
const FORMATTER_CACHE_LIMIT = 512;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(locale: Locale, zone: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale}|${zone}|${JSON.stringify(options)}`;
  let f = formatters.get(key);
  if (f === undefined) {
    // Latin digits in every locale: the date itself is written in the host's numeric date_format, and the
    // time beside it should not switch digit systems (Arabic would otherwise mix both in one line).
    f = new Intl.DateTimeFormat(`${locale}-u-nu-latn`, { ...options, timeZone: zone });
    if (formatters.size >= FORMATTER_CACHE_LIMIT) formatters.clear();
    formatters.set(key, f);
  }
  return f;
}

/** A time of day in the host's time_format, with the locale's own words for AM/PM (午後, p. m., م ...). */
export function formatClock(at: Date, locale: Locale, settings: TimeSettings): string {
  const twelve = settings.timeFormat === "12_hours";
  if (!twelve && settings.timeFormat !== "24_hours") throw new RangeError(`unknown time_format: ${JSON.stringify(settings.timeFormat)}`);
  const options: Intl.DateTimeFormatOptions = twelve ? { hour: "numeric", minute: "2-digit", hourCycle: "h12" } : { hour: "2-digit", minute: "2-digit", hourCycle: "h23" };
  return formatter(locale, settings.zone, options).format(at);
}

/** The zone's long name in the locale at that instant (summer or winter time), followed by its IANA id. */
export function zoneName(at: Date, locale: Locale, zone: string): string {
  const name = formatter(locale, zone, { timeZoneName: "long" }).formatToParts(at).find((p) => p.type === "timeZoneName")?.value;
  return name === undefined || name === zone ? zone : `${name} (${zone})`;
}

/** The zone's short name at that instant as the locale writes it ("EDT", "MESZ", "GMT+2"): the time in a subject line. */
export function zoneShortName(at: Date, locale: Locale, zone: string): string {
  return formatter(locale, zone, { timeZoneName: "short" }).formatToParts(at).find((p) => p.type === "timeZoneName")?.value ?? zone;
}

export function whenParts(start: Date, end: Date, locale: Locale, settings: TimeSettings): WhenParts {
  return {
    weekday: formatter(locale, settings.zone, { weekday: "long" }).format(start),
    date: formatDate(start, settings.zone, settings.dateFormat),
    start: formatClock(start, locale, settings),
    end: formatClock(end, locale, settings),
    zone: zoneName(start, locale, settings.zone),
  };
}
