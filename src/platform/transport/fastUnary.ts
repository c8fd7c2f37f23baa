// Plain unary calls over the Connect protocol (HTTP/1.1, h2c) and gRPC (h2c), answered without Connect's stream machinery.
import { create, fromBinary, toBinary, toJsonString, type DescMethodUnary, type DescService, type Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { codeToHttpStatus, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import type { IncomingHttpHeaders } from "node:http";
import { onceFor } from "../../domain/frozen.js";
import { endAfterReads } from "./reply.js";
import { toConnectError } from "./errors.js";
import { bodiesBusy, bodyBudget } from "./bodyBudget.js";
import { NodeHeaders } from "./headers.js";
import type { ServiceEntry } from "./services.js";
import { bodyTooLarge } from "./decodeErrors.js";
import { httpStatusOf } from "./errorAnswer.js";
import { requestFromJsonText } from "./jsonRequests.js";

/**
 * Why this exists: Connect-ES serves every call, unary or not, through async iterables, a universal request
 * (a parsed URL, a copied Headers), a handler context with three linked AbortControllers and an abort (an
 * AbortError with a stack) at the end of every call. For a GetUser that is about half of the CPU the call
 * costs. The calls that are by far the most common (unary, POST, uncompressed, no deadline, Connect JSON or
 * binary, or gRPC binary) are answered here, through the router's interceptors as Connect's
 * `invokeUnaryImplementation` calls them (composed once per method here: see `UnaryCall`), so error sanitising,
 * request records and everything an interceptor adds behave the same. Anything else (streams, compression, timeouts, GET,
 * gRPC-Web, gRPC+JSON, health and reflection) returns false and goes to Connect's handlers unchanged. A call with a
 * deadline is Connect's, and its rule (past the deadline: DEADLINE_EXCEEDED) is an interceptor both paths run
 * (deadlines.ts), so it lives once.
 */

interface NodeRequest {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  on(event: "data", fn: (chunk: Buffer) => void): unknown;
  on(event: "end" | "error", fn: (arg?: unknown) => void): unknown;
  removeAllListeners(event: "data"): unknown;
  pause(): unknown;
  resume(): unknown;
  /** True once 'end' was emitted: a body-less request ends by itself, while `admit` is still waiting. */
  readonly readableEnded: boolean;
  /** HTTP/1.1: the connection, whose share of the body budget the request's body counts against. */
  socket?: object | null;
  /** HTTP/2 (StreamExchange): the session, likewise. */
  session?: object;
  /** HTTP/2 (StreamExchange): the headers the service adds to the request's, kept beside them. */
  added?: Readonly<Record<string, string | undefined>>;
}

interface NodeResponse {
  writeHead(status: number, headers: Record<string, string | number>): unknown;
  addTrailers(trailers: Record<string, string>): void;
  end(): unknown;
  end(body: string | Uint8Array): unknown;
  once(event: "close", fn: () => void): unknown;
  readonly writableFinished: boolean;
}

export interface FastUnaryOptions {
  services: ServiceEntry[];
  interceptors: Interceptor[];
  readMaxBytes: number;
  /** How long a request message may take to arrive once the call has started (REQUEST_TIMEOUT_MS). */
  readTimeoutMs: number;
  /** The same values Connect's adapters are given for the request (request records of the observer). */
  contextValues?: (req: never) => ContextValues;
}

type Protocol = "connect-json" | "connect-proto" | "grpc";

function protocolOf(req: NodeRequest, http2: boolean): Protocol | undefined {
  const h = req.headers;
  if (h["content-encoding"] !== undefined && h["content-encoding"] !== "identity") return undefined;
  const type = (h["content-type"] ?? "").toLowerCase();
  if (http2 && (type === "application/grpc" || type === "application/grpc+proto")) {
    if ((h["grpc-encoding"] !== undefined && h["grpc-encoding"] !== "identity") || h["grpc-timeout"] !== undefined) return undefined;
    return "grpc";
  }
  if (h["connect-timeout-ms"] !== undefined) return undefined;
  const version = h["connect-protocol-version"];
  if (version !== undefined && version !== "1") return undefined;
  if (type === "application/json" || type === "application/json; charset=utf-8") return "connect-json";
  if (type === "application/proto") return "connect-proto";
  return undefined;
}

/**
 * A body larger than this is read only from a caller that has passed its service's header check (`admit`): a
 * bad key then costs no more than this. Smaller bodies are read first, so a small request is answered exactly
 * as Connect's own handlers answer it (an undecodable message is INVALID_ARGUMENT whoever sends it).
 */
const ADMIT_BEFORE_BYTES = 64 * 1024;

/**
 * The request body (to `settle`), held against the body budget (src/platform/transport/bodyBudget.ts) of `owner` (its connection): the
 * caller gives `body.length` back once it is done with it. It fails as soon as the body is known to be too large
 * (a gRPC message announces its length in its first 5 bytes; 4 GB announced is refused then, not after 4 GB),
 * when the budget is spent, when `admit` refuses the caller of a body over ADMIT_BEFORE_BYTES (reading waits for
 * its verdict), or when the body has not arrived within `timeoutMs`: a message that never comes must not keep
 * its stream and its bytes forever. After a failure the rest of the body is dropped unread.
 */
function readBody(
  req: NodeRequest,
  limit: number,
  owner: object,
  grpc: boolean,
  timeoutMs: number,
  admit: (() => Promise<void>) | undefined,
  later: (arm: () => void) => void,
  settle: (err: ConnectError | undefined, body: Buffer) => void,
): void {
  // A callback, not a promise: this runs for every call, and the call's answer is already a chain of them.
  const resolve = (body: Buffer) => settle(undefined, body);
  const reject = (err: ConnectError) => settle(err, EMPTY);
  if (req.readableEnded) {
    // Ended before anyone read it: no byte was sent (a stream with bytes left to read has not emitted 'end').
    resolve(EMPTY);
    return;
  }
  const chunks: Buffer[] = [];
  let length = 0;
  let settled = false;
  let asked = false;
  /** The header check is under way: reading is paused and the body is not done before its verdict. */
  let pending = false;
  let ended = false;
  const fail = (err: ConnectError) => {
    if (settled) return;
    settled = true;
    if (timer !== undefined) clearTimeout(timer);
    bodyBudget.give(owner, length);
    chunks.length = 0;
    // Nothing more is read: HTTP/2 flow control stops the caller, and the answer resets the stream
    // (StreamExchange.end); node:http drops what is left of an HTTP/1.1 body once the answer is written.
    // Reading on to the end would pass every refused byte through memory.
    req.removeAllListeners("data");
    req.pause();
    reject(err);
  };
  const done = () => {
    if (settled || pending || !ended) return;
    settled = true;
    if (timer !== undefined) clearTimeout(timer);
    resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length));
  };
  const check = () => {
    if (asked || !admit) return;
    asked = true;
    pending = true;
    req.pause();
    admit().then(
      () => {
        pending = false;
        req.resume();
        done();
      },
      (err: unknown) => fail(toConnectError(err)),
    );
  };
  // The deadline's timer is set only for a body still unread at the end of this turn: nearly every body comes
  // in the same read as its headers, and a timer set and cleared per call cost every gRPC call a Timeout and two
  // updates of the timer lists. Set later, it waits what is left of timeoutMs.
  let timer: NodeJS.Timeout | undefined;
  const started = performance.now();
  later(() => {
    if (settled) return;
    const left = Math.max(0, timeoutMs - (performance.now() - started));
    timer = setTimeout(() => fail(new ConnectError(`request message did not arrive within ${timeoutMs} ms`, Code.DeadlineExceeded)), left);
  });
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > limit) return fail(bodyTooLarge(limit, declared));
  if (declared > ADMIT_BEFORE_BYTES) check();
  req.on("data", (chunk: Buffer) => {
    if (settled) return;
    if (length + chunk.length > limit) return fail(bodyTooLarge(limit, length + chunk.length));
    if (!bodyBudget.take(owner, chunk.length)) return fail(bodiesBusy());
    length += chunk.length;
    chunks.push(chunk);
    if (grpc && length >= 5 && length - chunk.length < 5) {
      const head = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length);
      const announced = head.readUInt32BE(1);
      if (announced + 5 > limit) return fail(bodyTooLarge(limit, announced));
      if (announced > ADMIT_BEFORE_BYTES) check();
    }
    if (length > ADMIT_BEFORE_BYTES) check();
  });
  req.on("end", () => {
    ended = true;
    done();
  });
  req.on("error", (err) => fail(ConnectError.from(err)));
}

