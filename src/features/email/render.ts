// The booking e-mails as words (pure): subject, plain text and HTML for the booker, the guests and the host, each in the reader's language.
import { direction, fill, localeOf, whenParts, zoneShortName, type Locale, type Params, type TimeSettings } from "../../i18n/index.js";
import { mailMessages, type MailKey } from "../../i18n/mail.js";
import { locationWords, oneLine } from "../../domain/bookingEvent.js";
import { publicLocation } from "../../domain/event.js";
import { escapeHtml } from "../../domain/html.js";

/** Who a mail is for: each group gets its own message (only the booker's holds the manage link). */
export type Audience = "booker" | "guests" | "host";

export type MailChange =
  | { type: "created" }
  /** `movedBy` the host: the booker and guests are told so, with the host's `reason` if given (booking-kinds.md "The host's desk"). */
  | { type: "rescheduled"; previous: { start: Date; end: Date }; movedBy?: "host" | "booker"; reason?: string | null }
  | { type: "canceled"; canceledBy: "host" | "booker" }
  // A request waiting for the host (booking-kinds.md), and its end without a meeting: declined, or expired unanswered.
  | { type: "requested" }
  | { type: "declined"; expired: boolean }
  /** A team booking given to another host (teams.md): `away` is the mail to the host it was taken from. */
  | { type: "reassigned"; away: boolean };

/** Who is written to about each change: a request's answer goes to the booker alone; guests hear of a request once it is confirmed. */
export const AUDIENCES_OF: Record<MailChange["type"], readonly Audience[]> = {
  created: ["booker", "guests", "host"],
  rescheduled: ["booker", "guests", "host"],
  canceled: ["booker", "guests", "host"],
  requested: ["booker", "host"],
  declined: ["booker"],
  reassigned: ["booker", "guests", "host"],
};

interface MailLocation {
  name: string;
  details?: string | null;
  selected_option?: string | null;
  host_contact_number?: string | null;
}

/** Everything a booking mail shows, read from the booking, its event, the host and the form questions. */
export interface MailBooking {
  eventName: string;
  host: {
    name: string;
    /** The stored locale; anything outside the list reads as English. */
    locale: string;
    /** IANA zone. */
    zone: string;
    dateFormat: string;
    timeFormat: string;
  };
  attendee: {
    name: string;
    email: string;
    /** The zone given when booking (IANA), if any. */
    zone: string | null;
    /** The language the booker booked in, if known: the booker's and the guests' mails speak it (else the host's). */
    locale?: string | null;
  };
  guests: readonly string[];
  start: Date;
  end: Date;
  location: MailLocation;
  meetingUrl: string | null;
  /** A provider was to make the meeting link but has not (still pending after the wait, or failed): the host sends it. */
  meetingLinkMissing?: boolean;
  /** Answers in form order, with the question's title. */
  answers: readonly { question: string; value: unknown }[];
  cancelReason: string | null;
  /** `{APP_URL}/booking/<private_key>` of the booking as it is now (the new one after a reschedule). */
  manageUrl: string;
  /** A request: when it expires unanswered, and (the host's request mail) the page where the host answers it. */
  request?: { answerBy: Date; answerUrl?: string };
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
  locale: Locale;
}

function isHttpUrl(value: string): boolean {
  return /^https?:\/\/[^\s<>"]+$/i.test(value);
}

/** One row of the details: its label, and either text (may hold line breaks) or a link. */
interface Row {
  label: string;
  text: string;
  href?: string;
  struck?: boolean;
}

function answerText(value: unknown, say: (key: MailKey) => string): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "boolean") return say(value ? "answerYes" : "answerNo");
  if (typeof value === "string") return value.trim();
  if (typeof value === "number") return String(value);
  if (Array.isArray(value)) return value.map((v) => answerText(v, say)).filter((v) => v !== "").join(", ");
  return JSON.stringify(value);
}

/** The names the sentences mention, each kept to one line. */
function namesOf(b: MailBooking): { event: string; host: string; attendee: string } {
  return { event: oneLine(b.eventName), host: oneLine(b.host.name), attendee: oneLine(b.attendee.name) };
}


