// Reminder deliveries across processes: imported bookings about to end, after_end reminders; the downtime, the wait for a due time and a dead replica's lease pass on the replicas' clocks (moved, test/helpers/clock.ts); late after downtime is skipped, two replicas on one database send each once, a replica SIGKILLed mid-delivery loses none.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt, type Json } from "../helpers/api.js";
import { fixturesAt, type Host } from "../helpers/fixtures.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { startSmtp, type ReceivedMail, type TestSmtp } from "../helpers/smtp.js";
import { until } from "../helpers/wait.js";

const MINUTE = 60_000;
const SLOT_MS = 15 * MINUTE;
/** Long enough that a replica starved of CPU on a loaded machine keeps its lease between renewals (a third of it). */
const LEASE_MS = 10_000;

let db: TestDatabase;
let smtp: TestSmtp;
const servers: RunningServer[] = [];

beforeAll(async () => {
  db = await startDatabase();
  smtp = await startSmtp();
});

afterAll(async () => {
  for (const s of servers) await s.stop("SIGKILL");
  await smtp?.stop();
  await db?.kill();
});

/** A replica on the shared database: quick polls and retries, a one-minute late limit. */
async function replica(): Promise<RunningServer> {
  const s = await startServer({
    MONGODB_URI: db.uri,
    SMTP_URL: smtp.url,
    APP_URL: "https://book.example.test",
    EFFECTS_POLL_MS: "200",
    EFFECTS_LEASE_MS: String(LEASE_MS),
    EFFECTS_RETRY_SCALE: "0.01",
    // A deadline the in-process mail server meets at load 30: past it the outcome is unknown and the retry sends the
    // same Message-ID again (4 s gave three copies of one message).
    SMTP_TIMEOUT_MS: "20000",
    REMINDER_LATE_LIMIT_MINUTES: "1",
    ...CLOCK_CONTROL_ENV,
  });
  servers.push(s);
  return s;
}

const api = (s: RunningServer, method: string, path: string, opts: { key?: string; body?: unknown; admin?: boolean } = {}) => restAt(s.baseUrl, method, `/api/v1${path}`, opts);

let seq = 0;

/** Bookings moved in through the admin import, each ending at `endsAt`; returns their ids and bookers. */
async function importEnding(s: RunningServer, eventId: string, endsAt: number, count: number): Promise<{ id: string; email: string }[]> {
  const bookers = Array.from({ length: count }, () => `booker-${process.pid}-${++seq}@example.com`);
  const start = new Date(endsAt - SLOT_MS).toISOString();
  const bookings = bookers.map((email) => ({ event_id: eventId, start_time: start, attendee_name: "Ada", attendee_email: email }));
  // An import is one transaction: a 503 (the database busy on a loaded machine) wrote nothing and is tried again.
  const res = await until("the import", () => api(s, "POST", "/admin/bookings/import", { admin: true, body: { bookings } }), { accept: (r) => r.status !== 503, timeoutMs: 30_000, everyMs: 1000 });
  expect(res.status).toBe(201);
  const ids: string[] = res.body.data.ids;
  return ids.map((id, i) => ({ id, email: bookers[i] }));
}

async function deliveryOf(s: RunningServer, host: Host, bookingId: string, accept: (r: Json) => boolean): Promise<Json> {
  return until(`the reminder of ${bookingId}`, async () => (await api(s, "GET", `/bookings/${bookingId}`, { key: host.key })).body.data?.reminders?.[0], { accept: (r: Json) => r !== undefined && accept(r), timeoutMs: 30_000 });
}

const mailsTo = (email: string): ReceivedMail[] => smtp.received.filter((m) => m.envelope.to.includes(email));

