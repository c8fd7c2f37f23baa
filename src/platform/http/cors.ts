// CORS for browser clients of REST, Connect and gRPC-Web: origins from CORS_ORIGINS, headers from Connect's own lists; cross-origin writes from other origins refused.
import { IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER } from "../transport/idempotency.js";
import { cors as connectCors } from "@connectrpc/connect";
import { forbidden } from "../../domain/errors.js";
import { rpcErrorAnswer, sendRpcErrorAnswer, type ErrorAnswerTarget } from "../transport/errorAnswer.js";
import { headerOf, type NodeRequest, type NodeResponse } from "./observe.js";

// X-ADMIN-TOKEN is left out on purpose: the admin API is for internal services, never for a page in a browser.
const CORS_ALLOWED_HEADERS = [...connectCors.allowedHeaders, "X-API-KEY", "X-Request-Id", IDEMPOTENCY_KEY_HEADER];
const CORS_EXPOSED_HEADERS = [...connectCors.exposedHeaders, "X-Request-Id", REPLAYED_HEADER];
const CORS_ALLOWED_METHODS = [...new Set([...connectCors.allowedMethods, "GET", "POST", "PUT", "PATCH", "DELETE"])];
const CORS_MAX_AGE_SECONDS = 7200;

/** Who may do what from a browser: CORS_ORIGINS, and the origins that are this service itself. */
export interface CorsPolicy {
  /** CORS_ORIGINS: may read answers and write ("*": any origin). */
  allowed: readonly string[];
  /**
   * The service's own public origin (APP_URL's), whose pages may write without CORS: behind a proxy that
   * rewrites Host, a page served here would otherwise not be recognised as same-origin.
   */
  own: readonly string[];
}

export function corsPolicy(corsOrigins: readonly string[], appUrl: string): CorsPolicy {
  let own: string[] = [];
  try {
    if (appUrl !== "") own = [new URL(appUrl).origin];
  } catch {
    own = []; // an APP_URL that is no URL names no origin
  }
  return { allowed: corsOrigins, own };
}

/** Methods that only read: a browser may send them from anywhere (a link, an image), and they change nothing. */
const READ_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/** Whether `origin` ("https://a.example:8443") is the origin the request was sent to (its Host), i.e. not cross-origin. */
function isSameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && url.host === new URL(`${url.protocol}//${host}`).host;
  } catch {
    return false; // "null" (a sandboxed frame, a file) and anything unreadable
  }
}

/**
 * A cross-origin write CORS does not allow: sent by a browser (it says its Origin) from an origin that is neither
 * this one nor listed in CORS_ORIGINS, with a method that changes something. A browser sends some such requests
 * without asking first (a form post, a fetch with text/plain: "simple" requests), so a hostile page could make
 * its visitors book, cancel or reschedule through their own addresses; the page cannot read the answer, but the
 * change would be done. Refusing it here covers REST and every RPC protocol.
 */
function refusedCrossOriginWrite(req: NodeRequest, origin: string | undefined, mayWrite: (origin: string) => boolean): boolean {
  return origin !== undefined && !READ_METHODS.has(req.method ?? "GET") && !mayWrite(origin) && !isSameOrigin(origin, headerOf(req, "host") ?? headerOf(req, ":authority"));
}

function refuse(req: NodeRequest, res: NodeResponse, origin: string): void {
  const message = `cross-origin write refused: ${origin.slice(0, 200)} is not an allowed origin (CORS_ORIGINS)`;
  if (/^\/api\/v1(\/|\?|$)/i.test(req.url ?? "")) {
    send(res, 403, { "Content-Type": "application/json; charset=utf-8" }, JSON.stringify({ success: false, message, data: {}, status: "forbidden" }));
    return;
  }
  // Elsewhere an RPC error in the caller's protocol (a Connect error for anything else): gRPC and gRPC-Web clients
  // read nothing but "HTTP 403" from a JSON body, and every RPC error carries its details (callers.md).
  sendRpcErrorAnswer(res as ErrorAnswerTarget, rpcErrorAnswer(headerOf(req, "content-type") ?? "", forbidden(message)));
}

function send(res: NodeResponse, status: number, headers: Record<string, string>, body: string): void {
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}

/**
 * Answers preflights from allowed origins and marks their other answers readable; reads from any other origin
 * pass through untouched, so the browser refuses to show them, and writes from any other origin are refused
 * (REST 403, an RPC PERMISSION_DENIED in its protocol's own form) before they do anything. Requests without an Origin (servers, gRPC, curl) are not cross-origin requests.
 */
export function withCors<Req extends NodeRequest, Res extends NodeResponse>(
  policy: CorsPolicy,
  handler: (req: Req, res: Res) => void,
): (req: Req, res: Res) => void {
  const origins = policy.allowed;
  const anyOrigin = origins.includes("*");
  const allowed = new Set(origins);
  const own = new Set(policy.own);
  const isAllowed = (origin: string) => anyOrigin || allowed.has(origin);
  const mayWrite = (origin: string) => isAllowed(origin) || own.has(origin);
  if (origins.length === 0) {
    return (req, res) => {
      const origin = headerOf(req, "origin");
      if (refusedCrossOriginWrite(req, origin, mayWrite)) return refuse(req, res, origin!);
      handler(req, res);
    };
  }
  return (req, res) => {
    const origin = headerOf(req, "origin");
    if (!anyOrigin) res.setHeader("Vary", "Origin");
    if (refusedCrossOriginWrite(req, origin, mayWrite)) return refuse(req, res, origin!);
    if (origin === undefined || !isAllowed(origin)) return handler(req, res);
    res.setHeader("Access-Control-Allow-Origin", anyOrigin ? "*" : origin);
    if (req.method === "OPTIONS" && headerOf(req, "access-control-request-method") !== undefined) {
      res.setHeader("Access-Control-Allow-Methods", CORS_ALLOWED_METHODS.join(", "));
      res.setHeader("Access-Control-Allow-Headers", CORS_ALLOWED_HEADERS.join(", "));
      res.setHeader("Access-Control-Max-Age", String(CORS_MAX_AGE_SECONDS));
      res.statusCode = 204;
      res.end();
      return;
    }
    res.setHeader("Access-Control-Expose-Headers", CORS_EXPOSED_HEADERS.join(", "));
    handler(req, res);
  };
}
