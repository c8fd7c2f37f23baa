// CalDAV (RFC 4791) through tsdav: discovery of an account's calendars, reading a range with a ctag check, writing and removing objects.
import { calendarQuery, createObject, DAVClient, deleteObject, getBasicAuthHeaders, propfind, updateObject, type DAVCalendar, type DAVResponse } from "tsdav";
import { OutboundError, outboundFetch } from "../shared/outbound.js";
import { ProviderError, type ProviderCalendar, type ProviderSettings } from "../shared/types.js";
import type { ObjectsRead } from "../shared/ical.js";

export interface CaldavCredentials {
  serverUrl: string;
  username: string;
  password: string;
}

/** What the exchanges of one operation showed: the statuses seen and the first transport failure. */
interface Trace {
  fetch: typeof fetch;
  statuses: number[];
  failure: unknown;
}

/**
 * outboundFetch (SSRF guard, deadline, no redirects followed) with a record of what happened. tsdav swallows
 * some failures (discovery tries several URLs), so the record is what tells a refused password from a dead host.
 */
function traced(opts: ProviderSettings, signal: AbortSignal): Trace {
  const base = outboundFetch({ timeoutMs: opts.timeoutMs, allowPrivate: opts.allowPrivate, signal });
  const trace: Trace = {
    statuses: [],
    failure: undefined,
    fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
      try {
        const res = await base(input, init);
        trace.statuses.push(res.status);
        return res.status === 207 ? await completeMultistatus(res) : res;
      } catch (err) {
        trace.failure ??= err;
        throw err;
      }
    }) as typeof fetch,
  };
  return trace;
}

/**
 * A 207 whose body is not a whole multistatus document. tsdav's XML reader accepts a truncated document (a
 * server that died mid-answer) as a multistatus of empty responses, which would read as "no events": fail open.
 */
async function completeMultistatus(res: Response): Promise<Response> {
  const body = await res.text();
  // Either a closing tag or an empty element (`<multistatus xmlns="DAV:"/>`, an empty calendar's answer) ends it.
  if (!/(<\/([A-Za-z][\w.-]*:)?multistatus>|<([A-Za-z][\w.-]*:)?multistatus\b[^<>]*\/>)\s*$/.test(body)) throw new ProviderError("bad_response", "the server's answer is not a complete multistatus document");
  const copy = new Response(body, { status: res.status, headers: res.headers });
  Object.defineProperty(copy, "url", { value: res.url });
  return copy;
}

/** The error to report for a failed operation, from what its exchanges showed. */
function explain(trace: Trace, err: unknown, what: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const failure = trace.failure ?? err;
  if (failure instanceof OutboundError) {
    if (failure.code === "blocked_address" || failure.code === "bad_url") return new ProviderError("blocked", failure.message);
    return new ProviderError("unreachable", `${what}: ${failure.message}`);
  }
  // Only 401 says the credentials are wrong; a 403 may be a rate limit (Google answers 403 usageLimits) or a
  // collection the account may not read, which the host cannot fix by entering the password again.
  if (trace.statuses.includes(401)) return new ProviderError("refused", "the server refused the user name or password");
  if (trace.statuses.includes(403)) return new ProviderError("unreachable", `${what}: the server refused access (403)`);
  const serverError = trace.statuses.find((s) => s >= 500);
  if (serverError !== undefined) return new ProviderError("unreachable", `${what}: the server answered ${serverError}`);
  if (trace.statuses.length === 0) return new ProviderError("unreachable", `${what}: no answer`);
  return new ProviderError("bad_response", `${what}: the server does not answer as a CalDAV server`);
}

function text(value: unknown): string | undefined {
  if (typeof value === "string" || typeof value === "number") return String(value);
  if (value !== null && typeof value === "object") {
    const o = value as { _cdata?: unknown; _text?: unknown };
    return text(o._cdata ?? o._text);
  }
  return undefined;
}

/** Whether a current-user-privilege-set (as tsdav parses it, camelCased) grants writing objects. */
function grantsWrite(privileges: unknown): boolean {
  return /"(write|writeContent|bind|all)"/.test(JSON.stringify(privileges ?? {}));
}