const EMPTY = Buffer.alloc(0);

/**
 * Unknown fields are dropped, not kept: nothing reads them, and kept they cost memory many times their bytes
 * (6 MB of one repeated unknown field decoded into about a hundred MB of objects). The same for Connect's own
 * handlers (app.ts, `binaryOptions`).
 */
export const BINARY_READ = { readUnknownFields: false } as const;

/*
 * The framing errors of a unary gRPC request, with the codes and messages Connect's own gRPC handler gives for the
 * same body (envelope.ts, invoke-implementation.ts, and decodeErrors.ts's rewrite of the compressed case): a call
 * gets the same answer whether it comes here or, with a deadline, goes to Connect.
 */
const NO_MESSAGE = () => new ConnectError("protocol error: missing input message for unary method", Code.Unimplemented);
const EXTRA_MESSAGE = () => new ConnectError("protocol error: received extra input message for unary method", Code.Unimplemented);
const INCOMPLETE = () => new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
const COMPRESSED = () =>
  new ConnectError("request body could not be decoded: received compressed envelope, but do not know how to decompress", Code.InvalidArgument);

/** The length of the gRPC envelope (5-byte prefix and message) at `at`, or undefined when the body ends inside it. */
function envelopeAt(body: Buffer, at: number): number | undefined {
  if (body.length - at < 5) return undefined;
  const length = 5 + body.readUInt32BE(at + 1);
  return body.length - at < length ? undefined : length;
}

