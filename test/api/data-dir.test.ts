// DATA_DIR (extensions.md "Running"): the embedded database's data and the API key secret survive a stop, a crash and a restart; one service per folder.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import mongoose from "mongoose";
import { afterAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, restAt } from "../helpers/api.js";
import { dayFromToday, fixturesAt, utcIso } from "../helpers/fixtures.js";
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
    const event = await fixtures.newEvent(account, { name: "Kept event" });
    eventUrl = event.url;
    // The booking-change feed too (callers.md: a restart loses nothing): its change and token are there after it.
    const booking = { event_id: event.id, start_time: utcIso(dayFromToday(5), "10:00"), attendee_name: "Kept Booker", attendee_email: "kept@example.com" };
    const [bookingId] = await fixtures.importBookings([booking]);
    const changesBefore = (await restAt(first.baseUrl, "GET", "/api/v1/booking_changes", { key })).body.data.changes;
    expect(changesBefore.map((c: { booking: { id: string } }) => c.booking.id)).toEqual([bookingId]);
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
    const feedOf = (changes: Array<{ token: string; type: string; booking: { id: string } }>) => changes.map((c) => [c.token, c.type, c.booking.id]);
    expect(feedOf((await restAt(second.baseUrl, "GET", "/api/v1/booking_changes", { key })).body.data.changes)).toEqual(feedOf(changesBefore));
    const resumed = await restAt(second.baseUrl, "GET", `/api/v1/booking_changes?after=${changesBefore[0].token}`, { key });
    expect(resumed.body.data).toEqual({ changes: [], next: changesBefore[0].token });
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

