// Benchmark of the outbox under bursts (issue 29): bookings-and-cancels at a fixed rate over several hosts, on one replica and on three sharing one database; prints each webhook's and e-mail's lag behind its booking change and every message sent twice.
import { writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { startDatabase } from "../test/helpers/jongodb.js";
import { ADMIN_TOKEN, startServer, type RunningServer } from "../test/helpers/server.js";
import { call, expectStatus } from "./rest.js";

/*
 * What it does, per replica count in BENCH_REPLICAS (default "1,3"): starts a fresh embedded database (jongodb) of
 * its own and that many service processes on it (MONGODB_URI), each with the default outbox settings,
 * OUTBOUND_ALLOW_PRIVATE=true and SMTP_URL at an smtp-server in this process. HOSTS accounts (default 10) each get an
 * event and one webhook (booking.created, booking.canceled) on a node:http receiver in this process that answers 204
 * at once. Then, for SECONDS seconds (default 20), RATE times a second (default 25) one public booking of the next
 * host is made and canceled by its booker the moment it is answered (the requests go to the replicas in turn; each
 * operation starts on time whatever the others are doing). Each such operation owes 2 webhook messages and 4
 * e-mails (booker and host, for the booking and for the cancel).
 *
 * Before the burst, BASELINE_OPS (default 5) bookings-and-cancels are made one at a time on the idle service, each
 * waiting for its messages: their webhook lag is the baseline of the run (what one message costs when nothing
 * queues: the request, the relay's wake, one claim, one delivery), and the burst's lags are printed against it.
 *
 * Printed per replica count:
 *   baseline          the idle webhook lag, median of BASELINE_OPS
 *   ops               bookings-and-cancels made, and how many requests failed
 *   webhooks, e-mails received / expected, and how many ids (webhook-id, Message-ID) came more than once
 *   lag               per message: arrival - the answer of the request that made the change (the booking for
 *                     booking.created and its mails, the cancel for the rest); p50, p90, p99, max in seconds.
 *                     E-mails are matched to their booking by the booker's address; the host's mails carry
 *                     none, so they count in received and duplicates but not in lag; for webhooks also
 *                     p50 and p90 as multiples of the baseline
 * The run waits until every expected message arrived (at most DRAIN_S, default 180 s, after the last request),
 * then QUIET_S (default 5 s) more for late copies. BENCH_LOGS=<prefix> writes each service's log to
 * <prefix>-<replicas>-<n>.log. Run with `npm run bench:outbox`.
 */

const REPLICAS = (process.env.BENCH_REPLICAS ?? "1,3").split(",").map(Number);
const HOSTS = Number(process.env.BENCH_HOSTS ?? 10);
const RATE = Number(process.env.BENCH_RATE ?? 25);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const DRAIN_S = Number(process.env.BENCH_DRAIN_S ?? 180);
const QUIET_S = Number(process.env.BENCH_QUIET_S ?? 5);
const BASELINE_OPS = Number(process.env.BENCH_BASELINE_OPS ?? 5);

interface Arrival {
  id: string;
  at: number;
  /** The booking change it is about: "<booking index>:created" or ":canceled"; undefined when unknown (host mails). */
  change: string | undefined;
}

/** One run's arrivals, reset between replica counts. */
let hooks: Arrival[] = [];
let mails: Arrival[] = [];
/** Booking id (or booker address) -> index, and when each change's request was answered. */
const bookingIndex = new Map<string, number>();
const answeredAt = new Map<string, number>();

const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const at = performance.now();
    res.writeHead(204).end();
    let change: string | undefined;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { type: string; data: { booking: { id: string } } };
      const index = bookingIndex.get(body.data.booking.id);
      if (index !== undefined) change = `${index}:${body.type === "booking.created" ? "created" : "canceled"}`;
    } catch {
      // counted, not matched
    }
    hooks.push({ id: String(req.headers["webhook-id"]), at, change });
  });
});
await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

