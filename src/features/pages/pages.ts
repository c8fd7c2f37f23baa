// The booking pages as HTML documents: profile, event (time picker and form), the booker's booking, not found and error pages.
import { direction, LOCALES, type Locale } from "../../i18n/index.js";
import { pageMessages, type PageKey } from "../../i18n/pages.js";
import type { CalendarEntry } from "../../domain/calendarLinks.js";
import {
  addToCalendarHtml,
  durationText,
  esc,
  say,
  pickerHtml,
  cutoffLine,
  momentLine,
  whenLine,
  meetingZoneLabel,
  type PickerState,
  type Speech,
} from "./shared/view.js";
import type { PageData } from "./shared/data.js";
import { LOGO_WIDTHS, PICTURE_WIDTHS, pictureCopyUrl } from "../accounts/index.js";
import { EVENT_COLORS } from "../../domain/event.js";
import { ATTENDEE_NAME_MAX } from "../../domain/booking.js";

export interface AssetNames {
  script: string;
  style: string;
}

export function speechOf(locale: Locale, timeFormat: string): Speech {
  return { locale, messages: pageMessages[locale], timeFormat };
}

// The data the script reads: JSON in a non-executed script element ('<' escaped so no text can close it early).
function dataBlock(data: PageData): string {
  return `<script type="application/json" id="page-data">${JSON.stringify(data).replace(/</g, "\\u003c")}</script>`;
}

interface HostBadge {
  name: string;
  avatarName: string;
  /** Same-origin path of the picture, or undefined. */
  picture: string | undefined;
  /** Profile path, or undefined when the header should not link. */
  href: string | undefined;
  /** The host's brand colour ("#rrggbb"), when set. */
  brandColor?: string;
  /** Same-origin path of the host's brand logo, when set. */
  logo?: string;
}

/** The class that colours an event (its card, its page) with its colour name; none for a name the stylesheet lacks. */
function eventColorClass(color: string | undefined): string {
  return color !== undefined && (EVENT_COLORS as readonly string[]).includes(color) ? ` color-${color}` : "";
}

/** The brand colour's stylesheet (its accent colours, made readable): /assets/brand-<rrggbb>.css, served by the router. */
function brandStylesheet(color: string): string {
  return `brand-${color.slice(1)}.css`;
}

/** The picture's resized copies (never the original, which may be megabytes) for its slot: 32 or 64 CSS pixels. */
function avatar(host: HostBadge, size: "small" | "large"): string {
  if (host.picture) {
    const px = size === "large" ? 64 : 32;
    const picture = host.picture;
    const srcset = PICTURE_WIDTHS.map((w) => `${esc(pictureCopyUrl(picture, w))} ${w}w`).join(", ");
    return `<img class="avatar ${size}" src="${esc(pictureCopyUrl(picture, PICTURE_WIDTHS[0]))}" srcset="${srcset}" sizes="${px}px" alt="" width="${px}" height="${px}">`;
  }
  return `<span class="avatar ${size}" aria-hidden="true">${esc(host.avatarName)}</span>`;
}

/**
 * The brand logo at the head of a page, named for its host (it stands for them: not decorative). Its copies only
 * (src/features/accounts/picture.ts LOGO_WIDTHS), for screens of 2 and 3 device pixels per CSS pixel; style.css
 * keeps it within 160 x 40 CSS pixels whichever a screen takes.
 */
function brandLogo(host: HostBadge, s: Speech): string {
  if (!host.logo) return "";
  const logo = host.logo;
  const srcset = LOGO_WIDTHS.map((w, i) => `${esc(pictureCopyUrl(logo, w))} ${i + 2}x`).join(", ");
  return `<img class="brand-logo" src="${esc(pictureCopyUrl(logo, LOGO_WIDTHS[0]))}" srcset="${srcset}" alt="${esc(say(s, "logoAlt", { host: host.name }))}">`;
}

