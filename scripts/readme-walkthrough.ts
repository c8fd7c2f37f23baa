// Runs the README's walk-through against a fresh server, command by command as a reader pastes them, and checks every answer it shows.
/*
 * Usage: node --import tsx scripts/readme-walkthrough.ts [README.md]      (exit 0: every shown answer matched)
 *
 * What is run. The ```sh blocks between `<!-- walkthrough -->` and `<!-- /walkthrough -->` (there may be several
 * such regions), in order; everything else in the README (a CalDAV server, a picture file, grpcurl) is left to
 * the reader. Inside those blocks:
 *   - `ENV=value ... npm start` starts the server: the script starts one itself, on a free port, on a fresh
 *     embedded database, with that line's environment. `npm ci` and `npm test` lines are skipped.
 *   - `NAME=<path from the answer>` is a value the reader copies from the last answer; the script takes `path`
 *     (`data.api_key`, `data.slots[0].start_time`) from it and sets the shell variable.
 *   - `# → 201 {...}`, `# → 200 "message"` or `# → 409` (continued on following `#` lines while brackets are
 *     open) is the answer of the command before it: the HTTP status, then either the envelope's message or a
 *     JSON pattern. In the pattern `…` stands for fields or array elements left out, a value `"…"` or
 *     `"<anything>"` for any value, and `$NAME` inside a string for that shell variable's value. Fields shown
 *     must match; fields not shown are not checked; an array without a trailing `…` must have exactly the
 *     elements shown. Every curl must have its answer shown.
 *   - Any other `#` line is prose. Every other line is a shell command (continued by a trailing `\` or an
 *     open quote), run in one bash process as if pasted into a terminal, so variables carry over. `curl` is a
 *     shell function there that sends `localhost:8080` to the script's server and reports the HTTP status.
 *     A command other than curl must exit 0.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { whenListening } from "../test/helpers/listening.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const README_HOST = "localhost:8080";
const UNSHOWN = "a curl whose answer the README does not show (`# → <status> ...` on the next line)";

export type Step =
  | { kind: "start"; line: number; env: Record<string, string> }
  | { kind: "command"; line: number; text: string }
  | { kind: "capture"; line: number; name: string; path: string }
  | { kind: "expect"; line: number; status: number; message?: string; pattern?: string };

/** The walk-through's steps, in order, with their README line numbers. */
export function parseWalkthrough(readme: string): Step[] {
  const lines = readme.split("\n");
  const steps: Step[] = [];
  let inRegion = false;
  let inShell = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const trimmed = line.trim();
    if (trimmed === "<!-- walkthrough -->") inRegion = true;
    else if (trimmed === "<!-- /walkthrough -->") inRegion = false;
    if (!inRegion) continue;
    if (trimmed.startsWith("```")) {
      inShell = !inShell && trimmed === "```sh";
      continue;
    }
    if (!inShell || trimmed === "") continue;
    const lineNo = i + 1;

    const expectation = /^#\s*→\s*(\d{3})\s*(.*)$/.exec(trimmed);
    if (expectation) {
      let rest = expectation[2].trim();
      // A JSON pattern continues on the next `#` lines until its brackets close.
      while (rest.startsWith("{") || rest.startsWith("[")) {
        if (bracketDepth(rest) === 0 || i + 1 >= lines.length || !lines[i + 1].trim().startsWith("#")) break;
        rest += lines[++i].trim().replace(/^#\s?/, "");
      }
      const status = Number(expectation[1]);
      if (rest === "") steps.push({ kind: "expect", line: lineNo, status });
      else if (rest.startsWith('"')) steps.push({ kind: "expect", line: lineNo, status, message: JSON.parse(rest.replace(/\s+#.*$/, "")) as string });
      else steps.push({ kind: "expect", line: lineNo, status, pattern: rest });
      continue;
    }
    if (trimmed.startsWith("#")) continue;
    const capture = /^(?:export\s+)?([A-Za-z_]\w*)=<(\S+) from the answer>\s*(?:#.*)?$/.exec(trimmed);
    if (capture) {
      steps.push({ kind: "capture", line: lineNo, name: capture[1], path: capture[2] });
      continue;
    }
    const start = /^((?:[A-Z_]+=\S+\s+)*)npm start$/.exec(trimmed);
    if (start) {
      const env = Object.fromEntries(start[1].trim().split(/\s+/).filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
      steps.push({ kind: "start", line: lineNo, env });
      continue;
    }
    if (/^npm (ci|test)\b/.test(trimmed)) continue;
    let text = line;
    while ((text.endsWith("\\") || openQuote(text)) && i + 1 < lines.length) text += `\n${lines[++i]}`;
    steps.push({ kind: "command", line: lineNo, text });
  }
  return steps;
}

/** Unclosed `{`/`[` outside JSON strings. */
function bracketDepth(text: string): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
  }
  return depth;
}

/** Whether a shell line leaves a single or double quote open (so the command goes on on the next line). */
function openQuote(text: string): boolean {
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === null) {
      if (c === "#" && (i === 0 || /\s/.test(text[i - 1]))) return false;
      if (c === "\\") i++;
      else if (c === "'" || c === '"') quote = c;
    } else if (c === quote) quote = null;
    else if (quote === '"' && c === "\\") i++;
  }
  return quote !== null;
}

/** A shown answer as JSON: a bare `…` becomes `"…": "…"` in an object and `"…"` in an array. */
export function patternToJson(pattern: string): unknown {
  let out = "";
  const stack: string[] = [];
  let inString = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (inString) {
      out += c;
      if (c === "\\") out += pattern[++i];
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") stack.push(c);
    else if (c === "}" || c === "]") stack.pop();
    if (c === "…") {
      out += stack.at(-1) === "{" ? '"…":"…"' : '"…"';
      continue;
    }
    out += c;
  }
  return JSON.parse(out);
}

/** Where `actual` differs from the shown pattern; empty when it matches. */
export function mismatches(actual: unknown, pattern: unknown, vars: Record<string, string>, at = "answer"): string[] {
  if (typeof pattern === "string") {
    if (pattern === "…" || /^<[^>]*>$/.test(pattern)) return actual === undefined ? [`${at}: missing`] : [];
    const wanted = pattern.replace(/\$([A-Za-z_]\w*)/g, (m, name: string) => vars[name] ?? m);
    return actual === wanted ? [] : [`${at}: ${JSON.stringify(actual)}, README shows ${JSON.stringify(wanted)}`];
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(actual)) return [`${at}: ${JSON.stringify(actual)} is not an array`];
    const open = pattern.at(-1) === "…";
    const shown = open ? pattern.slice(0, -1) : pattern;
    if (open ? actual.length < shown.length : actual.length !== shown.length) {
      return [`${at}: ${actual.length} elements, README shows ${shown.length}${open ? " or more" : ""}`];
    }
    return shown.flatMap((p, i) => mismatches(actual[i], p, vars, `${at}[${i}]`));
  }
  if (pattern !== null && typeof pattern === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return [`${at}: ${JSON.stringify(actual)} is not an object`];
    return Object.entries(pattern)
      .filter(([k]) => k !== "…")
      .flatMap(([k, p]) => (k in actual ? mismatches((actual as Record<string, unknown>)[k], p, vars, `${at}.${k}`) : [`${at}.${k}: missing`]));
  }
  return actual === pattern ? [] : [`${at}: ${JSON.stringify(actual)}, README shows ${JSON.stringify(pattern)}`];
}

/** `data.slots[0].start_time` of a parsed answer. */
function pick(value: unknown, path: string): unknown {
  let current = value;
  for (const part of path.match(/[^.[\]]+/g) ?? []) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

const shellQuote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

/** The service as `npm start` runs it, on a free port and a fresh embedded database. */
async function startService(env: Record<string, string>): Promise<{ port: number; child: ChildProcess; logs: () => string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/app/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: "0", HOST: "127.0.0.1", MONGODB_URI: "" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const { port, output } = await whenListening(child, [child.stderr!], 60_000, "the server");
  return { port, child, logs: output };
}

/** One bash process the commands are pasted into, as into a terminal. */
class Shell {
  private readonly child: ChildProcess;
  private buffer = "";
  private waiting: ((result: { out: string; status: number }) => void) | undefined;
  private count = 0;

  constructor(port: number) {
    this.child = spawn("bash", ["--norc", "--noprofile"], { cwd: ROOT, env: { ...process.env, PATH: process.env.PATH ?? "" }, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout!.on("data", (chunk: Buffer) => this.read(chunk.toString()));
    this.child.stderr!.on("data", (chunk: Buffer) => this.read(chunk.toString()));
    // The README's address goes to this run's server; -w adds the HTTP status after the body; -q (first) keeps a
    // reader's ~/.curlrc out of it.
    this.child.stdin!.write(
      `curl() { local args=("\${@//${README_HOST}/127.0.0.1:${port}}"); command curl -q --max-time 30 -w '\\n@@HTTP %{http_code}\\n' "\${args[@]}"; }\n`,
    );
  }

  private read(text: string): void {
    this.buffer += text;
    const m = /@@DONE (\d+) (\d+)@@\n/.exec(this.buffer);
    if (m && this.waiting) {
      const out = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      const done = this.waiting;
      this.waiting = undefined;
      done({ out, status: Number(m[2]) });
    }
  }

  /** What the command printed and its exit status. */
  run(command: string): Promise<{ out: string; status: number }> {
    this.count++;
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.child.stdin!.write(`${command}\nprintf '\\n@@DONE %s %s@@\\n' ${this.count} $?\n`);
    });
  }

  close(): void {
    this.child.stdin!.end();
  }
}

export interface WalkthroughResult {
  ok: boolean;
  report: string[];
}

/** Runs the walk-through of `readme` and checks every answer it shows. */
export async function runWalkthrough(readme: string, log: (line: string) => void = () => undefined): Promise<WalkthroughResult> {
  const steps = parseWalkthrough(readme);
  const report: string[] = [];
  const fail = (line: number, what: string) => report.push(`README line ${line}: ${what}`);
  const first = steps[0];
  if (first?.kind !== "start") return { ok: false, report: ["the walk-through must begin with its `... npm start` line"] };
  if (!steps.some((s) => s.kind === "expect")) return { ok: false, report: ["the walk-through shows no answers"] };
  const service = await startService(first.env);
  const shell = new Shell(service.port);
  const vars: Record<string, string> = {};
  let last: { line: number; status: number; body: string; json: unknown; checked: boolean } | undefined;
  try {
    for (const step of steps.slice(1)) {
      if (step.kind === "start") {
        fail(step.line, "a second `npm start` in the walk-through");
      } else if (step.kind === "command") {
        const isCurl = /^\s*curl\b/.test(step.text);
        // A reader sees every curl's answer next to it; one the README does not show is one it does not check.
        if (isCurl && last && !last.checked) fail(last.line, UNSHOWN);
        const { out, status } = await shell.run(step.text);
        const http = /\n?@@HTTP (\d{3})\s*$/.exec(out);
        if (!isCurl) {
          if (out.trim() !== "") log(`  ${out.trim()}`);
          if (status !== 0) fail(step.line, `the command exited with ${status}: ${out.trim().slice(0, 300)}`);
          // A plain assignment: remember its value for `$NAME` in shown answers.
          const assign = /^\s*(?:export\s+)?([A-Za-z_]\w*)=/.exec(step.text);
          if (assign) vars[assign[1]] = (await shell.run(`printf '%s' "$${assign[1]}"`)).out.trim();
          continue;
        }
        if (!http) {
          fail(step.line, `curl gave no answer: ${out.trim().slice(0, 300)}`);
          last = undefined;
          continue;
        }
        const body = out.slice(0, http.index);
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        last = { line: step.line, status: Number(http[1]), body, json, checked: false };
        log(`$ ${step.text.split("\n")[0]}${step.text.includes("\n") ? " …" : ""}\n  ${last.status} ${body.length > 200 ? `${body.slice(0, 200)}…` : body}`);
        if (last.status >= 500) fail(step.line, `answered ${last.status}: ${body.slice(0, 300)}`);
      } else if (step.kind === "capture") {
        const value = last ? pick(last.json, step.path) : undefined;
        if (typeof value !== "string" && typeof value !== "number") {
          fail(step.line, `${step.name}=<${step.path} from the answer>: the answer has no such value (${last ? last.body.slice(0, 300) : "no answer"})`);
          continue;
        }
        vars[step.name] = String(value);
        await shell.run(`${step.name}=${shellQuote(String(value))}`);
      } else {
        if (!last) {
          fail(step.line, "an answer shown without a curl command before it");
          continue;
        }
        last.checked = true;
        const problems: string[] = [];
        if (last.status !== step.status) problems.push(`HTTP ${last.status}, README shows ${step.status}`);
        if (step.message !== undefined) problems.push(...mismatches(pick(last.json, "message"), step.message, vars, "message"));
        if (step.pattern !== undefined) {
          let pattern: unknown;
          try {
            pattern = patternToJson(step.pattern);
          } catch (err) {
            problems.push(`the shown answer is not readable as a pattern (${(err as Error).message}): ${step.pattern}`);
          }
          if (pattern !== undefined) problems.push(...mismatches(last.json, pattern, vars));
        }
        for (const p of problems) fail(step.line, `${p}\n    answer of line ${last.line}: ${last.body.slice(0, 400)}`);
      }
    }
    if (last && !last.checked) fail(last.line, UNSHOWN);
  } finally {
    shell.close();
    service.child.kill("SIGTERM");
  }
  return { ok: report.length === 0, report };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const path = process.argv[2] ?? `${ROOT}README.md`;
  const verbose = process.env.WALKTHROUGH_VERBOSE === "1";
  runWalkthrough(readFileSync(path, "utf8"), verbose ? (l) => console.log(l) : undefined).then(
    ({ ok, report }) => {
      for (const line of report) console.error(line);
      console.log(ok ? `walk-through of ${path}: every shown answer matched` : `walk-through of ${path}: ${report.length} problem(s)`);
      process.exit(ok ? 0 : 1);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
