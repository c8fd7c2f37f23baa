// A local Microsoft identity platform (v2.0) and Microsoft Graph v1.0 for tests: OAuth on the shared core (oauth.ts) worded as Entra ID words it, Graph from microsoftGraph.ts, one control API.
/**
 * const ms = await startFakeMicrosoft({ redirectUris: [`${appUrl}/oauth/microsoft/callback`] });
 * ms.env()        MICROSOFT_LOGIN_URL, MICROSOFT_GRAPH_URL, MICROSOFT_CLIENT_ID, MICROSOFT_CLIENT_SECRET, MICROSOFT_TENANT
 *
 * Identity platform at loginUrl (learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow):
 *   GET/POST /{tenant}/oauth2/v2.0/authorize   consent page (oauth.ts), or approve(url) without a browser
 *   POST     /{tenant}/oauth2/v2.0/token       authorization_code (+PKCE) and refresh_token grants
 *   GET      /{tenant}/v2.0/.well-known/openid-configuration, /{tenant}/discovery/v2.0/keys, /common/discovery/instance
 *   {tenant}: common, organizations, consumers, or a tenant id of an added user; anything else is AADSTS90002
 *   (AADSTS900023 when it is not even a GUID or a domain name).
 *   Scopes: space-separated, short (`Calendars.ReadWrite`) or full (`https://graph.microsoft.com/Calendars.ReadWrite`),
 *   case-insensitive; `offline_access` among the granted scopes is what yields a refresh token. Every refresh
 *   answers a new refresh token; the old one keeps working (Microsoft does not end it on rotation).
 *   Errors: `{error, error_description: "AADSTSnnnn: …\r\nTrace ID: …\r\nCorrelation ID: …\r\nTimestamp: …",
 *   error_codes: [nnnn], timestamp, trace_id, correlation_id, error_uri}` (reference-error-codes).
 *
 * Modelled sign-in rules (documented behaviour, simplified):
 *   - a personal account (addUser({ personal: true })) cannot sign in at `organizations` or a tenant id: error
 *     page AADSTS500200; a work account of another tenant at a tenant id: error page AADSTS50020;
 *   - a work account at `consumers`: error page AADSTS50020;
 *   - admin consent: a user added with `requiresAdminConsent` stands for an organisation where users may not
 *     consent to apps. Real Entra shows "Need admin approval"; its "Return to the application without granting
 *     consent" is modelled as Allow, which redirects with `error=consent_required` and
 *     `error_description=AADSTS65001: The user or administrator has not consented …` (the answer Entra gives
 *     when it cannot ask for consent). Deny redirects with `error=access_denied` and AADSTS65004.
 *
 * Graph at graphUrl: see microsoftGraph.ts. A token's user and scopes come from validateBearer; 401s carry
 * InvalidAuthenticationToken with Graph's messages and a WWW-Authenticate challenge.
 *
 * Control API: addUser, addCalendar, addEvent, writtenEvents/deletedEvents/invitations (what the service did),
 * approve, expireAccessToken, expireRefreshToken, revoke, fault/throttle/unavailable per route (ROUTES), requests,
 * calls, close. `login` and `graph` are the two FakeHttpServers, `oauth` the core, `state` the Graph state.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { FakeHttpServer, OAuthServer, type Fault, type FakeRequest, type FakeResponse, type GrantView, type LoggedRequest, type OAuthUser, type TokenFailure, type TokenFailureKind } from "./oauth.js";
import { graphError, GraphState, type GraphCalendar, type GraphReply, type GraphUser, type OnlineMeetingProvider, type ShowAs, type StoredEvent } from "./microsoftGraph.js";
import { graphDateTime } from "./msTimeZones.js";

/** The tenant id Microsoft uses for personal (MSA) accounts. */
export const CONSUMER_TENANT = "9188040d-6c67-4c5b-b112-36a304b66dad";
/** Microsoft Graph's application id, the audience of its tokens and the client_id of its 401 challenge. */
const GRAPH_APP_ID = "00000003-0000-0000-c000-000000000000";
const GRAPH_RESOURCE = "https://graph.microsoft.com/";

