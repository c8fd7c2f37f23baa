// CORS for browser clients: preflights and answers for allowed origins only, over REST, Connect and gRPC-Web; writes from other origins refused in each protocol's own form.
import { fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, cors as connectCors } from "@connectrpc/connect";
import { errorFromJsonBytes } from "@connectrpc/connect/protocol-connect";
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseUrl } from "../helpers/api.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { grpcWebTrailers, h2Request } from "../helpers/raw.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";

const APP = "https://app.example.com";
let server: RunningServer;
let key: string;

beforeAll(async () => {
  server = await startServer({ CORS_ORIGINS: `${APP}, http://localhost:5173/` });
  key = (await fixturesAt(server.baseUrl).newAccount({ full_name: "Cors Browser" })).key;
});

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

function preflight(url: string, origin: string, method: string, headers: string): Promise<Response> {
  return fetch(url, { method: "OPTIONS", headers: { Origin: origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers } });
}

function list(value: string | null): string[] {
  return (value ?? "").split(",").map((s) => s.trim().toLowerCase()).filter((s) => s !== "");
}

describe("CORS with CORS_ORIGINS set", () => {
  it("answers a Connect preflight with Connect's headers plus X-API-KEY, X-Request-Id and Idempotency-Key", async () => {
    const res = await preflight(`${server.baseUrl}/scheduling.v1.UserService/GetUser`, APP, "POST", "content-type,connect-protocol-version,x-api-key");
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP);
    expect(list(res.headers.get("vary"))).toContain("origin");
    const allowed = list(res.headers.get("access-control-allow-headers"));
    for (const h of [...connectCors.allowedHeaders, "X-API-KEY", "X-Request-Id", "Idempotency-Key"]) expect(allowed).toContain(h.toLowerCase());
    expect(allowed).not.toContain("x-admin-token");
    expect(list(res.headers.get("access-control-allow-methods"))).toEqual(["post", "get", "put", "patch", "delete"]);
    expect(res.headers.get("access-control-max-age")).toBe("7200");
  });

  it("answers a REST preflight for the second origin (trailing slash in the setting ignored)", async () => {
    const res = await preflight(`${server.baseUrl}/api/v1/user`, "http://localhost:5173", "PATCH", "content-type,x-api-key");
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
  });

  it("lets the browser read REST, Connect and gRPC-Web answers and their status headers", async () => {
    const restRes = await fetch(`${server.baseUrl}/api/v1/user`, { headers: { Origin: APP, "X-API-KEY": key } });
    expect(restRes.status).toBe(200);
    expect(restRes.headers.get("access-control-allow-origin")).toBe(APP);
    const exposed = list(restRes.headers.get("access-control-expose-headers"));
    for (const h of [...connectCors.exposedHeaders, "X-Request-Id", "Idempotent-Replayed"]) expect(exposed).toContain(h.toLowerCase());

    const connectRes = await fetch(`${server.baseUrl}/scheduling.v1.UserService/GetUser`, {
      method: "POST",
      headers: { Origin: APP, "Content-Type": "application/json", "Connect-Protocol-Version": "1", "X-API-KEY": key },
      body: "{}",
    });
    expect(connectRes.status).toBe(200);
    expect(connectRes.headers.get("access-control-allow-origin")).toBe(APP);

    const webRes = await fetch(`${server.baseUrl}/scheduling.v1.UserService/GetUser`, {
      method: "POST",
      headers: { Origin: APP, "Content-Type": "application/grpc-web+proto", "X-Grpc-Web": "1", "X-API-KEY": key },
      body: new Uint8Array([0, 0, 0, 0, 0]),
    });
    expect(webRes.status).toBe(200);
    expect(webRes.headers.get("access-control-allow-origin")).toBe(APP);
    expect(webRes.headers.get("grpc-status") ?? "0").toBe("0");
  });

  it("gives nothing to another origin", async () => {
    const pre = await preflight(`${server.baseUrl}/scheduling.v1.UserService/GetUser`, "https://evil.example", "POST", "content-type,x-api-key");
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    expect(pre.headers.get("access-control-allow-headers")).toBeNull();
    const res = await fetch(`${server.baseUrl}/api/v1/user`, { headers: { Origin: "https://evil.example", "X-API-KEY": key } });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    // The envelope adds Accept-Encoding (compression) to CORS's Origin rather than replacing it.
    expect(list(res.headers.get("vary"))).toEqual(expect.arrayContaining(["origin", "accept-encoding"]));
  });

  it("refuses a cross-origin RPC write from another origin in each protocol's own error form, PERMISSION_DENIED with its details", async () => {
    const path = "/scheduling.v1.EventService/CreateEvent";
    const message = "cross-origin write refused: https://evil.example is not an allowed origin (CORS_ORIGINS)";
    const reasonIn = (bin: string | undefined) =>
      fromBinary(StatusSchema, Buffer.from(bin ?? "", "base64")).details.map((d) => anyUnpack(d, ErrorInfoSchema)).find((d) => d !== undefined)?.reason;
    const headers = { Origin: "https://evil.example", "X-API-KEY": key };
    // Connect: 403 with the error's details.
    const connect = await fetch(`${server.baseUrl}${path}`, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: "{}" });
    expect(connect.status).toBe(403);
    const error = errorFromJsonBytes(new Uint8Array(await connect.arrayBuffer()), undefined, new ConnectError("", Code.Unknown));
    expect({ code: error.code, message: error.rawMessage, reason: error.findDetails(ErrorInfoSchema)[0]?.reason }).toEqual({ code: Code.PermissionDenied, message, reason: "PERMISSION_DENIED" });
    // gRPC-Web: 200 and a trailer frame.
    const web = await fetch(`${server.baseUrl}${path}`, { method: "POST", headers: { ...headers, "Content-Type": "application/grpc-web+proto", "X-Grpc-Web": "1" }, body: new Uint8Array(5) });
    expect(web.status).toBe(200);
    const trailers = grpcWebTrailers(Buffer.from(await web.arrayBuffer()));
    expect({ status: trailers["grpc-status"], message: decodeURIComponent(trailers["grpc-message"] ?? ""), reason: reasonIn(trailers["grpc-status-details-bin"]) }).toEqual({ status: "7", message, reason: "PERMISSION_DENIED" });
    // gRPC: 200 and status trailers, with a deadline (Connect's handlers) and without (the fast path) alike.
    const session = http2.connect(server.baseUrl);
    session.on("error", () => undefined);
    try {
      for (const deadline of [{}, { "grpc-timeout": "5S" }] as Record<string, string>[]) {
        const h = { ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", origin: "https://evil.example", "x-api-key": key, ...deadline };
        const ans = await h2Request(session, h, Buffer.alloc(5));
        expect({ status: ans.status, grpc: ans.grpcStatus, message: decodeURIComponent(ans.grpcMessage ?? ""), reason: reasonIn(ans.grpcDetails) }).toEqual({ status: 200, grpc: "7", message, reason: "PERMISSION_DENIED" });
      }
    } finally {
      session.close();
    }
  });

  // The server's 30 s to start, not 10: loading the service's modules alone took over 10 s with the machine's two
  // cores shared by the whole suite, and the test failed on "did not start" before the process could say why.
  it("refuses a malformed CORS_ORIGINS at start", { timeout: 40_000 }, async () => {
    await expect(startServer({ CORS_ORIGINS: "app.example.com" })).rejects.toThrow(/CORS_ORIGINS entries must be/);
  });
});

describe("CORS by default (CORS_ORIGINS unset)", () => {
  it("answers no preflight and adds no CORS header", async () => {
    const pre = await preflight(`${baseUrl()}/scheduling.v1.UserService/GetUser`, APP, "POST", "content-type");
    expect(pre.status).not.toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    const res = await fetch(`${baseUrl()}/api/v1/user`, { headers: { Origin: APP } });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });
});
