// Markup that both the server and the page script write (the time picker, time lines, locations): pure strings from data.
import { systemClock } from "../../../domain/clock.js";
import { fill, formatClock, zoneName, type Locale, type Params } from "../../../i18n/index.js";
import type { PageKey, PageMessages } from "../../../i18n/pages.js";
import { addDays, utcToWallClock } from "../../../domain/timezones.js";
import { escapeHtml } from "../../../domain/html.js";
import { locationWords } from "../../../domain/bookingEvent.js";
import { googleCalendarUrl, outlookCalendarUrl, type CalendarEntry } from "../../../domain/calendarLinks.js";

/** What a page needs to speak and count as the host does; sent to the script as the page's data. */
export interface Speech {
  locale: Locale;
  messages: PageMessages;
  /** The host's `time_format`. */
  timeFormat: string;
}

export interface Slot {
  start_time: string;
  end_time: string;
  /** A seated event's time: its seats still free. */
  seats_left?: number;
}

/** A seated time's seats left, as its button says them ("3 seats left"). */
function seatsLeftText(left: number, s: Speech): string {
  return left === 1 ? say(s, "seatsLeftOne") : say(s, "seatsLeft", { count: String(left) });
}

/** Escapes text for an HTML element or a quoted attribute: the service's one escape, under the pages' short name. */
export const esc = escapeHtml;

export function say(s: Speech, key: PageKey, params?: Params): string {
  return fill(s.messages[key], params);
}

// The locale's words with Latin digits, as the e-mails write them (src/i18n/index.ts).
function dateFormat(locale: Locale, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat(`${locale}-u-nu-latn`, options);
}

/** A calendar day (YYYY-MM-DD) written out: "Monday, 6 July 2026". Read at noon UTC, so no zone can move it. */
function dayLabel(day: string, locale: Locale): string {
  return dateFormat(locale, { weekday: "long", day: "numeric", month: "long", year: "numeric", timeZone: "UTC" }).format(new Date(`${day}T12:00:00Z`));
}

/** "July 2026" for a month (YYYY-MM). */
function monthLabel(month: string, locale: Locale): string {
  return dateFormat(locale, { month: "long", year: "numeric", timeZone: "UTC" }).format(new Date(`${month}-15T12:00:00Z`));
}

/** A meeting's time line in `zone`: "Monday, 6 July 2026, 9:30 AM – 10:00 AM". */
export function whenLine(start: Date, end: Date, zone: string, s: Speech): string {
  return `${momentLine(start, zone, s)} – ${formatClock(end, s.locale, { zone, timeFormat: s.timeFormat, dateFormat: "2023-12-31" })}`;
}

/** One moment in `zone`: "Monday, 6 July 2026, 9:30 AM" (until when a booking can be changed). */
export function momentLine(at: Date, zone: string, s: Speech): string {
  const day = utcToWallClock(zone, at).date;
  return `${dayLabel(day, s.locale)}, ${formatClock(at, s.locale, { zone, timeFormat: s.timeFormat, dateFormat: "2023-12-31" })}`;
}

/**
 * The cancel notice's line (the manage page, the confirmation): until when the booker can change the booking, or
 * that it can no longer be changed here and whom to ask; marked with the moment for scripts and tests.
 */
export function cutoffLine(key: "changeUntil" | "changeClosed", until: Date, zone: string, s: Speech, host = ""): string {
  return `<span data-changeable-until="${esc(until.toISOString())}">${esc(say(s, key, { when: momentLine(until, zone, s), host }))}</span>`;
}

/** The zone's own words in `locale` (`long`: "British Summer Time" at `at`; `longGeneric`: "United Kingdom Time"), or undefined. */
function zoneWords(zone: string, locale: Locale, at: Date, style: "long" | "longGeneric"): string | undefined {
  try {
    return dateFormat(locale, { timeZone: zone, timeZoneName: style }).formatToParts(at).find((p) => p.type === "timeZoneName")?.value;
  } catch {
    return undefined;
  }
}

/** Where no name exists the locale writes an offset ("GMT+03:00"): correct, but not a name to offer first. */
function isOffset(words: string): boolean {
  return /\d/.test(words);
}

/**
 * A zone in the time-zone control: its name all year ("Central European Time"; the specific one where there is no
 * generic one, as for UTC), then its IANA id, so zones of one name stay apart: "Central European Time (Europe/Berlin)".
 * The server's option and the script's list use this one label.
 */
export function zoneLabel(zone: string, locale: Locale): string {
  // The system's clock: the booking page's script labels zones too, in the visitor's browser, by the browser's.
  const now = systemClock.now();
  let name = zoneWords(zone, locale, now, "longGeneric");
  // The specific name is asked for only when needed: the script labels every zone, each a DateTimeFormat.
  if (name === undefined || isOffset(name)) {
    const specific = zoneWords(zone, locale, now, "long");
    if (specific !== undefined && (name === undefined || !isOffset(specific))) name = specific;
  }
  return name === undefined || name === zone ? zone : `${name} (${zone.replace(/_/g, " ")})`;
}

