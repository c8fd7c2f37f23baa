// The OAuth core of the fakes holds the protocol (PKCE, single-use codes, exact redirect_uri, rotation, revocation), its consent page can be driven by Chromium and by a plain HTTP client, and its harness logs and injects faults.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../helpers/browser.js";
import { startFakeGoogle, GOOGLE_SCOPES, type FakeGoogle } from "./google.js";
import { FakeHttpServer, OAuthServer, pkcePair, type OAuthProfile } from "./oauth.js";
import { startFakeZoom, type FakeZoom } from "./zoom.js";

const CALLBACK = "http://127.0.0.1:9/oauth/google/callback";
const OTHER_CALLBACK = "http://127.0.0.1:9/oauth/other/callback";

type Form = Record<string, string>;
async function post(url: string, form: Form, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(form) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function authUrl(base: string, params: Record<string, string | undefined>): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

describe("authorization code + PKCE at the fake Google", () => {
  let google: FakeGoogle;
  const pair = pkcePair();
  const params = (over: Record<string, string | undefined> = {}) => ({
    response_type: "code",
    client_id: google.clientId,
    redirect_uri: CALLBACK,
    scope: GOOGLE_SCOPES.events,
    state: "s1",
    code_challenge: pair.challenge,
    code_challenge_method: "S256",
    access_type: "offline",
    ...over,
  });
  const code = (over: Record<string, string | undefined> = {}) => new URL(google.approve(authUrl(google.authUrl, params(over)))).searchParams.get("code")!;
  const exchange = (c: string, over: Form = {}) =>
    post(google.tokenUrl, { grant_type: "authorization_code", code: c, redirect_uri: CALLBACK, code_verifier: pair.verifier, client_id: google.clientId, client_secret: google.clientSecret, ...over });

  beforeAll(async () => {
    google = await startFakeGoogle({ redirectUris: [CALLBACK, OTHER_CALLBACK], users: [{ email: "ada@example.test" }] });
  });
  afterAll(() => google.close());

  it("a wrong or missing code_verifier is invalid_grant", async () => {
    const c = code();
    expect(await exchange(c, { code_verifier: pkcePair().verifier })).toEqual({ status: 400, body: { error: "invalid_grant", error_description: "Invalid code verifier." } });
    const { code_verifier: _omit, ...withoutVerifier } = { code_verifier: "", grant_type: "authorization_code", code: c, redirect_uri: CALLBACK, client_id: google.clientId, client_secret: google.clientSecret };
    expect(await post(google.tokenUrl, withoutVerifier)).toEqual({ status: 400, body: { error: "invalid_grant", error_description: "Missing code verifier." } });
    expect((await exchange(c)).status).toBe(200);
  });

  it("an authorization request without PKCE, or with the plain method, is refused on Google's error page", async () => {
    for (const over of [{ code_challenge: undefined, code_challenge_method: undefined }, { code_challenge_method: "plain" }]) {
      const res = await fetch(authUrl(google.authUrl, params(over)), { redirect: "manual" });
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(await res.text()).toContain("invalid_request");
    }
  });

  it("a code is single use: the second exchange is invalid_grant and revokes what the first one got (RFC 6749 4.1.2)", async () => {
    const c = code();
    const first = await exchange(c);
    expect(first.status).toBe(200);
    expect(await exchange(c)).toEqual({ status: 400, body: { error: "invalid_grant", error_description: "Bad Request" } });
    const refresh = await post(google.tokenUrl, { grant_type: "refresh_token", refresh_token: first.body.refresh_token as string, client_id: google.clientId, client_secret: google.clientSecret });
    expect(refresh.body.error).toBe("invalid_grant");
    const api = await fetch(`${google.apiUrl}/calendar/v3/users/me/calendarList`, { headers: { authorization: `Bearer ${first.body.access_token as string}` } });
    expect(api.status).toBe(401);
  });

  it("redirect_uri: not registered byte for byte is an error page without redirect; another registered one at the token step is refused", async () => {
    for (const uri of [`${CALLBACK}/`, CALLBACK.toUpperCase(), `${CALLBACK}?x=1`, "https://evil.example/cb"]) {
      const res = await fetch(authUrl(google.authUrl, params({ redirect_uri: uri })), { redirect: "manual" });
      expect(res.status, uri).toBe(400);
      expect(res.headers.get("location"), uri).toBeNull();
      expect(await res.text()).toContain("redirect_uri_mismatch");
    }
    const unknownClient = await fetch(authUrl(google.authUrl, params({ client_id: "nobody.apps.googleusercontent.com" })), { redirect: "manual" });
    expect(unknownClient.status).toBe(401);
    expect(await unknownClient.text()).toContain("invalid_client");
    expect(await exchange(code(), { redirect_uri: OTHER_CALLBACK })).toEqual({ status: 400, body: { error: "redirect_uri_mismatch", error_description: "Bad Request" } });
  });

  it("client authentication: a wrong secret is 401 invalid_client, HTTP Basic works as well as the body", async () => {
    const bad = await exchange(code(), { client_secret: "wrong" });
    expect(bad).toEqual({ status: 401, body: { error: "invalid_client", error_description: "Unauthorized" } });
    const c = code();
    const viaBasic = await post(
      google.tokenUrl,
      { grant_type: "authorization_code", code: c, redirect_uri: CALLBACK, code_verifier: pair.verifier },
      { authorization: `Basic ${Buffer.from(`${encodeURIComponent(google.clientId)}:${encodeURIComponent(google.clientSecret)}`).toString("base64")}` },
    );
    expect(viaBasic.status).toBe(200);
  });

  it("a refresh token comes on the first consent with access_type=offline, later only with prompt=consent", async () => {
    const user = google.addUser("fresh@example.test");
    const get = async (over: Record<string, string | undefined>) => {
      const c = new URL(google.approve(authUrl(google.authUrl, params({ login_hint: user.email, ...over })))).searchParams.get("code")!;
      return (await exchange(c)).body;
    };
    expect((await get({})).refresh_token).toBeDefined();
    expect((await get({})).refresh_token).toBeUndefined();
    expect((await get({ prompt: "consent" })).refresh_token).toBeDefined();
    expect((await get({ prompt: "consent", access_type: undefined })).refresh_token).toBeUndefined();
  });

  it("the consent page is a form a plain HTTP client can submit: Deny gives access_denied with the state, Allow a code for the chosen user", async () => {
    const second = google.addUser("grace@example.test", { name: "Grace" });
    const page = await fetch(authUrl(google.authUrl, params({ login_hint: second.email, state: "s2" })));
    expect(page.status).toBe(200);
    const html = await page.text();
    const requestId = /name="request_id" value="([^"]+)"/.exec(html)![1];
    expect(html).toMatch(new RegExp(`<option value="${second.id}" selected>`));
    expect(html).toContain(">Allow</button>");

    const submit = (form: Form) => fetch(new URL("/o/oauth2/v2/auth", google.authUrl), { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(form) });
    const denied = await submit({ request_id: requestId, user: second.id, scope: GOOGLE_SCOPES.events, decision: "deny" });
    expect(denied.status).toBe(302);
    expect(denied.headers.get("location")).toBe(`${CALLBACK}?error=access_denied&state=s2`);
    // A consent page answers once.
    expect((await submit({ request_id: requestId, user: second.id, decision: "allow" })).status).toBe(400);

    const again = await (await fetch(authUrl(google.authUrl, params({ login_hint: second.email, state: "s3" })))).text();
    const allowed = await submit({ request_id: /name="request_id" value="([^"]+)"/.exec(again)![1], user: second.id, scope: GOOGLE_SCOPES.events, decision: "allow" });
    const back = new URL(allowed.headers.get("location")!);
    expect(back.searchParams.get("state")).toBe("s3");
    const tokens = await exchange(back.searchParams.get("code")!);
    expect(tokens.status).toBe(200);
    expect(google.grants().find((g) => g.liveAccessTokens.includes(tokens.body.access_token as string))?.user.email).toBe(second.email);
  });
});

