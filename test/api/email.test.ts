// The booking e-mails end to end: the real service with SMTP_URL at an smtp-server on loopback; every flow's mails parsed (mailparser, ical.js).
import ICAL from "ical.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fill, whenParts, zoneShortName } from "../../src/i18n/index.js";
import { mailMessages } from "../../src/i18n/mail.js";
import { restAt, sharedServer, type Json } from "../helpers/api.js";
import { dayFromToday, utcIso, type Host } from "../helpers/bookings.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { freePort, startSmtp, type ReceivedMail, type TestSmtp } from "../helpers/smtp.js";
import { until } from "../helpers/wait.js";

const APP_URL = "https://book.example.test";

let server: RunningServer;
let smtp: TestSmtp | undefined;
let smtpPort: number;

const call = async (method: string, path: string, opts: { key?: string; body?: unknown; admin?: boolean } = {}) => restAt(server.baseUrl, method, `/api/v1${path}`, opts);

let seq = 0;
const fixtures = () => fixturesAt(server.baseUrl);

/** A host open around the clock in Berlin who reads dates as 31/12/2024 and times on a 24-hour clock; `settings` override. */
async function newHost(settings: Json = {}): Promise<Host> {
  const host = await fixtures().newHost({ full_name: `Grace Hopper ${++seq}` });
  const patch = await call("PATCH", "/user", { key: host.key, body: { user: { timezone: "Berlin", date_format: "31/12/2024", time_format: "24_hours", ...settings } } });
  expect(patch.status).toBe(200);
  return { ...host, user: patch.body.data };
}

/** An event whose name is unique in the run: the mails about it are told apart by their subject. */
const newEvent = (host: Host, over: Json = {}): Promise<Json> => fixtures().newEvent(host, { name: `Intro call ${++seq}`, url: `intro-${process.pid}-${seq}`, ...over });

const book = (host: Host, event: Json, booking: Json): Promise<Json> => fixtures().book(host, event, booking);

/** The mails about one event (its name is unique to the test), once `n` of them have arrived. */
async function mailsOf(event: Json, n: number, pick: (m: ReceivedMail) => boolean = () => true): Promise<ReceivedMail[]> {
  return (smtp as TestSmtp).waitFor(n, (m) => (m.parsed.subject ?? "").includes(event.name) && pick(m), 30_000);
}

const toAddresses = (m: ReceivedMail): string[] => m.envelope.to.slice().sort();
const onlyTo = (address: string) => (m: ReceivedMail) => m.envelope.to.length === 1 && m.envelope.to[0] === address;

interface Invite {
  filename: string;
  method: string;
  uid: string;
  sequence: number;
  start: string;
  organizer: string;
  attendees: string[];
  hasStamp: boolean;
  comment: string | null;
}

function invitesOf(m: ReceivedMail): Invite[] {
  return m.parsed.attachments
    .filter((a) => a.contentType === "text/calendar")
    .map((a) => {
      const cal = new ICAL.Component(ICAL.parse(a.content.toString("utf8")));
      const ev = cal.getFirstSubcomponent("vevent");
      if (!ev) throw new Error("no VEVENT");
      const start = ev.getFirstPropertyValue("dtstart") as ICAL.Time;
      return {
        filename: a.filename ?? "",
        method: String(cal.getFirstPropertyValue("method")),
        uid: String(ev.getFirstPropertyValue("uid")),
        sequence: Number(ev.getFirstPropertyValue("sequence") ?? 0),
        start: start.toJSDate().toISOString(),
        organizer: String(ev.getFirstPropertyValue("organizer")).replace(/^mailto:/i, "").toLowerCase(),
        attendees: ev.getAllProperties("attendee").map((p) => String(p.getFirstValue()).replace(/^mailto:/i, "").toLowerCase()).sort(),
        hasStamp: ev.hasProperty("dtstamp"),
        comment: ev.hasProperty("comment") ? String(ev.getFirstPropertyValue("comment")) : null,
      };
    });
}