/** Route keys for fault(), calls() and the request log. */
const ROUTES = {
  authorize: "GET /:tenant/oauth2/v2.0/authorize",
  consent: "POST /:tenant/oauth2/v2.0/authorize",
  token: "POST /:tenant/oauth2/v2.0/token",
  discovery: "GET /:tenant/v2.0/.well-known/openid-configuration",
  me: "GET /v1.0/me",
  calendars: "GET /v1.0/me/calendars",
  calendar: "GET /v1.0/me/calendars/:calendarId",
  calendarView: "GET /v1.0/me/calendars/:calendarId/calendarView",
  createEvent: "POST /v1.0/me/calendars/:calendarId/events",
  getEvent: "GET /v1.0/me/events/:eventId",
  updateEvent: "PATCH /v1.0/me/events/:eventId",
  deleteEvent: "DELETE /v1.0/me/events/:eventId",
} as const;
type MicrosoftRoute = keyof typeof ROUTES;
const LOGIN_ROUTES: readonly MicrosoftRoute[] = ["authorize", "consent", "token", "discovery"];

/** Scopes the fake knows, in Microsoft's spelling; requests may use any case and the Graph resource prefix. */
const KNOWN_SCOPES = [
  "openid", "profile", "email", "offline_access",
  "User.Read", "User.ReadBasic.All", "Calendars.Read", "Calendars.ReadWrite", "Calendars.Read.Shared", "Calendars.ReadWrite.Shared", "OnlineMeetings.ReadWrite",
];

export interface FakeMicrosoftOptions {
  /** Serve https (MSAL and the Graph SDK require it); without it both servers speak plain http. */
  tls?: { key: string; cert: string };
  clientId?: string;
  clientSecret?: string;
  /** MICROSOFT_TENANT of env(): `common` (default), `organizations`, `consumers` or a tenant id. */
  tenant?: string;
  /** Registered redirect URIs, compared byte for byte (more with addRedirectUri). */
  redirectUris?: string[];
  appName?: string;
  accessTokenTtlSeconds?: number;
}

interface MicrosoftUserSeed {
  /** A tenant id (GUID); a new one when absent. Ignored for personal accounts. */
  tenant?: string;
  /** A personal Microsoft account (outlook.com), tenant CONSUMER_TENANT. */
  personal?: boolean;
  displayName?: string;
  /** Null: the account has no mail address in the directory (Graph's `mail` is null), only a UPN. */
  mail?: string | null;
  userPrincipalName?: string;
  requiresAdminConsent?: boolean;
  /** What the default calendar offers as online meetings; personal accounts default to none. */
  onlineMeetingProviders?: OnlineMeetingProvider[];
}

export interface MicrosoftUser extends GraphUser {
  personal: boolean;
  defaultCalendarId: string;
}

interface EventSeed {
  subject?: string;
  /** An instant (ISO with offset, or Date); a date `YYYY-MM-DD` for an all-day event. */
  start: string | Date;
  end: string | Date;
  showAs?: ShowAs;
  isCancelled?: boolean;
  isAllDay?: boolean;
  /** The zone the event was made in (its originalStartTimeZone, and the wall clock a daily series keeps). */
  timeZone?: string;
  /** A daily series: every `interval` days, `count` times or until a date (inclusive), else without end. */
  daily?: { interval?: number; count?: number; until?: string };
  iCalUId?: string;
  attendees?: string[];
}