export interface DocumentParts {
  speech: Speech;
  title: string;
  /** The page's `<meta name="description">`, in its language. */
  description: string;
  /** A page of one booker (under /booking/): kept out of search engines. */
  noindex?: boolean;
  assets: AssetNames;
  embed: boolean;
  host?: HostBadge;
  body: string;
  data?: PageData;
  /** The page's address in each language, for the language menu; absent: no menu. */
  languages?: (locale: Locale) => string;
}

/** Each language by its own name ("Deutsch", "日本語"), as a menu of languages writes them. */
const LANGUAGE_NAMES: Readonly<Record<Locale, string>> = Object.fromEntries(
  LOCALES.map((l) => {
    const name = new Intl.DisplayNames([l], { type: "language" }).of(l) ?? l;
    return [l, name.charAt(0).toLocaleUpperCase(l) + name.slice(1)];
  }),
) as Record<Locale, string>;

/**
 * extensions.md "Visitor language": the page says which language it is in (the current one, marked) and offers the
 * others as links to the same page with `?locale=`, each named in its own language and marked as such.
 */
function languageMenu(s: Speech, href: (locale: Locale) => string): string {
  const items = LOCALES.map((l) =>
    l === s.locale
      ? `<li><span aria-current="true" lang="${l}" dir="${direction(l)}">${esc(LANGUAGE_NAMES[l])}</span></li>`
      : `<li><a href="${esc(href(l))}" hreflang="${l}" lang="${l}" dir="${direction(l)}">${esc(LANGUAGE_NAMES[l])}</a></li>`,
  ).join("");
  return `<nav class="languages" aria-labelledby="languages-label"><span id="languages-label">${esc(say(s, "labelLanguage"))}:</span> <ul>${items}</ul></nav>`;
}

/** One page: the host's language and direction, our stylesheet and script only, header and footer unless embedded. */
export function documentHtml(p: DocumentParts): string {
  const { locale } = p.speech;
  const header =
    p.embed || !p.host
      ? ""
      : `<header class="site">${brandLogo(p.host, p.speech)}<a class="host-link" href="${esc(p.host.href ?? "#main")}">${avatar(p.host, "small")}<span>${esc(p.host.name)}</span></a></header>`;
  // The footer leads back to the host's profile; the profile itself has none.
  const footer = p.embed || !p.host?.href ? "" : `<footer class="site"><a href="${esc(p.host.href)}">${esc(say(p.speech, "profileHeading", { host: p.host.name }))}</a></footer>`;
  return `<!doctype html>
<html lang="${locale}" dir="${direction(locale)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
${p.noindex ? '<meta name="robots" content="noindex">\n' : ""}<title>${esc(p.title)}</title>
<meta name="description" content="${esc(p.description)}">
<link rel="icon" href="/favicon.ico" sizes="16x16 32x32 48x48">
<link rel="stylesheet" href="/assets/${p.assets.style}">
${p.host?.brandColor ? `<link rel="stylesheet" href="/assets/${brandStylesheet(p.host.brandColor)}">\n` : ""}<script src="/assets/${p.assets.script}" defer></script>
</head>
<body class="${p.embed ? "embed" : "full"}">
${header}<main id="main">
${p.body}
</main>
${p.languages ? `${languageMenu(p.speech, p.languages)}\n` : ""}${footer}${p.data ? dataBlock(p.data) : ""}
</body>
</html>
`;
}

/** The API writes descriptions with `<br>` for line breaks: keep those, escape everything else. */
function descriptionHtml(description: string | undefined): string {
  if (!description) return "";
  return `<p class="description" dir="auto">${description.split("<br>").map(esc).join("<br>")}</p>`;
}

export interface ProfileView {
  speech: Speech;
  embed: boolean;
  host: HostBadge;
  bio: string | undefined;
  events: { name: string; href: string; duration: string; description: string | undefined; location: string; color: string }[];
}