function subjectKey(change: MailChange, audience: Audience): MailKey {
  switch (change.type) {
    case "created":
      return ({ booker: "subjectConfirmedBooker", guests: "subjectConfirmedGuest", host: "subjectConfirmedHost" } as const)[audience];
    case "rescheduled":
      return audience === "host" ? "subjectRescheduledHost" : "subjectRescheduledBooker";
    case "canceled":
      return audience === "host" ? "subjectCanceledHost" : "subjectCanceledBooker";
    case "requested":
      return audience === "host" ? "subjectRequestedHost" : "subjectRequestedBooker";
    case "declined":
      return change.expired ? "subjectExpiredBooker" : "subjectDeclinedBooker";
    case "reassigned":
      if (change.away) return "subjectReassignedAway";
      return audience === "host" ? "subjectConfirmedHost" : "subjectReassignedBooker";
  }
}

function introKey(change: MailChange, audience: Audience): MailKey {
  switch (change.type) {
    case "created":
      return ({ booker: "introConfirmedBooker", guests: "introConfirmedGuest", host: "introConfirmedHost" } as const)[audience];
    case "rescheduled":
      return change.movedBy === "host"
        ? ({ booker: "introRescheduledBookerByHost", guests: "introRescheduledGuestByHost", host: "introRescheduledHostByHost" } as const)[audience]
        : ({ booker: "introRescheduledBooker", guests: "introRescheduledGuest", host: "introRescheduledHost" } as const)[audience];
    case "reassigned":
      if (change.away) return "introReassignedAway";
      return ({ booker: "introReassignedBooker", guests: "introReassignedGuest", host: "introReassignedHost" } as const)[audience];
    case "canceled":
      return change.canceledBy === "host"
        ? ({ booker: "introCanceledBookerByHost", guests: "introCanceledGuestByHost", host: "introCanceledHostByHost" } as const)[audience]
        : ({ booker: "introCanceledBookerByBooker", guests: "introCanceledGuestByBooker", host: "introCanceledHostByBooker" } as const)[audience];
    case "requested":
      return audience === "host" ? "introRequestedHost" : "introRequestedBooker";
    case "declined":
      return change.expired ? "introExpiredBooker" : "introDeclinedBooker";
  }
}

const FOOTERS: Record<Audience, MailKey> = { booker: "footerBooker", guests: "footerGuest", host: "footerHost" };

const INVITE_NOTES: Record<Exclude<MailChange["type"], "reassigned">, MailKey> = { created: "inviteRequest", rescheduled: "inviteRescheduled", canceled: "inviteCancel", requested: "inviteAfterConfirm", declined: "inviteNone" };

/** Changes whose time is off: shown struck through, with the reason given. */
const ENDED: readonly MailChange["type"][] = ["canceled", "declined"];
const inviteNote = (change: MailChange): MailKey => (change.type === "reassigned" ? (change.away ? "inviteCancel" : "inviteRequest") : INVITE_NOTES[change.type]);

/** Whether the mail tells its reader the booking no longer holds their time: ended, or taken from this host. */
const endsForReader = (change: MailChange): boolean => ENDED.includes(change.type) || (change.type === "reassigned" && change.away);

/** The zone a reader sees times in: the booker's (and guests') own when given at booking, else the host's. */
function readerZone(audience: Audience, b: MailBooking): string {
  return audience === "host" ? b.host.zone : (b.attendee.zone ?? b.host.zone);
}

/** The language a reader is written to in: the host's own for the host, the booking's (the booker's) for the others. */
function readerLocale(audience: Audience, b: MailBooking): Locale {
  return localeOf(audience === "host" ? b.host.locale : (b.attendee.locale ?? b.host.locale));
}

/** What the words of one mail need: its locale, the lookup, the reader's time settings and the names. */
export interface MailWords {
  locale: Locale;
  words: (typeof mailMessages)[Locale];
  say: (key: MailKey, p?: Params) => string;
  time: TimeSettings;
  params: { event: string; host: string; attendee: string };
}

