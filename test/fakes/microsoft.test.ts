// Proves the Microsoft fakes behave as the identity platform and Graph v1.0 document: by hand over HTTP, with Microsoft's own clients (msal-node, the Graph JS client), and through the consent page in Chromium.
import { execFileSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { ConfidentialClientApplication, CryptoProvider, ServerError } from "@azure/msal-node";
import { Client, GraphError, PageIterator, type PageCollection } from "@microsoft/microsoft-graph-client";
import type { Calendar, Event, User } from "@microsoft/microsoft-graph-types";
import { Agent, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../helpers/browser.js";
import { CONSUMER_TENANT, startFakeMicrosoft, type FakeMicrosoft, type MicrosoftUser } from "./microsoft.js";
import { pkcePair } from "./oauth.js";

const REDIRECT = "http://127.0.0.1:9/oauth/microsoft/callback";
const SCOPES = "Calendars.ReadWrite User.Read offline_access";

type Json = Record<string, unknown>;

async function postForm(url: string, fields: Record<string, string>): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(url, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields) });
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
}

function authorizeUrl(ms: FakeMicrosoft, o: { tenant?: string; scope?: string; challenge?: string; state?: string; nonce?: string } = {}): string {
  const url = new URL(`${ms.loginUrl}/${o.tenant ?? "common"}/oauth2/v2.0/authorize`);
  url.search = new URLSearchParams({
    client_id: ms.clientId,
    response_type: "code",
    redirect_uri: REDIRECT,
    response_mode: "query",
    scope: o.scope ?? SCOPES,
    state: o.state ?? "state-1",
    ...(o.challenge ? { code_challenge: o.challenge, code_challenge_method: "S256" } : {}),
    ...(o.nonce ? { nonce: o.nonce } : {}),
  }).toString();
  return url.toString();
}

/** Consent for `user`, then the token request: the answer and what was sent. */
async function signIn(ms: FakeMicrosoft, user: MicrosoftUser, o: { tenant?: string; scope?: string; nonce?: string } = {}) {
  const { verifier, challenge } = pkcePair();
  const back = new URL(ms.approve(authorizeUrl(ms, { ...o, challenge }), { user: user.id }));
  const code = back.searchParams.get("code");
  if (!code) throw new Error(`no code: ${back}`);
  const answer = await postForm(`${ms.loginUrl}/${o.tenant ?? "common"}/oauth2/v2.0/token`, {
    client_id: ms.clientId,
    client_secret: ms.clientSecret,
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
  });
  return { ...answer, code, verifier };
}

function refresh(ms: FakeMicrosoft, refreshToken: string, scope = SCOPES) {
  return postForm(`${ms.loginUrl}/common/oauth2/v2.0/token`, { client_id: ms.clientId, client_secret: ms.clientSecret, grant_type: "refresh_token", refresh_token: refreshToken, scope });
}

