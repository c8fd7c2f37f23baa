// A calendar reader thread (started by icalPool.ts): loads the reader (icalRead.ts), then lowers its own CPU priority for the reads it does.
import { readlinkSync } from "node:fs";
import os from "node:os";

// Loaded at the thread's normal priority: warming the pool while the service starts (src/app/main.ts) takes a fair
// share of a busy machine, not only what every other process leaves (at nice 10 a start under load took over 15 s).
await import("./icalRead.js");

/**
 * This thread yields the CPU to the one answering requests (nice 10): on a machine short of cores, /healthz and
 * every other host's call go first and a calendar's computation waits. Linux names a thread in /proc/thread-self;
 * elsewhere the thread keeps the process's priority.
 */
try {
  os.setPriority(Number(readlinkSync("/proc/thread-self").split("/").pop()), 10);
} catch {
  // Not Linux, or not allowed: same priority as the service.
}