/** The zone of a meeting at `at`, with its IANA id: "British Summer Time (Europe/London)" (the rows of a booking). */
export function meetingZoneLabel(zone: string, locale: Locale, at: Date): string {
  return zoneName(at, locale, zone);
}

/** The zone a meeting's time line is read in, said once: "British Summer Time" (an offset where the zone has no name). */
export function meetingZoneName(zone: string, locale: Locale, at: Date): string {
  const specific = zoneWords(zone, locale, at, "long");
  const generic = zoneWords(zone, locale, at, "longGeneric");
  return [specific, generic].find((w) => w !== undefined && !isOffset(w)) ?? specific ?? zone;
}

/** Where the meeting happens, in the page's words; `details` is the location's public detail (an address, the host's phone). */
export function locationText(kind: string, details: string | undefined, host: string, s: Speech): string {
  return locationWords({ kind, details }, undefined, { host, attendee: "" }, s.messages) ?? "";
}

/** "30 minutes" from the API's display duration ("30 minutes", "1 hour", "2 hours"), in the locale's words. */
export function durationText(slotDuration: string, locale: Locale): string {
  // "30 minutes" as the API shows a seed length, "20_minutes" as it shows the others.
  const m = /^(\d+)[\s_]*(minute|hour)/.exec(slotDuration);
  if (!m) return slotDuration;
  return new Intl.NumberFormat(`${locale}-u-nu-latn`, { style: "unit", unit: m[2], unitDisplay: "long" }).format(Number(m[1]));
}

/** The slots of each day as the visitor's zone reads it. */
export function slotsByDay(slots: readonly Slot[], zone: string): Map<string, Slot[]> {
  const days = new Map<string, Slot[]>();
  for (const slot of slots) {
    const day = utcToWallClock(zone, new Date(slot.start_time)).date;
    const list = days.get(day);
    if (list) list.push(slot);
    else days.set(day, [slot]);
  }
  return days;
}

/** The month (YYYY-MM) `n` months after `month`. */
export function addMonths(month: string, n: number): string {
  const [y, m] = month.split("-").map(Number);
  const index = y * 12 + (m - 1) + n;
  return `${String(Math.floor(index / 12)).padStart(4, "0")}-${String((index % 12) + 1).padStart(2, "0")}`;
}

/** The days a month's slot listing asks for: from today (or the 1st) to its last day, never more than the API's 31. */
export function monthRange(month: string, today: string): { from: string; to: string } | undefined {
  const first = `${month}-01`;
  const last = addDays(`${addMonths(month, 1)}-01`, -1);
  if (last < today) return undefined;
  return { from: first < today ? today : first, to: last };
}

export interface PickerState {
  /** YYYY-MM shown. */
  month: string;
  /** Today in the visitor's zone: earlier months cannot be shown. */
  today: string;
  zone: string;
  /** Slots of the shown month, by day in `zone`; undefined while loading. */
  days: Map<string, Slot[]> | undefined;
  /** The picked day. */
  day: string | undefined;
  /** The host's first day of the week, 0 = Sunday. */
  startDayOfWeek: number;
}

