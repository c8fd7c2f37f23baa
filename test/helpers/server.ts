// Starts the real service (src/app/main.ts, or the run's build of it) as a child process on a free port and stops it; used by globalSetup and by tests that need their own server.
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, rmSync, writeFileSync } from "node:fs";
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
 * Bundles the service once for a run with esbuild, its packages inside, with the pages' bundles prebuilt beside it as
 * `npm run build` leaves them; servers the run starts then load one JavaScript file. A run starts about 140 servers,
 * all on 2 cores: a start through tsx costs about 1.9 s of CPU, one from a file-by-file transpile 2.0-2.5 s (most
 * of it Node resolving and compiling 314 modules of ours and about 700 of node_modules), one from the bundle 0.9 s
 * (bench/RESULTS.md, "Test suite"). The tests of `npm start` itself still go through tsx, and `npm start:prod`'s
 * dist/ is tsc's file-by-file output.
 */
export async function buildService(dir: string): Promise<void> {
  await transpileService(ROOT, dir);
  process.env[BUILD_ENV] = dir;
}

/**
 * Where the bundle's entry lies in a build: three folders down, as src/<area>/<feature>/*.js lie in dist/, so the
 * files the service finds beside its sources (package.json, web-assets/) are where they are in dist/.
 */
const ENTRY_DIR = "src/app/bundle";

/**
 * Packages left outside the bundle: those that find files of their own beside their code (a native addon, a
 * binary, swagger-ui's assets), loaded from node_modules as usual; and the MongoDB driver's optional add-ons, not
 * installed.
 */
const UNBUNDLED = ["sharp", "esbuild", "swagger-ui-dist", "@jongodb/*", "kerberos", "snappy", "@mongodb-js/zstd", "mongodb-client-encryption", "gcp-metadata", "socks", "@aws-sdk/*"];

/**
 * What starts a build: the bundle (CommonJS) compiled through vm.Script with V8's code cache kept beside it, which
 * Node 20 offers no ES module (module.enableCompileCache came in Node 22). The first server of a build writes the
 * cache a few seconds after its start, with the functions a start compiled in it; later ones skip compiling them:
 * 0.87 s of CPU to listening instead of 1.09 s from an ES module bundle (bench/RESULTS.md, "Test suite"). A cache
 * that does not fit the file is rejected by V8 and written again.
 */
const START = `// Starts the service's test bundle (test/helpers/server.ts transpileService) with V8's code cache.
const fs = require("node:fs"), vm = require("node:vm"), path = require("node:path"), Module = require("node:module");
const file = path.join(__dirname, "main.js"), cacheFile = path.join(__dirname, "main.js.cache");
let cachedData;
try { cachedData = fs.readFileSync(cacheFile); } catch {}
const script = new vm.Script(Module.wrap(fs.readFileSync(file, "utf8")), { filename: file, cachedData });
const main = new Module(file, module);
main.filename = file;
main.paths = Module._nodeModulePaths(__dirname);
script.runInThisContext()(main.exports, Module.createRequire(file), main, file, __dirname);
if (cachedData === undefined || script.cachedDataRejected) {
  setTimeout(() => {
    const part = cacheFile + "." + process.pid;
    fs.writeFileSync(part, script.createCachedData());
    fs.renameSync(part, cacheFile);
  }, 3000).unref();
}
`;

/** What buildService does, for the service's sources under `root` (a copy a test changed): the bundle in `dir`. */
export async function transpileService(root: string, dir: string): Promise<void> {
  const { build } = await import("esbuild");
  rmSync(dir, { recursive: true, force: true });
  const outdir = join(dir, ENTRY_DIR);
  // Minified but for names (stack traces keep them): every start reads, hashes and compiles the whole file, and 5.1 MB
  // cost about a tenth less CPU to listening than 7.2 MB (bench/RESULTS.md, "a start's CPU on a new VM").
  const common = { bundle: true, minifyWhitespace: true, minifySyntax: true, outdir, absWorkingDir: root, platform: "node", target: "node20", external: UNBUNDLED, logLevel: "error" } as const;
  await Promise.all([
    build({
      ...common,
      entryPoints: { main: "src/app/main.ts" },
      format: "cjs",
      // import() of the packages left outside (sharp, esbuild) as require(): V8 drops a script's dynamic-import
      // callback when it comes from the code cache in Node 20 (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING).
      supported: { "dynamic-import": false },
      // The service's modules find files beside themselves (package.json, web-assets/, the reader thread's file).
      define: { "import.meta.url": "__bundleUrl" },
      banner: { js: 'const __bundleUrl = require("node:url").pathToFileURL(__filename).href;' },
    }),
    // The iCalendar reader thread, started from a file beside the entry (src/providers/shared/icalPool.ts): an ES
    // module, as it awaits at its top level; its CommonJS packages call require() for Node's modules.
    build({
      ...common,
      entryPoints: { icalWorker: "src/providers/shared/icalWorker.ts" },
      format: "esm",
      banner: { js: 'import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(import.meta.url);' },
    }),
  ]);
  writeFileSync(join(outdir, "start.cjs"), START);
  // Beside src/ as in dist/: the OpenAPI document reads its version there, and the pages their prebuilt bundles.
  copyFileSync(join(root, "package.json"), join(dir, "package.json"));
  const { writeAssets } = await import("../../src/features/pages/assets.js");
  await writeAssets(join(dir, "web-assets"));
}

/** The file node runs for a build made by transpileService. */
export function serviceEntry(dir: string): string {
  return join(dir, ENTRY_DIR, "start.cjs");
}

/**
 * How node runs a build made by transpileService: with V8's garbage collector on the main thread alone. A test
 * server lives for seconds on two cores that four workers, their servers and browsers keep busy, so the collector's
 * helper threads only add the cost of handing work over: a start to listening and a test-like load after it
 * (accounts, events, bookings, listings) took 11 % less CPU in alternating runs (bench/RESULTS.md, "a test
 * server's GC on one thread"). The flag changes when the collector works, not what the service does;
 * `npm run start:prod` keeps the default, where the helpers shorten the pauses a caller waits through.
 */
export function builtNodeArgs(dir: string): string[] {
  return ["--single-threaded-gc", serviceEntry(dir)];
}

/** How node runs the service unless a test says: the run's build if there is one, else the TypeScript through tsx, as `npm start` does. */
export function defaultNodeArgs(): string[] {
  const built = process.env[BUILD_ENV];
  return built ? builtNodeArgs(built) : ["--import", "tsx", "src/app/main.ts"];
}

/** The service's own database deadline (src/db/deadlines.ts), for the tests of what happens when it passes. */
export const DEADLINE_DEFAULT_ENV = { DB_OPERATION_TIMEOUT_MS: String(DB_MAX_TIME_MS) };

/**
 * `nodeArgs`: how node runs the service (`defaultNodeArgs`). The start deadline is generous because a start is
 * slow only when the machine is loaded (four servers with their databases at once, beside other work), and a
 * failed start fails every file of its worker; a start that really hangs still fails.
 */
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
      // The tests' calendars (feeds, Radicale, CalDAV servers) listen on loopback, which only a server with
      // OUTBOUND_ALLOW_PRIVATE reaches; the others read none, and start their reader threads with a first read that
      // never comes instead of warming them before they listen: about a fifth of a start's CPU, over about 190 starts.
      CALENDAR_READERS_WARM: env.OUTBOUND_ALLOW_PRIVATE === "true" ? "true" : "false",
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
