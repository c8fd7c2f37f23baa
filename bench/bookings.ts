// Benchmark of the host's booking reads at 10 000 and 50 000 bookings on one event (cached, right after a write, ten readers at once), slots, and booking throughput, against GET /user in the same run.
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import mongoose from "mongoose";
import { startDatabase } from "../test/helpers/jongodb.js";
import { ADMIN_TOKEN, startServer, type RunningServer } from "../test/helpers/server.js";
import { call, expectStatus, type Json } from "./rest.js";
import { serviceArgs } from "./service.js";

/*
 * What it does, for each size in BENCH_SIZES (default 10000,50000), on a fresh service over a database of its own
 * (the embedded server): creates one account and one event, writes the bookings into the database through the
 * driver as the admin import would (through the API the embedded server's write cost would make seeding take
 * hours), then times each read RUNS times after WARMUP untimed calls:
 *   baseline        GET /user (authentication, one indexed read, the envelope)
 *   page            GET /events/<id>/bookings?page[limit]=500, nothing changed since the last read (cached), a
 *                   second after the last one (the same page asked again within a second is reused, cheaper still)
 *   page after write  the same read right after a write to the event's bookings (PATCH of one booking's notes,
 *                   not timed): what a host's list costs when bookings keep coming in
 *   1 reader after write / 10 readers after write   wall time of one read, and of ten concurrent reads, right
 *                   after a write
 *   counts, attendees   GET /events/<id>/bookings_counts and /attendees, cached
 *   public booking  one POST of a booking on another event of the host (few runs: the embedded server's insert
 *                   cost grows with the collection, see docs/operations.md "What the embedded database is for")
 * and the service's peak RSS, over the whole run and over the reads alone (the kernel's high-water mark is reset
 * after seeding). Then, on a fresh service: the slots of 31 days of 15-minute slots around 2 000 bookings, and
 * bookings per second with 50 clients booking at once.
 *
 * Targets (bench/RESULTS.md): a page right after a write within 2x a cached page, 10 readers after a write within
 * 2x one reader, peak RSS <= 250 MB. Ratios, not times, so they hold whatever the machine's speed.
 * Bookings: 70 % confirmed ahead within the default 15-day range, 10 % past, 10 % canceled, 5 % archived, 5 %
 * rescheduled, over 2 000 e-mail addresses. BENCH_RUNS, BENCH_WARMUP, BENCH_SIZES change the counts. With
 * MONGODB_URI set, the reads run on that MongoDB, in a database of the bench's own that is dropped at the end.
 * At 50 000 the embedded server takes minutes to seed (515-561 s on the loaded 2-core machine) and about 22 s per
 * write, and each after-write run needs one: BENCH_SIZES=50000 BENCH_ONLY=after-write BENCH_WRITE_RUNS=2 BENCH_RUNS=5
 * took 14 minutes there; the whole run adds the counts, the attendees and three public bookings (tens of seconds each).
 */

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const SIZES = (process.env.BENCH_SIZES ?? "10000,50000").split(",").map(Number);
const PUBLIC_BOOKINGS = Number(process.env.BENCH_PUBLIC_BOOKINGS ?? 3);
/** Runs of the after-write cases: each needs a write, which costs the embedded server seconds at 10 000 bookings. */
const WRITE_RUNS = Number(process.env.BENCH_WRITE_RUNS ?? 5);
/** BENCH_ONLY=after-write: only the baseline, the cached page and the after-write cases (to compare changes to the read path quickly). */
const ONLY_AFTER_WRITE = process.env.BENCH_ONLY === "after-write";
const PER_IMPORT = 1000;
const ATTENDEES = 2000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The compiled build by default, as production runs it (BENCH_SCRIPT=start for the TypeScript source). */
const NODE_ARGS = serviceArgs();
const ENV = { RATE_LIMIT_PER_KEY: "1000000000", RATE_LIMIT_PUBLIC_PER_IP: "1000000000" };

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

interface Row {
  name: string;
  p50: number;
  p99: number;
}

