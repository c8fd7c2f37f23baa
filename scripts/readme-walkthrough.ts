// Runs the walk-through of README.md and docs/*.md against a fresh server, command by command as a reader pastes them, and checks every answer it shows.
/*
 * Usage: node --import tsx scripts/readme-walkthrough.ts [FILE.md ...]      (exit 0: every shown answer matched)
 *
 * Which files, in which order. Without arguments: README.md, then docs/tour.md, then every other docs/*.md that
 * has a walk-through region, by file name (`walkthroughFiles`). With arguments: those files, in the order given.
 * The files are one session, as a reader who pastes the README's tour and goes on with the docs: one server (started
 * by the first file's `npm start` line) and one shell, so a variable set in one file is there in the next. The shell
 * is the reader's "second terminal", opened anywhere: it starts in an empty directory outside the repository (its
 * own TMPDIR, removed at the end, so `mktemp -d` stays inside it), without what an `npm run` around it says
 * about its package and folder, and answering yes when npx asks to install the package it names (`npx --package=@bufbuild/buf buf curl`, fetched from the npm registry outside a clone).
 *
 * What is run. The ```sh blocks between `<!-- walkthrough -->` and `<!-- /walkthrough -->` (there may be several
 * such regions in a file), in order; everything else (a CalDAV server, a picture file, grpcurl) is left to the
 * reader. Inside those blocks:
 *   - `ENV=value ... npm start` starts the server: the script starts one itself, on a free port, on a fresh
 *     embedded database, with that line's environment. It must be the first step of the first file, and there is
 *     only one. `npm ci` and `npm test` lines are skipped.
 *   - `NAME=<path from the answer>` is a value the reader copies from the last answer; the script takes `path`
 *     (`data.api_key`, `data.slots[0].start_time`) from it and sets the shell variable.
 *   - `NAME=<where you cloned this repository>` is a value the reader knows: the script sets the repository's
 *     directory (`READER_KNOWS`).
 *   - `# → 201 {...}`, `# → 200 "message"` or `# → 409` (continued on following `#` lines while brackets are
 *     open) is the answer of the command before it: the HTTP status, then either the envelope's message or a
 *     JSON pattern. In the pattern `…` stands for fields or array elements left out, a value `"…"` or
 *     `"<anything>"` for any value, and `$NAME` inside a string for that shell variable's value. Fields shown
 *     must match; fields not shown are not checked; an array without a trailing `…` must have exactly the
 *     elements shown. Every curl must have its answer shown.
 *   - Any other `#` line is prose. Every other line is a shell command (continued by a trailing `\` or an
 *     open quote, or a here-document up to its end line), run in one bash process as if pasted into a terminal,
 *     so variables carry over. `localhost:8080` in a command (a curl's address, a program's written by a
 *     here-document) is this run's server; `curl` is a shell function there that reports the HTTP status. A
 *     command other than curl must exit 0.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { whenListening } from "../test/helpers/listening.js";
import { pipEnv } from "./build-clients.js";
import { defaultNodeArgs } from "../test/helpers/server.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const README_HOST = "localhost:8080";
const UNSHOWN = "a curl whose answer the text does not show (`# → <status> ...` on the next line)";
const REGION_START = "<!-- walkthrough -->";
/** The values a reader fills in from what they know, not from an answer: `CLONE=<where you cloned this repository>`. */
const READER_KNOWS: Record<string, string> = { "where you cloned this repository": ROOT };

/** Where a step is written: the file (as named in reports) and its line there. */
interface At {
  file: string;
  line: number;
}

export type Step =
  | ({ kind: "start"; env: Record<string, string> } & At)
  | ({ kind: "command"; text: string } & At)
  | ({ kind: "capture"; name: string; path: string } & At)
  | ({ kind: "known"; name: string; value: string } & At)
  | ({ kind: "expect"; status: number; message?: string; pattern?: string } & At);

/**
 * The files whose walk-throughs run, in order, relative to `root`: README.md, docs/tour.md, then every other
 * docs/*.md with a walk-through region, by name. A new page with a region is run without being listed anywhere.
 */
