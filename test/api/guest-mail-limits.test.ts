// Nobody mails strangers through us (issue 25): guests count like the booker, cancels count, a host's messages to guests are capped, reminder e-mails count too (issue 31); deliveries counted at a real SMTP server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, useServer, type Json } from "../helpers/api.js";
import { dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { startSmtp, type ReceivedMail, type TestSmtp } from "../helpers/smtp.js";
import { until } from "../helpers/wait.js";

let server: RunningServer;
let smtp: TestSmtp;
let slot = 0;

beforeAll(async () => {
  smtp = await startSmtp();
  // The spec's defaults for the caps this file is about (the helper raises them out of other tests' way).
  server = await startServer({ SMTP_URL: smtp.url, BOOKING_LIMIT_PER_BOOKER: "10", BOOKING_LIMIT_PER_HOST: "200", EFFECTS_POLL_MS: "100", ...CLOCK_CONTROL_ENV });
  useServer(server.baseUrl);
});

afterAll(async () => {
  useServer(undefined);
  await server?.stop();
  await smtp?.stop();
});

/** A fresh half hour each call, four days ahead and on. */
const nextSlot = () => {
  const n = slot++;
  return utcIso(dayFromToday(4 + Math.floor(n / 48)), `${String(Math.floor((n % 48) / 2)).padStart(2, "0")}:${n % 2 === 0 ? "00" : "30"}`);
};

const bookAt = (host: Host, event: Json, booking: Json) =>
  rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, { body: { booking: { start_time: nextSlot(), attendee_name: "Mallory", ...booking } } });

/**
 * Once the mails a test expects have arrived: waits until the outbox has nothing pending twice in a row, a
 * quarter second apart, so that a mail sent beyond them would be counted too.
 */
async function outboxDrained(): Promise<void> {
  let idle = 0;
  for (let i = 0; i < 300 && idle < 2; i++) {
    const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
    idle = /^scheduling_effects_pending 0$/m.test(text) ? idle + 1 : 0;
    await new Promise((r) => setTimeout(r, 250));
  }
  if (idle < 2) throw new Error("the outbox did not drain in 75 s");
}

/** Deliveries (SMTP recipients) per address among the mails so far. */
function deliveriesTo(addresses: readonly string[], mails: readonly ReceivedMail[] = smtp.received): Map<string, number> {
  const counts = new Map(addresses.map((a) => [a, 0]));
  for (const m of mails) for (const to of m.envelope.to) if (counts.has(to)) counts.set(to, (counts.get(to) ?? 0) + 1);
  return counts;
}

describe("guests count against the booker limits", () => {
  it("the issue's reproduction: one address, 12 bookings and 12 cancels with 10 guests, mails each stranger at most BOOKING_LIMIT_PER_BOOKER times", async () => {
    const host = await newHost();
    const event = await newEvent(host, { enable_guest_emails: true, guest_emails_limit: 10 });
    const guests = Array.from({ length: 10 }, (_, i) => `stranger-${i}@victims.example`);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const made = await bookAt(host, event, { attendee_email: "mallory@example.com", guest_emails: guests });
      statuses.push(made.status);
      if (made.status !== 201) {
        expect(made.body.message).toBe("this e-mail address has made as many bookings with this host as a day allows; try again later");
        expect(Number(made.headers.get("retry-after"))).toBeGreaterThan(0);
        continue;
      }
      expect(made.body.data.guests_notified).toBe(true);
      const canceled = await rest("POST", `/public/bookings/${made.body.data.private_key}/cancel`, { body: { booking: { reason: "Hello from Mallory, visit evil.example" } } });
      expect(canceled.status).toBe(200);
      expect(canceled.body.data.guests_notified).toBe(true);
      statuses.push(canceled.status);
    }
    // Each booking and each cancel writes to the booker and the ten guests: ten writes per address a day.
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
    await smtp.waitFor(10, (m) => m.envelope.to.includes(guests[9]));
    await outboxDrained();
    for (const [address, n] of deliveriesTo(guests)) expect([address, n]).toEqual([address, 10]);
    expect(deliveriesTo(["mallory@example.com"]).get("mallory@example.com")).toBe(10);
  });

  it("a guest address that has been in as many bookings with the host as a day allows makes a booking naming it 429", async () => {
    const host = await newHost();
    const event = await newEvent(host, { enable_guest_emails: true, guest_emails_limit: 2 });
    const victim = "victim@victims.example";
    for (let i = 0; i < 10; i++) expect((await bookAt(host, event, { attendee_email: `booker-${i}@example.com`, guest_emails: [victim] })).status).toBe(201);
    const refused = await bookAt(host, event, { attendee_email: "booker-x@example.com", guest_emails: ["friend@example.com", victim] });
    expect(refused.status).toBe(429);
    expect(refused.body.message).toBe(`the guest ${victim} has been in as many bookings with this host as a day allows; try again later`);
    // Without it the booking goes through.
    expect((await bookAt(host, event, { attendee_email: "booker-x@example.com", guest_emails: ["friend@example.com"] })).status).toBe(201);
  });

  it("a cancel past the limit still cancels, but mails neither the booker nor the guests: only the host", async () => {
    const host = await newHost();
    const event = await newEvent(host, { name: "Cancel cap", enable_guest_emails: true, guest_emails_limit: 1 });
    const made: Json[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await bookAt(host, event, { attendee_email: "hoarder@example.com", guest_emails: ["pal@example.com"] });
      expect(res.status).toBe(201);
      made.push(res.body.data);
    }
    await outboxDrained();
    const before = smtp.received.length;
    const canceled = await rest("POST", `/public/bookings/${made[0].private_key}/cancel`, { body: { booking: {} } });
    expect(canceled.status).toBe(200);
    expect(canceled.body.data).toMatchObject({ status: "canceled", guests_notified: false });
    await smtp.waitFor(1, (m) => m.envelope.to.includes(host.user.email) && /^Canceled/.test(m.parsed.subject ?? ""));
    await outboxDrained();
    const after = smtp.received.slice(before);
    expect(after.map((m) => m.envelope.to)).toEqual([[host.user.email]]);
    // The booker's own view says so too.
    expect((await rest("GET", `/public/bookings/${made[0].private_key}`)).body.data.guests_notified).toBe(false);
  });
});