const day = dayFromToday(5);

beforeAll(async () => {
  // The SMTP server is not up yet: the first test books while it is down.
  smtpPort = await freePort();
  server = await startServer({
    APP_URL,
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    // Short, so the test of an unknown outcome (no answer in time) stays short.
    SMTP_TIMEOUT_MS: "2000",
    EFFECTS_POLL_MS: "100",
    // Retry waits shrink a thousandfold: 15 ms, 60 ms, 300 ms, 1.8 s, ...
    EFFECTS_RETRY_SCALE: "0.001",
  });
});

afterAll(async () => {
  await server?.stop();
  await smtp?.stop();
});

describe("e-mail through the outbox", () => {
  it("books while SMTP is down: the booking answers 201, the mails arrive once the server is up", async () => {
    const host = await newHost();
    const event = await newEvent(host);
    const b = await book(host, event, { start_time: utcIso(day, "08:00") });
    expect(b.status).toBe("confirmed");
    // A failed try meanwhile.
    await until("a failed try to send while SMTP is down", () => /"msg":"e-mail not sent"/.test(server.logs()));
    smtp = await startSmtp(smtpPort);
    const mails = await mailsOf(event, 2);
    expect(mails.map(toAddresses).sort()).toEqual([["ada@example.com"], [host.user.email]].sort());
    expect(server.logs()).toMatch(/"msg":"e-mail not sent"/);
  });

  it("a confirmed booking: booker, guests and host each get their mail with a REQUEST", async () => {
    const host = await newHost();
    const question = (await call("POST", "/questions", { key: host.key, body: { question: { title: "What about?", question_type: "one_line" } } })).body.data;
    const event = await newEvent(host, {
      enable_guest_emails: true,
      guest_emails_limit: 2,
      location: { name: "in_person", details: "Main Street 1" },
      event_questions_attributes: [{ question_id: question.id, required: true, order_number: 1 }],
    });
    const b = await book(host, event, {
      start_time: utcIso(day, "09:00"),
      timezone: "America/New_York",
      guest_emails: ["guest1@example.com", "guest2@example.com"],
      answers: [{ question_id: question.id, value: "<b>Compilers</b>" }],
    });
    const mails = await mailsOf(event, 3);
    const booker = mails.find(onlyTo("ada@example.com")) as ReceivedMail;
    const guests = mails.find((m) => toAddresses(m).join() === "guest1@example.com,guest2@example.com") as ReceivedMail;
    const hostMail = mails.find(onlyTo(host.user.email)) as ReceivedMail;
    expect(booker && guests && hostMail).toBeTruthy();

    // Sender, Reply-To and distinct Message-IDs.
    for (const m of mails) {
      expect(m.parsed.from?.value[0]).toMatchObject({ name: "Scheduling", address: "no-reply@book.example.test" });
      expect(m.parsed.messageId).toMatch(/^<msg_[A-Za-z0-9_-]+@book\.example\.test>$/);
    }
    expect(new Set(mails.map((m) => m.parsed.messageId)).size).toBe(3);
    expect(booker.parsed.replyTo?.value[0].address).toBe(host.user.email);
    expect(hostMail.parsed.replyTo?.value[0].address).toBe("ada@example.com");

    // The booker: their own zone, the manage link, no answers.
    // The subject's time is the reader's, with its zone (EST or EDT, as the day falls).
    const nyStart = new Date(utcIso(day, "09:00"));
    const nyZone = zoneShortName(nyStart, "en", "America/New_York");
    expect(nyZone).toMatch(/^E[SD]T$/);
    expect(booker.parsed.subject).toBe(`Confirmed: ${event.name} with ${host.user.full_name} on ${day.slice(8, 10)}/${day.slice(5, 7)}/${day.slice(0, 4)} ${whenParts(nyStart, new Date(utcIso(day, "09:30")), "en", { zone: "America/New_York", dateFormat: "31/12/2024", timeFormat: "24_hours" }).start} ${nyZone}`);
    expect(hostMail.parsed.subject).toMatch(/ GMT\+[12]$/);
    expect(booker.parsed.text).toContain(`${APP_URL}/booking/${b.private_key}`);
    expect(booker.parsed.text).toContain("(America/New_York)");
    expect(booker.parsed.text).toContain("Where: Main Street 1");
    expect(booker.parsed.text).not.toContain("Compilers");
    expect(booker.parsed.html).toContain(`href="${APP_URL}/booking/${b.private_key}"`);
    // In the HTML part the manage link is a button; the plain text keeps its line.
    const button = new RegExp(`<td [^>]*bgcolor="#0b57d0"[^>]*><a href="${APP_URL}/booking/${b.private_key}" [^>]*style="display:inline-block;[^"]*">Reschedule or cancel</a></td>`);
    expect(booker.parsed.html).toMatch(button);
    expect(booker.parsed.text).toContain(`Reschedule or cancel: ${APP_URL}/booking/${b.private_key}`);

    // Guests: no manage link; the host: the host's zone, answers escaped in HTML, guests listed, no manage link.
    expect(guests.parsed.text).not.toContain(b.private_key);
    expect(guests.parsed.html).not.toContain(b.private_key);
    expect(hostMail.parsed.text).not.toContain(b.private_key);
    expect(hostMail.parsed.text).toContain("(Europe/Berlin)");
    expect(hostMail.parsed.text).toContain("- What about?: <b>Compilers</b>");
    expect(hostMail.parsed.html).toContain("&lt;b&gt;Compilers&lt;/b&gt;");
    expect(hostMail.parsed.text).toContain("Guests: guest1@example.com, guest2@example.com");
    expect(hostMail.parsed.text).toContain("Booked by: Ada Lovelace <ada@example.com>");

    // Each carries one REQUEST for the booking, the host as ORGANIZER.
    for (const m of mails) {
      const [invite, ...more] = invitesOf(m);
      expect(more).toEqual([]);
      expect(invite).toMatchObject({ filename: "invite.ics", method: "REQUEST", sequence: 0, start: utcIso(day, "09:00"), organizer: host.user.email });
      expect(invite.uid).toBe(`${b.id}@book.example.test`);
      expect(invite.attendees).toEqual(["ada@example.com", "guest1@example.com", "guest2@example.com"]);
      expect(invite.hasStamp).toBe(true);
      expect(m.raw).toMatch(/Content-Type: text\/calendar; charset=utf-8; method=REQUEST/i);
    }
  });

  it("reschedule and cancel by the booker: CANCEL of the old time, REQUEST of the new, the same UID with a higher SEQUENCE", async () => {
    const host = await newHost();
    const event = await newEvent(host, { enable_guest_emails: true, guest_emails_limit: 1 });
    const first = await book(host, event, { start_time: utcIso(day, "10:00"), guest_emails: ["guest3@example.com"] });
    await mailsOf(event, 3);

    const moved = await call("POST", `/public/bookings/${first.private_key}/reschedule`, { body: { booking: { start_time: utcIso(day, "11:00") } } });
    expect(moved.status).toBe(201);
    const second = moved.body.data;
    const rescheduled = await mailsOf(event, 3, (m) => /^Rescheduled:/.test(m.parsed.subject ?? ""));
    expect(rescheduled.map(toAddresses).sort()).toEqual([["ada@example.com"], ["guest3@example.com"], [host.user.email]].sort());
    for (const m of rescheduled) {
      const invites = invitesOf(m);
      expect(invites.map((i) => [i.filename, i.method, i.uid, i.sequence, i.start, i.comment])).toEqual([
        ["cancel.ics", "CANCEL", `${first.id}@book.example.test`, 1, utcIso(day, "10:00"), null],
        ["invite.ics", "REQUEST", `${second.id}@book.example.test`, 0, utcIso(day, "11:00"), null],
      ]);
      // Nobody gave a zone: both read the host's (Berlin).
      const before = whenParts(new Date(utcIso(day, "10:00")), new Date(utcIso(day, "10:30")), "en", { zone: "Europe/Berlin", dateFormat: "31/12/2024", timeFormat: "24_hours" });
      expect(m.parsed.text).toContain(`Previously: ${before.weekday}, ${before.date}, ${before.start} – ${before.end}`);
    }
    const bookerMail = rescheduled.find(onlyTo("ada@example.com")) as ReceivedMail;
    expect(bookerMail.parsed.text).toContain(`${APP_URL}/booking/${second.private_key}`);

    const canceled = await call("POST", `/public/bookings/${second.private_key}/cancel`, { body: { booking: { reason: "Found another slot" } } });
    expect(canceled.status).toBe(200);
    const cancelMails = await mailsOf(event, 3, (m) => /^Canceled:/.test(m.parsed.subject ?? ""));
    expect(cancelMails.map(toAddresses).sort()).toEqual([["ada@example.com"], ["guest3@example.com"], [host.user.email]].sort());
    for (const m of cancelMails) {
      expect(invitesOf(m).map((i) => [i.filename, i.method, i.uid, i.sequence, i.comment])).toEqual([["invite.ics", "CANCEL", `${second.id}@book.example.test`, 1, "Found another slot"]]);
      expect(m.parsed.text).toContain("Reason: Found another slot");
      // The manage link is the booker's alone, canceled or not.
      if (m.envelope.to[0] !== "ada@example.com") expect(`${m.parsed.text}${m.parsed.html}`).not.toContain(second.private_key);
    }
    expect((cancelMails.find(onlyTo("guest3@example.com")) as ReceivedMail).parsed.text).toContain("Ada Lovelace has canceled the meeting with");
    expect((cancelMails.find(onlyTo(host.user.email)) as ReceivedMail).parsed.text).toContain("Ada Lovelace has canceled their booking.");
    expect((cancelMails.find(onlyTo("ada@example.com")) as ReceivedMail).parsed.text).toContain(`Your booking with ${host.user.full_name} has been canceled.`);

    // Exactly the mails of the spec: 3 + 3 + 3, nothing else about this event.
    await new Promise((r) => setTimeout(r, 1000));
    expect((smtp as TestSmtp).received.filter((m) => (m.parsed.subject ?? "").includes(event.name))).toHaveLength(9);
  });

  it("a video meeting: every mail and its invitation carry the booking's meeting_url", async () => {
    const host = await newHost();
    expect((await call("PUT", "/integrations/conference", { key: host.key, body: { integration: { provider: "jitsi", base_url: "https://meet.example.org" } } })).status).toBe(200);
    const event = await newEvent(host, { location: { name: "conference" } });
    const b = await book(host, event, { start_time: utcIso(day, "07:00") });
    expect(b.meeting_url).toMatch(/^https:\/\/meet\.example\.org\/[0-9a-f]{32,}$/);
    const mails = await mailsOf(event, 2);
    for (const m of mails) {
      expect(m.parsed.text).toContain(b.meeting_url);
      expect(m.parsed.html).toContain(`href="${b.meeting_url}"`);
      const [invite] = m.parsed.attachments.filter((a) => a.contentType === "text/calendar");
      const ev = new ICAL.Component(ICAL.parse(invite.content.toString("utf8"))).getFirstSubcomponent("vevent");
      expect(ev?.getFirstPropertyValue("location")).toBe(b.meeting_url);
    }
  });

  it("the booker's invitation and the booking page's invite.ics are one event, confirmed and canceled alike", async () => {
    const host = await newHost();
    const event = await newEvent(host, { location: { name: "in_person", details: "Shibuya 1-2-3, Tokyo" } });
    const b = await book(host, event, { start_time: utcIso(day, "14:00") });
    const vevent = (text: string) => {
      const cal = new ICAL.Component(ICAL.parse(text));
      const ev = cal.getFirstSubcomponent("vevent")!;
      const props = ["uid", "sequence", "summary", "description", "location", "url", "status", "comment"].map((p) => [p, ev.getFirstPropertyValue(p)]);
      return { method: cal.getFirstPropertyValue("method"), ...Object.fromEntries(props) };
    };
    const fromMail = async (subject: RegExp) => {
      const [mail] = await mailsOf(event, 1, (m) => onlyTo("ada@example.com")(m) && subject.test(m.parsed.subject ?? ""));
      return vevent(mail.parsed.attachments.find((a) => a.contentType === "text/calendar")!.content.toString("utf8"));
    };
    const fromPage = async () => vevent(await (await fetch(`${server.baseUrl}/booking/${b.private_key}/invite.ics`)).text());

    const confirmed = await fromMail(/^Confirmed:/);
    expect(confirmed).toMatchObject({
      method: "REQUEST",
      uid: `${b.id}@book.example.test`,
      sequence: 0,
      summary: `${event.name} (${host.user.full_name}, Ada Lovelace)`,
      description: `${APP_URL}/booking/${b.private_key}`,
      location: "Shibuya 1-2-3, Tokyo",
    });
    expect(await fromPage()).toEqual(confirmed);

    expect((await call("POST", `/bookings/${b.id}/cancel`, { key: host.key, body: { booking: { reason: "Ill today" } } })).status).toBe(200);
    const canceled = await fromMail(/^Canceled:/);
    expect(canceled).toMatchObject({ method: "CANCEL", uid: confirmed.uid, sequence: 1, status: "CANCELLED", comment: "Ill today" });
    expect(await fromPage()).toEqual(canceled);
  });

  it("cancel by the host: the booker hears it was the host, with the reason", async () => {
    const host = await newHost();
    const event = await newEvent(host);
    const b = await book(host, event, { start_time: utcIso(day, "12:00") });
    await mailsOf(event, 2);
    expect((await call("POST", `/bookings/${b.id}/cancel`, { key: host.key, body: { booking: { reason: "Ill today" } } })).status).toBe(200);
    const mails = await mailsOf(event, 2, (m) => /^Canceled:/.test(m.parsed.subject ?? ""));
    const booker = mails.find(onlyTo("ada@example.com")) as ReceivedMail;
    expect(booker.parsed.text).toContain(`${host.user.full_name} has canceled your booking.`);
    expect(booker.parsed.text).toContain("Reason: Ill today");
    expect((mails.find(onlyTo(host.user.email)) as ReceivedMail).parsed.text).toContain("You have canceled the booking with Ada Lovelace.");
  });

  it("writes in the host's locale, word for word from the catalogue (German)", async () => {
    const host = await newHost({ locale: "de", date_format: "31.12.2024", time_format: "24_hours" });
    const event = await newEvent(host, { location: { name: "phone_call", selected_option: "invitee_will_call_host", host_contact_number: "+49 30 1234567" } });
    await book(host, event, { start_time: utcIso(day, "13:00") });
    const mails = await mailsOf(event, 2);
    const booker = mails.find(onlyTo("ada@example.com")) as ReceivedMail;
    const de = mailMessages.de;
    const when = whenParts(new Date(utcIso(day, "13:00")), new Date(utcIso(day, "13:30")), "de", { zone: "Europe/Berlin", dateFormat: "31.12.2024", timeFormat: "24_hours" });
    const names = { event: event.name, host: host.user.full_name, attendee: "Ada Lovelace" };
    const row = (label: string, value: string) => fill(de.row, { label, value });
    const zone = zoneShortName(new Date(utcIso(day, "13:00")), "de", "Europe/Berlin");
    expect(zone).toMatch(/^MES?Z$/);
    expect(booker.parsed.subject).toBe(fill(de.subjectConfirmedBooker, { ...names, when: `${when.date} ${when.start} ${zone}` }));
    expect(booker.parsed.headers.get("content-language")).toBe("de");
    const text = booker.parsed.text ?? "";
    for (const line of [
      fill(de.greeting, { name: "Ada Lovelace" }),
      fill(de.introConfirmedBooker, names),
      row(de.labelEvent, event.name),
      row(de.labelWhen, fill(de.when, { ...when })),
      row(de.labelTimeZone, when.zone),
      row(de.labelWhere, fill(de.locationPhoneInviteeCalls, { ...names, phone: "+49 30 1234567" })),
      row(de.labelHost, host.user.full_name),
      de.manageText,
      de.inviteRequest,
      fill(de.footerBooker, names),
    ]) {
      expect(text).toContain(line);
    }
    expect(when.weekday).toMatch(/^(Montag|Dienstag|Mittwoch|Donnerstag|Freitag|Samstag|Sonntag)$/);
    expect(booker.parsed.html).toContain('<html lang="de" dir="ltr">');
    const hostMail = mails.find(onlyTo(host.user.email)) as ReceivedMail;
    expect(hostMail.parsed.subject).toBe(fill(de.subjectConfirmedHost, { ...names, when: `${when.date} ${when.start} ${zone}` }));
    expect(hostMail.parsed.text).toContain(fill(de.introConfirmedHost, names));
  });

  it("an SMTP server that says 451 once: the retry delivers the same Message-ID", async () => {
    const host = await newHost();
    const event = await newEvent(host);
    const s = smtp as TestSmtp;
    const refusedBefore = s.refused.length;
    s.refuseNext(1, 451);
    await book(host, event, { start_time: utcIso(day, "14:00") });
    const mails = await mailsOf(event, 2);
    const refused = s.refused.slice(refusedBefore);
    expect(refused).toHaveLength(1);
    expect(refused[0].code).toBe(451);
    expect(mails.map((m) => m.parsed.messageId)).toContain(refused[0].messageId);
    expect(server.logs()).toMatch(/"msg":"e-mail not sent".*"outcome":"failed","error":"SMTP 451/);
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    const count = (outcome: string) => Number(new RegExp(`^scheduling_effect_attempts_total\\{kind="email",outcome="${outcome}"\\} (\\d+)`, "m").exec(metrics)?.[1] ?? 0);
    expect(count("retry")).toBeGreaterThanOrEqual(1);
    expect(count("ok")).toBeGreaterThanOrEqual(2);
  });

  it("a message whose outcome is unknown (no answer within the deadline) is sent again with the same Message-ID", async () => {
    const host = await newHost();
    const event = await newEvent(host);
    const s = smtp as TestSmtp;
    s.answerLateNext(3000);
    await book(host, event, { start_time: utcIso(day, "15:00") });
    // The late one was kept by the server and then sent again: three copies of two messages.
    const mails = await mailsOf(event, 3);
    const ids = mails.map((m) => m.parsed.messageId);
    expect(new Set(ids).size).toBe(2);
    const twice = ids.find((id, i) => ids.indexOf(id) !== i);
    expect(twice).toBeDefined();
    expect(server.logs()).toMatch(/"msg":"e-mail not sent".*"error":"no answer within 2000 ms"/);
  });

  it("logs attempts without addresses", () => {
    const lines = server.logs().split("\n").filter((l) => l.includes('"kind":"email"'));
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l).not.toMatch(/@example\.com/);
  });
});

describe("without SMTP_URL", () => {
  it("says once at start that no e-mail is sent, and books as ever", async () => {
    // The shared servers (test/globalSetup.ts) are such servers: started without SMTP_URL.
    expect(sharedServer().startLog.match(/SMTP_URL is not set: no e-mail is sent/g)).toHaveLength(1);
  });
});
