// Unit tests of the booking e-mails' words: who sees what, in which zone and language, and data kept as data in HTML.
import { describe, expect, it } from "vitest";
import { mailMessages } from "../../src/i18n/mail.js";
import { renderMail, type MailBooking } from "../../src/features/email/render.js";

const booking = (over: Partial<MailBooking> = {}): MailBooking => ({
  eventName: "Intro call",
  host: { name: "Grace Hopper", locale: "en", zone: "Europe/Berlin", dateFormat: "31/12/2024", timeFormat: "24_hours" },
  attendee: { name: "Ada Lovelace", email: "ada@example.com", zone: "America/New_York" },
  guests: ["bob@example.com"],
  start: new Date("2026-07-06T13:30:00Z"),
  end: new Date("2026-07-06T14:00:00Z"),
  location: { name: "in_person", details: "Main St 1" },
  meetingUrl: null,
  answers: [
    { question: "What about?", value: "Compilers\nand more" },
    { question: "First time?", value: true },
    { question: "Topics", value: ["COBOL", "FLOW-MATIC"] },
    { question: "Unanswered", value: null },
  ],
  cancelReason: null,
  manageUrl: "https://app.example.com/booking/KEY123",
  ...over,
});

describe("renderMail: who sees what", () => {
  it("the booker: own zone, the host's formats, the manage link, no answers or guests", () => {
    const m = renderMail("booker", { type: "created" }, booking());
    // The subject carries the reader's zone, as the body does, in its short form.
    expect(m.subject).toBe("Confirmed: Intro call with Grace Hopper on 06/07/2026 09:30 EDT");
    expect(m.text).toContain("Hello Ada Lovelace,");
    expect(m.text).toContain("When: Monday, 06/07/2026, 09:30 – 10:00\nTime zone: Eastern Daylight Time (America/New_York)");
    expect(m.text).toContain("Where: Main St 1");
    expect(m.text).toContain("Host: Grace Hopper");
    expect(m.text).toContain("Reschedule or cancel: https://app.example.com/booking/KEY123");
    expect(m.html).toContain('href="https://app.example.com/booking/KEY123"');
    // In HTML the manage link is a button: a filled one-cell table around a padded link, as mail clients draw it.
    expect(m.html).toMatch(
      /<table role="presentation"[^>]*><tr><td [^>]*bgcolor="#0b57d0"[^>]*><a href="https:\/\/app\.example\.com\/booking\/KEY123" [^>]*style="display:inline-block;padding:12px 24px;[^"]*color:#ffffff;[^"]*">Reschedule or cancel<\/a><\/td><\/tr><\/table>/,
    );
    expect(m.html).toContain(`<p style="margin:24px 0 12px">${mailMessages.en.manageText}</p>`);
    for (const part of [m.text, m.html]) {
      expect(part).not.toContain("Compilers");
      expect(part).not.toContain("bob@example.com");
    }
  });

  it("the booker and the guests read the language the booker booked in; the host keeps the host's", () => {
    const b = booking({ attendee: { name: "Ada Lovelace", email: "ada@example.com", zone: "Europe/Berlin", locale: "de" } });
    const booker = renderMail("booker", { type: "created" }, b);
    expect(booker.locale).toBe("de");
    expect(booker.text).toContain(mailMessages.de.greeting.replace("{name}", "Ada Lovelace"));
    expect(booker.html).toContain('<html lang="de"');
    expect(renderMail("guests", { type: "created" }, b).locale).toBe("de");
    const host = renderMail("host", { type: "created" }, b);
    expect(host.locale).toBe("en");
    expect(host.text).toContain("Hello Grace Hopper,");
  });

  it("the booker without a zone of their own reads the host's", () => {
    const m = renderMail("booker", { type: "created" }, booking({ attendee: { name: "Ada", email: "ada@example.com", zone: null } }));
    expect(m.text).toContain("15:30 – 16:00\nTime zone: Central European Summer Time (Europe/Berlin)");
  });

  it("the host: the host's zone, who booked, guests and answers, no manage link", () => {
    const m = renderMail("host", { type: "created" }, booking());
    expect(m.subject).toBe("New booking: Intro call with Ada Lovelace on 06/07/2026 15:30 GMT+2");
    expect(m.text).toContain("Hello Grace Hopper,");
    expect(m.text).toContain("Booked by: Ada Lovelace <ada@example.com>");
    expect(m.text).toContain("Guests: bob@example.com");
    expect(m.text).toContain("- What about?: Compilers\n    and more");
    expect(m.text).toContain("- First time?: Yes");
    expect(m.text).toContain("- Topics: COBOL, FLOW-MATIC");
    expect(m.text).not.toContain("Unanswered");
    expect(m.text).not.toContain("KEY123");
    expect(m.html).not.toContain("KEY123");
    expect(m.html).not.toContain("<a href");
    expect(m.html).toContain("Compilers<br>and more");
  });

  it("the guests: invited by the booker, no greeting by name, no manage link", () => {
    const m = renderMail("guests", { type: "created" }, booking());
    expect(m.subject).toBe("Invitation: Intro call with Grace Hopper on 06/07/2026 09:30 EDT");
    expect(m.text.startsWith("Ada Lovelace has invited you to a meeting with Grace Hopper.")).toBe(true);
    expect(m.text).not.toContain("KEY123");
    expect(m.text).not.toContain("Compilers");
  });
});