/**
 * The message of a unary gRPC request's first envelope, and what follows it (which must be nothing; see
 * `noMoreMessages`). Flags other than "compressed" are ignored, as Connect does.
 */
function unframe(body: Buffer): { message: Uint8Array; rest: Buffer } {
  if (body.length === 0) throw NO_MESSAGE();
  const length = envelopeAt(body, 0);
  if (length === undefined) throw INCOMPLETE();
  if ((body[0] & 0b1) !== 0) throw COMPRESSED();
  return { message: body.subarray(5, length), rest: body.subarray(length) };
}

/** After the one message a unary call takes: another whole envelope is one too many, part of one is incomplete. */
function noMoreMessages(rest: Buffer): void {
  if (rest.length === 0) return;
  throw envelopeAt(rest, 0) === undefined ? INCOMPLETE() : EXTRA_MESSAGE();
}

function frame(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

/** Encoded replies of frozen output messages (src/domain/frozen.ts), one map per protocol: a reply built once is sent as built. */
const encodedReplies: Record<Protocol, WeakMap<Message, Buffer>> = { grpc: new WeakMap(), "connect-proto": new WeakMap(), "connect-json": new WeakMap() };

function encodeReply(protocol: Protocol, schema: DescMethodUnary["output"], output: Message): Buffer {
  return onceFor(encodedReplies[protocol], output, (message) => {
    if (protocol === "grpc") return frame(toBinary(schema, message));
    return protocol === "connect-json" ? Buffer.from(toJsonString(schema, message)) : Buffer.from(toBinary(schema, message));
  });
}

function headerObject(h: Headers, into: Record<string, string> = {}): Record<string, string> {
  h.forEach((v, k) => {
    into[k] = v;
  });
  return into;
}

type MaybePromise<T> = T | Promise<T>;

/**
 * An interceptor's unary part, written so that an answer that is already there is handed on without a promise: `next`
 * returns the response or a promise of it, and so does the step; an error is thrown, or the promise rejects. Why:
 * Connect's interceptors return a promise each, and the cheapest calls (GetUser from an account in the cache)
 * answered through five promises and as many microtasks for nothing that waits. The fast path composes the steps
 * of the router's interceptors into one function when every interceptor has one (`unaryStep`); Connect's own
 * handlers run the same step through `interceptorOf`, so both paths run one piece of code per interceptor.
 */
export type UnaryStep = (next: (req: UnaryRequest) => MaybePromise<UnaryResponse>) => (req: UnaryRequest) => MaybePromise<UnaryResponse>;

/** A Connect interceptor that also offers its unary part as a step (see `UnaryStep`). */
export type SteppedInterceptor = Interceptor & { readonly unaryStep: UnaryStep };

/**
 * The Connect interceptor of `step` (its answer always a promise) carrying the step for the fast path. Calls that
 * are not unary go to `streams` when given (a step need not know streams), else through the step too.
 */
export function interceptorOf(step: UnaryStep, streams?: Interceptor): SteppedInterceptor {
  const interceptor: Interceptor = (next) => {
    const stepped = step(next as (req: UnaryRequest) => Promise<UnaryResponse>);
    const streamed = streams?.(next);
    return (req) => {
      if (req.stream && streamed) return streamed(req);
      try {
        const answer = stepped(req as UnaryRequest);
        return (answer instanceof Promise ? answer : Promise.resolve(answer)) as never;
      } catch (err) {
        return Promise.reject(err);
      }
    };
  };
  return Object.assign(interceptor, { unaryStep: step });
}

/** Marks an interceptor's request as (a copy of) the call it was made from (see `UnaryCall`). */
const CALL = Symbol("unary call");

/**
 * One call, as both what the interceptors are handed (a UnaryRequest) and what the implementation is handed (a
 * HandlerContext). Why: Connect's `invokeUnaryImplementation` composes the interceptors anew on every call (a
 * closure each), builds the request with Object.assign, then a merged copy of the context for the implementation,
 * and needs an AbortController's signal before anything runs: for a GetUser about a tenth of the call's CPU and a
 * fifth of its garbage (bench/RESULTS.md, issue 38). Here the interceptors are composed once per method
 * (`invokerOf`), the call is the request, the implementation gets the call itself as its context unless an
 * interceptor passed on a changed copy (then a merged context, as Connect's `mergeRequest` makes), and the abort
 * signal and its controller exist only once something asks for them.
 */
class UnaryCall implements HandlerContext, UnaryRequest {
  readonly stream = false;
  readonly requestMethod = "POST";
  readonly service: DescService;
  readonly responseHeader = new NodeHeaders();
  readonly responseTrailer = new NodeHeaders();
  /** The request message, once decoded. */
  message = undefined as unknown as Message;
  readonly [CALL]: UnaryCall = this;
  private controller: AbortController | undefined;
  private gone: ConnectError | undefined;

  constructor(
    readonly method: DescMethodUnary,
    readonly protocolName: string,
    private readonly host: string,
    private readonly path: string,
    readonly requestHeader: Headers,
    readonly values: ContextValues,
  ) {
    this.service = method.parent;
  }

  /** The request's URL, made when asked: nothing on a call's usual path reads it, and it was three joins per call. */
  get url(): string {
    return `http://${this.host}${this.path}`;
  }

  /** UnaryRequest's names of the request's headers and values. */
  get header(): Headers {
    return this.requestHeader;
  }

  get contextValues(): ContextValues {
    return this.values;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.gone) this.controller.abort(this.gone);
    }
    return this.controller.signal;
  }

  timeoutMs(): number | undefined {
    return undefined;
  }

  /** The caller went away before the answer: the signal is aborted (now, or made aborted if asked for later). */
  abort(reason: ConnectError): void {
    this.gone = reason;
    this.controller?.abort(reason);
  }
}

