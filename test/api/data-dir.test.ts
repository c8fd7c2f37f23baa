// DATA_DIR (extensions.md "Running"): the embedded database's data and the API key secret survive a stop, a crash and a restart; one service per folder.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import mongoose from "mongoose";
import { afterAll, describe, expect, it } from "vitest";
import { restAt } from "../helpers/api.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

const { BSON } = mongoose.mongo;
const dir = mkdtempSync(join(tmpdir(), "data-dir-test-"));
/**
 * As the README's two commands run it: the embedded database and no API_KEY_SECRET, so the secret that seals the
 * stored copies of API keys must come from DATA_DIR too, or GET /user could not show the key after a restart.
 */
const ENV = { MONGODB_URI: "", API_KEY_SECRET: "", DATA_DIR: dir };
const running: RunningServer[] = [];
/** The server that holds the folder now. */
let current: RunningServer | undefined;
/** Each test starts one or two services; on a loaded 2-core machine a start alone may take 20 s. */
const SLOW = 180_000;

async function start(): Promise<RunningServer> {
  const server = await startServer(ENV, 120_000);
  running.push(server);
  current = server;
  return server;
}

afterAll(async () => {
  await Promise.all(running.map((s) => s.stop("SIGKILL")));
  rmSync(dir, { recursive: true, force: true });
});

/** When the data file's snapshot was read (its first document, src/db/dataDir.ts encode), in ms; 0 without one. */
function snapshotAt(): number {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(dir, "data.bson"));
  } catch {
    return 0;
  }
  const header = BSON.deserialize(bytes.subarray(0, bytes.readInt32LE(0)));
  return header.snapshot_at instanceof Date ? header.snapshot_at.getTime() : 0;
}

const userOf = (server: RunningServer, key: string) => restAt(server.baseUrl, "GET", "/api/v1/user", { key });
const eventsOf = (server: RunningServer, key: string) => restAt(server.baseUrl, "GET", "/api/v1/events", { key });

describe("DATA_DIR with the embedded database", () => {
  let key = "";
  let eventUrl = "";

  it("keeps the account, its API key and its event across a stop (SIGTERM) and a start", async () => {
    const first = await start();
    expect(first.logs()).toContain(`its data is kept in ${dir} (DATA_DIR`);
    const fixtures = fixturesAt(first.baseUrl);
    const account = await fixtures.newAccount({ full_name: "Kept Host" });
    key = account.key;
    eventUrl = (await fixtures.newEvent(account, { name: "Kept event" })).url;
    expect(await first.stop()).toBe(0);

    const second = await start();
    expect(second.logs()).toMatch(/loaded [1-9]\d* documents from /);
    const user = await userOf(second, key);
    expect(user.status).toBe(200);
    // The stored copy opens with the kept secret: the same key is shown again.
    expect(user.body.data.api_key).toBe(key);
    expect(user.body.data.full_name).toBe("Kept Host");
    const events = await eventsOf(second, key);
    expect(events.body.data.map((e: { url: string }) => e.url)).toEqual([eventUrl]);
  }, SLOW);

  it("refuses a second service on the folder in use, naming the process that holds it", async () => {
    const holder = current ?? (await start());
    const err = await startServer(ENV, 120_000).then(
      (s) => s.stop().then(() => new Error("a second server started on the same DATA_DIR")),
      (e: Error) => e,
    );
    expect(err.message).toMatch(/^server exited with [1-9]\d* before listening/);
    expect(err.message).toContain(`DATA_DIR ${dir} is in use by process ${holder.child.pid}`);
    // The holder was not disturbed.
    expect((await userOf(holder, key)).status).toBe(200);
  }, SLOW);

  it("saves within seconds of a change while running, so a crash (SIGKILL) loses at most those seconds", async () => {
    const server = current ?? (await start());
    const renamed = await restAt(server.baseUrl, "PATCH", "/api/v1/user", { key, body: { user: { full_name: "Renamed Before Crash" } } });
    expect(renamed.status).toBe(200);
    // From the answer on. A save begun before the change and written after its answer does not hold it, so the
    // file's mtime proves nothing: its snapshot_at (when its read began) must be later than the answer.
    const changedAt = Date.now();
    // The data file is read again after the change (at most 5 s later, with some room for a loaded machine).
    await until("a data file read after the change", () => snapshotAt() > changedAt, { timeoutMs: 15_000 });
    await server.stop("SIGKILL");

    // The lock of the killed process is stale: the next service takes the folder over.
    const next = await start();
    const user = await userOf(next, key);
    expect(user.status).toBe(200);
    expect(user.body.data.full_name).toBe("Renamed Before Crash");
    expect(user.body.data.api_key).toBe(key);
  }, SLOW);
});
