// Idle connections (CONNECTION_IDLE_TIMEOUT_MS): closed when they say nothing or hold no stream, never cut while a stream is open however quiet.
import { once } from "node:events";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckRequestSchema, HealthCheckResponse_ServingStatus as ServingStatus, HealthCheckResponseSchema } from "../../gen/grpc/health/v1/health_pb.js";
import { grpcFrame } from "../helpers/raw.js";
import { grpcClientAt, unaryAt } from "../helpers/grpcAt.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

const IDLE_MS = 1000;
/** The sweep runs a quarter of the timeout apart, so a connection closes between 1 and 1.25 timeouts; the rest is slack for a loaded machine. */
const LATEST_MS = IDLE_MS * 3;
const QUIET_MS = IDLE_MS * 3;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with the ms from now until `emitter` emits `event`, or rejects after `limitMs`. */
/**
 * Milliseconds until `emitter` emits `event`. Unlike events.once, an 'error' meanwhile is not a failure: the server
 * may close a connection with a reset (ECONNRESET on a socket whose bytes it did not read), and what the tests
 * check is that, and when, it closed. The callers swallow errors with their own listener.
 */
async function msUntil(emitter: NodeJS.EventEmitter, event: string, limitMs: number): Promise<number> {
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${event} within ${limitMs} ms`)), limitMs);
    emitter.once(event, () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return performance.now() - t0;
}

const watchRequest = Buffer.from(toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, { service: "" })));

describe(`CONNECTION_IDLE_TIMEOUT_MS=${IDLE_MS}`, () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ CONNECTION_IDLE_TIMEOUT_MS: String(IDLE_MS) });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("closes a connection that sends nothing after the timeout", async () => {
    const socket = net.connect(server.port, "127.0.0.1");
    socket.on("error", () => {});
    await once(socket, "connect");
    const ms = await msUntil(socket, "close", LATEST_MS + 1000);
    expect(ms).toBeGreaterThanOrEqual(IDLE_MS - 50);
    expect(ms).toBeLessThan(LATEST_MS);
  });

  it("closes a connection that trickles the HTTP/2 preface a byte at a time, a timeout after it connected", async () => {
    const socket = net.connect(server.port, "127.0.0.1");
    socket.on("error", () => {});
    await once(socket, "connect");
    const preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    let sent = 0;
    const trickle = setInterval(() => {
      if (sent < preface.length && socket.writable) socket.write(preface.subarray(sent, ++sent));
    }, IDLE_MS / 5);
    try {
      const ms = await msUntil(socket, "close", LATEST_MS + 1000);
      expect(ms).toBeGreaterThanOrEqual(IDLE_MS - 50);
      expect(ms).toBeLessThan(LATEST_MS);
      expect(sent).toBeLessThan(preface.length);
    } finally {
      clearInterval(trickle);
    }
  });

  it("sends a GOAWAY to an HTTP/2 connection whose last stream ended a timeout ago, and closes it", async () => {
    const session = http2.connect(server.baseUrl);
    session.on("error", () => {});
    const req = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Check", "content-type": "application/grpc", te: "trailers" });
    req.end(grpcFrame(watchRequest));
    req.resume();
    const trailers = (await once(req, "trailers"))[0] as http2.IncomingHttpHeaders;
    expect(trailers["grpc-status"]).toBe("0");
    await once(req, "close");
    const closed = once(session, "close");
    const ms = await msUntil(session, "goaway", LATEST_MS + 1000);
    expect(ms).toBeGreaterThanOrEqual(IDLE_MS - 50);
    expect(ms).toBeLessThan(LATEST_MS);
    await closed;
  });

  it("keeps a gRPC Watch that sends nothing for three timeouts, and closes the connection a timeout after it ends", async () => {
    const session = http2.connect(server.baseUrl);
    session.on("error", () => {});
    let goaway = false;
    session.on("goaway", () => (goaway = true));
    const req = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Watch", "content-type": "application/grpc", te: "trailers" });
    req.on("error", () => {});
    req.end(grpcFrame(watchRequest));
    const first = (await once(req, "data"))[0] as Buffer;
    expect(fromBinary(HealthCheckResponseSchema, first.subarray(5)).status).toBe(ServingStatus.SERVING);
    let streamClosed = false;
    req.on("close", () => (streamClosed = true));

    await sleep(QUIET_MS);
    expect({ streamClosed, goaway, sessionClosed: session.closed || session.destroyed }).toEqual({ streamClosed: false, goaway: false, sessionClosed: false });

    req.close(http2.constants.NGHTTP2_CANCEL);
    const ms = await msUntil(session, "goaway", LATEST_MS + 1000);
    expect(ms).toBeLessThan(LATEST_MS);
  }, 15_000);

  it("keeps a Connect Watch over HTTP/1.1 that sends nothing for three timeouts", async () => {
    const body = Buffer.concat([Buffer.from([0, 0, 0, 0, 2]), Buffer.from("{}")]);
    const req = http.request(`${server.baseUrl}/grpc.health.v1.Health/Watch`, {
      method: "POST",
      agent: false,
      headers: { "content-type": "application/connect+json", "connect-protocol-version": "1", "content-length": body.length },
    });
    req.on("error", () => {});
    req.end(body);
    const [res] = (await once(req, "response")) as [http.IncomingMessage];
    expect(res.statusCode).toBe(200);
    const first = (await once(res, "data"))[0] as Buffer;
    expect(JSON.parse(first.subarray(5).toString())).toEqual({ status: "SERVING" });
    let socketClosed = false;
    req.socket!.on("close", () => (socketClosed = true));

    await sleep(QUIET_MS);
    expect({ socketClosed, complete: res.complete }).toEqual({ socketClosed: false, complete: false });
    req.destroy();
  }, 15_000);

  it("a grpc-js channel left idle past the timeout makes its next call on a new connection", async () => {
    const client = grpcClientAt(server.baseUrl);
    try {
      const check = () => unaryAt(client, Health.method.check, { service: "" });
      expect((await check()).status).toBe(ServingStatus.SERVING);
      const channel = client.getChannel();
      // The server's GOAWAY takes the channel out of READY, within two timeouts.
      await until("the idle channel out of READY", () => channel.getConnectivityState(false) !== grpc.connectivityState.READY, { timeoutMs: IDLE_MS * 2 });
      expect(channel.getConnectivityState(false)).not.toBe(grpc.connectivityState.READY);
      expect((await check()).status).toBe(ServingStatus.SERVING);
    } finally {
      client.close();
    }
  }, 15_000);
});

describe("CONNECTION_IDLE_TIMEOUT_MS bounds", () => {
  it("below 100 stops the start with a clear message", async () => {
    await expect(startServer({ CONNECTION_IDLE_TIMEOUT_MS: "50" })).rejects.toThrow(/CONNECTION_IDLE_TIMEOUT_MS must be an integer of at least 100, got \\"50\\"/);
  });

  it("above a day stops the start with a clear message", async () => {
    await expect(startServer({ CONNECTION_IDLE_TIMEOUT_MS: "86400001" })).rejects.toThrow(/CONNECTION_IDLE_TIMEOUT_MS must be at most 86400000, got \\"86400001\\"/);
  });
});
