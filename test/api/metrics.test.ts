// GET /metrics: Prometheus text with request counts and durations by protocol, route or RPC and status, and database state.
import { networkInterfaces } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { baseUrl, CONNECT_KINDS, connectClient, grpcUnary, newAccount, rest, rpcError } from "../helpers/api.js";
import { startServer, type RunningServer } from "../helpers/server.js";

async function scrape(): Promise<string> {
  const res = await fetch(`${baseUrl()}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return res.text();
}

/** The value of one sample, 0 when the series does not exist yet. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.lastIndexOf("}"));
    const have = inside.split(/,(?=\w+=")/);
    if (want.every((w) => have.includes(w)) && have.length === want.length) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return 0;
}

describe("GET /metrics", () => {
  it("counts each request by protocol, route or RPC, and status, with a duration histogram", async () => {
    const { key } = await newAccount();
    const rpc = { route: "scheduling.v1.UserService/GetUserSettings" };
    const before = await scrape();
    await rest("GET", "/user/settings", { key });
    await rest("GET", "/user/settings", { key: "wrong" });
    for (const kind of CONNECT_KINDS) await connectClient(UserService, kind, key).getUserSettings({});
    await grpcUnary(UserService, "getUserSettings", {}, key);
    const err = await rpcError(() => grpcUnary(UserService, "getUserSettings", {}, "wrong"));
    expect(err.code).toBe(16);
    const after = await scrape();

    const cases: [Record<string, string>, number][] = [
      [{ protocol: "rest", route: "GET /api/v1/user/settings", status: "200" }, 1],
      [{ protocol: "rest", route: "GET /api/v1/user/settings", status: "401" }, 1],
      [{ protocol: "connect", ...rpc, status: "ok" }, 2],
      [{ protocol: "grpc-web", ...rpc, status: "ok" }, 1],
      [{ protocol: "grpc", ...rpc, status: "ok" }, 1],
      [{ protocol: "grpc", ...rpc, status: "unauthenticated" }, 1],
    ];
    for (const [labels, n] of cases) {
      // Other files run against the same server at the same time, so their calls may be counted too.
      const counted = sample(after, "scheduling_requests_total", labels) - sample(before, "scheduling_requests_total", labels);
      expect(counted, JSON.stringify(labels)).toBeGreaterThanOrEqual(n);
      const timed = sample(after, "scheduling_request_duration_seconds_count", labels) - sample(before, "scheduling_request_duration_seconds_count", labels);
      expect(timed, JSON.stringify(labels)).toBeGreaterThanOrEqual(n);
      expect(sample(after, "scheduling_request_duration_seconds_bucket", { ...labels, le: "+Inf" })).toBe(sample(after, "scheduling_request_duration_seconds_count", labels));
    }
  });

  it("labels REST requests by route pattern, so ids and private keys never become labels", async () => {
    const secret = `pk${Date.now()}NeverALabel`;
    await fetch(`${baseUrl()}/api/v1/public/bookings/${secret}`);
    await fetch(`${baseUrl()}/api/v1/no/such/${secret}`);
    await fetch(`${baseUrl()}/scheduling.v1.NoService/${secret}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    const text = await scrape();
    expect(text).not.toContain(secret);
    expect(sample(text, "scheduling_requests_total", { protocol: "rest", route: "unmatched", status: "404" })).toBeGreaterThanOrEqual(1);
  });

  it("reports the database connection, its pool, the embedded server and the process", async () => {
    await rest("GET", "/user", { key: "warm-the-pool" });
    const text = await scrape();
    expect(sample(text, "scheduling_mongodb_connection_state", { state: "connected" })).toBe(1);
    expect(sample(text, "scheduling_mongodb_connection_state", { state: "disconnected" })).toBe(0);
    expect(text).toMatch(/^scheduling_mongodb_up 1$/m);
    expect(sample(text, "scheduling_mongodb_pool_connections", { state: "open" })).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^scheduling_mongodb_pool_connections\{state="in_use"\} \d+$/m);
    expect(text).toMatch(/^scheduling_mongodb_pool_max_size 20$/m);
    if (process.env.MONGODB_URI) expect(text).not.toMatch(/^scheduling_embedded_database_up /m);
    else expect(text).toMatch(/^scheduling_embedded_database_up 1$/m);
    for (const name of ["process_cpu_user_seconds_total", "process_resident_memory_bytes", "nodejs_eventloop_lag_seconds", "nodejs_heap_size_used_bytes"]) {
      expect(text).toMatch(new RegExp(`^${name} \\d`, "m"));
    }
  });
});

