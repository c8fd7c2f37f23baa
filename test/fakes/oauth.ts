// Shared core of the provider fakes: a node:http harness (router, request log, call counts, fault injection) and an OAuth 2.0 authorization server (code + PKCE, refresh, revocation, bearer checks).
/**
 * How the provider fakes (google.ts, zoom.ts, and a Microsoft one) are built on this file:
 *
 *   const http = await FakeHttpServer.start({ notFound, tls? });   // one loopback port per fake (https with tls)
 *   const oauth = new OAuthServer(http, profile);                   // mounts authorize / token / revoke routes
 *   http.add({ method: "GET", path: "/v2/users/:userId", handle }); // the provider's API routes
 *   // inside an API handler:
 *   const auth = oauth.validateBearer(req); if (!auth.ok) return auth.response;
 *
 * FakeHttpServer (any route, OAuth's included)
 *   url                        "http://127.0.0.1:<port>"
 *   add(...routes)             Route = { method, path: "/a/:param/b", handle(req) => FakeResponse }
 *   requests                   every request received: method, path, query, headers, body, route key, answered status
 *   calls(key?)                how many requests a route key ("POST /token", i.e. method + path pattern) received; all without a key
 *   fault(key, fault)          the next `times` (default 1) calls of that route (or "*" for any) answer `status`/`headers`/`body`,
 *                              or `hang` (never answer), or answer normally after `delayMs`
 *   clearFaults(), resetLog(), close()
 *
 * OAuthServer (profile = OAuthProfile below: paths, clients, which client authentication, PKCE, rotation, error wording)
 *   addUser({ email, name?, id? })       a person who can consent; listUsers(), user(idOrEmail) find them
 *   approve(authorizationUrl, { user?, deny?, scopes? })
 *                                        the consent step without the page: the URL the browser would be redirected to
 *                                        (code and state, or error=access_denied); throws where the provider shows an error page
 *   expireAccessToken(token?)            one access token (or every live one) is expired from now on
 *   expireRefreshToken(token?)           the same for refresh tokens (the next refresh is invalid_grant)
 *   revokeGrant(tokenOrGrantId)          as the provider's revocation does (so the next refresh is invalid_grant)
 *   grants({ live? })                    issued grants with their user, scopes and live tokens
 *   validateBearer(req)                  { ok: true, user, scopes, ... } or { ok: false, response } (the profile's 401 body)
 *
 * The consent page is a real HTML form (user select preset by login_hint, scope checkboxes, Allow and Deny buttons)
 * that posts back to the path it was served at, so Chromium or a plain HTTP client (GET the page, POST its form) can
 * drive it. A profile's `now` clock lets a test move time (code expiry, rotation grace) without waiting. pkcePair()
 * and s256() make PKCE values for hand-made requests.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";

// ---------------------------------------------------------------------------------------------------------------
// HTTP harness
// ---------------------------------------------------------------------------------------------------------------

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  /** Path parameters of the matched route, percent-decoded. */
  params: Record<string, string>;
  form(): URLSearchParams;
  /** The body as JSON, or undefined when it is empty or not JSON. */
  json(): unknown;
}

export interface FakeResponse {
  status: number;
  headers?: Record<string, string>;
  /** A string is sent as it is (HTML when it starts with "<"), anything else as JSON. */
  body?: unknown;
}

export type Handler = (req: FakeRequest) => FakeResponse | Promise<FakeResponse>;

export interface Route {
  method: string;
  /** Segments starting with ":" match one path segment. */
  path: string;
  handle: Handler;
}

export interface Fault {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Never answer (the connection stays open until close()). */
  hang?: boolean;
  /** Answer after this delay: the fault's status if it has one, else the route's normal answer. */
  delayMs?: number;
  /** How many calls the fault applies to (default 1; Infinity until clearFaults()). */
  times?: number;
}

export interface LoggedRequest {
  at: number;
  /** Route key ("POST /token"), or null when no route matched. */
  route: string | null;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status answered; undefined while hanging. */
  status?: number;
}

export interface FakeHttpOptions {
  /** Answer for paths no route matches (default 404 text). */
  notFound?: Handler;
  /** Serve https with this key and certificate (PEM): for clients that refuse plain http (MSAL, Microsoft's Graph client). */
  tls?: { key: string; cert: string };
}

type MountedRoute = Route & { key: string; segments: string[] };

