// iCalendar feeds (a calendar's "secret address"): one GET, revalidated with ETag / If-None-Match.
import { hash } from "node:crypto";
import { OutboundError, outboundRequest } from "../shared/outbound.js";
import { ProviderError, type ProviderSettings } from "../shared/types.js";
import type { ObjectsRead } from "../shared/ical.js";

/** The answer size read of a feed (docs/calendars-and-meetings.md "Limits"): years of a busy calendar stay far below it; beyond it a feed is refused, not read in part. */
const FEED_MAX_BYTES = 20 * 1024 * 1024;
/** Published feeds often answer from another address (a CDN, a storage host); more hops than this is a loop. */
const MAX_REDIRECTS = 3;

/** A feed URL's user info becomes a Basic Authorization header (a Radicale or Nextcloud feed needs one). */
function requestOf(feedUrl: string): { url: string; headers: Record<string, string> } {
  const url = new URL(feedUrl);
  const headers: Record<string, string> = { accept: "text/calendar, */*;q=0.5" };
  if (url.username !== "" || url.password !== "") {
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`;
    url.username = "";
    url.password = "";
  }
  return { url: url.href, headers };
}

/** Whether a body starts as iCalendar does (its first 1 KB is enough to tell). */
function looksLikeICalendar(body: string | Uint8Array): boolean {
  const head = typeof body === "string" ? body.slice(0, 1024) : new TextDecoder().decode(body.subarray(0, 1024));
  return /^\uFEFF?\s*BEGIN:VCALENDAR\r?\n/i.test(head);
}

function failure(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof OutboundError) {
    if (err.code === "blocked_address" || err.code === "bad_url") return new ProviderError("blocked", err.message);
    if (err.code === "too_large") return new ProviderError("bad_response", "the feed is too large");
    return new ProviderError("unreachable", `reading the feed failed: ${err.message}`);
  }
  return new ProviderError("unreachable", "reading the feed failed");
}

/**
 * One GET of the feed. `knownVersion` is "etag:<ETag>" (sent as If-None-Match) or "sha256:<digest>" of the body
 * when the server sends no ETag (then the body is compared, which still saves parsing it again).
 */
export async function readFeed(feedUrl: string, knownVersion: string | null, opts: ProviderSettings, signal: AbortSignal): Promise<ObjectsRead> {
  const first = requestOf(feedUrl);
  let { url } = first;
  const headers = first.headers;
  if (knownVersion?.startsWith("etag:")) headers["if-none-match"] = knownVersion.slice(5);
  let res;
  for (let hop = 0; ; hop++) {
    try {
      // Every hop goes through the guard again, so a redirect cannot lead to a private address.
      // As bytes: the calendar readers take them as they came (a feed of 20 MB is never also a string of 40 MB here).
      res = await outboundRequest(url, { method: "GET", headers, timeoutMs: opts.timeoutMs, maxBytes: FEED_MAX_BYTES, allowPrivate: opts.allowPrivate, signal, binary: true });
    } catch (err) {
      throw failure(err);
    }
    const location = res.headers.location;
    if (![301, 302, 303, 307, 308].includes(res.status) || !location || hop === MAX_REDIRECTS) break;
    const next = URL.parse(location, url);
    if (!next) break;
    // The credentials were given for the feed's own origin only.
    if (next.origin !== new URL(url).origin) delete headers.authorization;
    url = next.href;
  }
  if (res.status === 304 && knownVersion !== null) return { unchanged: true, version: knownVersion };
  if (res.status === 401 || res.status === 403) throw new ProviderError("refused", `the feed refused access (${res.status})`);
  if (res.status === 404 || res.status === 410) throw new ProviderError("not_found", `no feed at this address (${res.status})`);
  if (res.status >= 300 && res.status < 400) throw new ProviderError("bad_response", `the feed redirects too often (${res.status})`);
  if (res.status >= 500) throw new ProviderError("unreachable", `the feed's server answered ${res.status}`);
  if (res.status !== 200) throw new ProviderError("bad_response", `the feed answered ${res.status}`);
  if (!looksLikeICalendar(res.bytes)) throw new ProviderError("bad_response", "the address does not serve iCalendar (text/calendar)");
  const etag = res.headers.etag;
  const version = etag ? `etag:${etag}` : `sha256:${hash("sha256", res.bytes, "hex")}`;
  if (version === knownVersion) return { unchanged: true, version };
  return { unchanged: false, version, objects: [res.bytes] };
}
