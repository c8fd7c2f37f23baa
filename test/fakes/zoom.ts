// A local Zoom for tests: user-level OAuth (zoom.us/oauth/…) and the REST API v2 calls the service makes (users/me, meetings create/get/update/delete), answering as Zoom's references say.
/**
 * const zoom = await startFakeZoom({ redirectUris: ["http://127.0.0.1:3000/oauth/zoom/callback"] });
 * zoom.env()  ZOOM_AUTH_URL, ZOOM_TOKEN_URL, ZOOM_API_URL, ZOOM_CLIENT_ID, ZOOM_CLIENT_SECRET
 * Paths as at Zoom relative to one root: {root}/oauth/authorize, {root}/oauth/token, {root}/oauth/revoke, {root}/v2/….
 *
 * Control API (besides approve, expireAccessToken, revokeGrant, grants from oauth.ts and the harness's requests, calls,
 * fault, clearFaults):
 *   addUser(email, { firstName?, lastName?, timezone? })   a Zoom user who can authorize the app
 *   meetings({ includeDeleted? }), meeting(id)             what the service made, as Zoom stores it
 *   writes                                                 every create/update/delete with its status and body
 *   rateLimit(route, { retryAfter?, times? })              429 as Zoom answers it
 * Route keys for calls() and faults are in ZOOM_ROUTES.
 *
 * OAuth as Zoom does it: token-endpoint client authentication only by HTTP Basic; a refresh rotates the refresh token
 * and the old one is refused at once; token errors are {"reason", "error"}; a used or unknown authorization code is
 * invalid_request ("Invalid authorization code …", reported by ZoomNet issue 36), a bad refresh token invalid_grant
 * ("Invalid Token!"), a bad client invalid_client with 400. Scopes are the app's (granular: meeting:write:meeting,
 * meeting:update:meeting, meeting:delete:meeting, meeting:read:meeting, user:read:user) and need not be in the URL.
 * API errors are {"code", "message"}: 124 for a bad token (401), 4711 for a missing scope (400), 3001 for an unknown
 * meeting (404), 300 for validation (400). Shapes follow Zoom's OpenAPI as generated into @zoom/rivet's types.
 */
import { randomBytes } from "node:crypto";
import { FakeHttpServer, OAuthServer, type FakeRequest, type FakeResponse, type OAuthProviderFake, type OAuthUser } from "./oauth.js";
import { validZone, zonedToUtc } from "./zones.js";

/** The scopes the fake app has, user-level granular scopes. */
export const ZOOM_SCOPES = ["meeting:write:meeting", "meeting:update:meeting", "meeting:delete:meeting", "meeting:read:meeting", "user:read:user"];

/** Scopes each call accepts: the granular ones (user and admin level) and the classic ones older apps have. */
const CALL_SCOPES = {
  me: ["user:read:user", "user:read:user:admin", "user:read", "user:read:admin"],
  create: ["meeting:write:meeting", "meeting:write:meeting:admin", "meeting:write", "meeting:write:admin"],
  get: ["meeting:read:meeting", "meeting:read:meeting:admin", "meeting:read", "meeting:read:admin"],
  update: ["meeting:update:meeting", "meeting:update:meeting:admin", "meeting:write", "meeting:write:admin"],
  delete: ["meeting:delete:meeting", "meeting:delete:meeting:admin", "meeting:write", "meeting:write:admin"],
} as const;

export const ZOOM_ROUTES = {
  authorize: "GET /oauth/authorize",
  token: "POST /oauth/token",
  revoke: "POST /oauth/revoke",
  me: "GET /v2/users/me",
  create: "POST /v2/users/me/meetings",
  get: "GET /v2/meetings/:meetingId",
  update: "PATCH /v2/meetings/:meetingId",
  delete: "DELETE /v2/meetings/:meetingId",
} as const;

interface ZoomUser {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  timezone: string;
  account_id: string;
  pmi: number;
}

interface ZoomMeeting {
  uuid: string;
  id: number;
  host_id: string;
  host_email: string;
  topic: string;
  type: number;
  status: "waiting" | "started";
  start_time?: string;
  duration?: number;
  timezone: string;
  agenda?: string;
  created_at: string;
  start_url: string;
  join_url: string;
  password: string;
  h323_password: string;
  pstn_password: string;
  encrypted_password: string;
  pre_schedule: boolean;
  settings: Record<string, unknown>;
  creation_source: "open_api";
  deleted?: boolean;
}