export class FakeHttpServer {
  readonly requests: LoggedRequest[] = [];
  private readonly routes: MountedRoute[] = [];
  private readonly faults = new Map<string, Required<Pick<Fault, "times">> & Fault>();
  private readonly counts = new Map<string, number>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly notFound: Handler,
  ) {}

  static async start(opts: FakeHttpOptions = {}): Promise<FakeHttpServer> {
    let fake: FakeHttpServer | undefined;
    // A client that goes away mid-request must not take the test process down with an unhandled rejection.
    const listener = (req: IncomingMessage, res: ServerResponse): void => void fake?.dispatch(req, res).catch(() => res.destroy());
    const server: Server = opts.tls ? createTlsServer(opts.tls, listener) : createServer(listener);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const scheme = opts.tls ? "https" : "http";
    fake = new FakeHttpServer(server, `${scheme}://127.0.0.1:${port}`, opts.notFound ?? (() => ({ status: 404, body: "Not Found" })));
    return fake;
  }

  add(...routes: Route[]): void {
    for (const r of routes) this.routes.push({ ...r, key: `${r.method} ${r.path}`, segments: r.path.split("/") });
  }

  calls(key?: string): number {
    if (key === undefined) return this.requests.length;
    return this.counts.get(key) ?? 0;
  }

  fault(key: string, fault: Fault): void {
    this.faults.set(key, { ...fault, times: fault.times ?? 1 });
  }

  clearFaults(): void {
    this.faults.clear();
  }

  resetLog(): void {
    this.requests.length = 0;
    this.counts.clear();
  }

  async close(): Promise<void> {
    // Hanging requests keep their sockets: end them, or close() would wait for them forever.
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private match(method: string, path: string): { route: MountedRoute; params: Record<string, string> } | undefined {
    const segments = path.split("/");
    for (const route of this.routes) {
      if (route.method !== method || route.segments.length !== segments.length) continue;
      const params: Record<string, string> = {};
      const ok = route.segments.every((s, i) => {
        if (s.startsWith(":")) {
          if (segments[i] === "") return false;
          params[s.slice(1)] = safeDecode(segments[i]);
          return true;
        }
        return s === segments[i];
      });
      if (ok) return { route, params };
    }
    return undefined;
  }

  private takeFault(key: string): Fault | undefined {
    for (const k of [key, "*"]) {
      const f = this.faults.get(k);
      if (!f) continue;
      f.times -= 1;
      if (f.times <= 0) this.faults.delete(k);
      return f;
    }
    return undefined;
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url ?? "/", this.url);
    const method = req.method ?? "GET";
    const found = this.match(method, url.pathname);
    const key = found ? found.route.key : null;
    const entry: LoggedRequest = {
      at: Date.now(),
      route: key,
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
    };
    this.requests.push(entry);
    if (key) this.counts.set(key, (this.counts.get(key) ?? 0) + 1);

    const fake: FakeRequest = {
      method,
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body,
      params: found?.params ?? {},
      form: () => new URLSearchParams(body),
      json: () => {
        try {
          return body === "" ? undefined : (JSON.parse(body) as unknown);
        } catch {
          return undefined;
        }
      },
    };
    const fault = key ? this.takeFault(key) : undefined;
    if (fault?.hang) return;
    if (fault?.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
    let answer: FakeResponse;
    try {
      if (fault?.status !== undefined) answer = { status: fault.status, headers: fault.headers, body: fault.body };
      else answer = await (found ? found.route.handle(fake) : this.notFound(fake));
    } catch (err) {
      answer = { status: 500, body: `fake handler failed: ${String(err)}` };
    }
    entry.status = answer.status;
    send(res, answer);
  }
}

