// Assembles the HTTP/1.1 Express app and the HTTP/2 handler: health, pictures, Connect router, REST table.
import { expressConnectMiddleware } from "@connectrpc/connect-express";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import type { ConnectRouter, HandlerContext, Interceptor } from "@connectrpc/connect";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, ServerHttp2Stream } from "node:http2";
import { toConnectError } from "../transport/errors.js";
import { errorAnswer } from "../rest/errors.js";
import { logger } from "../log.js";
import type { StreamTime } from "../rest/events.js";
import { API_PREFIX, createRestRouter } from "../rest/router.js";
import { implementationsOf, NO_STORE, secretMethods, type RestRoute } from "../rest/table.js";
import type { ServiceEntry } from "../transport/services.js";
import { registerHealth } from "./health.js";
import { registerReflection } from "./reflection.js";
import { reclassifyDecodeErrors } from "../transport/decodeErrors.js";
import { deadlines } from "../transport/deadlines.js";
import type { ErrorAnswerTarget } from "../transport/errorAnswer.js";
import { answerUnknownRpc, isRpcRequest } from "../transport/unknownRpc.js";
import { rpcPathsOf } from "./observe.js";
import { BINARY_READ, createFastUnary, interceptorOf, type UnaryStep } from "../transport/fastUnary.js";
import { StreamExchange } from "../transport/grpcStream.js";
import { JSON_READ, jsonOptionsOf } from "../transport/jsonRequests.js";
import { allFiles } from "./files.js";
import { ROOT_PATHS } from "../../domain/rootPaths.js";
import { docsRouter } from "./docs.js";
import { compressing } from "./compression.js";
import type { Metrics } from "./metrics.js";
import type { Observer } from "./observe.js";
import { ENDPOINT_NOT_FOUND, MALFORMED_PATH, sendEnvelope } from "../rest/envelope.js";
import { PICTURE_MAX_BYTES } from "../../domain/user.js";
import { CLOCK_CONTROL_PATH } from "./clockControl.js";

/**
 * Largest RPC message: a 5 MB picture plus room for the rest of the request, the picture in base64 as Connect's JSON
 * carries bytes (4/3 of it: at 6 MB, a picture of 4.7 MB to 5 MB was 413 over JSON where REST and binary RPC take it).
 */
export const RPC_READ_MAX_BYTES = Math.ceil(PICTURE_MAX_BYTES / 3) * 4 + 1024 * 1024;

export interface AppParts {
  services: ServiceEntry[];
  /** The REST table of /api/v1 (src/app/routes.ts). */
  restRoutes: RestRoute[];
  /** The services' check of an API key, for the REST rows that answer without an RPC. */
  authenticate: (ctx: HandlerContext) => Promise<unknown>;
  /** GET /pictures/<id> and /pictures/<id>/<width>.webp: a profile picture and its resized copies. */
  pictures: RequestHandler;
  /** GET and POST /oauth/<provider>/callback: where a provider sends the host's browser back after authorizing, and the answer to its question. */
  oauthCallback: RequestHandler;
  /** The booking pages, after everything else: they pass on what they do not serve. */
  pages: RequestHandler;
  isDatabaseUp: () => Promise<boolean>;
  /** Why the service cannot keep what it is given now (DATA_DIR cannot be written), or undefined: /healthz and gRPC health say not serving, naming it. */
  dataNotKept?: () => string | undefined;
  /** Request ids, log lines and metrics of RPCs; GET /metrics. */
  observer?: Pick<Observer, "interceptor" | "contextValues">;
  metrics?: Pick<Metrics, "handler">;
  /** REQUEST_TIMEOUT_MS: how long a unary request message may take to arrive. */
  requestTimeoutMs?: number;
  /** What the REST event streams' keep-alive reads time from (src/platform/rest/events.ts). */
  streamTime?: StreamTime;
  /** CLOCK_CONTROL=on: POST /admin/clock (clockControl.ts); undefined: no such path (404). */
  clockControl?: RequestHandler;
}