export function profileBody(v: ProfileView): string {
  const s = v.speech;
  const events =
    v.events.length === 0
      ? `<p class="muted">${esc(say(s, "profileNoEvents", { host: v.host.name }))}</p>`
      : `<ul class="event-list">${v.events
          .map(
            (e) => `<li><a class="event-card${eventColorClass(e.color)}" href="${esc(e.href)}"><span class="event-name" dir="auto">${esc(e.name)}</span>
<span class="meta">${esc(durationText(e.duration, s.locale))} · ${esc(e.location)}</span>${e.description ? `<span class="event-description" dir="auto">${e.description.split("<br>").map(esc).join(" ")}</span>` : ""}</a></li>`,
          )
          .join("")}</ul>`;
  return `<section class="profile">
${avatar(v.host, "large")}
<h1>${esc(v.host.name)}</h1>
${v.bio ? `<p class="bio" dir="auto">${esc(v.bio)}</p>` : ""}
<h2>${esc(say(s, "profileEvents"))}</h2>
${events}
</section>`;
}

export interface QuestionView {
  id: string;
  title: string;
  type: string;
  required: boolean;
  options: readonly string[];
  /** Rating scale top. */
  max: number;
  /** Value for a hidden question. */
  value: string;
}

function fieldError(name: string): string {
  return `<p class="field-error" id="err-${esc(name)}" hidden></p>`;
}

function labelText(title: string, required: boolean, s: Speech): string {
  return `${esc(title)}${required ? ` <span class="req">(${esc(say(s, "requiredMark"))})</span>` : ""}`;
}

function choiceGroup(q: QuestionView, s: Speech, type: "radio" | "checkbox", choices: { value: string; label: string; aria?: string }[]): string {
  const name = `question_${q.id}`;
  const inputs = choices
    .map(
      (c, i) =>
        `<label class="choice"><input type="${type}" name="${esc(name)}" value="${esc(c.value)}" id="q-${esc(q.id)}-${i}"${c.aria ? ` aria-label="${esc(c.aria)}"` : ""}> <span>${esc(c.label)}</span></label>`,
    )
    .join("");
  return `<fieldset class="field group${q.type === "rating" ? " rating" : ""}" data-question="${esc(q.id)}" data-type="${esc(q.type)}"${q.required ? ' data-required="true"' : ""} aria-describedby="err-${esc(name)}">
<legend>${labelText(q.title, q.required, s)}</legend>
<div class="choices">${inputs}</div>${fieldError(name)}</fieldset>`;
}

