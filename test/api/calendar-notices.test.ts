// The host hears of a calendar connection's trouble (issue 29; integrations.md "When a calendar or meeting account needs the host"): a calendar.connection_changed webhook on each change of status or warnings, an e-mail in the host's locale at most once a day per connection and kind, through a real SMTP server and a real webhook receiver.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt, type Json } from "../helpers/api.js";
import { dayFromToday } from "../helpers/bookings.js";
import { eventAt, hostAt, slotsAt } from "../helpers/calendars.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { startSmtp, type ReceivedMail, type TestSmtp } from "../helpers/smtp.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";
import { icalDate as compact, icalEvent as ev, icalendar as cal, startFeeds, type Feeds } from "../helpers/feeds.js";

let server: RunningServer;
let base: string;
let smtp: TestSmtp;
let receiver: Receiver;
let feeds: Feeds;
let feedBase: string;


beforeAll(async () => {
  feeds = await startFeeds();
  feedBase = feeds.base;
  [smtp, receiver] = await Promise.all([startSmtp(), startReceiver()]);
  server = await startServer({ OUTBOUND_ALLOW_PRIVATE: "true", CALENDAR_CACHE_SECONDS: "1", SMTP_URL: smtp.url, EFFECTS_POLL_MS: "100" });
  base = server.baseUrl;
});

afterAll(async () => {
  await server?.stop();
  await smtp?.stop();
  await receiver?.close();
  await feeds?.close();
});

/** Waits until the outbox has nothing pending twice in a row, so that a message sent beyond those awaited would be counted too. */
async function outboxDrained(): Promise<void> {
  let idle = 0;
  for (let i = 0; i < 300 && idle < 2; i++) {
    const text = await (await fetch(`${base}/metrics`)).text();
    idle = /^scheduling_effects_pending 0$/m.test(text) ? idle + 1 : 0;
    await new Promise((r) => setTimeout(r, 250));
  }
  if (idle < 2) throw new Error("the outbox did not drain in 75 s");
}

describe("a connection that needs the host tells them", () => {
  it("error: a webhook with the connection as listed and one e-mail in the host's locale; ok again: a webhook, no e-mail; error again the same day: a webhook, no second e-mail; events left out: their own e-mail naming each", async () => {
    const day = dayFromToday(12);
    const busy = ev("planning", "SUMMARY:Planning", `DTSTART:${compact(day)}T090000Z`, `DTEND:${compact(day)}T100000Z`);
    const good = cal(busy);
    const broken = cal(busy.replace("BEGIN:VEVENT", "END:VEVENT"));
    feeds.bodies.set("/feed.ics", good);

    const host = await hostAt(base);
    const locale = await restAt(base, "PATCH", "/api/v1/user", { key: host.key, body: { user: { locale: "de" } } });
    expect(locale.status).toBe(200);
    const hook = await restAt(base, "POST", "/api/v1/webhooks", { key: host.key, body: { webhook: { url: receiver.url("/notices"), events: ["calendar.connection_changed"] } } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    receiver.secret("/notices", hook.body.data.secret);
    const made = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "ics", url: `${feedBase}/feed.ics` } } });
    expect(made.status).toBe(201);
    const event = await eventAt(base, host.key);
    const listed = async (): Promise<Json> => (await restAt(base, "GET", "/api/v1/calendar_connections", { key: host.key })).body.data[0];
    const toHost = (m: ReceivedMail) => m.envelope.to.includes(host.user.email);
    /** Lets the last read rest (CALENDAR_CACHE_SECONDS is 1), then lists slots, which reads the feed again. */
    const readAgain = async () => {
      await new Promise((r) => setTimeout(r, 1100));
      expect((await slotsAt(base, host.user, event, day)).status).toBe(200);
    };

    // Read once while good: what a listing falls back on while the calendar cannot be read.
    expect((await slotsAt(base, host.user, event, day)).starts).not.toContain(`${day} 09:00`);

    // Broken: the connection turns error. One webhook message, the connection as GET /calendar_connections shows it.
    feeds.bodies.set("/feed.ics", broken);
    await readAgain();
    const failing = await listed();
    expect(failing).toMatchObject({ status: "error", last_error: "the calendar is not valid iCalendar: the calendar has END:VEVENT without BEGIN:VEVENT" });
    const [first] = await receiver.waitFor("/notices", 1);
    expect(first!.verifyError).toBeUndefined();
    expect(first!.message).toMatchObject({ type: "calendar.connection_changed", data: { connection: failing } });
    // One e-mail to the host, in German: what happened in one line, what to do.
    const [mail] = await smtp.waitFor(1, toHost);
    expect(mail!.parsed.subject).toBe("Ihr Kalender 127.0.0.1 kann nicht gelesen werden");
    expect(mail!.parsed.text).toContain(`Ihr Kalender 127.0.0.1 konnte nicht gelesen werden: ${failing.last_error}`);
    expect(mail!.parsed.text).toContain("Prüfen Sie, ob sein Server erreichbar");

    // Fixed: ok again. A webhook says so; nothing is e-mailed about recovering.
    feeds.bodies.set("/feed.ics", good);
    await readAgain();
    const [, recovered] = await receiver.waitFor("/notices", 2);
    expect(recovered!.message!.data).toMatchObject({ connection: { id: failing.id, status: "ok", last_error: null } });

    // Broken again within the day: a webhook, but no second e-mail about the same kind of trouble.
    feeds.bodies.set("/feed.ics", broken);
    await readAgain();
    const [, , again] = await receiver.waitFor("/notices", 3);
    expect(again!.message!.data).toMatchObject({ connection: { id: failing.id, status: "error" } });

    // Events left out: a kind of trouble of its own, so an e-mail of its own that names each event.
    feeds.bodies.set("/feed.ics", cal(busy, ev("no-start", "SUMMARY:Dentist", `DTEND:${compact(day)}T120000Z`)));
    await readAgain();
    const warned = await listed();
    expect(warned).toMatchObject({ status: "ok", warnings: ['event "Dentist" could not be read: it has no DTSTART'] });
    const [, warning] = await smtp.waitFor(2, toHost);
    expect(warning!.parsed.subject).toBe("Einige Termine Ihres Kalenders 127.0.0.1 konnten nicht gelesen werden");
    expect(warning!.parsed.text).toContain('- event "Dentist" could not be read: it has no DTSTART');
    await outboxDrained();
    expect(smtp.received.filter(toHost).map((m) => m.parsed.subject)).toEqual([mail!.parsed.subject, warning!.parsed.subject]);
    // The last read changed two things, warnings and status: each a webhook message; the later one is the connection as it is now.
    const messages = receiver.received("/notices").map((r) => r.message!.data.connection as Json);
    expect(messages).toHaveLength(5);
    expect(messages).toContainEqual(warned);
    // Different messages, each with its own id (webhook-id is what receivers deduplicate by).
    expect(new Set(receiver.received("/notices").map((r) => r.id)).size).toBe(5);
  }, 180_000);

  it("an unknown webhook event is refused naming the allowed ones, calendar.connection_changed among them", async () => {
    const host = await hostAt(base);
    const refused = await restAt(base, "POST", "/api/v1/webhooks", { key: host.key, body: { webhook: { url: receiver.url("/x"), events: ["calendar.changed"] } } });
    expect(refused.status).toBe(422);
    expect(refused.body.data.allowed).toEqual(["booking.created", "booking.rescheduled", "booking.canceled", "calendar.connection_changed", "booking.reminder", "booking.requested", "booking.declined", "booking.no_show"]);
  });
});
