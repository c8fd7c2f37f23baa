// Benchmark of the outbox: e-mails and webhook messages per second from booking writes to a local SMTP server and receiver, with the CPU each process spent.
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { ADMIN_TOKEN, startServer } from "../test/helpers/server.js";
import { call, expectStatus } from "./rest.js";

/*
 * What it does: starts the real service (embedded database unless MONGODB_URI is set) with
 * OUTBOUND_ALLOW_PRIVATE=true and otherwise default outbox settings (poll 1 s, lease 60 s, 16 effects at
 * once per replica), SMTP_URL pointing at an smtp-server in this process (loopback, no TLS, no login; it
 * counts each accepted message and drops its bytes unparsed), and one account with WEBHOOKS webhooks on a
 * node:http receiver in this process that answers 204 at once (signatures and mail contents are not checked
 * here: the tests do that; this measures the service). Then BOOKINGS public bookings are made, CONCURRENCY
 * requests at a time, each owing two mails (booker and host: the bookings have no guests) and one message
 * per webhook. Printed:
 *   bookings/s        booking requests answered per second (the writes that record the owed changes)
 *   effects/s         per kind and both: messages received / time from the first booking request to that
 *                     kind's last message
 *   drain             time from the last booking answer to the last message (the outbox's lag behind the writes)
 *   CPU               user+system seconds of the service, its embedded database and this process (SMTP server,
 *                     receiver and load), and the service's CPU per effect
 * Run with `npm run bench:effects` (BENCH_BOOKINGS, BENCH_WEBHOOKS, BENCH_CONCURRENCY to change the counts;
 * BENCH_EMAIL=0 runs without SMTP_URL, webhooks only, as the bench did before e-mail was counted).
 */

const BOOKINGS = Number(process.env.BENCH_BOOKINGS ?? 200);
const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const EMAIL = process.env.BENCH_EMAIL !== "0";
const MAILS_PER_BOOKING = 2; // booker and host (docs/email-and-webhooks.md, E-mail: guests get theirs only when the booking has any)
const TICKS = 100; // USER_HZ on Linux

/** user+system CPU seconds of one process (the service, or its embedded database). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Arrivals of one kind of effect: how many, and when the last came. */
const hooks = { count: 0, lastAt: 0 };
const mails = { count: 0, lastAt: 0 };
let onReceived: (() => void) | undefined;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    hooks.count++;
    hooks.lastAt = performance.now();
    res.writeHead(204).end();
    onReceived?.();
  });
});
await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

// Plain SMTP on loopback, as in test/helpers/smtp.ts, but counting only: parsing would be the bench's CPU, not the service's.
const smtp = new SMTPServer({
  disabledCommands: ["STARTTLS", "AUTH"],
  authOptional: true,
  logger: false,
  onData(stream, _session, callback) {
    stream.resume();
    stream.on("end", () => {
      mails.count++;
      mails.lastAt = performance.now();
      callback(null);
      onReceived?.();
    });
  },
});
await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", () => r()));
const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;

