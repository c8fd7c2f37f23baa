// Microsoft Graph v1.0 over HTTP for one account: bearer tokens (renewed once after a 401), Graph's error bodies, every page of a collection, and 429/503 Retry-After honoured per account.
import { OutboundError, outboundRequest, type OutboundResponse } from "../shared/outbound.js";
import { CalendarSourceError } from "../shared/types.js";

/*
 * Rules kept here (providers.md, learn.microsoft.com/graph concepts/errors, concepts/paging, concepts/throttling):
 *
 * - Every call carries `Authorization: Bearer <access token>`. A 401 means the token is no longer good (expired
 *   early, revoked, continuous access evaluation): the token is renewed once and the same call repeated once; a
 *   second 401 means the grant is gone and the connection's credentials are refused.
 * - 429 and 503 may carry Retry-After (seconds). Until then no call of this account goes out: reads fail closed at
 *   once and writes fail so that the outbox retries them later. Graph throttles per app and mailbox, so "this
 *   account" is the Graph user the connection speaks for. Without Retry-After a 429 still holds calls back briefly.
 * - A collection is read page after page by `@odata.nextLink` (an absolute URL that keeps the query options but not
 *   the headers, so `Prefer` is sent again on each page) until a page has none. A next link that leaves the Graph
 *   root would take the bearer token elsewhere: it is refused. At most MAX_ITEMS items are read; a collection that
 *   holds more is unreadable (failure closed) rather than partly read.
 * - Graph answers errors as `{"error": {"code", "message"}}`; the code and a one-line message go into the error,
 *   which reaches the connection's `last_error`, so they never carry a token.
 */

/** The bearer tokens of one connection: the shared OAuth client supplies them and stores what a refresh rotates. */
export interface AccessTokens {
  /** The access token to send now (refreshed first when it is about to expire). */
  current(signal: AbortSignal): Promise<string>;
  /** A new access token after Graph refused the current one; rejects with CalendarSourceError `refused` when the grant is gone. */
  renew(signal: AbortSignal): Promise<string>;
}

/** Items of one collection read at most: 50 pages of 100 events, far beyond a host's calendar in a few weeks. */
export const MAX_ITEMS = 5000;
/** The page size asked for with `Prefer: odata.maxpagesize` (Graph may answer fewer). */
export const PAGE_SIZE = 100;
/** The longest answer read, in bytes (a page of 100 events with their selected fields is far below it). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** A 429 without Retry-After still holds the account's calls back this long. */
const DEFAULT_HOLD_MS = 5_000;
/** A Retry-After longer than this is read as this: a broken header must not silence an account for days. */
const MAX_HOLD_MS = 3_600_000;

/**
 * When each account may be called again, after Graph asked to wait. One per provider instance (so per process):
 * replicas each learn it from their own first 429, which is what Graph expects of independent clients.
 */
export class Throttles {
  private readonly until = new Map<string, number>();

  /** Milliseconds still to wait before calling for `account` (0: may call now). */
  wait(account: string, now = Date.now()): number {
    const at = this.until.get(account);
    if (at === undefined) return 0;
    if (at <= now) {
      this.until.delete(account);
      return 0;
    }
    return at - now;
  }

  hold(account: string, ms: number, now = Date.now()): void {
    const at = now + Math.min(Math.max(ms, 0), MAX_HOLD_MS);
    if (at > (this.until.get(account) ?? 0)) this.until.set(account, at);
  }
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(at - now, 0);
}

export interface GraphAnswer {
  status: number;
  headers: Record<string, string>;
  /** The parsed JSON body, or undefined for an empty one. */
  body: unknown;
}

/** Graph's error code and message from an error body, on one line. */
function graphErrorOf(body: unknown): { code: string; message: string } {
  const error = typeof body === "object" && body !== null ? (body as { error?: { code?: unknown; message?: unknown } }).error : undefined;
  const code = typeof error?.code === "string" ? error.code : "";
  const message = typeof error?.message === "string" ? error.message.replace(/\s+/g, " ").trim().slice(0, 200) : "";
  return { code, message };
}

/** The CalendarSourceError for a Graph error answer. */
export function graphFailure(what: string, answer: GraphAnswer): CalendarSourceError {
  const { code, message } = graphErrorOf(answer.body);
  const detail = [code, message].filter(Boolean).join(": ");
  const text = `${what}: Microsoft Graph answered ${answer.status}${detail ? ` (${detail})` : ""}`;
  // 403: the grant lacks a permission (Calendars.ReadWrite withdrawn by an administrator) or the calendar became
  // read-only; re-authorizing is what heals it, as for refused credentials.
  if (answer.status === 401 || answer.status === 403) return new CalendarSourceError("refused", text);
  if (answer.status === 404) return new CalendarSourceError("not_found", text);
  if (answer.status === 429 || answer.status >= 500) return new CalendarSourceError("unreachable", text);
  return new CalendarSourceError("bad_response", text);
}

