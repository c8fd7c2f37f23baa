// Reminders falling due on the service's clock, moved to their due time (test/helpers/clock.ts) instead of waited for: bookings ahead with offsets that make them due together; the mails through smtp-server, the webhook through a receiver, when each arrived measured on the service's clock.
import ICAL from "ical.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { whenParts, zoneShortName } from "../../src/i18n/index.js";
import { restAt, type Json } from "../helpers/api.js";
import type { Host } from "../helpers/bookings.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { startSmtp, type ReceivedMail, type TestSmtp } from "../helpers/smtp.js";
import { until } from "../helpers/wait.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";

const APP_URL = "https://book.example.test";
const MINUTE = 60_000;
const SLOT = 15 * MINUTE;

let server: RunningServer;
let smtp: TestSmtp;
let receiver: Receiver;

const call = (method: string, path: string, opts: { key?: string; body?: unknown } = {}) => restAt(server.baseUrl, method, `/api/v1${path}`, opts);
const fixtures = () => fixturesAt(server.baseUrl);

beforeAll(async () => {
  smtp = await startSmtp();
  receiver = await startReceiver();
  server = await startServer({ SMTP_URL: smtp.url, APP_URL, OUTBOUND_ALLOW_PRIVATE: "true", EFFECTS_POLL_MS: "200", ...CLOCK_CONTROL_ENV });
});

afterAll(async () => {
  const code = await server?.stop();
  await smtp?.stop();
  await receiver?.close();
  expect(code).toBe(0);
});

let seq = 0;

/** A host open around the clock who reads dates as 31.12.2024 on a 24-hour clock, in `locale` and `zone`. */
async function newHost(locale: string, timezone: string): Promise<Host> {
  const host = await fixtures().newHost({ full_name: `Grace Hopper ${++seq}` });
  const patch = await call("PATCH", "/user", { key: host.key, body: { user: { locale, timezone, date_format: "31.12.2024", time_format: "24_hours" } } });
  expect(patch.status).toBe(200);
  return { ...host, user: patch.body.data };
}

/** A whole minute at least `leadMs` ahead: bookings start on a 15-minute grid, so a due time of start - offset is a whole minute. */
function dueMinute(leadMs: number): number {
  return Math.ceil((Date.now() + leadMs) / MINUTE) * MINUTE;
}

/** The first 15-minute slot at least a minute after `due`, and the offset that makes a before_start reminder due at `due`. */
function slotFor(due: number): { start: string; offset: number } {
  const start = Math.ceil((due + MINUTE) / SLOT) * SLOT;
  return { start: new Date(start).toISOString(), offset: (start - due) / MINUTE };
}

async function reminder(host: Host, eventId: string, body: Json): Promise<Json> {
  const res = await call("POST", `/events/${eventId}/reminders`, { key: host.key, body: { reminder: body } });
  expect(res.status).toBe(201);
  return res.body.data;
}

const unfolded = (raw: string): string => raw.replace(/\r?\n[ \t]+/g, " ");
const header = (m: ReceivedMail, name: string): string | undefined => new RegExp(`^${name}: (.*)$`, "im").exec(unfolded(m.raw))?.[1]?.trim();
const zwspFree = (s: string): string => s.replace(/\u200B/g, "");

function invite(m: ReceivedMail): { uid: string; sequence: number; method: string } {
  const part = m.parsed.attachments.find((a) => a.filename === "invite.ics");
  if (!part) throw new Error(`no invite.ics in "${m.parsed.subject}"`);
  const cal = new ICAL.Component(ICAL.parse(part.content.toString("utf8")));
  const ev = cal.getFirstSubcomponent("vevent")!;
  return { uid: String(ev.getFirstPropertyValue("uid")), sequence: Number(ev.getFirstPropertyValue("sequence") ?? 0), method: String(cal.getFirstPropertyValue("method")) };
}

const to = (address: string) => (m: ReceivedMail) => m.envelope.to.length === 1 && m.envelope.to[0] === address;