// Reads the headers only: the Message-ID, the recipient and whether it is a cancellation.
const smtp = new SMTPServer({
  disabledCommands: ["STARTTLS", "AUTH"],
  authOptional: true,
  logger: false,
  onData(stream, session, callback) {
    let head = "";
    stream.on("data", (c: Buffer) => {
      if (!head.includes("\r\n\r\n")) head += c.toString("latin1");
    });
    stream.on("end", () => {
      const at = performance.now();
      const id = /^Message-ID:\s*(\S+)/im.exec(head)?.[1] ?? "";
      const to = session.envelope.rcptTo.map((r) => r.address)[0] ?? "";
      const index = bookingIndex.get(to);
      // Cancellations carry METHOD:CANCEL; their subject is localized, the attachment part is not read here.
      const canceled = /^Subject:.*(cancel|Cancel)/m.test(head);
      mails.push({ id, at, change: index === undefined ? undefined : `${index}:${canceled ? "canceled" : "created"}` });
      callback(null);
    });
  },
});
await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", () => r()));
const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]);

/** Lags in seconds of the first arrival of each id whose change is one of the ops `from` and after, sorted. */
function lagsOf(arrivals: Arrival[], from: number): number[] {
  const first = new Map<string, Arrival>();
  for (const a of arrivals) if (!first.has(a.id)) first.set(a.id, a);
  const lags = [...first.values()].flatMap((a) => {
    const t = a.change === undefined || Number(a.change.split(":")[0]) < from ? undefined : answeredAt.get(a.change);
    return t === undefined ? [] : [(a.at - t) / 1000];
  });
  return lags.sort((x, y) => x - y);
}

function summary(arrivals: Arrival[], from: number, baseline?: number): { repeated: number; lag: string } {
  const seen = new Map<string, number>();
  for (const a of arrivals) seen.set(a.id, (seen.get(a.id) ?? 0) + 1);
  const repeated = [...seen.values()].filter((n) => n > 1).reduce((s, n) => s + n - 1, 0);
  // The first arrival of each id: a copy's lag is not the message's.
  const lags = lagsOf(arrivals, from);
  const f = (v: number) => v.toFixed(2);
  const ratio = baseline === undefined ? "" : `; p50 ${(percentile(lags, 50) / baseline).toFixed(1)}x, p90 ${(percentile(lags, 90) / baseline).toFixed(1)}x the baseline`;
  return { repeated, lag: `p50 ${f(percentile(lags, 50))} s, p90 ${f(percentile(lags, 90))} s, p99 ${f(percentile(lags, 99))} s, max ${f(lags[lags.length - 1] ?? NaN)} s (${lags.length} matched)${ratio}` };
}

