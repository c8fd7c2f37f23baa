// npm run bench:changes: the booking-change feed under load on two replicas of one database: from a write's answer to a reader seeing its change (p50/p99), and 0 lost / 0 repeated over BENCH_CHANGES changes with readers cut off and resumed at random.
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BookingService } from "../gen/scheduling/v1/booking_pb.js";
import { startDatabase } from "../test/helpers/jongodb.js";
import { ADMIN_TOKEN, buildService, startServer, type RunningServer } from "../test/helpers/server.js";
import { call, expectStatus, type Json } from "./rest.js";

/*
 * Two replicas (A, B) of the service, compiled, on one embedded database. HOSTS accounts, each with an event and a
 * pool of bookings. WRITERS loops, half through A and half through B, make changes until BENCH_CHANGES are answered:
 * host edits of notes (booking.updated, most of them: they do not grow the bookings collection, whose every write
 * the embedded server pays for in proportion to its size), new bookings, cancels and reschedules. Each change is
 * known by what it carries (the booking's id, or the unique notes of an edit), with its answer's time.
 *
 * READERS per host follow its feed, each over a protocol of its own (gRPC, gRPC-Web, Connect, Server-Sent Events)
 * on replica A or B, and every 0.5 to 3 s (at random) one is cut off (its client aborts) and resumed after its last
 * token, on a replica and protocol picked at random. A reader counts each change it receives: twice is a repeat;
 * never, once all are answered and it has caught up, is a loss. The lag of a change is its arrival at a reader that
 * was connected since before its answer, minus the answer's time (the reader and the writer share this process's
 * clock), reported apart for readers on the replica that wrote it and on the other one.
 */

const CHANGES = Number(process.env.BENCH_CHANGES ?? 10_000);
const HOSTS = Number(process.env.BENCH_HOSTS ?? 4);
const WRITERS = Number(process.env.BENCH_WRITERS ?? 8);
const READERS = Number(process.env.BENCH_READERS ?? 4);
const POOL = Number(process.env.BENCH_POOL ?? 40);

type Protocol = "grpc" | "grpc-web" | "connect" | "sse";
const PROTOCOLS: Protocol[] = ["grpc", "grpc-web", "connect", "sse"];

interface Change {
  key: string;
  host: number;
  answeredAt: number;
  replica: number;
}

const answered = new Map<string, Change>();
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a change is known by: the same for the writer's answer and the reader's message. */
function keyOf(type: string, booking: Json): string | undefined {
  if (type === "booking.updated") return `u:${String(booking.internal_notes)}`;
  if (type === "booking.created") return `c:${String(booking.id)}`;
  if (type === "booking.canceled") return `x:${String(booking.id)}`;
  if (type === "booking.rescheduled") return `r:${String(booking.id)}`;
  return undefined;
}

class Reader {
  after = "";
  seen = new Map<string, number>();
  private tokens = new Map<string, string>();
  repeated = 0;
  lags: { ms: number; sameReplica: boolean }[] = [];
  connectedSince = Infinity;
  replica = 0;
  protocol: Protocol = "grpc";
  private abort: AbortController | undefined;
  private running: Promise<void> | undefined;
  cuts = 0;
  failures = 0;
  stopped = false;

  constructor(
    readonly host: number,
    readonly key: string,
    readonly servers: RunningServer[],
  ) {}

  private receive(type: string, token: string, booking: Json | undefined, now: number): void {
    this.after = token;
    if (booking === undefined) return;
    const key = keyOf(type, booking);
    if (key === undefined) return;
    const n = (this.seen.get(key) ?? 0) + 1;
    this.seen.set(key, n);
    if (n > 1) {
      this.repeated++;
      if (this.repeated <= 3) console.error(`repeat at a reader of host ${this.host} (${this.protocol} on ${"AB"[this.replica]}): ${key}, ${this.tokens.get(key) === token ? "the same token again" : "under another token (twice in the feed)"}`);
    }
    this.tokens.set(key, token);
    const change = answered.get(key);
    if (n === 1 && change && change.answeredAt >= this.connectedSince) this.lags.push({ ms: now - change.answeredAt, sameReplica: change.replica === this.replica });
  }

