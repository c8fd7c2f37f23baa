// A local Google for tests: OAuth 2.0 (accounts.google.com / oauth2.googleapis.com) and the Calendar API v3 parts the service uses, answering as Google's references say.
/**
 * const google = await startFakeGoogle({ redirectUris: ["http://127.0.0.1:3000/oauth/google/callback"] });
 * google.env()  GOOGLE_AUTH_URL, GOOGLE_TOKEN_URL, GOOGLE_REVOKE_URL, GOOGLE_API_URL, GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET
 *
 * Control API (besides the OAuth ones of oauth.ts, re-exported here: approve, expireAccessToken, revokeGrant, grants,
 * validateBearer; and the harness's: requests, calls, fault, clearFaults):
 *   addUser(email, { name?, timeZone? })         a Google account with its primary calendar (id = the address)
 *   addCalendar(email, { id?, summary, accessRole, ... })   a calendar in that user's list (shares it if the id exists)
 *   addEvent(calendarId, { start, end, allDay?, transparency?, status?, summary? })
 *   events(calendarId, { includeDeleted? })      what is stored, to check what the service wrote
 *   writes                                       every event write with its sendUpdates and conferenceDataVersion
 *   rateLimit(route, { status: 403 | 429, reason?, retryAfter?, times? }), serverError(route, { status?, times? })
 *   freeBusyError(calendarId, reason | null)   freeBusy lists the calendar under `errors` (e.g. "internalError",
 *                                                "backendError", "notFound"), as Google does for one it cannot read
 * Route keys for calls() and faults are in GOOGLE_ROUTES.
 *
 * Sources: the Calendar v3 discovery document (per-method scopes, parameters, resource fields, as shipped in
 * @googleapis/calendar's generated types), the "Handle API errors" guide (error bodies and reasons), Google's
 * OAuth 2.0 for web server applications guide (authorization parameters, refresh tokens only with access_type=offline,
 * error pages, revocation). Where Google's behaviour is observed rather than documented, a comment says so.
 */
import { randomBytes } from "node:crypto";
import { FakeHttpServer, OAuthServer, type FakeRequest, type FakeResponse, type OAuthProviderFake, type OAuthUser } from "./oauth.js";
import { formatInZone, validZone, zonedToUtc } from "./zones.js";

export const GOOGLE_SCOPES = {
  calendarListReadonly: "https://www.googleapis.com/auth/calendar.calendarlist.readonly",
  freeBusy: "https://www.googleapis.com/auth/calendar.freebusy",
  events: "https://www.googleapis.com/auth/calendar.events",
} as const;

const S = "https://www.googleapis.com/auth/";
/** Scopes each kind of method accepts, from the discovery document (calendar.app.created is left out: no calendar here was made by an app). */
const METHOD_SCOPES = {
  calendarList: ["calendar", "calendar.calendarlist", "calendar.calendarlist.readonly", "calendar.readonly"],
  freeBusy: ["calendar", "calendar.events.freebusy", "calendar.freebusy", "calendar.readonly"],
  read: ["calendar", "calendar.events", "calendar.events.freebusy", "calendar.events.owned", "calendar.events.owned.readonly", "calendar.events.readonly", "calendar.readonly"],
  write: ["calendar", "calendar.events", "calendar.events.owned"],
} as const;

export const GOOGLE_ROUTES = {
  authorize: "GET /o/oauth2/v2/auth",
  token: "POST /token",
  revoke: "POST /revoke",
  calendarList: "GET /calendar/v3/users/me/calendarList",
  freeBusy: "POST /calendar/v3/freeBusy",
  eventsList: "GET /calendar/v3/calendars/:calendarId/events",
  eventsInsert: "POST /calendar/v3/calendars/:calendarId/events",
  eventsGet: "GET /calendar/v3/calendars/:calendarId/events/:eventId",
  eventsPatch: "PATCH /calendar/v3/calendars/:calendarId/events/:eventId",
  eventsUpdate: "PUT /calendar/v3/calendars/:calendarId/events/:eventId",
  eventsDelete: "DELETE /calendar/v3/calendars/:calendarId/events/:eventId",
} as const;

type AccessRole = "owner" | "writer" | "reader" | "freeBusyReader";
const ROLE_RANK: Record<AccessRole, number> = { freeBusyReader: 0, reader: 1, writer: 2, owner: 3 };

interface EventDateTime {
  date?: string;
  dateTime?: string;
  timeZone?: string;
}

interface ConferenceData {
  createRequest?: { requestId: string; conferenceSolutionKey: { type: string }; status: { statusCode: "pending" | "success" | "failure" } };
  entryPoints?: { entryPointType: string; uri: string; label?: string }[];
  conferenceSolution?: { key: { type: string }; name: string; iconUri: string };
  conferenceId?: string;
}

/** An event as Calendar v3 represents it; fields the fake does not model are kept as sent. */
interface EventResource {
  kind: "calendar#event";
  id: string;
  etag: string;
  status: "confirmed" | "tentative" | "cancelled";
  start: EventDateTime;
  end: EventDateTime;
  iCalUID: string;
  sequence: number;
  transparency?: "opaque" | "transparent";
  summary?: string;
  colorId?: string;
  hangoutLink?: string;
  conferenceData?: ConferenceData;
  [field: string]: unknown;
}