async function run(replicas: number): Promise<void> {
  hooks = [];
  mails = [];
  bookingIndex.clear();
  answeredAt.clear();
  const db = await startDatabase();
  const servers: RunningServer[] = [];
  try {
    for (let i = 0; i < replicas; i++) {
      servers.push(await startServer({ MONGODB_URI: db.uri, SMTP_URL: smtpUrl, OUTBOUND_ALLOW_PRIVATE: "true", RATE_LIMIT_PER_KEY: "1000000000", RATE_LIMIT_PUBLIC_PER_IP: "1000000000", LOG_LEVEL: "warn" }, 60_000));
    }
    const base = (i: number) => servers[i % servers.length].baseUrl;
    const week = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
    const availability = { weekly_hours: Object.fromEntries(week.map((d) => [d, [{ start: "00:00", end: "24:00" }]])), date_overrides: [], minimum_notice_minutes: 0, booking_window_days: 60 };
    const hosts: string[] = [];
    for (let h = 0; h < HOSTS; h++) {
      const account = expectStatus("account", await call(base(0), "POST", "/admin/accounts", { "X-ADMIN-TOKEN": ADMIN_TOKEN }, { account: { email: `bench-outbox-${h}@example.com`, full_name: `Host ${h}` } }), 201);
      const key = { "X-API-KEY": account.api_key as string };
      expectStatus("availability", await call(base(0), "PUT", "/user/availability", key, { availability }), 200);
      expectStatus("event", await call(base(0), "POST", "/events", key, { event: { name: "Bench", url: "bench", slot_duration: "30_minutes", padding_duration: "0_minutes" } }), 201);
      expectStatus("webhook", await call(base(0), "POST", "/webhooks", key, { webhook: { url: `${receiverUrl}/${h}`, events: ["booking.created", "booking.canceled"] } }), 201);
      hosts.push(account.url as string);
    }
    const tomorrow = new Date();
    tomorrow.setUTCHours(24, 0, 0, 0);
    const total = BASELINE_OPS + RATE * SECONDS;
    let failed = 0;
    const op = async (n: number) => {
      const host = n % HOSTS;
      const slot = Math.floor(n / HOSTS);
      const email = `booker-${n}@example.com`;
      bookingIndex.set(email, n);
      const start = new Date(tomorrow.getTime() + slot * 30 * 60_000).toISOString();
      const booked = await call(base(n), "POST", `/public/users/${hosts[host]}/events/bench/bookings`, {}, { booking: { start_time: start, attendee_name: "Ada", attendee_email: email } });
      if (booked.status !== 201) return void failed++;
      const booking = booked.json.data as { id: string; private_key: string };
      bookingIndex.set(booking.id, n);
      answeredAt.set(`${n}:created`, performance.now());
      const canceled = await call(base(n + 1), "POST", `/public/bookings/${booking.private_key}/cancel`, {}, { booking: { cancel_reason: "bench" } });
      if (canceled.status !== 200) return void failed++;
      answeredAt.set(`${n}:canceled`, performance.now());
    };
    // The baseline: one op at a time on the idle service, each waiting for its two webhook messages.
    for (let n = 0; n < BASELINE_OPS; n++) {
      await op(n);
      const until = performance.now() + 30_000;
      while (hooks.filter((x) => x.change?.startsWith(`${n}:`)).length < 2 && performance.now() < until) await new Promise((r) => setTimeout(r, 20));
    }
    const idle = lagsOf(hooks, 0);
    const baseline = percentile(idle, 50);
    const t0 = performance.now();
    const ops: Promise<void>[] = [];
    for (let n = BASELINE_OPS; n < total; n++) {
      const due = t0 + ((n - BASELINE_OPS) * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      ops.push(op(n).catch(() => void failed++));
    }
    await Promise.all(ops);
    const loadEnd = performance.now();
    const made = [...answeredAt.keys()].filter((k) => k.endsWith(":canceled")).length;
    const expectedHooks = made * 2;
    const expectedMails = made * 4;
    const deadline = loadEnd + DRAIN_S * 1000;
    while (performance.now() < deadline && (new Set(hooks.map((h) => h.id)).size < expectedHooks || new Set(mails.map((m) => m.id)).size < expectedMails)) {
      await new Promise((r) => setTimeout(r, 250));
    }
    await new Promise((r) => setTimeout(r, QUIET_S * 1000));
    const h = summary(hooks, BASELINE_OPS, baseline);
    const m = summary(mails, BASELINE_OPS);
    console.log(`## ${replicas} replica${replicas === 1 ? "" : "s"}: ${RATE} bookings-and-cancels/s over ${HOSTS} hosts for ${SECONDS} s`);
    console.log(`baseline   idle webhook lag p50 ${baseline.toFixed(3)} s (${idle.length} messages of ${BASELINE_OPS} ops, one at a time)`);
    console.log(`ops        ${made - BASELINE_OPS} of ${total - BASELINE_OPS} made (${failed} requests failed), load took ${((loadEnd - t0) / 1000).toFixed(1)} s`);
    console.log(`webhooks   ${new Set(hooks.map((x) => x.id)).size} of ${expectedHooks} received, ${h.repeated} sent twice or more; lag ${h.lag}`);
    console.log(`e-mails    ${new Set(mails.map((x) => x.id)).size} of ${expectedMails} received, ${m.repeated} sent twice or more; lag ${m.lag}`);
  } finally {
    for (const s of servers) await s.stop();
    // What the services said (warnings, errors), for whoever explains a figure.
    if (process.env.BENCH_LOGS) servers.forEach((s, i) => writeFileSync(`${process.env.BENCH_LOGS}-${replicas}-${i + 1}.log`, s.logs()));
    await db.kill();
  }
}

try {
  for (const r of REPLICAS) await run(r);
} finally {
  receiver.close();
  smtp.close();
}
