// The REST route table's types and the one dispatcher that turns a row into an RPC call and an envelope.
import type { DescMethod, DescMethodUnary, DescService, JsonValue } from "@bufbuild/protobuf";
import { createHandlerContext, type HandlerContext } from "@connectrpc/connect";
import type { Request, Response } from "express";
import { forbidden } from "../domain/errors.js";
import { errorText, logger } from "../log.js";
import { sendEnvelope } from "./envelope.js";
import { errorAnswer } from "./errors.js";
import { requestFromJson, responseToJson, type JsonObject } from "./json.js";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** A query-string parameter a row's `request` reads; described in the OpenAPI document (the name alone is found by itself). */
export interface QueryParam {
  name: string;
  description?: string;
  /** JSON schema of the value; default: the schema of the request field it fills, else a string. */
  schema?: { [key: string]: JsonValue };
}

/** What a row may read from the HTTP request to build the RPC request. */
export interface RestInput {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: JsonObject;
}

export interface RpcRoute {
  kind: "rpc";
  method: HttpMethod;
  /** Express path below /api/v1, e.g. "/events/:id". */
  path: string;
  service: DescService;
  /** The method's local name on the service implementation, e.g. "getUser". */
  rpc: string;
  /** Builds the RPC request as proto JSON; default: the body as is. */
  request?: (input: RestInput) => JsonValue;
  /** Query parameters `request` reads, for the docs. */
  query?: QueryParam[];
  /** Picks the envelope's `data` from the RPC response JSON; default: the whole response. */
  data?: (response: JsonObject) => JsonValue;
  message: string;
  /** HTTP status on success; default 200. */
  status?: number;
  /** How the body is read; default "json". */
  body?: "json" | "multipart" | "none";
  /** Summary for docs. */
  summary: string;
}

/** A path that answers 403 to API keys: it needs a signed-in browser session. */
export interface SessionOnlyRoute {
  kind: "session_only";
  method: HttpMethod | "ALL";
  path: string;
  message: string;
  summary: string;
}

export type RestRoute = RpcRoute | SessionOnlyRoute;

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- implementations are looked up by name
export type AnyServiceImpl = Record<string, (request: unknown, context: HandlerContext) => unknown>;

export interface Implementations {
  get(service: DescService): AnyServiceImpl | undefined;
}

export function methodOf(route: RpcRoute): DescMethodUnary {
  const m: DescMethod | undefined = route.service.methods.find((x) => x.localName === route.rpc);
  if (!m || m.methodKind !== "unary") throw new Error(`REST route ${route.method} ${route.path}: no unary RPC ${route.rpc} on ${route.service.typeName}`);
  return m as DescMethodUnary;
}

export function headersOf(req: Request): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    h.set(k, Array.isArray(v) ? v.join(", ") : v);
  }
  return h;
}

export function contextFor(req: Request, service: DescService, method: DescMethod, signal: AbortSignal): HandlerContext {
  return createHandlerContext({
    service,
    method,
    protocolName: "rest",
    requestMethod: req.method,
    url: req.originalUrl,
    requestHeader: headersOf(req),
    requestSignal: signal,
  });
}

/** Calls the row's RPC and answers with the envelope; every failure becomes an envelope too. */
export async function dispatch(route: RpcRoute, impls: Implementations, req: Request, res: Response, input: RestInput): Promise<void> {
  const method = methodOf(route);
  const impl = impls.get(route.service);
  const fn = impl?.[route.rpc];
  const abort = new AbortController();
  res.once("close", () => abort.abort());
  try {
    if (!fn) throw forbidden("not implemented");
    const requestJson = route.request ? route.request(input) : (input.body as JsonValue);
    const request = requestFromJson(method.input, requestJson);
    const ctx = contextFor(req, route.service, method, abort.signal);
    const response = await fn.call(impl, request, ctx);
    const json = responseToJson(method.output, response as never);
    for (const [k, v] of ctx.responseHeader) res.setHeader(k, v);
    sendEnvelope(res, route.status ?? 200, route.message, route.data ? route.data(json) : json);
  } catch (err) {
    const answer = errorAnswer(err);
    if (answer.httpStatus >= 500 && answer.httpStatus !== 503) {
      res.locals.error = err;
      logger.error({ msg: "request failed", request_id: req.headers["x-request-id"], route: `${route.method} ${route.path}`, error: errorText(err) });
    }
    res.set(answer.headers);
    sendEnvelope(res, answer.httpStatus, answer.message, answer.data);
  }
}
