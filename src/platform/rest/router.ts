// The /api/v1 handler built from the route table: path matching, body limits, the rows, 403 rows and body errors.
import { PICTURE_MAX_BYTES } from "../../domain/user.js";
import { ROOT_PATHS } from "../../domain/rootPaths.js";
import { unknownFieldMessage } from "../../domain/errors.js";
import type { HandlerContext } from "@connectrpc/connect";
import express, { type NextFunction } from "express";
import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseQuery } from "node:querystring";
import { UserService } from "../../../gen/scheduling/v1/user_pb.js";
import { ENDPOINT_NOT_FOUND, MALFORMED_PATH, sendEnvelope } from "./envelope.js";
import { errorAnswer } from "./errors.js";
import type { StreamTime } from "./events.js";
import type { JsonObject } from "./json.js";
import { formNamesAsObject, MultipartError, readMultipart, spooledBytes } from "./multipart.js";
import { contextFor, dispatch, methodOf, setHeaders, type Implementations, type RestInput, type RestRoute, type RpcRoute } from "./table.js";
import { nameRoute } from "./routeName.js";
import { bodyRuleOf, takingOnly, unknownFields, type BodyRule } from "./fields.js";

/** A request as the rows read it: Node's, with the body once express.json has read it. */
type Request = IncomingMessage & { body?: unknown };
type Response = ServerResponse;

/** Where the REST table is served: every row's path is below it. */
export const API_PREFIX = `/${ROOT_PATHS.api}/v1`;
export const JSON_BODY_LIMIT = "1mb";
/** The form field that carries a multipart row's file (RpcRoute.file): `user[profile_picture]`. */
export function fileField(route: RpcRoute): string {
  return `user[${fileName(route)}]`;
}

function fileName(route: RpcRoute): string {
  if (!route.file) throw new Error(`the multipart row ${route.method} ${route.path} names no file`);
  return route.file;
}