/** Times `run` RUNS times after WARMUP; `before` runs untimed before each (the write of an after-write case). */
async function measure(name: string, run: () => Promise<void>, before?: () => Promise<void>, runs = RUNS, warmup = WARMUP): Promise<Row> {
  for (let i = 0; i < warmup; i++) {
    await before?.();
    await run();
  }
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    await before?.();
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { name, p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** The kernel's high-water mark of a process's resident memory, in MB. */
function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Resets the high-water mark to the current RSS (Linux clear_refs 5), so a later peak is of what follows. */
function resetPeakRss(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    // Not permitted here: the read phase's peak then includes seeding.
  }
}

const fmt = (n: number, d = 1) => n.toFixed(d).padStart(9);
const admin = { "x-admin-token": ADMIN_TOKEN };

async function host(base: string): Promise<{ key: Record<string, string>; url: string; id: string }> {
  const account = expectStatus("account", await call(base, "POST", "/admin/accounts", admin, { account: { email: `bench-${Date.now()}-${Math.random()}@example.com`, full_name: "Bench Host", timezone: "UTC" } }), 201);
  const key = { "x-api-key": String(account.api_key) };
  const week = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
  const open = { weekly_hours: Object.fromEntries(week.map((d) => [d, [{ start: "00:00", end: "24:00" }]])), date_overrides: [], minimum_notice_minutes: 0, booking_window_days: 60 };
  expectStatus("availability", await call(base, "PUT", "/user/availability", key, { availability: open }), 200);
  return { key, url: String(account.url), id: String(account.id) };
}

/** A booking document as the admin import writes it, from one entry of `entry`. */
function bookingDoc(e: Json, userId: mongoose.Types.ObjectId, writtenAt: Date): Record<string, unknown> {
  const start = new Date(String(e.start_time));
  const status = (e.status as string | undefined) ?? "confirmed";
  return {
    _id: new mongoose.Types.ObjectId(),
    event_id: new mongoose.Types.ObjectId(String(e.event_id)),
    user_id: userId,
    start_time: start,
    end_time: new Date(start.getTime() + 30 * 60_000),
    padding_minutes: 0,
    status,
    archived: e.archived === true,
    attendee_name: e.attendee_name,
    attendee_email: e.attendee_email,
    timezone: null,
    answers: [],
    guest_emails: [],
    booked_at: new Date(String(e.booked_at)),
    private_key: randomBytes(32).toString("base64url"),
    internal_notes: null,
    cancel_reason: null,
    canceled_at: status === "canceled" ? writtenAt : null,
    rescheduled_from: null,
    rescheduled_to: null,
    imported: true,
    updated_at: writtenAt,
  };
}

/**
 * The embedded server by default; with MONGODB_URI set, a database of the bench's own on that server (named after
 * the run, dropped at the end), so the same reads can be measured on MongoDB, where the indexes serve them.
 */
async function benchDatabase(size: number): Promise<{ uri: string; kill(): Promise<void> }> {
  const server = process.env.MONGODB_URI;
  if (!server) return startDatabase();
  const uri = server.replace(/^(mongodb(?:\+srv)?:\/\/[^/?]+)(\/[^?]*)?/, `$1/bench-bookings-${size}-${process.pid}`);
  return {
    uri,
    async kill() {
      const conn = await mongoose.createConnection(uri).asPromise();
      // The embedded server (pointed at by hand) has no dropDatabase; a MongoDB does.
      await conn.dropDatabase().catch((err: Error) => console.error(`the bench's database was not dropped: ${err.message}`));
      await conn.close();
    },
  };
}

async function readsAt(size: number): Promise<string[]> {
  // A database of the bench's own, seeded through the driver: through the API, the embedded server's cost per
  // write (bench:embedded) would make seeding take hours. Its deadline is raised for the same reason (one write
  // at 10 000 bookings takes it seconds); the reads measured here stay far below it.
  const db = await benchDatabase(size);
  const server: RunningServer = await startServer({ ...ENV, MONGODB_URI: db.uri, DB_OPERATION_TIMEOUT_MS: "600000" }, 60_000, NODE_ARGS);
  const conn = await mongoose.createConnection(db.uri).asPromise();
  try {
    const base = server.baseUrl;
    const pid = server.child.pid!;
    const { key, url, id: userId } = await host(base);
    const event = expectStatus("event", await call(base, "POST", "/events", key, { event: { name: "Bench", url: "bench", slot_duration: "30_minutes" } }), 201);
    const other = expectStatus("event", await call(base, "POST", "/events", key, { event: { name: "Other", url: "other", slot_duration: "15_minutes" } }), 201);
    const eventId = String(event.id);

    const now = Date.now();
    // Written a day ago: a host's bookings come in over days, not all within the snapshot's refresh overlap.
    const writtenAt = new Date(now - DAY);
    const docs = Array.from({ length: size }, (_, i) => bookingDoc(entry(eventId, i, now), new mongoose.Types.ObjectId(userId), writtenAt));
    const seedStart = performance.now();
    for (let offset = 0; offset < size; offset += PER_IMPORT) await conn.collection("bookings").insertMany(docs.slice(offset, offset + PER_IMPORT));
    const seedMs = performance.now() - seedStart;
    const ids = docs.map((d) => String(d._id));
    const seedPeak = peakRssMb(pid);
    resetPeakRss(pid);

    const page = `/events/${eventId}/bookings?page[limit]=500`;
    const get = (path: string) => async () => void expectStatus(path, await call(base, "GET", path, key), 200);
    let n = 0;
    // A write to the event's bookings: new notes on an upcoming one (the stamp changes, one booking changes).
    const write = async () => void expectStatus("patch", await call(base, "PATCH", `/bookings/${ids[(n++ * 20) % ids.length]}`, key, { booking: { internal_notes: `note ${n}` } }), 200);
    // The readers' answers are checked for their status and read to the end, not parsed: parsing ten 300 KB
    // answers would be this process's cost, on the cores the service shares, not the service's.
    const fetchPage = async () => {
      const res = await fetch(`${base}/api/v1${page}`, { headers: key });
      if (res.status !== 200) throw new Error(`page: ${res.status}`);
      await res.arrayBuffer();
    };
    const readers = (count: number) => async () => void (await Promise.all(Array.from({ length: count }, fetchPage)));
    // After the seeded bookings (15 days ahead), which block the host on every event.
    let slot = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) + 20 * DAY;
    const book = async () => {
      slot += 15 * 60_000;
      const body = { booking: { start_time: new Date(slot).toISOString(), attendee_name: "Ada", attendee_email: "ada@example.com" } };
      expectStatus("booking", await call(base, "POST", `/public/users/${url}/events/${String(other.url)}/bookings`, {}, body), 201);
    };

    const rows = [
      await measure("baseline GET /user", get("/user")),
      // Spaced past the page memo's second (src/features/bookings/service.ts): the snapshot is current, the page made anew.
      await measure("page (500), cached", get(page), () => new Promise((r) => setTimeout(r, 1100))),
      await measure("page (500) after a write", get(page), write, WRITE_RUNS, 1),
      await measure("1 reader after a write", readers(1), write, WRITE_RUNS, 1),
      await measure("10 readers after a write", readers(10), write, WRITE_RUNS, 1),
      ...(ONLY_AFTER_WRITE
        ? []
        : [
            await measure("counts, cached", get(`/events/${eventId}/bookings_counts`)),
            await measure("attendees, cached", get(`/events/${eventId}/attendees`)),
            await measure("public booking", book, undefined, PUBLIC_BOOKINGS, 0),
          ]),
    ];
    const readPeak = peakRssMb(pid);
    const p50 = (name: string) => rows.find((r) => r.name === name)!.p50;
    const afterWrite = p50("page (500) after a write") / p50("page (500), cached");
    const concurrent = p50("10 readers after a write") / p50("1 reader after a write");
    return [
      `### ${size.toLocaleString("en-US")} bookings on one event`,
      `seeding through the driver: ${(seedMs / 1000).toFixed(1)} s; ${RUNS} timed runs per cached read after ${WARMUP} warm-up, ${WRITE_RUNS} per after-write case (each after an untimed write, the write's own time left out)`,
      "",
      `${"case".padEnd(28)}${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}  p50 / baseline`,
      ...rows.map((r) => `${r.name.padEnd(28)}${fmt(r.p50)}${fmt(r.p99)}  ${(r.p50 / rows[0].p50).toFixed(1)}x`),
      "",
      `peak RSS of the service: ${seedPeak.toFixed(0)} MB up to the end of seeding, ${readPeak.toFixed(0)} MB during the reads`,
      `${afterWrite <= 2 ? "met    " : "MISSED "} page after a write within 2x a cached page (${afterWrite.toFixed(2)}x)`,
      `${concurrent <= 2 ? "met    " : "MISSED "} 10 readers after a write within 2x one reader (${concurrent.toFixed(2)}x)`,
      `${readPeak <= 250 ? "met    " : "MISSED "} RSS during the reads <= 250 MB`,
      "",
    ];
  } finally {
    await conn.close();
    await server.stop();
    await db.kill();
  }
}