describe("the OAuth core's other profile choices (as the Microsoft fake will use them)", () => {
  let http: FakeHttpServer;
  let oauth: OAuthServer;
  let clock = Date.parse("2031-01-01T00:00:00Z");
  const pair = pkcePair();

  beforeAll(async () => {
    http = await FakeHttpServer.start();
    const profile: OAuthProfile = {
      provider: "Example",
      // Route patterns: Microsoft's endpoints carry the tenant in the path.
      paths: { authorize: "/:tenant/oauth2/v2.0/authorize", token: "/:tenant/oauth2/v2.0/token" },
      clients: [{ id: "app", secret: "secret", redirectUris: [CALLBACK] }],
      users: [{ email: "ada@example.test" }],
      scope: { param: "required", known: ["a", "b", "offline_access"] },
      // Microsoft-like: a refresh rotates the token and the old one keeps working for a while.
      rotation: { rotate: true, oldValidForSeconds: 60 },
      now: () => clock,
    };
    oauth = new OAuthServer(http, profile);
  });
  afterAll(() => http.close());

  const url = (over: Record<string, string | undefined> = {}) =>
    authUrl(`${http.url}/common/oauth2/v2.0/authorize`, { response_type: "code", client_id: "app", redirect_uri: CALLBACK, scope: "a offline_access", state: "st", code_challenge: pair.challenge, code_challenge_method: "S256", ...over });
  const exchange = (c: string) => post(`${http.url}/common/oauth2/v2.0/token`, { grant_type: "authorization_code", code: c, redirect_uri: CALLBACK, code_verifier: pair.verifier, client_id: "app", client_secret: "secret" });
  const refresh = (t: string) => post(`${http.url}/common/oauth2/v2.0/token`, { grant_type: "refresh_token", refresh_token: t, client_id: "app", client_secret: "secret" });

  it("malformed requests go back to the client as RFC 6749 4.1.2.1 says: error and state on the redirect_uri", async () => {
    const noState = await fetch(url({ state: undefined }), { redirect: "manual" });
    expect(noState.status).toBe(302);
    expect(new URL(noState.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
    const scope = new URL(oauth.approve(url({ scope: "a z" })));
    expect([scope.searchParams.get("error"), scope.searchParams.get("state")]).toEqual(["invalid_scope", "st"]);
    const type = new URL(oauth.approve(url({ response_type: "token" })));
    expect(type.searchParams.get("error")).toBe("unsupported_response_type");
  });

  it("the consent form posts back to the path it was served at, tenant included", async () => {
    const html = await (await fetch(url({ state: "t1" }))).text();
    expect(html).toContain('action="/common/oauth2/v2.0/authorize"');
    const requestId = /name="request_id" value="([^"]+)"/.exec(html)![1];
    const user = /<option value="([^"]+)" selected>/.exec(html)![1];
    const res = await fetch(`${http.url}/common/oauth2/v2.0/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams([["request_id", requestId], ["user", user], ["scope", "a"], ["scope", "offline_access"], ["decision", "allow"]]),
    });
    const back = new URL(res.headers.get("location")!);
    expect(back.searchParams.get("state")).toBe("t1");
    expect((await exchange(back.searchParams.get("code")!)).body.scope).toBe("a offline_access");
  });

  it("a code expires after 10 minutes", async () => {
    const c = new URL(oauth.approve(url())).searchParams.get("code")!;
    clock += 10 * 60_000 + 1;
    expect((await exchange(c)).body.error).toBe("invalid_grant");
  });

  it("rotation with a grace period: the old refresh token works for a while, then is refused", async () => {
    const first = (await exchange(new URL(oauth.approve(url())).searchParams.get("code")!)).body;
    const second = (await refresh(first.refresh_token as string)).body;
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await refresh(first.refresh_token as string)).status).toBe(200);
    clock += 61_000;
    expect(await refresh(first.refresh_token as string)).toEqual({ status: 400, body: { error: "invalid_grant", error_description: "Token has been expired or revoked." } });
    expect((await refresh(second.refresh_token as string)).status).toBe(200);
  });

  it("validateBearer: missing, unknown, expired and revoked tokens each get the 401; a live one its user and scopes", async () => {
    const t = (await exchange(new URL(oauth.approve(url())).searchParams.get("code")!)).body;
    const check = (token?: string) => oauth.validateBearer({ headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
    expect(check()).toMatchObject({ ok: false, reason: "missing", response: { status: 401, headers: { "WWW-Authenticate": 'Bearer realm="Example"' } } });
    expect(check("nope")).toMatchObject({ ok: false, reason: "invalid" });
    expect(check(t.access_token as string)).toMatchObject({ ok: true, user: { email: "ada@example.test" }, scopes: ["a", "offline_access"] });
    expect(oauth.expireAccessToken(t.access_token as string)).toBe(1);
    expect(check(t.access_token as string)).toMatchObject({ ok: false, reason: "expired" });
    const u = (await exchange(new URL(oauth.approve(url())).searchParams.get("code")!)).body;
    expect(oauth.revokeGrant(u.refresh_token as string)).toBe(true);
    expect(check(u.access_token as string)).toMatchObject({ ok: false, reason: "revoked" });
    expect((await refresh(u.refresh_token as string)).body.error).toBe("invalid_grant");
    expect(oauth.grants({ live: true }).every((g) => !g.liveRefreshTokens.includes(u.refresh_token as string))).toBe(true);
  });
});

describe("the harness: request log, call counts and faults on any route", () => {
  let zoom: FakeZoom;
  beforeAll(async () => {
    zoom = await startFakeZoom({ redirectUris: [CALLBACK], users: [{ email: "ada@example.test" }] });
  });
  afterAll(() => zoom.close());

  it("logs method, path, query, headers and body of every request, and counts calls per route", async () => {
    zoom.http.resetLog();
    await post(`${zoom.tokenUrl}?probe=1`, { grant_type: "refresh_token", refresh_token: "x" }, { authorization: "Basic eDp5" });
    const [entry] = zoom.http.requests;
    expect(entry).toMatchObject({ route: "POST /oauth/token", method: "POST", path: "/oauth/token", query: { probe: "1" }, body: "grant_type=refresh_token&refresh_token=x", status: 400 });
    expect(entry.headers.authorization).toBe("Basic eDp5");
    expect(zoom.http.calls("POST /oauth/token")).toBe(1);
    expect(zoom.http.calls()).toBe(1);
  });

  it("the next N calls answer the injected status, then the route answers normally; '*' hits any route", async () => {
    zoom.http.fault("POST /oauth/token", { status: 503, headers: { "Retry-After": "1" }, body: "busy", times: 2 });
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(zoom.tokenUrl, { method: "POST" });
      answers.push([res.status, res.headers.get("retry-after")]);
    }
    expect(answers).toEqual([
      [503, "1"],
      [503, "1"],
      [400, null],
    ]);
    zoom.http.fault("*", { status: 500 });
    expect((await fetch(`${zoom.apiUrl}/users/me`)).status).toBe(500);
    expect((await fetch(`${zoom.apiUrl}/users/me`)).status).toBe(401);
  });

  it("a hanging route never answers (the client gives up), a slow one answers after its delay", async () => {
    zoom.http.fault("GET /v2/users/me", { hang: true });
    const hung = await fetch(`${zoom.apiUrl}/users/me`, { signal: AbortSignal.timeout(300) }).then(
      () => "answered",
      (e: Error) => e.name,
    );
    expect(hung).toBe("TimeoutError");
    expect(zoom.http.requests.at(-1)?.status).toBeUndefined();
    zoom.http.fault("GET /v2/users/me", { delayMs: 250 });
    const started = Date.now();
    expect((await fetch(`${zoom.apiUrl}/users/me`)).status).toBe(401);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
  });
});

describe("consent in Chromium", () => {
  let browser: Browser;
  let zoom: FakeZoom;
  let app: Server;
  let callback: string;
  const landed: URL[] = [];

  beforeAll(async () => {
    // The app's redirect_uri: a tiny local server that records where the browser landed.
    app = createServer((req, res) => {
      const at = new URL(req.url ?? "/", callback);
      // Chromium asks for /favicon.ico too; only the callback counts.
      if (at.pathname === "/oauth/zoom/callback") landed.push(at);
      res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>connected</title><p id=done>connected</p>");
    });
    app.listen(0, "127.0.0.1");
    await once(app, "listening");
    callback = `http://127.0.0.1:${(app.address() as AddressInfo).port}/oauth/zoom/callback`;
    zoom = await startFakeZoom({ redirectUris: [callback], users: [{ email: "ada@example.test", firstName: "Ada" }, { email: "grace@example.test", firstName: "Grace" }] });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await zoom?.close();
    app?.close();
  });

  it("choosing the second account and clicking Allow lands on the redirect_uri with a code and the state; the code buys tokens for that account", async () => {
    const { verifier, challenge } = pkcePair();
    const page = await browser.newPage();
    await page.goto(authUrl(zoom.authUrl, { response_type: "code", client_id: zoom.clientId, redirect_uri: callback, state: "browser-state", code_challenge: challenge, code_challenge_method: "S256" }));
    await page.selectOption("select#user", { label: "Grace <grace@example.test>" });
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((u) => u.pathname === "/oauth/zoom/callback");
    expect(await page.textContent("#done")).toBe("connected");
    const back = landed.at(-1)!;
    expect(back.searchParams.get("state")).toBe("browser-state");
    const res = await post(
      zoom.tokenUrl,
      { grant_type: "authorization_code", code: back.searchParams.get("code")!, redirect_uri: callback, code_verifier: verifier },
      { authorization: `Basic ${Buffer.from(`${zoom.clientId}:${zoom.clientSecret}`).toString("base64")}` },
    );
    expect(res.status).toBe(200);
    const me = await fetch(`${zoom.apiUrl}/users/me`, { headers: { authorization: `Bearer ${res.body.access_token as string}` } });
    expect(((await me.json()) as { email: string }).email).toBe("grace@example.test");
  });

  it("Deny lands on the redirect_uri with error=access_denied and the state", async () => {
    const { challenge } = pkcePair();
    const page = await browser.newPage();
    await page.goto(authUrl(zoom.authUrl, { response_type: "code", client_id: zoom.clientId, redirect_uri: callback, state: "no-thanks", code_challenge: challenge, code_challenge_method: "S256" }));
    await page.getByRole("button", { name: "Deny" }).click();
    await page.waitForURL((u) => u.pathname === "/oauth/zoom/callback");
    const back = landed.at(-1)!;
    expect([back.searchParams.get("error"), back.searchParams.get("state"), back.searchParams.get("code")]).toEqual(["access_denied", "no-thanks", null]);
  });
});
