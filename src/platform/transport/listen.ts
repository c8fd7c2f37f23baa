// One TCP port for everything: an HTTP/2 connection preface goes to node:http2 (h2c), anything else to HTTP/1.1.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { bodyBudget } from "./bodyBudget.js";

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/**
 * Open streams of an HTTP/2 session, since when (performance.now()) it has had none, and its TCP peer's address,
 * read once per connection: `session.socket` is a Proxy, and reading the address through it on every stream cost
 * a gRPC call more than its protobuf decoding.
 */
const OPEN_STREAMS = Symbol("open streams");
const IDLE_SINCE = Symbol("idle since");
const PEER = Symbol("peer address");
type CountedSession = http2.ServerHttp2Session & { [OPEN_STREAMS]: number; [IDLE_SINCE]: number; [PEER]: string };

export interface ListenOptions {
  /**
   * How long a connection may stay idle (CONNECTION_IDLE_TIMEOUT_MS): a connection that has not sent the bytes
   * that tell its protocol within this long of connecting is closed; an HTTP/2 connection that has had no open stream
   * for this long is sent a GOAWAY and closed (gRPC's "max connection idle"; clients open a new one on their
   * next call). A connection with a request or stream in progress is never closed for being quiet: a health
   * Watch may send nothing for hours. HTTP/1.1 keep-alive connections close 5 s after their last answer.
   */
  idleTimeoutMs: number;
  /** REQUEST_TIMEOUT_MS: an HTTP/1.1 request (headers and body) must arrive within this long (headers: 30 s at most). */
  requestTimeoutMs: number;
  /** Open connections in all (MAX_CONNECTIONS); one more is reset at once. */
  maxConnections: number;
  /** Open connections from one TCP peer address (MAX_CONNECTIONS_PER_ADDRESS); 0: no cap. */
  maxConnectionsPerAddress: number;
  /** Told of every connection refused by a cap (for metrics). */
  onRefused?: (reason: RefusedReason) => void;
  /** The body of an answer to a request node:http cannot parse (the REST envelope), as JSON text. */
  unparsableBody: (status: number, message: string) => string;
}

/**
 * The TCP peer of the request, written by the listener over anything a client sent under this name. It travels as
 * a header because that is what reaches REST and every RPC protocol alike.
 */
export const PEER_ADDRESS_HEADER = "x-scheduling-peer-address";

type RefusedReason = "total" | "per_address";

/**
 * How long a connection answered with `Connection: close` by `answerUnparsable` may stay after the answer was
 * written before it is destroyed. Long enough for the answer to reach a client on a slow link before its
 * socket is gone; a client that never closes its side (the socket would otherwise sit in FIN-WAIT-2 holding a
 * descriptor for as long as the client likes) cannot keep it longer.
 */
export const CLOSE_LINGER_MS = 1000;

/**
 * How long the unread rest of an HTTP/1.1 request body may still be read, and dropped, after its answer was
 * written. Code that refuses a body (too large, a bad key, a body that stops) stops reading it, so that a refused
 * body never passes through memory whole; but a client told `keep-alive` sends its next request on the same
 * connection, and unless the rest is read that request waits behind it until the keep-alive timeout resets the
 * connection: a "fetch failed" on an unrelated request. node:http drains a body nobody began to read itself;
 * `drainAfterAnswer` does the same for one that was begun and left, for a bounded time, then closes.
 */
const DRAIN_AFTER_ANSWER_MS = 5000;

function drainAfterAnswer(req: http.IncomingMessage, socket: net.Socket): void {
  if (req.complete || socket.destroyed) return;
  if (req.destroyed) {
    // Abandoned by its reader (Connect's own handlers destroy a request whose body is over readMaxBytes): the
    // rest cannot be read any more, and the connection can carry nothing else. It is closed as an unparsable
    // request's is: our side ends now, so the client stops sending and reuses nothing, and the socket goes a
    // moment later. Destroyed at once, it would be reset under a client still sending, which may then lose
    // the answer it was sent ("write ECONNRESET" instead of the 413).
    socket.end();
    const linger = setTimeout(() => socket.destroy(), CLOSE_LINGER_MS);
    socket.once("close", () => clearTimeout(linger));
    return;
  }
  req.removeAllListeners("data");
  req.resume();
  const cut = setTimeout(() => socket.destroy(), DRAIN_AFTER_ANSWER_MS);
  req.once("end", () => clearTimeout(cut));
  socket.once("close", () => clearTimeout(cut));
}