export function mailWords(audience: Audience, b: MailBooking): MailWords {
  const locale = readerLocale(audience, b);
  const words = mailMessages[locale];
  return {
    locale,
    words,
    say: (key, p) => fill(words[key], p),
    time: { zone: readerZone(audience, b), dateFormat: b.host.dateFormat, timeFormat: b.host.timeFormat },
    params: namesOf(b),
  };
}

/** Where the meeting is, in the reader's words (a booking with a meeting link is a video conference). */
export function placeWords(b: MailBooking, w: MailWords): string | undefined {
  return locationWords(publicLocation(b.location), b.meetingUrl, { host: b.host.name, attendee: b.attendee.name }, w.words);
}

/** The details block: event, time (and the old one), zone, place, meeting link, who else; a cancellation's reason. */
export function detailRows(audience: Audience, change: MailChange, b: MailBooking, w: MailWords): Row[] {
  const { say, params, locale, time } = w;
  const now = whenParts(b.start, b.end, locale, time);
  const rows: Row[] = [
    { label: say("labelEvent"), text: params.event },
    { label: say("labelWhen"), text: say("when", { ...now }), struck: endsForReader(change) },
  ];
  if (change.type === "rescheduled") {
    const before = whenParts(change.previous.start, change.previous.end, locale, time);
    rows.push({ label: say("labelPreviousTime"), text: say("when", { ...before }), struck: true });
  }
  rows.push({ label: say("labelTimeZone"), text: now.zone });
  const where = placeWords(b, w);
  if (where !== undefined && where !== "") rows.push({ label: say("labelWhere"), text: where });
  if (b.meetingUrl && isHttpUrl(b.meetingUrl) && !endsForReader(change)) {
    rows.push({ label: say("labelMeetingLink"), text: b.meetingUrl, href: b.meetingUrl });
  } else if (b.meetingLinkMissing && !endsForReader(change)) {
    rows.push({ label: say("labelMeetingLink"), text: say("meetingLinkFollows", params) });
  }
  if (audience === "host") {
    rows.push({ label: say("labelBookedBy"), text: `${params.attendee} <${oneLine(b.attendee.email)}>` });
    if (b.guests.length > 0) rows.push({ label: say("labelGuests"), text: b.guests.map(oneLine).join(", ") });
  } else {
    rows.push({ label: say("labelHost"), text: params.host });
  }
  if (change.type === "requested" && b.request) {
    rows.push({ label: say("labelAnswerBy"), text: shortWhen(b.request.answerBy, w) });
    if (audience === "host" && b.request.answerUrl) rows.push({ label: say("answerLink"), text: b.request.answerUrl, href: b.request.answerUrl });
  }
  if (change.type === "declined" && !change.expired && b.cancelReason !== null && b.cancelReason.trim() !== "") {
    rows.push({ label: say("labelCancelReason"), text: b.cancelReason.trim() });
  }
  if (change.type === "canceled" && b.cancelReason !== null && b.cancelReason.trim() !== "") {
    rows.push({ label: say("labelCancelReason"), text: b.cancelReason.trim() });
  }
  if (change.type === "rescheduled" && change.reason != null && change.reason.trim() !== "") {
    rows.push({ label: say("labelRescheduleReason"), text: change.reason.trim() });
  }
  return rows;
}

/** The start as an inbox line shows it: date, time and the zone's short name, in the reader's zone. */
export function shortWhen(at: Date, w: MailWords): string {
  const parts = whenParts(at, at, w.locale, w.time);
  return `${parts.date} ${parts.start} ${zoneShortName(at, w.locale, w.time.zone)}`;
}

/** The answers as "question: answer" pairs, in form order, unanswered ones left out. */
export function answerPairs(b: MailBooking, say: (key: MailKey) => string): { question: string; text: string }[] {
  return b.answers.map((a) => ({ question: oneLine(a.question), text: answerText(a.value, say) })).filter((a) => a.text !== "");
}

