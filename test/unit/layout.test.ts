// The layout rules of the source tree (.dependency-cruiser.cjs, docs/architecture.md): a wrong import or a cycle between folders fails the suite.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { cruise, type ICruiseResult, type IConfiguration } from "dependency-cruiser";
import { describe, expect, it } from "vitest";

const rules = createRequire(import.meta.url)("../../.dependency-cruiser.cjs") as IConfiguration;

async function cruiseSource(): Promise<ICruiseResult> {
  const tsConfig = JSON.parse(readFileSync("tsconfig.json", "utf8")) as object;
  const result = await cruise(["src"], { validate: true, ruleSet: rules, ...rules.options }, undefined, { tsConfig });
  return result.output as ICruiseResult;
}

/** The folder a module belongs to for the layering: src/<top>, or src/<top>/<name> under platform, features and providers. */
function folderOf(path: string): string {
  const parts = path.split("/");
  const nested = ["platform", "features", "providers"].includes(parts[1]) && parts.length > 3;
  return parts.slice(0, nested ? 3 : 2).join("/").replace(/\.ts$/, "");
}

/** A cycle in the graph of folders, as the list of folders along it, or undefined. */
function folderCycle(edges: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === "done") return undefined;
    if (state.get(node) === "open") return [...path.slice(path.indexOf(node)), node];
    state.set(node, "open");
    path.push(node);
    for (const next of edges.get(node) ?? []) {
      const found = visit(next);
      if (found) return found;
    }
    path.pop();
    state.set(node, "done");
    return undefined;
  };
  for (const node of edges.keys()) {
    const found = visit(node);
    if (found) return found;
  }
  return undefined;
}

describe("source layout", () => {
  it("every import follows the layering rules and no folder imports another that imports it back", async () => {
    const result = await cruiseSource();
    const violations = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(" -> ")})` : ""}`);
    expect(violations).toEqual([]);
    const edges = new Map<string, Set<string>>();
    for (const m of result.modules) {
      if (!m.source.startsWith("src/")) continue;
      const from = folderOf(m.source);
      for (const d of m.dependencies) {
        if (!d.resolved.startsWith("src/")) continue;
        const to = folderOf(d.resolved);
        if (to === from) continue;
        if (!edges.has(from)) edges.set(from, new Set());
        edges.get(from)!.add(to);
      }
    }
    expect(edges.size).toBeGreaterThan(10);
    expect(folderCycle(edges)).toBeUndefined();
  }, 60_000);

  it("bookings are written only by src/features/bookings/writes.ts (and the outbox clears what it planned), so no write path can forget a duty", () => {
    const writes = /\bBooking(?:Cell)?Model\.(?:updateOne|updateMany|insertMany|create|findOneAndUpdate|findByIdAndUpdate|replaceOne|deleteOne|deleteMany|bulkWrite|collection\.(?:insert|update|delete|replace|bulkWrite))/;
    const allowed = new Set(["src/features/bookings/writes.ts", "src/outbox/relay.ts"]);
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (path.endsWith(".ts") && !allowed.has(path) && writes.test(readFileSync(path, "utf8"))) offenders.push(path);
      }
    };
    walk("src");
    expect(offenders).toEqual([]);
  });
});
