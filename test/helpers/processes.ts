// Processes seen through /proc: children, descendants, whether one still runs and what it runs; for tests that must leave no process behind.
import { readFileSync, readdirSync } from "node:fs";

/** The fields of a /proc stat file after the parenthesised command name (which may hold spaces): state, ppid, ... */
function statFields(path: string): string[] {
  const stat = readFileSync(path, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** Direct children of `pid`, from /proc (each process's stat names its parent). */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const [, ppid] = statFields(`/proc/${entry}/stat`);
      if (Number(ppid) === pid) out.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/** Every process below `pid`: children, their children, and so on. */
export function descendantsOf(pid: number): number[] {
  const out: number[] = [];
  for (const child of childrenOf(pid)) out.push(child, ...descendantsOf(child));
  return out;
}

/** Alive means present and not a zombie (a zombie has ended and only waits to be reaped). */
export function isAlive(pid: number): boolean {
  try {
    return statFields(`/proc/${pid}/stat`)[0] !== "Z";
  } catch {
    return false;
  }
}

export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/**
 * Whether every thread of `pid` is stopped (SIGSTOP). kill() returns before a thread that is busy in the kernel
 * has stopped, so a test that freezes a process waits for this before it counts on the freeze.
 */
export function isStopped(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).every((tid) => /^[Tt]$/.test(statFields(`/proc/${pid}/task/${tid}/stat`)[0]));
  } catch {
    return false;
  }
}