/** Node's own requestTimeout for HTTP/1.1 was 60 s before it was configurable. */
const REQUEST_TIMEOUT_DEFAULT_MS = 60_000;
/** How old a health check may be when the gRPC health service answers from it (Watch re-asks every second). */
const HEALTH_CHECK_FRESH_MS = 1000;

/**
 * Anything that is not already a ConnectError leaves as INTERNAL (or UNAVAILABLE), never with its own text, and
 * every error with its google.rpc details; a streamed answer's errors too, which are thrown while its messages are
 * read, after the call itself has returned.
 */
const sanitizeUnary: UnaryStep = (next) => (req) => {
  let answer: ReturnType<typeof next>;
  try {
    answer = next(req);
  } catch (err) {
    throw toConnectError(err);
  }
  // A promise chain rather than an async function: every call passes here, and an async frame and its await cost
  // a gRPC GetUser more promises and garbage than the chain (bench/RESULTS.md, issue 38).
  return answer instanceof Promise ? answer.then(undefined, rethrowSanitized) : answer;
};

const sanitizeStreams: Interceptor = (next) => (req) => {
  let answer: ReturnType<typeof next>;
  try {
    answer = next(req);
  } catch (err) {
    return Promise.reject(toConnectError(err));
  }
  return answer.then((res) => (res.stream ? { ...res, message: sanitizedStream(res.message) } : res), rethrowSanitized);
};

const sanitizeErrors = interceptorOf(sanitizeUnary, sanitizeStreams);

function rethrowSanitized(err: unknown): never {
  throw toConnectError(err);
}

async function* sanitizedStream<T>(messages: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (err) {
    throw toConnectError(err);
  }
}

/** Answers that carry a secret (rows marked `secret` in the REST table) are sent over every RPC protocol with no-store too. */
function noStoreSecrets(methods: ReadonlySet<string>): Interceptor {
  const headers = Object.entries(NO_STORE);
  const noStore = <R extends { header: Headers }>(res: R): R => {
    for (const [k, v] of headers) res.header.set(k, v);
    return res;
  };
  // Each method's answer, by its descriptor: naming it ("<service>/<method>") on every call made a string to look up.
  const secret = new Map<DescMethod, boolean>();
  const isSecret = (method: DescMethod, service: DescService): boolean => {
    let known = secret.get(method);
    if (known === undefined) secret.set(method, (known = methods.has(`${service.typeName}/${method.name}`)));
    return known;
  };
  const step: UnaryStep = (next) => (req) => {
    if (!isSecret(req.method, req.service)) return next(req);
    const answer = next(req);
    return answer instanceof Promise ? answer.then(noStore) : noStore(answer);
  };
  // Streamed answers get the header the same way: the step only sets it on the response.
  return interceptorOf(step);
}

/**
 * Options both Connect adapters share; the observer sits inside the sanitiser so it sees the original error, and
 * the deadline's rule inside the observer so the request line names the code the caller gets.
 */
function rpcOptions(parts: AppParts) {
  const noStore = noStoreSecrets(secretMethods(parts.restRoutes));
  const interceptors = parts.observer ? [sanitizeErrors, noStore, parts.observer.interceptor, deadlines] : [sanitizeErrors, noStore, deadlines];
  return {
    interceptors,
    contextValues: parts.observer?.contextValues,
    readMaxBytes: RPC_READ_MAX_BYTES,
    binaryOptions: BINARY_READ,
    jsonOptions: JSON_READ,
    readTimeoutMs: parts.requestTimeoutMs ?? REQUEST_TIMEOUT_DEFAULT_MS,
  };
}

/** GET /healthz (extensions.md "Running"): 200 `{"status":"ok"}`, else 503 `{"status":"unavailable"}`, with the `cause` when the data cannot be kept. */
async function health(parts: AppParts): Promise<{ code: number; body: { status: string; cause?: string } }> {
  const cause = parts.dataNotKept?.();
  if (cause !== undefined) return { code: 503, body: { status: "unavailable", cause } };
  const up = await parts.isDatabaseUp();
  return up ? { code: 200, body: { status: "ok" } } : { code: 503, body: { status: "unavailable" } };
}

