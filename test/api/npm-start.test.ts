// `npm start` for real: a signal to the npm process stops the service and its embedded database, and so does npm dying outright.
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { whenListening } from "../helpers/listening.js";
import { commandOf, descendantsOf, isAlive } from "../helpers/processes.js";
import { ADMIN_TOKEN } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

interface NpmStart {
  npm: ChildProcess;
  port: number;
  /** The processes npm started (the shell if any, node, setpriv, jongodb), seen once the service listened. */
  below: number[];
  exited: Promise<void>;
}

let started: NpmStart | undefined;

async function npmStart(): Promise<NpmStart> {
  const npm = spawn(NPM, ["start"], {
    cwd: ROOT,
    // The embedded database, whatever MONGODB_URI the run has: its process must go too.
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", ADMIN_TOKEN, MONGODB_URI: "", DATA_DIR: "none" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((resolve) => npm.once("exit", () => resolve()));
  const { port } = await whenListening(npm, [npm.stdout!, npm.stderr!], 60_000, "npm start");
  const below = descendantsOf(npm.pid!);
  started = { npm, port, below, exited };
  return started;
}

/** Whether something accepts a TCP connection on the port. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Waits until none of `pids` runs and the port refuses connections; fails with what still runs when time is up. */
function waitForAllGone(pids: number[], port: number, ms: number): Promise<{ running: string[]; portAnswers: boolean }> {
  const look = async () => ({ running: pids.filter(isAlive).map((pid) => `${pid} ${commandOf(pid)}`), portAnswers: await answers(port) });
  return until("npm, the service and its database gone, the port closed", look, { timeoutMs: ms, everyMs: 200, accept: (s) => s.running.length === 0 && !s.portAnswers });
}

afterEach(() => {
  // Whatever a failed test left: only the processes this test started.
  for (const pid of started?.below ?? []) if (isAlive(pid)) process.kill(pid, "SIGKILL");
  if (started?.npm.exitCode === null) started.npm.kill("SIGKILL");
  started = undefined;
});

describe("npm start", () => {
  it("stops the service and the embedded database when npm gets SIGTERM", async () => {
    const { npm, port, below, exited } = await npmStart();
    const commands = below.map(commandOf);
    expect(commands.some((c) => c.includes("src/app/main.ts")), commands.join(" | ")).toBe(true);
    expect(commands.some((c) => c.includes("jongodb")), commands.join(" | ")).toBe(true);
    expect(await answers(port)).toBe(true);

    process.kill(npm.pid!, "SIGTERM");
    expect(await waitForAllGone(below, port, 20_000)).toEqual({ running: [], portAnswers: false });
    await exited;
    // npm waited for the service, which shut down cleanly.
    expect(npm.exitCode).toBe(0);
  });

  it("stops them when npm dies without passing anything on (SIGKILL)", async () => {
    const { npm, port, below } = await npmStart();
    process.kill(npm.pid!, "SIGKILL");
    expect(await waitForAllGone(below, port, 20_000)).toEqual({ running: [], portAnswers: false });
  });
});
