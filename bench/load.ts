// What the HTTP benches share: the baselines' process, the load generators of their own process (wrk, h2load) with the CPU each side spent, and the machine line.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import os from "node:os";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
/** Connections of the ordinary cases; the saturation cases of bench:slots use more. */
export const CONNECTIONS = 50;
export const GRPC_CHANNELS = Number(process.env.BENCH_GRPC_CHANNELS ?? 4);

export interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time the serving process spent per request (user + system), in microseconds. */
  cpuUs: number;
  /** The same for the database process, when there is one. */
  dbCpuUs: number;
  /** The same for the load generator (this process's threads, or the tool's own process). */
  clientCpuUs: number;
}

export type Pids = { server: number | undefined; db?: number };

const TICKS_PER_SECOND = 100;

/** utime + stime of a process in seconds (Linux /proc; USER_HZ is 100 on every common kernel). */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** CPU seconds spent so far by the server, the database and this process (the load generator's, all threads). */
export function cpuMark(pids: Pids): { server: number; db: number; client: number } {
  const own = process.cpuUsage();
  return { server: cpuSeconds(pids.server), db: cpuSeconds(pids.db), client: (own.user + own.system) / 1e6 };
}

/** CPU µs per request of each process between two marks. */
export function cpuPerRequest(from: ReturnType<typeof cpuMark>, to: ReturnType<typeof cpuMark>, total: number): Pick<Row, "cpuUs" | "dbCpuUs" | "clientCpuUs"> {
  const per = (s: number) => (s * 1e6) / total;
  return { cpuUs: per(to.server - from.server), dbCpuUs: per(to.db - from.db), clientCpuUs: per(to.client - from.client) };
}

export interface BaselinePorts {
  barePort: number;
  expressPort: number;
  grpcPort: number;
  bareGrpcPort: number;
}

/** bench/baselines.ts in a process of its own: a bare node:http reply, a bare Express route, a bare grpc-js method, a bare HTTP/2 gRPC reply. */
export async function startBaselines(env: Record<string, string> = {}): Promise<{ child: ChildProcess } & BaselinePorts> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/baselines.ts"], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, ...env } });
  const ports = await new Promise<BaselinePorts>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("\n")) resolve(JSON.parse(out.split("\n")[0]) as BaselinePorts);
    });
    child.once("exit", (code) => reject(new Error(`baselines exited with ${code}`)));
  });
  return { child, ...ports };
}

/**
 * Runs a load generator of its own process (wrk, h2load) through a shell that prints its own /proc stat after the
 * tool has exited: the shell's cutime + cstime are then exactly the CPU the tool spent (user + system).
 */
export function runTool(command: string, args: string[]): Promise<{ out: string; cpuSeconds: number }> {
  const quoted = [command, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", `${quoted}; echo "__STAT__ $(cat /proc/$$/stat)"`], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    child.once("error", reject);
    child.once("exit", () => {
      const stat = /__STAT__ (.*)/.exec(out)?.[1];
      if (!stat) return reject(new Error(`${command} printed no stat:\n${out}`));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      resolve({ out, cpuSeconds: (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND });
    });
  });
}

/** A duration as wrk prints it ("1.23ms", "850.00us", "1.02s") in milliseconds. */
function wrkMs(text: string | undefined): number {
  const m = /([\d.]+)(us|ms|s)/.exec(text ?? "");
  if (!m) return NaN;
  return Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1);
}

/**
 * wrk (HTTP/1.1) against `url`: warm-up, then SECONDS measured; one thread and CONNECTIONS connections unless told.
 * `timeoutSeconds`: how long wrk waits for an answer before counting a timeout (its default, 2 s, unless told).
 */
