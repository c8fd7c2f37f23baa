// Plain unary RPCs over HTTP/2 answered on node:http2's streams, without the compatibility layer's request and response objects.
import type { IncomingHttpHeaders } from "node:http";
import http2 from "node:http2";
import { respec } from "./grpcMessage.js";
import { PEER_ADDRESS_HEADER } from "./listen.js";

const ignore = () => {};

/**
 * Response headers whose value is new on every answer, sent as never-indexed literals (RFC 7541, 6.2.3): indexed,
 * each request id went into the connection's HPACK table on both ends and pushed out the entries that do repeat
 * (content-type, cache-control), so every answer paid for an insertion and an eviction and re-sent those as well
 * (3% of a GetUser call's time in nghttp2's encoder: bench/RESULTS.md, issue 38, 2026-12-06).
 */
const UNREPEATED_HEADERS: readonly string[] = Object.freeze(["x-request-id"]);

/** Flags UNREPEATED_HEADERS never-indexed in a head about to go to a stream's `respond`. */
function flagUnrepeated(head: object): void {
  (head as Record<symbol, readonly string[]>)[http2.sensitiveHeaders] = UNREPEATED_HEADERS;
}

/**
 * The same for the answers node:http2's compatibility layer sends on `stream` (Connect's path: streams, calls with
 * a deadline, and every other HTTP/2 request), so that both paths send the same: the layer builds its headers
 * itself and hands them to the stream's `respond`, with no way to mark one never-indexed on the way.
 */
export function sendUnrepeatedUnindexed(stream: http2.ServerHttp2Stream): void {
  const respond = stream.respond;
  stream.respond = function (this: http2.ServerHttp2Stream, headers, options) {
    if (headers) flagUnrepeated(headers);
    return respond.call(this, headers, options);
  };
}

/**
 * The request headers the service adds to what the caller sent: the peer's address (listen.ts) and the request id
 * (the observer), read through the call's `NodeHeaders` as if they were among node:http2's. Why beside it: node:http2
 * hands over its headers as a dictionary-mode object, and each name added to it cost a gRPC call ~1.5k instructions
 * (bench/RESULTS.md, issue 38, grpc-lean3); this object is made with both names and keeps its shape.
 */
export type AddedHeaders = {
  [PEER_ADDRESS_HEADER]: string;
  "x-request-id": string | undefined;
};

/**
 * One HTTP/2 stream as the few parts of a request and a response that the fast unary path, the observer and
 * CORS use. Why: node:http2's compatibility layer builds an Http2ServerRequest (a Readable) and an
 * Http2ServerResponse (a Writable) around every stream, with their listeners; for a gRPC GetUser that was a
 * sixth of the server's CPU. Headers are collected and sent in one `respond`, trailers on `wantTrailers`, and
 * grpc-message leaves in the gRPC spec's percent-encoding, as `withSpecGrpcMessage` does for the other answers.
 */
export class StreamExchange {
  readonly method: string;
  readonly url: string;
  readonly httpVersion = "2.0";
  statusCode = 200;
  /**
   * What the observer keeps for this exchange (src/platform/http/observe.ts). Declared, so that setting it leaves the
   * object's shape as it was made: a property added to every exchange after construction was a change of shape on
   * every gRPC call.
   */
  observed: unknown = undefined;
  readonly added: AddedHeaders;
  private readonly head: Record<string, string | number> = {};
  private trailers: Record<string, string> | undefined;
  private closers: Array<() => void> | undefined;
  /** The listeners hung on the stream through `on`, as event and function pairs, for `closed` to take off. */
  private attached: unknown[] | undefined;
  /**
   * The body reader's 'error' listener, called from `closed` instead of hung on the stream: a stream that fails ends
   * in 'close' anyway, and one listener fewer per call is ~2.5k instructions (each add, and its removal, grows and
   * shrinks the emitter's listener array).
   */
  private broken: ((err: unknown) => void) | undefined;

  constructor(
    private readonly stream: http2.ServerHttp2Stream,
    readonly headers: IncomingHttpHeaders,
    /** The TCP peer's address (listen.ts, PEER_ADDRESS_HEADER). */
    peer = "",
  ) {
    this.method = String(headers[":method"]);
    this.url = String(headers[":path"]);
    // The name spelled out, not computed: a computed key in a literal is a runtime call on every call (AddedHeaders's type checks the spelling).
    this.added = { "x-scheduling-peer-address": peer, "x-request-id": undefined };
  }

  /** Takes the stream over (until then nothing is attached to it, so it can still go to another handler). */
  claim(): void {
    // A stream reset by the peer may emit 'error'; it ends in 'close' either way, which is what is watched.
    this.stream.on("error", ignore);
    // `on`, taken off again by `closed` itself: `once` wraps every listener in a bound function and its state.
    this.listen("close", () => this.closed());
  }