interface MeetingWrite {
  at: number;
  kind: "create" | "update" | "delete";
  meetingId: number | null;
  status: number;
  body: unknown;
}

export interface FakeZoomOptions {
  redirectUris: string[];
  clientId?: string;
  clientSecret?: string;
  users?: { email: string; firstName?: string; lastName?: string; timezone?: string }[];
  /** The app's scopes (default ZOOM_SCOPES). */
  scopes?: string[];
  accessTokenTtlSeconds?: number;
  now?: () => number;
}

export interface FakeZoom extends OAuthProviderFake {
  addUser(email: string, opts?: { firstName?: string; lastName?: string; timezone?: string }): ZoomUser;
  meetings(opts?: { includeDeleted?: boolean }): ZoomMeeting[];
  meeting(id: number): ZoomMeeting | undefined;
  writes: MeetingWrite[];
  rateLimit(route: string, opts?: { retryAfter?: number; times?: number }): void;
}

const zoomError = (status: number, code: number, message: string, extra: Record<string, unknown> = {}): FakeResponse => ({ status, body: { code, message, ...extra } });

export async function startFakeZoom(opts: FakeZoomOptions): Promise<FakeZoom> {
  const now = opts.now ?? Date.now;
  const clientId = opts.clientId ?? "fakeZoomClientId";
  const clientSecret = opts.clientSecret ?? "fake-zoom-secret";
  const appScopes = opts.scopes ?? ZOOM_SCOPES;
  const http = await FakeHttpServer.start({ notFound: () => zoomError(404, 404, "Not Found") });
  const root = http.url;

  const oauth = new OAuthServer(http, {
    provider: "Zoom",
    paths: { authorize: "/oauth/authorize", token: "/oauth/token", revoke: "/oauth/revoke" },
    clients: [{ id: clientId, secret: clientSecret, redirectUris: opts.redirectUris }],
    clientAuthMethods: ["client_secret_basic"],
    // Scopes are configured on the app; a URL may name only some of them.
    scope: { param: "optional", known: appScopes, default: appScopes },
    rotation: { rotate: true, oldValidForSeconds: 0 },
    accessTokenTtlSeconds: opts.accessTokenTtlSeconds ?? 3599,
    tokenType: "bearer",
    tokenPrefix: { access: "eyJzdiI6IjAwMDAwMSJ9.", refresh: "eyJzdiI6IjAwMDAwMiJ9." },
    tokenExtras: () => ({ api_url: root }),
    tokenErrorBody: (f) => ({ reason: f.description, error: f.error }),
    tokenErrors: {
      client_unknown: { error: "invalid_client", description: "Invalid client_id or client_secret", status: 400 },
      client_secret_wrong: { error: "invalid_client", description: "Invalid client_id or client_secret", status: 400 },
      client_auth_method: { error: "invalid_client", description: "Client ID or client secret is missing.", status: 400 },
      unsupported_grant_type: { error: "unsupported_grant_type", description: "unsupported grant type" },
      code_unknown: { error: "invalid_request", description: "Invalid authorization code" },
      code_reused: { error: "invalid_request", description: "Invalid authorization code" },
      code_expired: { error: "invalid_request", description: "Invalid authorization code" },
      code_client_mismatch: { error: "invalid_request", description: "Invalid authorization code" },
      redirect_mismatch: { error: "invalid_request", description: "Redirect URI mismatch." },
      pkce_missing: { error: "invalid_request", description: "Invalid code_verifier." },
      pkce_mismatch: { error: "invalid_request", description: "Invalid code_verifier." },
      refresh_unknown: { error: "invalid_grant", description: "Invalid Token!" },
      refresh_revoked: { error: "invalid_grant", description: "Invalid Token!" },
      refresh_rotated: { error: "invalid_grant", description: "Invalid Token!" },
    },
    revoke: { clientAuth: "basic", success: { status: 200, body: { status: "success" } } },
    bearerError: (reason) => zoomError(401, 124, reason === "expired" ? "Access token is expired." : "Invalid access token."),
    now,
  });

  const people = new Map<string, ZoomUser>();
  const meetings = new Map<number, ZoomMeeting>();
  const writes: MeetingWrite[] = [];
  const accountId = randomBase64Id();

  function addUser(email: string, o: { firstName?: string; lastName?: string; timezone?: string } = {}): ZoomUser {
    const id = randomBase64Id();
    oauth.addUser({ id, email, name: [o.firstName, o.lastName].filter(Boolean).join(" ") || email });
    const user: ZoomUser = {
      id,
      email,
      first_name: o.firstName ?? email.split("@")[0],
      last_name: o.lastName ?? "",
      timezone: o.timezone ?? "UTC",
      account_id: accountId,
      pmi: Number(`${1 + (randomBytes(1)[0] % 9)}${digits(9)}`),
    };
    people.set(id, user);
    return user;
  }
  for (const u of opts.users ?? []) addUser(u.email, u);

  // --- request plumbing ------------------------------------------------------------------------------------------

  function authorize(req: FakeRequest, call: keyof typeof CALL_SCOPES): { user: ZoomUser; oauthUser: OAuthUser } | FakeResponse {
    const auth = oauth.validateBearer(req);
    if (!auth.ok) return auth.response;
    const accepted = CALL_SCOPES[call];
    if (!accepted.some((s) => auth.scopes.includes(s))) {
      // Zoom names the granular scopes (user and admin level) a call needs.
      return zoomError(400, 4711, `Invalid access token, does not contain scopes:[${accepted.slice(0, 2).join(", ")}].`);
    }
    return { user: people.get(auth.user.id)!, oauthUser: auth.user };
  }

  /** Tracking id on every API answer, as Zoom sends it (Rivet reads x-zm-trackingid). */
  function api(handler: (req: FakeRequest) => FakeResponse): (req: FakeRequest) => FakeResponse {
    return (req) => {
      const res = handler(req);
      return { ...res, headers: { "x-zm-trackingid": `v=2.0;clid=us05;rid=${randomBytes(8).toString("hex")}`, ...res.headers } };
    };
  }

  function jsonBody(req: FakeRequest): { ok: true; value: Record<string, unknown> } | { ok: false; response: FakeResponse } {
    const body = req.json();
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return { ok: false, response: zoomError(400, 300, "Request Body should be a valid JSON object.") };
    }
    return { ok: true, value: body as Record<string, unknown> };
  }

  function ownMeeting(req: FakeRequest, user: ZoomUser): ZoomMeeting | FakeResponse {
    const raw = req.params.meetingId;
    const m = /^\d+$/.test(raw) ? meetings.get(Number(raw)) : undefined;
    if (!m || m.deleted || m.host_id !== user.id) return zoomError(404, 3001, `Meeting does not exist: ${raw}.`);
    return m;
  }

  /** Field checks shared by create and update; errors as Zoom's "Validation Failed." with the fields named. */
  function validate(body: Record<string, unknown>): { field: string; message: string }[] {
    const errors: { field: string; message: string }[] = [];
    const { type, start_time, duration, topic, timezone, agenda } = body;
    if (type !== undefined && ![1, 2, 3, 8, 10].includes(type as number)) errors.push({ field: "type", message: "Invalid field." });
    if (start_time !== undefined) {
      // yyyy-MM-ddTHH:mm:ssZ in GMT, or yyyy-MM-ddTHH:mm:ss in `timezone` (create meeting reference).
      if (typeof start_time !== "string" || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z?$/.test(start_time) || Number.isNaN(Date.parse(start_time.endsWith("Z") ? start_time : `${start_time}Z`))) {
        errors.push({ field: "start_time", message: "Invalid field." });
      }
    }
    if (duration !== undefined && !(Number.isInteger(duration) && (duration as number) >= 0)) errors.push({ field: "duration", message: "Invalid field." });
    if (topic !== undefined && (typeof topic !== "string" || topic.length > 200)) errors.push({ field: "topic", message: "The topic can be up to 200 characters." });
    if (agenda !== undefined && (typeof agenda !== "string" || agenda.length > 2000)) errors.push({ field: "agenda", message: "The agenda can be up to 2000 characters." });
    if (timezone !== undefined && (typeof timezone !== "string" || !validZone(timezone))) errors.push({ field: "timezone", message: "Invalid field." });
    return errors;
  }

  /** Zoom answers start_time in GMT; a local time is read in the meeting's zone. */
  function startUtc(start: string, zone: string): string {
    if (start.endsWith("Z")) return start;
    return new Date(zonedToUtc(start, zone)).toISOString().replace(".000Z", "Z");
  }

  function view(m: ZoomMeeting): Record<string, unknown> {
    const { deleted: _deleted, ...rest } = m;
    return rest;
  }

  // --- routes -----------------------------------------------------------------------------------------------------

  http.add({
    method: "GET",
    path: "/v2/users/me",
    handle: api((req) => {
      const a = authorize(req, "me");
      if (!("user" in a)) return a;
      const u = a.user;
      return {
        status: 200,
        body: {
          id: u.id,
          first_name: u.first_name,
          last_name: u.last_name,
          display_name: `${u.first_name} ${u.last_name}`.trim(),
          email: u.email,
          type: 2,
          role_name: "Owner",
          pmi: u.pmi,
          use_pmi: false,
          personal_meeting_url: `https://us05web.zoom.us/j/${u.pmi}`,
          timezone: u.timezone,
          verified: 1,
          dept: "",
          created_at: "2024-01-15T09:00:00Z",
          user_created_at: "2024-01-15T09:00:00Z",
          last_login_time: new Date(now()).toISOString().replace(/\.\d{3}Z$/, "Z"),
          language: "en-US",
          phone_number: "",
          status: "active",
          role_id: "0",
          account_id: u.account_id,
          account_number: 1234567890,
          cluster: "us05",
          login_types: [100],
        },
      };
    }),
  });

  http.add({
    method: "POST",
    path: "/v2/users/me/meetings",
    handle: api((req) => {
      const done = (res: FakeResponse, id: number | null = null) => {
        writes.push({ at: now(), kind: "create", meetingId: id, status: res.status, body: req.json() });
        return res;
      };
      const a = authorize(req, "create");
      if (!("user" in a)) return done(a);
      const parsed = jsonBody(req);
      if (!parsed.ok) return done(parsed.response);
      const body = parsed.value;
      const errors = validate(body);
      if (errors.length > 0) return done(zoomError(400, 300, "Validation Failed.", { errors }));
      const id = uniqueMeetingId();
      const timezone = (body.timezone as string | undefined) ?? a.user.timezone;
      const password = typeof body.password === "string" ? body.password : alnum(6);
      const pwd = randomBytes(24).toString("base64url");
      const m: ZoomMeeting = {
        uuid: randomBytes(16).toString("base64"),
        id,
        host_id: a.user.id,
        host_email: a.user.email,
        topic: (body.topic as string | undefined) ?? "Zoom meeting",
        type: (body.type as number | undefined) ?? 2,
        status: "waiting",
        start_time: startUtc((body.start_time as string | undefined) ?? new Date(now()).toISOString().replace(/\.\d{3}Z$/, "Z"), timezone),
        duration: (body.duration as number | undefined) ?? 60,
        timezone,
        agenda: body.agenda as string | undefined,
        created_at: new Date(now()).toISOString().replace(/\.\d{3}Z$/, "Z"),
        start_url: `https://us05web.zoom.us/s/${id}?zak=${randomBytes(32).toString("base64url")}`,
        join_url: `https://us05web.zoom.us/j/${id}?pwd=${pwd}`,
        password,
        h323_password: digits(6),
        pstn_password: digits(6),
        encrypted_password: pwd,
        pre_schedule: false,
        settings: {
          host_video: false,
          participant_video: false,
          join_before_host: false,
          mute_upon_entry: false,
          waiting_room: true,
          approval_type: 2,
          audio: "voip",
          auto_recording: "none",
          ...(typeof body.settings === "object" && body.settings !== null ? (body.settings as Record<string, unknown>) : {}),
        },
        creation_source: "open_api",
      };
      if (m.agenda === undefined) delete m.agenda;
      meetings.set(id, m);
      return done({ status: 201, body: view(m) }, id);
    }),
  });

  http.add({
    method: "GET",
    path: "/v2/meetings/:meetingId",
    handle: api((req) => {
      const a = authorize(req, "get");
      if (!("user" in a)) return a;
      const found = ownMeeting(req, a.user);
      if (!("join_url" in found)) return found;
      return { status: 200, body: view(found) };
    }),
  });

  http.add({
    method: "PATCH",
    path: "/v2/meetings/:meetingId",
    handle: api((req) => {
      const done = (res: FakeResponse) => {
        writes.push({ at: now(), kind: "update", meetingId: Number(req.params.meetingId) || null, status: res.status, body: req.json() });
        return res;
      };
      const a = authorize(req, "update");
      if (!("user" in a)) return done(a);
      const found = ownMeeting(req, a.user);
      if (!("join_url" in found)) return done(found);
      const parsed = jsonBody(req);
      if (!parsed.ok) return done(parsed.response);
      const body = parsed.value;
      const errors = validate(body);
      if (errors.length > 0) return done(zoomError(400, 300, "Validation Failed.", { errors }));
      const timezone = (body.timezone as string | undefined) ?? found.timezone;
      found.timezone = timezone;
      if (typeof body.topic === "string") found.topic = body.topic;
      if (typeof body.agenda === "string") found.agenda = body.agenda;
      if (typeof body.type === "number") found.type = body.type;
      if (typeof body.duration === "number") found.duration = body.duration;
      if (typeof body.start_time === "string") found.start_time = startUtc(body.start_time, timezone);
      if (typeof body.settings === "object" && body.settings !== null) found.settings = { ...found.settings, ...(body.settings as Record<string, unknown>) };
      // The meeting keeps its id, join_url and passcode: a moved meeting is the same meeting.
      return done({ status: 204 });
    }),
  });

  http.add({
    method: "DELETE",
    path: "/v2/meetings/:meetingId",
    handle: api((req) => {
      const done = (res: FakeResponse) => {
        writes.push({ at: now(), kind: "delete", meetingId: Number(req.params.meetingId) || null, status: res.status, body: undefined });
        return res;
      };
      const a = authorize(req, "delete");
      if (!("user" in a)) return done(a);
      const found = ownMeeting(req, a.user);
      if (!("join_url" in found)) return done(found);
      found.deleted = true;
      return done({ status: 204 });
    }),
  });

  function uniqueMeetingId(): number {
    for (;;) {
      const id = Number(`${7 + (randomBytes(1)[0] % 3)}${digits(10)}`);
      if (!meetings.has(id)) return id;
    }
  }

  return {
    authUrl: `${root}/oauth/authorize`,
    tokenUrl: `${root}/oauth/token`,
    revokeUrl: `${root}/oauth/revoke`,
    apiUrl: `${root}/v2`,
    clientId,
    clientSecret,
    http,
    oauth,
    env: () => ({
      ZOOM_AUTH_URL: `${root}/oauth/authorize`,
      ZOOM_TOKEN_URL: `${root}/oauth/token`,
      ZOOM_API_URL: `${root}/v2`,
      ZOOM_CLIENT_ID: clientId,
      ZOOM_CLIENT_SECRET: clientSecret,
    }),
    addUser,
    meetings: (o = {}) => [...meetings.values()].filter((m) => o.includeDeleted || !m.deleted),
    meeting: (id) => meetings.get(id),
    writes,
    approve: (url, o) => oauth.approve(url, o),
    expireAccessToken: (t) => oauth.expireAccessToken(t),
    revokeGrant: (t) => oauth.revokeGrant(t),
    grants: (o) => oauth.grants(o),
    rateLimit: (route, o = {}) => {
      const headers: Record<string, string> = { "X-RateLimit-Category": "Light", "X-RateLimit-Type": "QPS" };
      if (o.retryAfter !== undefined) headers["Retry-After"] = String(o.retryAfter);
      http.fault(route, { status: 429, headers, body: { code: 429, message: "You have reached the maximum per-second rate limit for this API. Try again later." }, times: o.times });
    },
    close: () => http.close(),
  };
}

function digits(n: number): string {
  return [...randomBytes(n)].map((b) => String(b % 10)).join("");
}

function alnum(n: number): string {
  const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
  return [...randomBytes(n)].map((b) => alphabet[b % alphabet.length]).join("");
}

/** Zoom's user and account ids: 22 characters of URL-safe base64. */
function randomBase64Id(): string {
  return randomBytes(16).toString("base64url").slice(0, 22);
}