export function walkthroughFiles(root: string = ROOT): string[] {
  const hasRegion = (file: string) => readFileSync(join(root, file), "utf8").split("\n").some((l) => l.trim() === REGION_START);
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  const tour = docs.filter((f) => f === "docs/tour.md");
  return ["README.md", ...tour, ...docs.filter((f) => f !== "docs/tour.md")].filter(hasRegion);
}

/** The walk-through's steps in one file, in order, with their line numbers there. */
export function parseWalkthrough(readme: string, file = "README.md"): Step[] {
  const lines = readme.split("\n");
  const steps: Step[] = [];
  let inRegion = false;
  let inShell = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const trimmed = line.trim();
    if (trimmed === REGION_START) inRegion = true;
    else if (trimmed === "<!-- /walkthrough -->") inRegion = false;
    if (!inRegion) continue;
    if (trimmed.startsWith("```")) {
      inShell = !inShell && trimmed === "```sh";
      continue;
    }
    if (!inShell || trimmed === "") continue;
    const at = { file, line: i + 1 };

    const expectation = /^#\s*→\s*(\d{3})\s*(.*)$/.exec(trimmed);
    if (expectation) {
      let rest = expectation[2].trim();
      // A JSON pattern continues on the next `#` lines until its brackets close.
      while (rest.startsWith("{") || rest.startsWith("[")) {
        if (bracketDepth(rest) === 0 || i + 1 >= lines.length || !lines[i + 1].trim().startsWith("#")) break;
        rest += lines[++i].trim().replace(/^#\s?/, "");
      }
      const status = Number(expectation[1]);
      if (rest === "") steps.push({ kind: "expect", ...at, status });
      else if (rest.startsWith('"')) steps.push({ kind: "expect", ...at, status, message: JSON.parse(rest.replace(/\s+#.*$/, "")) as string });
      else steps.push({ kind: "expect", ...at, status, pattern: rest });
      continue;
    }
    if (trimmed.startsWith("#")) continue;
    const capture = /^(?:export\s+)?([A-Za-z_]\w*)=<(\S+) from the answer>\s*(?:#.*)?$/.exec(trimmed);
    if (capture) {
      steps.push({ kind: "capture", ...at, name: capture[1], path: capture[2] });
      continue;
    }
    const known = /^(?:export\s+)?([A-Za-z_]\w*)=<([^>]+)>\s*(?:#.*)?$/.exec(trimmed);
    if (known && known[2] in READER_KNOWS) {
      steps.push({ kind: "known", ...at, name: known[1], value: READER_KNOWS[known[2]] });
      continue;
    }
    const start = /^((?:[A-Z_]+=\S+\s+)*)npm start$/.exec(trimmed);
    if (start) {
      const env = Object.fromEntries(start[1].trim().split(/\s+/).filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
      steps.push({ kind: "start", ...at, env });
      continue;
    }
    if (/^npm (ci|test)\b/.test(trimmed)) continue;
    let text = line;
    while ((text.endsWith("\\") || openQuote(text)) && i + 1 < lines.length) text += `\n${lines[++i]}`;
    // A here-document (`cat > example.py <<'EOF'`) goes on to the line that ends it.
    const heredoc = /<<-?\s*(['"]?)([A-Za-z_]\w*)\1/.exec(text);
    if (heredoc) while (i + 1 < lines.length && lines[i].trim() !== heredoc[2]) text += `\n${lines[++i]}`;
    steps.push({ kind: "command", ...at, text });
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
    return actual === wanted ? [] : [`${at}: ${JSON.stringify(actual)}, the text shows ${JSON.stringify(wanted)}`];
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(actual)) return [`${at}: ${JSON.stringify(actual)} is not an array`];
    const open = pattern.at(-1) === "…";
    const shown = open ? pattern.slice(0, -1) : pattern;
    if (open ? actual.length < shown.length : actual.length !== shown.length) {
      return [`${at}: ${actual.length} elements, the text shows ${shown.length}${open ? " or more" : ""}`];
    }
    return shown.flatMap((p, i) => mismatches(actual[i], p, vars, `${at}[${i}]`));
  }
  if (pattern !== null && typeof pattern === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return [`${at}: ${JSON.stringify(actual)} is not an object`];
    return Object.entries(pattern)
      .filter(([k]) => k !== "…")
      .flatMap(([k, p]) => (k in actual ? mismatches((actual as Record<string, unknown>)[k], p, vars, `${at}.${k}`) : [`${at}.${k}: missing`]));
  }
  return actual === pattern ? [] : [`${at}: ${JSON.stringify(actual)}, the text shows ${JSON.stringify(pattern)}`];
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
  // `npm start` runs src/app/main.ts through tsx; inside a test run, the run's build of the same source starts in
  // half the CPU time, which counts when the suite has the machine's cores busy.
  const child = spawn(process.execPath, defaultNodeArgs(), {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: "0", HOST: "127.0.0.1", MONGODB_URI: "", DATA_DIR: "none" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const { port, output } = await whenListening(child, [child.stderr!], 60_000, "the server");
  return { port, child, logs: output };
}

/**
 * The environment of a terminal a reader opens: the script's own, without what says where an `npm run` around it
 * runs (its package, its folder). npm's own settings, which `npm run` passes down as `npm_config_*`, and pip's
 * stay: they are the reader's (a registry mirror, a package index mirror, a cache); pip's retries are the
 * repository's (`pipEnv`).
 */
function readerEnv(home: string): NodeJS.ProcessEnv {
  const aroundRun = /^(npm_package_|npm_lifecycle_|npm_command$|npm_config_local_prefix$|npm_config_call$|INIT_CWD$)/;
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !aroundRun.test(name)));
  return {
    ...pipEnv(env),
    TMPDIR: home,
    // The reader answers "y" when npx asks to install the package a command names.
    npm_config_yes: "true",
    npm_config_fund: "false",
    npm_config_audit: "false",
    npm_config_update_notifier: "false",
  };
}

/** One bash process the commands are pasted into, as into a terminal opened in an empty directory. */
class Shell {
  private readonly child: ChildProcess;
  private buffer = "";
  private waiting: ((result: { out: string; status: number }) => void) | undefined;
  private count = 0;
  /** The empty directory it starts in, outside the repository; its TMPDIR too. */
  readonly home = mkdtempSync(join(tmpdir(), "walkthrough-"));

  constructor(private readonly port: number) {
    this.child = spawn("bash", ["--norc", "--noprofile"], { cwd: this.home, env: readerEnv(this.home), stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout!.on("data", (chunk: Buffer) => this.read(chunk.toString()));
    this.child.stderr!.on("data", (chunk: Buffer) => this.read(chunk.toString()));
    // -w adds the HTTP status after the body; -q (first) keeps a reader's ~/.curlrc out of it.
    this.child.stdin!.write(`curl() { command curl -q --max-time 30 -w '\\n@@HTTP %{http_code}\\n' "$@"; }\n`);
  }

  /** A command as pasted, with the address the text shows pointed at this run's server. */
  private aimed(command: string): string {
    return command.replaceAll(README_HOST, `127.0.0.1:${this.port}`);
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
      this.child.stdin!.write(`${this.aimed(command)}\nprintf '\\n@@DONE %s %s@@\\n' ${this.count} $?\n`);
    });
  }

  /** Ends the shell (and whatever it still runs) and removes its directory. */
  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.stdin!.end();
    if (this.child.exitCode === null) await exited;
    rmSync(this.home, { recursive: true, force: true });
  }
}

export interface WalkthroughResult {
  ok: boolean;
  report: string[];
}

/** Runs the walk-throughs of `files`, in order, as one session, and checks every answer they show. */
export async function runWalkthrough(files: { file: string; text: string }[], log: (line: string) => void = () => undefined): Promise<WalkthroughResult> {
  const steps = files.flatMap(({ file, text }) => parseWalkthrough(text, file));
  const report: string[] = [];
  const fail = (at: At, what: string) => report.push(`${at.file} line ${at.line}: ${what}`);
  const first = steps[0];
  if (first?.kind !== "start") return { ok: false, report: ["the walk-through must begin with its `... npm start` line"] };
  if (!steps.some((s) => s.kind === "expect")) return { ok: false, report: ["the walk-through shows no answers"] };
  const service = await startService(first.env);
  const shell = new Shell(service.port);
  const vars: Record<string, string> = {};
  let last: (At & { status: number; body: string; json: unknown; checked: boolean }) | undefined;
  try {
    for (const step of steps.slice(1)) {
      if (step.kind === "start") {
        fail(step, "a second `npm start` in the walk-through");
      } else if (step.kind === "command") {
        const isCurl = /^\s*curl\b/.test(step.text);
        // A reader sees every curl's answer next to it; one the text does not show is one it does not check.
        if (isCurl && last && !last.checked) fail(last, UNSHOWN);
        const { out, status } = await shell.run(step.text);
        const http = /\n?@@HTTP (\d{3})\s*$/.exec(out);
        if (!isCurl) {
          if (out.trim() !== "") log(`  ${out.trim()}`);
          if (status !== 0) fail(step, `the command exited with ${status}: ${out.trim().slice(-600)}`);
          // A plain assignment: remember its value for `$NAME` in shown answers.
          const assign = /^\s*(?:export\s+)?([A-Za-z_]\w*)=/.exec(step.text);
          if (assign) vars[assign[1]] = (await shell.run(`printf '%s' "$${assign[1]}"`)).out.trim();
          continue;
        }
        if (!http) {
          fail(step, `curl gave no answer: ${out.trim().slice(0, 300)}`);
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
        last = { file: step.file, line: step.line, status: Number(http[1]), body, json, checked: false };
        log(`$ ${step.text.split("\n")[0]}${step.text.includes("\n") ? " …" : ""}\n  ${last.status} ${body.length > 200 ? `${body.slice(0, 200)}…` : body}`);
        if (last.status >= 500) fail(step, `answered ${last.status}: ${body.slice(0, 300)}`);
      } else if (step.kind === "known") {
        vars[step.name] = step.value;
        await shell.run(`${step.name}=${shellQuote(step.value)}`);
      } else if (step.kind === "capture") {
        const value = last ? pick(last.json, step.path) : undefined;
        if (typeof value !== "string" && typeof value !== "number") {
          fail(step, `${step.name}=<${step.path} from the answer>: the answer has no such value (${last ? last.body.slice(0, 300) : "no answer"})`);
          continue;
        }
        vars[step.name] = String(value);
        await shell.run(`${step.name}=${shellQuote(String(value))}`);
      } else {
        if (!last) {
          fail(step, "an answer shown without a curl command before it");
          continue;
        }
        last.checked = true;
        const problems: string[] = [];
        if (last.status !== step.status) problems.push(`HTTP ${last.status}, the text shows ${step.status}`);
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
        for (const p of problems) fail(step, `${p}\n    answer of ${last.file === step.file ? "" : `${last.file} `}line ${last.line}: ${last.body.slice(0, 400)}`);
      }
    }
    if (last && !last.checked) fail(last, UNSHOWN);
  } finally {
    service.child.kill("SIGTERM");
    await shell.close();
  }
  return { ok: report.length === 0, report };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // Files inside the repository are named from its root in reports (`docs/tour.md line 12`), others as given.
  const paths = process.argv.length > 2 ? process.argv.slice(2).map((p) => resolve(p)) : walkthroughFiles(ROOT).map((f) => join(ROOT, f));
  const sources = paths.map((path) => {
    const fromRoot = relative(ROOT, path);
    return { file: fromRoot.startsWith("..") || isAbsolute(fromRoot) ? path : fromRoot, text: readFileSync(path, "utf8") };
  });
  const verbose = process.env.WALKTHROUGH_VERBOSE === "1";
  const what = `walk-through of ${sources.map((s) => s.file).join(", ")}`;
  runWalkthrough(sources, verbose ? (l) => console.log(l) : undefined).then(
    ({ ok, report }) => {
      for (const line of report) console.error(line);
      console.log(ok ? `${what}: every shown answer matched` : `${what}: ${report.length} problem(s)`);
      process.exit(ok ? 0 : 1);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
