// Assembles the HTTP/1.1 Express app and the HTTP/2 handler: health, pictures, Connect router, REST table.
import { expressConnectMiddleware } from "@connectrpc/connect-express";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { ConnectRouter, HandlerContext, Interceptor } from "@connectrpc/connect";
import express, { type Request, type RequestHandler, type Response } from "express";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { ServerHttp2Stream } from "node:http2";
import { toConnectError } from "../transport/errors.js";
import { API_PREFIX, createRestRouter } from "../rest/router.js";
import { implementationsOf, NO_STORE, secretMethods, type RestRoute } from "../rest/table.js";
import type { ServiceEntry } from "../transport/services.js";
import { registerHealth } from "./health.js";
import { registerReflection } from "./reflection.js";
import { reclassifyDecodeErrors } from "../transport/decodeErrors.js";
import { BINARY_READ, createFastUnary } from "../transport/fastUnary.js";
import { StreamExchange } from "../transport/grpcStream.js";
import { allFiles } from "./files.js";
import { ROOT_PATHS } from "../../domain/user.js";
import { docsRouter } from "./docs.js";
import { compressing } from "./compression.js";
import type { Metrics } from "./metrics.js";
import type { Observer } from "./observe.js";
import { ENDPOINT_NOT_FOUND, sendEnvelope } from "../rest/envelope.js";

/** Largest RPC message: a 5 MB picture plus room for the rest of the request. */
const RPC_READ_MAX_BYTES = 6 * 1024 * 1024;

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
  /** Request ids, log lines and metrics of RPCs; GET /metrics. */
  observer?: Pick<Observer, "interceptor" | "contextValues">;
  metrics?: Pick<Metrics, "handler">;
  /** REQUEST_TIMEOUT_MS: how long a unary request message may take to arrive. */
  requestTimeoutMs?: number;
}

/** Node's own requestTimeout for HTTP/1.1 was 60 s before it was configurable. */
const REQUEST_TIMEOUT_DEFAULT_MS = 60_000;

// Anything that is not already a ConnectError leaves as INTERNAL (or UNAVAILABLE), never with its own text.
const sanitizeErrors: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (err) {
    throw toConnectError(err);
  }
};

/** Answers that carry a secret (rows marked `secret` in the REST table) are sent over every RPC protocol with no-store too. */
function noStoreSecrets(methods: ReadonlySet<string>): Interceptor {
  return (next) => async (req) => {
    const res = await next(req);
    if (methods.has(`${req.service.typeName}/${req.method.name}`)) for (const [k, v] of Object.entries(NO_STORE)) res.header.set(k, v);
    return res;
  };
}

/** Options both Connect adapters share; the observer sits inside the sanitiser so it sees the original error. */
function rpcOptions(parts: AppParts) {
  const noStore = noStoreSecrets(secretMethods(parts.restRoutes));
  const interceptors = parts.observer ? [sanitizeErrors, noStore, parts.observer.interceptor] : [sanitizeErrors, noStore];
  return {
    interceptors,
    contextValues: parts.observer?.contextValues,
    readMaxBytes: RPC_READ_MAX_BYTES,
    binaryOptions: BINARY_READ,
    readTimeoutMs: parts.requestTimeoutMs ?? REQUEST_TIMEOUT_DEFAULT_MS,
  };
}

export function connectRoutes(parts: AppParts) {
  let serving = true;
  // The health service answers from the last database check; checking is cheap and runs every second.
  const poll = setInterval(() => {
    void parts.isDatabaseUp().then((up) => {
      serving = up;
    });
  }, 1000);
  poll.unref();
  // A served service left out of the list would be missing from reflection (grpcurl, buf curl) and from the tests that go through every service.
  const unlisted = parts.services.filter((e) => !allFiles.includes(e.service.file)).map((e) => e.service.typeName);
  if (unlisted.length > 0) throw new Error(`not listed in src/platform/http/files.ts: ${unlisted.join(", ")}`);
  return {
    routes(router: ConnectRouter) {
      for (const { service, impl, readMaxBytes } of parts.services) router.service(service, impl, readMaxBytes === undefined ? undefined : { readMaxBytes });
      registerHealth(router, () => serving, parts.services.map((e) => e.service.typeName));
      registerReflection(router, allFiles);
      reclassifyDecodeErrors(router);
    },
    stop: () => clearInterval(poll),
  };
}

export function createHttp1App(parts: AppParts, routes: (router: ConnectRouter) => void): (req: IncomingMessage, res: ServerResponse) => void {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.set("query parser", "simple");

  // REST first, as it and plain unary RPCs are nearly all the traffic; its paths never collide with the RPCs'
  // or the routes below. Anything it does not answer goes on.
  const rest = createRestRouter(parts.restRoutes, implementationsOf(parts.services), parts.authenticate);
  app.use(API_PREFIX, rest.mounted);

  app.get(`/${ROOT_PATHS.healthz}`, async (_req: Request, res: Response) => {
    const up = await parts.isDatabaseUp();
    res.status(up ? 200 : 503).json({ status: up ? "ok" : "unavailable" });
  });

  app.get(`/${ROOT_PATHS.pictures}/:id`, parts.pictures);
  app.get(`/${ROOT_PATHS.pictures}/:id/:variant`, parts.pictures);
  // GET: the provider sends the browser back; POST: the person answers the page's question (connect or not).
  app.route(`/${ROOT_PATHS.oauth}/:provider/callback`).get(parts.oauthCallback).post(parts.oauthCallback);

  if (parts.metrics) app.get(`/${ROOT_PATHS.metrics}`, parts.metrics.handler);
  // Pages, scripts, styles, /docs and the OpenAPI document are compressed for clients that take it; REST
  // envelopes are compressed where they are sent (src/platform/rest/envelope.ts); RPCs never here.
  app.use(compressing(docsRouter(parts.restRoutes)));
  app.use(expressConnectMiddleware({ routes, ...rpcOptions(parts) }));
  // The booking pages last: only GETs of one or two url-shaped segments (never a reserved root, never a dotted RPC
  // path) and /booking, /assets; everything else they pass on to the JSON 404.
  app.use(compressing(parts.pages));
  app.use((_req: Request, res: Response) => sendEnvelope(res, 404, ENDPOINT_NOT_FOUND));
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
): (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => StreamExchange | undefined {
  const fast = createFastUnary({ services: parts.services, ...rpcOptions(parts) });
  const answer = wrap((req, res) => fast.handle(req, res, true));
  return (stream, headers) => {
    const exchange = new StreamExchange(stream, headers);
    if (!fast.accepts(exchange, true)) return undefined;
    exchange.claim();
    answer(exchange, exchange);
    return exchange;
  };
}

/** Everything on HTTP/2 that `createHttp2StreamHandler` declines: Connect's own handlers, then health and 404. */
export function createHttp2Handler(parts: AppParts, routes: (router: ConnectRouter) => void) {
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
        void parts.isDatabaseUp().then((up) => send(up ? 200 : 503, { status: up ? "ok" : "unavailable" }));
        return;
      }
      send(404, { success: false, message: ENDPOINT_NOT_FOUND, data: {}, status: "not_found" });
    },
  });
}