describe("renderMail: changes", () => {
  it("a reschedule shows the new time and the previous one", () => {
    const previous = { start: new Date("2026-07-05T08:00:00Z"), end: new Date("2026-07-05T08:30:00Z") };
    const m = renderMail("host", { type: "rescheduled", previous }, booking());
    expect(m.subject).toBe("Rescheduled: Intro call with Ada Lovelace, now on 06/07/2026 15:30 GMT+2");
    expect(m.text).toContain("Previously: Sunday, 05/07/2026, 10:00 – 10:30");
    expect(m.html).toMatch(/<s>Sunday, 05\/07\/2026, 10:00 – 10:30/);
  });

  it("a reschedule by the host tells the booker, the guests and the host who moved it, with the host's reason", () => {
    const previous = { start: new Date("2026-07-05T08:00:00Z"), end: new Date("2026-07-05T08:30:00Z") };
    const change = { type: "rescheduled" as const, previous, movedBy: "host" as const, reason: "  Flight moved  " };
    const booker = renderMail("booker", change, booking());
    expect(booker.text).toContain("Grace Hopper has moved your booking to a new time.");
    expect(booker.text).toContain("Reason: Flight moved\n");
    expect(booker.html).toMatch(/<th [^>]*>Reason<\/th><td [^>]*>Flight moved<\/td>/);
    // Still movable by its booker: the manage link stays.
    expect(booker.text).toContain("Reschedule or cancel: https://app.example.com/booking/KEY123");
    expect(renderMail("guests", change, booking()).text).toContain("Grace Hopper has given the meeting that Ada Lovelace invited you to a new time.");
    expect(renderMail("host", change, booking()).text).toContain("You have moved the booking with Ada Lovelace to a new time.");
    // Without a reason there is no reason row; the booker's own move reads as before.
    expect(renderMail("booker", { ...change, reason: null }, booking()).text).not.toContain("Reason:");
    const own = renderMail("host", { type: "rescheduled", previous, movedBy: "booker" }, booking());
    expect(own.text).toContain("Ada Lovelace has moved their booking to a new time.");
    expect(own.text).not.toContain("Reason:");
    const de = renderMail("booker", change, booking({ host: { ...booking().host, locale: "de" } }));
    expect(de.text).toContain("Grace Hopper hat Ihren Termin verschoben.");
    expect(de.text).toContain("Grund: Flight moved");
  });

  it("a cancel by the host says so, with the reason, and gives the booker only a view link", () => {
    const m = renderMail("booker", { type: "canceled", canceledBy: "host" }, booking({ cancelReason: "Sick today" }));
    expect(m.subject).toBe("Canceled: Intro call with Grace Hopper on 06/07/2026 09:30 EDT");
    expect(m.text).toContain("Grace Hopper has canceled your booking.");
    expect(m.text).toContain("Reason: Sick today");
    expect(m.text).toContain("View your booking: https://app.example.com/booking/KEY123");
    expect(m.text).not.toContain("Reschedule or cancel");
    expect(m.html).toMatch(/<a href="https:\/\/app\.example\.com\/booking\/KEY123" [^>]*>View your booking<\/a><\/td>/);
    const byBooker = renderMail("host", { type: "canceled", canceledBy: "booker" }, booking({ cancelReason: "Clash" }));
    expect(byBooker.text).toContain("Ada Lovelace has canceled their booking.");
    expect(byBooker.text).toContain("Reason: Clash");
  });

  it("a request: the host's mail gives the answer page's link and until when; the booker's neither", () => {
    const request = { answerBy: new Date("2026-07-05T13:30:00Z"), answerUrl: "https://app.example.com/booking/KEY123/answer/TOKEN" };
    const host = renderMail("host", { type: "requested" }, booking({ request }));
    expect(host.text).toContain("Answer the request: https://app.example.com/booking/KEY123/answer/TOKEN\n");
    expect(host.html).toContain('<a href="https://app.example.com/booking/KEY123/answer/TOKEN">https://app.example.com/booking/KEY123/answer/TOKEN</a>');
    expect(host.text).toMatch(/Answer by: 05\/07\/2026 15:30 /);
    const booker = renderMail("booker", { type: "requested" }, booking({ request }));
    expect(booker.text).not.toContain("/answer/");
    expect(booker.text).toContain("Answer by:");
  });

  it("a video meeting gives its link, and the location words follow the kind of location", () => {
    const video = renderMail("booker", { type: "created" }, booking({ meetingUrl: "https://meet.jit.si/room-abc", location: { name: "conference" } }));
    expect(video.text).toContain("Where: Video conference");
    expect(video.text).toContain("Meeting link: https://meet.jit.si/room-abc");
    expect(video.html).toContain('<a href="https://meet.jit.si/room-abc">');
    const phone = renderMail("host", { type: "created" }, booking({ location: { name: "phone_call", selected_option: "invitee_will_call_host", host_contact_number: "+49 30 123456" } }));
    expect(phone.text).toContain("Where: Phone call: Ada Lovelace will call Grace Hopper at +49 30 123456");
    const none = renderMail("host", { type: "created" }, booking({ location: { name: "no_location" } }));
    expect(none.text).not.toContain("Where:");
  });
});