interface EventWrite {
  at: number;
  kind: "insert" | "patch" | "update" | "delete";
  calendarId: string;
  eventId: string | null;
  sendUpdates: string | null;
  conferenceDataVersion: string | null;
  status: number;
}

interface Calendar {
  id: string;
  summary: string;
  description?: string;
  timeZone: string;
  colorId: string;
  backgroundColor: string;
  foregroundColor: string;
  acl: Map<string, AccessRole>;
  primaryOf?: string;
  events: Map<string, EventResource>;
}

export interface FakeGoogleOptions {
  redirectUris: string[];
  clientId?: string;
  clientSecret?: string;
  /** Accounts made at start (each with its primary calendar). */
  users?: { email: string; name?: string; timeZone?: string }[];
  /** How a Meet link is made: at once, or first "pending" and ready on the next read, or refused. Default "success". */
  conference?: "success" | "pending" | "failure";
  /** calendarList page size when maxResults is larger (Google may return fewer than asked); default 100. */
  calendarListPageSize?: number;
  /** Longest freeBusy range; Google's is undocumented, about 90 days as observed (400 timeRangeTooLong). */
  freeBusyMaxDays?: number;
  accessTokenTtlSeconds?: number;
  now?: () => number;
}

export interface FakeGoogle extends OAuthProviderFake {
  addUser(email: string, opts?: { name?: string; timeZone?: string }): OAuthUser;
  addCalendar(email: string, cal: { id?: string; summary: string; accessRole: AccessRole; timeZone?: string; backgroundColor?: string; description?: string }): string;
  addEvent(calendarId: string, ev: { start: string; end: string; allDay?: boolean; transparency?: "opaque" | "transparent"; status?: "confirmed" | "tentative" | "cancelled"; summary?: string; id?: string }): EventResource;
  events(calendarId: string, opts?: { includeDeleted?: boolean }): EventResource[];
  writes: EventWrite[];
  rateLimit(route: string, opts?: { status?: 403 | 429; reason?: "rateLimitExceeded" | "userRateLimitExceeded"; retryAfter?: number; times?: number }): void;
  serverError(route: string, opts?: { status?: 500 | 503; times?: number }): void;
  freeBusyError(calendarId: string, reason: string | null): void;
}

