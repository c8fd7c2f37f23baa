// Issue 30's targets in one run: public slots against GET /user, REST against bare Express at 50 and at 200 connections, gRPC against REST, the service's RSS, with the CPU each side spent.
import { mkdirSync } from "node:fs";
import { call, expectStatus } from "./rest.js";
import { fmt, h2loadGrpc, machine, median, SECONDS, startBaselines, WARMUP_SECONDS, wrkLoad, type Row } from "./load.js";
import { stopAndSummarize } from "./profile.js";
import { ADMIN_TOKEN, childPids, peakRssMb, startService } from "./service.js";

/*
 * The cases, each once per round (BENCH_ROUNDS, default 3), the rounds one after the other, every ratio taken within
 * a round and the median round's shown (the VM drifts by ±5-10% within minutes; a drift during one case would tilt
 * a ratio measured across rounds):
 *   express50 / rest50      wrk, 1 thread, 50 connections: bare Express 5 route, REST GET /api/v1/user
 *   express200 / rest200    wrk -t4 -c200, the same two (saturation)
 *   h2bare / grpc           h2load, 52 streams over 4 connections: a bare HTTP/2 gRPC reply, gRPC GetUser
 *   http1bare / grpc50      wrk -c50 against a bare node:http reply of the same JSON bytes h2bare frames (what HTTP/1.1
 *                           costs Node, against h2bare's HTTP/2); gRPC GetUser over 50 connections of one stream
 *                           each, the shape of wrk -c50 (is the 4 x 13 of grpc what tilts it?)
 *   slots7                  wrk, 1 thread, 50 connections: the public slots of a 7-day window of 30-minute slots,
 *                           09:00-19:00 every day in Europe/Berlin (140 slots), an event with no bookings
 *   user1 / slots31         wrk, 1 connection (one request at a time: the latency of one request): GET /user, and
 *                           the public slots of 31 days of 15-minute slots around 2 000 bookings (UTC, open all day)
 *   slots7rules / slots31rules  the same two listings of an event of the same host with every event rule that
 *                           changes what slots read or compute (issue 31): its own schedule (the same hours),
 *                           buffer_before 15 minutes, its own notice and window, daily_limit and weekly_limit
 *                           1000 (they widen the bookings read by up to 9 days and count the event's bookings)
 * Targets (issue 30): slots7 >= 25% of rest50's requests/s; slots31's p50 <= 5x user1's; rest200 >= 80% of
 * express200's requests/s with a p99 at most twice express200's; grpc >= 130% of rest50's requests/s; the
 * service's peak RSS after the run <= 250 MB. Issue 31: slots with rules meet the same two targets as without.
 *
 * BENCH_ONLY=slots7,rest200 runs only those cases (with the pairs their ratios need missing, the ratio shows NaN).
 * BENCH_CPU_PROF=<dir> runs the service with --cpu-prof into <dir> and prints a summary of the profile (where the
 * service's busy time went, by function and by package) after the run: use it with BENCH_ONLY to profile one load.
 */

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(",")) : undefined;
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const DAY = 86_400_000;
const admin = { "x-admin-token": ADMIN_TOKEN };
const WEEK = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

function openEveryDay(start: string, end: string) {
  return { weekly_hours: Object.fromEntries(WEEK.map((d) => [d, [{ start, end }]])), date_overrides: [], minimum_notice_minutes: 0, booking_window_days: 60 };
}

