// Issue 40, teams.md "Fair and fast": the slots of a 10-host team event over 31 days against one host's event (p50, same run), and how 300 round robin bookings spread over 3 hosts, equal and weighted 200/100/100.
import { mkdirSync } from "node:fs";
import os from "node:os";
import { call as callOnce, expectStatus, type Json } from "./rest.js";
import { fmt, machine, median, wrkLoad, type Row } from "./load.js";
import { stopAndSummarize } from "./profile.js";
import { ADMIN_TOKEN, childPids, startService } from "./service.js";

/*
 * Slots, each case once per round (BENCH_ROUNDS, default 3), the ratio taken within a round and the median round's
 * shown (the VM drifts by ±5-10% within minutes):
 *   host1    wrk -c1 (one request at a time: a request's latency): the public slots of one host's 30-minute event
 *            over 31 days, the host open all day (UTC) with BOOKINGS_PER_HOST bookings of its own in those days
 *   team10   the same listing of a round robin team event of that host and 9 more, each like it (own bookings at
 *            other times), so every host's times are computed and merged
 *   team10c  the same team's collective event (every host free: no time in common with any host's booking)
 * Target (teams.md): team10's p50 <= 3x host1's. Only hosts without calendars: the one host's answer may be one kept
 * from an earlier request (src/features/bookings/publicReads.ts SlotReplies), as a team's may.
 *
 * Fairness: 300 bookings in a row (one at a time, through POST /public/teams/<team>/events/<event>/bookings, each
 * a fresh quarter hour of next month, all three hosts free) of a round robin event of 3 hosts of equal priority,
 * once with equal weights (target 100 each) and once with weights 200/100/100 (target within 2% of 150/75/75).
 *
 * BENCH_ONLY=slots or BENCH_ONLY=fair runs only one half. BENCH_CPU_PROF=<dir> runs the service with --cpu-prof
 * into <dir> and prints where its busy time went (as bench:slots does).
 */

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const ONLY = process.env.BENCH_ONLY;
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const HOSTS = 10;
const BOOKINGS_PER_HOST = 200;
const FAIR_BOOKINGS = 300;
const DAY = 86_400_000;
const QUARTER = 15 * 60_000;
const admin = { "x-admin-token": ADMIN_TOKEN };
const WEEK = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
const ALL_DAY = { weekly_hours: Object.fromEntries(WEEK.map((d) => [d, [{ start: "00:00", end: "24:00" }]])), date_overrides: [], minimum_notice_minutes: 0, booking_window_days: 90 };
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const load = () => os.loadavg().map((x) => fmt(x, 1)).join(" ");

/** A call of the setup, tried again on a 503 (a loaded embedded database past its deadline), as a client would; a write under one Idempotency-Key. */
async function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): ReturnType<typeof callOnce> {
  const keyed = method === "GET" ? headers : { "Idempotency-Key": `bench-teams-${Date.now()}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`, ...headers };
  for (let tries = 1; ; tries++) {
    const res = await callOnce(base, method, path, keyed, body);
    if (res.status !== 503 || tries === 10) return res;
    await new Promise((r) => setTimeout(r, 500));
  }
}

interface Account {
  key: Record<string, string>;
  id: string;
  url: string;
  email: string;
}