const STATUS_NAMES: Record<number, string> = { 400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 409: "ALREADY_EXISTS", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE" };

/** Google's JSON error ({"error": {code, message, errors: [{domain, reason, message}], status}}). */
function googleError(
  code: number,
  reason: string,
  message: string,
  extra: { domain?: string; location?: string; locationType?: string; headers?: Record<string, string>; details?: unknown[] } = {},
): FakeResponse {
  const item: Record<string, string> = { domain: extra.domain ?? "global", reason, message };
  if (extra.location) Object.assign(item, { location: extra.location, locationType: extra.locationType ?? "parameter" });
  const error: Record<string, unknown> = { code, message, errors: [item] };
  if (STATUS_NAMES[code]) error.status = STATUS_NAMES[code];
  if (extra.details) error.details = extra.details;
  return { status: code, headers: extra.headers, body: { error } };
}

const notFound = () => googleError(404, "notFound", "Not Found");

export async function startFakeGoogle(opts: FakeGoogleOptions): Promise<FakeGoogle> {
  const now = opts.now ?? Date.now;
  const clientId = opts.clientId ?? "fake-client-id.apps.googleusercontent.com";
  const clientSecret = opts.clientSecret ?? "fake-google-secret";
  // Unknown paths at www.googleapis.com answer a plain 404 page.
  const http = await FakeHttpServer.start({ notFound: () => ({ status: 404, body: "<!DOCTYPE html><title>Error 404 (Not Found)</title><p>404. That’s an error." }) });

  const oauth = new OAuthServer(http, {
    provider: "Google",
    paths: { authorize: "/o/oauth2/v2/auth", token: "/token", revoke: "/revoke" },
    clients: [{ id: clientId, secret: clientSecret, redirectUris: opts.redirectUris }],
    // Google shows "Error 400: invalid_request" and the like as a page; only access_denied goes back to the app.
    invalidRequestAs: "page",
    scope: { param: "required" },
    // A refresh token comes with access_type=offline on the first consent, or on any consent forced by prompt=consent.
    issuesRefreshToken: (q, first) => q.get("access_type") === "offline" && (first || (q.get("prompt") ?? "").split(" ").includes("consent")),
    rotation: { rotate: false },
    accessTokenTtlSeconds: opts.accessTokenTtlSeconds ?? 3599,
    tokenPrefix: { access: "ya29.", refresh: "1//", code: "4/" },
    redirectExtras: ({ scopes }) => ({ scope: scopes.join(" ") }),
    tokenErrors: {
      client_auth_method: { error: "invalid_request", description: "client_secret is missing.", status: 400 },
      redirect_mismatch: { error: "redirect_uri_mismatch", description: "Bad Request" },
    },
    revoke: { clientAuth: "none", unknownToken: "error" },
    bearerError: (reason) => {
      const headers = { "WWW-Authenticate": `Bearer realm="https://accounts.google.com/"${reason === "missing" ? "" : ', error="invalid_token"'}` };
      if (reason === "missing") {
        return googleError(401, "required", "Login Required.", { location: "Authorization", locationType: "header", headers });
      }
      // The top-level message differs from the item's in today's answers.
      return withTopMessage(
        googleError(401, "authError", "Invalid Credentials", { location: "Authorization", locationType: "header", headers }),
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
      );
    },
    now,
  });

  const calendars = new Map<string, Calendar>();
  const conferences = new Map<string, ConferenceData>();
  const writes: EventWrite[] = [];
  const userZones = new Map<string, string>();
  /** Calendars freeBusy answers with an error entry instead of busy times (reference: FreeBusyCalendar.errors). */
  const freeBusyErrors = new Map<string, string>();

  function addUser(email: string, o: { name?: string; timeZone?: string } = {}): OAuthUser {
    const user = oauth.addUser({ email, name: o.name });
    userZones.set(user.id, o.timeZone ?? "UTC");
    calendars.set(email, {
      id: email,
      summary: email,
      timeZone: o.timeZone ?? "UTC",
      colorId: "14",
      backgroundColor: "#9fe1e7",
      foregroundColor: "#000000",
      acl: new Map([[user.id, "owner"]]),
      primaryOf: user.id,
      events: new Map(),
    });
    return user;
  }
  for (const u of opts.users ?? []) addUser(u.email, u);

  function userOf(email: string): OAuthUser {
    const u = oauth.user(email);
    if (!u) throw new Error(`no Google user ${email} at the fake`);
    return u;
  }

  function addCalendar(email: string, c: { id?: string; summary: string; accessRole: AccessRole; timeZone?: string; backgroundColor?: string; description?: string }): string {
    const user = userOf(email);
    const id = c.id ?? `${randomId(26)}@group.calendar.google.com`;
    const existing = calendars.get(id);
    if (existing) existing.acl.set(user.id, c.accessRole);
    else {
      calendars.set(id, {
        id,
        summary: c.summary,
        description: c.description,
        timeZone: c.timeZone ?? userZones.get(user.id) ?? "UTC",
        colorId: "7",
        backgroundColor: c.backgroundColor ?? "#42d692",
        foregroundColor: "#000000",
        acl: new Map([[user.id, c.accessRole]]),
        events: new Map(),
      });
    }
    return id;
  }

  function stamp(ev: EventResource): void {
    ev.etag = `"${now() * 1000 + Math.floor(Math.random() * 1000)}"`;
    ev.updated = new Date(now()).toISOString();
  }

  function newEvent(cal: Calendar, fields: Record<string, unknown>, id = randomId(26)): EventResource {
    const created = new Date(now()).toISOString();
    const ev: EventResource = {
      kind: "calendar#event",
      etag: "",
      id,
      status: "confirmed",
      htmlLink: `https://www.google.com/calendar/event?eid=${Buffer.from(`${id} ${cal.id}`).toString("base64url")}`,
      created,
      updated: created,
      creator: { email: cal.primaryOf ? cal.id : oauth.user([...cal.acl.keys()][0])?.email, self: true },
      organizer: cal.primaryOf ? { email: cal.id, self: true } : { email: cal.id, displayName: cal.summary, self: true },
      start: {},
      end: {},
      iCalUID: `${id}@google.com`,
      sequence: 0,
      reminders: { useDefault: true },
      eventType: "default",
      ...fields,
    } as EventResource;
    stamp(ev);
    return ev;
  }

  function addEvent(
    calendarId: string,
    e: { start: string; end: string; allDay?: boolean; transparency?: "opaque" | "transparent"; status?: "confirmed" | "tentative" | "cancelled"; summary?: string; id?: string },
  ): EventResource {
    const cal = calendars.get(calendarId);
    if (!cal) throw new Error(`no calendar ${calendarId} at the fake`);
    const when = (s: string): EventDateTime => (e.allDay ? { date: s } : { dateTime: new Date(s).toISOString().replace(".000Z", "Z"), timeZone: cal.timeZone });
    const ev = newEvent(cal, { start: when(e.start), end: when(e.end), summary: e.summary ?? "Busy", status: e.status ?? "confirmed", transparency: e.transparency }, e.id);
    if (e.transparency === undefined) delete ev.transparency;
    cal.events.set(ev.id, ev);
    return ev;
  }

  function events(calendarId: string, o: { includeDeleted?: boolean } = {}): EventResource[] {
    const cal = calendars.get(calendarId);
    if (!cal) throw new Error(`no calendar ${calendarId} at the fake`);
    return [...cal.events.values()].filter((e) => o.includeDeleted || e.status !== "cancelled");
  }

  // --- request plumbing ------------------------------------------------------------------------------------------

  type Authed = { user: OAuthUser; scopes: string[] };
  /** Bearer and scope checks, in the order Google's front end makes them. */
  function authorize(req: FakeRequest, kind: keyof typeof METHOD_SCOPES, method: string): Authed | FakeResponse {
    const auth = oauth.validateBearer(req);
    if (!auth.ok) return auth.response;
    const accepted = METHOD_SCOPES[kind];
    if (!accepted.some((s) => auth.scopes.includes(S + s))) {
      const r = googleError(403, "insufficientPermissions", "Insufficient Permission", {
        headers: { "WWW-Authenticate": `Bearer realm="https://accounts.google.com/", error="insufficient_scope", scope="${accepted.map((s) => S + s).join(" ")}"` },
        details: [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
            domain: "googleapis.com",
            metadata: { service: "calendar-json.googleapis.com", method: `calendar.v3.${method}` },
          },
        ],
      });
      return withTopMessage(r, "Request had insufficient authentication scopes.");
    }
    return { user: auth.user, scopes: auth.scopes };
  }

  /** The calendar and this user's role on it; "primary" is the user's own. */
  function calendarFor(user: OAuthUser, calendarId: string): { cal: Calendar; role: AccessRole } | undefined {
    const cal = calendarId === "primary" ? calendars.get(user.email) : calendars.get(calendarId);
    const role = cal?.acl.get(user.id);
    return cal && role ? { cal, role } : undefined;
  }

  function readable(user: OAuthUser, calendarId: string): { cal: Calendar; role: AccessRole } | FakeResponse {
    const found = calendarFor(user, calendarId);
    if (!found || ROLE_RANK[found.role] < ROLE_RANK.reader) return notFound();
    return found;
  }

  function writable(a: Authed, calendarId: string): { cal: Calendar; role: AccessRole } | FakeResponse {
    const found = calendarFor(a.user, calendarId);
    if (!found) return notFound();
    if (ROLE_RANK[found.role] < ROLE_RANK.writer) return googleError(403, "requiredAccessLevel", "You need to have writer access to this calendar.", { domain: "calendar" });
    // calendar.events.owned reaches only calendars the user owns.
    const onlyOwned = !a.scopes.includes(S + "calendar") && !a.scopes.includes(S + "calendar.events");
    if (onlyOwned && found.role !== "owner") return googleError(403, "requiredAccessLevel", "You need to have owner access to this calendar.", { domain: "calendar" });
    return found;
  }

  function record(req: FakeRequest, kind: EventWrite["kind"], calendarId: string, eventId: string | null, res: FakeResponse): FakeResponse {
    writes.push({ at: now(), kind, calendarId, eventId, sendUpdates: req.query.get("sendUpdates"), conferenceDataVersion: req.query.get("conferenceDataVersion"), status: res.status });
    return res;
  }

  function badSendUpdates(req: FakeRequest): FakeResponse | undefined {
    const v = req.query.get("sendUpdates");
    if (v !== null && !["all", "externalOnly", "none"].includes(v)) return googleError(400, "invalid", "Invalid Value", { location: "sendUpdates" });
    return undefined;
  }

  function bodyObject(req: FakeRequest): { ok: true; value: Record<string, unknown> } | { ok: false; response: FakeResponse } {
    const body = req.json();
    if (body === undefined && req.body.trim() !== "") return { ok: false, response: googleError(400, "parseError", "Parse Error") };
    if (body === undefined) return { ok: true, value: {} };
    if (!isPlainObject(body)) return { ok: false, response: googleError(400, "badRequest", "Bad Request") };
    return { ok: true, value: body };
  }

  // --- conferences ------------------------------------------------------------------------------------------------

  /** Applies conferenceData of a write (only with conferenceDataVersion >= 1; version 0 ignores it, as documented). */
  function applyConference(req: FakeRequest, ev: EventResource, sent: unknown, previous: ConferenceData | undefined): FakeResponse | undefined {
    const version = Number(req.query.get("conferenceDataVersion") ?? "0");
    if (!(version >= 1)) {
      if (previous) ev.conferenceData = previous;
      else delete ev.conferenceData;
      return undefined;
    }
    if (sent === null) {
      delete ev.conferenceData;
      delete ev.hangoutLink;
      return undefined;
    }
    if (sent === undefined) return undefined;
    const cr = (sent as ConferenceData).createRequest;
    if (!cr) return undefined;
    const type = cr.conferenceSolutionKey?.type;
    if (!cr.requestId) return googleError(400, "invalid", "Invalid conference request: missing requestId.");
    if (type !== "hangoutsMeet") return googleError(400, "invalid", "Invalid conference type value.");
    if (previous?.createRequest?.requestId === cr.requestId) {
      // "If an ID provided is the same as for the previous request, the request is ignored."
      ev.conferenceData = previous;
      return undefined;
    }
    let conf = conferences.get(cr.requestId);
    if (!conf) {
      const outcome = opts.conference ?? "success";
      conf = { createRequest: { requestId: cr.requestId, conferenceSolutionKey: { type }, status: { statusCode: outcome === "failure" ? "failure" : outcome } } };
      if (outcome === "success") completeConference(conf);
      conferences.set(cr.requestId, conf);
    }
    ev.conferenceData = conf;
    return undefined;
  }

  function completeConference(conf: ConferenceData): void {
    const code = meetCode();
    conf.createRequest!.status.statusCode = "success";
    conf.entryPoints = [{ entryPointType: "video", uri: `https://meet.google.com/${code}`, label: `meet.google.com/${code}` }];
    conf.conferenceSolution = {
      key: { type: "hangoutsMeet" },
      name: "Google Meet",
      iconUri: "https://fonts.gstatic.com/s/i/productlogos/meet_2020q4/v6/web-512dp/logo_meet_2020q4_color_2x_web_512dp.png",
    };
    conf.conferenceId = code;
  }

  /** A pending conference is ready on the next read, as Google's asynchronous creation usually is. */
  function present(ev: EventResource): EventResource {
    const conf = ev.conferenceData;
    if (conf?.createRequest?.status.statusCode === "pending") completeConference(conf);
    const video = ev.conferenceData?.entryPoints?.find((p) => p.entryPointType === "video");
    if (video) ev.hangoutLink = video.uri;
    else delete ev.hangoutLink;
    return ev;
  }

  // --- calendarList ---------------------------------------------------------------------------------------------

  http.add({
    method: "GET",
    path: "/calendar/v3/users/me/calendarList",
    handle: (req) => {
      const a = authorize(req, "calendarList", "CalendarList.List");
      if (!("user" in a)) return a;
      const minRole = req.query.get("minAccessRole") as AccessRole | null;
      if (minRole !== null && !(minRole in ROLE_RANK)) return googleError(400, "invalid", "Invalid Value", { location: "minAccessRole" });
      const mine = [...calendars.values()]
        .filter((c) => c.acl.has(a.user.id) && (minRole === null || ROLE_RANK[c.acl.get(a.user.id)!] >= ROLE_RANK[minRole]))
        .sort((x, y) => Number(y.primaryOf === a.user.id) - Number(x.primaryOf === a.user.id));
      const page = paginate(req, mine, Math.min(opts.calendarListPageSize ?? 100, 250), 250);
      if ("status" in page) return page;
      const items = page.items.map((c) => {
        const entry: Record<string, unknown> = {
          kind: "calendar#calendarListEntry",
          etag: `"${c.id.length}${c.summary.length}000"`,
          id: c.id,
          summary: c.summary,
          timeZone: c.timeZone,
          colorId: c.colorId,
          backgroundColor: c.backgroundColor,
          foregroundColor: c.foregroundColor,
          selected: true,
          accessRole: c.acl.get(a.user.id),
          defaultReminders: [],
          conferenceProperties: { allowedConferenceSolutionTypes: ["hangoutsMeet"] },
        };
        if (c.description) entry.description = c.description;
        if (c.primaryOf === a.user.id) {
          entry.primary = true;
          entry.notificationSettings = { notifications: [{ type: "eventCreation", method: "email" }] };
        }
        return entry;
      });
      const body: Record<string, unknown> = { kind: "calendar#calendarList", etag: `"${now()}"` };
      if (page.next) body.nextPageToken = page.next;
      else body.nextSyncToken = `sync-${randomId(12)}`;
      body.items = items;
      return { status: 200, body };
    },
  });

  // --- freeBusy ---------------------------------------------------------------------------------------------------

  http.add({
    method: "POST",
    path: "/calendar/v3/freeBusy",
    handle: (req) => {
      const a = authorize(req, "freeBusy", "Freebusy.Query");
      if (!("user" in a)) return a;
      const parsed = bodyObject(req);
      if (!parsed.ok) return parsed.response;
      const q = parsed.value as { timeMin?: string; timeMax?: string; timeZone?: string; items?: { id?: string }[] };
      if (!q.timeMin) return googleError(400, "required", "Missing timeMin parameter.", { location: "timeMin" });
      if (!q.timeMax) return googleError(400, "required", "Missing timeMax parameter.", { location: "timeMax" });
      const min = parseRfc3339(q.timeMin);
      const max = parseRfc3339(q.timeMax);
      if (min === undefined) return googleError(400, "invalid", "Invalid value for: timeMin", { location: "timeMin" });
      if (max === undefined) return googleError(400, "invalid", "Invalid value for: timeMax", { location: "timeMax" });
      if (max <= min) return googleError(400, "timeRangeEmpty", "The specified time range is empty.", { domain: "calendar", location: "timeMax" });
      if (max - min > (opts.freeBusyMaxDays ?? 90) * 86_400_000) return googleError(400, "timeRangeTooLong", "The requested time range is too long.", { domain: "calendar" });
      const zone = q.timeZone ?? "UTC";
      if (!validZone(zone)) return googleError(400, "invalid", "Invalid time zone definition.", { location: "timeZone" });
      const result: Record<string, unknown> = {};
      (q.items ?? []).forEach((item, i) => {
        const id = item.id ?? "";
        // calendarExpansionMax is at most 50: calendars beyond it are answered with an error, not busy times.
        if (i >= 50) {
          result[id] = { errors: [{ domain: "calendar", reason: "tooManyCalendarsRequested" }], busy: [] };
          return;
        }
        const failing = freeBusyErrors.get(id);
        if (failing) {
          result[id] = { errors: [{ domain: "global", reason: failing }], busy: [] };
          return;
        }
        const found = calendarFor(a.user, id);
        if (!found) {
          result[id] = { errors: [{ domain: "global", reason: "notFound" }], busy: [] };
          return;
        }
        result[id] = { busy: busyTimes(found.cal, min, max).map(([s, e]) => ({ start: formatInZone(s, zone), end: formatInZone(e, zone) })) };
      });
      return { status: 200, body: { kind: "calendar#freeBusy", timeMin: new Date(min).toISOString(), timeMax: new Date(max).toISOString(), calendars: result } };
    },
  });

  function busyTimes(cal: Calendar, min: number, max: number): [number, number][] {
    const spans = [...cal.events.values()]
      .filter((e) => e.status !== "cancelled" && e.transparency !== "transparent")
      .map((e) => [instant(e.start, cal.timeZone), instant(e.end, cal.timeZone)] as [number, number])
      .filter(([s, e]) => s < max && e > min)
      .map(([s, e]) => [Math.max(s, min), Math.min(e, max)] as [number, number])
      .sort((x, y) => x[0] - y[0]);
    // Free/busy answers merged periods, clipped to the asked range.
    const merged: [number, number][] = [];
    for (const s of spans) {
      const last = merged[merged.length - 1];
      if (last && s[0] <= last[1]) last[1] = Math.max(last[1], s[1]);
      else merged.push([...s]);
    }
    return merged;
  }

  // --- events -----------------------------------------------------------------------------------------------------

  function validateTimes(ev: Record<string, unknown>, zone: string): FakeResponse | undefined {
    const start = ev.start as EventDateTime | undefined;
    const end = ev.end as EventDateTime | undefined;
    if (!end || (!end.date && !end.dateTime)) return googleError(400, "required", "Missing end time.");
    if (!start || (!start.date && !start.dateTime)) return googleError(400, "required", "Missing start time.");
    if (Boolean(start.date) !== Boolean(end.date)) return googleError(400, "invalid", "Start and end times must either both be date or both be dateTime.");
    for (const [name, t] of [["start", start], ["end", end]] as const) {
      if (t.timeZone !== undefined && !validZone(t.timeZone)) return googleError(400, "invalid", `Invalid time zone definition for ${name} time.`);
      if (t.date !== undefined) {
        if (!/^\d{4}-\d{2}-\d{2}$/.test(t.date)) return googleError(400, "invalid", `Invalid ${name} time.`);
      } else if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/.test(t.dateTime!)) {
        return googleError(400, "invalid", `Invalid ${name} time.`);
      } else if (!/(Z|[+-]\d{2}:\d{2})$/.test(t.dateTime!) && !t.timeZone) {
        return googleError(400, "required", `Missing time zone definition for ${name} time.`);
      }
    }
    if (instant(end, zone) < instant(start, zone)) return googleError(400, "timeRangeEmpty", "The specified time range is empty.", { domain: "calendar" });
    const color = ev.colorId;
    if (color !== undefined && color !== null && !(typeof color === "string" && /^(?:[1-9]|1[01])$/.test(color))) return googleError(400, "invalid", "Invalid Value");
    for (const f of ["transparency", "status"] as const) {
      const allowed = f === "transparency" ? ["opaque", "transparent"] : ["confirmed", "tentative", "cancelled"];
      if (ev[f] !== undefined && !allowed.includes(ev[f] as string)) return googleError(400, "invalid", "Invalid Value");
    }
    return undefined;
  }

  /** Fields Google sets itself: what a client sends for them is ignored. */
  const READ_ONLY = ["kind", "etag", "htmlLink", "created", "updated", "creator", "hangoutLink", "sequence"];
  function clientFields(body: Record<string, unknown>): Record<string, unknown> {
    return Object.fromEntries(Object.entries(body).filter(([k]) => !READ_ONLY.includes(k) && k !== "conferenceData"));
  }

  http.add({
    method: "POST",
    path: "/calendar/v3/calendars/:calendarId/events",
    handle: (req) => {
      const calendarId = req.params.calendarId;
      const done = (res: FakeResponse, id: string | null = null) => record(req, "insert", calendarId, id, res);
      const a = authorize(req, "write", "Events.Insert");
      if (!("user" in a)) return done(a);
      const w = writable(a, calendarId);
      if (!("cal" in w)) return done(w);
      const bad = badSendUpdates(req);
      if (bad) return done(bad);
      const parsed = bodyObject(req);
      if (!parsed.ok) return done(parsed.response);
      const body = parsed.value;
      const invalid = validateTimes(body, w.cal.timeZone);
      if (invalid) return done(invalid);
      const id = body.id;
      if (id !== undefined) {
        // Client ids: base32hex, 5 to 1024 characters (events.insert reference).
        if (typeof id !== "string" || !/^[a-v0-9]{5,1024}$/.test(id)) return done(googleError(400, "invalid", "Invalid resource id value."));
        if (w.cal.events.has(id)) return done(googleError(409, "duplicate", "The requested identifier already exists."));
      }
      const ev = newEvent(w.cal, clientFields(body), typeof id === "string" ? id : undefined);
      if (typeof body.iCalUID === "string") ev.iCalUID = body.iCalUID;
      const conf = applyConference(req, ev, body.conferenceData, undefined);
      if (conf) return done(conf);
      w.cal.events.set(ev.id, ev);
      const shown = structuredClone(ev);
      // Right after insert a pending conference is shown as pending; the stored one becomes ready on the next read.
      const video = shown.conferenceData?.entryPoints?.find((p) => p.entryPointType === "video");
      if (video) shown.hangoutLink = video.uri;
      return done({ status: 200, body: shown }, ev.id);
    },
  });

  function findEvent(cal: Calendar, eventId: string): EventResource | undefined {
    return cal.events.get(eventId);
  }

  http.add({
    method: "GET",
    path: "/calendar/v3/calendars/:calendarId/events/:eventId",
    handle: (req) => {
      const a = authorize(req, "read", "Events.Get");
      if (!("user" in a)) return a;
      const r = readable(a.user, req.params.calendarId);
      if (!("cal" in r)) return r;
      const ev = findEvent(r.cal, req.params.eventId);
      // "The get method always returns [cancelled events]" (Event.status in the discovery document).
      if (!ev) return notFound();
      return { status: 200, body: present(ev) };
    },
  });

  function write(kind: "patch" | "update") {
    return (req: FakeRequest): FakeResponse => {
      const { calendarId, eventId } = req.params;
      const done = (res: FakeResponse) => record(req, kind, calendarId, eventId, res);
      const a = authorize(req, "write", kind === "patch" ? "Events.Patch" : "Events.Update");
      if (!("user" in a)) return done(a);
      const w = writable(a, calendarId);
      if (!("cal" in w)) return done(w);
      const bad = badSendUpdates(req);
      if (bad) return done(bad);
      const ev = findEvent(w.cal, eventId);
      if (!ev) return done(notFound());
      const parsed = bodyObject(req);
      if (!parsed.ok) return done(parsed.response);
      const body = parsed.value;
      const fields = clientFields(body);
      delete fields.id;
      const kept = { id: ev.id, iCalUID: ev.iCalUID, created: ev.created, creator: ev.creator, organizer: ev.organizer, htmlLink: ev.htmlLink };
      const next: EventResource =
        kind === "patch"
          ? (merge(structuredClone(ev), fields) as EventResource)
          : ({ kind: "calendar#event", etag: ev.etag, status: "confirmed", start: {}, end: {}, sequence: ev.sequence, reminders: { useDefault: true }, eventType: "default", ...fields, ...kept } as EventResource);
      if (typeof body.iCalUID === "string" && body.iCalUID !== ev.iCalUID) return done(googleError(400, "invalid", "Invalid iCalUID value: cannot change the iCalUID of an event."));
      const invalid = validateTimes(next, w.cal.timeZone);
      if (invalid) return done(invalid);
      const conf = applyConference(req, next, body.conferenceData, ev.conferenceData);
      if (conf) return done(conf);
      // A move changes the sequence, as RFC 5545 asks of an organizer's significant change.
      if (JSON.stringify([next.start, next.end]) !== JSON.stringify([ev.start, ev.end])) next.sequence = ev.sequence + 1;
      stamp(next);
      w.cal.events.set(ev.id, next);
      return done({ status: 200, body: present(next) });
    };
  }
  http.add({ method: "PATCH", path: "/calendar/v3/calendars/:calendarId/events/:eventId", handle: write("patch") });
  http.add({ method: "PUT", path: "/calendar/v3/calendars/:calendarId/events/:eventId", handle: write("update") });

  http.add({
    method: "DELETE",
    path: "/calendar/v3/calendars/:calendarId/events/:eventId",
    handle: (req) => {
      const { calendarId, eventId } = req.params;
      const done = (res: FakeResponse) => record(req, "delete", calendarId, eventId, res);
      const a = authorize(req, "write", "Events.Delete");
      if (!("user" in a)) return done(a);
      const w = writable(a, calendarId);
      if (!("cal" in w)) return done(w);
      const bad = badSendUpdates(req);
      if (bad) return done(bad);
      const ev = findEvent(w.cal, eventId);
      if (!ev) return done(notFound());
      if (ev.status === "cancelled") return done(googleError(410, "deleted", "Resource has been deleted"));
      ev.status = "cancelled";
      stamp(ev);
      return done({ status: 204 });
    },
  });

  http.add({
    method: "GET",
    path: "/calendar/v3/calendars/:calendarId/events",
    handle: (req) => {
      const a = authorize(req, "read", "Events.List");
      if (!("user" in a)) return a;
      const r = readable(a.user, req.params.calendarId);
      if (!("cal" in r)) return r;
      const q = req.query;
      const min = q.get("timeMin");
      const max = q.get("timeMax");
      const minMs = min === null ? -Infinity : parseRfc3339(min, true);
      const maxMs = max === null ? Infinity : parseRfc3339(max, true);
      if (minMs === undefined) return googleError(400, "badRequest", "Bad Request", { location: "timeMin" });
      if (maxMs === undefined) return googleError(400, "badRequest", "Bad Request", { location: "timeMax" });
      if (maxMs <= minMs) return googleError(400, "timeRangeEmpty", "The specified time range is empty.", { domain: "calendar", location: "timeMax" });
      if (q.get("orderBy") === "startTime" && q.get("singleEvents") !== "true") {
        return googleError(400, "invalid", "The requested ordering is not available for the particular query.", { location: "orderBy" });
      }
      const tz = r.cal.timeZone;
      const chosen = [...r.cal.events.values()]
        .filter((e) => q.get("showDeleted") === "true" || e.status !== "cancelled")
        .filter((e) => q.get("iCalUID") === null || e.iCalUID === q.get("iCalUID"))
        // timeMin bounds an event's end, timeMax its start (both exclusive), as the reference says.
        .filter((e) => instant(e.end, tz) > minMs && instant(e.start, tz) < maxMs);
      if (q.get("orderBy") === "startTime") chosen.sort((x, y) => instant(x.start, tz) - instant(y.start, tz));
      const page = paginate(req, chosen, 250, 2500);
      if ("status" in page) return page;
      const body: Record<string, unknown> = {
        kind: "calendar#events",
        etag: `"${now()}"`,
        summary: r.cal.summary,
        updated: new Date(now()).toISOString(),
        timeZone: tz,
        accessRole: r.role,
        defaultReminders: [],
      };
      if (page.next) body.nextPageToken = page.next;
      else body.nextSyncToken = `sync-${randomId(12)}`;
      body.items = page.items.map((e) => present(e));
      return { status: 200, body };
    },
  });

  const base = http.url;
  return {
    authUrl: `${base}/o/oauth2/v2/auth`,
    tokenUrl: `${base}/token`,
    revokeUrl: `${base}/revoke`,
    apiUrl: base,
    clientId,
    clientSecret,
    http,
    oauth,
    env: () => ({
      GOOGLE_AUTH_URL: `${base}/o/oauth2/v2/auth`,
      GOOGLE_TOKEN_URL: `${base}/token`,
      GOOGLE_REVOKE_URL: `${base}/revoke`,
      GOOGLE_API_URL: base,
      GOOGLE_CLIENT_ID: clientId,
      GOOGLE_CLIENT_SECRET: clientSecret,
    }),
    addUser,
    addCalendar,
    addEvent,
    events,
    writes,
    approve: (url, o) => oauth.approve(url, o),
    expireAccessToken: (t) => oauth.expireAccessToken(t),
    revokeGrant: (t) => oauth.revokeGrant(t),
    grants: (o) => oauth.grants(o),
    rateLimit: (route, o = {}) => {
      const status = o.status ?? 403;
      const reason = o.reason ?? "rateLimitExceeded";
      const message = reason === "rateLimitExceeded" ? "Rate Limit Exceeded" : "User Rate Limit Exceeded";
      const res = googleError(status, reason, message, { domain: "usageLimits", headers: o.retryAfter === undefined ? undefined : { "Retry-After": String(o.retryAfter) } });
      http.fault(route, { ...res, times: o.times });
    },
    serverError: (route, o = {}) => {
      const status = o.status ?? 503;
      const res = googleError(status, "backendError", status === 500 ? "Backend Error" : "The service is currently unavailable.");
      http.fault(route, { ...res, times: o.times });
    },
    freeBusyError: (calendarId, reason) => {
      if (reason === null) freeBusyErrors.delete(calendarId);
      else freeBusyErrors.set(calendarId, reason);
    },
    close: () => http.close(),
  };
}

