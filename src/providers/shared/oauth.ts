// OAuth 2.0 for the providers that connect through it (Google, Zoom, Microsoft): authorization URL with PKCE, code exchange, refresh with rotation, revocation, and a session that calls APIs with a fresh token; on oauth4webapi.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import * as oauth from "oauth4webapi";
import { systemClock, type Clock } from "../../domain/clock.js";
import { ProviderError, RateLimitedError, retryAfterMs } from "./errors.js";
import type { Env } from "./settings.js";

/*
 * Why oauth4webapi: it does the protocol details we would otherwise write and get wrong (PKCE S256, RFC 6749's
 * client authentication with form-encoded Basic credentials, strict token-answer checks, state comparison, RFC
 * 7009 revocation), has no dependencies, and runs on Node 20's own fetch and WebCrypto. What is ours: when to
 * refresh, storing a rotated refresh token before it is used again, one refresh at a time per connection, and
 * what a refusal means for a connection (invalid_grant: the host must authorize again).
 */

/** One provider's OAuth client and endpoints, as the operator set them (the provider's settings.ts, composed by src/app/config.ts). */
export interface OAuthClientConfig {
  clientId: string;
  clientSecret: string;
  authorizationUrl: string;
  tokenUrl: string;
  /** Where tokens are revoked; undefined where the provider offers no revocation. */
  revocationUrl: string | undefined;
  /** The root of the provider's API (Google `{root}/calendar/v3/…`, Zoom `{root}/users/me`). */
  apiUrl: string;
}

/** Who authorized: the provider account's stable id and its e-mail address (shown as the connection's `account`). */
export interface ProviderIdentity {
  id: string;
  email: string;
}

/** How one provider speaks OAuth: what a provider folder declares, the flow itself is shared. */
export interface OAuthProfile {
  /** The provider's name, as in `/oauth/<provider>/…`. */
  readonly provider: string;
  /** The name people know it by, for pages ("Google"). */
  readonly displayName: string;
  /** The `purpose` values the provider's authorization serves (providers.md: google calendar, zoom conference). */
  readonly purposes: readonly string[];
  /** The least scopes the features need; sent as `scope` unless the provider takes them from the app (Zoom). */
  readonly scopes: readonly string[];
  readonly sendScope: boolean;
  /** Extra authorization parameters (Google: access_type=offline and prompt=consent, so a refresh token comes back). */
  readonly authorizationParams: Readonly<Record<string, string>>;
  /**
   * Extra parameters of a refresh request (Microsoft: `scope`, which its identity platform documents as expected on
   * a refresh and uses to pick the resource the new access token is for). Absent: none.
   */
  readonly refreshParams?: Readonly<Record<string, string>>;
  /** How the token endpoint authenticates the client (Zoom: Basic only). */
  readonly tokenAuth: "client_secret_basic" | "client_secret_post";
  /** How the revocation endpoint authenticates the client; "none": it takes the token alone (Google). */
  readonly revocationAuth: "none" | "client_secret_basic";
  /** The account the new tokens belong to, read from the provider's API. */
  identify(session: OAuthSession, signal: AbortSignal): Promise<ProviderIdentity>;
  /**
   * The operator's client and endpoints from the provider's own environment names (its folder's settings.ts);
   * undefined when the client is not set: the provider is not configured. Throws SettingError naming a bad setting.
   */
  settings(env: Env): OAuthClientConfig | undefined;
}

/** Tokens as stored (sealed by the feature that keeps them); `expires_at` in ms since the epoch. */
export interface TokenSet {
  access_token: string;
  refresh_token: string | null;
  expires_at: number;
  scope: string | null;
}

/** Where a connection's tokens live: `save` seals and writes them, `load` reads what is stored now. */
export interface TokenStore {
  save(tokens: TokenSet): Promise<void>;
  load(): Promise<TokenSet | null>;
}

/**
 * The OAuth session a provider calls with, for a connection (or a meeting account) that connects through OAuth; one
 * without (never authorized) fails closed as refused.
 */
export function sessionOf(access: { oauth: OAuthSession | null }, provider: string, holder: "connection" | "account"): OAuthSession {
  if (!access.oauth) throw new ProviderError("refused", `the ${provider} ${holder} has no authorization; authorize ${provider} again`);
  return access.oauth;
}

/** An access token is renewed this long before it runs out, so no call starts with one that dies on the way. */
const REFRESH_MARGIN_MS = 60_000;
/** Without expires_in an access token is taken to last an hour, as every one of these providers' tokens does. */
const DEFAULT_LIFETIME_MS = 3_600_000;

