// Waits for a starting service's `listening` log line and reads its port, for everything that starts the real service as a process.
import type { ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";

export interface Listening {
  port: number;
  /** Everything read from the streams so far (and on, as they keep being read). */
  output(): string;
}

/**
 * Resolves with the port of the first `"msg":"listening"` line on any of `streams`; rejects when `child` exits
 * first or `timeoutMs` passes, with what was read so far.
 */
export function whenListening(child: ChildProcess, streams: Readable[], timeoutMs: number, what = "server"): Promise<Listening> {
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start in ${timeoutMs} ms:\n${output}`)), timeoutMs);
    for (const stream of streams) {
      stream.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        const m = /"msg":"listening".*?"port":(\d+)/.exec(output);
        if (m) {
          clearTimeout(timer);
          resolve({ port: Number(m[1]), output: () => output });
        }
      });
    }
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code} before listening:\n${output}`));
    });
  });
}