export function renderMail(audience: Audience, change: MailChange, b: MailBooking): RenderedMail {
  const w = mailWords(audience, b);
  const { say, params, locale } = w;
  // The reader's zone, as in the body, but short: an inbox line has no room for "Central European Summer Time".
  const subject = oneLine(say(subjectKey(change, audience), { ...params, when: shortWhen(b.start, w) }));
  const rows = detailRows(audience, change, b, w);
  const answers = audience === "host" ? answerPairs(b, say) : [];

  // After a cancellation there is nothing left to reschedule: the booker's link then only shows the booking.
  const manage = audience !== "booker" ? undefined : ENDED.includes(change.type) || change.type === "requested" ? { text: undefined, link: say("viewLink") } : { text: say("manageText"), link: say("manageLink") };
  const greetingName = audience === "booker" ? params.attendee : audience === "host" ? params.host : undefined;
  const greeting = greetingName === undefined ? undefined : say("greeting", { name: greetingName });
  const intro = say(introKey(change, audience), params);
  const note = say(inviteNote(change));
  const footer = say(FOOTERS[audience], params);

  const row = (label: string, value: string): string => say("row", { label, value });
  const parts: Parts = { greeting, intro, rows, answers, answersLabel: say("labelAnswers"), manage, manageUrl: b.manageUrl, note, footer, row };
  const text = plainText(parts);
  const html = htmlPart({ ...parts, locale, subject });
  return { subject, text, html, locale };
}

export interface Parts {
  greeting: string | undefined;
  /** The opening sentence, in bold; undefined: none (a reminder opens with its body). */
  intro: string | undefined;
  /** Text of several lines and paragraphs after the intro (a reminder's body), plain. */
  body?: string;
  rows: Row[];
  answers: { question: string; text: string }[];
  answersLabel: string;
  manage: { text: string | undefined; link: string } | undefined;
  manageUrl: string;
  note: string;
  footer: string;
  /** A booker's reminder: the one-click unsubscribe link (the same URL as its List-Unsubscribe header). */
  unsubscribe?: { text: string; link: string; url: string };
  /** "label: value" as the locale writes it (French puts a space before the colon, Japanese a full-width one). */
  row: (label: string, value: string) => string;
}

/** Continuation lines of a multi-line value are indented, so they cannot pass for a row or a paragraph of ours. */
function indentLines(value: string): string {
  return value.replace(/\r\n|\r|\n/g, "\n    ");
}

export function plainText(p: Parts): string {
  const out: string[] = [];
  if (p.greeting) out.push(p.greeting, "");
  if (p.intro !== undefined) out.push(p.intro, "");
  if (p.body !== undefined) out.push(p.body.replace(/\r\n|\r/g, "\n"), "");
  for (const r of p.rows) out.push(p.row(r.label, indentLines(r.text)));
  if (p.answers.length > 0) {
    out.push("", p.answersLabel);
    for (const a of p.answers) out.push(`- ${p.row(a.question, indentLines(a.text))}`);
  }
  if (p.manage) {
    out.push("");
    if (p.manage.text) out.push(p.manage.text);
    out.push(p.row(p.manage.link, p.manageUrl));
  }
  out.push("", p.note, "", "-- ", p.footer);
  if (p.unsubscribe) out.push(p.unsubscribe.text, p.row(p.unsubscribe.link, p.unsubscribe.url));
  out.push("");
  return out.join("\n");
}

const multiline = (value: string): string => escapeHtml(value).replace(/\r\n|\r|\n/g, "<br>");

/** A plain text of paragraphs (blank lines between them) as HTML paragraphs, every character of it escaped. */
function paragraphs(text: string): string {
  return text
    .replace(/\r\n|\r/g, "\n")
    .split(/\n[^\S\n]*\n/)
    .map((para) => para.replace(/^\n+|\n+$/g, ""))
    .filter((para) => para.trim() !== "")
    .map((para) => `<p style="margin:0 0 12px">${multiline(para)}</p>`)
    .join("\n");
}

