// The tenant-fairness case of bench:attacks (issue 25): one account's hanging webhook receivers against another account's deliveries.
import { startReceiver, type Receiver } from "../test/helpers/webhookReceiver.js";
import { ADMIN_TOKEN, startService } from "./service.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 0 });

/** What the reproduction used: 19 hanging webhooks of one account, 3 of its bookings. */
const HANGING_WEBHOOKS = 19;
const HANGING_BOOKINGS = 3;
/** Bookings of the other account, one every PROBE_GAP_MS once the first account's effects are stuck. */
const PROBES = 5;
const PROBE_GAP_MS = 3000;
/** How long after A's first booking the requests to its hanging receivers are counted. */
const WINDOW_MS = 90_000;

type Json = Record<string, unknown>;

async function call(port: number, method: string, path: string, opts: { key?: string; admin?: boolean; body?: unknown } = {}): Promise<{ status: number; data: Json }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (opts.key) headers["x-api-key"] = opts.key;
  if (opts.admin) headers["x-admin-token"] = ADMIN_TOKEN;
  const res = await fetch(`http://127.0.0.1:${port}/api/v1${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const body = (await res.json()) as { data: Json };
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(body)}`);
  return { status: res.status, data: body.data };
}

interface Tenant {
  key: string;
  userUrl: string;
  eventUrl: string;
}

const WEEK = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

async function tenant(port: number, name: string): Promise<Tenant> {
  const account = (await call(port, "POST", "/admin/accounts", { admin: true, body: { account: { email: `${name}-${Date.now()}@example.com`, full_name: name, timezone: "UTC" } } })).data;
  const key = String(account.api_key);
  const availability = { weekly_hours: Object.fromEntries(WEEK.map((d) => [d, [{ start: "00:00", end: "24:00" }]])), date_overrides: [], minimum_notice_minutes: 0, booking_window_days: 60 };
  await call(port, "PUT", "/user/availability", { key, body: { availability } });
  const event = (await call(port, "POST", "/events", { key, body: { event: { name: "Meeting", url: "meeting", slot_duration: "15_minutes" } } })).data;
  return { key, userUrl: String(account.url), eventUrl: String(event.url) };
}

async function hook(port: number, t: Tenant, receiver: Receiver, path: string): Promise<void> {
  const created = (await call(port, "POST", "/webhooks", { key: t.key, body: { webhook: { url: receiver.url(path), events: ["booking.created"] } } })).data;
  receiver.secret(path, String(created.secret));
}

let slot = 0;
async function bookOne(port: number, t: Tenant): Promise<void> {
  // A fresh quarter hour each time, tomorrow and on.
  const start = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) + ++slot * 15 * 60_000);
  await call(port, "POST", `/public/users/${t.userUrl}/events/${t.eventUrl}/bookings`, {
    body: { booking: { start_time: start.toISOString(), attendee_name: "Bench Booker", attendee_email: `booker-${slot}@example.com` } },
  });
}

/** The outbox lines of /metrics, for the report. */
async function outboxMetrics(port: number): Promise<string[]> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text.split("\n").filter((l) => /^scheduling_effects_/.test(l));
}

/**
 * Account A: HANGING_WEBHOOKS webhooks whose receiver never answers (each try waits out the 15 s delivery
 * timeout), HANGING_BOOKINGS bookings. Then account B, one webhook that answers at once: PROBES bookings, and the
 * time from each booking's answer to its delivery. Default outbox settings (EFFECTS_CONCURRENCY 48).
 */
export async function tenantFairness(): Promise<string[]> {
  const receiver = await startReceiver();
  let release!: () => void;
  const never = new Promise<void>((r) => (release = r));
  const service = await startService({ OUTBOUND_ALLOW_PRIVATE: "true" });
  const port = service.port;
  try {
    const a = await tenant(port, "hanging");
    const b = await tenant(port, "waiting");
    for (let i = 0; i < HANGING_WEBHOOKS; i++) {
      const path = `/a-${i}`;
      receiver.answer(path, () => ({ status: 200, hold: never }));
      await hook(port, a, receiver, path);
    }
    await hook(port, b, receiver, "/b");
    const startedAt = Date.now();
    for (let i = 0; i < HANGING_BOOKINGS; i++) await bookOne(port, a);
    // The first tries of A's effects have started and hang.
    await sleep(1000);
    const latencies: number[] = [];
    for (let i = 0; i < PROBES; i++) {
      await bookOne(port, b);
      const booked = Date.now();
      const got = await receiver.waitFor("/b", i + 1, 120_000);
      latencies.push(got[i].at - booked);
      console.error(`fairness: B's delivery ${i + 1} after ${fmt(latencies[i])} ms`);
      await sleep(PROBE_GAP_MS);
    }
    // How often the hanging receivers are tried in a fixed window: one at a time per destination, then resting.
    await sleep(Math.max(0, startedAt + WINDOW_MS - Date.now()));
    const hangingTries = Array.from({ length: HANGING_WEBHOOKS }, (_, i) => receiver.received(`/a-${i}`).length).reduce((x, y) => x + y, 0);
    const elapsed = (Date.now() - startedAt) / 1000;
    const metrics = await outboxMetrics(port);
    const sorted = [...latencies].sort((x, y) => x - y);
    return [
      `tenant fairness: account A has ${HANGING_WEBHOOKS} webhooks whose receiver never answers and ${HANGING_BOOKINGS} bookings (${HANGING_WEBHOOKS * HANGING_BOOKINGS} deliveries that hang 15 s each); ` +
        `account B books ${PROBES} times, ${PROBE_GAP_MS / 1000} s apart, one webhook that answers at once; EFFECTS_CONCURRENCY 48 (default)`,
      `B's deliveries after its booking: median ${fmt(sorted[Math.floor(sorted.length / 2)])} ms, max ${fmt(sorted[sorted.length - 1])} ms (in order: ${latencies.map(fmt).join(", ")}); ` +
        `${sorted[sorted.length - 1] <= 5000 ? "met" : "MISSED"}: within 5 s`,
      `A's hanging receivers were sent ${hangingTries} requests in the ${fmt(elapsed)} s from A's first booking to the end`,
      `/metrics at the end: ${metrics.join("; ")}`,
    ];
  } finally {
    release();
    if (service.child.exitCode === null) service.child.kill("SIGKILL");
    await receiver.close();
  }
}