/** This machine's first address that is not loopback: a request to it comes from a non-loopback peer. */
const OUTSIDE = Object.values(networkInterfaces()).flat().find((a) => a !== undefined && !a.internal && a.family === "IPv4")?.address;
/** The port of `server` at `address` (the service listens on every interface, HOST=0.0.0.0, as in its image). */
const at = (server: RunningServer, address: string) => `http://${address}:${server.port}`;

describe("GET /metrics without METRICS_TOKEN, on every interface (as in a container)", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ HOST: "0.0.0.0" }, 120_000);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("answers this machine (loopback)", async () => {
    expect((await fetch(`${at(server, "127.0.0.1")}/metrics`)).status).toBe(200);
  });

  it("refuses a request a proxy forwarded, and one from another address: 403 naming METRICS_TOKEN", async () => {
    const forwarded = await fetch(`${at(server, "127.0.0.1")}/metrics`, { headers: { "X-Forwarded-For": "203.0.113.9" } });
    const refusal = { success: false, message: "metrics are served to this machine only; set METRICS_TOKEN to scrape them from elsewhere", data: {}, status: "forbidden" };
    expect([forwarded.status, await forwarded.json()]).toEqual([403, refusal]);
    if (OUTSIDE === undefined) return;
    const outside = await fetch(`${at(server, OUTSIDE)}/metrics`);
    expect([outside.status, await outside.json()]).toEqual([403, refusal]);
    // The rest of the service answers there as ever.
    expect((await fetch(`${at(server, OUTSIDE)}/healthz`)).status).toBe(200);
  });
});

describe("GET /metrics with METRICS_TOKEN", () => {
  const TOKEN = "scrape-token-0123456789";
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ METRICS_TOKEN: TOKEN, HOST: "0.0.0.0" }, 120_000);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it.each([
    ["no Authorization", undefined],
    ["a wrong token", `Bearer ${TOKEN}x`],
    ["a prefix of the token", `Bearer ${TOKEN.slice(0, -1)}`],
    ["the token without Bearer", TOKEN],
    ["Basic credentials", `Basic ${Buffer.from(`prometheus:${TOKEN}`).toString("base64")}`],
  ])("refuses %s: 401 in the envelope, with WWW-Authenticate", async (_what, authorization) => {
    const res = await fetch(`${server.baseUrl}/metrics`, { headers: authorization === undefined ? {} : { authorization } });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    expect(await res.json()).toEqual({ success: false, message: "metrics token is missing or invalid", data: {}, status: "unauthorized" });
  });

  it("answers a scrape with the token (any case of Bearer), from any address", async () => {
    for (const scheme of ["Bearer", "bearer"]) {
      const res = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `${scheme} ${TOKEN}` } });
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/^scheduling_mongodb_up 1$/m);
    }
    if (OUTSIDE === undefined) return;
    const outside = await fetch(`${at(server, OUTSIDE)}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(outside.status).toBe(200);
    expect((await fetch(`${at(server, OUTSIDE)}/metrics`)).status).toBe(401);
  });

  it("stops the start when the token is too short", async () => {
    await expect(startServer({ METRICS_TOKEN: "short" })).rejects.toThrow(/METRICS_TOKEN must be at least 16 characters without spaces/);
  });
});