function isEmailAddress(s: string): boolean {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s);
}

/**
 * Discovers the account's calendars (RFC 6764 well-known, principal, calendar home; RFC 4791). Calendars that
 * hold no events (task lists) are left out. `canWrite` comes from the current-user-privilege-set when the server
 * reports one and else is assumed (Radicale and most servers let an account write its own calendars).
 */
export async function discoverCaldav(creds: CaldavCredentials, opts: ProviderSettings, signal: AbortSignal): Promise<ProviderCalendar[]> {
  const trace = traced(opts, signal);
  try {
    const client = new DAVClient({
      serverUrl: creds.serverUrl,
      credentials: { username: creds.username, password: creds.password },
      authMethod: "Basic",
      defaultAccountType: "caldav",
      fetch: trace.fetch,
    });
    await client.login();
    const calendars: DAVCalendar[] = await client.fetchCalendars({
      props: {
        "d:displayname": {},
        "cs:getctag": {},
        "d:resourcetype": {},
        "c:supported-calendar-component-set": {},
        "d:sync-token": {},
        "d:current-user-privilege-set": {},
      },
      projectedProps: { currentUserPrivilegeSet: true },
    });
    let addresses: string[] = [];
    try {
      addresses = client.account ? await client.fetchCalendarUserAddresses({ account: client.account }) : [];
    } catch {
      // calendar-user-address-set is optional (RFC 6638); without it the user name may serve as the address.
    }
    const mailto = addresses.map((a) => /^mailto:(.+)$/i.exec(a.trim())?.[1]).find((a): a is string => a !== undefined && isEmailAddress(a));
    const email = mailto ?? (isEmailAddress(creds.username) ? creds.username : null);
    return calendars
      .filter((c) => c.components === undefined || c.components.length === 0 || c.components.includes("VEVENT"))
      .map((c) => {
        const privileges = (c.projectedProps as Record<string, unknown> | undefined)?.currentUserPrivilegeSet;
        return {
          url: c.url,
          name: text(c.displayName) ?? decodeURIComponent(new URL(c.url).pathname.split("/").filter(Boolean).pop() ?? "calendar"),
          canWrite: privileges === undefined ? true : grantsWrite(privileges),
          email: email?.toLowerCase() ?? null,
        };
      });
  } catch (err) {
    throw explain(trace, err, "CalDAV discovery failed");
  }
}

function timeRangeFilter(range: { from: Date; to: Date }) {
  const stamp = (d: Date) => `${d.toISOString().slice(0, 19).replace(/[-:]/g, "")}Z`;
  return [
    {
      "comp-filter": {
        _attributes: { name: "VCALENDAR" },
        "comp-filter": { _attributes: { name: "VEVENT" }, "time-range": { _attributes: { start: stamp(range.from), end: stamp(range.to) } } },
      },
    },
  ];
}

/** Every response of a multistatus must have come through as one with properties; anything else is not CalDAV speaking. */
function wellFormed(responses: DAVResponse[]): boolean {
  return responses.every((r) => r.props !== undefined && r.href !== undefined);
}

