// A database of the test's own (the embedded jongodb binary on a chosen port), for servers started with MONGODB_URI: shared by replicas, killed and restarted by fault tests.
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import net from "node:net";
import { dirname, join } from "node:path";

export interface TestDatabase {
  /** For MONGODB_URI; asks the driver for polling heartbeats, which is all jongodb speaks. */
  uri: string;
  port: number;
  child: ChildProcess;
  /** SIGKILL, as a crash or a pulled plug would end it; resolves once the process is gone. */
  kill(): Promise<void>;
}

const BIN = join(dirname(createRequire(import.meta.url).resolve("@jongodb/memory-server-bin-linux-x64-gnu/package.json")), "bin", "jongodb");

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** A jongodb address for the driver: polling heartbeats, which is all jongodb speaks. */
export function pollingUri(uri: string): string {
  return `${uri}${uri.includes("?") ? "&" : "?"}serverMonitoringMode=poll`;
}

export async function startDatabase(port?: number, timeoutMs = 20_000): Promise<TestDatabase> {
  const p = port ?? (await freePort());
  const child = spawn(BIN, [`--port=${p}`, "--database=scheduling", "--topology-profile=singleNodeReplicaSet"], { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const uri = await new Promise<string>((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => reject(new Error(`jongodb did not start in ${timeoutMs} ms: ${err}`)), timeoutMs);
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /JONGODB_URI=(\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.stderr!.on("data", (c: Buffer) => (err = (err + c.toString()).slice(-2000)));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`jongodb exited with ${code}: ${err}`));
    });
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return {
    uri: pollingUri(uri),
    port: p,
    child,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
