// Where a process's busy time went, from a V8 .cpuprofile (node --cpu-prof): self time by function and by package or source folder, as bench/RESULTS.md summarizes it.
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** What a script's URL belongs to: an npm package, a folder of ours (dist/src/platform/rest → src/platform/rest), Node's own code. */
function areaOf(url: string): string {
  if (url === "") return "(V8 / native)";
  if (url.startsWith("node:")) return "node internals";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const ours = /\/((?:src|gen)\/.*)\/[^/]+$/.exec(url);
  return ours ? ours[1] : url;
}

/** Self time by function and by area, in % of the busy time (samples outside "(idle)"), the top `top` of each. */
export function summarizeProfile(path: string, top = 25): string {
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === "(idle)") continue;
    busy += us;
    const file = url.replace(/^.*\/(node_modules|dist|src|gen)\//, "$1/");
    const key = `${functionName || "(anonymous)"} ${file ? `${file}:${lineNumber + 1}` : ""}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const area = functionName.startsWith("(") ? functionName : areaOf(url);
    byArea.set(area, (byArea.get(area) ?? 0) + us);
  }
  const table = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `| ${((100 * us) / busy).toFixed(1)}% | ${k} |`)
      .join("\n");
  return [
    `busy ${(busy / 1e6).toFixed(1)} s of CPU`,
    `| self | by package or folder |\n|---:|---|\n${table(byArea)}`,
    `| self | by function |\n|---:|---|\n${table(byFunction)}`,
  ].join("\n\n");
}

/**
 * Stops the service that runs with --cpu-prof into `dir` (its profiles are written as it exits) and summarizes its
 * main thread's: the largest profile, since its worker threads (the calendar readers) write theirs beside it.
 */
export async function stopAndSummarize(child: ChildProcess, dir: string): Promise<string> {
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
  const profiles = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
  const main = profiles.sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0];
  return main ? `\nCPU profile of the service (${join(dir, main)}):\n${summarizeProfile(join(dir, main))}` : "\nno CPU profile written";
}

if (process.argv[1]?.endsWith("profile.ts") && process.argv[2]) console.log(summarizeProfile(process.argv[2], Number(process.argv[3] ?? 25)));
