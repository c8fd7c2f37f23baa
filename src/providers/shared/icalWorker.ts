// A calendar reader thread (started by icalPool.ts): lowers its own CPU priority first, then loads the reader (icalRead.ts), so even loading ical.js yields to the thread that answers requests.
import { readlinkSync } from "node:fs";
import os from "node:os";

/**
 * This thread yields the CPU to the one answering requests (nice 10): on a machine short of cores, /healthz and
 * every other host's call go first and a calendar's computation waits. Linux names a thread in /proc/thread-self;
 * elsewhere the thread keeps the process's priority. Done before the reader's modules load: a pool warming up
 * while the service starts (src/app/main.ts) takes only what the start leaves.
 */
try {
  os.setPriority(Number(readlinkSync("/proc/thread-self").split("/").pop()), 10);
} catch {
  // Not Linux, or not allowed: same priority as the service.
}

await import("./icalRead.js");