async function account(base: string, name: string): Promise<Account> {
  const email = `bench-${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const made = expectStatus("account", await call(base, "POST", "/admin/accounts", admin, { account: { email, full_name: name, timezone: "UTC" } }), 201);
  const key = { "x-api-key": String(made.api_key) };
  expectStatus("availability", await call(base, "PUT", "/user/availability", key, { availability: ALL_DAY }), 200);
  return { key, id: String(made.id), url: String(made.url), email };
}

/** A team of `hosts[0]` whose other hosts have accepted. */
async function teamOf(base: string, hosts: Account[], url: string): Promise<Json> {
  const team = expectStatus("team", await call(base, "POST", "/teams", hosts[0].key, { team: { name: "Bench team", url, timezone: "UTC" } }), 201);
  for (const h of hosts.slice(1)) {
    const invited = expectStatus("invite", await call(base, "POST", `/teams/${team.id}/members`, hosts[0].key, { member: { email: h.email, role: "member" } }), 201);
    expectStatus("accept", await call(base, "POST", `/team_invitations/${invited.id}/accept`, h.key), 200);
  }
  return team;
}

const teamEvent = async (base: string, owner: Account, team: Json, url: string, scheduling: string, hosts: Json[]): Promise<Json> =>
  expectStatus("team event", await call(base, "POST", `/teams/${team.id}/events`, owner.key, { event: { name: url, url, slot_duration: "30_minutes", scheduling, hosts } }), 201);

/** The slots cases' paths: one host's event, a round robin and a collective event of ten such hosts, over the same 31 days. */
async function slotsSetup(base: string): Promise<{ host1: string; team10: string; team10c: string; counts: Record<string, number> }> {
  const hosts = await Promise.all(Array.from({ length: HOSTS }, (_, i) => account(base, `Host ${i + 1}`)));
  const start = Date.parse(`${isoDay(Date.now())}T00:00:00Z`) + DAY;
  for (const [n, h] of hosts.entries()) {
    const own = expectStatus("event", await call(base, "POST", "/events", h.key, { event: { name: "Own", url: "own", slot_duration: "30_minutes" } }), 201);
    // Each host's own meetings, spread over the 31 days at times of its own (the hosts' free times differ).
    const bookings = Array.from({ length: BOOKINGS_PER_HOST }, (_, i) => ({
      event_id: String(own.id),
      start_time: new Date(start + ((i * 13 + n * 7) % (31 * 48)) * 2 * QUARTER).toISOString(),
      attendee_name: `A ${i}`,
      attendee_email: `a${i}@example.com`,
    }));
    expectStatus("import", await call(base, "POST", "/admin/bookings/import", admin, { bookings }), 201);
  }
  const team = await teamOf(base, hosts, `bench-team-${Date.now().toString(36)}`);
  const all = hosts.map((h) => ({ user_id: h.id }));
  await teamEvent(base, hosts[0], team, "rr", "round_robin", all);
  await teamEvent(base, hosts[0], team, "co", "collective", all);
  const query = `slots?date_from=${isoDay(start)}&date_to=${isoDay(start + 30 * DAY)}&timezone=UTC`;
  const paths = {
    host1: `/public/users/${hosts[0].url}/events/own/${query}`,
    team10: `/public/teams/${team.url}/events/rr/${query}`,
    team10c: `/public/teams/${team.url}/events/co/${query}`,
  };
  const counts: Record<string, number> = {};
  for (const [name, path] of Object.entries(paths)) counts[name] = (expectStatus(`slots ${name}`, await call(base, "GET", path, {}), 200).slots as unknown[]).length;
  return { ...paths, counts };
}

/** 300 bookings in a row of a round robin event of three hosts with these weights; how many each host got, and the time a booking took. */
async function distribution(base: string, weights: number[]): Promise<{ counts: number[]; msPerBooking: number }> {
  const hosts = await Promise.all(weights.map((_, i) => account(base, `Fair ${i + 1}`)));
  const team = await teamOf(base, hosts, `bench-fair-${Date.now().toString(36)}`);
  const event = await teamEvent(base, hosts[0], team, "fair", "round_robin", hosts.map((h, i) => ({ user_id: h.id, weight: weights[i] })));
  // Next month's first quarter hours: one UTC calendar month, which the weighted share counts.
  const now = new Date();
  const first = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  const counts = new Map(hosts.map((h) => [h.id, 0]));
  const began = performance.now();
  for (let i = 0; i < FAIR_BOOKINGS; i++) {
    const booking = { start_time: new Date(first + i * QUARTER * 2).toISOString(), attendee_name: `Booker ${i}`, attendee_email: `booker-${i}@example.com` };
    const made = expectStatus("booking", await call(base, "POST", `/public/teams/${team.url}/events/${event.url}/bookings`, {}, { booking }), 201);
    const host = String((made.hosts as Json[])[0].user_id);
    counts.set(host, (counts.get(host) ?? 0) + 1);
  }
  return { counts: hosts.map((h) => counts.get(h.id) ?? 0), msPerBooking: (performance.now() - began) / FAIR_BOOKINGS };
}

async function main(): Promise<void> {
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  // The limits per address, booker and host out of reach: 300 bookings from one address are the test.
  const service = await startService(
    { DB_OPERATION_TIMEOUT_MS: "60000", RATE_LIMIT_PUBLIC_PER_IP: "1000000000", BOOKING_LIMIT_PER_BOOKER: "1000000", BOOKING_LIMIT_PER_HOST: "1000000", BOOKING_LIMIT_NEW_BOOKERS_PER_ADDRESS: "1000000" },
    PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : [],
  );
  let stopped = false;
  const base = `http://127.0.0.1:${service.port}`;
  try {
    console.log(`machine: ${machine()}`);
    console.log(`service: ${service.command}; embedded database; load average at start ${load()}`);
    if (ONLY !== "fair") {
      const s = await slotsSetup(base);
      const pids = { server: service.child.pid, db: childPids(service.child.pid!)[0] };
      const cases = {
        host1: () => wrkLoad(`one host's event, 31 days of 30 min, ${BOOKINGS_PER_HOST} bookings (${s.counts.host1} free), wrk -c1`, pids, `${base}/api/v1${s.host1}`, {}, { connections: 1, timeoutSeconds: 10 }),
        team10: () => wrkLoad(`round robin of ${HOSTS} such hosts (${s.counts.team10} free), wrk -c1`, pids, `${base}/api/v1${s.team10}`, {}, { connections: 1, timeoutSeconds: 10 }),
        team10c: () => wrkLoad(`collective of the same ${HOSTS} hosts (${s.counts.team10c} free), wrk -c1`, pids, `${base}/api/v1${s.team10c}`, {}, { connections: 1, timeoutSeconds: 10 }),
      };
      const rounds: Array<Record<keyof typeof cases, Row>> = [];
      for (let r = 0; r < ROUNDS; r++) rounds.push({ host1: await cases.host1(), team10: await cases.team10(), team10c: await cases.team10c() });
      const rr = rounds.map((r) => r.team10.p50 / r.host1.p50);
      const co = rounds.map((r) => r.team10c.p50 / r.host1.p50);
      const mid = rounds.map((r, i) => ({ r, x: rr[i] })).sort((a, b) => a.x - b.x)[Math.floor((rounds.length - 1) / 2)].r;
      console.log(`\nslots, median round (by the round robin ratio); load average after ${load()}`);
      console.log(`| case | requests/s | p50 ms | p99 ms | server CPU µs/req | DB CPU µs/req | load generator CPU µs/req | errors |\n|---|---:|---:|---:|---:|---:|---:|---:|`);
      for (const row of [mid.host1, mid.team10, mid.team10c]) {
        console.log(`| ${row.name} | ${fmt(row.rps)} | ${fmt(row.p50, 2)} | ${fmt(row.p99, 2)} | ${fmt(row.cpuUs)} | ${Number.isNaN(row.dbCpuUs) ? "–" : fmt(row.dbCpuUs)} | ${fmt(row.clientCpuUs)} | ${row.errors} |`);
      }
      const times = (xs: number[]) => xs.map((x) => `${fmt(x, 2)}×`).join(", ");
      console.log(`\nper round: round robin p50 ÷ one host's ${times(rr)}; collective ${times(co)}; server CPU per request, round robin ÷ one host's ${times(rounds.map((r) => r.team10.cpuUs / r.host1.cpuUs))}`);
      console.log(`${median(rr) <= 3 ? "met    " : "MISSED "} slots of a ${HOSTS}-host team event over 31 days: p50 <= 3x one host's: ${fmt(median(rr), 2)}×`);
      console.log(`info    the collective event's p50 ÷ one host's: ${fmt(median(co), 2)}×`);
    }
    if (ONLY !== "slots") {
      for (const weights of [[100, 100, 100], [200, 100, 100]]) {
        const sum = weights.reduce((a, b) => a + b, 0);
        const want = weights.map((w) => (w / sum) * FAIR_BOOKINGS);
        const { counts, msPerBooking } = await distribution(base, weights);
        const worst = Math.max(...counts.map((c, i) => Math.abs(c - want[i]) / want[i]));
        const equal = weights.every((w) => w === weights[0]);
        const ok = equal ? counts.every((c, i) => c === want[i]) : worst <= 0.02;
        console.log(`${ok ? "met    " : "MISSED "} ${FAIR_BOOKINGS} bookings, weights ${weights.join("/")}: ${counts.join("/")} (target ${want.join("/")}${equal ? "" : " within 2%"}; worst ${fmt(100 * worst, 1)}% off); ${fmt(msPerBooking, 1)} ms per booking; load average ${load()}`);
      }
    }
    if (PROFILE_DIR) {
      stopped = true;
      console.log(await stopAndSummarize(service.child, PROFILE_DIR));
    }
  } catch (err) {
    console.error(`service log (last lines):\n${service.logs().split("\n").filter((l) => !l.includes("\"level\":\"info\"")).slice(-15).join("\n")}`);
    throw err;
  } finally {
    if (!stopped) service.child.kill("SIGTERM");
  }
}

await main();