  start(replica: number, protocol: Protocol): void {
    this.replica = replica;
    this.protocol = protocol;
    const abort = (this.abort = new AbortController());
    const base = this.servers[replica].baseUrl;
    this.connectedSince = Infinity;
    this.running = (async () => {
      try {
        if (protocol === "sse") await this.sse(base, abort.signal);
        else await this.rpc(base, protocol, abort.signal);
      } catch (err) {
        if (!abort.signal.aborted) {
          // As a client would: after a moment, resume with the last token (elsewhere, at random).
          this.failures++;
          if (this.failures <= 3) console.error(`reader of host ${this.host} (${protocol} on ${"AB"[replica]}) failed: ${String(err)}`);
          await sleep(500);
          if (!abort.signal.aborted && !this.stopped) this.start(Math.floor(Math.random() * this.servers.length), pick(PROTOCOLS));
        }
      }
    })();
  }

  private async rpc(base: string, protocol: Protocol, signal: AbortSignal): Promise<void> {
    const interceptors: Interceptor[] = [(next) => async (req) => (req.header.set("x-api-key", this.key), next(req))];
    const transport =
      protocol === "grpc"
        ? createGrpcTransport({ baseUrl: base, interceptors })
        : protocol === "grpc-web"
          ? createGrpcWebTransport({ baseUrl: base, httpVersion: "1.1", interceptors })
          : createConnectTransport({ baseUrl: base, httpVersion: "2", interceptors });
    const client = createClient(BookingService, transport);
    const stream = client.watchBookingChanges({ after: this.after }, { signal });
    this.connectedSince = performance.now();
    for await (const c of stream) this.receive(c.type, c.token, c.booking ? { id: c.booking.id, internal_notes: c.booking.internalNotes } : undefined, performance.now());
  }

  private async sse(base: string, signal: AbortSignal): Promise<void> {
    const headers: Record<string, string> = { Accept: "text/event-stream", "X-API-KEY": this.key };
    if (this.after) headers["Last-Event-ID"] = this.after;
    const res = await fetch(`${base}/api/v1/booking_changes`, { headers, signal });
    if (res.status !== 200) throw new Error(`SSE answered ${res.status}: ${await res.text()}`);
    this.connectedSince = performance.now();
    const reader = res.body!.getReader();
    let text = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += Buffer.from(value).toString();
      let cut: number;
      while ((cut = text.indexOf("\n\n")) >= 0) {
        const block = text.slice(0, cut);
        text = text.slice(cut + 2);
        const data = block.split("\n").find((l) => l.startsWith("data: "));
        if (!data) continue;
        const change = JSON.parse(data.slice(6)) as Json;
        // REST JSON: the booking's fields in snake_case, as keyOf reads them.
        this.receive(String(change.type), String(change.token), change.booking as Json | undefined, performance.now());
      }
    }
  }

  /** Cuts the reader off and resumes it after its last token, on a replica and protocol picked at random. */
  async cut(): Promise<void> {
    const running = this.abort;
    running?.abort();
    await this.running;
    // A reader that failed meanwhile resumed by itself.
    if (this.abort !== running) return;
    this.cuts++;
    this.start(Math.floor(Math.random() * this.servers.length), pick(PROTOCOLS));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    await this.running;
  }
}