export interface FakeMicrosoft {
  loginUrl: string;
  graphUrl: string;
  clientId: string;
  clientSecret: string;
  tenant: string;
  env(): Record<string, string>;
  login: FakeHttpServer;
  graph: FakeHttpServer;
  oauth: OAuthServer;
  state: GraphState;
  addRedirectUri(uri: string): void;
  addUser(seed?: MicrosoftUserSeed): MicrosoftUser;
  addCalendar(userIdOrAddress: string, seed: { name: string; canEdit?: boolean; owner?: { name: string; address: string }; onlineMeetingProviders?: OnlineMeetingProvider[] }): GraphCalendar;
  addEvent(calendarId: string, seed: EventSeed): StoredEvent;
  /** Live events that a Graph client (the service) created, oldest first. */
  writtenEvents(): StoredEvent[];
  deletedEvents(): StoredEvent[];
  /** Invitations, updates and cancellations Exchange would have mailed to attendees. */
  invitations(): GraphState["invitations"];
  /** The consent step without a browser (see OAuthServer.approve). */
  approve(authorizationUrl: string, opts?: { user?: string; deny?: boolean; scopes?: string[] }): string;
  expireAccessToken(token?: string): number;
  expireRefreshToken(token?: string): number;
  /** Revokes every grant of a user (id or address), or the grant of a token: the next refresh is AADSTS50173. */
  revoke(userOrToken: string): boolean;
  fault(route: MicrosoftRoute, fault: Fault): void;
  /** 429 with Retry-After and Graph's throttling body (Outlook: ApplicationThrottled). */
  throttle(route: MicrosoftRoute, opts?: { retryAfterSeconds?: number; times?: number; code?: string; message?: string }): void;
  /** 503 or 504 with Graph's error body. */
  unavailable(route: MicrosoftRoute, opts?: { status?: 503 | 504; times?: number; retryAfterSeconds?: number }): void;
  clearFaults(): void;
  /** Both servers' request logs, in arrival order. */
  requests(): LoggedRequest[];
  calls(route?: MicrosoftRoute): number;
  close(): Promise<void>;
}

/** AADSTS code and wording per failure, from reference-error-codes and Entra's answers as reported. */
const AAD_ERRORS: Partial<Record<TokenFailureKind, Omit<TokenFailure, "kind">>> = {
  client_unknown: { error: "unauthorized_client", status: 400, description: "AADSTS700016: Application with identifier was not found in the directory. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You might have sent your authentication request to the wrong tenant." },
  client_secret_wrong: { error: "invalid_client", status: 401, description: "AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app." },
  client_auth_method: { error: "invalid_client", status: 401, description: "AADSTS7000218: The request body must contain the following parameter: 'client_assertion' or 'client_secret'." },
  unsupported_grant_type: { error: "unsupported_grant_type", status: 400, description: "AADSTS70003: The app requested an unsupported grant type." },
  code_unknown: { error: "invalid_grant", status: 400, description: "AADSTS9002313: Invalid request. Request is malformed or invalid." },
  code_expired: { error: "invalid_grant", status: 400, description: "AADSTS70008: The provided authorization code or refresh token has expired due to inactivity. Send a new interactive authorization request for this user and resource." },
  code_reused: { error: "invalid_grant", status: 400, description: "AADSTS54005: OAuth2 Authorization code was already redeemed, please retry with a new valid code or use an existing refresh token." },
  code_client_mismatch: { error: "invalid_grant", status: 400, description: "AADSTS70000: Provided grant is invalid or malformed." },
  redirect_mismatch: { error: "invalid_grant", status: 400, description: "AADSTS50011: The redirect URI specified in the request does not match the redirect URI used in the authorization request." },
  // AADSTS50148 when the verifier is missing (django-allauth #2916 sent none), AADSTS501481 when it does not match.
  pkce_missing: { error: "invalid_grant", status: 400, description: "AADSTS50148: The code_verifier does not match the code_challenge supplied in the authorization request for PKCE." },
  pkce_mismatch: { error: "invalid_grant", status: 400, description: "AADSTS501481: The Code_Verifier does not match the code_challenge supplied in the authorization request." },
  refresh_unknown: { error: "invalid_grant", status: 400, description: "AADSTS9002313: Invalid request. Request is malformed or invalid." },
  refresh_revoked: { error: "invalid_grant", status: 400, description: "AADSTS50173: The provided grant has expired due to it being revoked, a fresh auth token is needed. The user might have changed or reset their password." },
  // Microsoft keeps a rotated refresh token valid, so the only way one ends here is expireRefreshToken().
  refresh_rotated: { error: "invalid_grant", status: 400, description: "AADSTS70008: The provided authorization code or refresh token has expired due to inactivity. Send a new interactive authorization request for this user and resource." },
  invalid_scope: { error: "invalid_grant", status: 400, description: "AADSTS65001: The user or administrator has not consented to use the application. Send an interactive authorization request for this user and resource." },
};