/** One form question with a control that fits its type (docs/spec/scheduling-api.md's list). */
function questionHtml(q: QuestionView, s: Speech): string {
  const name = `question_${q.id}`;
  const id = `q-${q.id}`;
  const req = q.required ? ' required aria-required="true"' : "";
  const described = (hint?: string) => `aria-describedby="${hint ? `hint-${esc(id)} ` : ""}err-${esc(name)}"`;
  const single = (input: string, hint?: string) =>
    `<div class="field" data-question="${esc(q.id)}" data-type="${esc(q.type)}"${q.required ? ' data-required="true"' : ""}>
<label for="${esc(id)}">${labelText(q.title, q.required, s)}</label>
${hint ? `<p class="hint" id="hint-${esc(id)}">${esc(hint)}</p>` : ""}${input}${fieldError(name)}</div>`;
  const input = (type: string, extra = "", hint?: string) => single(`<input type="${type}" id="${esc(id)}" name="${esc(name)}"${req}${extra} ${described(hint)}>`, hint);
  switch (q.type) {
    case "multi_line":
      return single(`<textarea id="${esc(id)}" name="${esc(name)}" rows="4"${req} ${described()}></textarea>`);
    case "email":
      return input("email", ' autocomplete="email"');
    case "phone_number":
      return input("tel", ' autocomplete="tel"');
    case "number":
      return input("number", ' inputmode="decimal" step="any"');
    case "url":
      return input("url", ' inputmode="url"');
    case "date":
      return input("date");
    case "file_upload":
      // The API takes answers as JSON values and has no upload: the visitor shares a link to the file.
      return input("url", ' inputmode="url"', say(s, "fileHint"));
    case "signature":
      // A typed signature: the visitor's full name, shown in a handwriting-like face.
      return input("text", ' class="signature" autocomplete="name"', say(s, "signatureHint"));
    case "hidden":
      return `<input type="hidden" name="${esc(name)}" value="${esc(q.value)}" data-question="${esc(q.id)}" data-type="hidden">`;
    case "drop_down":
      return single(
        `<select id="${esc(id)}" name="${esc(name)}"${req} ${described()}><option value="">${esc(say(s, "choose"))}</option>${q.options
          .map((o) => `<option value="${esc(o)}">${esc(o)}</option>`)
          .join("")}</select>`,
      );
    case "radio_button":
      return choiceGroup(q, s, "radio", q.options.map((o) => ({ value: o, label: o })));
    case "check_box":
      return choiceGroup(q, s, "checkbox", q.options.map((o) => ({ value: o, label: o })));
    case "boolean":
      return choiceGroup(q, s, "radio", [
        { value: "true", label: say(s, "answerYes") },
        { value: "false", label: say(s, "answerNo") },
      ]);
    case "rating":
      return choiceGroup(
        q,
        s,
        "radio",
        Array.from({ length: q.max }, (_, i) => ({ value: String(i + 1), label: String(i + 1), aria: say(s, "ratingOf", { count: String(i + 1), limit: String(q.max) }) })),
      );
    default:
      return input("text");
  }
}

export interface EventView {
  speech: Speech;
  event: { name: string; description: string | undefined; duration: string; location: string; hostName: string; color: string };
  /** The lengths to choose from when the event offers several: each a link to the page for that length. */
  lengths?: { minutes: number; href: string; chosen: boolean }[];
  host: HostBadge;
  picker: PickerState;
  /** A message shown over the calendar at load (e.g. the calendar is unavailable). */
  alert: string | undefined;
  questions: QuestionView[];
  guests: { enabled: boolean; limit: number };
}

/** The lengths a visitor chooses from, as links (no script needed): the chosen one marked as the current one. */
function lengthsHtml(lengths: NonNullable<EventView["lengths"]>, s: Speech): string {
  const items = lengths.map(
    (l) => `<li><a href="${esc(l.href)}" data-duration="${l.minutes}"${l.chosen ? ' aria-current="true" class="chosen"' : ""}>${esc(durationText(`${l.minutes} minutes`, s.locale))}</a></li>`,
  );
  return `<ul class="lengths">${items.join("")}</ul>`;
}

