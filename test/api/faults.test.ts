// The database dies mid-run, or is not there at start: every protocol answers 503 / UNAVAILABLE within 2 s, health says so, the service recovers by itself when it is back, and at start it waits up to 15 s.
import { Code } from "@connectrpc/connect";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { restAt, rpcError } from "../helpers/api.js";
import { dayFromToday, utcIso } from "../helpers/bookings.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { grpcClientAt, unaryAt } from "../helpers/grpcAt.js";
import { freePort, startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { DEADLINE_DEFAULT_ENV, defaultNodeArgs, startServer, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";
import { databaseDeadlineMs } from "../../src/db/deadlines.js";

/** What docs/guarantees.md promises: 503 within 2 s whatever the database does. */
const DEADLINE_MS = 2000;
/** The service's own bound under that promise, from its configured deadlines (1.9 s with the defaults used here). */
const SERVICE_BOUND_MS = databaseDeadlineMs();

/*
 * How late an answer may be. On an idle machine: the promise, 2 s. Under load (a full run on 2 cores saw load 40
 * and plain healthy reads of 500 ms) timers fire late and every request needs more time for its own work, so the
 * margin over the service's bound is the larger of the promise's and twice what healthy requests took just before
 * on this same server, measured the same way (five at once, or the same burst of 40): a baseline of the same run, as
 * the benches use. The failures this file is about stay far beyond it: no deadline (Mongoose's queue or the
 * driver's heartbeat, about 10 s) or the driver's second try (twice the bound) - unless healthy requests
 * themselves take about a second, which is not a run any timing can be judged in.
 */
const limitMs = (healthyMs: number) => SERVICE_BOUND_MS + Math.max(DEADLINE_MS - SERVICE_BOUND_MS, 2 * healthyMs);
/** The slowest of healthy answers measured just before the database goes (set in the first test; 0 when it did not run). */
let healthy = { singleMs: 0, burstMs: 0 };

let db: TestDatabase;
let server: RunningServer;
let key: string;
/** A host's event, booked by the stream of writes in flight when the database dies. */
let bookable: { url: string; eventUrl: string };

/** A REST call to this file's server; 10 s at most, so a hang fails the test instead of stalling it. */
const call = (method: string, path: string, opts: { key?: string; body?: unknown; admin?: boolean; headers?: Record<string, string> } = {}) =>
  restAt(server.baseUrl, method, path, { ...opts, timeoutMs: 10_000 });

async function createAccount(): Promise<string> {
  return (await fixturesAt(server.baseUrl).newAccount({ full_name: "Fault Line" })).key;
}

const connect = () =>
  createClient(UserService, createConnectTransport({ baseUrl: server.baseUrl, httpVersion: "1.1", interceptors: [(next) => async (req) => (req.header.set("x-api-key", key), next(req))] }));

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t0 };
}

const UNAVAILABLE = { success: false, message: "service unavailable", data: {}, status: "service_unavailable" };

beforeAll(async () => {
  db = await startDatabase();
  server = await startServer({ MONGODB_URI: db.uri, ...DEADLINE_DEFAULT_ENV });
  key = await createAccount();
  const fixtures = fixturesAt(server.baseUrl);
  const host = await fixtures.newHost({ full_name: "Fault Host" });
  const event = await fixtures.newEvent(host, { name: "Faults", url: "faults", slot_duration: "30_minutes" });
  bookable = { url: host.user.url as string, eventUrl: event.url as string };
});

afterAll(async () => {
  await server?.stop();
  // Kept for whoever has to explain a status this file did not expect: the server's log is nowhere else.
  if (server) writeFileSync(join(process.cwd(), ".tmp", "faults-server.log"), server.logs());
  await db?.kill();
});

