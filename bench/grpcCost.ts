// Instructions per gRPC GetUser call (valgrind callgrind, Ir): the service against bare grpc-js and a bare node:http2 reply of the same bytes, deterministic where wall time is not (issue 38).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { freePort } from "../test/helpers/jongodb.js";
import { serviceEntry, transpileService } from "../test/helpers/server.js";
import { call, expectStatus } from "./rest.js";
import { h2loadGetUserArgs, runTool } from "./load.js";
import { ADMIN_TOKEN, serviceEnv } from "./service.js";

/*
 * Each server runs under `valgrind --tool=callgrind` with instrumentation off while it starts and warms up
 * (WARMUP calls, h2load, so V8 has optimised the hot path), then on: the instructions of N calls, divided by N,
 * are the call's cost. What the service does on its own timers meanwhile (database polls, the account lease,
 * the health ping) is counted too; under valgrind, 50 times slower, those polls took most of the service's
 * instructions at their default periods, so they are set far apart here (SERVICE_ENV). An idle span could not be
 * subtracted instead: idle, V8's memory reducer starts full collections that a busy process never makes.
 * h2load sends the calls (10 connections of 1 stream, as
 * bench:grpc's 10 x 1; GRPC_COST_SHAPE="4x32" for the other shape); the client is not counted.
 * GRPC_COST_CALLS (default 2000), GRPC_COST_WARMUP (default 20000), GRPC_COST_REPEAT (default 3): counted spans
 * per server. GRPC_COST_ONLY=service,grpcjs,h2bare picks servers; GRPC_COST_OUT the folder of the build and the dumps
 * (default .tmp/grpccost); GRPC_COST_SOURCE another copy of the sources to build the service from (a commit's
 * `git archive` under .tmp/, to measure before and after side by side).
 */

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const OUT = process.env.GRPC_COST_OUT ?? join(ROOT, ".tmp", "grpccost");
const CALLS = Number(process.env.GRPC_COST_CALLS ?? 2000);
const WARMUP = Number(process.env.GRPC_COST_WARMUP ?? 20000);
const REPEAT = Number(process.env.GRPC_COST_REPEAT ?? 3);
const [CONNECTIONS, STREAMS] = (process.env.GRPC_COST_SHAPE ?? "10x1").split("x").map(Number);
const ONLY = new Set((process.env.GRPC_COST_ONLY ?? "service,grpcjs,h2bare").split(","));
/**
 * What is counted (GRPC_COST_SCOPE): `http2` (the default), only what runs inside node:http2's session (its reads
 * of the socket, with every JavaScript callback, promise and tick they run, and its writes), so the service's
 * own timers (database polls, the account lease's re-reads, log flushes) are left out; `all`, every instruction of
 * every thread. Why: under valgrind those timers cost the same per second however slowly the calls go, and on a
 * machine shared with test suites a span of 2,000 calls took 13 s or 450 s; counted in all, the cost per call
 * then moved by half. The session scope leaves out V8's helper threads (concurrent marking, compiling) too.
 */
const SCOPE = process.env.GRPC_COST_SCOPE === "all" ? [] : ["--collect-atstart=no", "--toggle-collect=*Http2Session*"];
const NODE_FLAGS = ["--max-semi-space-size=8", "--max-old-space-size=1024"];
const PATH = "/scheduling.v1.UserService/GetUser";
/** The polls of the service's own that are not the call, as rare as the configuration allows (see above). */
const SERVICE_ENV = { ACCOUNT_CACHE_MS: "1000", EFFECTS_POLL_MS: "600000", BOOKING_CHANGES_POLL_MS: "600000" };