async function graphCall(ms: FakeMicrosoft, token: string | null, method: string, path: string, o: { body?: unknown; headers?: Record<string, string> } = {}) {
  const url = path.startsWith("http") ? path : `${ms.graphUrl}/v1.0${path}`;
  const res = await fetch(url, {
    method,
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(o.body !== undefined ? { "Content-Type": "application/json" } : {}), ...o.headers },
    body: o.body === undefined ? undefined : typeof o.body === "string" ? o.body : JSON.stringify(o.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as Json };
}

function aadCode(body: Json): number | undefined {
  return (body.error_codes as number[] | undefined)?.[0];
}

const TEAMS_EVENT = {
  subject: "Intro call",
  body: { contentType: "HTML", content: "<p>Answers: none</p>" },
  start: { dateTime: "2026-06-01T09:00:00", timeZone: "UTC" },
  end: { dateTime: "2026-06-01T09:30:00", timeZone: "UTC" },
  location: { displayName: "Online" },
  isOnlineMeeting: true,
  onlineMeetingProvider: "teamsForBusiness",
};

describe("identity platform v2.0 over HTTP", () => {
  let ms: FakeMicrosoft;
  let ada: MicrosoftUser;
  beforeAll(async () => {
    ms = await startFakeMicrosoft({ redirectUris: [REDIRECT] });
    ada = ms.addUser({ displayName: "Ada Lovelace", userPrincipalName: "ada@contoso.test" });
  });
  afterAll(() => ms.close());

  it("serves discovery per tenant and refuses tenants it does not know (AADSTS90002, AADSTS900023)", async () => {
    const common = (await (await fetch(`${ms.loginUrl}/common/v2.0/.well-known/openid-configuration`)).json()) as Json;
    expect(common).toMatchObject({
      issuer: `${ms.loginUrl}/{tenantid}/v2.0`,
      token_endpoint: `${ms.loginUrl}/common/oauth2/v2.0/token`,
      authorization_endpoint: `${ms.loginUrl}/common/oauth2/v2.0/authorize`,
    });
    const own = (await (await fetch(`${ms.loginUrl}/${ada.tenantId}/v2.0/.well-known/openid-configuration`)).json()) as Json;
    expect(own.issuer).toBe(`${ms.loginUrl}/${ada.tenantId}/v2.0`);

    const unknown = await fetch(`${ms.loginUrl}/11111111-2222-3333-4444-555555555555/v2.0/.well-known/openid-configuration`);
    expect(unknown.status).toBe(400);
    const body = (await unknown.json()) as Json;
    expect(body).toMatchObject({ error: "invalid_tenant", error_codes: [90002] });
    expect(body.error_description).toMatch(/^AADSTS90002: Tenant '11111111-2222-3333-4444-555555555555' not found\..*\r\nTrace ID: [0-9a-f-]{36}\r\nCorrelation ID: [0-9a-f-]{36}\r\nTimestamp: /s);
    expect(body).toHaveProperty("trace_id");
    expect(body).toHaveProperty("correlation_id");
    expect(body).toHaveProperty("timestamp");

    const token = await postForm(`${ms.loginUrl}/not-a-tenant/oauth2/v2.0/token`, { grant_type: "authorization_code", code: "x" });
    expect(token.status).toBe(400);
    expect(aadCode(token.body)).toBe(900023);
    const page = await fetch(authorizeUrl(ms, { tenant: "99999999-2222-3333-4444-555555555555" }));
    expect(page.status).toBe(400);
    expect(await page.text()).toContain("AADSTS90002");
  });

  it("redeems a code with PKCE; scopes may be short or full; offline_access is what brings a refresh token", async () => {
    const full = await signIn(ms, ada, { scope: "https://graph.microsoft.com/Calendars.ReadWrite https://graph.microsoft.com/user.read offline_access openid profile", nonce: "n-123" });
    expect(full.status).toBe(200);
    expect(full.headers.get("cache-control")).toBe("no-store");
    expect(full.body).toMatchObject({ token_type: "Bearer", expires_in: 3599, ext_expires_in: 3599, scope: "Calendars.ReadWrite User.Read openid profile" });
    expect(typeof full.body.refresh_token).toBe("string");
    const claims = JSON.parse(Buffer.from(String(full.body.id_token).split(".")[1], "base64url").toString()) as Json;
    expect(claims).toMatchObject({ aud: ms.clientId, tid: ada.tenantId, oid: ada.id, nonce: "n-123", preferred_username: "ada@contoso.test", ver: "2.0" });
    expect(JSON.parse(Buffer.from(String(full.body.client_info), "base64url").toString())).toEqual({ uid: ada.id, utid: ada.tenantId });

    const online = await signIn(ms, ada, { scope: "Calendars.ReadWrite User.Read" });
    expect(online.status).toBe(200);
    expect(online.body.refresh_token).toBeUndefined();
    expect(online.body.id_token).toBeUndefined();
  });

  it("words token errors as Entra does: AADSTS7000215, 50148, 501481, 54005, 9002313", async () => {
    const { verifier, challenge } = pkcePair();
    const code = () => new URL(ms.approve(authorizeUrl(ms, { challenge }), { user: ada.id })).searchParams.get("code") ?? "";
    const tokenUrl = `${ms.loginUrl}/common/oauth2/v2.0/token`;
    const base = { client_id: ms.clientId, client_secret: ms.clientSecret, grant_type: "authorization_code", redirect_uri: REDIRECT };

    const wrongSecret = await postForm(tokenUrl, { ...base, client_secret: "not-it", code: code(), code_verifier: verifier });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body).toMatchObject({ error: "invalid_client", error_codes: [7000215] });

    const noVerifier = await postForm(tokenUrl, { ...base, code: code() });
    expect([noVerifier.status, noVerifier.body.error, aadCode(noVerifier.body)]).toEqual([400, "invalid_grant", 50148]);
    const wrongVerifier = await postForm(tokenUrl, { ...base, code: code(), code_verifier: pkcePair().verifier });
    expect([wrongVerifier.body.error, aadCode(wrongVerifier.body)]).toEqual(["invalid_grant", 501481]);

    const once = code();
    expect((await postForm(tokenUrl, { ...base, code: once, code_verifier: verifier })).status).toBe(200);
    const twice = await postForm(tokenUrl, { ...base, code: once, code_verifier: verifier });
    expect([twice.body.error, aadCode(twice.body)]).toEqual(["invalid_grant", 54005]);
    const unknown = await postForm(tokenUrl, { ...base, code: "0.AQ-made-up", code_verifier: verifier });
    expect([unknown.body.error, aadCode(unknown.body)]).toEqual(["invalid_grant", 9002313]);
    const missing = await postForm(tokenUrl, base);
    expect([missing.status, missing.body.error, missing.body.error_description]).toEqual([400, "invalid_request", expect.stringMatching(/^AADSTS900144: The request body must contain the following parameter: 'code'\./)]);
  });

  it("rotates the refresh token on every refresh while the old one keeps working; revocation is AADSTS50173, expiry AADSTS70008", async () => {
    const first = await signIn(ms, ada);
    const rt1 = String(first.body.refresh_token);
    const second = await refresh(ms, rt1);
    expect(second.status).toBe(200);
    const rt2 = String(second.body.refresh_token);
    expect(rt2).not.toBe(rt1);
    expect((await refresh(ms, rt1)).status).toBe(200);

    expect(ms.expireRefreshToken(rt2)).toBe(1);
    const expired = await refresh(ms, rt2);
    expect([expired.status, expired.body.error, aadCode(expired.body)]).toEqual([400, "invalid_grant", 70008]);

    expect(ms.revoke(ada.id)).toBe(true);
    const revoked = await refresh(ms, rt1);
    expect([revoked.body.error, aadCode(revoked.body)]).toEqual(["invalid_grant", 50173]);
    expect(revoked.body.error_description).toMatch(/^AADSTS50173: /);
  });

  it("answers consent as Entra does: Deny (AADSTS65004), admin consent required (AADSTS65001), accounts that cannot sign in here", () => {
    const denied = new URL(ms.approve(authorizeUrl(ms, { state: "s-9" }), { user: ada.id, deny: true }));
    expect(Object.fromEntries(denied.searchParams)).toEqual({ error: "access_denied", error_description: "AADSTS65004: User declined to consent to access the app.", state: "s-9" });

    const guarded = ms.addUser({ requiresAdminConsent: true });
    const refused = new URL(ms.approve(authorizeUrl(ms, { tenant: guarded.tenantId }), { user: guarded.id }));
    expect(refused.searchParams.get("error")).toBe("consent_required");
    expect(refused.searchParams.get("error_description")).toMatch(/^AADSTS65001: /);
    expect(refused.searchParams.get("code")).toBeNull();

    const person = ms.addUser({ personal: true, mail: null, userPrincipalName: "grace@outlook.test" });
    expect(person.tenantId).toBe(CONSUMER_TENANT);
    expect(() => ms.approve(authorizeUrl(ms, { tenant: "organizations" }), { user: person.id })).toThrow(/AADSTS500200/);
    expect(new URL(ms.approve(authorizeUrl(ms, { tenant: "consumers" }), { user: person.id })).searchParams.get("code")).toBeTruthy();
    expect(() => ms.approve(authorizeUrl(ms, { tenant: "consumers" }), { user: ada.id })).toThrow(/AADSTS50020/);
    expect(() => ms.approve(authorizeUrl(ms, { tenant: guarded.tenantId }), { user: ada.id })).toThrow(/AADSTS50020/);
    expect(new URL(ms.approve(authorizeUrl(ms, { tenant: ada.tenantId }), { user: ada.id })).searchParams.get("code")).toBeTruthy();
  });
});

