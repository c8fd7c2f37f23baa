// Starts the real service (src/app/main.ts, or the run's build of it) as a child process on a free port and stops it; used by globalSetup and by tests that need their own server.
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DB_MAX_TIME_MS } from "../../src/db/deadlines.js";
import { whenListening } from "./listening.js";

export const ADMIN_TOKEN = "test-admin-token";
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface RunningServer {
  baseUrl: string;
  port: number;
  child: ChildProcess;
  /** Everything the server wrote to stderr so far. */
  logs(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Set by test/globalSetup.ts for the run: the directory `buildService` wrote. */
const BUILD_ENV = "TEST_SERVICE_BUILD";

/**
 * Transpiles src/ and gen/ once for a run, file by file with esbuild (the transform tsx applies at every start),
 * with the pages' bundles prebuilt beside them as `npm run build` leaves them; servers the run starts then load
 * JavaScript. A start through tsx costs about 1.9 s of CPU, one from the JavaScript 0.85 s, and a run starts
 * about 60 (bench/RESULTS.md, "Test suite"). The tests of `npm start` itself still go through tsx.
 */
export async function buildService(dir: string): Promise<void> {
  await transpileService(ROOT, dir);
  process.env[BUILD_ENV] = dir;
}

/** What buildService does, for the service's sources under `root` (a copy a test changed): the JavaScript in `dir`. */
export async function transpileService(root: string, dir: string): Promise<void> {
  const { build } = await import("esbuild");
  rmSync(dir, { recursive: true, force: true });
  await build({ entryPoints: ["src/**/*.ts", "gen/**/*.ts"], outdir: dir, outbase: root, absWorkingDir: root, format: "esm", platform: "node", target: "node20", sourcemap: "inline", logLevel: "silent" });
  // Beside src/ as in dist/: the OpenAPI document reads its version there, and the pages their prebuilt bundles.
  copyFileSync(join(root, "package.json"), join(dir, "package.json"));
  const { writeAssets } = await import("../../src/features/pages/assets.js");
  await writeAssets(join(dir, "web-assets"));
}

/** How node runs the service unless a test says: the run's build if there is one, else the TypeScript through tsx, as `npm start` does. */
export function defaultNodeArgs(): string[] {
  const built = process.env[BUILD_ENV];
  return built ? [join(built, "src/app/main.js")] : ["--import", "tsx", "src/app/main.ts"];
}

/**
 * `nodeArgs`: how node runs the service (`defaultNodeArgs`). The start deadline is generous because a start is
 * slow only when the machine is loaded (four servers with their databases at once, beside other work), and a
 * failed start fails every file of its worker; a start that really hangs still fails.
 */
/** The service's own database deadline (src/db/deadlines.ts), for the tests of what happens when it passes. */
export const DEADLINE_DEFAULT_ENV = { DB_OPERATION_TIMEOUT_MS: String(DB_MAX_TIME_MS) };

export async function startServer(
  env: Record<string, string> = {},
  timeoutMs = 120_000,
  nodeArgs = defaultNodeArgs(),
  /** Called with everything written to stderr so far, at each write, while starting and after. */
  watch?: (logs: string) => void,
  /** The largest file the service may write, in KiB (`ulimit -f` in the bash that starts it, whose unit is 1 KiB): a disk that is full for it. */
  fileSizeLimitKiB?: number,
): Promise<RunningServer> {
  const [command, args] =
    fileSizeLimitKiB === undefined ? [process.execPath, nodeArgs] : ["/bin/bash", ["-c", `ulimit -f ${fileSizeLimitKiB} && exec "$0" "$@"`, process.execPath, ...nodeArgs]];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      ADMIN_TOKEN,
      // Each server starts empty and keeps nothing: a test that wants DATA_DIR names its own folder.
      DATA_DIR: "none",
      // Needed only with MONGODB_URI (a real MongoDB); harmless with the embedded server.
      API_KEY_SECRET: process.env.API_KEY_SECRET ?? "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
      // Test files share one key per account and one address; the limiter stays on, out of their way.
      // test/api/ratelimit.test.ts starts servers with small limits.
      RATE_LIMIT_PER_KEY: "1000000",
      RATE_LIMIT_PUBLIC_PER_IP: "1000000",
      // Tests book one host many times under one e-mail; test/api/abuse.test.ts starts servers with small caps.
      BOOKING_LIMIT_PER_BOOKER: "1000000",
      BOOKING_LIMIT_PER_HOST: "1000000",
      BOOKING_LIMIT_NEW_BOOKERS_PER_ADDRESS: "1000000",
      // The full suite on 2 cores (four workers, Chromium, Python builds; load 12-20) starves the embedded database
      // past the service's 1 s operation deadline now and then, and a booking of a test about something else answers
      // 503 (six such failures in one full run). Tests of the deadline itself start their servers with the
      // service's own (DEADLINE_DEFAULT_ENV).
      DB_OPERATION_TIMEOUT_MS: "4000",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.stdout!.resume();
  if (watch) {
    let logs = "";
    child.stderr!.on("data", (chunk: Buffer) => watch((logs += chunk.toString())));
  }
  const { port, output } = await whenListening(child, [child.stderr!], timeoutMs);
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    child,
    logs: output,
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
