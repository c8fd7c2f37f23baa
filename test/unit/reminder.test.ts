// Unit tests of the reminder rules (fields, limits, variables, due times, what a delivery becomes) and of a reminder's e-mail words in every locale.
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/domain/errors.js";
import {
  REMINDER_BODY_MAX,
  REMINDER_CHANNELS,
  REMINDER_OFFSET_MAX,
  REMINDER_SUBJECT_MAX,
  REMINDER_TIMINGS,
  REMINDER_VARIABLES,
  checkNewReminder,
  checkReminderUpdate,
  deliveryDueAt,
  fillTemplate,
  inertText,
  isTooLate,
  planDelivery,
  shownStatus,
  templateVariables,
  type ReminderVariable,
} from "../../src/domain/reminder.js";
import { defaultReminderTexts, renderReminderMail, reminderVariables } from "../../src/features/email/reminder.js";
import type { MailBooking } from "../../src/features/email/render.js";
import { LOCALES } from "../../src/i18n/index.js";
import { mailMessages } from "../../src/i18n/mail.js";

/** The 422 a check throws: its message and data. */
function refusal(fn: () => unknown): { message: string; data: Record<string, unknown> } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return { message: err.rawMessage, data: err.data };
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("a reminder's fields", () => {
  it("defaults: booker, email, localized texts (null), active", () => {
    expect(checkNewReminder({ timing: "before_start", offsetMinutes: 60 })).toEqual({
      timing: "before_start",
      offset_minutes: 60,
      recipients: "booker",
      channel: "email",
      subject: null,
      body: null,
      active: true,
    });
  });

  it("refuses values outside the lists, naming the field and what it takes", () => {
    expect(refusal(() => checkNewReminder({ timing: "during", offsetMinutes: 5 }))).toEqual({ message: "timing is not included in the list", data: { field: "timing", allowed: [...REMINDER_TIMINGS] } });
    expect(refusal(() => checkReminderUpdate({ recipients: "guests" })).data).toEqual({ field: "recipients", allowed: ["booker", "host", "both"] });
    expect(refusal(() => checkReminderUpdate({ channel: "sms" })).data).toEqual({ field: "channel", allowed: [...REMINDER_CHANNELS] });
  });

  it("takes offsets from 0 to 30 days in whole minutes", () => {
    expect(checkReminderUpdate({ offsetMinutes: 0 })).toEqual({ offset_minutes: 0 });
    expect(checkReminderUpdate({ offsetMinutes: REMINDER_OFFSET_MAX })).toEqual({ offset_minutes: 43_200 });
    for (const bad of [-1, REMINDER_OFFSET_MAX + 1, 1.5]) {
      expect(refusal(() => checkReminderUpdate({ offsetMinutes: bad })).message).toBe("offset_minutes must be between 0 and 43200");
    }
  });

  it("limits subject and body in characters (not UTF-16 units), and an empty one is the default again", () => {
    expect(checkReminderUpdate({ subject: "😀".repeat(REMINDER_SUBJECT_MAX) }).subject).toHaveLength(400);
    expect(refusal(() => checkReminderUpdate({ subject: "x".repeat(REMINDER_SUBJECT_MAX + 1) })).message).toBe("subject is too long (maximum is 200 characters)");
    expect(refusal(() => checkReminderUpdate({ body: "x".repeat(REMINDER_BODY_MAX + 1) })).message).toBe("body is too long (maximum is 5000 characters)");
    expect(checkReminderUpdate({ subject: "  ", body: "" })).toEqual({ subject: null, body: null });
  });
});