// --- helpers ------------------------------------------------------------------------------------------------------

function withTopMessage(r: FakeResponse, message: string): FakeResponse {
  (r.body as { error: { message: string } }).error.message = message;
  return r;
}

/** Page tokens are opaque to clients; here the offset of the next item. */
function paginate<T>(req: FakeRequest, all: T[], pageSize: number, cap: number): { items: T[]; next?: string } | FakeResponse {
  const asked = req.query.get("maxResults");
  let size = pageSize;
  if (asked !== null) {
    const n = Number(asked);
    if (!Number.isInteger(n) || n < 1) return googleError(400, "invalid", "Invalid Value", { location: "maxResults" });
    size = Math.min(n, pageSize, cap);
  }
  const token = req.query.get("pageToken");
  let from = 0;
  if (token !== null) {
    const m = /^p(\d+)$/.exec(Buffer.from(token, "base64url").toString("utf8"));
    if (!m) return googleError(400, "invalid", "Invalid page token value.", { location: "pageToken" });
    from = Number(m[1]);
  }
  const items = all.slice(from, from + size);
  const next = from + size < all.length ? Buffer.from(`p${from + size}`).toString("base64url") : undefined;
  return { items, next };
}

function merge(target: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  // Patch semantics: objects merge field by field, arrays and scalars are replaced, null clears a field.
  for (const [k, v] of Object.entries(patch)) {
    const cur = target[k];
    if (v === null) delete target[k];
    else if (isPlainObject(v) && isPlainObject(cur)) target[k] = merge(cur, v);
    else target[k] = v;
  }
  return target;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function randomId(n: number): string {
  // Event ids are base32hex (a-v, 0-9), as Google makes them.
  const alphabet = "abcdefghijklmnopqrstuv0123456789";
  return [...randomBytes(n)].map((b) => alphabet[b % 32]).join("");
}

function meetCode(): string {
  const letters = [...randomBytes(10)].map((b) => String.fromCharCode(97 + (b % 26))).join("");
  return `${letters.slice(0, 3)}-${letters.slice(3, 7)}-${letters.slice(7)}`;
}

/** Milliseconds of an RFC 3339 timestamp; `offsetRequired` as events.list asks ("mandatory time zone offset"). */
function parseRfc3339(s: string, offsetRequired = false): number | undefined {
  const m = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/i.exec(s);
  if (!m || (offsetRequired && !m[3])) return undefined;
  const ms = Date.parse(m[3] ? s : `${s}Z`);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The instant an event starts or ends; all-day dates are midnights in the calendar's zone. */
function instant(t: EventDateTime, calendarZone: string): number {
  if (t.date) return zonedToUtc(t.date, calendarZone);
  const dt = t.dateTime ?? "";
  if (/(Z|[+-]\d{2}:\d{2})$/i.test(dt)) return Date.parse(dt);
  return zonedToUtc(dt, t.timeZone ?? calendarZone);
}