/** The implementation's context for a request an interceptor changed: the call merged with it, as Connect's `mergeRequest` does. */
function mergedContext(call: UnaryCall, req: UnaryRequest): HandlerContext {
  return {
    method: call.method,
    protocolName: call.protocolName,
    requestMethod: call.requestMethod,
    url: call.url,
    responseHeader: call.responseHeader,
    responseTrailer: call.responseTrailer,
    timeoutMs: () => undefined,
    service: req.service,
    requestHeader: req.header,
    signal: req.signal,
    values: req.contextValues,
  };
}

/** Makes `to` hold what `from` holds, unless they are the same object (Connect's `copyHeaders`). */
function copyHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  const names: string[] = [];
  to.forEach((_, k) => names.push(k));
  for (const k of names) to.delete(k);
  from.forEach((v, k) => to.set(k, v));
}

type Invoke = (call: UnaryCall) => MaybePromise<Message>;

/**
 * The implementation as the innermost step: its answer made a message (a plain object the implementation returns
 * made one, as Connect's `normalize` does), without a promise when the implementation answered without one. An
 * interceptor must pass on the call it is given or a copy of it (`{ ...req, header }`): the copy keeps the mark that
 * leads back to the call.
 */
function implementationStep(method: DescMethodUnary, impl: (req: Message, ctx: HandlerContext) => unknown): (req: UnaryRequest) => MaybePromise<UnaryResponse> {
  const output = method.output;
  return (req) => {
    const call = (req as Partial<Record<typeof CALL, UnaryCall>>)[CALL];
    if (call === undefined) throw new ConnectError("an interceptor replaced the request of a unary call", Code.Internal);
    const answer = impl(req.message, req === call ? call : mergedContext(call, req));
    const respond = (message: unknown): UnaryResponse => ({
      stream: false,
      message: create(output, message as never),
      method,
      service: call.service,
      header: call.responseHeader,
      trailer: call.responseTrailer,
    });
    return answer instanceof Promise ? answer.then(respond) : respond(answer);
  };
}