export function connectRoutes(parts: AppParts) {
  // The health service answers from a check at most HEALTH_CHECK_FRESH_MS old, made when asked: a check pings the
  // database, and a replica nobody asks (most of them, most of the time) pinged it every second for nothing.
  let last: { at: number; serving: Promise<boolean> } | undefined;
  const serving = (): Promise<boolean> => {
    const now = performance.now();
    if (last === undefined || now - last.at >= HEALTH_CHECK_FRESH_MS) last = { at: now, serving: health(parts).then((h) => h.code === 200) };
    return last.serving;
  };
  // A served service left out of the list would be missing from reflection (grpcurl, buf curl) and from the tests that go through every service.
  const unlisted = parts.services.filter((e) => !allFiles.includes(e.service.file)).map((e) => e.service.typeName);
  if (unlisted.length > 0) throw new Error(`not listed in src/platform/http/files.ts: ${unlisted.join(", ")}`);
  return {
    routes(router: ConnectRouter) {
      // Method by method, not `router.service`: each one's JSON options read its own request message (jsonRequests.ts).
      for (const { service, impl, readMaxBytes } of parts.services) {
        const fns = impl as unknown as Record<string, (...args: never[]) => unknown>;
        for (const method of service.methods) {
          const fn = fns[method.localName].bind(impl) as Parameters<ConnectRouter["rpc"]>[1];
          router.rpc(method as never, fn, { ...(readMaxBytes === undefined ? {} : { readMaxBytes }), jsonOptions: jsonOptionsOf(method.input) });
        }
      }
      registerHealth(router, serving, parts.services.map((e) => e.service.typeName));
      registerReflection(router, allFiles);
      reclassifyDecodeErrors(router);
    },
  };
}

/**
 * Answers a request that nothing served and that is an RPC by its form (unknownRpc.ts) as an unknown method in its
 * own protocol, and returns true; anything else (REST's paths above all) is left to the JSON 404.
 */
function unknownRpcAnswer(routes: (router: ConnectRouter) => void): (req: IncomingMessage | Http2ServerRequest, res: ErrorAnswerTarget) => boolean {
  const served = new Set([...rpcPathsOf(routes)].map((path) => path.slice(1, path.lastIndexOf("/"))));
  return (req, res) => {
    const url = req.url ?? "/";
    const path = url.includes("?") ? url.slice(0, url.indexOf("?")) : url;
    const type = req.headers["content-type"] ?? "";
    if (REST_PATH.test(path) || !isRpcRequest(req.method, path, type)) return false;
    answerUnknownRpc(res, path, type, served);
    return true;
  };
}

/** REST's paths, in any case (the REST router takes its prefix in any case): their 404 stays the envelope. */
const REST_PATH = new RegExp(`^${API_PREFIX}(/|$)`, "i");