async function main(): Promise<void> {
  // Inside the clone, as the test run's build (.tmp/service-<pid>): the service finds node_modules from there.
  const buildDir = join(fileURLToPath(new URL("..", import.meta.url)), ".tmp", `bench-changes-${process.pid}`);
  await buildService(buildDir);
  const db = await startDatabase();
  const env = { MONGODB_URI: db.uri, LOG_LEVEL: "warn", WATCH_STREAMS_PER_KEY: "100" };
  const servers = await Promise.all([startServer(env, 120_000), startServer(env, 120_000)]);
  const base = (i: number) => servers[i].baseUrl;
  const week = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
  const availability = { weekly_hours: Object.fromEntries(week.map((d) => [d, [{ start: "00:00", end: "24:00" }]])), date_overrides: [], minimum_notice_minutes: 0, booking_window_days: 365 };
  /**
   * A booking the writers hold, with where it came from: a 404 on it names its origin. Every 404 seen so far was the
   * embedded server losing bookings written beside a reschedule's transaction (bench/RESULTS.md "A reschedule without
   * a transaction"); there has been none since moves are two writes.
   */
  interface Held {
    id: string;
    privateKey: string;
    origin: string;
    replica: number;
    madeAt: number;
  }
  const hosts: { key: string; url: string; pool: Held[] }[] = [];
  /** What the writers are doing to each booking right now, and what else was under way on it while a call ran. */
  const inFlight = new Map<string, Set<string>>();
  const tracked = async <T>(id: string, what: string, fn: () => Promise<T>): Promise<{ answer: T; others: string[] }> => {
    const doing = inFlight.get(id) ?? new Set<string>();
    inFlight.set(id, doing);
    const others = new Set(doing);
    doing.add(what);
    try {
      const answer = await fn();
      for (const o of doing) if (o !== what) others.add(o);
      return { answer, others: [...others] };
    } finally {
      doing.delete(what);
      if (doing.size === 0) inFlight.delete(id);
    }
  };
  const whyNotFound = (what: string, b: Held, replica: number, others: string[]) =>
    `${what} 404 on a booking from ${b.origin} on ${"AB"[b.replica]} ${(performance.now() - b.madeAt).toFixed(0)} ms before, asked on ${"AB"[replica]}; under way on it meanwhile: ${others.join(", ") || "nothing else"}`;
  let slot = 0;
  const nextStart = () => new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 2) + (slot++ * 30 * 60_000)).toISOString();
  for (let h = 0; h < HOSTS; h++) {
    const account = expectStatus("account", await call(base(0), "POST", "/admin/accounts", { "X-ADMIN-TOKEN": ADMIN_TOKEN }, { account: { email: `bench-changes-${h}@example.com`, full_name: `Host ${h}` } }), 201);
    const key = { "X-API-KEY": account.api_key as string };
    expectStatus("availability", await call(base(0), "PUT", "/user/availability", key, { availability }), 200);
    expectStatus("event", await call(base(0), "POST", "/events", key, { event: { name: "Bench", url: "bench", slot_duration: "30_minutes", padding_duration: "0_minutes" } }), 201);
    hosts.push({ key: account.api_key as string, url: account.url as string, pool: [] });
  }
  // The pools, made before the readers start: their changes are not measured.
  for (const h of hosts) {
    for (let i = 0; i < POOL; i++) {
      const b = expectStatus("booking", await call(base(0), "POST", `/public/users/${h.url}/events/bench/bookings`, {}, { booking: { start_time: nextStart(), attendee_name: "Ada", attendee_email: "ada@example.com" } }), 201);
      h.pool.push({ id: b.id as string, privateKey: b.private_key as string, origin: "the pool", replica: 0, madeAt: performance.now() });
    }
  }

  const readers: Reader[] = [];
  for (let h = 0; h < HOSTS; h++) {
    // A reader starts from the feed's end: a list with no after is its oldest; its last change's token is now.
    const listed = expectStatus("list", await call(base(0), "GET", "/booking_changes?limit=500", { "X-API-KEY": hosts[h].key }), 200);
    let next = listed.next as string;
    for (let more = listed.changes as Json[]; more.length > 0; ) {
      const page = expectStatus("list", await call(base(0), "GET", `/booking_changes?limit=500&after=${next}`, { "X-API-KEY": hosts[h].key }), 200);
      more = page.changes as Json[];
      next = page.next as string;
    }
    for (let r = 0; r < READERS; r++) {
      const reader = new Reader(h, hosts[h].key, servers);
      reader.after = next;
      reader.start(r % 2, PROTOCOLS[r % PROTOCOLS.length]);
      readers.push(reader);
    }
  }
  await sleep(1000);

  let stopCutting = false;
  const cutter = (async () => {
    while (!stopCutting) {
      await sleep(500 + Math.random() * 2500);
      if (!stopCutting) await pick(readers).cut();
    }
  })();

  let made = 0;
  let failed = 0;
  let note = 0;
  const t0 = performance.now();
  const loadStart = os.loadavg()[0];
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      const replica = w % 2;
      while (made < CHANGES) {
        made++;
        const h = Math.floor(Math.random() * HOSTS);
        const host = hosts[h];
        const roll = Math.random();
        const key = { "X-API-KEY": host.key };
        try {
          if (roll < 0.8 || host.pool.length < 5) {
            const b = pick(host.pool);
            const notes = `n${process.pid}-${++note}`;
            const { answer: res, others } = await tracked(b.id, `an edit by writer ${w}`, () => call(base(replica), "PATCH", `/bookings/${b.id}`, key, { booking: { internal_notes: notes } }));
            if (res.status === 404) console.error(whyNotFound("edit", b, replica, others));
            if (res.status !== 200) throw new Error(`edit ${res.status} ${JSON.stringify(res.json).slice(0, 200)}`);
            answered.set(`u:${notes}`, { key: `u:${notes}`, host: h, answeredAt: performance.now(), replica });
          } else if (roll < 0.88) {
            const res = await call(base(replica), "POST", `/public/users/${host.url}/events/bench/bookings`, {}, { booking: { start_time: nextStart(), attendee_name: "Ada", attendee_email: "ada@example.com" } });
            if (res.status !== 201) throw new Error(`book ${res.status} ${JSON.stringify(res.json).slice(0, 200)}`);
            const b = res.json.data as Json;
            answered.set(`c:${String(b.id)}`, { key: `c:${String(b.id)}`, host: h, answeredAt: performance.now(), replica });
            host.pool.push({ id: b.id as string, privateKey: b.private_key as string, origin: "a booking", replica, madeAt: performance.now() });
          } else if (roll < 0.95) {
            const i = Math.floor(Math.random() * host.pool.length);
            const [b] = host.pool.splice(i, 1);
            const { answer: res, others } = await tracked(b.id, `a cancel by writer ${w}`, () => call(base(replica), "POST", `/bookings/${b.id}/cancel`, key, { booking: {} }));
            if (res.status === 404) console.error(whyNotFound("cancel", b, replica, others));
            if (res.status !== 200) throw new Error(`cancel ${res.status} ${JSON.stringify(res.json).slice(0, 200)}`);
            answered.set(`x:${b.id}`, { key: `x:${b.id}`, host: h, answeredAt: performance.now(), replica });
          } else {
            const i = Math.floor(Math.random() * host.pool.length);
            const [b] = host.pool.splice(i, 1);
            const { answer: res, others } = await tracked(b.id, `a reschedule by writer ${w}`, () => call(base(replica), "POST", `/public/bookings/${b.privateKey}/reschedule`, {}, { booking: { start_time: nextStart() } }));
            if (res.status === 404) console.error(whyNotFound("reschedule", b, replica, others));
            if (res.status !== 201) throw new Error(`reschedule ${res.status} ${JSON.stringify(res.json).slice(0, 200)}`);
            const nb = res.json.data as Json;
            answered.set(`r:${String(nb.id)}`, { key: `r:${String(nb.id)}`, host: h, answeredAt: performance.now(), replica });
            host.pool.push({ id: nb.id as string, privateKey: nb.private_key as string, origin: "a reschedule", replica, madeAt: performance.now() });
          }
        } catch (err) {
          // A refused write makes no change (a 503 under load): it is counted, not expected in the feed.
          failed++;
          if (failed <= 5) console.error(String(err));
        }
        if (made % 1000 === 0) console.error(`${made} changes made, ${((performance.now() - t0) / 1000).toFixed(0)} s, load ${os.loadavg()[0].toFixed(1)}`);
      }
    }),
  );
  const writeSeconds = (performance.now() - t0) / 1000;
  const loadEnd = os.loadavg()[0];
  stopCutting = true;
  await cutter;
  // Every reader catches up: each must have seen every change of its host.
  const expected = (h: number) => [...answered.values()].filter((c) => c.host === h);
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline && readers.some((r) => expected(r.host).some((c) => !r.seen.has(c.key)))) await sleep(200);
  await Promise.all(readers.map((r) => r.stop()));

  const lost = readers.reduce((n, r) => n + expected(r.host).filter((c) => !r.seen.has(c.key)).length, 0);
  const repeated = readers.reduce((n, r) => n + r.repeated, 0);
  const lags = (same: boolean | undefined) => readers.flatMap((r) => r.lags.filter((l) => same === undefined || l.sameReplica === same).map((l) => Math.max(0, l.ms))).sort((a, b) => a - b);
  const line = (name: string, xs: number[]) => `| ${name} | ${xs.length} | ${percentile(xs, 50).toFixed(0)} | ${percentile(xs, 99).toFixed(0)} | ${(xs.at(-1) ?? NaN).toFixed(0)} |`;
  console.log(`\nbench:changes: ${answered.size} changes answered (${failed} writes refused) in ${writeSeconds.toFixed(0)} s (${(answered.size / writeSeconds).toFixed(0)}/s) by ${WRITERS} writers over 2 replicas, ${HOSTS} hosts x ${READERS} readers; load average ${loadStart.toFixed(1)} at start, ${loadEnd.toFixed(1)} at the end (${os.cpus().length} cores)`);
  console.log(`readers cut off and resumed: ${readers.reduce((n, r) => n + r.cuts, 0)}; reader failures: ${readers.reduce((n, r) => n + r.failures, 0)}`);
  console.log(`lost: ${lost}   repeated: ${repeated}   (each of ${readers.length} readers against every change of its host)\n`);
  console.log("| from the answer to a reader seeing it | changes | p50 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|");
  console.log(line("all readers", lags(undefined)));
  console.log(line("reader on the replica that wrote it", lags(true)));
  console.log(line("reader on the other replica", lags(false)));
  await Promise.all(servers.map((s) => s.stop()));
  await db.kill();
  process.exit(lost === 0 && repeated === 0 ? 0 : 1);
}

await main();
