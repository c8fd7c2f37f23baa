// CORS for browser clients of REST, Connect and gRPC-Web: origins from CORS_ORIGINS, headers from Connect's own lists.
import { cors as connectCors } from "@connectrpc/connect";
import { headerOf, type NodeRequest, type NodeResponse } from "./observe.js";

// X-ADMIN-TOKEN is left out on purpose: the admin API is for internal services, never for a page in a browser.
export const CORS_ALLOWED_HEADERS = [...connectCors.allowedHeaders, "X-API-KEY", "X-Request-Id"];
export const CORS_EXPOSED_HEADERS = [...connectCors.exposedHeaders, "X-Request-Id"];
export const CORS_ALLOWED_METHODS = [...new Set([...connectCors.allowedMethods, "GET", "POST", "PUT", "PATCH", "DELETE"])];
export const CORS_MAX_AGE_SECONDS = 7200;

/**
 * Answers preflights from allowed origins and marks their other answers readable; requests from any other origin
 * pass through untouched, so the browser refuses them. With no origins configured the handler is returned as is.
 */
export function withCors<Req extends NodeRequest, Res extends NodeResponse>(
  origins: readonly string[],
  handler: (req: Req, res: Res) => void,
): (req: Req, res: Res) => void {
  if (origins.length === 0) return handler;
  const anyOrigin = origins.includes("*");
  const allowed = new Set(origins);
  return (req, res) => {
    const origin = headerOf(req, "origin");
    if (!anyOrigin) res.setHeader("Vary", "Origin");
    if (origin === undefined || !(anyOrigin || allowed.has(origin))) return handler(req, res);
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