/**
 * A unary method's implementation behind the interceptors, composed once: the answer is the output message, and
 * the response headers and trailers an interceptor replaced are copied onto the call's. With a step from every
 * interceptor (`UnaryStep`) the composition hands on what is already there without a promise; otherwise it is
 * the interceptors' own chain, as Connect's `invokeUnaryImplementation` runs it.
 */
function invokerOf(method: DescMethodUnary, impl: (req: Message, ctx: HandlerContext) => unknown, interceptors: readonly Interceptor[]): Invoke {
  const innermost = implementationStep(method, impl);
  const steps = interceptors.map((i) => (i as Partial<SteppedInterceptor>).unaryStep);
  let next: (req: UnaryRequest) => MaybePromise<UnaryResponse>;
  if (steps.every((s) => s !== undefined)) {
    next = innermost;
    for (let i = steps.length - 1; i >= 0; i--) next = steps[i]!(next);
  } else {
    let chain = (req: UnaryRequest): Promise<UnaryResponse> => {
      try {
        return Promise.resolve(innermost(req));
      } catch (err) {
        return Promise.reject(err);
      }
    };
    for (let i = interceptors.length - 1; i >= 0; i--) chain = interceptors[i](chain as never) as never;
    next = chain;
  }
  const answered = (call: UnaryCall, res: UnaryResponse): Message => {
    copyHeaders(res.header, call.responseHeader);
    copyHeaders(res.trailer, call.responseTrailer);
    return res.message;
  };
  return (call) => {
    const res = next(call);
    return res instanceof Promise ? res.then((r) => answered(call, r)) : answered(call, res);
  };
}

interface MethodEntry {
  method: DescMethodUnary;
  invoke: Invoke;
}

/** Each unary method's invoker, header check and body limit, by its path (`/<service>/<method>`). */
function methodTables(services: FastUnaryOptions["services"], interceptors: readonly Interceptor[]) {
  const methods = new Map<string, MethodEntry>();
  const admits = new Map<string, (ctx: HandlerContext) => Promise<void>>();
  const limits = new Map<string, number>();
  for (const { service, impl, admit: admitOf, readMaxBytes } of services) {
    const fns = impl as unknown as Record<string, ((...args: never[]) => unknown) | undefined>;
    for (const m of service.methods) {
      const fn = fns[m.localName];
      if (m.methodKind !== "unary" || typeof fn !== "function") continue;
      const method = m as DescMethodUnary;
      methods.set(`/${service.typeName}/${m.name}`, { method, invoke: invokerOf(method, fn.bind(impl) as never, interceptors) });
      if (admitOf) admits.set(`/${service.typeName}/${m.name}`, admitOf);
      if (readMaxBytes !== undefined) limits.set(`/${service.typeName}/${m.name}`, readMaxBytes);
    }
  }
  return { methods, admits, limits };
}