describe("reminders that fall due", () => {
  it("go out within 60 s of their time, in the host's language and each reader's zone, once; unsubscribe, webhook and what stays sent", async () => {
    // Set up within the lead (the clock is moved to `due` after it, so it may be long); every reminder below falls due at `due`.
    const due = dueMinute(10 * MINUTE);
    const { start, offset } = slotFor(due);

    // A German host in Berlin; the booker reads New York time. Both get the first reminder, the booker a second one.
    const de = await newHost("de", "Berlin");
    const deEvent = await fixtures().newEvent(de, { name: `Erstgespräch <i>${++seq}</i>`, slot_duration: "15_minutes", enable_guest_emails: true, guest_emails_limit: 2 });
    const both = await reminder(de, deEvent.id, {
      timing: "before_start",
      offset_minutes: offset,
      recipients: "both",
      body: "Hallo {{attendee_name}},\n\n{{event_name}} beginnt {{start_time}} ({{timezone}}).\n{{manage_url}}",
    });
    const second = await reminder(de, deEvent.id, { timing: "before_start", offset_minutes: offset, subject: "Zweite Erinnerung: {{event_name}}" });
    const followUp = await reminder(de, deEvent.id, { timing: "after_end", offset_minutes: 1440 });
    const evilName = "Ada <b>Lovelace</b> https://evil.example";
    const booker = `ada-${process.pid}-${seq}@example.com`;
    const guest = `guest-${process.pid}-${seq}@example.com`;
    const x = await fixtures().book(de, deEvent, { start_time: start, attendee_name: evilName, attendee_email: booker, timezone: "America/New_York", guest_emails: [guest] });

    // A Japanese host whose booker turns reminders off (one-click, as a mail client does it) before they fall due.
    const ja = await newHost("ja", "Tokyo");
    const jaEvent = await fixtures().newEvent(ja, { name: `面談 ${++seq}`, slot_duration: "15_minutes" });
    const jaBoth = await reminder(ja, jaEvent.id, { timing: "before_start", offset_minutes: offset, recipients: "both" });
    const jaBooker = await reminder(ja, jaEvent.id, { timing: "before_start", offset_minutes: offset });
    const yBooker = `ben-${process.pid}-${seq}@example.com`;
    const y = await fixtures().book(ja, jaEvent, { start_time: start, attendee_name: "Ben", attendee_email: yBooker, timezone: "Europe/London" });
    const oneClick = await fetch(`${server.baseUrl}/booking/${y.private_key}/unsubscribe`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "List-Unsubscribe=One-Click" });
    expect(oneClick.status).toBe(200);
    expect(await oneClick.text()).toContain('data-unsubscribed="true"');
    // The booker's view says so (once the booking's deliveries are planned, that the event reminds the booker at all).
    await until("the booker's view of reminders", async () => (await call("GET", `/public/bookings/${y.private_key}`)).body.data, { accept: (b: Json) => b.reminders_enabled === false && b.booker_reminders === true });

    // A host whose reminder goes to a webhook subscribed to booking.reminder.
    const en = await newHost("en", "UTC");
    const hook = await call("POST", "/webhooks", { key: en.key, body: { webhook: { url: receiver.url("/reminders"), events: ["booking.reminder"] } } });
    expect(hook.status).toBe(201);
    receiver.secret("/reminders", hook.body.data.secret);
    const enEvent = await fixtures().newEvent(en, { name: `Intro ${++seq}`, slot_duration: "15_minutes" });
    const viaHook = await reminder(en, enEvent.id, { timing: "before_start", offset_minutes: offset, channel: "webhook", recipients: "host" });
    const z = await fixtures().book(en, enEvent, { start_time: start });
    expect(Date.now(), "set-up took longer than the lead").toBeLessThan(due - 5000);

    const confirmation = (await smtp.waitFor(1, (m) => to(booker)(m) && invite(m).method === "REQUEST" && !/Erinnerung/.test(m.parsed.subject ?? "")))[0];
    // Nothing is sent early: no reminder before the service's clock reaches `due`; then it is moved there.
    expect(smtp.received.filter((m) => /Erinnerung|リマインダー/.test(m.parsed.subject ?? ""))).toEqual([]);
    expect(receiver.received("/reminders")).toEqual([]);
    const ahead = due - Date.now();
    await advanceClock(server, ahead);
    const lead = 60_000;
    const [reminderBooker1, reminderBooker2] = await smtp.waitFor(2, (m) => to(booker)(m) && /Erinnerung/.test(m.parsed.subject ?? ""), lead);
    const [reminderHost] = await smtp.waitFor(1, (m) => to(de.user.email)(m) && /^Erinnerung/.test(m.parsed.subject ?? ""), lead);
    const [jaHostMail] = await smtp.waitFor(1, (m) => to(ja.user.email)(m) && /リマインダー/.test(m.parsed.subject ?? ""), lead);
    const [message] = await receiver.waitFor("/reminders", 1, lead);
    // Arrivals on the service's clock, which is `ahead` of this one.
    const late = [reminderBooker1, reminderBooker2, reminderHost, jaHostMail].map((m) => m.at + ahead - due).concat(message.at + ahead - due);
    console.log(`reminders arrived ${late.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(", ")} after their due time`);
    for (const ms of late) {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThan(60_000);
    }

    // The booker: German words, New York time with its zone, a manage button, one-click unsubscribe, the same invitation.
    const booker1 = [reminderBooker1, reminderBooker2].find((m) => !/Zweite/.test(m.parsed.subject ?? ""))!;
    const ny = { zone: "America/New_York", dateFormat: "31.12.2024", timeFormat: "24_hours" };
    const nyStart = whenParts(new Date(start), new Date(start), "de", ny);
    const nyWhen = `${nyStart.date} ${nyStart.start} ${zoneShortName(new Date(start), "de", "America/New_York")}`;
    expect(booker1.parsed.subject).toBe(`Erinnerung: ${deEvent.name} ${nyWhen}`);
    expect(booker1.parsed.headers.get("content-language")).toBe("de");
    const text = zwspFree(booker1.parsed.text ?? "");
    expect(text).toContain(`Hallo ${evilName},`);
    expect(text).toContain(`${deEvent.name} beginnt ${nyWhen} (${nyStart.zone}).`);
    expect(text).toContain(`${APP_URL}/booking/${x.private_key}`);
    const html = zwspFree(String(booker1.parsed.html));
    expect(html).toContain("Ada &lt;b&gt;Lovelace&lt;/b&gt;");
    expect(html).toContain("Erstgespräch &lt;i&gt;");
    expect(html).not.toContain("<b>Lovelace");
    expect(html).not.toMatch(/href="https:\/\/evil/);
    expect(html).toMatch(new RegExp(`<a href="${APP_URL}/booking/${x.private_key}" [^>]*data-action="manage"`));
    expect(header(booker1, "List-Unsubscribe")).toBe(`<${APP_URL}/booking/${x.private_key}/unsubscribe>`);
    expect(header(booker1, "List-Unsubscribe-Post")).toBe("List-Unsubscribe=One-Click");
    expect(invite(booker1)).toEqual(invite(confirmation));
    expect(invite(booker1)).toMatchObject({ method: "REQUEST", sequence: 0 });
    expect(booker1.parsed.messageId).toMatch(/^<msg_[A-Za-z0-9_-]{24}@book\.example\.test>$/);

    // The host: Berlin time, no manage link, no unsubscribe; the guest gets no reminder.
    const berlin = whenParts(new Date(start), new Date(start), "de", { ...ny, zone: "Europe/Berlin" });
    expect(zwspFree(reminderHost.parsed.text ?? "")).toContain(`beginnt ${berlin.date} ${berlin.start} ${zoneShortName(new Date(start), "de", "Europe/Berlin")} (${berlin.zone})`);
    expect(reminderHost.raw).not.toContain(x.private_key);
    expect(header(reminderHost, "List-Unsubscribe")).toBeUndefined();
    expect(smtp.received.filter((m) => m.envelope.to.includes(guest)).map((m) => m.parsed.subject)).toEqual([expect.stringMatching(/^Einladung/)]);

    // The webhook: a signed booking.reminder with the booking, the reminder and the due time.
    expect(message.verifyError).toBeUndefined();
    expect(message.message).toMatchObject({
      type: "booking.reminder",
      data: { booking: { id: z.id, status: "confirmed", start_time: start }, event: { id: enEvent.id }, reminder: { id: viaHook.id, channel: "webhook", timing: "before_start" }, due_at: new Date(due).toISOString() },
    });
    const deliveries = await call("GET", `/webhooks/${hook.body.data.id}/deliveries`, { key: en.key });
    expect(deliveries.body.data).toMatchObject([{ event_type: "booking.reminder", attempt: 1, status_code: 200, message_id: message.id }]);

    // What each booking says of its reminders.
    const remindersOf = async (host: Host, id: string, accept: (r: Json[]) => boolean) =>
      until(`reminders of ${id}`, async () => (await call("GET", `/bookings/${id}`, { key: host.key })).body.data.reminders as Json[], { accept, timeoutMs: 20_000 });
    const byId = (list: Json[]) => Object.fromEntries(list.map((r) => [r.reminder_id, r]));
    const xs = byId(await remindersOf(de, x.id, (l) => l.filter((r) => r.status === "sent").length === 2));
    expect(xs[both.id]).toMatchObject({ status: "sent", due_at: new Date(due).toISOString() });
    expect(new Date(xs[both.id].sent_at).getTime() - due).toBeLessThan(60_000);
    expect(xs[second.id].status).toBe("sent");
    expect(xs[followUp.id].status).toBe("scheduled");
    // The unsubscribed booker: the host's copy of "both" went out, the booker-only reminder did not.
    const ys = byId(await remindersOf(ja, y.id, (l) => l.length === 2 && l.every((r) => r.status !== "scheduled")));
    expect(ys[jaBoth.id].status).toBe("sent");
    expect(ys[jaBooker.id]).toMatchObject({ status: "unsubscribed", sent_at: null });
    expect(smtp.received.filter((m) => m.envelope.to.includes(yBooker) && /リマインダー/.test(m.parsed.subject ?? ""))).toHaveLength(0);
    expect(zwspFree(jaHostMail.parsed.text ?? "")).toContain(jaEvent.name);
    expect((await remindersOf(en, z.id, (l) => l[0]?.status === "sent"))[0].reminder_id).toBe(viaHook.id);

    // The header's URL is the switch: one POST turns this booking's reminders off; the manage page shows it and turns them on again.
    const path = new URL(header(booker1, "List-Unsubscribe")!.slice(1, -1)).pathname;
    expect((await fetch(`${server.baseUrl}${path}`, { method: "POST", body: "List-Unsubscribe=One-Click", headers: { "content-type": "application/x-www-form-urlencoded" } })).status).toBe(200);
    expect((await call("GET", `/public/bookings/${x.private_key}`)).body.data.reminders_enabled).toBe(false);
    expect(await (await fetch(`${server.baseUrl}/booking/${x.private_key}`)).text()).toContain('data-reminders="off"');
    const on = await fetch(`${server.baseUrl}/booking/${x.private_key}/resubscribe?from=manage`, { method: "POST", redirect: "manual" });
    expect([on.status, on.headers.get("location")]).toEqual([303, `/booking/${x.private_key}?done=reminders_on`]);
    expect(await (await fetch(`${server.baseUrl}/booking/${x.private_key}`)).text()).toContain('data-reminders="on"');

    // What was sent stays sent: the reminder changed and the booking canceled re-plan only what is pending.
    expect((await call("PATCH", `/reminders/${both.id}`, { key: de.key, body: { reminder: { offset_minutes: offset + 60 } } })).status).toBe(200);
    expect((await call("POST", `/bookings/${x.id}/cancel`, { key: de.key, body: { booking: {} } })).status).toBe(200);
    const after = byId(await remindersOf(de, x.id, (l) => l.some((r) => r.reminder_id === followUp.id && r.status === "canceled")));
    expect(after[both.id]).toEqual(xs[both.id]);
    expect(after[second.id]).toEqual(xs[second.id]);
    // Each reminder went out once.
    expect(smtp.received.filter((m) => m.envelope.to.includes(booker) && /Erinnerung/.test(m.parsed.subject ?? ""))).toHaveLength(2);
    expect(receiver.received("/reminders")).toHaveLength(1);
  }, 300_000);
});
