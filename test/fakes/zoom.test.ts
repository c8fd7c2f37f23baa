// The fake Zoom speaks the real protocol: Zoom's own Node SDK (@zoom/rivet) pointed at it reads the user, makes, moves and deletes meetings, refreshes tokens, and fails as against Zoom.
import axios from "axios";
import { MeetingsOAuthClient } from "@zoom/rivet/meetings";
import { UsersOAuthClient } from "@zoom/rivet/users";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { pkcePair } from "./oauth.js";
import { startFakeZoom, ZOOM_ROUTES, ZOOM_SCOPES, type FakeZoom } from "./zoom.js";

const REDIRECT = "http://127.0.0.1:9/oauth/zoom/callback";
const HOST = "host@example.test";

let zoom: FakeZoom;
beforeAll(async () => {
  zoom = await startFakeZoom({ redirectUris: [REDIRECT], users: [{ email: HOST, firstName: "Ada", lastName: "Host", timezone: "Europe/Berlin" }] });
});
afterAll(() => zoom.close());
afterEach(() => zoom.http.clearFaults());

interface TokenAnswer {
  access_token: string;
  token_type: string;
  refresh_token: string;
  expires_in: number;
  scope: string;
  api_url: string;
}

const basic = () => `Basic ${Buffer.from(`${zoom.clientId}:${zoom.clientSecret}`).toString("base64")}`;

async function tokenCall(form: Record<string, string>, headers: Record<string, string> = { authorization: basic() }): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(zoom.tokenUrl, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(form) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Authorization code + PKCE as the service does it against Zoom: scopes from the app, Basic client auth. */
async function connect(opts: { scopes?: string[] } = {}): Promise<TokenAnswer> {
  const { verifier, challenge } = pkcePair();
  const url = new URL(zoom.authUrl);
  url.search = new URLSearchParams({ response_type: "code", client_id: zoom.clientId, redirect_uri: REDIRECT, state: "st", code_challenge: challenge, code_challenge_method: "S256" }).toString();
  const back = new URL(zoom.approve(url.toString(), { user: HOST, scopes: opts.scopes }));
  const res = await tokenCall({ grant_type: "authorization_code", code: back.searchParams.get("code")!, redirect_uri: REDIRECT, code_verifier: verifier });
  expect(res.status).toBe(200);
  return res.body as unknown as TokenAnswer;
}

interface RivetToken {
  accessToken: string;
  expirationTimeIso: string;
  refreshToken: string;
  scopes: string[];
}

/** Rivet's in-memory token store, seeded with tokens the fake issued. */
function store(t: TokenAnswer, expiresInSeconds = t.expires_in): { token: RivetToken; getLatestToken(): RivetToken; storeToken(x: RivetToken): void } {
  const s = {
    token: { accessToken: t.access_token, refreshToken: t.refresh_token, expirationTimeIso: new Date(Date.now() + expiresInSeconds * 1000).toISOString(), scopes: t.scope.split(" ") },
    getLatestToken: () => s.token,
    storeToken: (x: RivetToken) => {
      s.token = x;
    },
  };
  return s;
}

/**
 * Options every Rivet OAuth client here gets: its baseUrl (WebEndpointOptions; read at run time though not in the
 * client options' type) and the installer options its OAuth client needs to be built (unused: the tests hold tokens).
 */
const common = () => ({
  clientId: zoom.clientId,
  clientSecret: zoom.clientSecret,
  disableReceiver: true as const,
  installerOptions: { redirectUri: REDIRECT, stateStore: "state-secret-state-secret-state-secret" },
  baseUrl: zoom.apiUrl,
});

function meetingsClient(tokenStore: ReturnType<typeof store>): MeetingsOAuthClient {
  return new MeetingsOAuthClient({ ...common(), tokenStore });
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  const e: unknown = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof Error)) throw new Error("the call succeeded");
  return e;
}

