// One log line and one metrics sample per request on every protocol, under a request id that is accepted or made, and echoed.
import { randomFillSync } from "node:crypto";
import type http from "node:http";
import http2 from "node:http2";
import {
  Code,
  ConnectError,
  createConnectRouter,
  createContextKey,
  type ConnectRouter,
  type ContextKey,
  type ContextValues,
  type Interceptor,
  type StreamRequest,
  type UnaryRequest,
} from "@connectrpc/connect";
import { errorText, logger, logRequest, type RequestLine } from "../log.js";
import { sendUnrepeatedUnindexed, StreamExchange } from "../transport/grpcStream.js";
import { interceptorOf, type UnaryStep } from "../transport/fastUnary.js";
import { routeNameOf } from "../rest/routeName.js";
import { toConnectError } from "../transport/errors.js";
import { isRpcRequest } from "../transport/unknownRpc.js";
import type { Metrics } from "./metrics.js";

export type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest | StreamExchange;
export type NodeResponse = http.ServerResponse | http2.Http2ServerResponse | StreamExchange;

type Protocol = "rest" | "connect" | "grpc" | "grpc-web" | "http";

interface RequestRecord {
  id: string;
  /** How the RPC ended, as its interceptor saw it. */
  rpcOutcome?: Code | "ok";
}

/** A request id we echo and log must be short and plain: anything else is replaced, never trusted into a log line. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;
/** Codes that mean the server failed, not the caller. */
const SERVER_FAULTS = new Set([Code.Unknown, Code.Internal, Code.Unavailable, Code.DataLoss]);

/** Request ids made at a time: one random fill, one string read out of the buffer they are written into. */
const IDS_PER_BATCH = 64;
const ID_LENGTH = 36;
const ID_RANDOM = Buffer.alloc(16 * IDS_PER_BATCH);
const HEX_DIGITS = Buffer.from("0123456789abcdef", "latin1");
/** The batch's ids as they are written: hex digits filled in around the dashes, one id after the other. */
const ID_TEXT = Buffer.from("00000000-0000-4000-8000-000000000000".repeat(IDS_PER_BATCH), "latin1");
let idBatch = "";
let idNext = IDS_PER_BATCH;

function writeIdBatch(): void {
  randomFillSync(ID_RANDOM);
  for (let id = 0; id < IDS_PER_BATCH; id++) {
    let out = id * ID_LENGTH;
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) out++; // the dash
      let byte = ID_RANDOM[id * 16 + i];
      if (i === 6) byte = (byte & 0x0f) | 0x40; // version 4
      else if (i === 8) byte = (byte & 0x3f) | 0x80; // RFC 4122 variant
      ID_TEXT[out++] = HEX_DIGITS[byte >> 4];
      ID_TEXT[out++] = HEX_DIGITS[byte & 0x0f];
    }
  }
  idBatch = ID_TEXT.toString("latin1");
  idNext = 0;
}

/**
 * A random (version 4) UUID, as crypto.randomUUID makes it. Why not randomUUID itself: it joins 20 strings per id,
 * and a request without an id of its own (every gRPC call of a client that sends none) pays that. Here 64 ids are
 * written into one buffer and read out as one string, and an id is a slice of it: the buffer's string (a call into
 * the runtime) cost a gRPC call more than writing its digits.
 */
export function newRequestId(): string {
  if (idNext === IDS_PER_BATCH) writeIdBatch();
  const at = idNext++ * ID_LENGTH;
  return idBatch.slice(at, at + ID_LENGTH);
}

const recordKey = createContextKey<RequestRecord | undefined>(undefined, { description: "request record" });