describe("a DATA_DIR that cannot be written", () => {
  /** A service of its own on a folder of its own; `fileSizeLimitKiB`: the disk is full for it past that. */
  async function own(folder: string, fileSizeLimitKiB?: number): Promise<RunningServer> {
    // Under a file-size limit the shared query-shapes file (test/globalSetup.ts) may already be past it: that server
    // records none, so only its own data files meet the limit.
    const shapes: Record<string, string> = fileSizeLimitKiB === undefined ? {} : { QUERY_SHAPES_FILE: "" };
    const server = await startServer({ ...ENV, DATA_DIR: folder, ...shapes }, 120_000, undefined, undefined, fileSizeLimitKiB);
    running.push(server);
    return server;
  }
  const newAccountAt = (server: RunningServer, email: string) =>
    restAt(server.baseUrl, "POST", "/api/v1/admin/accounts", { admin: true, body: { account: { email, full_name: "Kept Or Refused", url: email.split("@")[0] } } });
  /**
   * New accounts one after another until one is refused: the e-mails confirmed, and the refusal. `everyMs`: the
   * pause between them, where what ends them is time (the saver's next look), not how many there were.
   */
  async function writeUntilRefused(server: RunningServer, prefix: string, timeoutMs: number, confirmed: string[] = [], everyMs?: number) {
    let refused: Awaited<ReturnType<typeof newAccountAt>> | undefined;
    await until(`a write refused (${prefix})`, async () => {
      const res = await newAccountAt(server, `${prefix}-${confirmed.length}-${process.pid}@example.com`);
      if (res.status === 201) confirmed.push(res.body.data.email);
      else refused = res;
      return refused !== undefined;
    }, { timeoutMs, everyMs });
    return { confirmed, refused: refused! };
  }
  const health = async (server: RunningServer) => {
    const res = await fetch(`${server.baseUrl}/healthz`);
    return { status: res.status, body: (await res.json()) as { status: string; cause?: string } };
  };

  it("a removed folder: writes answer 503 and /healthz names the cause until a save succeeds again; nothing confirmed is lost", async () => {
    const folder = mkdtempSync(join(tmpdir(), "data-dir-gone-"));
    try {
      const server = await own(folder);
      const confirmed: string[] = [];
      const first = await newAccountAt(server, `kept-0-${process.pid}@example.com`);
      expect(first.status).toBe(201);
      confirmed.push(first.body.data.email);
      await until("the first save", () => existsSync(join(folder, "data.bson")), { timeoutMs: 15_000 });
      rmSync(folder, { recursive: true, force: true });
      // Writes are taken until the saver finds the folder gone (at most 5 s); from then on every one is refused. A
      // write every 250 ms is enough to see that (back to back, some 75 accounts were made, then checked again).
      const { refused } = await writeUntilRefused(server, "kept", 30_000, confirmed, 250);
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({ success: false, message: "data cannot be saved", data: {}, status: "service_unavailable" });
      expect(refused.headers.get("retry-after")).toBe("5");
      const rpc = await fetch(`${server.baseUrl}/scheduling.v1.AdminService/CreateAccount`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-admin-token": ADMIN_TOKEN },
        body: JSON.stringify({ account: { email: `rpc-${process.pid}@example.com`, fullName: "Rpc" } }),
      });
      expect([rpc.status, ((await rpc.json()) as { code: string }).code]).toEqual([503, "unavailable"]);
      const sick = await health(server);
      expect(sick.status).toBe(503);
      expect(sick.body.status).toBe("unavailable");
      expect(sick.body.cause).toContain(`DATA_DIR ${folder}`);
      expect(sick.body.cause).toContain("ENOENT");
      // Reads go on.
      expect((await restAt(server.baseUrl, "GET", "/api/v1/user", { key: first.body.data.api_key })).status).toBe(200);

      // The folder is back: the next save succeeds, and writes are taken again.
      mkdirSync(folder, { recursive: true });
      await until("/healthz ok again", async () => (await health(server)).status === 200, { timeoutMs: 20_000 });
      const after = await newAccountAt(server, `kept-after-${process.pid}@example.com`);
      expect(after.status).toBe(201);
      confirmed.push(after.body.data.email);
      // The folder made again holds the lock and the API key secret again, not only the data: a second service is
      // refused, and the next start reads the stored keys (before: a new secret, and GET /user answered 500).
      await until("the lock and the secret written back", () => existsSync(join(folder, "lock")) && existsSync(join(folder, "api-key-secret")), { timeoutMs: 20_000 });
      await expect(own(folder)).rejects.toThrow(/in use by process/);
      expect(await server.stop()).toBe(0);

      const next = await own(folder);
      for (const email of confirmed) {
        const again = await newAccountAt(next, email);
        expect([email, again.status, again.body.message]).toEqual([email, 422, "email has already been taken"]);
      }
      const user = await restAt(next.baseUrl, "GET", "/api/v1/user", { key: first.body.data.api_key });
      expect([user.status, user.body.data?.api_key]).toEqual([200, first.body.data.api_key]);
      await next.stop();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, SLOW);

  it("a full disk (a file-size limit): writes answer 503 before a save fails, the last good copy stays whole, no temporary file is left, nothing confirmed is lost", async () => {
    const folder = mkdtempSync(join(tmpdir(), "data-dir-full-"));
    try {
      const server = await own(folder, 96);
      const { confirmed, refused } = await writeUntilRefused(server, "full", 120_000);
      // Several were taken before the refusals began (about 26 with this limit).
      expect(confirmed.length).toBeGreaterThan(5);
      expect({ status: refused.status, message: refused.body.message }).toEqual({ status: 503, message: "data cannot be saved" });
      const sick = await health(server);
      expect(sick.status).toBe(503);
      expect(sick.body.cause).toContain("EFBIG");
      expect(readdirSync(folder).filter((f) => f.endsWith(".tmp"))).toEqual([]);
      // The last good copy is whole: it reads to its end.
      const good = readFileSync(join(folder, "data.bson"));
      let offset = 0;
      while (offset < good.length) offset += good.readInt32LE(offset);
      expect(offset).toBe(good.length);

      // Refused before a save could fail: the stop's last save still fits, and keeps every write confirmed.
      expect(await server.stop()).toBe(0);
      expect(server.logs()).not.toContain("the last save at stop failed");
      expect(readdirSync(folder).filter((f) => f.endsWith(".tmp"))).toEqual([]);

      // Started again (no limit now): the last good copy loads, and holds every account confirmed: the service
      // refused writes before a save could fail, so nothing it confirmed was left out of the last good copy.
      const next = await own(folder);
      for (const email of confirmed) expect([email, (await newAccountAt(next, email)).body.message]).toEqual([email, "email has already been taken"]);
      await next.stop();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, SLOW);

  it("a stop whose last save fails (the folder removed after a write) exits non-zero saying so", async () => {
    const folder = mkdtempSync(join(tmpdir(), "data-dir-stop-"));
    try {
      const server = await own(folder);
      expect((await newAccountAt(server, `stop-0-${process.pid}@example.com`)).status).toBe(201);
      await until("the first save", () => existsSync(join(folder, "data.bson")), { timeoutMs: 15_000 });
      rmSync(folder, { recursive: true, force: true });
      // Taken: nothing has told the service yet that the folder is gone; its save at stop will.
      expect((await newAccountAt(server, `stop-1-${process.pid}@example.com`)).status).toBe(201);
      expect(await server.stop()).not.toBe(0);
      expect(server.logs()).toContain("the last save at stop failed");
      expect(server.logs()).toContain("ENOENT");
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, SLOW);

  /** A tmpfs of `size` mounted on a new folder, where this process may mount (root); undefined elsewhere. */
  function smallDisk(size: string): string | undefined {
    const folder = mkdtempSync(join(tmpdir(), "data-dir-tmpfs-"));
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", folder], { stdio: "ignore" });
      return folder;
    } catch {
      rmSync(folder, { recursive: true, force: true });
      return undefined;
    }
  }
  const disk = process.getuid?.() === 0 ? smallDisk("256k") : undefined;
  afterAll(() => {
    if (disk === undefined) return;
    execFileSync("umount", [disk], { stdio: "ignore" });
    rmSync(disk, { recursive: true, force: true });
  });

  it.skipIf(disk === undefined)("a disk that fills up (a 256 KiB tmpfs): writes are refused before a save fails, so nothing confirmed is lost; with room again they are taken", async () => {
    const server = await own(disk!);
    const { confirmed, refused } = await writeUntilRefused(server, "room", 150_000);
    expect({ status: refused.status, message: refused.body.message }).toEqual({ status: 503, message: "data cannot be saved" });
    const sick = await health(server);
    expect(sick.status).toBe(503);
    expect(sick.body.cause).toContain("ENOSPC");
    // Room again (the operator grew the disk): writes are taken again, and every confirmed one is kept.
    execFileSync("mount", ["-o", "remount,size=16m", disk!], { stdio: "ignore" });
    await until("/healthz ok again", async () => (await health(server)).status === 200, { timeoutMs: 20_000 });
    expect((await newAccountAt(server, `room-after-${process.pid}@example.com`)).status).toBe(201);
    expect(await server.stop()).toBe(0);
    expect(readdirSync(disk!).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    const next = await own(disk!);
    for (const email of [...confirmed, `room-after-${process.pid}@example.com`]) {
      expect([email, (await newAccountAt(next, email)).body.message]).toEqual([email, "email has already been taken"]);
    }
    await next.stop();
  }, SLOW);
});
