// How the benchmarks run the service: the node arguments of a package script (the compiled build by default, built first).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * The node arguments of the package script BENCH_SCRIPT (default `start:prod`, the compiled build, which is
 * built first; `start` runs the TypeScript through tsx), or BENCH_SERVICE_ARGS as given.
 */
export function serviceArgs(): string[] {
  if (process.env.BENCH_SERVICE_ARGS) return process.env.BENCH_SERVICE_ARGS.split(" ");
  const script = process.env.BENCH_SCRIPT ?? "start:prod";
  const command = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts[script];
  if (!command?.startsWith("node ")) throw new Error(`package script ${script} must be a node command, got ${command}`);
  if (script === "start:prod") {
    const build = spawnSync("npm", ["run", "build"], { cwd: ROOT, stdio: "inherit" });
    if (build.status !== 0) throw new Error("npm run build failed");
  }
  return command.slice("node ".length).split(" ");
}