describe("variables", () => {
  it("knows the spec's names, with or without spaces inside the braces", () => {
    expect(templateVariables("Hi {{attendee_name}}, {{ event_name }} at {{start_time}} ({{attendee_name}})")).toEqual(["attendee_name", "event_name", "start_time"]);
    const all = REMINDER_VARIABLES.map((v) => `{{${v}}}`).join(" ");
    expect(checkReminderUpdate({ body: all }).body).toBe(all);
  });

  it("refuses any other name: 422 unknown variable <name> with the field and the allowed names", () => {
    expect(refusal(() => checkReminderUpdate({ body: "Hello {{first_name}}" }))).toEqual({
      message: "unknown variable first_name",
      data: { field: "body", allowed: [...REMINDER_VARIABLES] },
    });
    expect(refusal(() => checkReminderUpdate({ subject: "{{ attendee_name }} {{ Attendee_Name }}" })).message).toBe("unknown variable Attendee_Name");
    // One brace is text, as are unclosed pairs.
    expect(checkReminderUpdate({ body: "{single} {{ not closed" }).body).toBe("{single} {{ not closed");
  });

  it("fills each variable once, and never reads a value for variables", () => {
    const values = Object.fromEntries(REMINDER_VARIABLES.map((v) => [v, `<${v}>`])) as Record<ReminderVariable, string>;
    values.attendee_name = "{{manage_url}}";
    expect(fillTemplate("{{attendee_name}} / {{ manage_url }} / {{event_name}}", values)).toBe("{{manage_url}} / <manage_url> / <event_name>");
  });

  it("makes a booker's text inert for link detection without changing what it reads", () => {
    const inert = inertText("Ada https://evil.example/x ada@evil.example");
    expect(inert.replace(/\u200B/g, "")).toBe("Ada https://evil.example/x ada@evil.example");
    expect(inert).not.toMatch(/https?:\/\//);
    expect(inert).not.toMatch(/[a-z]\.[a-z]/);
  });
});

describe("deliveries", () => {
  const booking = { status: "confirmed", start: new Date("2030-01-07T10:00:00Z"), end: new Date("2030-01-07T10:30:00Z") };
  const reminder = { timing: "before_start" as const, offset_minutes: 60, active: true };

  it("fall due offset before the start or after the end", () => {
    expect(deliveryDueAt(reminder, booking).toISOString()).toBe("2030-01-07T09:00:00.000Z");
    expect(deliveryDueAt({ timing: "after_end", offset_minutes: 1440 }, booking).toISOString()).toBe("2030-01-08T10:30:00.000Z");
  });

  it("are skipped when already due when planned, canceled for a reminder switched off or a booking no longer confirmed", () => {
    expect(planDelivery(reminder, booking, new Date("2030-01-07T08:00:00Z")).status).toBe("scheduled");
    // A 24-hour reminder for a meeting booked 2 hours ahead is not sent.
    expect(planDelivery({ ...reminder, offset_minutes: 1440 }, booking, new Date("2030-01-07T08:00:00Z")).status).toBe("skipped");
    expect(planDelivery({ ...reminder, active: false }, booking, new Date("2030-01-01T00:00:00Z")).status).toBe("canceled");
    expect(planDelivery({ ...reminder, deleted: true }, booking, new Date("2030-01-01T00:00:00Z")).status).toBe("canceled");
    expect(planDelivery(reminder, { ...booking, status: "rescheduled" }, new Date("2030-01-01T00:00:00Z")).status).toBe("canceled");
  });

  it("are too late past the limit", () => {
    const due = new Date("2030-01-07T09:00:00Z");
    expect(isTooLate(due, new Date("2030-01-07T10:00:00Z"), 60)).toBe(false);
    expect(isTooLate(due, new Date("2030-01-07T10:00:01Z"), 60)).toBe(true);
  });

  it("show as what will become of them", () => {
    const d = { status: "scheduled" as const, recipients: "booker" as const, channel: "email" as const };
    const confirmed = { status: "confirmed", remindersUnsubscribed: false };
    expect(shownStatus(d, confirmed)).toBe("scheduled");
    expect(shownStatus({ ...d, status: "sending" }, confirmed)).toBe("scheduled");
    expect(shownStatus(d, { status: "canceled", remindersUnsubscribed: false })).toBe("canceled");
    expect(shownStatus(d, { ...confirmed, remindersUnsubscribed: true })).toBe("unsubscribed");
    // The host's part of "both", and webhooks, still go.
    expect(shownStatus({ ...d, recipients: "both" }, { ...confirmed, remindersUnsubscribed: true })).toBe("scheduled");
    expect(shownStatus({ ...d, channel: "webhook" }, { ...confirmed, remindersUnsubscribed: true })).toBe("scheduled");
    expect(shownStatus({ ...d, status: "sent" }, { status: "canceled", remindersUnsubscribed: true })).toBe("sent");
  });
});

const mailBooking = (over: Partial<MailBooking> = {}): MailBooking => ({
  eventName: "Intro call",
  host: { name: "Grace Hopper", locale: "en", zone: "Europe/Berlin", dateFormat: "31/12/2024", timeFormat: "24_hours" },
  attendee: { name: "Ada Lovelace", email: "ada@example.com", zone: "America/New_York" },
  guests: ["bob@example.com"],
  start: new Date("2026-07-06T13:30:00Z"),
  end: new Date("2026-07-06T14:00:00Z"),
  location: { name: "in_person", details: "Main St 1" },
  meetingUrl: null,
  answers: [{ question: "Topic?", value: "see https://evil.example" }],
  cancelReason: null,
  manageUrl: "https://app.example.com/booking/KEY123",
  ...over,
});

describe("a reminder's e-mail", () => {
  const defaults = { timing: "before_start" as const, subject: null, body: null };

  it("gives each reader the times in their own zone, the host's formats, the manage link to the booker only", () => {
    const booker = reminderVariables("booker", mailBooking());
    expect(booker).toMatchObject({ start_time: "06/07/2026 09:30 EDT", end_time: "06/07/2026 10:00 EDT", timezone: "Eastern Daylight Time (America/New_York)", manage_url: "https://app.example.com/booking/KEY123", answers: "", location: "Main St 1" });
    const host = reminderVariables("host", mailBooking());
    expect(host).toMatchObject({ start_time: "06/07/2026 15:30 GMT+2", timezone: "Central European Summer Time (Europe/Berlin)", manage_url: "" });
    expect(host.answers).toBe("Topic?: see https://evil.example");
  });

  it("sends the default words, the details, a manage button and the unsubscribe link to the booker", () => {
    const m = renderReminderMail("booker", mailBooking({ meetingUrl: "https://meet.example/room", location: { name: "conference" } }), defaults, "https://app.example.com/booking/KEY123/unsubscribe");
    expect(m.subject).toBe("Reminder: Intro call 06/07/2026 09:30 EDT");
    expect(m.text).toContain("This is a reminder that Intro call starts on 06/07/2026 09:30 EDT.");
    expect(m.text).toContain("Meeting link: https://meet.example/room");
    expect(m.text).toContain("Reschedule or cancel: https://app.example.com/booking/KEY123");
    expect(m.text).toContain("Stop reminders for this booking: https://app.example.com/booking/KEY123/unsubscribe");
    expect(m.html).toContain('<a href="https://meet.example/room">');
    expect(m.html).toMatch(/<td [^>]*bgcolor="#0b57d0"[^>]*><a href="https:\/\/app\.example\.com\/booking\/KEY123" [^>]*data-action="manage"/);
    expect(m.html).toContain('href="https://app.example.com/booking/KEY123/unsubscribe" data-action="unsubscribe"');
    const host = renderReminderMail("host", mailBooking(), defaults);
    expect(host.text).not.toContain("KEY123");
    expect(host.html).not.toContain("KEY123");
  });

  it("keeps what the booker typed as text: escaped in HTML, no link, no second subject line", () => {
    const evil = '<a href="https://evil.example">click</a>\nBcc: x@evil.example';
    const reminder = { timing: "before_start" as const, subject: "Hi {{attendee_name}} {{answers}}", body: "Dear {{attendee_name}},\n\n{{answers}}" };
    const m = renderReminderMail("host", mailBooking({ attendee: { name: evil.replace("\n", " "), email: "a@b.c", zone: null }, answers: [{ question: "Q", value: evil }] }), reminder);
    expect(m.subject).not.toMatch(/[\r\n]/);
    expect(m.html).not.toContain("<a href=\"https://evil");
    expect(m.html).toContain("&lt;a href=&quot;https:");
    expect([...m.html.matchAll(/<a /g)]).toHaveLength(0);
    expect(m.text).not.toMatch(/https?:\/\/evil/);
  });

  it("speaks every locale, defaults included, with no variable or placeholder left", () => {
    for (const locale of LOCALES) {
      for (const timing of REMINDER_TIMINGS) {
        const b = mailBooking({ host: { ...mailBooking().host, locale } });
        for (const reader of ["booker", "host"] as const) {
          const m = renderReminderMail(reader, b, { timing, subject: null, body: null }, "https://app.example.com/booking/K/unsubscribe");
          expect(m.locale).toBe(locale);
          expect(m.subject).toContain("Intro call");
          for (const part of [m.subject, m.text, m.html]) expect(part, `${locale} ${timing} ${reader}`).not.toMatch(/\{\{|\}\}|\{\w+\}/);
          expect(m.text).toContain(mailMessages[locale].inviteRequest);
        }
        expect(defaultReminderTexts(locale, timing).body).toMatch(/\{\{event_name\}\}/);
      }
    }
  });

  it("writes to a booker who booked in another language in theirs, to the host in the host's", () => {
    const b = mailBooking({ attendee: { ...mailBooking().attendee, locale: "de" } });
    const booker = renderReminderMail("booker", b, defaults, "https://app.example.com/booking/K/unsubscribe");
    expect(booker.locale).toBe("de");
    expect(booker.subject).toMatch(/^Erinnerung: Intro call 06\/07\/2026 09:30 /);
    expect(renderReminderMail("host", b, defaults).locale).toBe("en");
  });
});