async function account(base: string, timezone: string): Promise<{ key: Record<string, string>; url: string; apiKey: string }> {
  const made = expectStatus("account", await call(base, "POST", "/admin/accounts", admin, { account: { email: `bench-${Date.now()}-${Math.random()}@example.com`, full_name: "Bench Host", timezone } }), 201);
  return { key: { "x-api-key": String(made.api_key) }, url: String(made.url), apiKey: String(made.api_key) };
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** An event of the host with every rule slots read (its own schedule of the host's hours, buffer, notice, window, limits). */
async function rulesEvent(base: string, key: Record<string, string>, hours: ReturnType<typeof openEveryDay>, event: Record<string, unknown>): Promise<void> {
  const schedule = expectStatus("schedule", await call(base, "POST", "/schedules", key, { schedule: { name: "Same hours", weekly_hours: hours.weekly_hours } }), 201);
  const rules = { schedule_id: schedule.id, buffer_before: "15_minutes", minimum_notice_minutes: 0, booking_window_days: 60, daily_limit: 1000, weekly_limit: 1000 };
  expectStatus("rules event", await call(base, "POST", "/events", key, { event: { ...event, ...rules } }), 201);
}

/** The host of slots7: 09:00-19:00 every day in Berlin, a 30-minute event without bookings (and one with rules); the paths of its next 7 days. */
async function weekHost(base: string): Promise<[string, string]> {
  const host = await account(base, "Berlin");
  const hours = openEveryDay("09:00", "19:00");
  expectStatus("availability", await call(base, "PUT", "/user/availability", host.key, { availability: hours }), 200);
  expectStatus("event", await call(base, "POST", "/events", host.key, { event: { name: "Week", url: "week", slot_duration: "30_minutes" } }), 201);
  await rulesEvent(base, host.key, hours, { name: "Week rules", url: "week-rules", slot_duration: "30_minutes" });
  const from = Date.now() + DAY;
  const query = `slots?date_from=${isoDay(from)}&date_to=${isoDay(from + 6 * DAY)}`;
  return [`/public/users/${host.url}/events/week/${query}`, `/public/users/${host.url}/events/week-rules/${query}`];
}

/**
 * The host of slots31 (as bench:bookings): open all day in UTC, a 15-minute event, 2 000 confirmed bookings over 31
 * days (and an event with rules, which the same bookings block); the paths of both.
 */
async function monthHost(base: string): Promise<[string, string]> {
  const host = await account(base, "UTC");
  const hours = openEveryDay("00:00", "24:00");
  expectStatus("availability", await call(base, "PUT", "/user/availability", host.key, { availability: hours }), 200);
  const event = expectStatus("event", await call(base, "POST", "/events", host.key, { event: { name: "Month", url: "month", slot_duration: "15_minutes" } }), 201);
  await rulesEvent(base, host.key, hours, { name: "Month rules", url: "month-rules", slot_duration: "15_minutes" });
  const start = Date.parse(`${isoDay(Date.now())}T00:00:00Z`) + DAY;
  const bookings = Array.from({ length: 2000 }, (_, i) => ({
    event_id: String(event.id),
    start_time: new Date(start + ((i * 7) % (30 * 96)) * 15 * 60_000).toISOString(),
    attendee_name: `A ${i}`,
    attendee_email: `a${i}@example.com`,
  }));
  for (let i = 0; i < bookings.length; i += 1000) expectStatus("import", await call(base, "POST", "/admin/bookings/import", admin, { bookings: bookings.slice(i, i + 1000) }), 201);
  const query = `slots?date_from=${isoDay(start)}&date_to=${isoDay(start + 30 * DAY)}`;
  return [`/public/users/${host.url}/events/month/${query}`, `/public/users/${host.url}/events/month-rules/${query}`];
}

const CASES = ["express50", "rest50", "express200", "rest200", "http1bare", "h2bare", "grpc", "grpc50", "slots7", "slots7rules", "user1", "slots31", "slots31rules"] as const;
type CaseName = (typeof CASES)[number];

async function main(): Promise<void> {
  const machineLine = machine();
  const baselines = await startBaselines();
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const service = await startService(
    // The import of 2 000 bookings costs the embedded server more than the default database deadline; the public
    // limit per address is set out of reach, as the per-key one is (bench/service.ts), so its cost is measured.
    { DB_OPERATION_TIMEOUT_MS: "60000", RATE_LIMIT_PUBLIC_PER_IP: "1000000000" },
    PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : [],
  );
  const base = `http://127.0.0.1:${service.port}`;
  let stopped = false;
  try {
    const user = await account(base, "UTC");
    const chosen = CASES.filter((c) => !ONLY || ONLY.has(c));
    // The slots hosts only for the slots cases: 2 000 bookings take the embedded server tens of seconds to import.
    const [week, weekRules] = chosen.some((c) => c.startsWith("slots7")) ? await weekHost(base) : ["", ""];
    const [month, monthRules] = chosen.some((c) => c.startsWith("slots31")) ? await monthHost(base) : ["", ""];
    const count = async (path: string) => (path === "" ? 0 : (expectStatus("slots", await call(base, "GET", path, {}), 200).slots as unknown[]).length);
    const [weekSlots, monthSlots, weekRulesSlots, monthRulesSlots] = [await count(week), await count(month), await count(weekRules), await count(monthRules)];

    const bare = { server: baselines.child.pid };
    const pids = { server: service.child.pid, db: childPids(service.child.pid!)[0] };
    const userHeaders = { "x-api-key": user.apiKey };
    const saturation = { threads: 4, connections: 200 };
    const run: Record<CaseName, () => Promise<Row>> = {
      express50: () => wrkLoad("bare Express 5 route, wrk -c50", bare, `http://127.0.0.1:${baselines.expressPort}/api/v1/user`),
      rest50: () => wrkLoad("REST GET /api/v1/user, wrk -c50", pids, `${base}/api/v1/user`, userHeaders),
      express200: () => wrkLoad("bare Express 5 route, wrk -t4 -c200", bare, `http://127.0.0.1:${baselines.expressPort}/api/v1/user`, {}, saturation),
      rest200: () => wrkLoad("REST GET /api/v1/user, wrk -t4 -c200", pids, `${base}/api/v1/user`, userHeaders, saturation),
      h2bare: () => h2loadGrpc("bare node:http2 gRPC reply, h2load", bare, `127.0.0.1:${baselines.bareGrpcPort}`, user.apiKey),
      grpc: () => h2loadGrpc("gRPC GetUser, h2load (4 connections, 52 streams)", pids, `127.0.0.1:${service.port}`, user.apiKey),
      http1bare: () => wrkLoad("bare node:http reply of the same bytes, wrk -c50", bare, `http://127.0.0.1:${baselines.barePort}/api/v1/user`),
      grpc50: () => h2loadGrpc("gRPC GetUser, h2load (50 connections, 1 stream each)", pids, `127.0.0.1:${service.port}`, user.apiKey, { connections: 50, streams: 1 }),
      slots7: () => wrkLoad(`public slots, 7 days of 30 min (${weekSlots} slots), wrk -c50`, pids, `${base}/api/v1${week}`, {}, { timeoutSeconds: 10 }),
      user1: () => wrkLoad("REST GET /api/v1/user, wrk -c1", pids, `${base}/api/v1/user`, userHeaders, { connections: 1 }),
      slots31: () => wrkLoad(`public slots, 31 days of 15 min, 2 000 bookings (${monthSlots} free), wrk -c1`, pids, `${base}/api/v1${month}`, {}, { connections: 1, timeoutSeconds: 10 }),
      slots7rules: () => wrkLoad(`public slots with event rules, 7 days of 30 min (${weekRulesSlots} slots), wrk -c50`, pids, `${base}/api/v1${weekRules}`, {}, { timeoutSeconds: 10 }),
      slots31rules: () =>
        wrkLoad(`public slots with event rules, 31 days of 15 min, 2 000 bookings (${monthRulesSlots} free), wrk -c1`, pids, `${base}/api/v1${monthRules}`, {}, { connections: 1, timeoutSeconds: 10 }),
    };
    const rounds: Array<Partial<Record<CaseName, Row>>> = [];
    for (let r = 0; r < ROUNDS; r++) {
      const round: Partial<Record<CaseName, Row>> = {};
      for (const c of chosen) round[c] = await run[c]();
      rounds.push(round);
    }
    const rss = peakRssMb(service.child.pid!);
    const dbPid = childPids(service.child.pid!)[0];
    const dbRss = dbPid === undefined ? NaN : peakRssMb(dbPid);

    const medianRow = (c: CaseName): Row => {
      const rows = rounds.map((round) => round[c]!).sort((a, b) => a.rps - b.rps);
      return { ...rows[Math.floor((rows.length - 1) / 2)], errors: rows.reduce((n, row) => n + row.errors, 0) };
    };
    console.log(`machine: ${machineLine}`);
    console.log(`service: ${service.command}; embedded database; ${SECONDS} s per case after ${WARMUP_SECONDS} s warm-up; ${ROUNDS} rounds, each case's median round shown`);
    console.log(`| case | requests/s | p50 ms | p99 ms | server CPU µs/req | DB CPU µs/req | load generator CPU µs/req | errors |\n|---|---:|---:|---:|---:|---:|---:|---:|`);
    for (const c of chosen) {
      const r = medianRow(c);
      console.log(`| ${r.name} | ${fmt(r.rps)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${fmt(r.cpuUs)} | ${Number.isNaN(r.dbCpuUs) ? "–" : fmt(r.dbCpuUs)} | ${fmt(r.clientCpuUs)} | ${r.errors} |`);
    }

    // Each ratio within each round; the median round's decides.
    const ratio = (f: (round: Partial<Record<CaseName, Row>>) => number) => rounds.map((round) => f(round));
    const has = (round: Partial<Record<CaseName, Row>>, ...cs: CaseName[]) => cs.every((c) => round[c] !== undefined);
    const per = {
      slots7: ratio((r) => (has(r, "slots7", "rest50") ? r.slots7!.rps / r.rest50!.rps : NaN)),
      slots31: ratio((r) => (has(r, "slots31", "user1") ? r.slots31!.p50 / r.user1!.p50 : NaN)),
      slots7rules: ratio((r) => (has(r, "slots7rules", "rest50") ? r.slots7rules!.rps / r.rest50!.rps : NaN)),
      slots31rules: ratio((r) => (has(r, "slots31rules", "user1") ? r.slots31rules!.p50 / r.user1!.p50 : NaN)),
      rest50: ratio((r) => (has(r, "rest50", "express50") ? r.rest50!.rps / r.express50!.rps : NaN)),
      rest200: ratio((r) => (has(r, "rest200", "express200") ? r.rest200!.rps / r.express200!.rps : NaN)),
      p99: ratio((r) => (has(r, "rest200", "express200") ? r.rest200!.p99 / r.express200!.p99 : NaN)),
      grpc: ratio((r) => (has(r, "grpc", "rest50") ? r.grpc!.rps / r.rest50!.rps : NaN)),
      grpc50: ratio((r) => (has(r, "grpc50", "rest50") ? r.grpc50!.rps / r.rest50!.rps : NaN)),
      // The service's CPU per REST request ÷ per gRPC call: what each costs the service, whatever share of the cores it got.
      grpcCpu: ratio((r) => (has(r, "grpc", "rest50") ? r.rest50!.cpuUs / r.grpc!.cpuUs : NaN)),
      h2bare: ratio((r) => (has(r, "h2bare", "http1bare") ? r.h2bare!.rps / r.http1bare!.rps : NaN)),
    };
    const pct = (xs: number[]) => xs.map((x) => `${fmt(100 * x, 1)}%`).join(", ");
    const times = (xs: number[]) => xs.map((x) => `${fmt(x, 2)}×`).join(", ");
    console.log(`\nper round: slots7 ÷ REST ${pct(per.slots7)}; slots31 p50 ÷ GET /user p50 ${times(per.slots31)}; with rules ${pct(per.slots7rules)} and ${times(per.slots31rules)}; REST ÷ Express -c50 ${pct(per.rest50)}; -t4 -c200 ${pct(per.rest200)} (p99 ${times(per.p99)}); gRPC ÷ REST ${pct(per.grpc)}`);
    const targets: Array<[string, number, boolean]> = [
      ["public slots 7 days >= 25% of GET /user requests/s", median(per.slots7), median(per.slots7) >= 0.25],
      ["slots 31 days x 15 min, 2 000 bookings: p50 <= 5x GET /user p50", median(per.slots31), median(per.slots31) <= 5],
      ["public slots 7 days with event rules >= 25% of GET /user requests/s", median(per.slots7rules), median(per.slots7rules) >= 0.25],
      ["slots 31 days x 15 min with event rules, 2 000 bookings: p50 <= 5x GET /user p50", median(per.slots31rules), median(per.slots31rules) <= 5],
      ["REST >= 80% of bare Express at wrk -t4 -c200", median(per.rest200), median(per.rest200) >= 0.8],
      ["REST p99 <= 2x bare Express's at wrk -t4 -c200", median(per.p99), median(per.p99) <= 2],
      ["gRPC GetUser (h2load) >= 130% of REST GET /user (wrk -c50)", median(per.grpc), median(per.grpc) >= 1.3],
      ["service peak RSS <= 250 MB", rss, rss <= 250],
    ];
    console.log("");
    for (const [what, value, ok] of targets) console.log(`${Number.isNaN(value) ? "n/a    " : ok ? "met    " : "MISSED "} ${what}: ${what.includes("RSS") ? `${fmt(value, 1)} MB` : what.includes("x ") || what.includes("p99") ? `${fmt(value, 2)}×` : `${fmt(100 * value, 1)}%`}`);
    console.log(`info    REST ÷ bare Express at wrk -c50 (median round): ${fmt(100 * median(per.rest50), 1)}%`);
    console.log(`info    peak RSS of the embedded database process: ${fmt(dbRss, 1)} MB`);
    console.log(`info    gRPC ÷ REST requests/s with gRPC over 50 connections of 1 stream (wrk -c50's shape): ${pct(per.grpc50)}`);
    console.log(`info    REST server CPU per request ÷ gRPC's (above 100%: a gRPC call costs the service less): ${pct(per.grpcCpu)}`);
    console.log(`info    bare node:http2 gRPC reply ÷ bare node:http reply of the same bytes, requests/s: ${pct(per.h2bare)}`);
    if (PROFILE_DIR) {
      stopped = true;
      console.log(await stopAndSummarize(service.child, PROFILE_DIR));
    }
  } finally {
    if (!stopped) service.child.kill("SIGTERM");
    baselines.child.kill("SIGTERM");
  }
}

await main();