/** The request message from its body; a body that does not decode is InvalidArgument, in Connect's words. */
function decodeInput(input: DescMethodUnary["input"], protocol: Protocol, body: Buffer): Message {
  try {
    if (protocol === "connect-json") return requestFromJsonText(input, body.toString("utf8"));
    if (protocol === "connect-proto") return fromBinary(input, body, BINARY_READ);
    // In Connect's order: the first message is read and parsed before anything after it is looked at.
    const { message, rest } = unframe(body);
    const decoded = fromBinary(input, message, BINARY_READ);
    noMoreMessages(rest);
    return decoded;
  } catch (err) {
    if (err instanceof ConnectError) throw err;
    const why = err instanceof Error ? err.message : String(err);
    throw new ConnectError(protocol === "connect-json" ? why : `request body could not be decoded: parse binary: ${why}`, Code.InvalidArgument);
  }
}

type Answer = (status: number, headers: Record<string, string | number>, body: Uint8Array) => void;

/** The trailers of a gRPC answer that set none of its own: one object for every call (node:http2 copies what it sends). */
const OK_TRAILERS: Readonly<Record<string, string>> = Object.freeze({ "grpc-status": "0" });

/** A successful call's answer: gRPC's frame and trailers, or Connect's body with its trailers as prefixed headers. */
function answerOutput(res: NodeResponse, protocol: Protocol, context: HandlerContext, schema: DescMethodUnary["output"], output: Message, answer: Answer): void {
  if (protocol === "grpc") {
    res.writeHead(200, headerObject(context.responseHeader, { "content-type": "application/grpc+proto" }));
    const own = context.responseTrailer;
    res.addTrailers(own instanceof NodeHeaders && own.isEmpty() ? (OK_TRAILERS as Record<string, string>) : headerObject(own, { "grpc-status": "0" }));
    res.end(encodeReply(protocol, schema, output));
    return;
  }
  const reply = encodeReply(protocol, schema, output);
  const headers = headerObject(context.responseHeader, { "content-type": protocol === "connect-json" ? "application/json" : "application/proto" });
  // Connect's unary protocol carries trailers as headers with a prefix.
  context.responseTrailer.forEach((v, k) => {
    headers[`trailer-${k}`] = v;
  });
  answer(200, { ...headers, "content-length": reply.length }, reply);
}

/** A failed call's answer: gRPC's status trailers, or Connect's JSON error with its HTTP status. */
function answerError(res: NodeResponse, protocol: Protocol, context: HandlerContext, err: unknown, answer: Answer): void {
  // The implementation's errors come sanitised by the interceptors; the body's (reading, framing) get their details here.
  const error = toConnectError(err);
  if (protocol === "grpc") {
    res.writeHead(200, headerObject(context.responseHeader, { "content-type": "application/grpc+proto" }));
    res.addTrailers(headerObject(setTrailerStatus(context.responseTrailer, error)));
    res.end();
    return;
  }
  const reply = Buffer.from(errorToJsonBytes(error, {}));
  const headers = headerObject(context.responseHeader, { "content-type": "application/json" });
  error.metadata.forEach((v, k) => {
    headers[k] = v;
  });
  context.responseTrailer.forEach((v, k) => {
    headers[`trailer-${k}`] = v;
  });
  answer(httpStatusOf(error, codeToHttpStatus), { ...headers, "content-length": reply.length }, reply);
}