/**
 * The grant is gone (revoked, expired, password changed: `invalid_grant`): the connection is `invalid` and stays
 * so until the host authorizes again. A refusal of the credentials, so the feature's "refused" handling applies.
 */
class OAuthGrantError extends ProviderError {
  constructor(provider: string) {
    super("refused", `${provider} no longer accepts the authorization (revoked or expired); authorize ${provider} again`);
  }
}

/** Plain words for a failed exchange with a provider's token or revocation endpoint, never carrying a token. */
function endpointFailure(provider: string, what: string, err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof oauth.ResponseBodyError) {
    if (err.status === 429) return new RateLimitedError(provider, retryAfterMs(err.response.headers.get("retry-after")));
    if (err.status >= 500) return new ProviderError("unreachable", `${provider} ${what} failed (HTTP ${err.status})`);
    // invalid_client and the like: the operator's client settings, which no host can repair by authorizing.
    return new ProviderError("unreachable", `${provider} refused the ${what} (${err.error})`);
  }
  if (err instanceof Error && (err.name === "AbortError" || err.name === "TimeoutError")) return new ProviderError("unreachable", `${provider} did not answer the ${what} in time`);
  if (err instanceof oauth.OperationProcessingError) return new ProviderError("bad_response", `${provider} answered the ${what} with something that is not OAuth (${err.code ?? "unreadable"})`);
  return new ProviderError("unreachable", `${provider} could not be reached for the ${what}`);
}

/** A token answer as stored; a refresh answer without a refresh token keeps the one it was made with. */
function tokenSetOf(answer: oauth.TokenEndpointResponse, previousRefresh: string | null, now: number): TokenSet {
  const lifetime = typeof answer.expires_in === "number" && answer.expires_in > 0 ? answer.expires_in * 1000 : DEFAULT_LIFETIME_MS;
  return {
    access_token: answer.access_token,
    refresh_token: typeof answer.refresh_token === "string" && answer.refresh_token !== "" ? answer.refresh_token : previousRefresh,
    expires_at: now + lifetime,
    scope: typeof answer.scope === "string" ? answer.scope : null,
  };
}

/**
 * How long a refused refresh waits for another process's rotated tokens to reach the store (one database write
 * after the provider's answer), and how often it looks. Short: a grant that is really gone waits this long before
 * it is marked invalid.
 */
const ROTATION_WAIT_MS = 1000;
const ROTATION_LOOK_MS = 100;

/**
 * The tokens another process stored after refreshing from `refreshToken` (the provider rotated it, so this
 * process's refresh with it was refused), or undefined when none come. That process stores them a database write
 * after the provider's answer, so they are looked for over ROTATION_WAIT_MS (real time: a sibling's write, not a
 * due time) before the grant counts as gone: read once, a replica that lost the race marked the connection invalid.
 * Undefined as well when `signal` ends the wait first: the refusal stands, as nothing newer came.
 */
async function rotatedElsewhere(store: TokenStore, refreshToken: string, signal: AbortSignal): Promise<TokenSet | undefined> {
  const until = performance.now() + ROTATION_WAIT_MS;
  for (;;) {
    const stored = await store.load();
    if (stored?.refresh_token && stored.refresh_token !== refreshToken) return stored;
    if (performance.now() + ROTATION_LOOK_MS > until || signal.aborted) return undefined;
    await sleep(ROTATION_LOOK_MS, undefined, { signal }).catch(() => undefined);
  }
}

/** One provider's OAuth client: one per process, made at start from the operator's settings. */
export class OAuthClient {
  private readonly as: oauth.AuthorizationServer;
  private readonly client: oauth.Client;
  /** Refreshes under way, by connection: concurrent calls of one connection share one (rotation would end the other). */
  private readonly refreshing = new Map<string, Promise<TokenSet>>();

  constructor(
    readonly profile: OAuthProfile,
    readonly config: OAuthClientConfig,
    /** What token lifetimes are read against (`Deps.clock`). */
    readonly clock: Clock = systemClock,
  ) {
    this.as = {
      issuer: new URL(config.tokenUrl).origin,
      authorization_endpoint: config.authorizationUrl,
      token_endpoint: config.tokenUrl,
      ...(config.revocationUrl ? { revocation_endpoint: config.revocationUrl } : {}),
    };
    this.client = { client_id: config.clientId };
  }

  get provider(): string {
    return this.profile.provider;
  }

