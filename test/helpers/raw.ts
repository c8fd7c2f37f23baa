// Raw HTTP/1.1 requests with any method, path bytes and headers (fetch refuses many of them), raw gRPC over HTTP/2, and envelope shape checks.
import http from "node:http";
import http2 from "node:http2";
import { STATUS_NAMES } from "../../src/platform/rest/errors.js";

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body's bytes as they came (compressed, when the answer says so). */
  bytes: Buffer;
}

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** Sends one request as given; only the transport (not the status) can make it fail. */
export function rawRequest(baseUrl: string, req: RawRequest, timeoutMs = 10_000): Promise<RawAnswer> {
  return sendRaw(baseUrl, req, timeoutMs, agent).catch((err: Error & { reusedSocket?: boolean; code?: string }) => {
    // The server closes a connection idle for its keep-alive time (5 s); a request the agent wrote onto it just as
    // it closed meets a reset before the server read it. Node's documented answer (request.reusedSocket): send it
    // again, here on a connection of its own. A reset on a fresh connection is the server's and fails the test.
    if (err.reusedSocket === true && err.code === "ECONNRESET") return sendRaw(baseUrl, req, timeoutMs, false);
    throw err;
  });
}

function sendRaw(baseUrl: string, req: RawRequest, timeoutMs: number, via: http.Agent | false): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const r = http.request(
      {
        agent: via,
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers: { ...(req.body === undefined || req.headers?.["transfer-encoding"] ? {} : { "content-length": String(Buffer.byteLength(req.body)) }), ...req.headers },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const bytes = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: bytes.toString("utf8"), bytes });
        });
        res.on("error", reject);
      },
    );
    r.on("timeout", () => r.destroy(new Error(`no answer in ${timeoutMs} ms to ${req.method} ${req.path.slice(0, 200)}`)));
    r.on("error", (err: Error & { reusedSocket?: boolean }) => {
      err.reusedSocket = r.reusedSocket;
      reject(err);
    });
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

/** Why an /api/v1 answer is not exactly the envelope {success, message, data, status}, or null when it is. */
export function envelopeProblem(ans: RawAnswer): string | null {
  if (!/^application\/json/.test(String(ans.headers["content-type"]))) return `content-type ${ans.headers["content-type"]}`;
  let body: unknown;
  try {
    body = JSON.parse(ans.text);
  } catch {
    return "body is not JSON";
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "body is not an object";
  const keys = Object.keys(body).sort().join(",");
  if (keys !== "data,message,status,success") return `keys ${keys}`;
  const env = body as { success: unknown; message: unknown; data: unknown; status: unknown };
  if (typeof env.message !== "string") return "message is not a string";
  if (typeof env.data !== "object" || env.data === null) return "data is not an object or array";
  if (env.success !== ans.status < 400) return `success ${String(env.success)} with HTTP ${ans.status}`;
  const expected = ans.status < 400 ? ans.status : STATUS_NAMES[ans.status];
  if (env.status !== expected) return `status field ${JSON.stringify(env.status)} with HTTP ${ans.status}`;
  return null;
}

/** A gRPC length-prefixed message: the flag byte (1 = compressed), the length (4 bytes, big-endian), the bytes. */
export function grpcFrame(message: Uint8Array, flag = 0): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out[0] = flag;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

export interface H2Answer {
  /** Undefined when the stream closed before any response headers. */
  status?: number;
  /** From the trailers, or from the headers of a trailers-only answer. */
  grpcStatus?: string;
  grpcMessage?: string;
  /** The `grpc-status-details-bin` trailer as sent (base64 of a google.rpc.Status). */
  grpcDetails?: string;
  body: Buffer;
}

/**
 * One request on an HTTP/2 session, resolved when its stream closes. `body` is sent whole, or with `reset` only its
 * first 3 bytes before the caller cancels the stream (RST_STREAM CANCEL). Rejects when node:http2 refuses the
 * headers themselves (nothing was sent).
 */
export function h2Request(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body: Buffer, reset = false): Promise<H2Answer> {
  return new Promise((resolve) => {
    const stream = session.request(headers);
    const answer: H2Answer = { body: Buffer.alloc(0) };
    const chunks: Buffer[] = [];
    const grpcOf = (h: http2.IncomingHttpHeaders) => {
      if (h["grpc-status"] !== undefined) answer.grpcStatus = String(h["grpc-status"]);
      if (h["grpc-message"] !== undefined) answer.grpcMessage = String(h["grpc-message"]);
      if (h["grpc-status-details-bin"] !== undefined) answer.grpcDetails = String(h["grpc-status-details-bin"]);
    };
    stream.on("response", (h) => {
      answer.status = Number(h[":status"]);
      grpcOf(h);
    });
    stream.on("trailers", grpcOf);
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", () => undefined);
    stream.on("close", () => resolve({ ...answer, body: Buffer.concat(chunks) }));
    if (reset) {
      stream.write(body.subarray(0, 3));
      setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), 1);
    } else stream.end(body);
  });
}

/** The trailers of a gRPC-Web body: its frame flagged 0x80 holds "name: value" lines. */
export function grpcWebTrailers(body: Buffer): Record<string, string> {
  const trailers: Record<string, string> = {};
  for (let at = 0; at + 5 <= body.length; at += 5 + body.readUInt32BE(at + 1)) {
    if (body[at] !== 0x80) continue;
    for (const line of body.subarray(at + 5, at + 5 + body.readUInt32BE(at + 1)).toString("utf8").split("\r\n")) {
      if (line.includes(":")) trailers[line.slice(0, line.indexOf(":")).trim()] = line.slice(line.indexOf(":") + 1).trim();
    }
  }
  return trailers;
}