/** Runs the functions handed to it once, in the check phase of this turn (one setImmediate for all of them). */
function atEndOfTurn(): (fn: () => void) => void {
  let queued: Array<() => void> = [];
  const run = () => {
    const fns = queued;
    queued = [];
    for (const fn of fns) fn();
  };
  return (fn) => {
    if (queued.push(fn) === 1) setImmediate(run);
  };
}

export function createFastUnary(options: FastUnaryOptions) {
  const { methods, admits, limits } = methodTables(options.services, options.interceptors);
  const later = atEndOfTurn();

  function serve(req: NodeRequest, res: NodeResponse, entry: MethodEntry, protocol: Protocol, path: string, http2: boolean): void {
    const method = entry.method;
    // A Connect answer: over HTTP/1.1 after this turn's reads (src/platform/transport/reply.ts); node:http2 batches its own writes.
    const answer: Answer = (status, headers, body) => {
      if (http2) {
        res.writeHead(status, headers);
        res.end(body);
      } else endAfterReads(res, status, headers, body);
    };
    const call = new UnaryCall(
      method,
      protocol === "grpc" ? "grpc" : "connect",
      String(req.headers.host ?? req.headers[":authority"] ?? "localhost"),
      path,
      new NodeHeaders(req.headers, req.added),
      options.contextValues ? options.contextValues(req as never) : createContextValues(),
    );
    // Aborting makes an AbortError with a stack: only a caller gone before the answer needs one.
    res.once("close", () => {
      if (!res.writableFinished) call.abort(new ConnectError("the caller went away", Code.Canceled));
    });
    const owner = req.session ?? req.socket ?? req;
    const admit = admits.get(path);
    const failed = (err: unknown) => answerError(res, protocol, call, err, answer);
    const answered = (output: Message) => {
      try {
        answerOutput(res, protocol, call, method.output, output, answer);
      } catch (err) {
        failed(err);
      }
    };
    // A large body is read only once its caller has passed the header check (src/app/services.ts, `admit`).
    readBody(req, limits.get(path) ?? options.readMaxBytes, owner, protocol === "grpc", options.readTimeoutMs, admit && (() => admit(call)), later, (err, body) => {
      if (err) return failed(err);
      try {
        call.message = decodeInput(method.input, protocol, body);
      } catch (err) {
        return failed(err);
      } finally {
        // Decoded (or not): the bytes are no longer held.
        bodyBudget.give(owner, body.length);
      }
      let output: MaybePromise<Message>;
      try {
        output = entry.invoke(call);
      } catch (err) {
        return failed(err);
      }
      if (output instanceof Promise) output.then(answered, failed);
      else answered(output);
    });
  }

  /** The method and protocol of a call this path answers, or undefined. */
  function match(req: NodeRequest, http2: boolean): { entry: MethodEntry; protocol: Protocol; path: string } | undefined {
    if (req.method !== "POST" || !req.url) return undefined;
    const path = req.url.includes("?") ? req.url.slice(0, req.url.indexOf("?")) : req.url;
    const entry = methods.get(path);
    if (!entry) return undefined;
    const protocol = protocolOf(req, http2);
    return protocol ? { entry, protocol, path } : undefined;
  }

  // The request `accepts` matched last, and its match: an HTTP/2 stream is asked about, then handed to `handle`
  // through the observer and CORS in the same turn, and matching it twice was a path lookup and a second read of
  // its protocol headers per call.
  let acceptedReq: NodeRequest | undefined;
  let accepted: ReturnType<typeof match>;

  return {
    /** Whether `handle` would answer this call (nothing is read or written). */
    accepts(req: NodeRequest, http2: boolean): boolean {
      const found = match(req, http2);
      acceptedReq = found && http2 ? req : undefined;
      accepted = found;
      return found !== undefined;
    },
    /** Answers the call and returns true, or returns false (nothing read, nothing written) for Connect's handlers. */
    handle(req: NodeRequest, res: NodeResponse, http2: boolean): boolean {
      const call = req === acceptedReq && http2 ? accepted : match(req, http2);
      acceptedReq = undefined;
      accepted = undefined;
      if (!call) return false;
      serve(req, res, call.entry, call.protocol, call.path, http2);
      return true;
    },
  };
}
