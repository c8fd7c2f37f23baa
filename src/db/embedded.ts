// Starts and stops the embedded MongoDB-compatible dev server (jongodb) when no MONGODB_URI is given.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const PACKAGE = "@jongodb/memory-server-bin-linux-x64-gnu";

export interface EmbeddedServer {
  uri: string;
  stop(): Promise<void>;
  /** Resolves when the process ends, for whatever reason. */
  exited: Promise<number | null>;
}

export class EmbeddedUnavailableError extends Error {}

function binaryPath(): string {
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new EmbeddedUnavailableError(
      `the embedded database only runs on linux-x64 (this is ${process.platform}-${process.arch}); set MONGODB_URI to a MongoDB 6.0+ replica set`,
    );
  }
  try {
    const pkg = createRequire(import.meta.url).resolve(`${PACKAGE}/package.json`);
    const bin = join(dirname(pkg), "bin", "jongodb");
    if (existsSync(bin)) return bin;
  } catch {
    // fall through to the message below
  }
  throw new EmbeddedUnavailableError(`the embedded database package ${PACKAGE} is not installed; run npm ci, or set MONGODB_URI`);
}

/**
 * The child must never outlive us. `setpriv --pdeathsig` has the kernel kill it when our process
 * dies, even by SIGKILL or a crash; where setpriv is missing we still kill it on every normal exit.
 */
export async function startEmbedded(database: string, timeoutMs = 20_000): Promise<EmbeddedServer> {
  const bin = binaryPath();
  const args = [`--port=0`, `--database=${database}`, "--topology-profile=singleNodeReplicaSet"];
  const useSetpriv = existsSync("/usr/bin/setpriv");
  const child: ChildProcess = useSetpriv
    ? spawn("/usr/bin/setpriv", ["--pdeathsig", "SIGKILL", "--", bin, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    : spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);

  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const uri = await new Promise<string>((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`embedded database did not start within ${timeoutMs} ms: ${err.slice(-500)}`));
    }, timeoutMs);
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /JONGODB_URI=(\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      err = (err + chunk.toString()).slice(-4000);
    });
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`embedded database exited with code ${code}: ${err.slice(-500)}`));
    });
  });
  // Keep draining output so a chatty child never blocks on a full pipe.
  child.stdout?.resume();
  child.stderr?.resume();

  return {
    uri,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        // A stopped (SIGSTOP) or wedged child never acts on SIGTERM; SIGKILL works on both.
        const timer = setTimeout(() => child.kill("SIGKILL"), 1000);
        await exited;
        clearTimeout(timer);
      }
      // Only now: a process that exits while stop() waits must still take the child with it.
      process.removeListener("exit", killOnExit);
    },
  };
}