/** The identity platform's error body around a failure whose description starts "AADSTSnnnn: ". */
function aadErrorBody(error: string, description: string): Record<string, unknown> {
  const code = /^AADSTS(\d+):/.exec(description)?.[1];
  const traceId = randomUUID();
  const correlationId = randomUUID();
  const timestamp = new Date().toISOString().replace("T", " ").slice(0, 19) + "Z";
  return {
    error,
    error_description: `${description}\r\nTrace ID: ${traceId}\r\nCorrelation ID: ${correlationId}\r\nTimestamp: ${timestamp}`,
    error_codes: code ? [Number(code)] : [],
    timestamp,
    trace_id: traceId,
    correlation_id: correlationId,
    ...(code ? { error_uri: `https://login.microsoftonline.com/error?code=${code}` } : {}),
  };
}

/** The core's own wording for malformed requests, in Entra's: a missing parameter is AADSTS900144, anything else AADSTS9002313. */
function aadDescription(description: string): string {
  if (/^AADSTS\d+:/.test(description)) return description;
  const missing = /^Missing required parameter: (\S+)$/.exec(description);
  if (missing) return `AADSTS900144: The request body must contain the following parameter: '${missing[1]}'.`;
  return `AADSTS9002313: Invalid request. Request is malformed or invalid. (${description})`;
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function canonicalScope(raw: string): string {
  const short = raw.toLowerCase().startsWith(GRAPH_RESOURCE) ? raw.slice(GRAPH_RESOURCE.length) : raw;
  return KNOWN_SCOPES.find((k) => k.toLowerCase() === short.toLowerCase()) ?? raw;
}

function base64urlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

export async function startFakeMicrosoft(opts: FakeMicrosoftOptions = {}): Promise<FakeMicrosoft> {
  const clientId = opts.clientId ?? randomUUID();
  const clientSecret = opts.clientSecret ?? `fake~${randomBytes(24).toString("base64url")}`;
  const tenant = opts.tenant ?? "common";
  const appName = opts.appName ?? "Scheduling service (fake registration)";
  const client = { id: clientId, secret: clientSecret, redirectUris: [...(opts.redirectUris ?? [])] };
  const users = new Map<string, MicrosoftUser>();
  const tenants = new Set<string>(GUID.test(tenant) ? [tenant.toLowerCase()] : []);

  const state = new GraphState(() => graph.url);
  const login = await FakeHttpServer.start({ tls: opts.tls });
  const graph = await FakeHttpServer.start({
    tls: opts.tls,
    // Paths outside ROUTES (other casings such as /calendarview, the default calendar's paths) are still served.
    notFound: (req) => graphAnswer(req),
  });

  const tenantProblem = (path: string): Omit<TokenFailure, "kind"> | undefined => {
    const segment = decodeURIComponent(path.split("/")[1] ?? "");
    const t = segment.toLowerCase();
    if (t === "common" || t === "organizations" || t === "consumers" || tenants.has(t)) return undefined;
    if (!GUID.test(t) && !t.includes(".")) {
      return { error: "invalid_request", status: 400, description: `AADSTS900023: Specified tenant identifier '${segment}' is neither a valid DNS name, nor a valid external domain.` };
    }
    return {
      error: "invalid_request",
      status: 400,
      description: `AADSTS90002: Tenant '${segment}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud. Check with your subscription administrator, this may happen if there are no active subscriptions for the tenant.`,
    };
  };

  const oauth = new OAuthServer(login, {
    provider: "Microsoft",
    paths: { authorize: "/:tenant/oauth2/v2.0/authorize", token: "/:tenant/oauth2/v2.0/token" },
    clients: [client],
    // Confidential web apps may use PKCE; only public clients and SPAs must. The service always sends it.
    pkce: "optional",
    requireState: false,
    scope: { param: "required", known: KNOWN_SCOPES, normalize: canonicalScope },
    issuesRefreshToken: (_query, _first, granted) => granted.includes("offline_access"),
    // "Refresh tokens replace themselves with a fresh token upon every use"; the old one lives out its 90 days.
    rotation: { rotate: true, oldValidForSeconds: 90 * 86_400 },
    accessTokenTtlSeconds: opts.accessTokenTtlSeconds ?? 3599,
    tokenPrefix: { access: "EwB", refresh: "0.AR", code: "0.AQ" },
    tokenErrors: AAD_ERRORS,
    tokenErrorBody: (f) => aadErrorBody(f.error, aadDescription(f.description)),
    checkEndpoint: tenantProblem,
    deniedDescription: "AADSTS65004: User declined to consent to access the app.",
    refuseConsent: (oauthUser, request) => {
      const user = users.get(oauthUser.id);
      if (!user) return undefined;
      const t = decodeURIComponent(request.path.split("/")[1] ?? "").toLowerCase();
      const address = user.mail ?? user.userPrincipalName;
      if (user.personal && t !== "common" && t !== "consumers") {
        return { as: "page", error: "invalid_request", description: `AADSTS500200: User account '${address}' is a personal Microsoft account. Personal Microsoft accounts are not supported for this application unless explicitly invited to an organization.` };
      }
      if (!user.personal && (t === "consumers" || (GUID.test(t) && t !== user.tenantId))) {
        return {
          as: "page",
          error: "invalid_request",
          description: `AADSTS50020: User account '${address}' from identity provider 'https://sts.windows.net/${user.tenantId}/' does not exist in tenant '${t}' and cannot access the application '${clientId}'(${appName}) in that tenant.`,
        };
      }
      if (user.requiresAdminConsent) {
        return { as: "redirect", error: "consent_required", description: `AADSTS65001: The user or administrator has not consented to use the application with ID '${clientId}' named '${appName}'. Send an interactive authorization request for this user and resource.` };
      }
      return undefined;
    },
    tokenExtras: (grant, grantType) => tokenExtras(grant, grantType),
  });

  function tokenExtras(grant: GrantView, grantType: "authorization_code" | "refresh_token"): Record<string, unknown> {
    const user = users.get(grant.user.id);
    const tid = user?.tenantId ?? CONSUMER_TENANT;
    const now = Math.floor(Date.now() / 1000);
    const ttl = opts.accessTokenTtlSeconds ?? 3599;
    const extras: Record<string, unknown> = {
      // The answer names the resource's scopes and the OpenID ones; offline_access is what asked for the refresh token, not a scope of the token.
      scope: grant.scopes.filter((s) => s !== "offline_access").join(" "),
      ext_expires_in: ttl,
      // MSAL asks for client_info=1 and keys its cache by it: base64url {"uid": object id, "utid": tenant id}.
      client_info: base64urlJson({ uid: grant.user.id, utid: tid }),
    };
    if (grant.scopes.includes("openid")) {
      const nonce = grantType === "authorization_code" ? grant.authorization.query.get("nonce") : null;
      const claims: Record<string, unknown> = {
        aud: clientId,
        iss: `${login.url}/${tid}/v2.0`,
        iat: now,
        nbf: now,
        exp: now + 3600,
        oid: grant.user.id,
        // A pairwise subject: stable per user and app, different between apps.
        sub: createHash("sha256").update(`${grant.user.id}|${clientId}`).digest("base64url").slice(0, 43),
        tid,
        ver: "2.0",
        ...(nonce ? { nonce } : {}),
        ...(grant.scopes.includes("profile") ? { name: grant.user.name, preferred_username: user?.userPrincipalName ?? grant.user.email } : {}),
        ...(grant.scopes.includes("email") && user?.mail ? { email: user.mail } : {}),
      };
      // Signed tokens need keys nobody here checks; the signature is filler, as the keys document is empty.
      extras.id_token = `${base64urlJson({ typ: "JWT", alg: "RS256", kid: "fake" })}.${base64urlJson(claims)}.${randomBytes(32).toString("base64url")}`;
    }
    return extras;
  }

  // Discovery documents (OpenID Connect Discovery 1.0, as login.microsoftonline.com serves them).
  const discovery = (req: FakeRequest): FakeResponse => {
    const problem = tenantProblem(req.path);
    if (problem) return { status: 400, body: aadErrorBody("invalid_tenant", problem.description) };
    const segment = req.params.tenant;
    const t = segment.toLowerCase();
    const issuerTenant = GUID.test(t) ? t : t === "consumers" ? CONSUMER_TENANT : "{tenantid}";
    const base = `${login.url}/${segment}`;
    return {
      status: 200,
      body: {
        token_endpoint: `${base}/oauth2/v2.0/token`,
        token_endpoint_auth_methods_supported: ["client_secret_post", "private_key_jwt", "client_secret_basic"],
        jwks_uri: `${base}/discovery/v2.0/keys`,
        response_modes_supported: ["query", "fragment", "form_post"],
        subject_types_supported: ["pairwise"],
        id_token_signing_alg_values_supported: ["RS256"],
        response_types_supported: ["code", "id_token", "code id_token", "id_token token"],
        scopes_supported: ["openid", "profile", "email", "offline_access"],
        issuer: `${login.url}/${issuerTenant}/v2.0`,
        request_uri_parameter_supported: false,
        userinfo_endpoint: `${graph.url}/oidc/userinfo`,
        authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
        device_authorization_endpoint: `${base}/oauth2/v2.0/devicecode`,
        http_logout_supported: true,
        frontchannel_logout_supported: true,
        end_session_endpoint: `${base}/oauth2/v2.0/logout`,
        claims_supported: ["sub", "iss", "aud", "exp", "iat", "nonce", "name", "preferred_username", "email", "oid", "tid", "ver"],
        tenant_region_scope: null,
        cloud_instance_name: "microsoftonline.com",
        cloud_graph_host_name: "graph.windows.net",
        msgraph_host: new URL(graph.url).host,
        rbac_url: "https://pas.windows.net",
      },
    };
  };
  login.add(
    { method: "GET", path: "/:tenant/v2.0/.well-known/openid-configuration", handle: discovery },
    { method: "GET", path: "/:tenant/discovery/v2.0/keys", handle: () => ({ status: 200, body: { keys: [] } }) },
    {
      // Instance discovery, which MSAL asks before trusting an authority host it does not know.
      method: "GET",
      path: "/common/discovery/instance",
      handle: (req) => {
        const host = new URL(login.url).host;
        const authorization = req.query.get("authorization_endpoint") ?? `${login.url}/common/oauth2/v2.0/authorize`;
        return {
          status: 200,
          body: {
            tenant_discovery_endpoint: authorization.replace(/oauth2\/v2\.0\/authorize$/, "v2.0/.well-known/openid-configuration"),
            "api-version": "1.1",
            metadata: [{ preferred_network: host, preferred_cache: host, aliases: [host] }],
          },
        };
      },
    },
  );

  // Graph: every route authenticates, then GraphState answers.
  function graphAnswer(req: FakeRequest): FakeResponse {
    const check = oauth.validateBearer(req);
    if (!check.ok) {
      const messages = {
        missing: "Access token is empty.",
        invalid: "CompactToken parsing failed with error code: 80049217",
        expired: "Lifetime validation failed, the token is expired.",
        // What Graph says when continuous access evaluation learns of a revocation before the token expires.
        revoked: "Continuous access evaluation resulted in challenge with result: InteractionRequired and code: TokensRevoked",
      } as const;
      return toFake(graphError(401, "InvalidAuthenticationToken", messages[check.reason], undefined, {
        "WWW-Authenticate": `Bearer realm="", authorization_uri="${login.url}/common/oauth2/authorize", client_id="${GRAPH_APP_ID}"`,
      }));
    }
    const query = req.query.toString();
    const url = new URL(`${graph.url}${req.path}${query ? `?${query}` : ""}`);
    return toFake(state.handle({ method: req.method, url, headers: req.headers, body: req.body }, { userId: check.user.id, scopes: check.scopes }));
  }
  for (const [name, key] of Object.entries(ROUTES)) {
    if (LOGIN_ROUTES.includes(name as MicrosoftRoute)) continue;
    const [method, path] = key.split(" ");
    graph.add({ method, path, handle: graphAnswer });
  }

  const server = (route: MicrosoftRoute): FakeHttpServer => (LOGIN_ROUTES.includes(route) ? login : graph);
  const findUser = (idOrAddress: string): MicrosoftUser | undefined =>
    users.get(idOrAddress) ??
    [...users.values()].find((u) => [u.mail, u.userPrincipalName].some((a) => a?.toLowerCase() === idOrAddress.toLowerCase()));

  const fake: FakeMicrosoft = {
    loginUrl: login.url,
    graphUrl: graph.url,
    clientId,
    clientSecret,
    tenant,
    login,
    graph,
    oauth,
    state,
    env: () => ({
      MICROSOFT_LOGIN_URL: login.url,
      MICROSOFT_GRAPH_URL: graph.url,
      MICROSOFT_CLIENT_ID: clientId,
      MICROSOFT_CLIENT_SECRET: clientSecret,
      MICROSOFT_TENANT: tenant,
    }),
    addRedirectUri: (uri) => void client.redirectUris.push(uri),
    addUser(seed = {}) {
      const personal = seed.personal ?? false;
      const tenantId = personal ? CONSUMER_TENANT : (seed.tenant ?? randomUUID()).toLowerCase();
      if (!personal) tenants.add(tenantId);
      const n = users.size + 1;
      const upn = seed.userPrincipalName ?? (personal ? `person${n}@outlook.test` : `user${n}@contoso${n}.onmicrosoft.test`);
      const mail = seed.mail === undefined ? upn : seed.mail;
      const oauthUser: OAuthUser = oauth.addUser({ id: randomUUID(), email: mail ?? upn, name: seed.displayName ?? upn.split("@")[0] });
      const graphUser: GraphUser = {
        id: oauthUser.id,
        tenantId,
        displayName: oauthUser.name,
        mail,
        userPrincipalName: upn,
        requiresAdminConsent: seed.requiresAdminConsent ?? false,
      };
      const calendar = state.addUser(graphUser, "Calendar", seed.onlineMeetingProviders ?? (personal ? [] : ["teamsForBusiness"]));
      const user: MicrosoftUser = { ...graphUser, personal, defaultCalendarId: calendar.id };
      users.set(user.id, user);
      // One object for both: the control API's changes (requiresAdminConsent) reach the Graph side too.
      state.users.set(user.id, user);
      return user;
    },
    addCalendar(userIdOrAddress, seed) {
      const user = findUser(userIdOrAddress);
      if (!user) throw new Error(`no Microsoft user ${userIdOrAddress}`);
      return state.addCalendar(user.id, {
        name: seed.name,
        canEdit: seed.canEdit ?? true,
        ...(seed.owner ? { owner: seed.owner } : {}),
        allowedOnlineMeetingProviders: seed.onlineMeetingProviders ?? (user.personal ? [] : ["teamsForBusiness"]),
      });
    },
    addEvent(calendarId, seed) {
      const zone = seed.timeZone ?? "UTC";
      const at = (v: string | Date): number => {
        if (seed.isAllDay) return Date.parse(`${typeof v === "string" ? v.slice(0, 10) : v.toISOString().slice(0, 10)}T00:00:00Z`);
        const ms = typeof v === "string" ? Date.parse(v) : v.getTime();
        if (Number.isNaN(ms)) throw new Error(`not an instant: ${String(v)}`);
        return ms;
      };
      const startMs = at(seed.start);
      return state.addEvent(calendarId, {
        subject: seed.subject ?? "Busy",
        startMs,
        endMs: at(seed.end),
        startZone: zone,
        endZone: zone,
        showAs: seed.showAs ?? "busy",
        isCancelled: seed.isCancelled ?? false,
        isAllDay: seed.isAllDay ?? false,
        ...(seed.iCalUId ? { iCalUId: seed.iCalUId } : {}),
        attendees: (seed.attendees ?? []).map((address) => ({ type: "required", emailAddress: { name: address, address } })),
        recurrence: seed.daily
          ? {
              pattern: { type: "daily", interval: seed.daily.interval ?? 1 },
              range: {
                type: seed.daily.count !== undefined ? "numbered" : seed.daily.until ? "endDate" : "noEnd",
                startDate: graphDateTime(startMs, seed.isAllDay ? "UTC" : zone).slice(0, 10),
                ...(seed.daily.count !== undefined ? { numberOfOccurrences: seed.daily.count } : {}),
                ...(seed.daily.until ? { endDate: seed.daily.until } : {}),
              },
            }
          : null,
      });
    },
    writtenEvents: () => [...state.events.values()].filter((e) => e.writtenBy === "client"),
    deletedEvents: () => [...state.deleted],
    invitations: () => state.invitations,
    approve: (url, o) => oauth.approve(url, o),
    expireAccessToken: (token) => oauth.expireAccessToken(token),
    expireRefreshToken: (token) => oauth.expireRefreshToken(token),
    revoke(userOrToken) {
      const user = findUser(userOrToken);
      if (!user) return oauth.revokeGrant(userOrToken);
      const grants = oauth.grants({ live: true }).filter((g) => g.user.id === user.id);
      for (const g of grants) oauth.revokeGrant(g.id);
      return grants.length > 0;
    },
    fault: (route, f) => server(route).fault(ROUTES[route], f),
    throttle(route, o = {}) {
      const seconds = o.retryAfterSeconds ?? 1;
      const reply = graphError(429, o.code ?? "ApplicationThrottled", o.message ?? "Application is over its MailboxConcurrency limit.", undefined, { "Retry-After": String(seconds) });
      server(route).fault(ROUTES[route], { ...toFake(reply), times: o.times ?? 1 });
    },
    unavailable(route, o = {}) {
      const status = o.status ?? 503;
      const reply = status === 503
        ? graphError(503, "serviceNotAvailable", "The service is temporarily unavailable. Try the request again after a delay.", undefined, o.retryAfterSeconds ? { "Retry-After": String(o.retryAfterSeconds) } : {})
        : graphError(504, "UnknownError", "Gateway Timeout", undefined);
      server(route).fault(ROUTES[route], { ...toFake(reply), times: o.times ?? 1 });
    },
    clearFaults() {
      login.clearFaults();
      graph.clearFaults();
    },
    requests: () => [...login.requests, ...graph.requests].sort((a, b) => a.at - b.at),
    calls: (route) => (route ? server(route).calls(ROUTES[route]) : login.calls() + graph.calls()),
    async close() {
      await Promise.all([login.close(), graph.close()]);
    },
  };
  return fake;
}

function toFake(reply: GraphReply): FakeResponse {
  // Graph answers JSON with OData's media type parameters.
  const headers = { ...(reply.body === undefined ? {} : { "Content-Type": "application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8" }), ...reply.headers };
  return { status: reply.status, headers, body: reply.body };
}