  /** Hangs `fn` on the stream until it closes (`closed` takes it off). */
  private listen(event: string, fn: (arg: Buffer) => void): void {
    this.stream.on(event, fn);
    (this.attached ??= []).push(event, fn);
  }

  /**
   * The end of the exchange: everyone who waits for it is called (the observer, the fast path, the in-flight
   * count, in the order they asked: one 'close' listener per stream instead of three), then the stream lets go
   * of everything the exchange hung on it. Why: node:http2 keeps a stream's native handle until a full
   * (mark-compact) garbage collection, so a stream always outlives the young generation's collections and is
   * moved to old space, with whatever it still references at the time: the body reader's listeners, and through
   * them the call's request, context, abort signal and observer record (about 2 KB per call, more than
   * node:http2's own objects). Old space then grew by ~4 KB per gRPC call between full collections, and V8 lets
   * it grow to several times the live heap before one (bench/RESULTS.md, issue 30 session 4).
   */
  private closed(): void {
    const broken = this.broken;
    this.broken = undefined;
    // A request whose body never ended (the stream failed or was reset under it) stops waiting for it now, as on 'error'.
    if (broken && !this.stream.readableEnded) broken(this.stream.errored ?? new Error("the stream closed before the request message ended"));
    const closers = this.closers;
    this.closers = undefined;
    if (closers) for (const close of closers) close();
    const attached = this.attached;
    this.attached = undefined;
    if (attached) for (let i = 0; i < attached.length; i += 2) this.stream.removeListener(attached[i] as string, attached[i + 1] as () => void);
  }

  on(event: "data", fn: (chunk: Buffer) => void): this;
  on(event: "end" | "error", fn: (arg?: unknown) => void): this;
  on(event: "data" | "end" | "error", fn: (arg: Buffer) => void): this {
    if (event === "error") {
      this.broken = fn as (err: unknown) => void;
      return this;
    }
    this.listen(event, fn);
    return this;
  }

  pause(): this {
    this.stream.pause();
    return this;
  }

  resume(): this {
    this.stream.resume();
    return this;
  }

  removeAllListeners(event: "data"): this {
    this.stream.removeAllListeners(event);
    return this;
  }

  get readableEnded(): boolean {
    return this.stream.readableEnded;
  }

  /** The connection the stream came on (what its body counts against: src/platform/transport/bodyBudget.ts). */
  get session(): object {
    return this.stream.session ?? this.stream;
  }

  /** Called once the stream closes (see `closed`); the exchange must have been claimed. */
  once(_event: "close", fn: () => void): this {
    (this.closers ??= []).push(fn);
    return this;
  }

  get writableFinished(): boolean {
    return this.stream.writableFinished;
  }

  setHeader(name: string, value: string | number): this {
    this.head[name.toLowerCase()] = value;
    return this;
  }

  getHeader(name: string): string | number | undefined {
    return this.head[name] ?? this.trailers?.[name];
  }

  writeHead(status: number, headers: Record<string, string | number>): this {
    this.statusCode = status;
    for (const name of Object.keys(headers)) this.head[name.toLowerCase()] = headers[name];
    return this;
  }

  addTrailers(trailers: Record<string, string>): void {
    this.trailers = trailers;
  }

  end(cb?: () => void): this;
  end(body: string | Uint8Array): this;
  end(bodyOrCallback?: string | Uint8Array | (() => void)): this {
    const body = typeof bodyOrCallback === "function" ? undefined : bodyOrCallback;
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return this;
    const trailers = this.trailers;
    respec(this.head);
    respec(trailers);
    try {
      // Answered before the caller finished sending (refused on its headers, a message too large, one that did not
      // arrive in time): once the answer is out the stream is reset with NO_ERROR, as gRPC servers do, so the
      // rest of the message is neither waited for nor read, and the stream stops counting against the
      // connection's 100 at once.
      const unfinished = !stream.readableEnded;
      const resetAfter = () => {
        if (!unfinished || stream.closed) return;
        setImmediate(() => {
          stream.close(http2.constants.NGHTTP2_NO_ERROR);
          // A reader that stopped (a refused body) left bytes in the stream; until they are read the stream
          // does not end, and so never closes. The reset stops any more from coming: these few are dropped.
          stream.resume();
        });
      };
      // The head is ours and sent once: it takes the status itself rather than a copy of it with the status.
      this.head[":status"] = this.statusCode;
      flagUnrepeated(this.head);
      stream.respond(this.head, { waitForTrailers: trailers !== undefined });
      if (trailers)
        this.listen("wantTrailers", () => {
          stream.sendTrailers(trailers);
          resetAfter();
        });
      stream.end(body, typeof bodyOrCallback === "function" ? bodyOrCallback : undefined);
      if (!trailers) stream.once("finish", resetAfter);
    } catch {
      // The peer reset the stream between the check and the answer: there is no one to answer.
      stream.destroy();
    }
    return this;
  }
}
