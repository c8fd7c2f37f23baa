// Request logs: exactly one JSON line per request on every protocol, with id, protocol, route, status and duration; no secrets.
import { createClient, ConnectError, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { ADMIN_TOKEN, startServer, type RunningServer } from "../helpers/server.js";
import type { Json } from "../helpers/api.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { until } from "../helpers/wait.js";

let server: RunningServer;
let key: string;

beforeAll(async () => {
  server = await startServer({ LOG_LEVEL: "info" });
  key = (await fixturesAt(server.baseUrl).newAccount({ full_name: "Log Reader" }, { "X-Request-Id": "logs-admin" })).key;
});

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

function lines(): Json[] {
  return server
    .logs()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
}

/** The request lines carrying this id, once the server has written at least one (it writes as the answer ends). */
async function linesOf(id: string): Promise<Json[]> {
  const of = () => lines().filter((l) => l.msg === "request" && l.request_id === id);
  await until(`a request line with id ${id}`, () => of().length > 0, { timeoutMs: 2000, everyMs: 20 });
  await new Promise((r) => setTimeout(r, 50)); // a second line, if any, would be written by now
  return of();
}

function transports(): Record<string, Transport> {
  const baseUrl = server.baseUrl;
  return {
    "connect-h1": createConnectTransport({ baseUrl, httpVersion: "1.1" }),
    "connect-h2": createConnectTransport({ baseUrl, httpVersion: "2" }),
    "grpc-web": createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
    grpc: createGrpcTransport({ baseUrl }),
  };
}

describe("request log lines", () => {
  it("the start-up line keeps msg before port, as the test harness and operators read it", () => {
    expect(server.logs()).toMatch(/"msg":"listening".*?"port":\d+/);
    const first = lines().find((l) => l.msg === "listening");
    expect(first).toMatchObject({ level: "info", port: server.port, embedded_database: expect.any(Boolean) });
  });

  it("REST: one line with the route pattern, status and the echoed request id", async () => {
    const res = await fetch(`${server.baseUrl}/api/v1/user`, { headers: { "X-API-KEY": key, "X-Request-Id": "logs-rest-1" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe("logs-rest-1");
    const found = await linesOf("logs-rest-1");
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ level: "info", protocol: "rest", http_version: "1.1", method: "GET", route: "GET /api/v1/user", status: 200, http_status: 200 });
    expect(found[0].duration_ms).toBeGreaterThan(0);
    expect(found[0].duration_ms).toBeLessThan(10_000);
  });

  for (const [kind, protocol, httpVersion] of [
    ["connect-h1", "connect", "1.1"],
    ["connect-h2", "connect", "2.0"],
    ["grpc-web", "grpc-web", "1.1"],
    ["grpc", "grpc", "2.0"],
  ] as const) {
    it(`${kind}: one line for a success and one for an error, with the RPC and its code`, async () => {
      const client = createClient(UserService, transports()[kind]);
      let echoed: string | null = null;
      const ok = await client.getUser({}, { headers: { "x-api-key": key, "x-request-id": `logs-${kind}-ok` }, onHeader: (h) => (echoed = h.get("x-request-id")) });
      expect(ok.user?.apiKey).toBe(key);
      expect(echoed).toBe(`logs-${kind}-ok`);
      const err = await client.getUser({}, { headers: { "x-request-id": `logs-${kind}-err` } }).catch((e: unknown) => ConnectError.from(e));
      expect(err).toBeInstanceOf(ConnectError);

      const okLines = await linesOf(`logs-${kind}-ok`);
      expect(okLines).toHaveLength(1);
      expect(okLines[0]).toMatchObject({ protocol, http_version: httpVersion, route: "scheduling.v1.UserService/GetUser", status: "ok" });
      expect(typeof okLines[0].duration_ms).toBe("number");
      const errLines = await linesOf(`logs-${kind}-err`);
      expect(errLines).toHaveLength(1);
      expect(errLines[0]).toMatchObject({ level: "info", protocol, route: "scheduling.v1.UserService/GetUser", status: "unauthenticated" });
    });
  }

  it("makes an id when none (or an unusable one) is sent, and echoes it", async () => {
    for (const sent of [undefined, "has spaces in it", "x".repeat(129)]) {
      const res = await fetch(`${server.baseUrl}/healthz`, { headers: sent === undefined ? {} : { "X-Request-Id": sent } });
      const id = res.headers.get("x-request-id")!;
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const found = await linesOf(id);
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({ protocol: "http", route: "GET /healthz", status: 200 });
    }
  });

  it("gRPC over HTTP/2: the id goes out as a never-indexed header, so it stays out of the connection's HPACK table", async () => {
    // A new value on every answer gains nothing from the table and pushes out the headers that do repeat.
    const session = http2.connect(server.baseUrl);
    try {
      for (const sent of ["logs-hpack-1", undefined]) {
        const req = session.request({ ":method": "POST", ":path": "/scheduling.v1.UserService/GetUser", "content-type": "application/grpc", te: "trailers", "x-api-key": key, ...(sent ? { "x-request-id": sent } : {}) });
        req.end(Buffer.alloc(5));
        const head = await new Promise<http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader>((resolve, reject) => req.once("response", resolve).once("error", reject));
        req.resume();
        await new Promise((r) => req.once("close", r));
        expect(head[":status"]).toBe(200);
        expect(head["x-request-id"]).toEqual(sent ?? expect.stringMatching(/^[0-9a-f-]{36}$/));
        expect((head as Record<symbol, unknown>)[http2.sensitiveHeaders]).toEqual(["x-request-id"]);
      }
    } finally {
      session.close();
    }
  });

  it("logs route patterns, never raw URLs, and never a key, admin token or booking private key", async () => {
    const privateKey = `pk${Date.now()}SECRETvalue`;
    const res = await fetch(`${server.baseUrl}/api/v1/public/bookings/${privateKey}?note=${privateKey}`, { headers: { "X-Request-Id": "logs-private" } });
    expect([404, 200]).toContain(res.status);
    const found = await linesOf("logs-private");
    expect(found).toHaveLength(1);
    expect(found[0].route).toMatch(/^(GET \/api\/v1\/public\/bookings\/:\w+|unmatched)$/);
    // Wrong credentials are secrets too: a caller may have pasted a real key into the wrong header.
    await fetch(`${server.baseUrl}/api/v1/user`, { headers: { "X-API-KEY": `${key}x`, "X-ADMIN-TOKEN": ADMIN_TOKEN, "X-Request-Id": "logs-bad-key" } });
    expect(await linesOf("logs-bad-key")).toHaveLength(1);
    const text = server.logs();
    for (const secret of [key, ADMIN_TOKEN, privateKey]) expect(text).not.toContain(secret);
    for (const l of lines()) expect(Object.keys(l)).not.toContain("headers");
  });
});

describe("LOG_LEVEL", () => {
  // The refusal comes before anything starts, but node itself may take seconds to get there on a loaded machine.
  it("refuses an unknown level at start", { timeout: 90_000 }, async () => {
    await expect(startServer({ LOG_LEVEL: "chatty" }, 60_000)).rejects.toThrow(/LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got \\?"chatty\\?"/);
  });

  it("at warn, request lines (info) are not written", async () => {
    const quiet = await startServer({ LOG_LEVEL: "warn" });
    try {
      await fetch(`${quiet.baseUrl}/healthz`, { headers: { "X-Request-Id": "logs-quiet" } });
      await new Promise((r) => setTimeout(r, 200));
      expect(quiet.logs()).not.toContain("logs-quiet");
    } finally {
      await quiet.stop();
    }
  });
});
