// Starts the service for a bench as its package script does (built first for start:prod) and reads a process's peak RSS and children from /proc.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../test/helpers/jongodb.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const ADMIN_TOKEN = "bench-admin-token";
/** A bench that starts the service more than once builds it once. */
let builtArgs: string[] | undefined;
/** What the package script sets in the environment before it runs node (MALLOC_ARENA_MAX). */
const scriptEnv: Record<string, string> = {};

/** Peak resident set size of a process in MB (VmHWM), or NaN once it is gone. */
export function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

export function childPids(pid: number): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = readFileSync(`/proc/${e}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * The node arguments of the package script BENCH_SCRIPT (default `start:prod`, the compiled build, which is
 * built first; `start` runs the TypeScript through tsx), or BENCH_SERVICE_ARGS as given.
 */
export function serviceArgs(): string[] {
  if (builtArgs) return builtArgs;
  if (process.env.BENCH_SERVICE_ARGS) return process.env.BENCH_SERVICE_ARGS.split(" ");
  const script = process.env.BENCH_SCRIPT ?? "start:prod";
  // The start scripts exec node (so npm's signals reach it); the bench runs the same node command itself.
  // Variables the script sets before exec (`NAME=${NAME:-value}`) are set for the bench's service the same way.
  let command = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts[script];
  for (let m; (m = /^(\w+)=\$\{\1:-(\S*)\} /.exec(command ?? "")); command = command!.slice(m[0].length)) scriptEnv[m[1]] = process.env[m[1]] ?? m[2];
  command = command?.replace(/^exec /, "");
  if (!command?.startsWith("node ")) throw new Error(`package script ${script} must be a node command, got ${command}`);
  if (script === "start:prod") {
    const build = spawnSync("npm", ["run", "build"], { cwd: ROOT, stdio: "inherit" });
    if (build.status !== 0) throw new Error("npm run build failed");
  }
  builtArgs = command.slice("node ".length).split(" ");
  return builtArgs;
}

/** What a bench's service is started with besides its package script's variables. */
export function serviceEnv(port: number): Record<string, string> {
  return {
    PORT: String(port),
    HOST: "127.0.0.1",
    ADMIN_TOKEN,
    MONGODB_URI: process.env.BENCH_MONGODB_URI ?? "",
    // Every run measures a fresh database.
    DATA_DIR: "none",
    API_KEY_SECRET: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    // One key sends every request; the limiter stays on (its cost is measured) with a limit this run cannot reach.
    RATE_LIMIT_PER_KEY: "1000000000",
  };
}

/**
 * Starts the service as the package script does and measures the time from spawn to the first /healthz 200.
 * `nodeFlags` go before the script's own (a CPU profile: `--cpu-prof`).
 */
export async function startService(env: Record<string, string> = {}, nodeFlags: string[] = []): Promise<{ child: ChildProcess; port: number; startupMs: number; command: string; logs: () => string }> {
  const port = await freePort();
  const args = [...nodeFlags, ...serviceArgs()];
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...serviceEnv(port), ...scriptEnv, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  // Only the last 64 KB are kept, for the error below: the service logs a line per request, and collecting every
  // line of a run grew this process (the one autocannon runs in) by tens of MB during the measured cases.
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => (stderr = (stderr + c.toString()).slice(-65536)));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}:\n${stderr}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return { child, port, startupMs: performance.now() - t0, command: `node ${args.join(" ")}`, logs: () => stderr };
}