export function eventBody(v: EventView): string {
  const s = v.speech;
  const guestField = v.guests.enabled
    ? `<div class="field"><label for="guest_emails">${esc(say(s, "fieldGuests"))}</label>
<p class="hint" id="hint-guest_emails">${esc(say(s, "guestsHint", { limit: String(v.guests.limit) }))}</p>
<input type="text" id="guest_emails" name="guest_emails" inputmode="email" autocomplete="off" aria-describedby="hint-guest_emails err-guest_emails">${fieldError("guest_emails")}</div>`
    : "";
  return `<div class="event-page">
<section class="event-info${eventColorClass(v.event.color)}" aria-labelledby="event-name">
${avatar(v.host, "large")}
<p class="host-name">${esc(v.event.hostName)}</p>
<h1 id="event-name" dir="auto">${esc(v.event.name)}</h1>
<dl class="facts">
<div><dt>${esc(say(s, "labelDuration"))}</dt><dd>${v.lengths && v.lengths.length > 1 ? lengthsHtml(v.lengths, s) : esc(durationText(v.event.duration, s.locale))}</dd></div>
<div><dt>${esc(say(s, "labelLocation"))}</dt><dd>${esc(v.event.location)}</dd></div>
</dl>
${descriptionHtml(v.event.description)}
</section>
<section class="picker" id="picker" aria-labelledby="pick-heading">
<h2 id="pick-heading">${esc(say(s, "pickDay"))}</h2>
${pickerHtml(v.picker, s, v.alert)}
<noscript><p class="notice">${esc(say(s, "noScript"))}</p></noscript>
</section>
<section class="booking-form" id="form-section" aria-labelledby="form-heading" hidden>
<h2 id="form-heading" tabindex="-1">${esc(say(s, "formHeading"))}</h2>
<p class="chosen"><span id="chosen-time"></span> <button type="button" class="link" id="change-time">${esc(say(s, "changeTime"))}</button></p>
<form id="booking-form" novalidate>
<p class="alert" id="form-alert" role="alert" hidden></p>
<div class="field"><label for="attendee_name">${labelText(say(s, "fieldName"), true, s)}</label>
<input type="text" id="attendee_name" name="attendee_name" autocomplete="name" maxlength="${ATTENDEE_NAME_MAX}" required aria-required="true" aria-describedby="err-attendee_name">${fieldError("attendee_name")}</div>
<div class="field"><label for="attendee_email">${labelText(say(s, "fieldEmail"), true, s)}</label>
<input type="email" id="attendee_email" name="attendee_email" autocomplete="email" required aria-required="true" aria-describedby="err-attendee_email">${fieldError("attendee_email")}</div>
${guestField}
${v.questions.map((q) => questionHtml(q, s)).join("\n")}
<button type="submit" class="primary">${esc(say(s, "submit"))}</button>
</form>
</section>
<section class="confirmation" id="confirmation" aria-labelledby="confirmed-heading" hidden></section>
</div>`;
}

export interface ManageView {
  speech: Speech;
  booking: {
    privateKey: string;
    status: string;
    eventName: string;
    hostName: string;
    start: Date;
    end: Date;
    zone: string;
    location: string;
    meetingUrl: string | undefined;
    /** pending: a provider is still making the link, which follows by e-mail. */
    meetingStatus: string;
    guests: string[];
    /** A seat's slot's other attendees, when the event shows them (booking-kinds.md "Seats"). */
    otherAttendees: string[];
    cancelReason: string | undefined;
    changeable: boolean;
    /** Until when the booker may cancel or reschedule (the start, or the event's cancel notice before it); confirmed only. */
    changeableUntil: Date | undefined;
    /** Whether the meeting has begun (then it is past, whatever the cancel notice said). */
    started: boolean;
    /** Once rescheduled: the private key of the booking it was moved to. */
    nextPrivateKey: string | undefined;
    /** When the event's reminders e-mail the booker: whether they are on (the switch), else undefined (no switch). */
    reminders?: boolean;
    /** The booking as the add-to-calendar links carry it (domain/calendarLinks.ts bookingCalendarEntry). */
    calendar: CalendarEntry;
  };
  /** What the page just did (after a cancel, a reschedule or the reminders' switch). */
  done: ManageDone | undefined;
}

export const MANAGE_DONE = ["canceled", "rescheduled", "reminders_off", "reminders_on"] as const;
type ManageDone = (typeof MANAGE_DONE)[number];

const DONE_WORDS: Record<ManageDone, PageKey> = { canceled: "canceledDone", rescheduled: "rescheduledDone", reminders_off: "remindersOffDone", reminders_on: "remindersOnDone" };