/** The month grid: days with free times are buttons carrying data-day; the others are plain text. */
export function monthHtml(p: PickerState, s: Speech): string {
  const weekdays = dateFormat(s.locale, { weekday: "short", timeZone: "UTC" });
  const weekdaysLong = dateFormat(s.locale, { weekday: "long", timeZone: "UTC" });
  // 2023-01-01 was a Sunday.
  const head = Array.from({ length: 7 }, (_, i) => {
    const at = new Date(Date.UTC(2023, 0, 1 + ((p.startDayOfWeek + i) % 7), 12));
    return `<th scope="col" abbr="${esc(weekdaysLong.format(at))}">${esc(weekdays.format(at))}</th>`;
  }).join("");
  const first = `${p.month}-01`;
  const firstWeekday = new Date(`${first}T12:00:00Z`).getUTCDay();
  const lead = (firstWeekday - p.startDayOfWeek + 7) % 7;
  const cells: string[] = Array.from({ length: lead }, () => "<td></td>");
  for (let day = first; day.startsWith(p.month); day = addDays(day, 1)) {
    const n = String(Number(day.slice(8)));
    const free = p.days?.get(day);
    if (free && free.length > 0) {
      const pressed = day === p.day ? "true" : "false";
      cells.push(`<td><button type="button" class="day" data-day="${day}" aria-pressed="${pressed}" aria-label="${esc(dayLabel(day, s.locale))}">${n}</button></td>`);
    } else {
      cells.push(`<td><span class="day off">${n}</span></td>`);
    }
  }
  while (cells.length % 7 !== 0) cells.push("<td></td>");
  const rows: string[] = [];
  for (let i = 0; i < cells.length; i += 7) rows.push(`<tr>${cells.slice(i, i + 7).join("")}</tr>`);
  const canGoBack = p.month > p.today.slice(0, 7);
  return `<div class="month-nav">
<button type="button" class="nav" data-month="${addMonths(p.month, -1)}" aria-label="${esc(say(s, "prevMonth"))}"${canGoBack ? "" : " disabled"}><span aria-hidden="true">‹</span></button>
<h3 id="month-label">${esc(monthLabel(p.month, s.locale))}</h3>
<button type="button" class="nav" data-month="${addMonths(p.month, 1)}" aria-label="${esc(say(s, "nextMonth"))}"><span aria-hidden="true">›</span></button>
</div>
<table class="month" aria-labelledby="month-label"><thead><tr>${head}</tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

/** The picked day's free times, each a button carrying data-slot (the slot's start_time as the API wrote it). */
export function timesHtml(p: PickerState, s: Speech): string {
  if (p.days === undefined) return `<p class="muted">${esc(say(s, "loading"))}</p>`;
  if (p.day === undefined) return `<p class="muted">${esc(say(s, p.days.size === 0 ? "noTimesMonth" : "pickDay"))}</p>`;
  const slots = p.days.get(p.day) ?? [];
  if (slots.length === 0) return `<p class="muted">${esc(say(s, "noTimesDay"))}</p>`;
  const clock = { zone: p.zone, timeFormat: s.timeFormat, dateFormat: "2023-12-31" };
  const items = slots
    .map((slot) => {
      const seats = slot.seats_left === undefined ? "" : ` <small data-seats-left="${slot.seats_left}">${esc(seatsLeftText(slot.seats_left, s))}</small>`;
      return `<li><button type="button" class="slot" data-slot="${esc(slot.start_time)}">${esc(formatClock(new Date(slot.start_time), s.locale, clock))}${seats}</button></li>`;
    })
    .join("");
  return `<h3 id="times-heading" tabindex="-1">${esc(say(s, "timesOn", { date: dayLabel(p.day, s.locale) }))}</h3><ul class="times" aria-labelledby="times-heading">${items}</ul>`;
}

/** What the live region says about the time list. */
export function timesStatus(p: PickerState, s: Speech): string {
  if (p.days === undefined) return say(s, "loading");
  if (p.day === undefined) return p.days.size === 0 ? say(s, "noTimesMonth") : "";
  const count = p.days.get(p.day)?.length ?? 0;
  return count === 0 ? say(s, "noTimesDay") : say(s, "timesCount", { count: String(count), date: dayLabel(p.day, s.locale) });
}

/** The first day of the shown month that has free times. */
export function firstFreeDay(days: Map<string, Slot[]>): string | undefined {
  return [...days.keys()].sort()[0];
}

/**
 * The zone control, the month, the live region and the day's times: the same markup the script redraws. A closed
 * select shows its choice on one line and cuts the rest off ("Central European Time (Europe/Be…" on a 360 px
 * phone), so the choice is shown as text that wraps, and the select, transparent, lies over it: it stays the one
 * control a tap, the keyboard and a screen reader reach (the text is aria-hidden), with the phone's own picker.
 */
export function pickerHtml(p: PickerState, s: Speech, alert: string | undefined): string {
  const label = esc(zoneLabel(p.zone, s.locale));
  return `<div class="zone-row"><label for="timezone">${esc(say(s, "labelTimeZone"))}</label>
<div class="zone-choice"><span class="zone-shown" aria-hidden="true">${label}</span><select id="timezone" name="timezone"><option value="${esc(p.zone)}" selected>${label}</option></select></div></div>
<div id="calendar">${monthHtml(p, s)}</div>
<p class="alert" id="picker-alert" role="alert"${alert ? "" : " hidden"}>${alert ? esc(alert) : ""}</p>
<p class="sr-only" id="times-status" role="status" aria-live="polite">${esc(timesStatus(p, s))}</p>
<div id="times">${timesHtml(p, s)}</div>`;
}

/**
 * The confirmation's and the booker's page's "add to calendar" links: Google Calendar and Outlook on the web take
 * the event by link (in a new tab), Apple Calendar and every other calendar app the booking's .ics file.
 */
export function addToCalendarHtml(entry: CalendarEntry, icsHref: string, s: Speech): string {
  const web = (href: string, which: string, label: string) =>
    `<a class="button" href="${esc(href)}" target="_blank" rel="noopener noreferrer" data-calendar="${which}">${esc(label)}</a>`;
  return `<div class="add-to-calendar" role="group" aria-labelledby="add-to-calendar-label"><p id="add-to-calendar-label">${esc(say(s, "addToCalendarGroup"))}</p>
<p class="actions">${web(googleCalendarUrl(entry), "google", say(s, "calendarGoogle"))}
${web(outlookCalendarUrl(entry), "outlook", "Outlook")}
<a class="button" href="${esc(icsHref)}" download="invite.ics" data-calendar="apple">${esc(say(s, "calendarApple"))}</a></p></div>`;
}
