// docs/calendars-and-meetings.md "Adding a calendar provider", followed: a copy of the service gets the section's folder and registry line and nothing else, type-checks, and its provider connects and blocks slots on a running server.
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import http from "node:http";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt } from "../helpers/api.js";
import { dayFromToday } from "../helpers/bookings.js";
import { bookAt, eventAt, hostAt, slotsAt } from "../helpers/calendars.js";
import { builtNodeArgs, startServer, transpileService, type RunningServer } from "../helpers/server.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Under the repository, so the copy finds its node_modules as the service does. */
const COPY = join(ROOT, ".tmp", `recipe-${process.pid}`);

/** The section's steps: each file to write (`<!-- recipe file: path -->`) and each line to add (`<!-- recipe line: path -->`), with the code block that follows. */
function recipe(): { kind: "file" | "line"; path: string; text: string }[] {
  const doc = readFileSync(join(ROOT, "docs/calendars-and-meetings.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Adding a calendar provider"));
  const steps = [...section.matchAll(/<!-- recipe (file|line): (\S+) -->\n```ts\n([\s\S]*?)```/g)].map((m) => ({ kind: m[1] as "file" | "line", path: m[2]!, text: m[3]! }));
  if (steps.length === 0) throw new Error("the section has no recipe steps");
  return steps;
}

/** Every file under `dir`, relative to it. */
function filesOf(dir: string, under = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesOf(path, under) : [relative(under, path)];
  });
}

let server: RunningServer | undefined;
let lists: http.Server;
let listBase: string;
const busyLists = new Map<string, string>();

beforeAll(async () => {
  lists = http.createServer((req, res) => {
    const body = busyLists.get(req.url ?? "");
    if (body === undefined) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((r) => lists.listen(0, "127.0.0.1", r));
  listBase = `http://127.0.0.1:${(lists.address() as { port: number }).port}`;
});

afterAll(async () => {
  await server?.stop();
  lists?.closeAllConnections();
  await new Promise((r) => lists?.close(r));
  rmSync(COPY, { recursive: true, force: true });
});

describe("adding a calendar provider, as the docs say", () => {
  it("touches its folder and one registry line, type-checks, connects, and its busy times block slots and bookings", async () => {
    rmSync(COPY, { recursive: true, force: true });
    for (const part of ["src", "gen"]) cpSync(join(ROOT, part), join(COPY, part), { recursive: true });
    for (const file of ["package.json", "tsconfig.json"]) cpSync(join(ROOT, file), join(COPY, file));
    for (const step of recipe()) {
      const target = join(COPY, step.path);
      mkdirSync(dirname(target), { recursive: true });
      if (step.kind === "file") writeFileSync(target, step.text);
      else writeFileSync(target, `${readFileSync(target, "utf8")}${step.text}`);
    }

    // What changed: the provider's folder, and one line of the registry.
    const changed = filesOf(join(COPY, "src")).filter((f) => {
      const original = join(ROOT, "src", f);
      try {
        return readFileSync(original, "utf8") !== readFileSync(join(COPY, "src", f), "utf8");
      } catch {
        return true;
      }
    });
    expect(changed.sort()).toEqual(["providers/example/index.ts", "providers/registry.ts"]);
    const before = readFileSync(join(ROOT, "src/providers/registry.ts"), "utf8").split("\n");
    const after = readFileSync(join(COPY, "src/providers/registry.ts"), "utf8").split("\n");
    expect(after.filter((line) => !before.includes(line)).filter((line) => line.trim() !== "")).toHaveLength(1);

    // The strict type check of the project, over the registry and everything it imports (the new provider too).
    const options = ts.convertCompilerOptionsFromJson(JSON.parse(readFileSync(join(ROOT, "tsconfig.json"), "utf8")).compilerOptions, COPY).options;
    const program = ts.createProgram([join(COPY, "src/providers/index.ts")], { ...options, noEmit: true, incremental: false, tsBuildInfoFile: undefined });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(problems).toEqual([]);

    // The copy, run: the provider is one of POST /calendar_connections' values, and its busy times block.
    await transpileService(COPY, join(COPY, "build"));
    server = await startServer({ OUTBOUND_ALLOW_PRIVATE: "true", CALENDAR_CACHE_SECONDS: "1" }, 60_000, builtNodeArgs(join(COPY, "build")));
    const base = server.baseUrl;
    const day = dayFromToday(3);
    busyLists.set("/busy.json", JSON.stringify({ busy: [{ start: `${day}T09:00:00Z`, end: `${day}T10:30:00Z` }] }));
    const host = await hostAt(base);
    const unknown = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "nope" } } });
    expect(unknown.body.data).toEqual({ field: "connection.provider", allowed: ["caldav", "example", "ics"] });
    const made = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "example", url: `${listBase}/busy.json` } } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.data).toMatchObject({ provider: "example", account: "127.0.0.1", status: "ok", calendars: [{ name: "Busy list", can_write: false }] });
    const event = await eventAt(base, host.key);
    const { starts } = await slotsAt(base, host.user, event, day);
    expect(["08:30", "09:00", "09:30", "10:00", "10:30"].map((t) => starts.includes(`${day} ${t}`))).toEqual([true, false, false, false, true]);
    expect((await bookAt(base, host.user, event, `${day}T10:00:00.000Z`)).status).toBe(409);
    // Its failures fail closed like any calendar's: the connection says why.
    busyLists.set("/busy.json", "not json");
    await new Promise((r) => setTimeout(r, 1100));
    expect((await bookAt(base, host.user, event, `${day}T11:00:00.000Z`)).status).toBe(503);
    const [connection] = (await restAt(base, "GET", "/api/v1/calendar_connections", { key: host.key })).body.data;
    expect(connection).toMatchObject({ status: "error", last_error: "the busy list is not JSON" });
  }, 240_000);
});