describe("GUEST_MAIL_LIMIT_PER_HOST", () => {
  it("a host's guests get at most 100 messages a booking window; past it the booking works, guests_notified is false, and no guest is mailed", async () => {
    const host = await newHost();
    const event = await newEvent(host, { name: "Guest cap", enable_guest_emails: true, guest_emails_limit: 10 });
    const guestsOf = (i: number) => Array.from({ length: 10 }, (_, g) => `guest-${i}-${g}@example.com`);
    for (let i = 0; i < 10; i++) {
      const res = await bookAt(host, event, { attendee_email: `friend-${i}@example.com`, guest_emails: guestsOf(i) });
      expect(res.status).toBe(201);
      expect(res.body.data.guests_notified).toBe(true);
    }
    const over = await bookAt(host, event, { attendee_email: "friend-10@example.com", guest_emails: guestsOf(10) });
    expect(over.status).toBe(201);
    expect(over.body.message).toBe("booking confirmed");
    expect(over.body.data.guests_notified).toBe(false);
    // A booking without guests is not affected.
    const alone = await bookAt(host, event, { attendee_email: "friend-11@example.com" });
    expect(alone.body.data.guests_notified).toBe(true);
    await smtp.waitFor(1, (m) => m.envelope.to.includes("friend-11@example.com"));
    await outboxDrained();
    const all = [...Array(11).keys()].flatMap(guestsOf);
    const counts = deliveriesTo(all);
    expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(100);
    for (const g of guestsOf(10)) expect(counts.get(g)).toBe(0);
    // The booker and the host still hear of it.
    expect(deliveriesTo(["friend-10@example.com"]).get("friend-10@example.com")).toBe(1);
  });
});

describe("reminder e-mails count against the booker limits (reminders.md)", () => {
  const MINUTE = 60_000;
  const SLOT = 15 * MINUTE;

  /** Reminders of this file: e-mails to the booker only, so the delivery itself is skipped when the booker may not be mailed. */
  async function remindedHost(name: string, offset: number): Promise<{ host: Host; event: Json }> {
    const host = await newHost({ full_name: name });
    const event = await newEvent(host, { name, slot_duration: "15_minutes" });
    const made = await rest("POST", `/events/${event.id}/reminders`, {
      key: host.key,
      body: { reminder: { timing: "before_start", offset_minutes: offset, recipients: "booker", subject: "Soon: {{event_name}}" } },
    });
    expect(made.status).toBe(201);
    return { host, event };
  }

  it("a reminder to an address past BOOKING_LIMIT_PER_BOOKER with the host is skipped, not sent; the same address with another host gets it", async () => {
    // Due at a whole minute about 150 s from now (time to set up; the clock is then moved there), for a 15-minute
    // slot a minute or more after it.
    const due = Math.ceil((Date.now() + 150_000) / MINUTE) * MINUTE;
    const start = Math.ceil((due + MINUTE) / SLOT) * SLOT;
    const offset = (start - due) / MINUTE;
    const [limited, control] = await Promise.all([remindedHost("Capped Reminders", offset), remindedHost("Open Reminders", offset)]);
    const booker = `reminded-${process.pid}@example.com`;
    const soon = { start_time: new Date(start).toISOString(), attendee_name: "Rita", attendee_email: booker };
    const book = (h: { host: Host; event: Json }, booking: Json) => rest("POST", `/public/users/${h.host.user.url}/events/${h.event.url}/bookings`, { body: { booking } });
    const capped = await book(limited, soon);
    const open = await book(control, soon);
    expect([capped.status, open.status]).toEqual([201, 201]);
    // Nine more bookings of the address with the capped host: its ten writes of the day are spent.
    for (let i = 0; i < 9; i++) expect((await bookAt(limited.host, limited.event, { attendee_email: booker })).status).toBe(201);
    expect(Date.now()).toBeLessThan(due);

    const statusOf = async (h: { host: Host }, id: string) => (await rest("GET", `/bookings/${id}`, { key: h.host.key })).body.data.reminders?.[0]?.status;
    // The control's reminder goes out: reminders do fall due in this run (the service's clock moved to their time).
    await advanceClock(server, due - Date.now());
    await smtp.waitFor(1, (m) => m.envelope.to.includes(booker) && m.parsed.subject === "Soon: Open Reminders", 90_000);
    expect(await statusOf(control, open.body.data.id)).toBe("sent");
    // The capped one is settled as skipped, and nothing of it reaches the address.
    let settled: string | undefined;
    await until("the capped reminder settled", async () => {
      settled = await statusOf(limited, capped.body.data.id);
      return settled !== "scheduled" && settled !== "sending";
    }, { timeoutMs: 60_000 });
    // Skipped is final: nothing of it is owed any more (the outbox never drains here: the other bookings' reminders wait for their day).
    expect(settled).toBe("skipped");
    expect(smtp.received.filter((m) => m.parsed.subject === "Soon: Capped Reminders")).toEqual([]);
  }, 300_000);
});