  /** Request options: the deadline, and plain http where the operator pointed an endpoint at it (tests, a proxy). */
  private options(url: string, signal: AbortSignal): { signal: AbortSignal; [oauth.allowInsecureRequests]?: boolean } {
    return url.startsWith("http:") ? { signal, [oauth.allowInsecureRequests]: true } : { signal };
  }

  private auth(kind: "client_secret_basic" | "client_secret_post" | "none"): oauth.ClientAuth {
    if (kind === "client_secret_basic") return oauth.ClientSecretBasic(this.config.clientSecret);
    if (kind === "client_secret_post") return oauth.ClientSecretPost(this.config.clientSecret);
    return oauth.None();
  }

  /** The URL the host's browser is sent to, and what the callback needs to finish: the state and the PKCE verifier. */
  async authorizationRequest(redirectUri: string): Promise<{ url: string; state: string; codeVerifier: string }> {
    const codeVerifier = oauth.generateRandomCodeVerifier();
    // 32 random bytes: 256 bits, beyond the 128 the spec asks of a state.
    const state = oauth.generateRandomState();
    const url = new URL(this.config.authorizationUrl);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("client_id", this.config.clientId);
    url.searchParams.set("redirect_uri", redirectUri);
    if (this.profile.sendScope) url.searchParams.set("scope", this.profile.scopes.join(" "));
    url.searchParams.set("state", state);
    url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(codeVerifier));
    url.searchParams.set("code_challenge_method", "S256");
    for (const [k, v] of Object.entries(this.profile.authorizationParams)) url.searchParams.set(k, v);
    return { url: url.href, state, codeVerifier };
  }

  /**
   * Exchanges the callback's code (with the verifier and the same redirect_uri) for tokens. A code the provider
   * refuses rejects with ProviderError "refused".
   */
  async exchangeCode(callback: URLSearchParams, expectedState: string, codeVerifier: string, redirectUri: string, signal: AbortSignal): Promise<TokenSet> {
    try {
      const params = oauth.validateAuthResponse(this.as, this.client, callback, expectedState);
      const res = await oauth.authorizationCodeGrantRequest(this.as, this.client, this.auth(this.profile.tokenAuth), params, redirectUri, codeVerifier, this.options(this.config.tokenUrl, signal));
      const answer = await oauth.processAuthorizationCodeResponse(this.as, this.client, res);
      const tokens = tokenSetOf(answer, null, this.clock.nowMs());
      if (tokens.refresh_token === null) throw new ProviderError("bad_response", `${this.provider} gave no refresh token, so the connection could not outlive the hour`);
      return tokens;
    } catch (err) {
      if (err instanceof oauth.ResponseBodyError && err.status < 500 && err.status !== 429) {
        throw new ProviderError("refused", `${this.provider} refused the authorization code (${err.error})`);
      }
      throw endpointFailure(this.provider, "code exchange", err);
    }
  }

  /** New tokens for a refresh token; OAuthGrantError on invalid_grant. */
  async refresh(refreshToken: string, signal: AbortSignal): Promise<TokenSet> {
    try {
      const options = { ...this.options(this.config.tokenUrl, signal), additionalParameters: { ...this.profile.refreshParams } };
      const res = await oauth.refreshTokenGrantRequest(this.as, this.client, this.auth(this.profile.tokenAuth), refreshToken, options);
      return tokenSetOf(await oauth.processRefreshTokenResponse(this.as, this.client, res), refreshToken, this.clock.nowMs());
    } catch (err) {
      if (err instanceof oauth.ResponseBodyError && err.error === "invalid_grant") throw new OAuthGrantError(this.provider);
      throw endpointFailure(this.provider, "token refresh", err);
    }
  }

  /** Revokes a token (and with it the provider's whole grant); one the provider no longer knows counts as revoked. */
  async revoke(token: string, signal: AbortSignal): Promise<void> {
    if (!this.config.revocationUrl) return;
    try {
      const res = await oauth.revocationRequest(this.as, this.client, this.auth(this.profile.revocationAuth), token, this.options(this.config.revocationUrl, signal));
      await oauth.processRevocationResponse(res);
    } catch (err) {
      // Google answers 400 invalid_token for a token it already revoked: done either way.
      if (err instanceof oauth.ResponseBodyError && (err.error === "invalid_token" || err.error === "invalid_grant")) return;
      throw endpointFailure(this.provider, "revocation", err);
    }
  }

  /** One refresh at a time per connection (`key`); the new tokens are stored before anyone uses them. */
  refreshShared(key: string, refreshToken: string, store: TokenStore, signal: AbortSignal): Promise<TokenSet> {
    const running = this.refreshing.get(key);
    if (running) return running;
    const work = (async () => {
      let fresh: TokenSet;
      try {
        fresh = await this.refresh(refreshToken, signal);
      } catch (err) {
        if (!(err instanceof OAuthGrantError)) throw err;
        // Another process may have refreshed (and the provider rotated) meanwhile: its tokens are in the store.
        const stored = await rotatedElsewhere(store, refreshToken, signal);
        if (!stored) throw err;
        if (stored.expires_at - this.clock.nowMs() > REFRESH_MARGIN_MS) return stored;
        fresh = await this.refresh(stored.refresh_token as string, signal);
      }
      // Rotation: the provider may already have ended the old refresh token, so the new one is kept first.
      await store.save(fresh);
      return fresh;
    })();
    this.refreshing.set(key, work);
    const forget = () => {
      if (this.refreshing.get(key) === work) this.refreshing.delete(key);
    };
    work.then(forget, forget);
    return work;
  }

  /** A session over tokens not stored anywhere yet (the callback's, until the connection is written): `save` keeps them in memory. */
  pendingSession(tokens: TokenSet): OAuthSession {
    let held = tokens;
    return this.session(`pending:${randomUUID()}`, tokens, { save: async (t) => void (held = t), load: async () => held });
  }

  /** A session over stored tokens; `key` names the connection (one refresh at a time per key). */
  session(key: string, tokens: TokenSet, store: TokenStore): OAuthSession {
    return new OAuthSession(this, key, tokens, store);
  }
}

