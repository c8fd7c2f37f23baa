// Issue 38's gRPC targets in one run: GetUser against a bare @grpc/grpc-js server and a bare node:http2 reply answering the same bytes, and against REST GET /user, with the CPU each side spent.
import { mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { call, expectStatus } from "./rest.js";
import { fmt, h2loadGrpc, machine, median, SECONDS, startBaselines, WARMUP_SECONDS, wrkLoad, type Row } from "./load.js";
import { summarizeProfile } from "./profile.js";
import { ADMIN_TOKEN, startService } from "./service.js";

/*
 * The cases, each once per round (BENCH_ROUNDS, default 3; BENCH_SECONDS per case: `npm run bench:grpc` sets 4), every ratio
 * taken within a round and the median round's shown. The bare servers run in one process of their own
 * (bench/baselines.ts) and answer the bytes the service answers: GetUser's response message (fetched from the
 * service before the run), REST GET /user's envelope.
 *   grpcjs10 / grpc10 / h2bare10      h2load, 10 connections of 1 stream: a bare grpc-js unary method, GetUser, a bare
 *                                     node:http2 gRPC reply (read the stream, respond, one frame, the status trailer)
 *   grpcjs128 / grpc128 / h2bare128   the same at 4 connections of 32 streams
 *   rest50 / http1bare                wrk -c50: REST GET /api/v1/user, a bare node:http reply of the same bytes
 * Targets (issue 38): grpc10 >= 100% of grpcjs10 and grpc128 >= 100% of grpcjs128 (requests/s); grpc128 >= 75% of
 * rest50. Beside each: the service's CPU per call above its floor (bare node:http2 for gRPC, bare node:http for REST).
 *
 * BENCH_ONLY=grpc10,grpcjs10 runs only those cases. BENCH_CPU_PROF=<dir> runs the service with --cpu-prof and prints
 * where its busy time went after the run (use it with BENCH_ONLY to profile one load).
 */

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(",")) : undefined;
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const CASES = ["grpcjs10", "grpc10", "h2bare10", "grpc128", "grpcjs128", "h2bare128", "rest50", "http1bare"] as const;
type CaseName = (typeof CASES)[number];
type Round = Partial<Record<CaseName, Row>>;

