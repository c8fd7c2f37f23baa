// A reminder's e-mail as words (pure): its {{variables}} for one reader, the host's subject and body filled with them, in the booking mails' frame.
import { localeOf, whenParts } from "../../i18n/index.js";
import { mailMessages } from "../../i18n/mail.js";
import { fillTemplate, inertText, type Recipient, type ReminderFields, type VariableValues } from "../../domain/reminder.js";
import { oneLine } from "../../domain/bookingEvent.js";
import { answerPairs, detailRows, htmlPart, mailWords, placeWords, plainText, shortWhen, type MailBooking, type Parts, type RenderedMail } from "./render.js";

/** The localized defaults of a reminder without a subject or body of its own, in the host's locale. */
export function defaultReminderTexts(locale: string, timing: ReminderFields["timing"]): { subject: string; body: string } {
  const words = mailMessages[localeOf(locale)];
  return { subject: words.reminderSubject, body: timing === "before_start" ? words.reminderBodyBefore : words.reminderBodyAfter };
}

/**
 * The booking with everything its booker typed (name, address, guests, answers) made inert for link detection
 * (src/domain/reminder.ts inertText), so no part of a reminder turns it into a link.
 */
function inertBooking(b: MailBooking): MailBooking {
  return {
    ...b,
    attendee: { ...b.attendee, name: inertText(b.attendee.name), email: inertText(b.attendee.email) },
    guests: b.guests.map(inertText),
    answers: b.answers.map((a) => ({ question: a.question, value: typeof a.value === "string" ? inertText(a.value) : Array.isArray(a.value) ? a.value.map((v) => (typeof v === "string" ? inertText(v) : v)) : a.value })),
  };
}

/**
 * The values of the variables for one reader: times in the reader's zone and the host's formats with the zone's
 * short name ("06/07/2026 09:30 CEST"; `timezone` is the long one), the manage link for the booker only, the answers
 * for the host only.
 */
export function reminderVariables(reader: Recipient, b: MailBooking): VariableValues {
  const w = mailWords(reader, b);
  const answers = reader === "host" ? answerPairs(b, w.say).map((a) => w.say("row", { label: a.question, value: a.text })) : [];
  return {
    attendee_name: w.params.attendee,
    host_name: w.params.host,
    event_name: w.params.event,
    start_time: shortWhen(b.start, w),
    end_time: shortWhen(b.end, w),
    timezone: whenParts(b.start, b.end, w.locale, w.time).zone,
    location: placeWords(b, w) ?? "",
    meeting_url: b.meetingUrl ?? "",
    manage_url: reader === "booker" ? b.manageUrl : "",
    answers: answers.join("\n"),
  };
}

/** One line per value in a subject: a multi-line answer must not reach a header as more than one line. */
function oneLineValues(values: VariableValues): VariableValues {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, oneLine(v)])) as unknown as VariableValues;
}

/**
 * The mail of one reminder for one reader: the host's subject and body (or the localized defaults) with the
 * variables filled as text (what the booker typed made inert for link detection), then the details (time in the reader's zone, place, meeting link), the booker's manage
 * button, the invitation note and a footer; a booker's mail ends with the unsubscribe link when there is one.
 */
export function renderReminderMail(
  reader: Recipient,
  typed: MailBooking,
  reminder: Pick<ReminderFields, "timing" | "subject" | "body">,
  unsubscribeUrl?: string,
): RenderedMail {
  const b = inertBooking(typed);
  const w = mailWords(reader, b);
  const { say, params, locale } = w;
  const defaults = defaultReminderTexts(locale, reminder.timing);
  const values = reminderVariables(reader, b);
  const subject = oneLine(fillTemplate(reminder.subject ?? defaults.subject, oneLineValues(values)));
  const body = fillTemplate(reminder.body ?? defaults.body, values);
  const parts: Parts = {
    greeting: undefined,
    intro: undefined,
    body,
    rows: detailRows(reader, { type: "created" }, b, w),
    answers: [],
    answersLabel: say("labelAnswers"),
    manage: reader === "booker" ? { text: say("manageText"), link: say("manageLink") } : undefined,
    manageUrl: b.manageUrl,
    note: say("inviteRequest"),
    footer: say(reader === "booker" ? "footerReminderBooker" : "footerReminderHost", params),
    ...(reader === "booker" && unsubscribeUrl !== undefined ? { unsubscribe: { text: say("unsubscribeText"), link: say("unsubscribeLink"), url: unsubscribeUrl } } : {}),
    row: (label, value) => say("row", { label, value }),
  };
  return { subject, text: plainText(parts), html: htmlPart({ ...parts, locale, subject }), locale };
}