describe("Graph v1.0 over HTTP", () => {
  let ms: FakeMicrosoft;
  let ada: MicrosoftUser;
  let token: string;
  beforeAll(async () => {
    ms = await startFakeMicrosoft({ redirectUris: [REDIRECT] });
    ada = ms.addUser({ displayName: "Ada Lovelace", mail: "ada@contoso.test", userPrincipalName: "ada@contoso.onmicrosoft.test" });
    token = String((await signIn(ms, ada)).body.access_token);
  });
  afterAll(() => ms.close());

  it("GET /me: id, displayName, mail (null when there is none), userPrincipalName; User.Read is needed", async () => {
    const me = await graphCall(ms, token, "GET", "/me");
    expect(me.status).toBe(200);
    expect(me.headers.get("content-type")).toMatch(/^application\/json/);
    expect(me.body).toMatchObject({ id: ada.id, displayName: "Ada Lovelace", mail: "ada@contoso.test", userPrincipalName: "ada@contoso.onmicrosoft.test" });

    const nomail = ms.addUser({ mail: null, userPrincipalName: "bob@fabrikam.onmicrosoft.test" });
    const bobToken = String((await signIn(ms, nomail)).body.access_token);
    expect((await graphCall(ms, bobToken, "GET", "/me")).body).toMatchObject({ mail: null, userPrincipalName: "bob@fabrikam.onmicrosoft.test" });

    const calendarsOnly = String((await signIn(ms, nomail, { scope: "Calendars.ReadWrite" })).body.access_token);
    const denied = await graphCall(ms, calendarsOnly, "GET", "/me");
    expect(denied.status).toBe(403);
  });

  it("GET /me/calendars pages by ten with absolute @odata.nextLink", async () => {
    const carol = ms.addUser({ displayName: "Carol" });
    for (let i = 1; i <= 11; i++) ms.addCalendar(carol.id, { name: `Calendar ${i}`, canEdit: i % 2 === 0, owner: { name: "Team", address: "team@contoso.test" } });
    const t = String((await signIn(ms, carol)).body.access_token);
    const first = await graphCall(ms, t, "GET", "/me/calendars");
    const page1 = first.body.value as Calendar[];
    expect(page1).toHaveLength(10);
    expect(page1[0]).toMatchObject({ name: "Calendar", isDefaultCalendar: true, canEdit: true, owner: { name: "Carol" } });
    expect(page1[1]).toMatchObject({ name: "Calendar 1", canEdit: false, isDefaultCalendar: false, owner: { address: "team@contoso.test" } });
    const next = String(first.body["@odata.nextLink"]);
    expect(next.startsWith(`${ms.graphUrl}/v1.0/me/calendars?`)).toBe(true);
    const second = await graphCall(ms, t, "GET", next);
    expect((second.body.value as Calendar[]).map((c) => c.name)).toEqual(["Calendar 10", "Calendar 11"]);
    expect(second.body["@odata.nextLink"]).toBeUndefined();
  });

  it("calendarView needs its window (400 ErrorInvalidParameter with innerError)", async () => {
    const res = await graphCall(ms, token, "GET", `/me/calendars/${encodeURIComponent(ada.defaultCalendarId)}/calendarView?startDateTime=2026-06-01T00:00:00Z`);
    expect(res.status).toBe(400);
    const error = res.body.error as Json;
    expect(error).toMatchObject({ code: "ErrorInvalidParameter", message: "This request requires a time window specified by the query string parameters StartDateTime and EndDateTime." });
    expect(Object.keys(error.innerError as Json).sort()).toEqual(["client-request-id", "date", "request-id"]);
  });

  it("calendarView pages by $top or odata.maxpagesize (default 10), in UTC unless Prefer outlook.timezone, expanding daily series", async () => {
    const dana = ms.addUser({ displayName: "Dana" });
    const cal = dana.defaultCalendarId;
    for (let i = 0; i < 12; i++) {
      ms.addEvent(cal, { subject: `E${i}`, start: `2026-06-0${1 + (i % 5)}T${String(8 + Math.floor(i / 5)).padStart(2, "0")}:00:00Z`, end: `2026-06-0${1 + (i % 5)}T${String(9 + Math.floor(i / 5)).padStart(2, "0")}:00:00Z`, showAs: (["busy", "free", "tentative", "oof", "workingElsewhere", "unknown"] as const)[i % 6] });
    }
    ms.addEvent(cal, { subject: "Cancelled", start: "2026-06-02T12:00:00Z", end: "2026-06-02T13:00:00Z", isCancelled: true });
    ms.addEvent(cal, { subject: "Offsite", start: "2026-06-03", end: "2026-06-04", isAllDay: true });
    // 07:00 in Berlin every day for three days, across nothing tricky: 05:00 UTC in summer.
    ms.addEvent(cal, { subject: "Standup", start: "2026-06-01T05:00:00Z", end: "2026-06-01T05:15:00Z", timeZone: "Europe/Berlin", daily: { count: 3 } });
    ms.addEvent(cal, { subject: "Outside", start: "2026-07-01T05:00:00Z", end: "2026-07-01T06:00:00Z" });
    const t = String((await signIn(ms, dana)).body.access_token);
    const view = `/me/calendars/${encodeURIComponent(cal)}/calendarView?startDateTime=2026-06-01T00:00:00Z&endDateTime=2026-06-08T00:00:00Z`;

    const all: Event[] = [];
    let next: string | undefined = view;
    let pages = 0;
    while (next) {
      const res = await graphCall(ms, t, "GET", next);
      expect(res.status).toBe(200);
      all.push(...(res.body.value as Event[]));
      next = res.body["@odata.nextLink"] as string | undefined;
      if (next) expect(next.startsWith(`${ms.graphUrl}/v1.0/me/calendars/`)).toBe(true);
      pages += 1;
    }
    expect(all).toHaveLength(17);
    expect(pages).toBe(2);
    const starts = all.map((e) => e.start?.dateTime ?? "");
    expect([...starts].sort()).toEqual(starts);
    const e0 = all.find((e) => e.subject === "E0");
    expect(e0).toMatchObject({ start: { dateTime: "2026-06-01T08:00:00.0000000", timeZone: "UTC" }, end: { dateTime: "2026-06-01T09:00:00.0000000", timeZone: "UTC" }, showAs: "busy", isCancelled: false, isAllDay: false, type: "singleInstance" });
    expect(new Set(all.map((e) => e.showAs))).toEqual(new Set(["busy", "free", "tentative", "oof", "workingElsewhere", "unknown"]));
    expect(all.find((e) => e.subject === "Cancelled")?.isCancelled).toBe(true);
    expect(all.find((e) => e.subject === "Offsite")).toMatchObject({ isAllDay: true, start: { dateTime: "2026-06-03T00:00:00.0000000" }, end: { dateTime: "2026-06-04T00:00:00.0000000" } });
    const standups = all.filter((e) => e.subject === "Standup");
    expect(standups.map((e) => e.start?.dateTime)).toEqual(["2026-06-01T05:00:00.0000000", "2026-06-02T05:00:00.0000000", "2026-06-03T05:00:00.0000000"]);
    expect(standups.every((e) => e.type === "occurrence" && typeof e.seriesMasterId === "string")).toBe(true);
    expect(new Set(standups.map((e) => e.id)).size).toBe(3);
    expect(new Set(standups.map((e) => e.iCalUId)).size).toBe(3);
    const occurrence = await graphCall(ms, t, "GET", `/me/events/${encodeURIComponent(String(standups[1].id))}`);
    expect(occurrence.body).toMatchObject({ subject: "Standup", type: "occurrence", start: { dateTime: "2026-06-02T05:00:00.0000000" } });

    const top = await graphCall(ms, t, "GET", `${view}&$top=7`);
    expect(top.body.value).toHaveLength(7);
    expect(new URL(String(top.body["@odata.nextLink"])).searchParams.get("$top")).toBe("7");
    const max = await graphCall(ms, t, "GET", view, { headers: { Prefer: "odata.maxpagesize=5" } });
    expect(max.body.value).toHaveLength(5);
    expect(max.headers.get("preference-applied")).toBe("odata.maxpagesize=5");

    const pacific = await graphCall(ms, t, "GET", view, { headers: { Prefer: 'outlook.timezone="Pacific Standard Time"' } });
    expect((pacific.body.value as Event[]).find((e) => e.subject === "E0")?.start).toEqual({ dateTime: "2026-06-01T01:00:00.0000000", timeZone: "Pacific Standard Time" });
    expect(pacific.headers.get("preference-applied")).toBe('outlook.timezone="Pacific Standard Time"');
    const bad = await graphCall(ms, t, "GET", view, { headers: { Prefer: 'outlook.timezone="Mars/Olympus"' } });
    expect([bad.status, (bad.body.error as Json).code]).toEqual([400, "TimeZoneNotSupportedException"]);
  });

  it("POST …/events validates as Graph does, makes a Teams meeting, and answers a repeated transactionId with the same event", async () => {
    const erin = ms.addUser({ displayName: "Erin" });
    const readOnly = ms.addCalendar(erin.id, { name: "Team (read only)", canEdit: false });
    const t = String((await signIn(ms, erin)).body.access_token);
    const events = `/me/calendars/${encodeURIComponent(erin.defaultCalendarId)}/events`;
    const refusal = async (body: unknown) => {
      const res = await graphCall(ms, t, "POST", events, { body });
      return [res.status, (res.body.error as Json).code];
    };
    expect(await refusal("{not json")).toEqual([400, "BadRequest"]);
    expect(await refusal({ ...TEAMS_EVENT, colour: "red" })).toEqual([400, "RequestBodyRead"]);
    expect(await refusal({ ...TEAMS_EVENT, start: { dateTime: "2026-06-01T09:00:00", timeZone: "Nowhere/Special" } })).toEqual([400, "TimeZoneNotSupportedException"]);
    expect(await refusal({ ...TEAMS_EVENT, end: { dateTime: "2026-06-01T08:00:00", timeZone: "UTC" } })).toEqual([400, "ErrorCalendarEndDateIsEarlierThanStartDate"]);
    expect(await refusal({ ...TEAMS_EVENT, showAs: "away" })).toEqual([400, "RequestBodyRead"]);
    expect(await refusal({ ...TEAMS_EVENT, attendees: [{ emailAddress: { address: "not an address" } }] })).toEqual([400, "ErrorInvalidRecipients"]);
    expect(ms.writtenEvents()).toHaveLength(0);

    const created = await graphCall(ms, t, "POST", events, { body: { ...TEAMS_EVENT, start: { dateTime: "2026-06-01T11:00:00", timeZone: "W. Europe Standard Time" }, end: { dateTime: "2026-06-01T11:30:00", timeZone: "W. Europe Standard Time" }, transactionId: "booking-42" } });
    expect(created.status).toBe(201);
    const event = created.body as Event;
    expect(event).toMatchObject({
      subject: "Intro call",
      isOnlineMeeting: true,
      onlineMeetingProvider: "teamsForBusiness",
      onlineMeetingUrl: null,
      transactionId: "booking-42",
      // The answer keeps the zone the event was written in; a GET answers UTC.
      start: { dateTime: "2026-06-01T11:00:00.0000000", timeZone: "W. Europe Standard Time" },
      originalStartTimeZone: "W. Europe Standard Time",
      showAs: "busy",
      location: { displayName: "Online" },
    });
    expect(event.onlineMeeting?.joinUrl).toMatch(/^https:\/\/teams\.microsoft\.com\/l\/meetup-join\//);
    expect(event.iCalUId).toMatch(/^040000008200E00074C5B7101A82E008/);
    const read = await graphCall(ms, t, "GET", `/me/events/${encodeURIComponent(String(event.id))}`);
    expect(read.body).toMatchObject({ start: { dateTime: "2026-06-01T09:00:00.0000000", timeZone: "UTC" } });

    const again = await graphCall(ms, t, "POST", events, { body: { ...TEAMS_EVENT, transactionId: "booking-42" } });
    expect([again.status, (again.body as Event).id, (again.body as Event).onlineMeeting?.joinUrl]).toEqual([201, event.id, event.onlineMeeting?.joinUrl]);
    expect(ms.writtenEvents()).toHaveLength(1);
    expect(ms.invitations()).toHaveLength(0);

    const withGuest = await graphCall(ms, t, "POST", events, { body: { ...TEAMS_EVENT, attendees: [{ emailAddress: { address: "guest@example.test", name: "Guest" }, type: "required" }] } });
    expect(withGuest.status).toBe(201);
    expect(ms.invitations()).toEqual([expect.objectContaining({ kind: "request", eventId: (withGuest.body as Event).id, to: ["guest@example.test"] })]);

    const onReadOnly = await graphCall(ms, t, "POST", `/me/calendars/${encodeURIComponent(readOnly.id)}/events`, { body: TEAMS_EVENT });
    expect([onReadOnly.status, (onReadOnly.body.error as Json).code]).toEqual([403, "ErrorAccessDenied"]);
    const readToken = String((await signIn(ms, erin, { scope: "Calendars.Read User.Read" })).body.access_token);
    const readScope = await graphCall(ms, readToken, "POST", events, { body: TEAMS_EVENT });
    expect([readScope.status, (readScope.body.error as Json).code]).toEqual([403, "ErrorAccessDenied"]);
    expect((await graphCall(ms, readToken, "GET", "/me/calendars")).status).toBe(200);

    const personal = ms.addUser({ personal: true });
    const personalToken = String((await signIn(ms, personal, { tenant: "consumers" })).body.access_token);
    const noTeams = await graphCall(ms, personalToken, "POST", `/me/calendars/${encodeURIComponent(personal.defaultCalendarId)}/events`, { body: TEAMS_EVENT });
    expect(noTeams.body).toMatchObject({ isOnlineMeeting: false, onlineMeeting: null });
  });

  it("PATCH keeps the meeting and its joinUrl; DELETE answers 204, then 404 ErrorItemNotFound; attendees would be told", async () => {
    const frank = ms.addUser({ displayName: "Frank" });
    const t = String((await signIn(ms, frank)).body.access_token);
    const created = (await graphCall(ms, t, "POST", `/me/calendars/${encodeURIComponent(frank.defaultCalendarId)}/events`, { body: { ...TEAMS_EVENT, attendees: [{ emailAddress: { address: "g@example.test" } }] } })).body as Event;
    const path = `/me/events/${encodeURIComponent(String(created.id))}`;
    const moved = await graphCall(ms, t, "PATCH", path, { body: { start: { dateTime: "2026-06-02T09:00:00", timeZone: "UTC" }, end: { dateTime: "2026-06-02T09:30:00", timeZone: "UTC" } } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: created.id, start: { dateTime: "2026-06-02T09:00:00.0000000" }, isOnlineMeeting: true, onlineMeeting: { joinUrl: created.onlineMeeting?.joinUrl } });
    expect((await graphCall(ms, t, "GET", path)).body).toMatchObject({ start: { dateTime: "2026-06-02T09:00:00.0000000" } });

    expect((await graphCall(ms, t, "DELETE", path)).status).toBe(204);
    const gone = await graphCall(ms, t, "GET", path);
    expect([gone.status, (gone.body.error as Json).code]).toEqual([404, "ErrorItemNotFound"]);
    expect((await graphCall(ms, t, "DELETE", path)).status).toBe(404);
    expect(ms.deletedEvents().map((e) => e.id)).toEqual([created.id]);
    expect(ms.invitations().filter((i) => i.eventId === created.id).map((i) => i.kind)).toEqual(["request", "update", "cancellation"]);
  });

  it("401 InvalidAuthenticationToken for a missing, unknown, expired or revoked token, with Graph's challenge", async () => {
    const gus = ms.addUser();
    const first = await signIn(ms, gus);
    const t = String(first.body.access_token);
    const missing = await graphCall(ms, null, "GET", "/me");
    expect([missing.status, (missing.body.error as Json).code, (missing.body.error as Json).message]).toEqual([401, "InvalidAuthenticationToken", "Access token is empty."]);
    expect(missing.headers.get("www-authenticate")).toContain('client_id="00000003-0000-0000-c000-000000000000"');
    expect((await graphCall(ms, "made-up", "GET", "/me")).status).toBe(401);
    expect(ms.expireAccessToken(t)).toBe(1);
    const expired = await graphCall(ms, t, "GET", "/me");
    expect([expired.status, (expired.body.error as Json).message]).toEqual([401, "Lifetime validation failed, the token is expired."]);
    const fresh = String((await refresh(ms, String(first.body.refresh_token))).body.access_token);
    expect((await graphCall(ms, fresh, "GET", "/me")).status).toBe(200);
    ms.revoke(gus.id);
    expect((await graphCall(ms, fresh, "GET", "/me")).status).toBe(401);
  });

  it("faults per route: 429 with Retry-After, 503, 504, a hang, a slow answer; request log and call counts", async () => {
    const view = `/me/calendars/${encodeURIComponent(ada.defaultCalendarId)}/calendarView?startDateTime=2026-06-01T00:00:00Z&endDateTime=2026-06-02T00:00:00Z`;
    const before = ms.calls("calendarView");
    ms.throttle("calendarView", { retryAfterSeconds: 7 });
    const throttled = await graphCall(ms, token, "GET", view);
    expect([throttled.status, throttled.headers.get("retry-after"), (throttled.body.error as Json).code]).toEqual([429, "7", "ApplicationThrottled"]);
    expect((await graphCall(ms, token, "GET", view)).status).toBe(200);

    ms.unavailable("createEvent", { status: 503, retryAfterSeconds: 2 });
    const events = `/me/calendars/${encodeURIComponent(ada.defaultCalendarId)}/events`;
    const down = await graphCall(ms, token, "POST", events, { body: TEAMS_EVENT });
    expect([down.status, down.headers.get("retry-after")]).toEqual([503, "2"]);
    ms.unavailable("me", { status: 504 });
    expect((await graphCall(ms, token, "GET", "/me")).status).toBe(504);
    expect(ms.writtenEvents().filter((e) => e.userId === ada.id)).toHaveLength(0);

    ms.fault("me", { hang: true });
    const hung = await fetch(`${ms.graphUrl}/v1.0/me`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(300) }).then(
      () => "answered",
      (e: Error) => e.name,
    );
    expect(hung).toBe("TimeoutError");
    ms.fault("me", { delayMs: 250 });
    const t0 = Date.now();
    expect((await graphCall(ms, token, "GET", "/me")).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(240);

    ms.fault("token", { status: 500, body: { error: "server_error" } });
    expect((await refresh(ms, "whatever")).status).toBe(500);

    expect(ms.calls("calendarView") - before).toBe(2);
    const logged = ms.requests().filter((r) => r.route === "GET /v1.0/me/calendars/:calendarId/calendarView").slice(-2);
    expect(logged.map((r) => r.status)).toEqual([429, 200]);
    expect(logged[0].query).toMatchObject({ startDateTime: "2026-06-01T00:00:00Z" });
  });
});

/** A self-signed certificate for 127.0.0.1: MSAL and the Graph client only talk https. */
function selfSigned(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), "ms-fake-tls-"));
  try {
    execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { stdio: "ignore" });
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("Microsoft's own clients against the fakes (https)", () => {
  let ms: FakeMicrosoft;
  let ada: MicrosoftUser;
  let previous: Dispatcher;
  let cca: ConfidentialClientApplication;
  const scopes = ["Calendars.ReadWrite", "User.Read", "offline_access"];

  beforeAll(async () => {
    const tls = selfSigned();
    // Both clients use the global fetch; this file's process trusts the fake's certificate and nothing else changes.
    previous = getGlobalDispatcher();
    setGlobalDispatcher(new Agent({ connect: { ca: tls.cert } }));
    ms = await startFakeMicrosoft({ tls, redirectUris: [REDIRECT] });
    ada = ms.addUser({ displayName: "Ada Lovelace", userPrincipalName: "ada@contoso.test" });
    cca = new ConfidentialClientApplication({
      // knownAuthorities: MSAL trusts this host and reads its endpoints from the discovery document.
      auth: { clientId: ms.clientId, clientSecret: ms.clientSecret, authority: `${ms.loginUrl}/${ada.tenantId}`, knownAuthorities: [new URL(ms.loginUrl).host] },
    });
  });
  afterAll(async () => {
    await ms.close();
    setGlobalDispatcher(previous);
  });

  async function msalSignIn(): Promise<{ accessToken: string; homeAccountId: string }> {
    const { verifier, challenge } = await new CryptoProvider().generatePkceCodes();
    const url = await cca.getAuthCodeUrl({ scopes, redirectUri: REDIRECT, codeChallenge: challenge, codeChallengeMethod: "S256", state: "msal-state" });
    const back = new URL(ms.approve(url, { user: ada.id }));
    expect(back.searchParams.get("state")).toBe("msal-state");
    const result = await cca.acquireTokenByCode({ code: back.searchParams.get("code") ?? "", scopes, redirectUri: REDIRECT, codeVerifier: verifier });
    return { accessToken: result.accessToken, homeAccountId: result.account?.homeAccountId ?? "" };
  }

  it("msal-node: discovery, getAuthCodeUrl with PKCE, acquireTokenByCode, silent refresh and acquireTokenByRefreshToken; errors as ServerError", async () => {
    const first = await msalSignIn();
    expect(first.homeAccountId).toBe(`${ada.id}.${ada.tenantId}`);
    expect(ms.calls("discovery")).toBeGreaterThanOrEqual(1);
    const tokenRequest = ms.requests().filter((r) => r.route === "POST /:tenant/oauth2/v2.0/token").at(-1);
    expect(new URLSearchParams(tokenRequest?.body).get("code_verifier")).toBeTruthy();

    const account = await cca.getTokenCache().getAccountByHomeId(first.homeAccountId);
    if (!account) throw new Error("MSAL cached no account");
    expect(account.username).toBe("ada@contoso.test");
    const silent = await cca.acquireTokenSilent({ account, scopes, forceRefresh: true });
    expect(silent.accessToken).not.toBe(first.accessToken);
    const refreshes = ms.requests().filter((r) => r.route === "POST /:tenant/oauth2/v2.0/token" && new URLSearchParams(r.body).get("grant_type") === "refresh_token");
    expect(refreshes).toHaveLength(1);

    const rotated = ms.oauth.grants({ live: true }).flatMap((g) => g.liveRefreshTokens);
    const byRefresh = await cca.acquireTokenByRefreshToken({ refreshToken: rotated[rotated.length - 1], scopes });
    expect(byRefresh?.accessToken).toBeTruthy();
    expect((await graphCall(ms, byRefresh?.accessToken ?? "", "GET", "/me")).body).toMatchObject({ id: ada.id });

    ms.revoke(ada.id);
    const failure = await cca.acquireTokenSilent({ account, scopes, forceRefresh: true }).then(() => undefined, (e: unknown) => e);
    expect(failure).toBeInstanceOf(ServerError);
    expect((failure as ServerError).errorCode).toBe("invalid_grant");
    expect((failure as ServerError).errorMessage).toContain("AADSTS50173");

    const wrong = new ConfidentialClientApplication({
      auth: { clientId: ms.clientId, clientSecret: "wrong", authority: `${ms.loginUrl}/common`, knownAuthorities: [new URL(ms.loginUrl).host] },
    });
    const { verifier, challenge } = await new CryptoProvider().generatePkceCodes();
    const url = await wrong.getAuthCodeUrl({ scopes, redirectUri: REDIRECT, codeChallenge: challenge, codeChallengeMethod: "S256" });
    const code = new URL(ms.approve(url, { user: ada.id })).searchParams.get("code") ?? "";
    const refused = await wrong.acquireTokenByCode({ code, scopes, redirectUri: REDIRECT, codeVerifier: verifier }).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(ServerError);
    expect((refused as ServerError).errorCode).toBe("invalid_client");
    expect((refused as ServerError).errorMessage).toContain("AADSTS7000215");
  });

  it("Graph JS client: Client.init with a custom baseUrl, calendars, calendarView through PageIterator, events post/patch/delete, GraphError", async () => {
    const user = ms.addUser({ displayName: "Hedy", mail: "hedy@contoso.test" });
    for (let i = 0; i < 13; i++) ms.addEvent(user.defaultCalendarId, { subject: `Busy ${i}`, start: new Date(Date.UTC(2026, 5, 1, 8 + i)), end: new Date(Date.UTC(2026, 5, 1, 8 + i, 30)) });
    const { verifier, challenge } = await new CryptoProvider().generatePkceCodes();
    const url = await cca.getAuthCodeUrl({ scopes, redirectUri: REDIRECT, codeChallenge: challenge, codeChallengeMethod: "S256", authority: `${ms.loginUrl}/common` });
    const code = new URL(ms.approve(url, { user: user.id })).searchParams.get("code") ?? "";
    const result = await cca.acquireTokenByCode({ code, scopes, redirectUri: REDIRECT, codeVerifier: verifier, authority: `${ms.loginUrl}/common` });
    let accessToken = result.accessToken;
    const client = Client.init({
      baseUrl: `${ms.graphUrl}/`,
      // The client only attaches the token for Graph's own hosts and those listed here (host names, no port).
      customHosts: new Set([new URL(ms.graphUrl).hostname]),
      authProvider: (done) => done(null, accessToken),
    });

    const me = (await client.api("/me").get()) as User;
    expect(me).toMatchObject({ id: user.id, mail: "hedy@contoso.test" });
    const calendars = (await client.api("/me/calendars").get()) as PageCollection;
    expect((calendars.value as Calendar[]).map((c) => c.name)).toEqual(["Calendar"]);

    const first = (await client
      .api(`/me/calendars/${encodeURIComponent(user.defaultCalendarId)}/calendarView`)
      .query({ startDateTime: "2026-06-01T00:00:00Z", endDateTime: "2026-06-02T00:00:00Z" })
      .header("Prefer", "odata.maxpagesize=5")
      .get()) as PageCollection;
    const seen: Event[] = [];
    const iterator = new PageIterator(client, first, (e: Event) => {
      seen.push(e);
      return true;
    }, { headers: { Prefer: "odata.maxpagesize=5" } });
    await iterator.iterate();
    expect(seen.map((e) => e.subject)).toEqual(Array.from({ length: 13 }, (_, i) => `Busy ${i}`));
    expect(ms.calls("calendarView")).toBe(3);

    const created = (await client.api(`/me/calendars/${encodeURIComponent(user.defaultCalendarId)}/events`).post({ ...TEAMS_EVENT, transactionId: "sdk-1" })) as Event;
    expect(created.onlineMeeting?.joinUrl).toBeTruthy();
    const patched = (await client.api(`/me/events/${encodeURIComponent(String(created.id))}`).patch({ subject: "Moved call" })) as Event;
    expect([patched.subject, patched.onlineMeeting?.joinUrl]).toEqual(["Moved call", created.onlineMeeting?.joinUrl]);
    await client.api(`/me/events/${encodeURIComponent(String(created.id))}`).delete();

    const notFound = await client.api(`/me/events/${encodeURIComponent(String(created.id))}`).get().then(() => undefined, (e: unknown) => e);
    expect(notFound).toBeInstanceOf(GraphError);
    expect([(notFound as GraphError).statusCode, (notFound as GraphError).code]).toEqual([404, "ErrorItemNotFound"]);
    expect((notFound as GraphError).requestId).toBeTruthy();

    ms.throttle("me", { retryAfterSeconds: 0, code: "TooManyRequests", message: "Too many requests", times: 10 });
    const throttled = await client.api("/me").get().then(() => undefined, (e: unknown) => e);
    expect([(throttled as GraphError).statusCode, (throttled as GraphError).code]).toEqual([429, "TooManyRequests"]);
    ms.clearFaults();

    ms.expireAccessToken(accessToken);
    const expired = await client.api("/me").get().then(() => undefined, (e: unknown) => e);
    expect([(expired as GraphError).statusCode, (expired as GraphError).code]).toEqual([401, "InvalidAuthenticationToken"]);
    const account = await cca.getTokenCache().getAccountByHomeId(result.account?.homeAccountId ?? "");
    if (!account) throw new Error("MSAL cached no account");
    // MSAL's cache still believes in the token the server expired: after a 401 a client forces the refresh.
    accessToken = (await cca.acquireTokenSilent({ account, scopes, authority: `${ms.loginUrl}/common`, forceRefresh: true })).accessToken;
    expect(((await client.api("/me").get()) as User).id).toBe(user.id);
  });
});