/**
 * Streams one HTTP/2 connection may have open at once, advertised in its SETTINGS (node's default advertises
 * 4 294 967 295). 100 is what grpc-go and grpc-java advertise; clients queue calls beyond it themselves.
 */
export const MAX_CONCURRENT_STREAMS = 100;

export interface Listener {
  port: number;
  http1: http.Server;
  http2: http2.Http2Server;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes every connection. */
  close(graceMs: number): Promise<void>;
  inFlight(): number;
  /** Open TCP connections, of every protocol. */
  connections(): number;
}

/**
 * Requests node:http cannot parse (oversized headers or URL, bad framing, slow headers) never reach Express;
 * they still get the JSON envelope instead of Node's bare status line.
 */
function answerUnparsable(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: net.Socket | import("node:stream").Duplex, bodyOf: ListenOptions["unparsableBody"]): void {
  if (err.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
  const message = status === 431 ? "request headers or url too large" : status === 408 ? "request timeout" : "malformed HTTP request";
  const body = bodyOf(status, message);
  // An answer to HEAD has no body; a client would read the body as the next response.
  const head = err.rawPacket?.subarray(0, 5).toString("latin1") === "HEAD ";
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? "" : body}`,
  );
  const linger = setTimeout(() => socket.destroy(), CLOSE_LINGER_MS);
  socket.once("close", () => clearTimeout(linger));
}

/**
 * Streams that go to Connect's handlers (streams, deadlines, compression, gRPC-Web) are read by Connect, up to
 * readMaxBytes a message and with no view of the others. Their bytes count against the same body budget as the
 * fast path's (src/platform/transport/bodyBudget.ts) from arrival until the stream closes; a stream that would pass it is
 * reset with ENHANCE_YOUR_CALM (grpc-js and grpc-go report RESOURCE_EXHAUSTED).
 * Bytes are counted where node:http2 hands them to the stream (`push`), not with a 'data' listener: one would
 * start the stream flowing before the compatibility layer's request attaches its own listener (it does so on
 * its first read), and the bytes in between would be lost.
 */
function guardStream(stream: http2.ServerHttp2Stream, requestTimeoutMs: number): void {
  const owner = stream.session ?? stream;
  let held = 0;
  const push = stream.push.bind(stream);
  stream.push = (chunk: unknown, encoding?: BufferEncoding) => {
    const size = Buffer.isBuffer(chunk) ? chunk.length : 0;
    if (size > 0) {
      if (!bodyBudget.take(owner, size)) {
        stream.close(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
        return false;
      }
      held += size;
    }
    return push(chunk, encoding);
  };
  // Connect's handlers wait for a unary message however long it takes, deadline or not. A stream whose caller
  // has neither finished sending nor been answered anything within REQUEST_TIMEOUT_MS is reset (CANCEL). A
  // bidirectional stream (reflection) has its first answer by then, a server stream (health Watch) has
  // finished sending: neither is cut.
  const timer = setTimeout(() => {
    if (!stream.readableEnded && !stream.headersSent && !stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
  }, requestTimeoutMs);
  stream.once("close", () => {
    clearTimeout(timer);
    bodyBudget.give(owner, held);
  });
  // Answered before the caller finished sending (Connect's deadline passed while the message had not arrived, a
  // message too large): once the trailers are out the stream is reset with NO_ERROR, as gRPC servers do, so the
  // caller cannot keep it open, and counted against the connection's streams, forever. (The compatibility
  // layer always ends an answer with sendTrailers.)
  const sendTrailers = stream.sendTrailers.bind(stream);
  stream.sendTrailers = (headers) => {
    sendTrailers(headers);
    if (!stream.readableEnded) setImmediate(() => stream.closed || stream.close(http2.constants.NGHTTP2_NO_ERROR));
  };
}

/** Counts a request (and the HTTP/2 stream it came on) in flight until its answer closes. */
type Track = (res: { once(event: "close", fn: () => void): unknown }, session?: http2.Http2Session) => void;

/** The HTTP/1.1 server connections are handed to (it never listens itself). */
function http1Server(options: ListenOptions, track: Track, handler: http.RequestListener): http.Server {
  const h1 = http.createServer({ keepAliveTimeout: 5000, requestTimeout: options.requestTimeoutMs, headersTimeout: Math.min(30_000, options.requestTimeoutMs) }, (req, res) => {
    track(res);
    const socket = req.socket;
    res.once("finish", () => drainAfterAnswer(req, socket));
    req.headers[PEER_ADDRESS_HEADER] = req.socket.remoteAddress ?? "";
    handler(req, res);
  });
  h1.on("clientError", (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: net.Socket) => answerUnparsable(err, socket, options.unparsableBody));
  // h1 never listens itself (connections are handed to it), but node:http starts tracking connections only on
  // 'listening': without it closeIdleConnections() does nothing and requestTimeout/headersTimeout are never checked.
  h1.emit("listening");
  return h1;
}

/** What answers an HTTP/2 stream itself (see `listen`), given the TCP peer's address (what PEER_ADDRESS_HEADER carries). */
type StreamHandler = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, peer: string) => { once(event: "close", fn: () => void): unknown } | undefined;

/** The HTTP/2 (h2c) server connections with the preface are handed to, and its open sessions, each counting its streams. */
function http2Server(
  options: ListenOptions,
  track: Track,
  handler: (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void,
  streamHandler: StreamHandler | undefined,
): { h2: http2.Http2Server; sessions: Set<CountedSession> } {
  const h2 = http2.createServer({ settings: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS } }, (req, res) => {
    track(res, req.stream.session);
    handler(req, res);
  });
  // Every stream passes here first: the stream handler may answer it, given the peer's address. What it declines
  // goes to the compatibility layer's own 'stream' listener (the one that builds the request and response for the
  // handler), called exactly as node:http2 would, with the peer's address among its headers (the compatibility
  // layer's request reads that same object). The stream handler keeps it beside them (StreamExchange's `added`).
  const compat = h2.listeners("stream") as Array<(...args: unknown[]) => void>;
  h2.removeAllListeners("stream");
  h2.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, ...rest: unknown[]) => {
    const peer = (stream.session as CountedSession | undefined)?.[PEER] ?? "";
    const answering = streamHandler?.(stream, headers, peer);
    if (answering) {
      track(answering, stream.session);
      return;
    }
    headers[PEER_ADDRESS_HEADER] = peer;
    guardStream(stream, options.requestTimeoutMs);
    for (const listener of compat) listener.call(h2, stream, headers, ...rest);
  });
  const sessions = new Set<CountedSession>();
  h2.on("session", (session) => {
    const s = Object.assign(session, { [OPEN_STREAMS]: 0, [IDLE_SINCE]: performance.now(), [PEER]: session.socket?.remoteAddress ?? "" });
    sessions.add(s);
    s.once("close", () => sessions.delete(s));
  });
  return { h2, sessions };
}

/**
 * Idle HTTP/2 connections are found by a sweep a quarter of the timeout apart (so they close between 1 and 1.25
 * times it), not by node:http2's session timeout: that counts frames, not streams, and does not re-arm when a
 * stream ends with a reset. Returns the sweep's timer, for `close` to clear.
 */
function sweepIdleSessions(sessions: ReadonlySet<CountedSession>, idleMs: number): NodeJS.Timeout {
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const s of sessions) {
      if (s[OPEN_STREAMS] === 0 && now - s[IDLE_SINCE] >= idleMs && !s.closed) s.close();
    }
  }, Math.max(10, idleMs / 4));
  sweep.unref();
  return sweep;
}

/**
 * The caps on open connections (MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS): `admit` counts a new connection
 * until it closes, or resets it at once and returns false. `sockets` is every connection admitted and still open.
 */
function connectionCaps(options: ListenOptions): { sockets: ReadonlySet<net.Socket>; admit(socket: net.Socket): boolean } {
  const sockets = new Set<net.Socket>();
  const perAddress = new Map<string, number>();
  const admit = (socket: net.Socket): boolean => {
    // Caps first, before a byte is read: a refused connection is reset (no FIN handshake to wait for, nothing
    // left in the kernel), so a flood costs one accept each and never the descriptors everyone else needs.
    const address = socket.remoteAddress ?? "";
    const fromAddress = perAddress.get(address) ?? 0;
    const refused: RefusedReason | undefined =
      sockets.size >= options.maxConnections ? "total" : options.maxConnectionsPerAddress > 0 && fromAddress >= options.maxConnectionsPerAddress ? "per_address" : undefined;
    if (refused) {
      options.onRefused?.(refused);
      socket.on("error", () => {});
      socket.resetAndDestroy();
      return false;
    }
    sockets.add(socket);
    perAddress.set(address, fromAddress + 1);
    socket.once("close", () => {
      sockets.delete(socket);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
    return true;
  };
  return { sockets, admit };
}

/**
 * Reads a new connection's first bytes and hands it to node:http2 when they are the HTTP/2 preface, else to
 * node:http, the bytes read put back. A client must say which protocol it speaks within `idleMs`, counted from
 * the connection (a byte now and then does not extend it). Once it has, this timer goes: node:http2 and node:http
 * have their own, and a quiet socket may carry a long stream.
 */
function handOver(socket: net.Socket, idleMs: number, h1: http.Server, h2: http2.Http2Server): void {
  let seen = Buffer.alloc(0);
  const undecided = setTimeout(() => socket.destroy(), idleMs);
  socket.once("close", () => clearTimeout(undecided));
  const onData = (chunk: Buffer) => {
    seen = Buffer.concat([seen, chunk]);
    const n = Math.min(seen.length, PREFACE.length);
    const isPrefix = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
    if (isPrefix && seen.length < PREFACE.length) return; // not enough bytes to decide yet
    socket.removeListener("data", onData);
    clearTimeout(undecided);
    // The bytes go back into the socket's buffer. node:http2 takes them from there on the next tick (resuming
    // first would drop them, as nothing listens for 'data'); node:http reads them once the socket flows again.
    socket.pause();
    socket.unshift(seen);
    if (isPrefix) {
      h2.emit("connection", socket);
    } else {
      // Handed over on the next tick, not from inside this 'data' event: the socket's stream still has a read
      // scheduled for this tick (the chunk just delivered), and that read restarted the socket after
      // node:http's parser had paused it for a request body nobody reads yet. node:http then read whole
      // bodies into memory regardless of backpressure: 25 MB for each upload refused on its key, 70 MB of RSS
      // for 30 of them (bench:attacks); now it holds about 64 KB of each until the body is read.
      process.nextTick(() => {
        if (socket.destroyed) return;
        h1.emit("connection", socket);
        socket.resume();
      });
    }
  };
  socket.on("data", onData);
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
  http2StreamHandler: StreamHandler | undefined,
  options: ListenOptions,
): Promise<Listener> {
  let active = 0;
  const track: Track = (res, session) => {
    active++;
    const counted = session as CountedSession | undefined;
    if (counted) counted[OPEN_STREAMS]++;
    res.once("close", () => {
      active--;
      if (counted && --counted[OPEN_STREAMS] === 0) counted[IDLE_SINCE] = performance.now();
    });
  };
  const h1 = http1Server(options, track, http1Handler);
  const { h2, sessions } = http2Server(options, track, http2Handler, http2StreamHandler);
  const sweep = sweepIdleSessions(sessions, options.idleTimeoutMs);
  const { sockets, admit } = connectionCaps(options);
  const tcp = net.createServer((socket) => {
    if (!admit(socket)) return;
    socket.on("error", () => socket.destroy());
    handOver(socket, options.idleTimeoutMs, h1, h2);
  });

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
    connections: () => sockets.size,
    async close(graceMs: number) {
      clearInterval(sweep);
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()));
      h1.closeIdleConnections();
      for (const s of sessions) s.close(); // GOAWAY: streams in progress finish, no new ones start
      const deadline = performance.now() + graceMs;
      while (active > 0 && performance.now() < deadline) {
        await new Promise((r) => setTimeout(r, 25));
        h1.closeIdleConnections();
      }
      for (const s of sessions) s.destroy();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