async function main(): Promise<void> {
  const machineLine = machine();
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const service = await startService({}, PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : []);
  const base = `http://127.0.0.1:${service.port}`;
  let stopped = false;
  let baselines: Awaited<ReturnType<typeof startBaselines>> | undefined;
  try {
    const made = expectStatus("account", await call(base, "POST", "/admin/accounts", { "x-admin-token": ADMIN_TOKEN }, { account: { email: `bench-${Date.now()}@example.com`, full_name: "Bench User" } }), 201);
    const key = String(made.api_key);
    // What the service answers, byte for byte: GetUser's message (Connect's binary unary body is the bare message) and REST's envelope.
    const proto = await fetch(`${base}/scheduling.v1.UserService/GetUser`, { method: "POST", headers: { "content-type": "application/proto", "x-api-key": key }, body: new Uint8Array() });
    if (proto.status !== 200) throw new Error(`GetUser answered ${proto.status}`);
    const reply = Buffer.from(await proto.arrayBuffer());
    const restBody = await (await fetch(`${base}/api/v1/user`, { headers: { "x-api-key": key } })).text();
    baselines = await startBaselines({ BENCH_GRPC_REPLY: reply.toString("base64"), BENCH_REST_BODY: restBody });
    const bare = { server: baselines.child.pid };
    const pids = { server: service.child.pid };
    const ten = { connections: 10, streams: 1 };
    const wide = { connections: 4, streams: 32 };
    const run: Record<CaseName, () => Promise<Row>> = {
      grpcjs10: () => h2loadGrpc("bare grpc-js, same bytes, h2load 10 x 1", bare, `127.0.0.1:${baselines!.grpcPort}`, key, ten),
      grpc10: () => h2loadGrpc("gRPC GetUser, h2load 10 x 1", pids, `127.0.0.1:${service.port}`, key, ten),
      h2bare10: () => h2loadGrpc("bare node:http2 reply, same bytes, h2load 10 x 1", bare, `127.0.0.1:${baselines!.bareGrpcPort}`, key, ten),
      grpc128: () => h2loadGrpc("gRPC GetUser, h2load 4 x 32", pids, `127.0.0.1:${service.port}`, key, wide),
      grpcjs128: () => h2loadGrpc("bare grpc-js, same bytes, h2load 4 x 32", bare, `127.0.0.1:${baselines!.grpcPort}`, key, wide),
      h2bare128: () => h2loadGrpc("bare node:http2 reply, same bytes, h2load 4 x 32", bare, `127.0.0.1:${baselines!.bareGrpcPort}`, key, wide),
      rest50: () => wrkLoad("REST GET /api/v1/user, wrk -c50", pids, `${base}/api/v1/user`, { "x-api-key": key }),
      http1bare: () => wrkLoad("bare node:http reply, same bytes, wrk -c50", bare, `http://127.0.0.1:${baselines!.barePort}/api/v1/user`),
    };
    const chosen = CASES.filter((c) => !ONLY || ONLY.has(c));
    const rounds: Round[] = [];
    const loads: string[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const round: Round = {};
      for (const c of chosen) round[c] = await run[c]();
      rounds.push(round);
      loads.push((await import("node:os")).loadavg()[0].toFixed(1));
    }

    console.log(`machine: ${machineLine}`);
    console.log(`service: ${service.command}; GetUser answers ${reply.length} bytes, REST ${Buffer.byteLength(restBody)}; ${SECONDS} s per case after ${WARMUP_SECONDS} s warm-up; ${ROUNDS} rounds (load average after each: ${loads.join(", ")})`);
    console.log(`| case | ${rounds.map((_, i) => `round ${i + 1}: requests/s, server CPU µs/req`).join(" | ")} | errors |\n|---|${rounds.map(() => "---:|").join("")}---:|`);
    for (const c of chosen) {
      const rows = rounds.map((round) => round[c]!);
      console.log(`| ${rows[0].name} | ${rows.map((r) => `${fmt(r.rps)}, ${fmt(r.cpuUs)}`).join(" | ")} | ${rows.reduce((n, r) => n + r.errors, 0)} |`);
    }

    const ratio = (a: CaseName, b: CaseName) => rounds.map((r) => (r[a] && r[b] ? r[a]!.rps / r[b]!.rps : NaN));
    const above = (a: CaseName, floor: CaseName) => rounds.map((r) => (r[a] && r[floor] ? r[a]!.cpuUs - r[floor]!.cpuUs : NaN));
    const pct = (xs: number[]) => xs.map((x) => `${fmt(100 * x, 1)}%`).join(", ");
    const us = (xs: number[]) => xs.map((x) => `${fmt(x)} µs`).join(", ");
    const targets: Array<[string, number[], number]> = [
      ["gRPC GetUser >= 100% of bare grpc-js, same bytes, 10 x 1", ratio("grpc10", "grpcjs10"), 1],
      ["gRPC GetUser >= 100% of bare grpc-js, same bytes, 4 x 32", ratio("grpc128", "grpcjs128"), 1],
      ["gRPC GetUser (4 x 32) >= 75% of REST GET /user (wrk -c50)", ratio("grpc128", "rest50"), 0.75],
    ];
    console.log("");
    for (const [what, xs, goal] of targets) {
      const m = median(xs);
      console.log(`${Number.isNaN(m) ? "n/a    " : m >= goal ? "met    " : "MISSED "} ${what}: ${fmt(100 * m, 1)}% (rounds ${pct(xs)})`);
    }
    // A line whose cases were left out (BENCH_ONLY) is left out with them rather than printed as NaN.
    const info = (text: (...shown: string[]) => string, ...series: Array<[number[], (xs: number[]) => string]>) => {
      if (series.some(([xs]) => xs.some(Number.isFinite))) console.log(`info    ${text(...series.map(([xs, show]) => show(xs)))}`);
    };
    info((a) => `gRPC GetUser (10 x 1) ÷ REST GET /user: ${a}`, [ratio("grpc10", "rest50"), pct]);
    info((a, b) => `bare grpc-js ÷ bare node:http2, 10 x 1: ${a}; 4 x 32: ${b}`, [ratio("grpcjs10", "h2bare10"), pct], [ratio("grpcjs128", "h2bare128"), pct]);
    info((a, b) => `server CPU per call above node:http2's bare reply: GetUser 10 x 1 ${a}; 4 x 32 ${b}`, [above("grpc10", "h2bare10"), us], [above("grpc128", "h2bare128"), us]);
    info((a, b) => `bare grpc-js CPU per call above node:http2's bare reply: 10 x 1 ${a}; 4 x 32 ${b}`, [above("grpcjs10", "h2bare10"), us], [above("grpcjs128", "h2bare128"), us]);
    info((a) => `server CPU per request above node:http's bare reply: REST GET /user ${a}`, [above("rest50", "http1bare"), us]);
    if (PROFILE_DIR) {
      service.child.kill("SIGTERM");
      await new Promise((resolve) => service.child.once("exit", resolve));
      stopped = true;
      // The main thread's profile is the largest (the calendar readers' worker threads write their own).
      const profile = readdirSync(PROFILE_DIR)
        .filter((f) => f.endsWith(".cpuprofile"))
        .sort((x, y) => statSync(join(PROFILE_DIR, y)).size - statSync(join(PROFILE_DIR, x)).size)[0];
      if (profile) console.log(`\nCPU profile of the service (${join(PROFILE_DIR, profile)}):\n${summarizeProfile(join(PROFILE_DIR, profile))}`);
    }
  } finally {
    if (!stopped) service.child.kill("SIGTERM");
    baselines?.child.kill("SIGTERM");
  }
}

await main();