/** What a request to a provider's API may carry. */
export interface ApiRequest {
  method: string;
  /** Query parameters, added to the URL. */
  query?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  /** Further request headers (Graph's `Prefer`); the bearer token and `accept` are the session's. */
  headers?: Record<string, string>;
}

/**
 * Calls a provider's API for one connection: the access token is refreshed shortly before it expires, and after a
 * 401 the token is refreshed and the same call repeated once. Rejects with OAuthGrantError when the grant is gone.
 */
export class OAuthSession {
  constructor(
    readonly client: OAuthClient,
    private readonly key: string,
    private tokens: TokenSet,
    private readonly store: TokenStore,
  ) {}

  get apiUrl(): string {
    return this.client.config.apiUrl;
  }

  get provider(): string {
    return this.client.provider;
  }

  /** The tokens as they are now (refreshed ones included): what a connection made from this session stores. */
  current(): TokenSet {
    return this.tokens;
  }

  private async renew(signal: AbortSignal): Promise<void> {
    if (this.tokens.refresh_token === null) throw new OAuthGrantError(this.provider);
    this.tokens = await this.client.refreshShared(this.key, this.tokens.refresh_token, this.store, signal);
  }

  private send(url: string, req: ApiRequest, signal: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { ...req.headers, authorization: `Bearer ${this.tokens.access_token}`, accept: "application/json" };
    if (req.json !== undefined) headers["content-type"] = "application/json";
    return fetch(url, { method: req.method, headers, body: req.json === undefined ? undefined : JSON.stringify(req.json), signal, redirect: "manual" });
  }

  /** `path` under the API root (or a whole URL of it); network failures reject with ProviderError "unreachable". */
  async request(path: string, req: ApiRequest, signal: AbortSignal): Promise<Response> {
    // A whole URL comes from an answer (a next page's link): one outside the API root would be handed the bearer token.
    if (path.startsWith("http") && !path.startsWith(`${this.apiUrl}/`)) throw new ProviderError("bad_response", `${this.provider} answered a link outside its API`);
    const url = new URL(path.startsWith("http") ? path : `${this.apiUrl}${path}`);
    for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
    try {
      if (this.tokens.expires_at - this.client.clock.nowMs() < REFRESH_MARGIN_MS) await this.renew(signal);
      let res = await this.send(url.href, req, signal);
      if (res.status === 401) {
        await res.body?.cancel();
        await this.renew(signal);
        res = await this.send(url.href, req, signal);
        if (res.status === 401) {
          await res.body?.cancel();
          throw new ProviderError("refused", `${this.provider} refused a freshly refreshed access token`);
        }
      }
      return res;
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      if (signal.aborted) throw new ProviderError("unreachable", `${this.provider} did not answer in time`);
      throw new ProviderError("unreachable", `${this.provider} could not be reached`);
    }
  }
}