function send(res: ServerResponse, answer: FakeResponse): void {
  const headers: Record<string, string> = { ...answer.headers };
  const has = (name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name);
  let payload: string | undefined;
  if (answer.body !== undefined && answer.status !== 204 && answer.status !== 304) {
    if (typeof answer.body === "string") {
      payload = answer.body;
      if (!has("content-type")) headers["Content-Type"] = payload.startsWith("<") ? "text/html; charset=utf-8" : "text/plain; charset=utf-8";
    } else {
      payload = JSON.stringify(answer.body);
      if (!has("content-type")) headers["Content-Type"] = "application/json; charset=utf-8";
    }
  }
  if (!res.writableEnded && !res.destroyed) {
    res.writeHead(answer.status, headers);
    res.end(payload);
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// OAuth 2.0 authorization server
// ---------------------------------------------------------------------------------------------------------------

export interface OAuthClientRegistration {
  id: string;
  secret: string;
  /** Compared byte for byte, as Google, Microsoft and Zoom compare them. */
  redirectUris: string[];
}

export interface OAuthUser {
  id: string;
  email: string;
  name: string;
}

export type ClientAuthMethod = "client_secret_basic" | "client_secret_post";

/** Every way a token or revocation request can fail; a profile words each one as its provider does. */
export type TokenFailureKind =
  | "invalid_request"
  | "unsupported_grant_type"
  | "client_unknown"
  | "client_secret_wrong"
  | "client_auth_method"
  | "code_unknown"
  | "code_expired"
  | "code_reused"
  | "code_client_mismatch"
  | "redirect_mismatch"
  | "pkce_missing"
  | "pkce_mismatch"
  | "refresh_unknown"
  | "refresh_revoked"
  | "refresh_rotated"
  | "invalid_scope"
  | "revoke_unknown";

export interface TokenFailure {
  kind: TokenFailureKind;
  error: string;
  description: string;
  status: number;
}

export type BearerFailureReason = "missing" | "invalid" | "expired" | "revoked";

export interface OAuthProfile {
  /** Shown on the consent page and used in token prefixes. */
  provider: string;
  /** Route paths; ":name" segments match any value (Microsoft's "/:tenant/oauth2/v2.0/token"). */
  paths: { authorize: string; token: string; revoke?: string };
  clients: OAuthClientRegistration[];
  users?: Partial<OAuthUser>[];
  /** Client authentication the token endpoint accepts (default both). Zoom: basic only. */
  clientAuthMethods?: ClientAuthMethod[];
  /** Default "required": code_challenge with method S256 (the service always sends it; "plain" is refused). */
  pkce?: "required" | "optional";
  /** Default true. */
  requireState?: boolean;
  scope?: {
    /** Whether the authorization request must carry `scope` (Google: yes; Zoom: no, the app's scopes apply). */
    param: "required" | "optional";
    /** Scopes the provider knows; any other is invalid_scope. */
    known?: string[];
    /** Scopes every authorization request must include (none by default). */
    required?: string[];
    /** Granted when the request has no scope parameter. */
    default?: string[];
    /** One spelling per scope, applied to authorization and refresh requests before any check (Microsoft: full URI or short name). */
    normalize?: (scope: string) => string;
  };
  /**
   * Whether this authorization yields a refresh token (default always). Google: access_type=offline, and consent
   * shown; Microsoft: `offline_access` among the granted scopes.
   */
  issuesRefreshToken?: (query: URLSearchParams, firstConsent: boolean, grantedScopes: string[]) => boolean;
  /**
   * Refuses a request to the authorization or token endpoint before anything else is looked at, as a provider does
   * for a path it cannot serve (Microsoft: an unknown tenant). Shown as an error page at the authorization endpoint
   * and answered with the profile's token error body (kind "invalid_request") at the token endpoint.
   */
  checkEndpoint?: (path: string, endpoint: "authorize" | "token") => Omit<TokenFailure, "kind"> | undefined;
  /** error_description on the redirect after Deny (Microsoft: "AADSTS65004: User declined to consent to access the app."). */
  deniedDescription?: string;
  /**
   * Refuses an Allow for this user: by redirecting to the client with an error (Microsoft: consent_required where
   * only an administrator may consent) or with an error page (an account that cannot sign in at this path).
   */
  refuseConsent?: (user: OAuthUser, request: { path: string; clientId: string; scopes: string[] }) =>
    | { as: "redirect" | "page"; error: string; description: string }
    | undefined;
  /** Default no rotation. `oldValidForSeconds` 0: the old refresh token is refused at once (Zoom). */
  rotation?: { rotate: false } | { rotate: true; oldValidForSeconds: number };
  accessTokenTtlSeconds?: number;
  codeTtlSeconds?: number;
  /** How a malformed authorization request (valid client and redirect_uri) is answered. Default: redirect (RFC 6749 4.1.2.1). */
  invalidRequestAs?: "redirect" | "page";
  tokenType?: string;
  tokenPrefix?: { access?: string; refresh?: string; code?: string };
  /** Extra fields of a token answer (Zoom's api_url, Microsoft's ext_expires_in and id_token); they may replace `scope`. */
  tokenExtras?: (grant: GrantView, grantType: "authorization_code" | "refresh_token") => Record<string, unknown>;
  /** Extra query parameters on the redirect with the code (Google adds scope). */
  redirectExtras?: (grant: { scopes: string[] }) => Record<string, string>;
  tokenErrors?: Partial<Record<TokenFailureKind, Partial<Omit<TokenFailure, "kind">>>>;
  /** Default RFC 6749 5.2: { error, error_description }. */
  tokenErrorBody?: (failure: TokenFailure) => unknown;
  revoke?: {
    /** Zoom requires the client's Basic credentials; Google none. */
    clientAuth: "none" | "basic";
    success?: FakeResponse;
    /** RFC 7009 answers 200 for an unknown token; Google answers 400 invalid_token. Default "ok". */
    unknownToken?: "ok" | "error";
  };
  /** What one revocation ends: its grant, or every grant of that user to that client (default; Google and Zoom). */
  revokeScope?: "grant" | "user-client";
  /** The resource servers' 401 (default RFC 6750: invalid_token with WWW-Authenticate). */
  bearerError?: (reason: BearerFailureReason) => FakeResponse;
  now?: () => number;
}

export interface GrantView {
  id: string;
  clientId: string;
  user: OAuthUser;
  scopes: string[];
  createdAt: number;
  revoked: boolean;
  liveAccessTokens: string[];
  liveRefreshTokens: string[];
  /** The authorization request the grant came from: its path and query (nonce, tenant, prompt…). */
  authorization: { path: string; query: URLSearchParams };
}

export type BearerCheck =
  | { ok: true; token: string; user: OAuthUser; scopes: string[]; grantId: string; clientId: string }
  | { ok: false; reason: BearerFailureReason; response: FakeResponse };

interface Grant {
  id: string;
  clientId: string;
  userId: string;
  scopes: string[];
  createdAt: number;
  revokedAt?: number;
  authorization: { path: string; query: URLSearchParams };
}
interface Code {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  userId: string;
  challenge?: string;
  offline: boolean;
  expiresAt: number;
  authorization: { path: string; query: URLSearchParams };
  /** The grant this code was redeemed for; set once it is used. */
  grantId?: string;
}
interface AccessToken {
  grantId: string;
  expiresAt: number;
}
interface RefreshToken {
  grantId: string;
  /** Set when a rotation replaced it or expireRefreshToken() ended it; refused once past `validUntil`. */
  validUntil?: number;
}
interface PendingAuthorization {
  client: OAuthClientRegistration;
  redirectUri: string;
  state: string | null;
  scopes: string[];
  challenge?: string;
  query: URLSearchParams;
  /** The authorization endpoint's path as requested (it may hold route parameters such as a tenant). */
  path: string;
}

type AuthorizationCheck =
  | { kind: "page"; status: number; error: string; description: string }
  | { kind: "redirect"; location: string }
  | { kind: "ok"; pending: PendingAuthorization };

const DEFAULT_ERRORS: Record<TokenFailureKind, Omit<TokenFailure, "kind">> = {
  invalid_request: { error: "invalid_request", description: "The request is missing a required parameter.", status: 400 },
  unsupported_grant_type: { error: "unsupported_grant_type", description: "Unsupported grant type.", status: 400 },
  client_unknown: { error: "invalid_client", description: "The OAuth client was not found.", status: 401 },
  client_secret_wrong: { error: "invalid_client", description: "Unauthorized", status: 401 },
  client_auth_method: { error: "invalid_client", description: "Client authentication method not allowed.", status: 401 },
  code_unknown: { error: "invalid_grant", description: "Malformed auth code.", status: 400 },
  code_expired: { error: "invalid_grant", description: "Bad Request", status: 400 },
  code_reused: { error: "invalid_grant", description: "Bad Request", status: 400 },
  code_client_mismatch: { error: "invalid_grant", description: "Bad Request", status: 400 },
  redirect_mismatch: { error: "invalid_grant", description: "redirect_uri does not match the authorization request.", status: 400 },
  pkce_missing: { error: "invalid_grant", description: "Missing code verifier.", status: 400 },
  pkce_mismatch: { error: "invalid_grant", description: "Invalid code verifier.", status: 400 },
  refresh_unknown: { error: "invalid_grant", description: "Bad Request", status: 400 },
  refresh_revoked: { error: "invalid_grant", description: "Token has been expired or revoked.", status: 400 },
  refresh_rotated: { error: "invalid_grant", description: "Token has been expired or revoked.", status: 400 },
  invalid_scope: { error: "invalid_scope", description: "Invalid scope.", status: 400 },
  revoke_unknown: { error: "invalid_token", description: "Token expired or revoked", status: 400 },
};

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/** What a fake provider built on OAuthServer gives its tests, whatever its API: its endpoints, its client and its grants. */
export interface OAuthProviderFake {
  authUrl: string;
  tokenUrl: string;
  revokeUrl: string;
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  http: FakeHttpServer;
  oauth: OAuthServer;
  /** The service's settings that point it at this fake. */
  env(): Record<string, string>;
  approve(authorizationUrl: string, opts?: { user?: string; deny?: boolean; scopes?: string[] }): string;
  expireAccessToken(token?: string): number;
  revokeGrant(tokenOrGrantId: string): boolean;
  grants(opts?: { live?: boolean }): GrantView[];
  close(): Promise<void>;
}

export class OAuthServer {
  private readonly users = new Map<string, OAuthUser>();
  private readonly pending = new Map<string, PendingAuthorization>();
  private readonly codes = new Map<string, Code>();
  private readonly grantsById = new Map<string, Grant>();
  private readonly accessTokens = new Map<string, AccessToken>();
  private readonly refreshTokens = new Map<string, RefreshToken>();
  /** "userId clientId" pairs that consented once, for providers that issue a refresh token only on first consent. */
  private readonly consented = new Set<string>();
  private readonly now: () => number;

  constructor(
    http: FakeHttpServer,
    private readonly profile: OAuthProfile,
  ) {
    this.now = profile.now ?? Date.now;
    for (const u of profile.users ?? []) this.addUser(u);
    const { paths } = profile;
    http.add(
      { method: "GET", path: paths.authorize, handle: (req) => this.authorizePage(req) },
      { method: "POST", path: paths.authorize, handle: (req) => this.consentDecision(req) },
      { method: "POST", path: paths.token, handle: (req) => this.token(req) },
    );
    if (paths.revoke) http.add({ method: "POST", path: paths.revoke, handle: (req) => this.revoke(req) });
  }

  // --- control API -----------------------------------------------------------------------------------------------

  addUser(input: Partial<OAuthUser>): OAuthUser {
    const email = input.email ?? `user${this.users.size + 1}@example.test`;
    const user: OAuthUser = { id: input.id ?? randomDigits(21), email, name: input.name ?? email.split("@")[0] };
    this.users.set(user.id, user);
    return user;
  }

  listUsers(): OAuthUser[] {
    return [...this.users.values()];
  }

  /** A user by id or e-mail address. */
  user(idOrEmail: string): OAuthUser | undefined {
    return this.users.get(idOrEmail) ?? [...this.users.values()].find((u) => u.email.toLowerCase() === idOrEmail.toLowerCase());
  }

  /**
   * The consent step without the page: validates the authorization URL as the endpoint does and answers the URL the
   * browser would be sent to. Throws (with the provider's words) where the provider shows an error page instead.
   */
  approve(authorizationUrl: string, opts: { user?: string; deny?: boolean; scopes?: string[] } = {}): string {
    const url = new URL(authorizationUrl);
    const check = this.checkAuthorization(url.pathname, url.searchParams);
    if (check.kind === "page") throw new Error(`${this.profile.provider} shows an error page: ${check.error}: ${check.description}`);
    if (check.kind === "redirect") return check.location;
    const user = this.pickUser(opts.user ?? url.searchParams.get("login_hint") ?? undefined);
    if (!user) throw new Error(`no such user at the fake ${this.profile.provider}: ${opts.user ?? "(none added)"}`);
    const decided = this.decide(check.pending, opts.deny ? "deny" : "allow", user, opts.scopes ?? check.pending.scopes);
    if (typeof decided !== "string") throw new Error(`${this.profile.provider} shows an error page: ${decided.error}: ${decided.description}`);
    return decided;
  }

  expireAccessToken(token?: string): number {
    let n = 0;
    for (const [t, at] of this.accessTokens) {
      if (token !== undefined && t !== token) continue;
      if (at.expiresAt > this.now()) n += 1;
      at.expiresAt = Math.min(at.expiresAt, this.now() - 1);
    }
    return n;
  }

  /** One refresh token (or every live one) is expired from now on: the next refresh with it is refused (kind "refresh_rotated"). */
  expireRefreshToken(token?: string): number {
    let n = 0;
    for (const [t, rt] of this.refreshTokens) {
      if (token !== undefined && t !== token) continue;
      if ((rt.validUntil ?? Infinity) > this.now()) n += 1;
      rt.validUntil = Math.min(rt.validUntil ?? Infinity, this.now() - 1);
    }
    return n;
  }

  /** Revokes as the provider's revocation endpoint would; accepts a grant id, an access token or a refresh token. */
  revokeGrant(tokenOrGrantId: string): boolean {
    const grantId =
      (this.grantsById.has(tokenOrGrantId) ? tokenOrGrantId : undefined) ??
      this.accessTokens.get(tokenOrGrantId)?.grantId ??
      this.refreshTokens.get(tokenOrGrantId)?.grantId;
    const grant = grantId ? this.grantsById.get(grantId) : undefined;
    if (!grant) return false;
    this.revoke_(grant);
    return true;
  }

  grants(opts: { live?: boolean } = {}): GrantView[] {
    const views = [...this.grantsById.values()].map((g) => this.view(g));
    return opts.live ? views.filter((g) => !g.revoked) : views;
  }

  validateBearer(req: { headers: IncomingHttpHeaders }): BearerCheck {
    const fail = (reason: BearerFailureReason): BearerCheck => ({ ok: false, reason, response: this.bearerError(reason) });
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
    if (!m) return fail("missing");
    const at = this.accessTokens.get(m[1]);
    const grant = at && this.grantsById.get(at.grantId);
    if (!at || !grant) return fail("invalid");
    if (grant.revokedAt !== undefined) return fail("revoked");
    if (at.expiresAt <= this.now()) return fail("expired");
    return { ok: true, token: m[1], user: this.users.get(grant.userId)!, scopes: grant.scopes, grantId: grant.id, clientId: grant.clientId };
  }

  // --- authorization endpoint -----------------------------------------------------------------------------------

  private checkAuthorization(path: string, q: URLSearchParams): AuthorizationCheck {
    const refused = this.profile.checkEndpoint?.(path, "authorize");
    if (refused) return { kind: "page", ...refused };
    const client = this.profile.clients.find((c) => c.id === q.get("client_id"));
    if (!client) return { kind: "page", status: 401, error: "invalid_client", description: "The OAuth client was not found." };
    const redirectUri = q.get("redirect_uri") ?? "";
    if (!client.redirectUris.includes(redirectUri)) {
      return { kind: "page", status: 400, error: "redirect_uri_mismatch", description: `redirect_uri is not registered for this client: ${redirectUri}` };
    }
    const state = q.get("state");
    const bad = (error: string, description: string): AuthorizationCheck => {
      if (this.profile.invalidRequestAs === "page") return { kind: "page", status: 400, error, description };
      const to = new URL(redirectUri);
      to.searchParams.set("error", error);
      to.searchParams.set("error_description", description);
      if (state !== null) to.searchParams.set("state", state);
      return { kind: "redirect", location: to.toString() };
    };
    const responseType = q.get("response_type");
    if (responseType === null) return bad("invalid_request", "Required parameter is missing: response_type");
    if (responseType !== "code") return bad("unsupported_response_type", `Unsupported response_type: ${responseType}`);
    if ((this.profile.requireState ?? true) && !state) return bad("invalid_request", "Required parameter is missing: state");

    const scopeParam = q.get("scope");
    const spec = this.profile.scope ?? { param: "required" };
    if (scopeParam === null && spec.param === "required") return bad("invalid_request", "Missing required parameter: scope");
    const normalize = spec.normalize ?? ((x: string) => x);
    const scopes = scopeParam === null ? [...(spec.default ?? [])] : [...new Set(scopeParam.split(" ").filter(Boolean).map(normalize))];
    const unknown = spec.known ? scopes.filter((s) => !spec.known!.includes(s)) : [];
    if (unknown.length > 0) return bad("invalid_scope", `Some requested scopes were invalid: ${unknown.join(" ")}`);
    const missing = (spec.required ?? []).filter((s) => !scopes.includes(s));
    if (missing.length > 0) return bad("invalid_scope", `Required scopes are missing: ${missing.join(" ")}`);

    const challenge = q.get("code_challenge") ?? undefined;
    const method = q.get("code_challenge_method");
    if (challenge === undefined && (this.profile.pkce ?? "required") === "required") return bad("invalid_request", "Missing required parameter: code_challenge");
    if (challenge !== undefined) {
      if (method !== "S256") return bad("invalid_request", "Invalid code_challenge_method: only S256 is accepted");
      if (!/^[A-Za-z0-9\-_]{43}$/.test(challenge)) return bad("invalid_request", "Invalid code_challenge");
    }
    return { kind: "ok", pending: { client, redirectUri, state, scopes, challenge, query: q, path } };
  }

  private pickUser(hint: string | undefined): OAuthUser | undefined {
    if (hint) return this.user(hint);
    return this.users.values().next().value;
  }

  private authorizePage(req: FakeRequest): FakeResponse {
    const check = this.checkAuthorization(req.path, req.query);
    if (check.kind === "page") return { status: check.status, body: errorPage(this.profile.provider, check.error, check.description) };
    if (check.kind === "redirect") return { status: 302, headers: { Location: check.location } };
    const id = token(18);
    this.pending.set(id, check.pending);
    const hint = req.query.get("login_hint") ?? undefined;
    const chosen = this.pickUser(hint);
    return { status: 200, headers: { "Cache-Control": "no-store" }, body: consentPage(this.profile, id, check.pending, this.listUsers(), chosen) };
  }

  private consentDecision(req: FakeRequest): FakeResponse {
    const form = req.form();
    const pending = this.pending.get(form.get("request_id") ?? "");
    if (!pending) return { status: 400, body: errorPage(this.profile.provider, "invalid_request", "This consent page has expired or was already used.") };
    this.pending.delete(form.get("request_id")!);
    const user = this.user(form.get("user") ?? "");
    if (!user) return { status: 400, body: errorPage(this.profile.provider, "invalid_request", "Choose an account.") };
    const decision = form.get("decision") === "allow" ? "allow" : "deny";
    const decided = this.decide(pending, decision, user, form.getAll("scope"));
    if (typeof decided !== "string") return { status: 400, body: errorPage(this.profile.provider, decided.error, decided.description) };
    return { status: 302, headers: { Location: decided } };
  }

  /** The URL the browser is redirected to, or the error page shown instead. */
  private decide(p: PendingAuthorization, decision: "allow" | "deny", user: OAuthUser, chosenScopes: string[]): string | { error: string; description: string } {
    const to = new URL(p.redirectUri);
    const scopes = p.scopes.filter((s) => chosenScopes.includes(s));
    const refusal = decision === "allow" ? this.profile.refuseConsent?.(user, { path: p.path, clientId: p.client.id, scopes }) : undefined;
    if (refusal?.as === "page") return refusal;
    if (refusal) {
      to.searchParams.set("error", refusal.error);
      to.searchParams.set("error_description", refusal.description);
    } else if (decision === "deny" || (p.scopes.length > 0 && scopes.length === 0)) {
      to.searchParams.set("error", "access_denied");
      if (this.profile.deniedDescription) to.searchParams.set("error_description", this.profile.deniedDescription);
    } else {
      const pair = `${user.id} ${p.client.id}`;
      const offline = this.profile.issuesRefreshToken?.(p.query, !this.consented.has(pair), scopes) ?? true;
      this.consented.add(pair);
      const code = `${this.profile.tokenPrefix?.code ?? ""}${token(32)}`;
      this.codes.set(code, {
        clientId: p.client.id,
        redirectUri: p.redirectUri,
        scopes,
        userId: user.id,
        challenge: p.challenge,
        offline,
        expiresAt: this.now() + (this.profile.codeTtlSeconds ?? 600) * 1000,
        authorization: { path: p.path, query: p.query },
      });
      to.searchParams.set("code", code);
      for (const [k, v] of Object.entries(this.profile.redirectExtras?.({ scopes }) ?? {})) to.searchParams.set(k, v);
    }
    if (p.state !== null) to.searchParams.set("state", p.state);
    return to.toString();
  }

  // --- token endpoint -------------------------------------------------------------------------------------------

  private failure(kind: TokenFailureKind, description?: string, wording?: Omit<TokenFailure, "kind">): FakeResponse {
    const f: TokenFailure = { kind, ...DEFAULT_ERRORS[kind], ...(wording ?? this.profile.tokenErrors?.[kind]) };
    if (description !== undefined && !wording && !this.profile.tokenErrors?.[kind]?.description) f.description = description;
    const headers: Record<string, string> = { "Cache-Control": "no-store", Pragma: "no-cache" };
    if (f.status === 401) headers["WWW-Authenticate"] = `Basic realm="${this.profile.provider}"`;
    return { status: f.status, headers, body: this.profile.tokenErrorBody?.(f) ?? { error: f.error, error_description: f.description } };
  }

  /** Client authentication of the token and revocation endpoints: the client, or the failure to answer. */
  private authenticateClient(req: FakeRequest, form: URLSearchParams, allowed: ClientAuthMethod[]): OAuthClientRegistration | FakeResponse {
    const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? "");
    let id: string | null;
    let secret: string | null;
    let method: ClientAuthMethod | "none";
    if (basic) {
      // RFC 6749 2.3.1: id and secret are form-encoded before being joined and base64-encoded.
      const decoded = Buffer.from(basic[1], "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      const dec = (s: string) => safeDecode(s.replace(/\+/g, " "));
      id = dec(colon < 0 ? decoded : decoded.slice(0, colon));
      secret = colon < 0 ? "" : dec(decoded.slice(colon + 1));
      method = "client_secret_basic";
      const bodyId = form.get("client_id");
      if (bodyId !== null && bodyId !== id) return this.failure("client_unknown", "client_id does not match the authenticated client.");
    } else {
      id = form.get("client_id");
      secret = form.get("client_secret");
      method = secret === null ? "none" : "client_secret_post";
    }
    if (method === "none" || !allowed.includes(method)) {
      if (id === null) return this.failure("invalid_request", "Missing required parameter: client_id");
      return this.failure("client_auth_method", method === "none" ? "Client authentication is required." : `Client authentication by ${method} is not accepted.`);
    }
    const client = this.profile.clients.find((c) => c.id === id);
    if (!client) return this.failure("client_unknown");
    if (client.secret !== secret) return this.failure("client_secret_wrong");
    return client;
  }

  private token(req: FakeRequest): FakeResponse {
    const refused = this.profile.checkEndpoint?.(req.path, "token");
    if (refused) return this.failure("invalid_request", undefined, refused);
    if (!(req.headers["content-type"] ?? "").toLowerCase().startsWith("application/x-www-form-urlencoded")) {
      return this.failure("invalid_request", "The token request must be application/x-www-form-urlencoded.");
    }
    const form = req.form();
    const client = this.authenticateClient(req, form, this.profile.clientAuthMethods ?? ["client_secret_basic", "client_secret_post"]);
    if (!("redirectUris" in client)) return client;
    const grantType = form.get("grant_type");
    if (grantType === null) return this.failure("invalid_request", "Missing required parameter: grant_type");
    if (grantType === "authorization_code") return this.redeemCode(client, form);
    if (grantType === "refresh_token") return this.refresh(client, form);
    return this.failure("unsupported_grant_type", `Invalid grant_type: ${grantType}`);
  }

  private redeemCode(client: OAuthClientRegistration, form: URLSearchParams): FakeResponse {
    const value = form.get("code");
    if (value === null) return this.failure("invalid_request", "Missing required parameter: code");
    const code = this.codes.get(value);
    if (!code) return this.failure("code_unknown");
    if (code.clientId !== client.id) return this.failure("code_client_mismatch");
    if (code.grantId !== undefined) {
      // RFC 6749 4.1.2: a code used twice revokes what was issued from it, since one of the two users stole it.
      const grant = this.grantsById.get(code.grantId);
      if (grant) this.revoke_(grant, "grant");
      return this.failure("code_reused");
    }
    if (code.expiresAt <= this.now()) return this.failure("code_expired");
    if (form.get("redirect_uri") !== code.redirectUri) return this.failure("redirect_mismatch");
    if (code.challenge !== undefined) {
      const verifier = form.get("code_verifier");
      if (verifier === null) return this.failure("pkce_missing");
      if (!VERIFIER.test(verifier) || s256(verifier) !== code.challenge) return this.failure("pkce_mismatch");
    }
    const grant: Grant = {
      id: `grant-${token(9)}`,
      clientId: client.id,
      userId: code.userId,
      scopes: code.scopes,
      createdAt: this.now(),
      authorization: code.authorization,
    };
    this.grantsById.set(grant.id, grant);
    code.grantId = grant.id;
    const refresh = code.offline ? this.newRefreshToken(grant) : undefined;
    return this.tokenAnswer(grant, refresh, "authorization_code");
  }

  private refresh(client: OAuthClientRegistration, form: URLSearchParams): FakeResponse {
    const value = form.get("refresh_token");
    if (value === null) return this.failure("invalid_request", "Missing required parameter: refresh_token");
    const rt = this.refreshTokens.get(value);
    const grant = rt && this.grantsById.get(rt.grantId);
    if (!rt || !grant || grant.clientId !== client.id) return this.failure("refresh_unknown");
    if (grant.revokedAt !== undefined) return this.failure("refresh_revoked");
    if (rt.validUntil !== undefined && rt.validUntil <= this.now()) return this.failure("refresh_rotated");
    const asked = form.get("scope");
    let scopes = grant.scopes;
    if (asked !== null) {
      scopes = [...new Set(asked.split(" ").filter(Boolean).map(this.profile.scope?.normalize ?? ((x: string) => x)))];
      if (scopes.some((s) => !grant.scopes.includes(s))) return this.failure("invalid_scope", "The requested scope exceeds the grant.");
    }
    const rotation = this.profile.rotation ?? { rotate: false };
    let next: string | undefined;
    if (rotation.rotate) {
      rt.validUntil = Math.min(rt.validUntil ?? Infinity, this.now() + rotation.oldValidForSeconds * 1000);
      next = this.newRefreshToken(grant);
    }
    return this.tokenAnswer(grant, next, "refresh_token", scopes);
  }

  private newRefreshToken(grant: Grant): string {
    const value = `${this.profile.tokenPrefix?.refresh ?? ""}${token(48)}`;
    this.refreshTokens.set(value, { grantId: grant.id });
    return value;
  }

  private tokenAnswer(grant: Grant, refreshToken: string | undefined, grantType: "authorization_code" | "refresh_token", scopes = grant.scopes): FakeResponse {
    const ttl = this.profile.accessTokenTtlSeconds ?? 3600;
    const access = `${this.profile.tokenPrefix?.access ?? ""}${token(48)}`;
    this.accessTokens.set(access, { grantId: grant.id, expiresAt: this.now() + ttl * 1000 });
    const body: Record<string, unknown> = { access_token: access, token_type: this.profile.tokenType ?? "Bearer", expires_in: ttl };
    if (refreshToken !== undefined) body.refresh_token = refreshToken;
    body.scope = scopes.join(" ");
    Object.assign(body, this.profile.tokenExtras?.(this.view(grant), grantType));
    // RFC 6749 5.1: token answers must not be cached.
    return { status: 200, headers: { "Cache-Control": "no-store", Pragma: "no-cache" }, body };
  }

  // --- revocation endpoint --------------------------------------------------------------------------------------

  private revoke(req: FakeRequest): FakeResponse {
    const form = req.form();
    const spec = this.profile.revoke ?? { clientAuth: "none" };
    if (spec.clientAuth === "basic") {
      const client = this.authenticateClient(req, form, ["client_secret_basic"]);
      if (!("redirectUris" in client)) return client;
    }
    // Google documents the token in the query (google-auth-library sends it there) and accepts it in the body too.
    const value = req.query.get("token") ?? form.get("token");
    if (value === null) return this.failure("invalid_request", "Missing required parameter: token");
    const grantId = this.accessTokens.get(value)?.grantId ?? this.refreshTokens.get(value)?.grantId;
    const grant = grantId ? this.grantsById.get(grantId) : undefined;
    if (!grant || grant.revokedAt !== undefined) {
      if (spec.unknownToken === "error") return this.failure("revoke_unknown");
    } else {
      this.revoke_(grant);
    }
    return spec.success ?? { status: 200, body: {} };
  }

  private revoke_(grant: Grant, scope = this.profile.revokeScope ?? "user-client"): void {
    const at = this.now();
    for (const g of this.grantsById.values()) {
      const hit = scope === "grant" ? g === grant : g.userId === grant.userId && g.clientId === grant.clientId;
      if (hit && g.revokedAt === undefined) g.revokedAt = at;
    }
    // The next consent counts as a first one again, as after removing an app's access at Google.
    if (scope === "user-client") this.consented.delete(`${grant.userId} ${grant.clientId}`);
  }

  private view(g: Grant): GrantView {
    const live = g.revokedAt === undefined;
    const now = this.now();
    return {
      id: g.id,
      clientId: g.clientId,
      user: this.users.get(g.userId)!,
      scopes: g.scopes,
      createdAt: g.createdAt,
      revoked: !live,
      liveAccessTokens: live ? [...this.accessTokens].filter(([, t]) => t.grantId === g.id && t.expiresAt > now).map(([k]) => k) : [],
      liveRefreshTokens: live ? [...this.refreshTokens].filter(([, t]) => t.grantId === g.id && (t.validUntil ?? Infinity) > now).map(([k]) => k) : [],
      authorization: g.authorization,
    };
  }

  private bearerError(reason: BearerFailureReason): FakeResponse {
    if (this.profile.bearerError) return this.profile.bearerError(reason);
    // RFC 6750 3.1: a request without credentials gets the challenge without an error code.
    const challenge = reason === "missing" ? `Bearer realm="${this.profile.provider}"` : `Bearer realm="${this.profile.provider}", error="invalid_token"`;
    return { status: 401, headers: { "WWW-Authenticate": challenge }, body: { error: "invalid_token", error_description: `The access token is ${reason}.` } };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------------------------

/** BASE64URL(SHA256(verifier)), RFC 7636 4.2. */
function s256(verifier: string): string {
  return createHash("sha256").update(verifier).digest("base64url");
}

/** A PKCE pair as a client makes it (RFC 7636 4.1), for tests that drive the endpoints by hand. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: s256(verifier) };
}

function token(bytes: number): string {
  return randomBytes(bytes).toString("base64url");
}

function randomDigits(n: number): string {
  let s = String(1 + (randomBytes(1)[0] % 9));
  while (s.length < n) s += String(randomBytes(1)[0] % 10);
  return s;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function errorPage(provider: string, error: string, description: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Error 400: ${escapeHtml(error)}</title></head>
<body><main><h1>${escapeHtml(provider)}: authorization error</h1><p id="error">Error: ${escapeHtml(error)}</p><p id="error-description">${escapeHtml(description)}</p></main></body></html>`;
}

function consentPage(profile: OAuthProfile, requestId: string, p: PendingAuthorization, users: OAuthUser[], chosen: OAuthUser | undefined): string {
  const options = users
    .map((u) => `<option value="${escapeHtml(u.id)}"${u === chosen ? " selected" : ""}>${escapeHtml(u.name)} &lt;${escapeHtml(u.email)}&gt;</option>`)
    .join("");
  const scopes = p.scopes
    .map((s, i) => `<li><input type="checkbox" id="scope-${i}" name="scope" value="${escapeHtml(s)}" checked><label for="scope-${i}">${escapeHtml(s)}</label></li>`)
    .join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in with ${escapeHtml(profile.provider)}</title></head>
<body><main>
<h1>${escapeHtml(p.client.id)} wants to access your ${escapeHtml(profile.provider)} account</h1>
<form method="post" action="${escapeHtml(p.path)}">
<input type="hidden" name="request_id" value="${escapeHtml(requestId)}">
<label for="user">Account</label> <select id="user" name="user">${options}</select>
<ul>${scopes}</ul>
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
</main></body></html>`;
}