/** The booker's switch of reminder e-mails: a form posting to the one-click unsubscribe URL (or back on), no script needed. */
function remindersSwitch(s: Speech, privateKey: string, on: boolean): string {
  // The page's language goes along, so the page after the switch speaks it too (the browser may not ask for it).
  const action = `/booking/${encodeURIComponent(privateKey)}/${on ? "unsubscribe" : "resubscribe"}?from=manage&locale=${s.locale}`;
  return `<form class="reminders" method="post" action="${esc(action)}"><p>${esc(say(s, "remindersLabel"))}: <strong data-reminders="${on ? "on" : "off"}">${esc(say(s, on ? "remindersOn" : "remindersOff"))}</strong>
<button type="submit" data-action="${on ? "reminders-off" : "reminders-on"}">${esc(say(s, on ? "remindersTurnOff" : "remindersTurnOn"))}</button></p></form>`;
}

/** The page a reminder's unsubscribe link opens: the question and its button (a GET changes nothing), or, after the POST, that it is done. */
export function unsubscribeBody(v: { speech: Speech; privateKey: string; eventName: string; hostName: string; done: boolean }): string {
  const s = v.speech;
  const back = `<p><a href="/booking/${encodeURIComponent(v.privateKey)}?locale=${s.locale}">${esc(say(s, "viewBooking"))}</a></p>`;
  if (v.done) return `<section class="message" data-unsubscribed="true"><h1>${esc(say(s, "unsubscribedHeading"))}</h1><p>${esc(say(s, "remindersOffDone"))}</p>${back}</section>`;
  return `<section class="message"><h1>${esc(say(s, "unsubscribeHeading"))}</h1><p>${esc(say(s, "unsubscribeText", { event: v.eventName, host: v.hostName }))}</p>
<form method="post" action="/booking/${esc(encodeURIComponent(v.privateKey))}/unsubscribe?locale=${s.locale}"><div class="actions"><button type="submit" class="primary" data-action="unsubscribe">${esc(say(s, "unsubscribeConfirm"))}</button></div></form>
${back}</section>`;
}

function row(label: string, value: string): string {
  return `<div><dt>${esc(label)}</dt><dd>${value}</dd></div>`;
}

/** A booking's status in the page's words (a request waits for the host, then ends confirmed, declined or expired). */
const STATUS_WORDS: Readonly<Record<string, PageKey>> = {
  confirmed: "statusConfirmed",
  canceled: "statusCanceled",
  rescheduled: "statusRescheduled",
  pending: "statusPending",
  declined: "statusDeclined",
  expired: "statusExpired",
};