export async function wrkLoad(
  name: string,
  pids: Pids,
  url: string,
  headers: Record<string, string> = {},
  shape: { threads?: number; connections?: number; timeoutSeconds?: number } = {},
): Promise<Row> {
  const { threads = 1, connections = CONNECTIONS, timeoutSeconds } = shape;
  const h = Object.entries(headers).flatMap(([k, v]) => ["-H", `${k}: ${v}`]);
  const load = [`-t${threads}`, `-c${connections}`, ...(timeoutSeconds ? [`--timeout`, `${timeoutSeconds}s`] : [])];
  await runTool("wrk", [...load, `-d${WARMUP_SECONDS}s`, ...h, url]);
  const start = cpuMark(pids);
  const { out, cpuSeconds: toolCpu } = await runTool("wrk", [...load, `-d${SECONDS}s`, "--latency", ...h, url]);
  const end = cpuMark(pids);
  const total = Number(/(\d+) requests in/.exec(out)?.[1]);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = non2xx + (socketErrors ? socketErrors.slice(1).reduce((n, x) => n + Number(x), 0) : 0);
  const cpu = cpuPerRequest(start, end, total);
  return {
    name,
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]),
    p50: wrkMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1]),
    p99: wrkMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1]),
    errors,
    cpuUs: cpu.cpuUs,
    dbCpuUs: cpu.dbCpuUs,
    clientCpuUs: (toolCpu * 1e6) / total,
  };
}

/** An empty GetUserRequest as one gRPC message: uncompressed flag and a zero length. */
const EMPTY_GRPC_MESSAGE = Buffer.alloc(5);

/**
 * h2load's arguments for framed GetUser calls to `target` (host:port) under `key`, `connections` x `streams` in flight
 * from one thread, besides how long or how many (`-D` or `-n`): for bench:grpc's loads and bench/grpcCost.ts's counts.
 */
export function h2loadGetUserArgs(target: string, key: string, connections: number, streams: number): string[] {
  const dataFile = join(os.tmpdir(), `bench-grpc-${process.pid}.bin`);
  writeFileSync(dataFile, EMPTY_GRPC_MESSAGE);
  return [`-c${connections}`, `-m${streams}`, "-t1", "-d", dataFile, "-H", "content-type: application/grpc", "-H", "te: trailers", "-H", `x-api-key: ${key}`, `http://${target}/scheduling.v1.UserService/GetUser`];
}

/**
 * h2load (HTTP/2 prior knowledge, one thread) posting framed GetUser calls: CONNECTIONS streams in flight over
 * GRPC_CHANNELS connections, unless `shape` says (50 connections of one stream each is wrk -c50's shape). h2load checks only the HTTP status; the grpc-js cases of bench:http read the gRPC
 * status of the same call. It reports no percentiles: p50 shows its mean time per request, p99 its max.
 */
export async function h2loadGrpc(name: string, pids: Pids, target: string, key: string, shape: { connections?: number; streams?: number } = {}): Promise<Row> {
  const { connections = GRPC_CHANNELS, streams = Math.ceil(CONNECTIONS / GRPC_CHANNELS) } = shape;
  const calls = h2loadGetUserArgs(target, key, connections, streams);
  const args = (seconds: number) => [`-D${seconds}`, ...calls];
  await runTool("h2load", args(WARMUP_SECONDS));
  const start = cpuMark(pids);
  const { out, cpuSeconds: toolCpu } = await runTool("h2load", args(SECONDS));
  const end = cpuMark(pids);
  const done = /requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out);
  const status = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  const total = Number(done?.[2] ?? NaN);
  const request = /time for request:\s+(\S+)\s+(\S+)\s+(\S+)/.exec(out);
  const cpu = cpuPerRequest(start, end, total);
  return {
    name,
    rps: Number(/finished in [\d.]+\w+, ([\d.]+) req\/s/.exec(out)?.[1]),
    p50: wrkMs(request?.[3]),
    p99: wrkMs(request?.[2]),
    errors: Number(done?.[3] ?? 0) + Number(done?.[4] ?? 0) + (status ? Number(status[2]) + Number(status[3]) + Number(status[4]) : 0),
    cpuUs: cpu.cpuUs,
    dbCpuUs: cpu.dbCpuUs,
    clientCpuUs: (toolCpu * 1e6) / total,
  };
}

export function machine(): string {
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? os.cpus()[0]?.model ?? "unknown";
  return `${os.availableParallelism()} CPUs (${cpu}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, ${os.type()} ${os.release()}, load average before the run ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

export const fmt = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