export function htmlPart(p: Parts & { locale: Locale; subject: string }): string {
  const dir = direction(p.locale);
  // Many mail clients ignore `text-align: start`, so the side is spelt out.
  const align = dir === "rtl" ? "right" : "left";
  const cell = `padding:6px 0;vertical-align:top`;
  const head = `padding:6px 16px 6px 0;vertical-align:top;color:#5f6368;font-weight:normal;text-align:${align};white-space:nowrap`;
  const headRtl = dir === "rtl" ? head.replace("padding:6px 16px 6px 0", "padding:6px 0 6px 16px") : head;
  const rows = p.rows
    .map((r) => {
      const value = r.href ? `<a href="${escapeHtml(r.href)}">${escapeHtml(r.text)}</a>` : multiline(r.text);
      return `<tr><th scope="row" style="${headRtl}">${escapeHtml(r.label)}</th><td style="${cell}">${r.struck ? `<s>${value}</s>` : value}</td></tr>`;
    })
    .join("\n");
  const answers =
    p.answers.length === 0
      ? ""
      : `<h2 style="font-size:15px;margin:24px 0 8px">${escapeHtml(p.answersLabel)}</h2>\n<dl style="margin:0">${p.answers
          .map((a) => `<dt style="color:#5f6368;margin-top:8px">${escapeHtml(a.question)}</dt><dd style="margin:2px 0 0">${multiline(a.text)}</dd>`)
          .join("")}</dl>`;
  // The manage link as a button: a styled link in a one-cell table, the form mail clients render alike (Outlook
  // ignores padding on links, hence the cell's colour too); white on #0b57d0 is 6.6:1.
  const manage = p.manage
    ? `${p.manage.text ? `<p style="margin:24px 0 12px">${escapeHtml(p.manage.text)}</p>` : `<div style="height:24px;line-height:24px">&nbsp;</div>`}
<table role="presentation" border="0" cellspacing="0" cellpadding="0" style="border-collapse:separate"><tr><td align="center" bgcolor="#0b57d0" style="border-radius:6px;background:#0b57d0"><a href="${escapeHtml(p.manageUrl)}" target="_blank" data-action="manage" style="display:inline-block;padding:12px 24px;border:1px solid #0b57d0;border-radius:6px;background:#0b57d0;color:#ffffff;font-size:15px;font-weight:bold;line-height:20px;text-decoration:none">${escapeHtml(p.manage.link)}</a></td></tr></table>`
    : "";
  return `<!doctype html>
<html lang="${p.locale}" dir="${dir}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(p.subject)}</title></head>
<body style="margin:0;padding:24px;background:#f4f4f5;font-family:-apple-system,'Segoe UI',Roboto,Arial,sans-serif;font-size:15px;line-height:1.5;color:#202124">
<div dir="${dir}" style="max-width:560px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px;text-align:${align}">
${p.greeting ? `<p style="margin:0 0 12px">${escapeHtml(p.greeting)}</p>\n` : ""}${p.intro !== undefined ? `<p style="margin:0 0 16px;font-size:17px"><strong>${escapeHtml(p.intro)}</strong></p>` : ""}${p.body !== undefined ? `<div style="margin:0 0 16px">${paragraphs(p.body)}</div>` : ""}
<table role="presentation" style="border-collapse:collapse">
${rows}
</table>
${answers}${manage}
<p style="margin:24px 0 0;color:#5f6368;font-size:13px">${escapeHtml(p.note)}</p>
<p style="margin:16px 0 0;color:#80868b;font-size:12px">${escapeHtml(p.footer)}</p>${
    p.unsubscribe
      ? `\n<p style="margin:8px 0 0;color:#80868b;font-size:12px">${escapeHtml(p.unsubscribe.text)} <a href="${escapeHtml(p.unsubscribe.url)}" data-action="unsubscribe" style="color:#5f6368">${escapeHtml(p.unsubscribe.link)}</a></p>`
      : ""
  }
</div>
</body>
</html>
`;
}
