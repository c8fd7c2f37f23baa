// Unit tests for StreamExchange (src/platform/transport/grpcStream.ts) on real node:http2 streams: once a call is over, its stream holds nothing of the call.
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StreamExchange } from "../../src/platform/transport/grpcStream.js";
import { until } from "../helpers/wait.js";

/*
 * node:http2 keeps a stream until a full garbage collection, so whatever a closed stream still references is moved
 * to old space with it: a listener of the body reader kept the whole call (its context, abort signal, observer
 * record) alive, and the service's old space grew by kilobytes per gRPC call between full collections.
 */

interface Seen {
  stream: http2.ServerHttp2Stream;
  closed: string[];
}

let server: http2.Http2Server;
let port: number;
const seen: Seen[] = [];

beforeAll(async () => {
  server = http2.createServer();
  // As the fast unary path answers (src/platform/transport/fastUnary.ts): the body is read through the exchange,
  // the answer is written with trailers, and the observer and the in-flight count wait for the close.
  server.on("stream", (stream, headers) => {
    const exchange = new StreamExchange(stream, headers);
    exchange.claim();
    const entry: Seen = { stream, closed: [] };
    seen.push(entry);
    exchange.once("close", () => entry.closed.push("observer"));
    exchange.once("close", () => entry.closed.push("in flight"));
    const chunks: Buffer[] = [];
    exchange.on("data", (chunk) => chunks.push(chunk));
    exchange.on("error", () => entry.closed.push("error"));
    exchange.on("end", () => {
      exchange.writeHead(200, { "content-type": "application/grpc+proto" });
      exchange.addTrailers({ "grpc-status": "0" });
      exchange.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** One call on `session`: its answer's body and trailers. */
function call(session: http2.ClientHttp2Session, body: Buffer): Promise<{ body: Buffer; trailers: http2.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ":method": "POST", ":path": "/scheduling.v1.UserService/GetUser", "content-type": "application/grpc" });
    const chunks: Buffer[] = [];
    let trailers: http2.IncomingHttpHeaders = {};
    req.on("trailers", (t) => (trailers = t));
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve({ body: Buffer.concat(chunks), trailers }));
    req.on("error", reject);
    req.end(body);
  });
}

describe("StreamExchange", () => {
  it("calls everyone waiting for the close in order, then leaves none of the call's listeners on the closed stream", async () => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    try {
      const calls = 20;
      for (let i = 0; i < calls; i++) {
        const answer = await call(session, Buffer.from(`message ${i}`));
        expect(answer.body.toString()).toBe(`message ${i}`);
        expect(answer.trailers["grpc-status"]).toBe("0");
      }
      await until("every server stream closed", () => seen.length === calls && seen.every((s) => s.stream.closed && s.closed.length === 2));
      for (const { stream, closed } of seen) {
        expect(closed).toEqual(["observer", "in flight"]);
        // The reader's 'data' and 'end' listeners and its 'error' listener are gone; what is left is node:http2's own
        // and the exchange's one 'error' listener that captures nothing.
        expect(stream.listenerCount("data")).toBe(0);
        expect(stream.listenerCount("error")).toBe(1);
        expect(stream.listeners("end").some((fn) => fn.toString().includes("writeHead"))).toBe(false);
        expect(stream.listenerCount("close")).toBe(0);
      }
    } finally {
      session.close();
    }
  });
});