export function createHttp1App(parts: AppParts, routes: (router: ConnectRouter) => void): (req: IncomingMessage, res: ServerResponse) => void {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.set("query parser", "simple");

  // REST first, as it and plain unary RPCs are nearly all the traffic; its paths never collide with the RPCs'
  // or the routes below. Anything it does not answer goes on.
  const rest = createRestRouter(parts.restRoutes, implementationsOf(parts.services), parts.authenticate, parts.streamTime);
  app.use(API_PREFIX, rest.mounted);

  app.get(`/${ROOT_PATHS.healthz}`, async (_req: Request, res: Response) => {
    const h = await health(parts);
    res.status(h.code).json(h.body);
  });

  if (parts.clockControl) app.post(CLOCK_CONTROL_PATH, parts.clockControl);
  app.get(`/${ROOT_PATHS.pictures}/:id`, parts.pictures);
  app.get(`/${ROOT_PATHS.pictures}/:id/:variant`, parts.pictures);
  // GET: the provider sends the browser back; POST: the person answers the page's question (connect or not).
  app.route(`/${ROOT_PATHS.oauth}/:provider/callback`).get(parts.oauthCallback).post(parts.oauthCallback);

  if (parts.metrics) app.get(`/${ROOT_PATHS.metrics}`, parts.metrics.handler);
  // Pages, scripts, styles, /docs and the OpenAPI document are compressed for clients that take it; REST
  // envelopes are compressed where they are sent (src/platform/rest/envelope.ts); RPCs never here.
  app.use(compressing(docsRouter(parts.restRoutes)));
  app.use(expressConnectMiddleware({ routes, ...rpcOptions(parts) }));
  // The booking pages last: GETs of one or two url-shaped segments, /booking, /team, /d and /assets; any other GET
  // of a page-shaped path is their HTML 404. Everything else (the API's and the other roots' paths, RPC paths, other
  // methods) they pass on to the JSON 404.
  app.use(compressing(parts.pages));
  const unknown = unknownRpcAnswer(routes);
  app.use((req: Request, res: Response) => {
    if (!unknown(req, res)) sendEnvelope(res, 404, ENDPOINT_NOT_FOUND);
  });
  // What a route's matcher throws before any handler runs: Express decodes a path's parameters (/pictures/:id,
  // /oauth/:provider/callback) and would answer a URIError with its own page, the stack trace in it. The envelope
  // instead; anything else that reaches here is ours to log.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof URIError) return sendEnvelope(res, 400, MALFORMED_PATH);
    const answer = errorAnswer(err);
    if (answer.httpStatus === 500) logger.error({ msg: "request failed before its handler", error: String(err) });
    for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
    sendEnvelope(res, answer.httpStatus, answer.message, answer.data);
  });
  // Plain unary RPCs, and the REST rows, are answered before Express: they use nothing of it, and entering it (its
  // prototype swaps on req and res, the router walk) cost more than the call itself (Connect GetUser: 142 µs of
  // CPU in Express, 61 before it). The REST rows are the same handler as the one mounted above, which still serves
  // what `direct` declines (a prefix spelled in another case); test/api/rest-direct.test.ts compares the two.
  // Anything else (and every other path) goes to the app.
  const fast = createFastUnary({ services: parts.services, ...rpcOptions(parts) });
  return (req, res) => {
    if (!fast.handle(req, res, false) && !rest.direct(req, res)) app(req, res);
  };
}

/**
 * Plain unary calls on HTTP/2 (gRPC above all) straight off node:http2's streams (src/platform/transport/grpcStream.ts):
 * returns the exchange it answers (which emits 'close' when done), or undefined, having touched nothing, for any
 * other stream, which then goes to `createHttp2Handler`.
 * `wrap` is what every HTTP/2 request passes through (the observer and CORS).
 */
export function createHttp2StreamHandler(
  parts: AppParts,
  wrap: (handler: (req: StreamExchange, res: StreamExchange) => void) => (req: StreamExchange, res: StreamExchange) => void,
): (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, peer: string) => StreamExchange | undefined {
  const fast = createFastUnary({ services: parts.services, ...rpcOptions(parts) });
  const answer = wrap((req, res) => fast.handle(req, res, true));
  return (stream, headers, peer) => {
    const exchange = new StreamExchange(stream, headers, peer);
    if (!fast.accepts(exchange, true)) return undefined;
    exchange.claim();
    answer(exchange, exchange);
    return exchange;
  };
}

/** Everything on HTTP/2 that `createHttp2StreamHandler` declines: Connect's own handlers, then health and 404. */
export function createHttp2Handler(parts: AppParts, routes: (router: ConnectRouter) => void) {
  const unknown = unknownRpcAnswer(routes);
  return connectNodeAdapter({
    routes,
    ...rpcOptions(parts),
    // REST is served over HTTP/1.1; on h2c only RPCs and the health check answer.
    fallback(req, res) {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.url === `/${ROOT_PATHS.healthz}`) {
        void health(parts).then((h) => send(h.code, h.body));
        return;
      }
      if (unknown(req, res)) return;
      send(404, { success: false, message: ENDPOINT_NOT_FOUND, data: {}, status: "not_found" });
    },
  });
}