export function manageBody(v: ManageView): string {
  const s = v.speech;
  const b = v.booking;
  const status = say(s, STATUS_WORDS[b.status] ?? "statusRescheduled");
  const done = v.done ? `<p class="notice success" role="status">${esc(say(s, DONE_WORDS[v.done]))}</p>` : "";
  let notice = "";
  if (b.status === "canceled" && v.done !== "canceled") notice = esc(say(s, "canceledNotice"));
  else if (b.status === "rescheduled" && b.nextPrivateKey)
    notice = `${esc(say(s, "movedNotice"))} <a href="/booking/${encodeURIComponent(b.nextPrivateKey)}" data-next-booking>${esc(say(s, "newBookingLink"))}</a>`;
  else if (b.status === "rescheduled") notice = esc(say(s, "rescheduledNotice"));
  else if (!b.changeable && b.status === "confirmed" && !b.started && b.changeableUntil) notice = cutoffLine("changeClosed", b.changeableUntil, b.zone, s, b.hostName);
  else if (!b.changeable && b.status === "confirmed") notice = esc(say(s, "pastNotice"));
  // An event with a cancel notice closes changes before the meeting: the page says until when they are open.
  else if (b.changeable && b.changeableUntil && b.changeableUntil < b.start) notice = cutoffLine("changeUntil", b.changeableUntil, b.zone, s, b.hostName);
  const actions = b.changeable
    ? `<div class="actions">
<button type="button" data-action="reschedule" aria-expanded="false" aria-controls="reschedule-panel">${esc(say(s, "rescheduleAction"))}</button>
<button type="button" data-action="cancel" class="danger" aria-expanded="false" aria-controls="cancel-panel">${esc(say(s, "cancelAction"))}</button>
</div>
<section class="panel" id="cancel-panel" aria-labelledby="cancel-heading" hidden>
<h2 id="cancel-heading" tabindex="-1">${esc(say(s, "cancelAction"))}</h2>
<p class="alert" id="cancel-alert" role="alert" hidden></p>
<label for="reason">${esc(say(s, "cancelReason"))}</label>
<textarea id="reason" name="reason" rows="3" maxlength="500"></textarea>
<div class="actions"><button type="button" class="danger" data-action="confirm-cancel">${esc(say(s, "cancelConfirm"))}</button>
<button type="button" data-action="keep">${esc(say(s, "keepBooking"))}</button></div>
</section>
<section class="panel picker" id="reschedule-panel" aria-labelledby="reschedule-heading" hidden>
<h2 id="reschedule-heading" tabindex="-1">${esc(say(s, "rescheduleHeading"))}</h2>
<div id="reschedule-picker"></div>
<p class="alert" id="reschedule-alert" role="alert" hidden></p>
<div class="actions"><button type="button" class="primary" data-action="confirm-reschedule" hidden></button></div>
</section>`
    : "";
  return `<section class="manage" data-private-key="${esc(b.privateKey)}" data-status="${esc(b.status)}" aria-labelledby="manage-heading">
<h1 id="manage-heading">${esc(say(s, "manageHeading"))}</h1>
${done}${notice ? `<p class="notice">${notice}</p>` : ""}
<dl class="facts">
${row(say(s, "labelStatus"), esc(status))}
<div><dt class="sr-only">${esc(b.eventName)}</dt><dd class="event-name">${esc(b.eventName)}</dd></div>
${row(say(s, "labelHost"), esc(b.hostName))}
${row(say(s, "labelWhen"), esc(whenLine(b.start, b.end, b.zone, s)))}
${row(say(s, "labelTimeZone"), esc(meetingZoneLabel(b.zone, s.locale, b.start)))}
${row(say(s, "labelLocation"), esc(b.location))}
${b.meetingUrl ? row(say(s, "labelMeetingLink"), `<a href="${esc(b.meetingUrl)}" rel="noopener noreferrer">${esc(b.meetingUrl)}</a>`) : b.meetingStatus === "pending" ? row(say(s, "labelMeetingLink"), `<span data-meeting="pending">${esc(say(s, "meetingLinkPending"))}</span>`) : ""}
${b.guests.length > 0 ? row(say(s, "labelGuests"), esc(b.guests.join(", "))) : ""}
${b.otherAttendees.length > 0 ? row(say(s, "labelOtherAttendees"), `<span data-other-attendees>${esc(b.otherAttendees.join(", "))}</span>`) : ""}
${b.cancelReason ? row(say(s, "labelReason"), esc(b.cancelReason)) : ""}
</dl>
${b.status === "confirmed" ? addToCalendarHtml(b.calendar, `/booking/${encodeURIComponent(b.privateKey)}/invite.ics`, s) : ""}
${b.status === "confirmed" && b.reminders !== undefined ? remindersSwitch(s, b.privateKey, b.reminders) : ""}
${actions}
</section>`;
}

export interface AnswerView {
  speech: Speech;
  request: {
    status: string;
    eventName: string;
    attendeeName: string;
    attendeeEmail: string;
    start: Date;
    end: Date;
    /** The host's zone: the host reads the time as their own calendar shows it. */
    zone: string;
    location: string;
    guests: string[];
    /** The form's answers in its order, as text ("Yes", "a, b"). */
    answers: { question: string; text: string }[];
    answerBy: Date | undefined;
    cancelReason: string | undefined;
    /** Pending and still in time: its last minute's expiry may not have been written yet (it runs within 60 s). */
    answerable: boolean;
  };
  /** Where the page's forms post: the page's own path (the link's token in it), with its language. */
  action: string;
  /** What the host's last answer did (after the POST's 303), or that the request was no longer pending. */
  done: AnswerDone | undefined;
}