async function slotsAndThroughput(): Promise<string[]> {
  // The import of 2 000 bookings costs the embedded server more than the default database deadline.
  const server = await startServer({ ...ENV, DB_OPERATION_TIMEOUT_MS: "60000" }, 60_000, NODE_ARGS);
  try {
    const base = server.baseUrl;
    const { key, url } = await host(base);
    const event = expectStatus("event", await call(base, "POST", "/events", key, { event: { name: "Slots", url: "slots", slot_duration: "15_minutes" } }), 201);
    const today = new Date().toISOString().slice(0, 10);
    const start = Date.parse(`${today}T00:00:00Z`) + DAY;
    // 2 000 confirmed bookings spread over the 31 days, on the 15-minute grid.
    const bookings = Array.from({ length: 2000 }, (_, i) => ({
      event_id: String(event.id),
      start_time: new Date(start + ((i * 7) % (30 * 96)) * 15 * 60_000).toISOString(),
      attendee_name: `A ${i}`,
      attendee_email: `a${i}@example.com`,
    }));
    for (let i = 0; i < bookings.length; i += PER_IMPORT) expectStatus("import", await call(base, "POST", "/admin/bookings/import", admin, { bookings: bookings.slice(i, i + PER_IMPORT) }), 201);
    const to = new Date(start + 30 * DAY).toISOString().slice(0, 10);
    const from = new Date(start).toISOString().slice(0, 10);
    const slotsPath = `/public/users/${url}/events/slots/slots?date_from=${from}&date_to=${to}`;
    let slotCount = 0;
    const slots = await measure("slots, 31 days, 2 000 bookings", async () => {
      const data = expectStatus("slots", await call(base, "GET", slotsPath, {}), 200);
      slotCount = (data.slots as unknown[]).length;
    });

    // Throughput: 50 clients book distinct slots of another event at once, until TOTAL bookings are made.
    const fast = expectStatus("event", await call(base, "POST", "/events", key, { event: { name: "Fast", url: "fast", slot_duration: "15_minutes" } }), 201);
    const CLIENTS = 50;
    const TOTAL = Number(process.env.BENCH_THROUGHPUT_BOOKINGS ?? 500);
    let next = 0;
    const refused = new Map<number, number>();
    const far = start + 35 * DAY;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < TOTAL) {
          const i = next++;
          const body = { booking: { start_time: new Date(far + i * 15 * 60_000).toISOString(), attendee_name: "B", attendee_email: `b${i}@example.com` } };
          const res = await call(base, "POST", `/public/users/${url}/events/${String(fast.url)}/bookings`, {}, body);
          if (res.status !== 201) refused.set(res.status, (refused.get(res.status) ?? 0) + 1);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    return [
      `### Slots and booking throughput (fresh service)`,
      `${slots.name}: p50 ${slots.p50.toFixed(1)} ms, p99 ${slots.p99.toFixed(1)} ms (${slotCount} free slots)`,
      `bookings with ${CLIENTS} clients at once: ${TOTAL} in ${seconds.toFixed(1)} s = ${(TOTAL / seconds).toFixed(1)} bookings/s (not 201: ${refused.size === 0 ? "none" : [...refused].map(([status, n]) => `${n} x ${status}`).join(", ")}); the bookings collection held 2 000 to ${2000 + TOTAL} documents`,
    ];
  } finally {
    await server.stop();
  }
}

const out = [`database: ${process.env.MONGODB_URI ? "MONGODB_URI" : "embedded (jongodb)"}; Node ${process.version}`, ""];
for (const size of SIZES) out.push(...(await readsAt(size)));
if (!ONLY_AFTER_WRITE) out.push(...(await slotsAndThroughput()));
process.stdout.write(out.join("\n") + "\n");