/** "NotFound" → "not_found", the spelling of the Connect protocol and of grpc status names in lower case. */
export function codeName(code: Code | "ok"): string {
  return code === "ok" ? "ok" : Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

function protocolOf(method: string | undefined, path: string, contentType: string, connectVersion: boolean, rpcPaths: ReadonlySet<string>): Protocol {
  const ct = contentType.toLowerCase();
  if (ct.startsWith("application/grpc-web")) return "grpc-web";
  if (ct.startsWith("application/grpc")) return "grpc";
  if (path === "/api/v1" || path.startsWith("/api/v1/")) return "rest";
  // An RPC of a method not served is answered as Connect's (unknownRpc.ts) and counted as one.
  if (rpcPaths.has(path) || connectVersion || isRpcRequest(method, path, contentType)) return "connect";
  return "http";
}

/** The request paths of every RPC the Connect router serves, e.g. "/scheduling.v1.UserService/GetUser". */
export function rpcPathsOf(routes: (router: ConnectRouter) => void): Set<string> {
  const router = createConnectRouter();
  routes(router);
  return new Set(router.handlers.map((h) => h.requestPath));
}

export function headerOf(req: NodeRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * A call's context values, holding its request record from the start. The same as Connect's createContextValues
 * (values under their key's symbol, the key's default when unset), with the methods on a prototype instead of
 * three new functions for every call.
 */
class RequestValues implements ContextValues {
  constructor(record: RequestRecord | undefined) {
    this.set(recordKey, record);
  }

  get<T>(key: ContextKey<T>): T {
    const own = this as unknown as Record<symbol, T>;
    return key.id in own ? own[key.id] : key.defaultValue;
  }

  set<T>(key: ContextKey<T>, value: T): this {
    (this as unknown as Record<symbol, T>)[key.id] = value;
    return this;
  }

  delete(key: ContextKey<unknown>): this {
    delete (this as unknown as Record<symbol, unknown>)[key.id];
    return this;
  }
}

// The request's record rides on the request object itself: a property under a private symbol costs less than a
// WeakMap entry, which the garbage collector must treat as an ephemeron on every collection.
const RECORD = Symbol("request record");
type Observed = { [RECORD]?: RequestRecord };

/** The route pattern that answered, never the raw URL (public booking URLs carry private keys). */
function expressRoute(req: NodeRequest): string | undefined {
  const named = routeNameOf(req);
  if (named !== undefined) return named;
  const r = req as { route?: { path?: unknown }; baseUrl?: unknown };
  if (typeof r.route?.path !== "string") return undefined;
  return `${req.method} ${typeof r.baseUrl === "string" ? r.baseUrl : ""}${r.route.path}`;
}

export interface Observer {
  wrap<Req extends NodeRequest, Res extends NodeResponse>(handler: (req: Req, res: Res) => void): (req: Req, res: Res) => void;
  /** Records the RPC's code for the request line; logs unexpected errors (put it after the error-sanitising interceptor). */
  interceptor: Interceptor;
  /** Hands the request's record to the Connect handlers (adapter option `contextValues`). */
  contextValues(req: NodeRequest): ContextValues;
}

/** Logs an unexpected error and records the code the caller is told, then throws it on. */
const failed = (req: UnaryRequest | StreamRequest, record: RequestRecord | undefined, err: unknown): never => {
  if (!(err instanceof ConnectError)) logger.error({ msg: "rpc failed", request_id: record?.id, rpc: `${req.service.typeName}/${req.method.name}`, error: errorText(err) });
  // The code the caller is told: the sanitiser outside makes a database that is down or busy UNAVAILABLE.
  if (record) record.rpcOutcome = toConnectError(err).code;
  throw err;
};
// A unary call's outcome is known when its answer is (without a promise when the answer needs none: UnaryStep).
const unary: UnaryStep = (next) => (req) => {
  const record = req.contextValues.get(recordKey);
  let answer: ReturnType<typeof next>;
  try {
    answer = next(req);
  } catch (err) {
    return failed(req, record, err);
  }
  if (answer instanceof Promise) {
    return answer.then(
      (res) => {
        if (record) record.rpcOutcome = "ok";
        return res;
      },
      (err: unknown) => failed(req, record, err),
    );
  }
  if (record) record.rpcOutcome = "ok";
  return answer;
};
// A stream's outcome is known only when it ends. A promise chain rather than an async function, as the sanitiser in app.ts.
const streams: Interceptor = (next) => (req) => {
  const record = req.contextValues.get(recordKey);
  const fail = (err: unknown): never => failed(req, record, err);
  let answer: ReturnType<typeof next>;
  try {
    answer = next(req);
  } catch (err) {
    return Promise.reject(err).catch(fail);
  }
  return answer.then((res) => {
    if (!res.stream) {
      if (record) record.rpcOutcome = "ok";
      return res;
    }
    const messages = res.message;
    return {
      ...res,
      message: (async function* () {
        try {
          yield* messages;
          if (record) record.rpcOutcome = "ok";
        } catch (err) {
          fail(err);
        }
      })(),
    };
  }, fail);
};
/** The interceptor that records each RPC's outcome on its request's record (the code its caller is told). */
const rpcOutcomes: Interceptor = interceptorOf(unary, streams);

export function createObserver(rpcPaths: ReadonlySet<string>, metrics: Pick<Metrics, "observeRequest">): Observer {
  // Each RPC's route name ("scheduling.v1.UserService/GetUser"), made once rather than cut from the path per call.
  const rpcRoutes = new Map([...rpcPaths].map((path) => [path, path.slice(1)]));

  function finish(req: NodeRequest, res: NodeResponse, record: RequestRecord, started: bigint, protocol: Protocol, path: string): void {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const isRpc = protocol === "connect" || protocol === "grpc" || protocol === "grpc-web";
    let route: string;
    let status: string | number;
    if (isRpc) {
      route = rpcRoutes.get(path) ?? "unmatched";
      const grpcStatus = Number(res.getHeader("grpc-status"));
      const code = record.rpcOutcome ?? (grpcStatus === 0 ? "ok" : Number.isInteger(grpcStatus) && Code[grpcStatus] ? (grpcStatus as Code) : undefined);
      status = code !== undefined ? codeName(code) : res.statusCode === 200 ? "ok" : `http_${res.statusCode}`;
    } else {
      const preflight = req.method === "OPTIONS" && headerOf(req, "access-control-request-method") !== undefined;
      route = expressRoute(req) ?? (preflight ? "OPTIONS preflight" : req.method === "GET" && path === "/healthz" ? "GET /healthz" : "unmatched");
      status = res.statusCode;
    }
    const serverFault = res.statusCode >= 500 || (record.rpcOutcome !== undefined && record.rpcOutcome !== "ok" && SERVER_FAULTS.has(record.rpcOutcome));
    const line: RequestLine = {
      msg: "request",
      request_id: record.id,
      protocol,
      http_version: req.httpVersion,
      method: req.method,
      route,
      status,
      http_status: res.statusCode,
      duration_ms: Math.round(seconds * 1e6) / 1e3,
    };
    if (!res.writableFinished) line.aborted = true;
    if (serverFault) logger.error(line);
    else logRequest(line);
    metrics.observeRequest(protocol, route, String(status), seconds);
  }

  return {
    interceptor: rpcOutcomes,
    contextValues: (req) => new RequestValues(req instanceof StreamExchange ? (req.observed as RequestRecord | undefined) : (req as Observed)[RECORD]),
    wrap(handler) {
      return (req, res) => {
        const started = process.hrtime.bigint();
        const given = headerOf(req, "x-request-id");
        const record: RequestRecord = { id: given !== undefined && ACCEPTED_REQUEST_ID.test(given) ? given : newRequestId() };
        res.setHeader("X-Request-Id", record.id);
        if (res instanceof http2.Http2ServerResponse) sendUnrepeatedUnindexed(res.stream);
        // Whoever reads the request's headers from here on reads the id it is logged under.
        if (req instanceof StreamExchange) {
          req.observed = record;
          req.added["x-request-id"] = record.id;
        } else {
          req.headers["x-request-id"] = record.id;
          (req as Observed)[RECORD] = record;
        }
        const url = req.url ?? "/";
        const query = url.indexOf("?");
        const path = query === -1 ? url : url.slice(0, query);
        const protocol = protocolOf(req.method, path, headerOf(req, "content-type") ?? "", headerOf(req, "connect-protocol-version") !== undefined, rpcPaths);
        // Both node:http and the HTTP/2 compatibility layer emit "close" once after every answer, finished or not.
        res.once("close", () => finish(req, res, record, started, protocol, path));
        handler(req, res);
      };
    },
  };
}