describe("with the database killed mid-run", () => {
  it("requests in flight and new ones on REST, Connect and gRPC answer 503 / UNAVAILABLE within 2 s; /healthz and grpc.health say so", async () => {
    expect((await call("GET", "/api/v1/user", { key })).status).toBe(200);
    // The baselines: healthy answers five at once (as the checks after the kill), and a burst as large as the stream below.
    const single = await Promise.all(Array.from({ length: 5 }, () => call("GET", "/api/v1/user", { key })));
    const burst = await Promise.all(Array.from({ length: 40 }, () => call("GET", "/api/v1/user", { key })));
    expect([...single, ...burst].every((r) => r.status === 200)).toBe(true);
    healthy = { singleMs: Math.max(...single.map((r) => r.ms)), burstMs: Math.max(...burst.map((r) => r.ms)) };
    // A stream of reads and writes is running when the database goes: an account read, a settings write under an
    // Idempotency-Key (its record is a write too), a public booking (cells, booking and its effects in a
    // transaction), the public event page. Each answers or says 503; none is a 500 (issue 29 saw one in a full run).
    const requests = [
      () => call("GET", "/api/v1/user", { key }),
      (i: number) => call("PATCH", "/api/v1/user", { key, headers: { "idempotency-key": `fault-${i}` }, body: { user: { bio: `written ${i}` } } }),
      (i: number) =>
        call("POST", `/api/v1/public/users/${bookable.url}/events/${bookable.eventUrl}/bookings`, {
          body: { booking: { start_time: utcIso(dayFromToday(14 + Math.floor(i / 24)), `${String(i % 24).padStart(2, "0")}:00`), attendee_name: "Faulty", attendee_email: `faulty${i}@example.com` } },
        }),
      () => call("GET", `/api/v1/public/users/${bookable.url}/events/${bookable.eventUrl}`),
    ];
    const inFlight = Array.from({ length: 40 }, (_, i) => new Promise((r) => setTimeout(r, i * 5)).then(() => requests[i % requests.length]!(i)));
    await new Promise((r) => setTimeout(r, 50));
    await db.kill();
    const during = await Promise.all(inFlight);
    for (const [i, r] of during.entries()) {
      expect([i, r.status === 503 ? 503 : r.status < 300 ? "ok" : r.status]).toEqual([i, r.status === 503 ? 503 : "ok"]);
      expect(r.ms, `request ${i}; healthy burst took ${healthy.burstMs} ms`).toBeLessThan(limitMs(healthy.burstMs));
    }

    const grpc = grpcClientAt(server.baseUrl);
    try {
      const [rest, patch, viaConnect, viaGrpc, health] = await Promise.all([
        call("GET", "/api/v1/user", { key }),
        call("PATCH", "/api/v1/user", { key, body: { user: { bio: "still here?" } } }),
        timed(() => rpcError(() => connect().getUser({}))),
        timed(() => rpcError(() => unaryAt(grpc, UserService.method.getUser, {}, { "x-api-key": key }))),
        timed(() => fetch(`${server.baseUrl}/healthz`)),
      ]);
      expect(rest.status).toBe(503);
      expect(rest.body).toEqual(UNAVAILABLE);
      expect(rest.ms, `healthy took ${healthy.singleMs} ms`).toBeLessThan(limitMs(healthy.singleMs));
      expect(patch.status).toBe(503);
      expect(patch.body).toEqual(UNAVAILABLE);
      expect(patch.ms, `healthy took ${healthy.singleMs} ms`).toBeLessThan(limitMs(healthy.singleMs));
      expect(viaConnect.value.code).toBe(Code.Unavailable);
      expect(viaConnect.ms, `healthy took ${healthy.singleMs} ms`).toBeLessThan(limitMs(healthy.singleMs));
      expect(viaGrpc.value.code).toBe(Code.Unavailable);
      expect(viaGrpc.ms, `healthy took ${healthy.singleMs} ms`).toBeLessThan(limitMs(healthy.singleMs));
      // The request lines (and the metrics counted from them) say what the callers were told, not INTERNAL. They
      // come through the child's stderr pipe, which may deliver them a little after the answers.
      const getUserLines = () =>
        server
          .logs()
          .split("\n")
          .filter((l) => l.includes('"msg":"request"') && l.includes('"route":"scheduling.v1.UserService/GetUser"'))
          .map((l) => JSON.parse(l) as { protocol: string; status: string });
      const rpcLines = await until("the GetUser request lines of Connect and gRPC", getUserLines, { timeoutMs: 5000, accept: (ls) => new Set(ls.map((l) => l.protocol)).size === 2 });
      expect(rpcLines.map((l) => l.status)).toEqual(rpcLines.map(() => "unavailable"));
      expect(health.value.status).toBe(503);
      expect(health.ms, `healthy took ${healthy.singleMs} ms`).toBeLessThan(limitMs(healthy.singleMs));
      expect(await health.value.json()).toEqual({ status: "unavailable" });

      // The gRPC health service answers from a check at most a second old, made when asked.
      const check = await until("grpc.health NOT_SERVING", () => unaryAt(grpc, Health.method.check, { service: "" }), { timeoutMs: 1500, accept: (c) => c.status !== ServingStatus.SERVING });
      expect(check.status).toBe(ServingStatus.NOT_SERVING);
    } finally {
      grpc.close();
    }
  });

  it("keeps answering 503 quickly, request after request, while the database stays down", async () => {
    for (let i = 0; i < 5; i++) {
      const r = await call("GET", "/api/v1/user", { key });
      expect(r.status).toBe(503);
      expect(r.ms, `healthy took ${healthy.singleMs} ms`).toBeLessThan(limitMs(healthy.singleMs));
    }
    expect(server.child.exitCode).toBeNull();
  });

  it("recovers without a restart when the database is back on the same port (empty: it kept data in memory)", async () => {
    const pid = server.child.pid;
    db = await startDatabase(db.port);
    const health = await until("/healthz 200", async () => (await fetch(`${server.baseUrl}/healthz`)).status, { timeoutMs: 10_000, everyMs: 100, accept: (s) => s === 200 });
    expect(health).toBe(200);
    // The old account went with the data; the API key no longer matches anything.
    expect((await call("GET", "/api/v1/user", { key })).status).toBe(401);
    key = await createAccount();
    const user = await call("GET", "/api/v1/user", { key });
    expect(user.status).toBe(200);
    expect(user.body.data.full_name).toBe("Fault Line");
    expect((await connect().getUser({})).user?.fullName).toBe("Fault Line");
    const grpc = grpcClientAt(server.baseUrl);
    try {
      expect((await unaryAt(grpc, UserService.method.getUser, {}, { "x-api-key": key })).user?.fullName).toBe("Fault Line");
      const check = await until("grpc.health SERVING", () => unaryAt(grpc, Health.method.check, { service: "" }), { timeoutMs: 1500, accept: (c) => c.status === ServingStatus.SERVING });
      expect(check.status).toBe(ServingStatus.SERVING);
    } finally {
      grpc.close();
    }
    expect(server.child.pid).toBe(pid);
    expect(server.child.exitCode).toBeNull();
  });
});