describe("renderMail: data stays data", () => {
  const evil = booking({
    eventName: "Call\r\nBcc: victim@example.com",
    attendee: { name: '<script>alert(1)</script> "Eve"', email: "eve@example.com", zone: null },
    answers: [{ question: "<b>Q</b>", value: '<img src=x onerror="alert(1)">' }],
    cancelReason: "</table><h1>pwned</h1>",
  });

  it("escapes names, answers and the reason in HTML", () => {
    const m = renderMail("host", { type: "canceled", canceledBy: "booker" }, evil);
    expect(m.html).not.toMatch(/<script|<img|<h1>|<b>Q/);
    expect(m.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &quot;Eve&quot;");
    expect(m.html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(m.html).toContain("&lt;/table&gt;&lt;h1&gt;pwned&lt;/h1&gt;");
  });

  it("keeps the subject one line whatever the names hold", () => {
    const m = renderMail("booker", { type: "created" }, evil);
    expect(m.subject).not.toMatch(/[\r\n]/);
    expect(m.subject).toContain("Call Bcc: victim@example.com");
  });

  it("links only http(s) meeting addresses", () => {
    const m = renderMail("booker", { type: "created" }, booking({ meetingUrl: "javascript:alert(1)" }));
    expect(m.html).not.toContain("javascript:");
  });
});

describe("renderMail: languages", () => {
  it("writes the host's locale word for word from the catalogue, with Intl's words for the date", () => {
    const host = { name: "Grete", locale: "de", zone: "Europe/Berlin", dateFormat: "31.12.2024", timeFormat: "24_hours" };
    const m = renderMail("booker", { type: "canceled", canceledBy: "host" }, booking({ host, attendee: { name: "Ada", email: "ada@example.com", zone: null } }));
    const de = mailMessages.de;
    expect(m.subject).toBe("Abgesagt: Intro call mit Grete am 06.07.2026 15:30 MESZ");
    expect(m.text).toContain(de.introCanceledBookerByHost.replace("{host}", "Grete"));
    expect(m.text).toContain(`${de.labelWhen}: Montag, 06.07.2026, 15:30 – 16:00\n${de.labelTimeZone}: Mitteleuropäische Sommerzeit (Europe/Berlin)`);
    expect(m.html).toContain('lang="de" dir="ltr"');
  });

  it("turns Arabic mails right-to-left", () => {
    const host = { name: "Grace", locale: "ar", zone: "Asia/Riyadh", dateFormat: "31/12/2024", timeFormat: "12_hours" };
    const m = renderMail("host", { type: "created" }, booking({ host }));
    expect(m.locale).toBe("ar");
    expect(m.html).toContain('<html lang="ar" dir="rtl">');
    expect(m.html).toContain('<div dir="rtl"');
    expect(m.text).toContain(mailMessages.ar.introConfirmedHost.replace("{attendee}", "Ada Lovelace"));
  });

  it("renders every change for every reader in every locale without a placeholder left", () => {
    for (const locale of Object.keys(mailMessages)) {
      const b = booking({ host: { ...booking().host, locale }, meetingUrl: "https://meet.example/x", cancelReason: "r", request: { answerBy: new Date("2026-07-05T13:30:00Z"), answerUrl: "https://app.example.com/booking/K/answer/T" } });
      for (const audience of ["booker", "guests", "host"] as const) {
        for (const change of [
          { type: "created" as const },
          { type: "rescheduled" as const, previous: { start: new Date("2026-07-01T10:00:00Z"), end: new Date("2026-07-01T10:30:00Z") } },
          { type: "rescheduled" as const, previous: { start: new Date("2026-07-01T10:00:00Z"), end: new Date("2026-07-01T10:30:00Z") }, movedBy: "host" as const, reason: "r" },
          { type: "canceled" as const, canceledBy: "booker" as const },
          { type: "canceled" as const, canceledBy: "host" as const },
          { type: "canceled" as const, canceledBy: "booker" as const, request: true },
          { type: "requested" as const },
        ]) {
          const m = renderMail(audience, change, b);
          expect(`${m.subject}${m.text}${m.html}`).not.toMatch(/\{\w+\}/);
        }
      }
    }
  });
});
