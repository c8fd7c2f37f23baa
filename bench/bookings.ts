// Benchmark of the host's booking reads on an event with 10 000 bookings (500-record page, counts, attendees) against GET /user in the same run.
import { ADMIN_TOKEN, startServer } from "../test/helpers/server.js";
import { call, expectStatus, type Json } from "./rest.js";

/*
 * What it does: starts the real service (embedded database unless MONGODB_URI is set), creates one
 * account and one event, moves 10 000 bookings in through the admin import (10 calls of 1000), then
 * times each read RUNS times, one request at a time, after WARMUP untimed calls:
 *   baseline   GET /user                      (authentication, one indexed read, the envelope)
 *   page       GET /events/<id>/bookings?page[limit]=500           (upcoming, default range)
 *   page-recent  the same, category=recent (sorted by booked_at)
 *   page-deep    the same, page[number]=8 (skips 3500 records)
 *   counts     GET /events/<id>/bookings_counts
 *   attendees  GET /events/<id>/attendees      (1900 attendees over every booking of the event)
 * and prints p50 and p99 in milliseconds and each p50 as a multiple of the baseline's p50: the
 * ratios say what the booking reads cost on this machine, whatever its speed. Target: page p50
 * ≤ 25 ms on the embedded database.
 *
 * Bookings: 10 000 over 2000 e-mail addresses (100 of them only rescheduled, so no attendees); 70 % confirmed and ahead within the default
 * 15-day range, 10 % confirmed in the past 15 days, 10 % canceled ahead, 5 % archived, 5 %
 * rescheduled. Run with `npm run bench:bookings` (BENCH_RUNS, BENCH_WARMUP to change the counts).
 */

const RUNS = Number(process.env.BENCH_RUNS ?? 60);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
const BOOKINGS = 10_000;
const PER_IMPORT = 1000;
const ATTENDEES = 2000;
const HOUR = 3_600_000;

function entry(eventId: string, i: number, now: number): Json {
  const bucket = i % 20; // 14 of 20 upcoming, 2 past, 2 canceled, 1 archived, 1 rescheduled
  const spread = (i * 7919) % (15 * 24); // hours, scattered over 15 days
  const ahead = now + HOUR + spread * HOUR;
  const behind = now - HOUR - spread * HOUR;
  const base = { event_id: eventId, attendee_name: `Attendee ${i % ATTENDEES}`, attendee_email: `attendee${i % ATTENDEES}@example.com`, booked_at: new Date(now - (i % 1000) * 60_000).toISOString() };
  if (bucket < 14) return { ...base, start_time: new Date(ahead).toISOString() };
  if (bucket < 16) return { ...base, start_time: new Date(behind).toISOString() };
  if (bucket < 18) return { ...base, start_time: new Date(ahead).toISOString(), status: "canceled" };
  if (bucket < 19) return { ...base, start_time: new Date(ahead).toISOString(), archived: true };
  return { ...base, start_time: new Date(ahead).toISOString(), status: "rescheduled" };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function measure(name: string, run: () => Promise<void>): Promise<{ name: string; p50: number; p99: number }> {
  for (let i = 0; i < WARMUP; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { name, p50: percentile(times, 50), p99: percentile(times, 99) };
}

const server = await startServer({ RATE_LIMIT_PER_KEY: "1000000000", RATE_LIMIT_PUBLIC_PER_IP: "1000000000" }, 60_000);
try {
  const base = server.baseUrl;
  const admin = { "x-admin-token": ADMIN_TOKEN };
  const account = expectStatus("account", await call(base, "POST", "/admin/accounts", admin, { account: { email: `bench-${Date.now()}@example.com`, full_name: "Bench Host" } }), 201);
  const key = { "x-api-key": String(account.api_key) };
  const event = expectStatus("event", await call(base, "POST", "/events", key, { event: { name: "Bench", url: "bench", slot_duration: "30_minutes" } }), 201);
  const eventId = String(event.id);

  const now = Date.now();
  const entries = Array.from({ length: BOOKINGS }, (_, i) => entry(eventId, i, now));
  // Addresses whose only bookings were rescheduled are no attendees.
  const attendees = new Set(entries.filter((e) => e.status !== "rescheduled").map((e) => e.attendee_email)).size;
  const seedStart = performance.now();
  const importTimes: number[] = [];
  for (let offset = 0; offset < BOOKINGS; offset += PER_IMPORT) {
    const t0 = performance.now();
    const batch = entries.slice(offset, offset + PER_IMPORT);
    const data = expectStatus("import", await call(base, "POST", "/admin/bookings/import", admin, { bookings: batch }), 201);
    if (data.imported !== PER_IMPORT) throw new Error(`import answered ${JSON.stringify(data)}`);
    importTimes.push(performance.now() - t0);
  }
  const seedMs = performance.now() - seedStart;

  const get = (path: string, check?: (data: Json) => void) => async () => {
    const data = expectStatus(path, await call(base, "GET", path, key), 200);
    check?.(data);
  };
  const fullPage = (data: Json) => {
    const records = data.records as unknown[];
    if (records.length !== 500) throw new Error(`page holds ${records.length} records`);
  };
  const rows = [
    await measure("baseline GET /user", get("/user")),
    await measure("page (500, upcoming)", get(`/events/${eventId}/bookings?page[limit]=500`, fullPage)),
    await measure("page (500, recent)", get(`/events/${eventId}/bookings?category=recent&page[limit]=500`, fullPage)),
    await measure("page (500, page 8)", get(`/events/${eventId}/bookings?page[limit]=500&page[number]=8`, fullPage)),
    await measure("counts", get(`/events/${eventId}/bookings_counts`)),
    await measure("attendees", get(`/events/${eventId}/attendees`, (d) => {
      if (!Array.isArray(d) || d.length !== attendees) throw new Error(`attendees: ${Array.isArray(d) ? d.length : typeof d}`);
    })),
  ];
  const counts = expectStatus("counts", await call(base, "GET", `/events/${eventId}/bookings_counts`, key), 200);

  const baseline = rows[0].p50;
  const fmt = (n: number) => n.toFixed(1).padStart(8);
  const out = [
    `database: ${process.env.MONGODB_URI ? "MONGODB_URI" : "embedded (jongodb)"}; ${BOOKINGS} bookings on one event, ${attendees} attendees; ${RUNS} timed runs each after ${WARMUP} warm-up, one request at a time`,
    `seeding: ${(seedMs / 1000).toFixed(1)} s for ${BOOKINGS / PER_IMPORT} imports of ${PER_IMPORT} (first ${importTimes[0].toFixed(0)} ms, last ${importTimes[importTimes.length - 1].toFixed(0)} ms)`,
    `counts in the default range: ${JSON.stringify(counts)}`,
    "",
    `${"read".padEnd(24)}${"p50 ms".padStart(8)}${"p99 ms".padStart(8)}  p50 / baseline p50`,
    ...rows.map((r) => `${r.name.padEnd(24)}${fmt(r.p50)}${fmt(r.p99)}  ${(r.p50 / baseline).toFixed(1)}x`),
    "",
    `target: page (500, upcoming) p50 <= 25 ms: ${rows[1].p50 <= 25 ? "met" : "NOT met"} (${rows[1].p50.toFixed(1)} ms)`,
  ];
  process.stdout.write(out.join("\n") + "\n");
} finally {
  await server.stop();
}