/** The file's bytes field as protobuf-es names it: profile_picture → profilePicture. */
function camelCase(name: string): string {
  return name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

function isMultipart(req: Request): boolean {
  return /^multipart\/form-data/i.test(req.headers["content-type"] ?? "");
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Multipart picture upload (a profile picture, a brand logo) → the upload's request as proto JSON, and what the body
 * held as JSON names (`sent`, checked by the body rule as a JSON body is); `release` once it has been served.
 */
async function pictureBody(route: RpcRoute, req: Request): Promise<{ body: JsonObject; sent?: JsonObject; attach?: RestInput["attach"]; release?: () => void }> {
  const name = fileName(route);
  if (!isMultipart(req)) {
    // A JSON body can only carry the picture as text, which is refused in the service like a text form field.
    const body: unknown = req.body;
    const user = isObject(body) && isObject(body.user) ? body.user : {};
    const sent = user[name];
    return { body: { user: sent === undefined || sent === null ? {} : { [`${name}_text`]: typeof sent === "string" ? sent : JSON.stringify(sent) } } };
  }
  const field = fileField(route);
  const form = await readMultipart(req, field, PICTURE_MAX_BYTES);
  const { file, release } = form;
  const sent = formNamesAsObject(form.names) as JsonObject;
  if (file) {
    let bytes: Buffer, done: () => void;
    try {
      ({ bytes, done } = await spooledBytes(file));
    } catch (err) {
      release();
      throw err;
    }
    // The bytes go into the request as they are (see RestInput.attach); the JSON says only that there is a file.
    const attach = (request: Record<string, unknown>) => Object.assign(request.user as object, { [camelCase(name)]: bytes });
    const over = () => {
      done();
      release();
    };
    return { body: { user: { [name]: "", filename: file.filename } }, sent, attach, release: over };
  }
  const text = form.fields.get(field);
  if (text !== undefined) return { body: { user: { [`${name}_text`]: text } }, sent, release };
  return { body: { user: {} }, sent, release };
}

async function readInput(route: RpcRoute, req: Request, params: Record<string, string>, query: Record<string, unknown>): Promise<RestInput & { sent?: JsonObject; release?: () => void }> {
  if (route.body === "multipart") {
    const picture = await pictureBody(route, req);
    // A JSON body on the upload row is checked as it came.
    return { params, query, ...picture, sent: picture.sent ?? (isObject(req.body) ? req.body : {}) };
  }
  if (route.body === "none") return { params, query, body: {} };
  const body: unknown = req.body;
  if (body === undefined || body === null) return { params, query, body: {} };
  if (!isObject(body)) throw new BodyShapeError();
  return { params, query, body };
}

class BodyShapeError extends Error {}

/** Body parser and anything else thrown before a row's handler answered → the envelope. */
function answerError(err: unknown, res: Response): void {
  const type = (err as { type?: string }).type;
  if (type === "entity.too.large") return sendEnvelope(res, 413, `request body is larger than ${JSON_BODY_LIMIT.toUpperCase()}`);
  if (type === "entity.parse.failed") return sendEnvelope(res, 400, "malformed JSON in request body");
  if (type === "encoding.unsupported" || type === "charset.unsupported") return sendEnvelope(res, 415, "unsupported request body encoding");
  if (type === "request.aborted") return;
  const status = (err as { status?: number }).status;
  if (typeof status === "number" && status >= 400 && status < 500) return sendEnvelope(res, status, "bad request");
  const a = errorAnswer(err);
  setHeaders(res, a.headers);
  sendEnvelope(res, a.httpStatus, a.message, a.data);
}

interface CompiledRoute {
  route: RestRoute;
  /** Matches the path below /api/v1: case-insensitive, an optional trailing slash (Express's defaults). */
  pattern: RegExp;
  /** The names of the pattern's groups, in order. */
  params: string[];
  /** "GET /api/v1/events/:id": what the request line and metrics show instead of the raw URL. */
  name: string;
}

/** "/events/:id" → /^\/events\/([^/]+)\/?$/i; "/two_factor/*rest" → one or more segments for `rest`. */
function compilePath(path: string): { pattern: RegExp; params: string[] } {
  const params: string[] = [];
  const source = path
    .split("/")
    .map((segment) => {
      if (segment.startsWith(":")) {
        params.push(segment.slice(1));
        return "([^/]+)";
      }
      if (segment.startsWith("*")) {
        params.push(segment.slice(1));
        return "(.+)";
      }
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return { pattern: new RegExp(`^${source}/?$`, "i"), params };
}

class PathEncodingError extends Error {}

function decodeParams(names: string[], match: RegExpExecArray): Record<string, string> {
  const params: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) {
    try {
      params[names[i]] = decodeURIComponent(match[i + 1]);
    } catch {
      throw new PathEncodingError();
    }
  }
  return params;
}

/** The headers announce a body (what body-parser itself checks before reading). */
function hasBody(req: Request): boolean {
  return req.headers["transfer-encoding"] !== undefined || req.headers["content-length"] !== undefined;
}

/** JSON, with or without parameters ("application/json; charset=utf-8"). */
function isJson(req: Request): boolean {
  return /^application\/json\s*(;|$)/i.test(req.headers["content-type"] ?? "");
}

/**
 * A write's body must say it is JSON (or, on the picture upload, multipart/form-data): a browser sends text/plain,
 * form-encoded and multipart bodies cross-origin without asking first, so accepting JSON under any declared type
 * let any web page book through its visitors (issue 14). An empty body (Content-Length: 0) declares nothing.
 * Session-only rows read no body and answer 403 anyway.
 */
function unsupportedBodyType(route: RestRoute, req: Request): string | undefined {
  if (route.kind !== "rpc" || req.method === "GET" || req.method === "HEAD" || !hasBody(req) || req.headers["content-length"] === "0") return undefined;
  if (isJson(req)) return undefined;
  if (route.body === "multipart") return isMultipart(req) ? undefined : "Content-Type must be multipart/form-data or application/json";
  return "Content-Type must be application/json";
}

/** The row of the method and path below the prefix, or undefined. */
function rowOf(compiled: readonly CompiledRoute[], method: string | undefined, path: string): { c: CompiledRoute; match: RegExpExecArray } | undefined {
  const m = method === "HEAD" ? "GET" : method;
  for (const c of compiled) {
    if (c.route.method !== m && c.route.method !== "ALL") continue;
    const match = c.pattern.exec(path);
    if (match) return { c, match };
  }
  return undefined;
}

/**
 * The methods the table has for a path no row of the request's method matched: scheduling-api.md answers a wrong
 * method 404 `endpoint does not exists`, and so do we, naming what the path takes (`Allow`, as a 405 would, and
 * `data.allowed_methods`) so a client sees its mistake is the method. A GET row answers HEAD too.
 */
function allowedMethods(compiled: readonly CompiledRoute[], path: string): string[] {
  const methods = new Set<string>(compiled.filter((c) => c.route.method !== "ALL" && c.pattern.test(path)).map((c) => c.route.method));
  return ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].filter((m) => methods.has(m === "HEAD" ? "GET" : m));
}

/**
 * The /api/v1 handler built from the table: finds the row of the method and path, in table order, and serves it.
 * `mounted` is Express middleware (`app.use("/api/v1", ...)`): anything it does not answer goes on to the next
 * handler (the OpenAPI document, then the 404 envelope). `direct` serves the same rows before Express, for a
 * request Express would hand to `mounted` unchanged (see `directPath`); it returns false, having touched nothing,
 * for any other.
 *
 * One handler rather than an Express route per row: Express's router walks its layers one `next()` at a time,
 * building closures and match objects at each, which cost a REST call more CPU and garbage than the rest of
 * routing together. Semantics are Express's: GET rows answer HEAD, "ALL" rows every method, paths match
 * case-insensitively with an optional trailing slash, parameters are percent-decoded (400 if they cannot be).
 *
 * `authenticate` is the services' own check of an API key (and its rate limit), which the session-only rows run
 * before their 403 so a bad key still gets its 401.
 */
export function createRestRouter(
  routes: RestRoute[],
  impls: Implementations,
  authenticate: (ctx: HandlerContext) => Promise<unknown>,
  /** What an event stream's keep-alive reads time from (events.ts). */
  time?: StreamTime,
): { mounted: (req: Request, res: Response, next: NextFunction) => void; direct: (req: Request, res: Response) => boolean } {
  const compiled: CompiledRoute[] = routes.map((route) => ({ route, ...compilePath(route.path), name: `${route.method} ${API_PREFIX}${route.path}` }));
  // What each JSON write's object may hold (src/platform/rest/fields.ts), worked out once from the table.
  // A picture upload's form (or JSON body) takes the file alone: `user[is_admin]` beside it is the same 422 as in JSON.
  const ruleOfRow = (r: RpcRoute) => (r.body === "multipart" ? takingOnly(bodyRuleOf(r, routes), [fileName(r)]) : bodyRuleOf(r, routes));
  const bodyRules = new Map<RestRoute, BodyRule>(
    routes.flatMap((r) => (r.kind === "rpc" && (r.body ?? "json") !== "none" && r.method !== "GET" ? [[r, ruleOfRow(r)] as const] : [])),
  );
  // Every body that gets here is declared JSON (unsupportedBodyType), or multipart for its route, or an empty one.
  const json = express.json({ limit: JSON_BODY_LIMIT, strict: false, type: (req) => !isMultipart(req as Request) });

  async function serve(route: RestRoute, req: Request, res: Response, params: Record<string, string>, query: Record<string, unknown>): Promise<void> {
    if (route.kind === "session_only") {
      await authenticate(contextFor(req, res, UserService, UserService.method.getUser));
      return sendEnvelope(res, 403, route.message);
    }
    if (route.body === "multipart") {
      // The caller is checked before a byte of the upload is read: a bad key costs the service no memory.
      const admit = impls.admit(route.service);
      if (admit) {
        await admit(contextFor(req, res, route.service, methodOf(route))).catch((err: unknown) => {
          // The connection closes after the answer: node:http would otherwise read the rest of the upload
          // (25 MB) through memory only to drop it, to keep the connection for another request.
          res.setHeader("Connection", "close");
          // Gone as soon as the answer is written: until then node:http reads what the client keeps sending.
          res.once("finish", () => req.socket.destroy());
          throw err;
        });
      }
    }
    let input: RestInput & { sent?: JsonObject; release?: () => void };
    try {
      input = await readInput(route, req, params, query);
    } catch (err) {
      if (err instanceof BodyShapeError) return sendEnvelope(res, 400, "request body must be a JSON object");
      if (err instanceof MultipartError) return sendEnvelope(res, 400, `malformed multipart body: ${err.message}`);
      throw err;
    }
    const rule = bodyRules.get(route);
    const unknown = rule ? unknownFields(rule, input.sent ?? input.body) : [];
    if (rule && unknown.length > 0) {
      input.release?.();
      // An unknown caller hears 401 (or 403), as it would for any other body; nothing is written either way.
      const admit = impls.admit(route.service);
      if (admit) await admit(contextFor(req, res, route.service, methodOf(route)));
      return sendEnvelope(res, 422, unknownFieldMessage(unknown[0], rule.allowed), { unknown, allowed: rule.allowed });
    }
    try {
      await dispatch(route, impls, req, res, input, time);
    } finally {
      input.release?.();
    }
  }

  const run = (route: RestRoute, req: Request, res: Response, params: Record<string, string>, query: Record<string, unknown>) =>
    serve(route, req, res, params, query).catch((err: unknown) => answerError(err, res));

  /** Serves the row found for the request; `query` is made only once a row needs it (Express's req.query, or parsed here alike). */
  function answer({ c, match }: { c: CompiledRoute; match: RegExpExecArray }, req: Request, res: Response, query: () => Record<string, unknown>): void {
    nameRoute(req, c.name);
    let params: Record<string, string>;
    try {
      params = decodeParams(c.params, match);
    } catch (err) {
      if (err instanceof PathEncodingError) return sendEnvelope(res, 400, MALFORMED_PATH);
      throw err;
    }
    const unsupported = unsupportedBodyType(c.route, req);
    if (unsupported !== undefined) return sendEnvelope(res, 415, unsupported);
    if (!hasBody(req)) {
      void run(c.route, req, res, params, query());
      return;
    }
    json(req, res, (err?: unknown) => {
      if (err) answerError(err, res);
      else void run(c.route, req, res, params, query());
    });
  }

  const mounted = (req: Request, res: Response, next: NextFunction) => {
    const url = req.url ?? "";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    const row = rowOf(compiled, req.method, path);
    if (row) return answer(row, req, res, () => (req as Request & { query: Record<string, unknown> }).query);
    const allowed = allowedMethods(compiled, path);
    if (allowed.length === 0) return next();
    res.setHeader("Allow", allowed.join(", "));
    sendEnvelope(res, 404, ENDPOINT_NOT_FOUND, { allowed_methods: allowed });
  };

  const direct = (req: Request, res: Response): boolean => {
    const url = req.url ?? "";
    const path = directPath(url);
    if (path === undefined) return false;
    const row = rowOf(compiled, req.method, path);
    if (!row) return false;
    const q = url.indexOf("?");
    try {
      // Express's "simple" query parser: node:querystring over what follows the first "?".
      answer(row, req, res, () => parseQuery(q === -1 ? "" : url.slice(q + 1)));
    } catch (err) {
      // What Express's router would have caught for the mounted handler.
      answerError(err, res);
    }
    return true;
  };

  return { mounted, direct };
}

/**
 * The path below the prefix of a URL `direct` may serve, or undefined: it must begin with the prefix as spelled
 * (Express matches it in any case and strips it; those go through Express) followed by "/", and hold nothing
 * Express's URL parsing reads differently from a plain split at "?" (a "#", white space).
 */
function directPath(url: string): string | undefined {
  if (!url.startsWith(API_PREFIX) || url.charCodeAt(API_PREFIX.length) !== 0x2f || /[#\s]/.test(url)) return undefined;
  const q = url.indexOf("?");
  return url.slice(API_PREFIX.length, q === -1 ? undefined : q);
}