describe("consent page in Chromium", () => {
  let ms: FakeMicrosoft;
  let callback: Server;
  let callbackUrl: string;
  const landed: URL[] = [];

  beforeAll(async () => {
    // A stand-in for the service's callback: it records where the browser landed.
    callback = createServer((req, res) => {
      const url = new URL(req.url ?? "/", callbackUrl);
      // Chromium also asks for /favicon.ico.
      if (url.pathname === "/oauth/microsoft/callback") landed.push(url);
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end("<!doctype html><title>connected</title><p>connected</p>");
    });
    await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve));
    callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/oauth/microsoft/callback`;
    ms = await startFakeMicrosoft({ redirectUris: [callbackUrl] });
  });
  afterAll(async () => {
    await ms.close();
    await new Promise<void>((resolve) => callback.close(() => resolve()));
  });

  it("a person picks their account, clicks Allow, and lands on the redirect_uri with a code that redeems", async () => {
    ms.addUser({ displayName: "Someone Else" });
    const ada = ms.addUser({ displayName: "Ada Lovelace" });
    const { verifier, challenge } = pkcePair();
    const url = new URL(authorizeUrl(ms, { challenge, state: "browser-state" }));
    url.searchParams.set("redirect_uri", callbackUrl);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(url.toString());
      await page.selectOption("#user", ada.id);
      await Promise.all([page.waitForURL((u) => u.pathname === "/oauth/microsoft/callback"), page.click("button[value=allow]")]);
      expect(await page.textContent("p")).toBe("connected");
    } finally {
      await browser.close();
    }
    expect(landed).toHaveLength(1);
    expect(landed[0].searchParams.get("state")).toBe("browser-state");
    const answer = await postForm(`${ms.loginUrl}/common/oauth2/v2.0/token`, {
      client_id: ms.clientId,
      client_secret: ms.clientSecret,
      grant_type: "authorization_code",
      code: landed[0].searchParams.get("code") ?? "",
      redirect_uri: callbackUrl,
      code_verifier: verifier,
    });
    expect(answer.status).toBe(200);
    expect(ms.oauth.grants()[0].user.id).toBe(ada.id);
  });
});
