// The README and docs/ pasted in order work: scripts/readme-walkthrough.ts runs their walk-through on a fresh server and checks every shown answer; their links and file names resolve.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { mismatches, parseWalkthrough, patternToJson, walkthroughFiles } from "../../scripts/readme-walkthrough.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** README.md and every page of docs/, by their path from the repository's root. */
const PAGES = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const read = (page: string) => readFileSync(join(ROOT, page), "utf8");

/** Runs the script as `npm run walkthrough` does (no arguments: README.md and docs/); its exit code and everything it printed. */
function runScript(...paths: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/readme-walkthrough.ts", ...paths], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.once("exit", (code) => resolve({ code, output }));
  });
}

describe("the walk-through of the README and docs/", () => {
  it("passes: every command runs and every answer shown matches, on a fresh server", async () => {
    const { code, output } = await runScript();
    expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining("every shown answer matched") });
    expect(output).toContain(`walk-through of ${walkthroughFiles().join(", ")}:`);
  }, 300_000);

  it("runs README.md first, and every page of docs/ that has a walk-through", () => {
    const files = walkthroughFiles();
    expect(files.slice(0, 2)).toEqual(["README.md", "docs/tour.md"]);
    expect(files).toEqual(expect.arrayContaining(PAGES.filter((page) => read(page).includes("<!-- walkthrough -->"))));
  });

  it("covers the walk-through from the account to the import, and shows answers throughout", () => {
    const steps = walkthroughFiles().flatMap((file) => parseWalkthrough(read(file), file));
    expect(steps[0]).toEqual({ kind: "start", file: "README.md", line: expect.any(Number), env: { ADMIN_TOKEN: "dev-admin-token" } });
    const captured = steps.flatMap((s) => (s.kind === "capture" ? [s.name] : []));
    expect(captured).toEqual(expect.arrayContaining(["KEY", "QUESTION_ID", "EVENT_ID", "ENTRY_ID", "CLONE_ID", "START", "PRIVATE_KEY", "BOOKING_ID"]));
    const commands = steps.filter((s) => s.kind === "command" && /^\s*curl\b/.test(s.text)).length;
    const answers = steps.filter((s) => s.kind === "expect").length;
    expect(commands).toBeGreaterThan(35);
    // Every curl of the walk-through has its answer shown.
    expect(answers).toBe(commands);
  });

  it("fails, naming the file and line, when an answer shown is not what the service says", async () => {
    const dir = mkdtempSync(join(tmpdir(), "readme-"));
    const path = join(dir, "README.md");
    const next = join(dir, "next.md");
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
        "GREETING=hello",
        "```",
        "<!-- /walkthrough -->",
      ].join("\n"),
    );
    // The next file goes on in the same session: the same shell (GREETING is set) and the same server.
    writeFileSync(
      next,
      [
        "<!-- walkthrough -->",
        "```sh",
        'test "$GREETING" = hello',
        "curl -s localhost:8080/healthz",
        '# → 503 {"status":"ok"}',
        "ADMIN_TOKEN=y npm start",
        // Any command's localhost:8080 is this run's server, a program's written by a here-document too; the shell
        // starts outside the repository, and knows where the clone is when the text asks the reader for it.
        "CLONE=<where you cloned this repository>",
        'test -f "$CLONE/package.json" && test ! -e package.json && test "${PWD#"$CLONE"}" = "$PWD"',
        "cat > probe.sh <<'EOF'",
        "curl -s localhost:8080/healthz",
        "EOF",
        `test "$(bash probe.sh)" = '{"status":"ok"}'`,
        "curl -s -o /dev/null localhost:8080/healthz",
        "# → 200",
        "```",
        "<!-- /walkthrough -->",
      ].join("\n"),
    );
    const { code, output } = await runScript(path, next);
    expect(code).toBe(1);
    expect(output).toContain(`${path} line 5: answer.status: "ok", the text shows "down"`);
    expect(output).toContain(`${path} line 7: HTTP 401, the text shows 200`);
    expect(output).toContain(`${path} line 8: a curl whose answer the text does not show`);
    expect(output).toContain(`${path} line 9: the command exited with 1`);
    expect(output).not.toContain(`${next} line 3:`);
    expect(output).toContain(`${next} line 5: HTTP 200, the text shows 503`);
    expect(output).toContain(`${next} line 6: a second \`npm start\``);
    expect(output).toContain(`walk-through of ${path}, ${next}: 7 problem(s)`);
  }, 120_000);

  it("names the package of every npx command (`npx --package=@bufbuild/buf buf`): outside the clone a bare `npx buf` installs whatever the registry calls buf", () => {
    // Prose may warn about "a bare `npx buf`"; every other npx names its package.
    const bare = [...PAGES, "clients/typescript/README.md", "clients/python/README.md"].flatMap((page) =>
      read(page)
        .split("\n")
        .flatMap((line, i) => [...line.matchAll(/(?<!bare `)\bnpx\s+(?!--package=)\S+/g)].map((m) => `${page}:${i + 1}: ${m[0]}`)),
    );
    expect(bare).toEqual([]);
  });

  it("shows no answer (`# → ...`) outside a walk-through region, where nothing would check it", () => {
    const unchecked = PAGES.flatMap((page) => {
      let inRegion = false;
      return read(page)
        .split("\n")
        .flatMap((line, i) => {
          if (line.trim() === "<!-- walkthrough -->") inRegion = true;
          if (line.trim() === "<!-- /walkthrough -->") inRegion = false;
          return !inRegion && /^\s*#\s*→/.test(line) ? [`${page}:${i + 1}`] : [];
        });
    });
    expect(unchecked).toEqual([]);
  });
});

/** GitHub's anchor of a heading: lowercased, punctuation dropped, spaces as hyphens (a repeated one gets -1, -2, ...). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence = false;
  for (const line of markdown.split("\n")) {
    if (line.trimStart().startsWith("```")) fence = !fence;
    const heading = fence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1].replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const slug = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

describe("the README and docs/ as pages", () => {
  it("name only files that are in the repository (no spec files from elsewhere)", () => {
    const missing = PAGES.flatMap((page) => {
      // A recipe step names the file the reader is to write (docs/calendars-and-meetings.md "Adding a calendar provider").
      const named = [...read(page).replace(/<!-- recipe file: \S+ -->/g, "").matchAll(/(?<![\w:./-])[\w./-]+\.(?:md|ts|yaml|json|py)\b/g)].map((m) => m[0]).filter((f) => f.includes("/") || f.endsWith(".md"));
      // A path in code is named from the repository's root; a link from the page's own folder.
      return [...new Set(named)]
        .filter((f) => !f.startsWith("http") && !f.startsWith("/") && !f.startsWith("buf.gen.go") && !f.startsWith("buf.gen.java"))
        .filter((f) => !existsSync(join(ROOT, f)) && !existsSync(join(ROOT, dirname(page), f)))
        .map((f) => `${page}: ${f}`);
    });
    expect(missing).toEqual([]);
  });

  it("link only to files and headings that exist", () => {
    const broken = PAGES.flatMap((page) =>
      [...read(page).matchAll(/\]\(([^)\s]+)\)/g)]
        .map((m) => m[1])
        .filter((target) => !/^[a-z]+:/.test(target))
        .flatMap((target) => {
          const [file, anchor] = target.split("#");
          const path = file === "" ? join(ROOT, page) : join(ROOT, dirname(page), file);
          if (!existsSync(path)) return [`${page}: ${target} (no such file)`];
          if (anchor !== undefined && (!path.endsWith(".md") || !anchors(readFileSync(path, "utf8")).has(anchor))) return [`${page}: ${target} (no such heading)`];
          return [];
        }),
    );
    expect(broken).toEqual([]);
  });

  it("start each page of docs/ with its title and a one-line summary", () => {
    const unsummarised = PAGES.filter((page) => page.startsWith("docs/")).filter((page) => {
      const [title, blank, summary, after] = read(page).split("\n");
      return !/^# \S/.test(title) || blank !== "" || !summary?.trim() || /^[#<`|!-]/.test(summary) || after !== "";
    });
    expect(unsummarised).toEqual([]);
  });
});

describe("the shown-answer patterns", () => {
  it("read … as fields or elements left out, and check the rest", () => {
    const pattern = patternToJson('{"data":{"id":"…","list":[1,…],"exact":[1]},…}');
    expect(mismatches({ data: { id: "x", list: [1, 2, 3], exact: [1], more: true }, status: 200 }, pattern, {})).toEqual([]);
    expect(mismatches({ data: { id: "x", list: [2], exact: [1, 2] } }, pattern, {})).toEqual([
      "answer.data.list[0]: 2, the text shows 1",
      "answer.data.exact: 2 elements, the text shows 1",
    ]);
    expect(mismatches({ data: { list: [1], exact: [1] } }, pattern, {})).toEqual(["answer.data.id: missing"]);
    expect(mismatches({ start: "2026-12-01T09:00:00.000Z" }, patternToJson('{"start":"$START"}'), { START: "2026-12-01T09:00:00.000Z" })).toEqual([]);
  });
});
