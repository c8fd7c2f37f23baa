// The REST route table's types and the one dispatcher that turns a row into an RPC call and an envelope.
import { create, type DescField, type DescMessage, type DescMethod, type DescMethodUnary, type DescService, type JsonValue, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { createContextValues, type HandlerContext } from "@connectrpc/connect";
import type { IncomingMessage, ServerResponse } from "node:http";
import { forbidden } from "../../domain/errors.js";
import { NodeHeaders } from "../transport/headers.js";
import type { ServiceEntry } from "../transport/services.js";
import { errorText, logger } from "../log.js";
import { sendEnvelope } from "./envelope.js";
import { errorAnswer } from "./errors.js";
import { streamEvents, wantsEvents, type EventStream, type StreamTime } from "./events.js";
import { requestFromJson, responseToJson, type JsonObject } from "./json.js";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** A query-string parameter a row's `request` reads; described in the OpenAPI document (the name alone is found by itself). */
interface QueryParam {
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
  /**
   * Puts what JSON would carry only at a cost into the request once it is built: an uploaded file's bytes, which
   * as base64 in the JSON would be held three times (bytes, text, bytes again) for every upload at once.
   */
  attach?: (request: Record<string, unknown>) => void;
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
  /** The message when the answer decides it (a booking that is a request: `booking requested`), and every one it may pick (the docs); default `message`. */
  messageOf?: { pick: (response: JsonObject) => string; all: readonly string[] };
  /** HTTP status on success; default 200. */
  status?: number;
  /** How the body is read; default "json". */
  body?: "json" | "multipart" | "none";
  /** The body's object may be left out: every field in it has a default (the spec says "optional body"). */
  bodyOptional?: true;
  /**
   * A multipart row's file: its name inside the request's `user` object (`profile_picture`, sent as the form field
   * `user[profile_picture]`). The request message's `user` holds it as bytes, `filename`, and `<name>_text` for a
   * field that came as text instead of a file.
   */
  file?: string;
  /**
   * Names inside the body's object (each entry of it, for a list) that a request must carry: the service answers
   * without one 400 `missing params` naming it (an import entry: 422). The OpenAPI document lists them as
   * `required`; test/api/openapi.test.ts checks the list against the service's answers.
   */
  required?: readonly string[];
  /** Summary for docs. */
  summary: string;
  /**
   * Other GET paths whose answers show the resource this row writes (GET /user/settings shows the user): their
   * names are accepted and ignored in the body's object as the GET of the same path's are (src/platform/rest/fields.ts).
   */
  shownBy?: readonly string[];
  /**
   * The same path as a live stream (Server-Sent Events) when the client asks for `text/event-stream`: the server
   * streaming RPC `rpc`, its request built by `request` (given the `Last-Event-ID` header, if sent); each message is
   * an event with `id` and `event` picked by `id` and `event`, its REST JSON as `data` (./events.ts).
   */
  events?: EventStream<RestInput>;
  /**
   * The answer carries a secret (an API key; later a webhook secret): it is sent with `Cache-Control: no-store`
   * over REST and every RPC protocol (secretMethods), so no browser or proxy cache keeps it.
   */
  secret?: true;
}

/** What an answer with a secret is sent with. */
export const NO_STORE = { "Cache-Control": "no-store" } as const;

/** The RPCs whose answers carry a secret ("scheduling.v1.UserService/GetUser"), from the rows marked `secret`. */
export function secretMethods(routes: readonly RestRoute[]): ReadonlySet<string> {
  return new Set(routes.flatMap((r) => (r.kind === "rpc" && r.secret ? [`${r.service.typeName}/${methodOf(r).name}`] : [])));
}

/**
 * The RPCs that change state ("scheduling.v1.EventService/CreateEvent"): those of every row that is not a GET.
 * They take an Idempotency-Key over REST and every RPC protocol (src/platform/transport/idempotency.ts).
 */
export function writeMethods(routes: readonly RestRoute[]): ReadonlySet<string> {
  return new Set(routes.flatMap((r) => (r.kind === "rpc" && r.method !== "GET" ? [`${r.service.typeName}/${methodOf(r).name}`] : [])));
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

/** A row's `data`: one field of the RPC response. */
export const responseField = (name: string) => (response: JsonObject): JsonValue => response[name];

/**
 * A row's `request` for the common shape: path parameters copied into request fields (`{event_id: "id"}` reads
 * `:id` into `event_id`), plus the body's object under `bodyKey` when the client sent one.
 */
export function fromPath(fields: Record<string, string>, bodyKey?: string): (input: RestInput) => JsonValue {
  return ({ params, body }) => {
    const request: JsonObject = {};
    for (const [field, param] of Object.entries(fields)) request[field] = params[param];
    if (bodyKey !== undefined && body[bodyKey] !== undefined) request[bodyKey] = body[bodyKey];
    return request;
  };
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- implementations are looked up by name
type AnyServiceImpl = Record<string, (request: unknown, context: HandlerContext) => unknown>;

export interface Implementations {
  get(service: DescService): AnyServiceImpl | undefined;
  /** The service's check of the caller before a body is read (src/app/services.ts), if it has one. */
  admit(service: DescService): ((ctx: HandlerContext) => Promise<void>) | undefined;
}

export function methodOf(route: RpcRoute): DescMethodUnary {
  const m: DescMethod | undefined = route.service.methods.find((x) => x.localName === route.rpc);
  if (!m || m.methodKind !== "unary") throw new Error(`REST route ${route.method} ${route.path}: no unary RPC ${route.rpc} on ${route.service.typeName}`);
  return m as DescMethodUnary;
}

/** What a row's `data` picker takes from its RPC's answer (`probeData`). */
export interface DataProbe {
  /** The answer the picker was given: each field holds a mark. */
  answer: JsonObject;
  /** What the picker returned (the answer itself when the row has no picker). */
  picked: unknown;
  /** The answer field whose mark `value` is, if it is one. */
  fieldOf(value: unknown): DescField | undefined;
}

/**
 * Runs a row's `data` picker on an answer whose fields are marked, to learn which field (or what built of them)
 * the envelope's `data` is; undefined when the picker cannot run on marks. The OpenAPI document and the
 * unknown-field rule both read rows this way.
 */
export function probeData(route: RpcRoute): DataProbe | undefined {
  const marks = new Map<object, DescField>();
  const answer: JsonObject = {};
  for (const f of methodOf(route).output.fields) {
    const mark = {};
    marks.set(mark, f);
    answer[f.name] = mark as JsonValue;
  }
  let picked: unknown = answer;
  if (route.data) {
    try {
      picked = route.data(answer);
    } catch {
      return undefined;
    }
  }
  return { answer, picked, fieldOf: (value) => (typeof value === "object" && value !== null ? marks.get(value) : undefined) };
}

/**
 * The HandlerContext of a REST call. Built directly rather than with Connect's createHandlerContext, which copies
 * the request headers into a new Headers, makes two more for the response and links three AbortControllers on
 * every call: about a tenth of a REST request's CPU. Here headers are read from Node's object when asked, and
 * the abort signal and response headers exist only once a service asks for them.
 */
class RestContext implements HandlerContext {
  readonly protocolName = "rest";
  readonly requestMethod: string;
  readonly url: string;
  readonly requestHeader: Headers;
  readonly values = createContextValues();
  private controller: AbortController | undefined;
  private callerGone = false;
  private response: Headers | undefined;
  private trailer: Headers | undefined;

  constructor(
    req: IncomingMessage,
    res: ServerResponse,
    readonly service: DescService,
    readonly method: DescMethod,
  ) {
    this.requestMethod = req.method ?? "GET";
    // Before Express or inside it: Express's own originalUrl is the URL as it came, prefix included.
    this.url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? "";
    this.requestHeader = new NodeHeaders(req.headers);
    // Aborting makes an AbortError with a stack: only a caller that went away before the answer needs one.
    res.once("close", () => {
      if (res.writableFinished) return;
      this.callerGone = true;
      this.controller?.abort();
    });
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.callerGone) this.controller.abort();
    }
    return this.controller.signal;
  }

  timeoutMs(): number | undefined {
    return undefined;
  }

  get responseHeader(): Headers {
    return (this.response ??= new Headers());
  }

  get responseTrailer(): Headers {
    return (this.trailer ??= new Headers());
  }

  /** Copies the headers a service set (if it set any) onto the HTTP response. */
  sendHeadersTo(res: ServerResponse): void {
    if (this.response) for (const [k, v] of this.response) res.setHeader(k, v);
  }
}

export function contextFor(req: IncomingMessage, res: ServerResponse, service: DescService, method: DescMethod): HandlerContext {
  return new RestContext(req, res, service, method);
}

/** Headers as Express's `res.set(object)` sets them (none here is Content-Type, the one it treats apart). */
export function setHeaders(res: ServerResponse, headers: Readonly<Record<string, string>>): void {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
}

/**
 * One unary RPC's implementation, found as every in-process caller finds it (a REST row's `dispatch`, the pages'
 * `rpcCaller`): the service's object, the method by its local name. 403 "not implemented" when there is none.
 */
function implementationOf<I extends DescMessage, O extends DescMessage>(
  impls: Implementations,
  method: DescMethodUnary<I, O>,
): (request: MessageShape<I>, ctx: HandlerContext) => Promise<MessageShape<O>> {
  const impl = impls.get(method.parent);
  const fn = impl?.[method.localName];
  if (!fn) throw forbidden("not implemented");
  return async (request, ctx) => (await fn.call(impl, request, ctx)) as MessageShape<O>;
}

/** A unary RPC called in-process for one HTTP request: the request message built from `input`. */
export type RpcCall = <I extends DescMessage, O extends DescMessage>(method: DescMethodUnary<I, O>, input: MessageInitShape<I>) => Promise<MessageShape<O>>;

/**
 * The RPC caller of one HTTP request that is not a REST row (a page): each call goes to the implementation as a
 * row's does, with the request's REST context (its caller, its headers, its abort when the client goes).
 */
export function rpcCaller(impls: Implementations, req: IncomingMessage, res: ServerResponse): RpcCall {
  return (method, input) => implementationOf(impls, method)(create(method.input, input), new RestContext(req, res, method.parent, method));
}

/** Calls the row's RPC and answers with the envelope; every failure becomes an envelope too. */
export async function dispatch(route: RpcRoute, impls: Implementations, req: IncomingMessage, res: ServerResponse, input: RestInput, time?: StreamTime): Promise<void> {
  if (route.events && wantsEvents(req)) {
    const target = { service: route.service, impl: impls.get(route.service), name: `${route.method} ${route.path}` };
    return streamEvents(target, route.events, req, res, input, (service, method) => new RestContext(req, res, service, method), time);
  }
  const method = methodOf(route);
  const ctx = new RestContext(req, res, route.service, method);
  if (route.secret) setHeaders(res, NO_STORE);
  try {
    const rpc = implementationOf(impls, method);
    const requestJson = route.request ? route.request(input) : (input.body as JsonValue);
    const request = requestFromJson(method.input, requestJson);
    input.attach?.(request as unknown as Record<string, unknown>);
    const response = await rpc(request, ctx);
    const json = responseToJson(method.output, response as never);
    ctx.sendHeadersTo(res);
    sendEnvelope(res, route.status ?? 200, route.messageOf ? route.messageOf.pick(json) : route.message, route.data ? route.data(json) : json);
  } catch (err) {
    const answer = errorAnswer(err);
    if (answer.httpStatus >= 500 && answer.httpStatus !== 503) {
      logger.error({ msg: "request failed", request_id: req.headers["x-request-id"], route: `${route.method} ${route.path}`, error: errorText(err) });
    }
    setHeaders(res, answer.headers);
    sendEnvelope(res, answer.httpStatus, answer.message, answer.data);
  }
}

export function implementationsOf(entries: ServiceEntry[]): Implementations {
  const byName = new Map(entries.map((e) => [e.service.typeName, e]));
  return {
    get: (service) => byName.get(service.typeName)?.impl as unknown as AnyServiceImpl | undefined,
    admit: (service) => byName.get(service.typeName)?.admit,
  };
}