/** The raw iCalendar objects of a range (the ctag or sync token is the cheap change check), or `unchanged`. */
export async function readCaldavObjects(
  creds: CaldavCredentials,
  calendarUrl: string | null,
  range: { from: Date; to: Date },
  knownVersion: string | null,
  opts: ProviderSettings,
  signal: AbortSignal,
): Promise<ObjectsRead> {
  const headers = getBasicAuthHeaders({ username: creds.username, password: creds.password });
  if (calendarUrl === null) throw new ProviderError("not_found", "calendar has no address");
  const trace = traced(opts, signal);
  try {
    const [state] = await propfind({ url: calendarUrl, props: { "cs:getctag": {}, "d:sync-token": {} }, depth: "0", headers, fetch: trace.fetch });
    if (!state || !state.ok || state.props === undefined) throw explain(trace, new Error("PROPFIND failed"), "reading the calendar failed");
    if (trace.statuses.at(-1) !== 207) throw explain(trace, new Error("not a multistatus"), "reading the calendar failed");
    const version = text(state.props.syncToken) ?? text(state.props.getctag) ?? null;
    if (version !== null && version === knownVersion) return { unchanged: true, version };
    const found = await calendarQuery({
      url: calendarUrl,
      props: { "d:getetag": {}, "c:calendar-data": {} },
      filters: timeRangeFilter(range),
      depth: "1",
      headers,
      fetch: trace.fetch,
    });
    // An empty body or broken XML would read as "no events": fail instead, never open.
    if (trace.statuses.at(-1) !== 207 || !wellFormed(found)) throw explain(trace, new Error("not a multistatus"), "reading the calendar failed");
    // An object the server matched but sent no data for could hide a busy time: fail instead.
    if (found.some((r) => r.ok && text(r.props?.calendarData) === undefined)) throw new ProviderError("bad_response", "the server sent calendar objects without their data");
    const objects = found.map((r) => text(r.props?.calendarData)).filter((t): t is string => t !== undefined && t.trim() !== "");
    return { unchanged: false, version, objects };
  } catch (err) {
    throw explain(trace, err, "reading the calendar failed");
  }
}

function objectUrl(calendarUrl: string, filename: string): string {
  return new URL(encodeURIComponent(filename), calendarUrl.endsWith("/") ? calendarUrl : `${calendarUrl}/`).href;
}

/** The object's current ETag, or null when there is none. */
async function etagOf(url: string, headers: Record<string, string>, trace: Trace): Promise<string | null> {
  const [r] = await propfind({ url, props: { "d:getetag": {} }, depth: "0", headers, fetch: trace.fetch });
  if (!r || r.status === 404) return null;
  if (!r.ok) throw explain(trace, new Error(`PROPFIND ${r.status}`), "reading the calendar event failed");
  return text(r.props?.getetag) ?? null;
}

/**
 * Makes `<calendar>/<filename>` hold `ics`: created with If-None-Match: * (never overwriting what someone else
 * put there under our name is not a concern, the name is our UID; the condition makes a lost race visible),
 * else replaced with If-Match on the ETag just read, so a change in between is noticed and retried.
 */
export async function putCaldavObject(creds: CaldavCredentials, calendarUrl: string, filename: string, ics: string, opts: ProviderSettings, signal: AbortSignal): Promise<void> {
  const trace = traced(opts, signal);
  const auth = getBasicAuthHeaders({ username: creds.username, password: creds.password });
  const url = objectUrl(calendarUrl, filename);
  const headers = { ...auth, "Content-Type": "text/calendar; charset=utf-8" };
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      const etag = attempt === 0 ? null : await etagOf(url, auth, trace);
      const res =
        etag === null
          ? await createObject({ url, data: ics, headers: { ...headers, "If-None-Match": "*" }, fetch: trace.fetch })
          : await updateObject({ url, data: ics, etag, headers, fetch: trace.fetch });
      if (res.ok) return;
      // 412: it exists (create) or changed since we read its ETag (update): read the ETag again.
      if (res.status !== 412) throw explain(trace, new Error(`PUT ${res.status}`), `writing the calendar event failed (${res.status})`);
    }
    throw new ProviderError("unreachable", "writing the calendar event failed: it kept changing");
  } catch (err) {
    throw explain(trace, err, "writing the calendar event failed");
  }
}

/** Removes `<calendar>/<filename>`; already gone is done. */
export async function deleteCaldavObject(creds: CaldavCredentials, calendarUrl: string, filename: string, opts: ProviderSettings, signal: AbortSignal): Promise<void> {
  const trace = traced(opts, signal);
  const headers = getBasicAuthHeaders({ username: creds.username, password: creds.password });
  try {
    const res = await deleteObject({ url: objectUrl(calendarUrl, filename), headers, fetch: trace.fetch });
    if (res.ok || res.status === 404 || res.status === 410) return;
    throw explain(trace, new Error(`DELETE ${res.status}`), `removing the calendar event failed (${res.status})`);
  } catch (err) {
    throw explain(trace, err, "removing the calendar event failed");
  }
}