describe("reminders across replicas", () => {
  it("skip what is too late after downtime, send each delivery once with two replicas, and lose none to a SIGKILL", async () => {
    const a = await replica();
    const host = await fixturesAt(a.baseUrl).newHost();
    const event = await fixturesAt(a.baseUrl).newEvent(host, { slot_duration: "15_minutes" });
    const r = await api(a, "POST", `/events/${event.id}/reminders`, { key: host.key, body: { reminder: { timing: "after_end", offset_minutes: 0 } } });
    expect(r.status).toBe(201);

    // Downtime: a booking that ends in 10 minutes; every replica stops before then and none comes back for over a
    // minute after it (the new replicas' clocks are moved past it before they could see it due).
    const downtimeEnd = Date.now() + 10 * MINUTE;
    const [missed] = await importEnding(a, event.id, downtimeEnd, 1);
    expect(await deliveryOf(a, host, missed.id, (d) => d.status === "scheduled")).toMatchObject({ due_at: new Date(downtimeEnd).toISOString() });
    expect(await a.stop("SIGTERM")).toBe(0);
    const [one, two] = await Promise.all([replica(), replica()]);
    // Both replicas' clocks the same `ahead` of this one: the delivery is more than the late limit overdue on them.
    let ahead = downtimeEnd + MINUTE + 5000 - Date.now();
    await advanceClock([one, two], ahead);
    const serviceNow = () => Date.now() + ahead;
    /** Moves the replicas' clocks on to `at` (their time), as if the time between had passed. */
    const moveTo = async (replicas: RunningServer[], at: number) => {
      const by = at - serviceNow();
      if (by <= 0) return;
      await advanceClock(replicas, by);
      ahead += by;
    };
    expect(await deliveryOf(one, host, missed.id, (d) => d.status !== "scheduled")).toMatchObject({ status: "skipped", sent_at: null });
    expect(mailsTo(missed.email)).toEqual([]);

    // Two replicas on one database: five deliveries due together, each sent once, within 60 s. Due 15 s ahead, so
    // that all are planned before either replica sees them due (one planned after its due time is skipped); the
    // clocks then move to that time.
    const due = serviceNow() + 15_000;
    const together = await importEnding(one, event.id, due, 5);
    for (const b of together) await deliveryOf(one, host, b.id, (d) => d.status === "scheduled");
    await moveTo([one, two], due);
    await smtp.waitFor(5, (m) => together.some((b) => m.envelope.to.includes(b.email)), 90_000);
    for (const b of together) {
      const d = await deliveryOf(two, host, b.id, (x) => x.status === "sent");
      expect(new Date(d.sent_at).getTime() - due).toBeLessThan(60_000);
      const mails = mailsTo(b.email);
      if (mails.length !== 1) {
        // What each replica did about this booking's effects, to tell a second run of one e-mail from two e-mails.
        const ids = mails.map((m) => String(m.parsed.messageId).replace(/^<|@.*$/g, ""));
        for (const s of [one, two]) console.log(s.logs().split("\n").filter((l) => ids.some((id) => l.includes(id))).join("\n"));
      }
      expect(mails.map((m) => `${m.parsed.messageId} ${m.parsed.subject}`)).toEqual([`${mails[0]?.parsed.messageId} ${mails[0]?.parsed.subject}`]);
      expect(mails[0].at + ahead - due).toBeGreaterThanOrEqual(0);
      expect(mails[0].at + ahead - due).toBeLessThan(60_000);
    }
    console.log(`two replicas: each reminder sent once, at most ${Math.max(...together.map((b) => mailsTo(b.email)[0].at + ahead - due)) / 1000} s after due`);

    // A replica dies (SIGKILL) mid-delivery: only replica one's clock is moved to the due time, so it is the one that
    // takes the delivery; the mail server holds its connection without a greeting, so it is stuck before handing
    // anything over, and is killed. Replica two's clock then moves past the dead one's lease: the delivery arrives
    // once, within 60 s of due, from it.
    smtp.stallNext(1);
    const before = smtp.connections();
    const killedDue = serviceNow() + 12_000;
    const [crashed] = await importEnding(two, event.id, killedDue, 1);
    await deliveryOf(two, host, crashed.id, (d) => d.status === "scheduled");
    // From here `ahead` is one's clock, and two's is `behind` it.
    const behind = Math.max(0, killedDue - serviceNow());
    await advanceClock(one, behind);
    ahead += behind;
    await until("replica one to connect to the stalled mail server", () => smtp.connections() > before, { timeoutMs: 60_000 });
    expect(await one.stop("SIGKILL")).toBeNull();
    await advanceClock(two, behind + LEASE_MS + 1000);
    ahead += LEASE_MS + 1000;
    const [mail] = await smtp.waitFor(1, (m) => m.envelope.to.includes(crashed.email), 60_000);
    expect(mail.at + ahead - killedDue).toBeLessThan(60_000);
    const d = await deliveryOf(two, host, crashed.id, (x) => x.status === "sent");
    expect(new Date(d.sent_at).getTime() - killedDue).toBeLessThan(60_000);
    expect(mailsTo(crashed.email)).toHaveLength(1);
    console.log(`after a SIGKILL: sent ${((mail.at + ahead - killedDue) / 1000).toFixed(1)} s after due`);
  }, 300_000);
});
