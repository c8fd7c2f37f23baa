// Microsoft Graph v1.0 over an OAuth session: Graph's error bodies as ProviderError, every page of a collection, and 429/503 with Retry-After as a rate limit.
import { RateLimitedError, retryAfterMs } from "../shared/errors.js";
import type { OAuthSession } from "../shared/oauth.js";
import { ProviderError } from "../shared/types.js";

/*
 * Rules kept here (providers.md, learn.microsoft.com/graph concepts/errors, concepts/paging, concepts/throttling):
 *
 * - The session sends the bearer token, refreshes it shortly before it expires, and after a 401 refreshes it and
 *   repeats the call once (src/providers/shared/oauth.ts); a refused refresh is the grant gone (`invalid`).
 * - 429, and 503 with Retry-After, are Graph asking to wait: RateLimitedError with that time, after which the
 *   calendars feature makes no call of this connection until it has passed (reads fail closed, writes are retried
 *   by the outbox). A 503 without Retry-After is an outage like any 5xx.
 * - A collection is read page after page by `@odata.nextLink` (an absolute URL that keeps the query options but
 *   not the headers, so `Prefer` is sent again on each page) until a page has none. At most MAX_ITEMS items are
 *   read; a collection that holds more is unreadable (failure closed) rather than partly read.
 * - Graph answers errors as `{"error": {"code", "message"}}`; the code and a one-line message go into the error,
 *   which reaches the connection's `last_error`, so they never carry a token.
 */

/** Items of one collection read at most: 50 pages of 100 events, far beyond a host's calendar in a few weeks. */
export const MAX_ITEMS = 5000;
/** The page size asked for with `Prefer: odata.maxpagesize` (Graph may answer fewer). */
export const PAGE_SIZE = 100;

const PROVIDER = "microsoft";

interface GraphAnswer {
  status: number;
  /** The parsed JSON body, or undefined for an empty one. */
  body: unknown;
}

/** Graph's error code and message from an error body, on one line. */
function graphErrorOf(body: unknown): { code: string; message: string } {
  const error = typeof body === "object" && body !== null ? (body as { error?: { code?: unknown; message?: unknown } }).error : undefined;
  const code = typeof error?.code === "string" ? error.code.slice(0, 80) : "";
  const message = typeof error?.message === "string" ? error.message.replace(/\s+/g, " ").trim().slice(0, 200) : "";
  return { code, message };
}

/** The ProviderError for a Graph answer that is not a success. */
function graphFailure(what: string, status: number, body: unknown, retryAfter: string | null): ProviderError {
  if (status === 429 || (status === 503 && retryAfter !== null)) return new RateLimitedError(PROVIDER, retryAfterMs(retryAfter));
  const { code, message } = graphErrorOf(body);
  const detail = [code, message].filter(Boolean).join(": ");
  const text = `${what}: Microsoft Graph answered ${status}${detail ? ` (${detail})` : ""}`;
  // 401 after the session's renewal, or 403: a permission the grant lacks (Calendars.ReadWrite withdrawn by an
  // administrator) or a calendar no longer the account's to write; authorizing again is what heals it.
  if (status === 401 || status === 403) return new ProviderError("refused", text);
  if (status === 404) return new ProviderError("not_found", text);
  if (status >= 500) return new ProviderError("unreachable", text);
  return new ProviderError("bad_response", text);
}

interface GraphCall {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** A path below `{root}/v1.0` (`/me/calendars`), or an absolute URL below it (a next link). */
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Statuses answered to the caller instead of thrown (404 for a delete or a move). */
  accept?: readonly number[];
  /** Words for the error message: "reading the calendar". */
  what: string;
}

/** One connection's Graph: calls under `{MICROSOFT_GRAPH_URL}/v1.0`, within the caller's signal. */
export class GraphClient {
  constructor(
    private readonly session: OAuthSession,
    private readonly signal: AbortSignal,
  ) {}

  /** One call; errors thrown as ProviderError. */
  async call(call: GraphCall): Promise<GraphAnswer> {
    const path = /^https?:\/\//i.test(call.path) ? call.path : `/v1.0${call.path}`;
    const res = await this.session.request(path, { method: call.method, json: call.body, headers: call.headers }, this.signal);
    let text: string;
    try {
      text = await res.text();
    } catch {
      throw new ProviderError("unreachable", `${call.what}: Microsoft Graph's answer broke off`);
    }
    let body: unknown;
    if (text.trim() !== "") {
      try {
        body = JSON.parse(text);
      } catch {
        // A proxy's HTML error page, or a cut answer: say so rather than read it as empty.
        if (res.ok) throw new ProviderError("bad_response", `${call.what}: Microsoft Graph's answer is not JSON`);
      }
    }
    if (res.ok || call.accept?.includes(res.status)) return { status: res.status, body };
    throw graphFailure(call.what, res.status, body, res.headers.get("retry-after"));
  }

  /** Every item of a collection, following `@odata.nextLink`; `headers` (Prefer) go with every page. */
  async all(path: string, headers: Record<string, string>, what: string): Promise<unknown[]> {
    const items: unknown[] = [];
    let next: string | undefined = path;
    while (next !== undefined) {
      const { body } = await this.call({ method: "GET", path: next, headers, what });
      const page = body as { value?: unknown; "@odata.nextLink"?: unknown } | undefined;
      if (!page || !Array.isArray(page.value)) throw new ProviderError("bad_response", `${what}: Microsoft Graph's answer holds no collection`);
      items.push(...page.value);
      if (items.length > MAX_ITEMS) throw new ProviderError("bad_response", `${what}: more than ${MAX_ITEMS} items, more than the service reads`);
      const link = page["@odata.nextLink"];
      if (link !== undefined && typeof link !== "string") throw new ProviderError("bad_response", `${what}: Microsoft Graph's next link is not a URL`);
      next = link;
    }
    return items;
  }
}