export interface GraphCall {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** A path below `{root}/v1.0` (`/me/calendars`), or an absolute URL below the root (a next link). */
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Statuses answered to the caller instead of thrown (404 for a delete or a move). */
  accept?: readonly number[];
  /** Words for the error message: "reading the calendar". */
  what: string;
}

/** One account's Graph: calls go to `{root}/v1.0`, each exchange within `timeoutMs` and the caller's signal. */
export class GraphClient {
  private readonly root: string;

  constructor(
    root: string,
    private readonly tokens: AccessTokens,
    private readonly throttles: Throttles,
    /** Whose calls these are, for Retry-After: the Graph user id the connection speaks for. */
    private readonly account: string,
    private readonly timeoutMs: number,
    private readonly signal: AbortSignal,
  ) {
    this.root = root.replace(/\/+$/, "");
  }

  private urlOf(path: string): string {
    if (!/^https?:\/\//i.test(path)) return `${this.root}/v1.0${path}`;
    // Next links are absolute; one that points anywhere but this Graph root would be handed the bearer token.
    if (!path.startsWith(`${this.root}/`)) throw new CalendarSourceError("bad_response", "Microsoft Graph answered a next page outside its own address");
    return path;
  }

  private async exchange(call: GraphCall, token: string): Promise<GraphAnswer> {
    const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: "application/json", ...call.headers };
    let body: string | undefined;
    if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers["Content-Type"] = "application/json";
    }
    let res: OutboundResponse;
    try {
      // The Graph root is the operator's setting (MICROSOFT_GRAPH_URL), not a host's: the private-address rule is not for it.
      res = await outboundRequest(this.urlOf(call.path), { method: call.method, headers, body, timeoutMs: this.timeoutMs, allowPrivate: true, maxBytes: MAX_ANSWER_BYTES, signal: this.signal });
    } catch (err) {
      if (err instanceof OutboundError) throw new CalendarSourceError("unreachable", `${call.what}: ${err.message}`);
      throw err;
    }
    let parsed: unknown;
    if (res.body.trim() !== "") {
      try {
        parsed = JSON.parse(res.body);
      } catch {
        // A proxy's HTML error page, or a cut answer: say so rather than read it as empty.
        if (res.status >= 200 && res.status < 300) throw new CalendarSourceError("bad_response", `${call.what}: Microsoft Graph's answer is not JSON`);
      }
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  /** One call: refused at once while the account is held back, the token renewed once after a 401, errors thrown as CalendarSourceError. */
  async call(call: GraphCall): Promise<GraphAnswer> {
    const wait = this.throttles.wait(this.account);
    if (wait > 0) {
      throw new CalendarSourceError("unreachable", `${call.what}: Microsoft Graph asked to wait; retry after ${Math.ceil(wait / 1000)} s`);
    }
    let answer = await this.exchange(call, await this.tokens.current(this.signal));
    if (answer.status === 401) answer = await this.exchange(call, await this.tokens.renew(this.signal));
    if (answer.status === 429 || answer.status === 503) {
      const after = retryAfterMs(answer.headers["retry-after"]);
      if (after !== undefined || answer.status === 429) this.throttles.hold(this.account, after ?? DEFAULT_HOLD_MS);
    }
    if ((answer.status >= 200 && answer.status < 300) || call.accept?.includes(answer.status)) return answer;
    throw graphFailure(call.what, answer);
  }

  /** Every item of a collection, following `@odata.nextLink`; `headers` (Prefer) go with every page. */
  async all(path: string, headers: Record<string, string>, what: string): Promise<unknown[]> {
    const items: unknown[] = [];
    let next: string | undefined = path;
    while (next !== undefined) {
      const { body } = await this.call({ method: "GET", path: next, headers, what });
      const page = body as { value?: unknown; "@odata.nextLink"?: unknown } | undefined;
      if (!page || !Array.isArray(page.value)) throw new CalendarSourceError("bad_response", `${what}: Microsoft Graph's answer holds no collection`);
      items.push(...page.value);
      if (items.length > MAX_ITEMS) throw new CalendarSourceError("bad_response", `${what}: more than ${MAX_ITEMS} items, more than the service reads`);
      const link = page["@odata.nextLink"];
      if (link !== undefined && typeof link !== "string") throw new CalendarSourceError("bad_response", `${what}: Microsoft Graph's next link is not a URL`);
      next = link;
    }
    return items;
  }
}