function valgrind(name: string, args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(
    "valgrind",
    ["--tool=callgrind", "--instr-atstart=no", "--smc-check=all-non-file", "--separate-threads=yes", ...SCOPE, `--callgrind-out-file=${join(OUT, `${name}.%p.out`)}`, process.execPath, ...NODE_FLAGS, ...args],
    { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stderr!.on("data", () => undefined);
  return child;
}

function control(pid: number, ...args: string[]): void {
  // vgdb names its pipes after $HOST, which the service reads as its address: the servers and this run share one.
  const r = spawnSync("callgrind_control", [...args, String(pid)], { encoding: "utf8", env: { ...process.env, HOST: "127.0.0.1" } });
  if (process.env.GRPC_COST_DEBUG) console.log(r.stdout, r.stderr);
  if (r.status !== 0 || !r.stdout.includes("OK")) throw new Error(`callgrind_control ${args.join(" ")}: ${r.stderr}${r.stdout}`);
}

/**
 * Ir of the newest dump of `pid` (callgrind numbers them .1, .2, ..., a file per thread: -01 is the main thread),
 * in all and on the main thread alone. The other threads are V8's helpers: concurrent marking and sweeping (a
 * cost of the calls' garbage) but also TurboFan compiling, which under valgrind went on long after the warm-up
 * and moved the total by a third between spans (the main thread's count moved a few per cent).
 */
function lastDumpIr(name: string, pid: number): { all: number; main: number } {
  const prefix = `${name}.${pid}.out.`;
  const files = readdirSync(OUT).filter((f) => f.startsWith(prefix));
  const dump = Math.max(...files.map((f) => Number(f.slice(prefix.length).split("-")[0])));
  if (!Number.isFinite(dump)) throw new Error(`no dump of ${name}`);
  let all = 0;
  let main = 0;
  for (const f of files.filter((f) => f.startsWith(`${prefix}${dump}-`))) {
    const text = readFileSync(join(OUT, f), "utf8");
    const ir = Number((/^summary: (\d+)/m.exec(text) ?? /^totals: (\d+)/m.exec(text))?.[1] ?? 0);
    all += ir;
    if (f.endsWith("-01")) main = ir;
  }
  return { all, main };
}

/**
 * Awaited, not spawnSync: this process reads the servers' standard error, and while it was blocked on h2load the
 * service's pipe filled, its log writes failed and were retried every 5 ms, each building an exception with its
 * stack: 17k instructions per call counted in all (bench/RESULTS.md, issue 38, fourth session).
 */
async function h2load(port: number, key: string, n: number): Promise<void> {
  const { out } = await runTool("h2load", [`-n${n}`, ...h2loadGetUserArgs(`127.0.0.1:${port}`, key, CONNECTIONS, STREAMS)]);
  const done = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded/.exec(out);
  if (Number(done?.[1]) !== n) throw new Error(`h2load: ${out}`);
}

/** Ir per call over CALLS calls, REPEAT times, after WARMUP calls uncounted: in all, and on the main thread. */
async function measure(name: string, pid: number, port: number, key: string): Promise<Array<{ all: number; main: number }>> {
  await h2load(port, key, WARMUP);
  control(pid, "--instr=on");
  const costs: Array<{ all: number; main: number }> = [];
  for (let i = 0; i < REPEAT; i++) {
    control(pid, "--zero");
    const t0 = Date.now();
    await h2load(port, key, CALLS);
    const ms = Date.now() - t0;
    control(pid, "--dump");
    const { all, main } = lastDumpIr(name, pid);
    costs.push({ all: all / CALLS, main: main / CALLS });
    console.log(`${name}: ${CALLS} calls in ${ms} ms: ${Math.round(all / CALLS)} Ir/call, main thread ${Math.round(main / CALLS)}`);
  }
  return costs;
}

async function waitFor(url: string, child: ChildProcess, init?: RequestInit): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited with ${child.exitCode}`);
    try {
      if ((await fetch(url, init)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main(): Promise<void> {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  await transpileService(process.env.GRPC_COST_SOURCE ?? ROOT, join(OUT, "service"));
  await build({ entryPoints: ["bench/baselines.ts"], outfile: join(OUT, "baselines.mjs"), absWorkingDir: ROOT, bundle: true, packages: "external", format: "esm", platform: "node", target: "node20", logLevel: "silent" });
  const results: Record<string, Array<{ all: number; main: number }>> = {};
  const port = await freePort();
  // start:prod's allocator settings, as bench:grpc runs it.
  const service = valgrind("service", [serviceEntry(join(OUT, "service"))], { ...serviceEnv(port), MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "131072", ...SERVICE_ENV });
  let baselines: ChildProcess | undefined;
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitFor(`${base}/healthz`, service);
    const made = expectStatus("account", await call(base, "POST", "/admin/accounts", { "x-admin-token": ADMIN_TOKEN }, { account: { email: `cost-${Date.now()}@example.com`, full_name: "Bench User" } }), 201);
    const key = String(made.api_key);
    const proto = await fetch(`${base}${PATH}`, { method: "POST", headers: { "content-type": "application/proto", "x-api-key": key }, body: new Uint8Array() });
    const reply = Buffer.from(await proto.arrayBuffer());
    if (ONLY.has("service")) results.service = await measure("service", service.pid!, port, key);
    service.kill("SIGTERM");
    baselines = valgrind("baselines", [join(OUT, "baselines.mjs")], { BENCH_GRPC_REPLY: reply.toString("base64"), HOST: "127.0.0.1" });
    const ports = await new Promise<{ grpcPort: number; bareGrpcPort: number }>((resolve) => {
      let out = "";
      baselines!.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        if (out.includes("\n")) resolve(JSON.parse(out.split("\n")[0]));
      });
    });
    if (ONLY.has("grpcjs")) results.grpcjs = await measure("baselines", baselines.pid!, ports.grpcPort, key);
    if (ONLY.has("h2bare")) results.h2bare = await measure("baselines", baselines.pid!, ports.bareGrpcPort, key);
  } finally {
    service.kill("SIGTERM");
    baselines?.kill("SIGTERM");
  }
  const k = (xs: Array<{ all: number; main: number }> | undefined) => (xs ? xs.map((x) => `${Math.round(x.all / 1000)}k (main ${Math.round(x.main / 1000)}k)`).join(", ") : "-");
  console.log(`\nIr per GetUser call, h2load ${CONNECTIONS} x ${STREAMS}, ${CALLS} calls after ${WARMUP}, in all (main thread):`);
  console.log(`service ${k(results.service)}\nbare grpc-js ${k(results.grpcjs)}\nbare node:http2 ${k(results.h2bare)}`);
}

await main();
