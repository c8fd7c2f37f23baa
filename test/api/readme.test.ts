// The README pasted in order works: scripts/readme-walkthrough.ts runs its walk-through on a fresh server and checks every shown answer.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { mismatches, parseWalkthrough, patternToJson } from "../../scripts/readme-walkthrough.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** Runs the script as `npm run walkthrough` does; its exit code and everything it printed. */
function runScript(readmePath: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/readme-walkthrough.ts", readmePath], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.once("exit", (code) => resolve({ code, output }));
  });
}

describe("the README walk-through", () => {
  it("passes: every command runs and every answer shown matches, on a fresh server", async () => {
    const { code, output } = await runScript(join(ROOT, "README.md"));
    expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining("every shown answer matched") });
  }, 120_000);

  it("covers the walk-through from the account to the import, and shows answers throughout", () => {
    const steps = parseWalkthrough(README);
    expect(steps[0]).toEqual({ kind: "start", line: expect.any(Number), env: { ADMIN_TOKEN: "dev-admin-token" } });
    const captured = steps.flatMap((s) => (s.kind === "capture" ? [s.name] : []));
    expect(captured).toEqual(expect.arrayContaining(["KEY", "QUESTION_ID", "EVENT_ID", "ENTRY_ID", "CLONE_ID", "START", "PRIVATE_KEY", "BOOKING_ID"]));
    const commands = steps.filter((s) => s.kind === "command" && /^\s*curl\b/.test(s.text)).length;
    const answers = steps.filter((s) => s.kind === "expect").length;
    expect(commands).toBeGreaterThan(35);
    // Every curl of the walk-through has its answer shown.
    expect(answers).toBe(commands);
  });

  it("fails, naming the README line, when an answer shown is not what the service says", async () => {
    const dir = mkdtempSync(join(tmpdir(), "readme-"));
    const path = join(dir, "README.md");
    writeFileSync(
      path,
      [
        "<!-- walkthrough -->",
        "```sh",
        "ADMIN_TOKEN=x npm start",
        "curl -s localhost:8080/healthz",
        '# → 200 {"status":"down"}',
        "curl -s localhost:8080/api/v1/user",
        '# → 200 "user details"',
        "curl -s localhost:8080/api/v1/events",
        "false",
        "curl -s localhost:8080/healthz",
        '# → 200 {"status":"ok"}',
        "```",
        "<!-- /walkthrough -->",
      ].join("\n"),
    );
    const { code, output } = await runScript(path);
    expect(code).toBe(1);
    expect(output).toContain('README line 5: answer.status: "ok", README shows "down"');
    expect(output).toContain("README line 7: HTTP 401, README shows 200");
    expect(output).toContain("README line 8: a curl whose answer the README does not show");
    expect(output).toContain("README line 9: the command exited with 1");
  }, 120_000);

  it("names only files that are in the repository (no spec files from elsewhere)", () => {
    const named = [...README.matchAll(/(?<![\w:./-])[\w./-]+\.(?:md|ts|yaml|json|py)\b/g)].map((m) => m[0]).filter((f) => f.includes("/") || f.endsWith(".md"));
    const missing = [...new Set(named)].filter((f) => !f.startsWith("http") && !f.startsWith("/") && !f.startsWith("buf.gen.go") && !f.startsWith("buf.gen.java") && !existsSync(join(ROOT, f)));
    expect(missing).toEqual([]);
  });
});

describe("the shown-answer patterns", () => {
  it("read … as fields or elements left out, and check the rest", () => {
    const pattern = patternToJson('{"data":{"id":"…","list":[1,…],"exact":[1]},…}');
    expect(mismatches({ data: { id: "x", list: [1, 2, 3], exact: [1], more: true }, status: 200 }, pattern, {})).toEqual([]);
    expect(mismatches({ data: { id: "x", list: [2], exact: [1, 2] } }, pattern, {})).toEqual([
      "answer.data.list[0]: 2, README shows 1",
      "answer.data.exact: 2 elements, README shows 1",
    ]);
    expect(mismatches({ data: { list: [1], exact: [1] } }, pattern, {})).toEqual(["answer.data.id: missing"]);
    expect(mismatches({ start: "2026-12-01T09:00:00.000Z" }, patternToJson('{"start":"$START"}'), { START: "2026-12-01T09:00:00.000Z" })).toEqual([]);
  });
});