describe("with the database unreachable at start (MONGODB_URI at a closed port)", () => {
  const uriAt = (port: number) => `mongodb://127.0.0.1:${port}/scheduling?replicaSet=jongodb-rs0&serverMonitoringMode=poll`;

  it("waits for it, and serves once it comes up within the 15 s the docs promise", { timeout: 150_000 }, async () => {
    const port = await freePort();
    // The database comes only once the service has said its first try failed (a fixed pause lost the race on a
    // loaded machine, where the service took longer than the pause to reach that try), and a second later: past
    // the point where the service used to give up.
    let waiting!: () => void;
    const saidWaiting = new Promise<void>((resolve) => (waiting = resolve));
    const starting = startServer({ MONGODB_URI: uriAt(port), ...DEADLINE_DEFAULT_ENV }, 120_000, defaultNodeArgs(), (logs) => {
      if (/database not reachable yet/.test(logs)) waiting();
    });
    await Promise.race([saidWaiting, starting]);
    await new Promise((r) => setTimeout(r, 1000));
    const late = await startDatabase(port);
    try {
      const own = await starting;
      try {
        expect(own.logs()).toMatch(/database not reachable yet/);
        expect((await fetch(`${own.baseUrl}/healthz`)).status).toBe(200);
      } finally {
        await own.stop();
      }
    } finally {
      await late.kill();
    }
  });

  it("gives up after those 15 s when it never comes: exits non-zero, saying so", { timeout: 60_000 }, async () => {
    const port = await freePort();
    const t0 = Date.now();
    const failed = await startServer({ MONGODB_URI: uriAt(port), ...DEADLINE_DEFAULT_ENV }, 40_000).then(
      async (s) => {
        await s.stop();
        return undefined;
      },
      (err: Error) => err,
    );
    const waited = Date.now() - t0;
    expect(failed?.message).toMatch(/start-up failed.*ECONNREFUSED/s);
    expect(waited).toBeGreaterThanOrEqual(15_000);
    expect(waited).toBeLessThan(30_000);
  });
});