const server = await startServer({ ...(EMAIL ? { SMTP_URL: smtpUrl } : {}), OUTBOUND_ALLOW_PRIVATE: "true", RATE_LIMIT_PER_KEY: "1000000000", RATE_LIMIT_PUBLIC_PER_IP: "1000000000", LOG_LEVEL: "warn" }, 60_000);
const servicePid = server.child.pid as number;
const base = server.baseUrl;
try {
  const account = expectStatus("account", await call(base, "POST", "/admin/accounts", { "X-ADMIN-TOKEN": ADMIN_TOKEN }, { account: { email: "bench-effects@example.com", full_name: "Bench" } }), 201);
  const key = { "X-API-KEY": account.api_key as string };
  const week = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
  const availability = { weekly_hours: Object.fromEntries(week.map((d) => [d, [{ start: "00:00", end: "24:00" }]])), date_overrides: [], minimum_notice_minutes: 0, booking_window_days: 60 };
  expectStatus("availability", await call(base, "PUT", "/user/availability", key, { availability }), 200);
  expectStatus("event", await call(base, "POST", "/events", key, { event: { name: "Bench", url: "bench", slot_duration: "30_minutes", padding_duration: "0_minutes" } }), 201);
  for (let i = 0; i < WEBHOOKS; i++) {
    expectStatus("webhook", await call(base, "POST", "/webhooks", key, { webhook: { url: `${receiverUrl}/${i}`, events: ["booking.created"] } }), 201);
  }
  // Slots from tomorrow 00:00 UTC on, one per booking, every half hour.
  const tomorrow = new Date();
  tomorrow.setUTCHours(24, 0, 0, 0);
  const starts = Array.from({ length: BOOKINGS }, (_, i) => new Date(tomorrow.getTime() + i * 30 * 60_000).toISOString());
  const expectedHooks = BOOKINGS * WEBHOOKS;
  const expectedMails = EMAIL ? BOOKINGS * MAILS_PER_BOOKING : 0;
  const expected = expectedHooks + expectedMails;
  const allReceived = new Promise<void>((resolve) => (onReceived = () => hooks.count >= expectedHooks && mails.count >= expectedMails && resolve()));

  const dbPids = childrenOf(servicePid);
  const cpu0 = { service: cpuSeconds(servicePid), db: dbPids.reduce((s, p) => s + cpuSeconds(p), 0), self: process.cpuUsage() };
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < starts.length) {
        const start = starts[next++];
        expectStatus("booking", await call(base, "POST", `/public/users/${account.url as string}/events/bench/bookings`, {}, { booking: { start_time: start, attendee_name: "Ada", attendee_email: "ada@example.com" } }), 201);
      }
    }),
  );
  const booked = performance.now();
  await allReceived;
  const self = process.cpuUsage(cpu0.self);
  const cpu = {
    service: cpuSeconds(servicePid) - cpu0.service,
    db: dbPids.reduce((s, p) => s + cpuSeconds(p), 0) - cpu0.db,
    self: (self.user + self.system) / 1e6,
  };
  const lastAt = Math.max(hooks.lastAt, mails.lastAt);
  const seconds = (lastAt - t0) / 1000;
  const rate = (n: number, at: number) => (n === 0 ? "-" : `${(n / ((at - t0) / 1000)).toFixed(1)} (${n} in ${((at - t0) / 1000).toFixed(2)} s)`);
  if (mails.count > expectedMails) console.log(`note: ${mails.count - expectedMails} more mails than expected (a message sent twice: at least once)`);
  console.log(`bookings ${BOOKINGS}, webhooks ${WEBHOOKS}, e-mail ${EMAIL ? "on" : "off"}, booking concurrency ${CONCURRENCY}: ${expectedMails} mails + ${expectedHooks} webhook messages`);
  console.log(`bookings/s        ${(BOOKINGS / ((booked - t0) / 1000)).toFixed(1)}`);
  console.log(`effects/s e-mail  ${rate(mails.count, mails.lastAt)}`);
  console.log(`effects/s hooks   ${rate(hooks.count, hooks.lastAt)}`);
  console.log(`effects/s both    ${((hooks.count + mails.count) / seconds).toFixed(1)}  (${seconds.toFixed(2)} s from the first booking request to the last effect)`);
  console.log(`drain             ${((lastAt - booked) / 1000).toFixed(2)} s after the last booking answer`);
  console.log(`CPU s             service ${cpu.service.toFixed(2)}, database ${cpu.db.toFixed(2)}, bench+receivers ${cpu.self.toFixed(2)} over ${seconds.toFixed(2)} s wall`);
  console.log(`service CPU/effect ${((cpu.service / expected) * 1e6).toFixed(0)} µs (booking writes included)`);
} finally {
  await server.stop();
  receiver.close();
  smtp.close();
}
