// One TCP port for everything: an HTTP/2 connection preface goes to node:http2 (h2c), anything else to HTTP/1.1.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { envelope } from "../rest/envelope.js";
import { PEER_ADDRESS_HEADER } from "../services/context.js";

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export interface Listener {
  port: number;
  http1: http.Server;
  http2: http2.Http2Server;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes every connection. */
  close(graceMs: number): Promise<void>;
  inFlight(): number;
}

/**
 * Requests node:http cannot parse (oversized headers or URL, bad framing, slow headers) never reach Express;
 * they still get the JSON envelope instead of Node's bare status line.
 */
function answerUnparsable(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: net.Socket | import("node:stream").Duplex): void {
  if (err.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
  const message = status === 431 ? "request headers or url too large" : status === 408 ? "request timeout" : "malformed HTTP request";
  const body = JSON.stringify(envelope(status, message, {}));
  // An answer to HEAD has no body; a client would read the body as the next response.
  const head = err.rawPacket?.subarray(0, 5).toString("latin1") === "HEAD ";
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? "" : body}`,
  );
}

export async function listen(
  host: string,
  port: number,
  http1Handler: http.RequestListener,
  http2Handler: (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void,
  /**
   * Answers an HTTP/2 stream itself and returns what emits 'close' when the answer is over (counted in flight
   * until then), or returns undefined and leaves the stream to `http2Handler`.
   */
  http2StreamHandler?: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => { once(event: "close", fn: () => void): unknown } | undefined,
): Promise<Listener> {
  let active = 0;
  const track = (res: { once(event: "close", fn: () => void): unknown }) => {
    active++;
    res.once("close", () => {
      active--;
    });
  };
  const h1 = http.createServer({ keepAliveTimeout: 5000, requestTimeout: 60_000, headersTimeout: 30_000 }, (req, res) => {
    track(res);
    req.headers[PEER_ADDRESS_HEADER] = req.socket.remoteAddress ?? "";
    http1Handler(req, res);
  });
  h1.on("clientError", answerUnparsable);
  // h1 never listens itself (connections are handed to it), but node:http starts tracking connections only on
  // 'listening': without it closeIdleConnections() does nothing and requestTimeout/headersTimeout are never checked.
  h1.emit("listening");
  const h2 = http2.createServer({}, (req, res) => {
    track(res);
    http2Handler(req, res);
  });
  // Every stream passes here first: the peer address goes into its headers (the compatibility layer's request
  // reads that same object), then the stream handler may answer it. What it declines goes to the compatibility
  // layer's own 'stream' listener (the one that builds the request and response for http2Handler), called
  // exactly as node:http2 would.
  const compat = h2.listeners("stream") as Array<(...args: unknown[]) => void>;
  h2.removeAllListeners("stream");
  h2.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, ...rest: unknown[]) => {
    headers[PEER_ADDRESS_HEADER] = stream.session?.socket?.remoteAddress ?? "";
    const answering = http2StreamHandler?.(stream, headers);
    if (answering) {
      track(answering);
      return;
    }
    for (const listener of compat) listener.call(h2, stream, headers, ...rest);
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (s) => {
    sessions.add(s);
    s.once("close", () => sessions.delete(s));
  });
  const sockets = new Set<net.Socket>();

  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, PREFACE.length);
      const isPrefix = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (isPrefix && seen.length < PREFACE.length) return; // not enough bytes to decide yet
      socket.removeListener("data", onData);
      // The bytes go back into the socket's buffer. node:http2 takes them from there on the next tick (resuming
      // first would drop them, as nothing listens for 'data'); node:http reads them once the socket flows again.
      socket.pause();
      socket.unshift(seen);
      if (isPrefix) {
        h2.emit("connection", socket);
      } else {
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
  });
  // A slow client must not hold a socket open before it has said which protocol it speaks.
  tcp.on("connection", (socket: net.Socket) => socket.setTimeout(60_000, () => socket.destroy()));

  await new Promise<void>((resolve, reject) => {
    tcp.once("error", reject);
    tcp.listen(port, host, () => {
      tcp.off("error", reject);
      resolve();
    });
  });
  const address = tcp.address() as net.AddressInfo;

  return {
    port: address.port,
    http1: h1,
    http2: h2,
    inFlight: () => active,
    async close(graceMs: number) {
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()));
      h1.closeIdleConnections();
      for (const s of sessions) s.close(); // GOAWAY: streams in progress finish, no new ones start
      const deadline = Date.now() + graceMs;
      while (active > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 25));
        h1.closeIdleConnections();
      }
      for (const s of sessions) s.destroy();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