export const ANSWER_DONE = ["confirmed", "declined", "not_pending"] as const;
type AnswerDone = (typeof ANSWER_DONE)[number];

const ANSWER_DONE_WORDS: Record<AnswerDone, PageKey> = { confirmed: "answerConfirmedDone", declined: "answerDeclinedDone", not_pending: "answerNotPending" };

/**
 * The host's answer page of a request (reached only through their request e-mail's link): the request as the
 * manage page shows a booking, and while it is pending two plain forms, Confirm and Decline with a reason, which
 * post to the page itself (no script). Once answered or expired: its status, and no buttons.
 */
export function answerBody(v: AnswerView): string {
  const s = v.speech;
  const r = v.request;
  const attendee = { attendee: r.attendeeName };
  const pending = r.answerable;
  const done = v.done ? `<p class="notice${v.done === "not_pending" ? "" : " success"}" role="status" data-done="${v.done}">${esc(say(s, ANSWER_DONE_WORDS[v.done], attendee))}</p>` : "";
  const closed = !pending && !v.done ? `<p class="notice">${esc(say(s, "answerClosed"))}</p>` : "";
  const forms = pending
    ? `<form method="post" action="${esc(v.action)}"><input type="hidden" name="answer" value="confirm">
<div class="actions"><button type="submit" class="primary" data-action="confirm-request">${esc(say(s, "answerConfirm"))}</button></div></form>
<form method="post" action="${esc(v.action)}"><input type="hidden" name="answer" value="decline">
<label for="reason">${esc(say(s, "declineReason", attendee))}</label>
<textarea id="reason" name="reason" rows="3" maxlength="500"></textarea>
<div class="actions"><button type="submit" class="danger" data-action="decline-request">${esc(say(s, "answerDecline"))}</button></div></form>`
    : "";
  return `<section class="manage" data-request-status="${esc(r.status)}" aria-labelledby="answer-heading">
<h1 id="answer-heading">${esc(say(s, "answerHeading"))}</h1>
${done}${closed}
<dl class="facts">
${row(say(s, "labelStatus"), esc(say(s, STATUS_WORDS[r.status] ?? "statusRescheduled")))}
<div><dt class="sr-only">${esc(r.eventName)}</dt><dd class="event-name"><bdi>${esc(r.eventName)}</bdi></dd></div>
${row(say(s, "labelRequestedBy"), `<bdi>${esc(r.attendeeName)}</bdi> &lt;<bdi><a href="mailto:${esc(r.attendeeEmail)}">${esc(r.attendeeEmail)}</a></bdi>&gt;`)}
${row(say(s, "labelWhen"), esc(whenLine(r.start, r.end, r.zone, s)))}
${row(say(s, "labelTimeZone"), esc(meetingZoneLabel(r.zone, s.locale, r.start)))}
${row(say(s, "labelLocation"), esc(r.location))}
${r.guests.length > 0 ? row(say(s, "labelGuests"), esc(r.guests.join(", "))) : ""}
${r.answers.map((a) => `<div><dt><bdi>${esc(a.question)}</bdi></dt><dd><bdi>${esc(a.text)}</bdi></dd></div>`).join("\n")}
${pending && r.answerBy ? row(say(s, "labelAnswerBy"), esc(momentLine(r.answerBy, r.zone, s))) : ""}
${r.cancelReason && r.status !== "expired" ? row(say(s, "labelReason"), `<bdi>${esc(r.cancelReason)}</bdi>`) : ""}
</dl>
${forms}
</section>`;
}

export function messageBody(heading: string, text: string): string {
  return `<section class="message"><h1>${esc(heading)}</h1><p>${esc(text)}</p></section>`;
}