describe("Zoom OAuth", () => {
  it("a code exchange with Basic client auth answers Zoom's token shape (the one Rivet asserts), with the app's scopes", async () => {
    const t = await connect();
    expect(t.token_type).toBe("bearer");
    expect(typeof t.access_token).toBe("string");
    expect(typeof t.refresh_token).toBe("string");
    expect(typeof t.expires_in).toBe("number");
    expect(t.scope.split(" ").sort()).toEqual([...ZOOM_SCOPES].sort());
    expect(t.api_url).toBe(new URL(zoom.apiUrl).origin);
  });

  it("client credentials in the body instead of HTTP Basic are refused", async () => {
    const { verifier, challenge } = pkcePair();
    const url = `${zoom.authUrl}?response_type=code&client_id=${zoom.clientId}&redirect_uri=${encodeURIComponent(REDIRECT)}&state=s&code_challenge=${challenge}&code_challenge_method=S256`;
    const code = new URL(zoom.approve(url)).searchParams.get("code")!;
    const res = await tokenCall({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier, client_id: zoom.clientId, client_secret: zoom.clientSecret }, {});
    expect(res).toEqual({ status: 400, body: { reason: "Client ID or client secret is missing.", error: "invalid_client" } });
    const wrong = await tokenCall({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier }, { authorization: `Basic ${Buffer.from(`${zoom.clientId}:nope`).toString("base64")}` });
    expect(wrong).toEqual({ status: 400, body: { reason: "Invalid client_id or client_secret", error: "invalid_client" } });
    // The code was not spent by the refused attempts.
    expect((await tokenCall({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier })).status).toBe(200);
  });

  it("a refresh rotates the refresh token and the old one is refused at once", async () => {
    const t = await connect();
    const first = await tokenCall({ grant_type: "refresh_token", refresh_token: t.refresh_token });
    expect(first.status).toBe(200);
    expect(first.body.refresh_token).not.toBe(t.refresh_token);
    expect(await tokenCall({ grant_type: "refresh_token", refresh_token: t.refresh_token })).toEqual({ status: 400, body: { reason: "Invalid Token!", error: "invalid_grant" } });
    expect((await tokenCall({ grant_type: "refresh_token", refresh_token: first.body.refresh_token as string })).status).toBe(200);
  });

  it("POST /oauth/revoke with Basic auth answers {status: success} and ends the grant", async () => {
    const t = await connect();
    const noAuth = await fetch(`${zoom.revokeUrl}?token=${t.access_token}`, { method: "POST" });
    expect(noAuth.status).toBe(400);
    const res = await fetch(`${zoom.revokeUrl}?token=${t.access_token}`, { method: "POST", headers: { authorization: basic() } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "success" });
    expect(await tokenCall({ grant_type: "refresh_token", refresh_token: t.refresh_token })).toEqual({ status: 400, body: { reason: "Invalid Token!", error: "invalid_grant" } });
    const me = await fetch(`${zoom.apiUrl}/users/me`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(me.status).toBe(401);
    expect(await me.json()).toEqual({ code: 124, message: "Invalid access token." });
  });
});

describe("Zoom API v2 through @zoom/rivet", () => {
  let tokens: ReturnType<typeof store>;
  let meetings: MeetingsOAuthClient;

  beforeAll(async () => {
    tokens = store(await connect());
    meetings = meetingsClient(tokens);
  });

  it("users.getUser('me') gives the account's id and e-mail", async () => {
    const users = new UsersOAuthClient({ ...common(), tokenStore: tokens });
    const res = await users.endpoints.users.getUser({ path: { userId: "me" } });
    expect(res.statusCode).toBe(200);
    expect(res.data).toMatchObject({ email: HOST, first_name: "Ada", last_name: "Host", timezone: "Europe/Berlin", type: 2, status: "active" });
    expect(res.data?.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(res.trackingId).toMatch(/^v=2\.0;/);
  });

  it("create (201), get, update (204, same join_url), delete (204), then 404 3001", async () => {
    const created = await meetings.endpoints.meetings.createMeeting({
      path: { userId: "me" },
      body: { topic: "Intro call", type: 2, start_time: "2031-04-01T10:00:00", timezone: "Europe/Berlin", duration: 30, agenda: "Booked online" },
    });
    expect(created.statusCode).toBe(201);
    const m = created.data!;
    expect(typeof m.id).toBe("number");
    expect(m).toMatchObject({ topic: "Intro call", type: 2, duration: 30, timezone: "Europe/Berlin", start_time: "2031-04-01T08:00:00Z", host_email: HOST });
    expect(m.join_url).toMatch(new RegExp(`^https://us05web\\.zoom\\.us/j/${m.id}\\?pwd=`));
    expect(m.start_url).toMatch(/\/s\/\d+\?zak=/);
    expect(m.password).toBeTruthy();
    expect(zoom.writes.at(-1)).toMatchObject({ kind: "create", meetingId: m.id, status: 201 });

    const got = await meetings.endpoints.meetings.getMeeting({ path: { meetingId: m.id! } });
    expect(got.data).toMatchObject({ id: m.id, uuid: expect.any(String), join_url: m.join_url, status: "waiting" });

    const moved = await meetings.endpoints.meetings.updateMeeting({ path: { meetingId: m.id! }, body: { start_time: "2031-04-02T09:00:00Z", duration: 45 } });
    expect(moved.statusCode).toBe(204);
    expect(zoom.meeting(m.id!)).toMatchObject({ start_time: "2031-04-02T09:00:00Z", duration: 45, join_url: m.join_url });

    const deleted = await meetings.endpoints.meetings.deleteMeeting({ path: { meetingId: m.id! } });
    expect(deleted.statusCode).toBe(204);
    const gone = await rejection(meetings.endpoints.meetings.getMeeting({ path: { meetingId: m.id! } }));
    expect(gone.message).toBe(`[404/3001]: "Meeting does not exist: ${m.id}."`);
    expect((await rejection(meetings.endpoints.meetings.deleteMeeting({ path: { meetingId: m.id! } }))).message).toBe(`[404/3001]: "Meeting does not exist: ${m.id}."`);
  });

  it("validation: a topic over 200 characters, a malformed start_time or a fractional duration is 400 code 300", async () => {
    for (const body of [
      { topic: "x".repeat(201), type: 2 as const },
      { topic: "t", type: 2 as const, start_time: "01/04/2031 10:00" },
      { topic: "t", type: 2 as const, duration: 30.5 },
    ]) {
      const e = await rejection(meetings.endpoints.meetings.createMeeting({ path: { userId: "me" }, body }));
      expect(e.message).toBe('[400/300]: "Validation Failed."');
    }
    const raw = await fetch(`${zoom.apiUrl}/users/me/meetings`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.token.accessToken}`, "content-type": "application/json" },
      body: JSON.stringify({ topic: "x".repeat(201), type: 2 }),
    });
    expect(await raw.json()).toEqual({ code: 300, message: "Validation Failed.", errors: [{ field: "topic", message: "The topic can be up to 200 characters." }] });
  });

  it("Rivet refreshes an almost expired token through the token endpoint; Zoom rotates it and the old refresh token is dead", async () => {
    // Rivet's OAuth endpoint is fixed to https://zoom.us; an axios interceptor sends it to the fake instead.
    const rewire = axios.interceptors.request.use((config) => {
      if (config.url?.startsWith("https://zoom.us/")) config.url = config.url.replace("https://zoom.us", new URL(zoom.tokenUrl).origin);
      return config;
    });
    try {
      const own = store(await connect(), 30);
      const old = own.token.refreshToken;
      const before = zoom.http.calls(ZOOM_ROUTES.token);
      const res = await meetingsClient(own).endpoints.meetings.createMeeting({ path: { userId: "me" }, body: { topic: "After refresh", type: 2, start_time: "2031-05-01T10:00:00Z", duration: 30 } });
      expect(res.statusCode).toBe(201);
      expect(zoom.http.calls(ZOOM_ROUTES.token)).toBe(before + 1);
      const sent = zoom.http.requests.filter((r) => r.route === ZOOM_ROUTES.token).at(-1)!;
      expect(sent.headers.authorization).toBe(basic());
      expect(Object.fromEntries(new URLSearchParams(sent.body))).toEqual({ grant_type: "refresh_token", refresh_token: old });
      expect(own.token.refreshToken).not.toBe(old);
      expect((await tokenCall({ grant_type: "refresh_token", refresh_token: old })).body).toEqual({ reason: "Invalid Token!", error: "invalid_grant" });
    } finally {
      axios.interceptors.request.eject(rewire);
    }
  });

  it("an access token expired at Zoom is 401 code 124; a token without the scope is 400 code 4711", async () => {
    const own = store(await connect());
    zoom.expireAccessToken(own.token.accessToken);
    const e = await rejection(meetingsClient(own).endpoints.meetings.getMeeting({ path: { meetingId: 1 } }));
    expect(e.message).toBe('[401/124]: "Access token is expired."');

    const narrow = store(await connect({ scopes: ["user:read:user"] }));
    const denied = await rejection(meetingsClient(narrow).endpoints.meetings.createMeeting({ path: { userId: "me" }, body: { topic: "t", type: 2 } }));
    expect(denied.message).toBe('[400/4711]: "Invalid access token, does not contain scopes:[meeting:write:meeting, meeting:write:meeting:admin]."');
  });

  it("429 with Retry-After by fault injection, as Zoom answers a rate limit", async () => {
    zoom.rateLimit(ZOOM_ROUTES.create, { retryAfter: 2 });
    const e = await rejection(meetings.endpoints.meetings.createMeeting({ path: { userId: "me" }, body: { topic: "t", type: 2 } }));
    expect(e.message).toBe('[429/429]: "You have reached the maximum per-second rate limit for this API. Try again later."');
    zoom.rateLimit(ZOOM_ROUTES.me, { retryAfter: 3 });
    const res = await fetch(`${zoom.apiUrl}/users/me`, { headers: { authorization: `Bearer ${tokens.token.accessToken}` } });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(res.headers.get("x-ratelimit-type")).toBe("QPS");
  });
});
