// The fake Google speaks the real protocol: Google's own clients (@googleapis/calendar, google-auth-library's OAuth2Client) pointed at it connect, read, write and fail as they would against Google.
import { calendar, type calendar_v3 } from "@googleapis/calendar";
import { CodeChallengeMethod, OAuth2Client, type Credentials } from "google-auth-library";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { GOOGLE_ROUTES, GOOGLE_SCOPES, startFakeGoogle, type FakeGoogle } from "./google.js";

const REDIRECT = "http://127.0.0.1:9/oauth/google/callback";
const ALL_SCOPES = Object.values(GOOGLE_SCOPES);
const HOST = "host@example.test";

let google: FakeGoogle;

beforeAll(async () => {
  google = await startFakeGoogle({ redirectUris: [REDIRECT], users: [{ email: HOST, timeZone: "Europe/Berlin" }, { email: "other@example.test" }] });
});
afterAll(() => google.close());
afterEach(() => google.http.clearFaults());

function oauthClient(opts: { forceRefreshOnFailure?: boolean } = {}): OAuth2Client {
  return new OAuth2Client({
    clientId: google.clientId,
    clientSecret: google.clientSecret,
    redirectUri: REDIRECT,
    // The library's own option for other endpoints than Google's (oauth2client.ts, `endpoints`).
    endpoints: { oauth2AuthBaseUrl: google.authUrl, oauth2TokenUrl: google.tokenUrl, oauth2RevokeUrl: google.revokeUrl },
    forceRefreshOnFailure: opts.forceRefreshOnFailure,
  });
}

/** The whole authorization-code + PKCE dance through OAuth2Client: a client holding fresh tokens. */
async function connect(opts: { user?: string; scopes?: string[]; offline?: boolean; forceRefreshOnFailure?: boolean } = {}): Promise<{ client: OAuth2Client; tokens: Credentials }> {
  const client = oauthClient(opts);
  const { codeVerifier, codeChallenge } = await client.generateCodeVerifierAsync();
  const url = client.generateAuthUrl({
    access_type: opts.offline === false ? "online" : "offline",
    prompt: "consent",
    scope: opts.scopes ?? ALL_SCOPES,
    state: "state-123",
    code_challenge_method: CodeChallengeMethod.S256,
    code_challenge: codeChallenge,
    login_hint: opts.user ?? HOST,
  });
  const back = new URL(google.approve(url));
  expect(back.searchParams.get("state")).toBe("state-123");
  const { tokens } = await client.getToken({ code: back.searchParams.get("code")!, codeVerifier });
  client.setCredentials(tokens);
  return { client, tokens };
}

function api(auth: OAuth2Client): calendar_v3.Calendar {
  // rootUrl is googleapis-common's option for another host than www.googleapis.com.
  return calendar({ version: "v3", auth, rootUrl: `${google.apiUrl}/` });
}

interface ApiFailure {
  status: number;
  headers: Record<string, string>;
  data: unknown;
}
/** The GaxiosError a call rejects with, reduced to what the assertions read. */
async function failure(p: Promise<unknown>): Promise<ApiFailure & { name: string; message: string }> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof Error)) throw new Error("the call succeeded");
  const e = err as Error & { status?: number; response?: { headers: Headers; data: unknown } };
  return {
    name: err.constructor.name,
    message: err.message,
    status: e.status ?? 0,
    headers: Object.fromEntries(e.response?.headers ?? []),
    data: e.response?.data,
  };
}
const reason = (f: ApiFailure) => (f.data as { error: { errors: { reason: string }[] } }).error.errors[0].reason;

describe("OAuth 2.0 through google-auth-library's OAuth2Client", () => {
  it("authorization code with PKCE gives an access token, a refresh token (offline) and the granted scopes", async () => {
    const { tokens } = await connect();
    expect(tokens.access_token).toMatch(/^ya29\./);
    expect(tokens.refresh_token).toMatch(/^1\/\//);
    expect(tokens.scope?.split(" ").sort()).toEqual([...ALL_SCOPES].sort());
    expect(tokens.token_type).toBe("Bearer");
    expect(tokens.expiry_date).toBeGreaterThan(Date.now());
    const sent = google.http.requests.filter((r) => r.route === GOOGLE_ROUTES.token).at(-1)!;
    expect(new URLSearchParams(sent.body).get("code_verifier")).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
  });

  it("without access_type=offline there is no refresh token", async () => {
    const { tokens } = await connect({ offline: false });
    expect(tokens.refresh_token ?? undefined).toBeUndefined();
  });

  it("refreshAccessToken keeps the refresh token (Google does not rotate it)", async () => {
    const { client, tokens } = await connect();
    const { credentials } = await client.refreshAccessToken();
    expect(credentials.access_token).not.toBe(tokens.access_token);
    expect(credentials.refresh_token).toBe(tokens.refresh_token);
    expect(google.grants().find((g) => g.liveRefreshTokens.includes(tokens.refresh_token!))?.revoked).toBe(false);
  });

  it("an expired token is refreshed before the call (expiry_date) and after a 401 (forceRefreshOnFailure)", async () => {
    const { client, tokens } = await connect({ forceRefreshOnFailure: true });
    const before = google.http.calls(GOOGLE_ROUTES.token);
    client.setCredentials({ ...tokens, expiry_date: Date.now() - 1000 });
    expect((await api(client).calendarList.list()).status).toBe(200);
    expect(google.http.calls(GOOGLE_ROUTES.token)).toBe(before + 1);

    // Expired at Google while the client still believes it valid: 401, one refresh, the call repeated.
    expect(google.expireAccessToken(client.credentials.access_token!)).toBe(1);
    const listCalls = google.http.calls(GOOGLE_ROUTES.calendarList);
    expect((await api(client).calendarList.list()).status).toBe(200);
    expect(google.http.calls(GOOGLE_ROUTES.token)).toBe(before + 2);
    expect(google.http.calls(GOOGLE_ROUTES.calendarList)).toBe(listCalls + 2);
    expect(google.http.requests.filter((r) => r.route === GOOGLE_ROUTES.calendarList).at(-2)!.status).toBe(401);
  });

  it("revokeToken ends the grant: the next refresh is invalid_grant, the API answers 401", async () => {
    const { client, tokens } = await connect();
    await client.revokeToken(tokens.refresh_token!);
    expect(google.grants().find((g) => g.user.email === HOST && !g.revoked)).toBeUndefined();
    const f = await failure(client.refreshAccessToken());
    expect(f.name).toBe("GaxiosError");
    expect(f.message).toBe("invalid_grant");
    expect(f.status).toBe(400);
    expect(f.data).toEqual({ error: "invalid_grant", error_description: "Token has been expired or revoked." });
    const denied = await failure(api(oauthWith(tokens.access_token!)).calendarList.list());
    expect(denied.status).toBe(401);
    expect(reason(denied)).toBe("authError");
    // A token Google no longer knows cannot be revoked twice.
    expect((await failure(client.revokeToken(tokens.refresh_token!))).data).toEqual({ error: "invalid_token", error_description: "Token expired or revoked" });
  });
});

/** A client holding only an access token, so a 401 is not papered over by a refresh. */
function oauthWith(accessToken: string): OAuth2Client {
  const c = oauthClient();
  c.setCredentials({ access_token: accessToken });
  return c;
}

describe("Calendar API v3 through @googleapis/calendar", () => {
  let cal: calendar_v3.Calendar;
  let team: string;

  beforeAll(async () => {
    team = google.addCalendar(HOST, { summary: "Team", accessRole: "writer" });
    google.addCalendar(HOST, { summary: "Holidays", accessRole: "reader" });
    google.addCalendar(HOST, { summary: "Boss", accessRole: "freeBusyReader" });
    cal = api((await connect()).client);
  });

  it("calendarList.list pages with nextPageToken; the primary calendar (id = the address) comes first", async () => {
    const items: calendar_v3.Schema$CalendarListEntry[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const res = await cal.calendarList.list({ maxResults: 2, pageToken });
      items.push(...(res.data.items ?? []));
      pageToken = res.data.nextPageToken ?? undefined;
      pages += 1;
      if (!pageToken) expect(res.data.nextSyncToken).toBeTruthy();
    } while (pageToken);
    expect(pages).toBe(2);
    expect(items.map((c) => [c.summary, c.accessRole, c.primary ?? false])).toEqual([
      [HOST, "owner", true],
      ["Team", "writer", false],
      ["Holidays", "reader", false],
      ["Boss", "freeBusyReader", false],
    ]);
    expect(items[0].id).toBe(HOST);
    expect(items[0].backgroundColor).toMatch(/^#[0-9a-f]{6}$/);
    expect((await cal.calendarList.list({ minAccessRole: "writer" })).data.items?.map((c) => c.summary)).toEqual([HOST, "Team"]);
  });

  it("freebusy.query: opaque events are busy, merged and clipped; transparent and cancelled ones are not; an unknown calendar is an error entry", async () => {
    google.addEvent(HOST, { start: "2031-03-03T09:00:00Z", end: "2031-03-03T10:00:00Z" });
    google.addEvent(HOST, { start: "2031-03-03T09:30:00Z", end: "2031-03-03T11:00:00Z" });
    google.addEvent(HOST, { start: "2031-03-03T12:00:00Z", end: "2031-03-03T13:00:00Z", transparency: "transparent" });
    google.addEvent(HOST, { start: "2031-03-03T14:00:00Z", end: "2031-03-03T15:00:00Z", status: "cancelled" });
    // All-day: midnight to midnight in the calendar's zone (Europe/Berlin, UTC+1 in March).
    google.addEvent(HOST, { start: "2031-03-05", end: "2031-03-06", allDay: true });
    const res = await cal.freebusy.query({
      requestBody: { timeMin: "2031-03-03T09:15:00Z", timeMax: "2031-03-06T00:00:00Z", items: [{ id: HOST }, { id: "nobody@example.test" }] },
    });
    expect(res.data.kind).toBe("calendar#freeBusy");
    expect(res.data.calendars?.[HOST]).toEqual({
      busy: [
        { start: "2031-03-03T09:15:00Z", end: "2031-03-03T11:00:00Z" },
        { start: "2031-03-04T23:00:00Z", end: "2031-03-05T23:00:00Z" },
      ],
    });
    expect(res.data.calendars?.["nobody@example.test"]).toEqual({ errors: [{ domain: "global", reason: "notFound" }], busy: [] });

    const zoned = await cal.freebusy.query({ requestBody: { timeMin: "2031-03-03T00:00:00Z", timeMax: "2031-03-04T00:00:00Z", timeZone: "Europe/Berlin", items: [{ id: HOST }] } });
    expect(zoned.data.calendars?.[HOST].busy?.[0]).toEqual({ start: "2031-03-03T10:00:00+01:00", end: "2031-03-03T12:00:00+01:00" });
  });

  it("freebusy.query refuses an empty or too long range as Google words it", async () => {
    const empty = await failure(cal.freebusy.query({ requestBody: { timeMin: "2031-03-03T10:00:00Z", timeMax: "2031-03-03T10:00:00Z", items: [{ id: HOST }] } }));
    expect(empty.status).toBe(400);
    expect(empty.data).toMatchObject({
      error: { code: 400, message: "The specified time range is empty.", errors: [{ domain: "calendar", reason: "timeRangeEmpty", location: "timeMax" }] },
    });
    const long = await failure(cal.freebusy.query({ requestBody: { timeMin: "2031-01-01T00:00:00Z", timeMax: "2031-06-01T00:00:00Z", items: [{ id: HOST }] } }));
    expect(long.status).toBe(400);
    expect(reason(long)).toBe("timeRangeTooLong");
  });

  it("events.insert with conferenceDataVersion=1 and sendUpdates=none makes a Meet link; the same requestId gives the same conference", async () => {
    const requestBody: calendar_v3.Schema$Event = {
      summary: "Intro call",
      start: { dateTime: "2031-04-01T10:00:00+02:00", timeZone: "Europe/Berlin" },
      end: { dateTime: "2031-04-01T10:30:00+02:00", timeZone: "Europe/Berlin" },
      colorId: "7",
      attendees: [{ email: "booker@example.test" }],
      conferenceData: { createRequest: { requestId: "booking-1", conferenceSolutionKey: { type: "hangoutsMeet" } } },
    };
    const res = await cal.events.insert({ calendarId: team, conferenceDataVersion: 1, sendUpdates: "none", requestBody });
    const ev = res.data;
    expect(ev.id).toMatch(/^[a-v0-9]{26}$/);
    expect(ev.iCalUID).toBe(`${ev.id}@google.com`);
    expect(ev.htmlLink).toMatch(/^https:\/\/www\.google\.com\/calendar\/event\?eid=/);
    expect(ev.etag).toMatch(/^"\d+"$/);
    expect(ev.sequence).toBe(0);
    expect(ev.conferenceData?.createRequest?.status?.statusCode).toBe("success");
    const video = ev.conferenceData?.entryPoints?.find((p) => p.entryPointType === "video");
    expect(video?.uri).toMatch(/^https:\/\/meet\.google\.com\/[a-z]{3}-[a-z]{4}-[a-z]{3}$/);
    expect(ev.hangoutLink).toBe(video?.uri);
    expect(google.writes.at(-1)).toMatchObject({ kind: "insert", calendarId: team, eventId: ev.id, sendUpdates: "none", conferenceDataVersion: "1", status: 200 });
    expect(google.events(team).map((e) => e.id)).toContain(ev.id);

    const again = await cal.events.insert({ calendarId: team, conferenceDataVersion: 1, sendUpdates: "none", requestBody });
    expect(again.data.hangoutLink).toBe(ev.hangoutLink);
    // Without conferenceDataVersion, conferenceData is ignored (version 0), as the reference says.
    const plain = await cal.events.insert({ calendarId: team, requestBody: { ...requestBody, conferenceData: { createRequest: { requestId: "booking-2", conferenceSolutionKey: { type: "hangoutsMeet" } } } } });
    expect(plain.data.hangoutLink).toBeUndefined();
    expect(google.writes.at(-1)?.sendUpdates).toBeNull();
  });

  it("events.patch moves the event (sequence +1, same Meet link), update replaces it, delete is 204 then 410, unknown is 404", async () => {
    const created = (
      await cal.events.insert({
        calendarId: "primary",
        conferenceDataVersion: 1,
        sendUpdates: "none",
        requestBody: {
          summary: "Demo",
          start: { dateTime: "2031-04-02T09:00:00Z" },
          end: { dateTime: "2031-04-02T09:30:00Z" },
          conferenceData: { createRequest: { requestId: "booking-3", conferenceSolutionKey: { type: "hangoutsMeet" } } },
        },
      })
    ).data;
    const moved = await cal.events.patch({
      calendarId: "primary",
      eventId: created.id!,
      conferenceDataVersion: 1,
      sendUpdates: "none",
      requestBody: { start: { dateTime: "2031-04-03T09:00:00Z" }, end: { dateTime: "2031-04-03T09:30:00Z" } },
    });
    expect(moved.data.sequence).toBe(1);
    expect(moved.data.summary).toBe("Demo");
    expect(moved.data.hangoutLink).toBe(created.hangoutLink);
    expect(moved.data.etag).not.toBe(created.etag);

    const replaced = await cal.events.update({
      calendarId: "primary",
      eventId: created.id!,
      sendUpdates: "none",
      requestBody: { summary: "Demo (moved)", start: { dateTime: "2031-04-03T10:00:00Z" }, end: { dateTime: "2031-04-03T10:30:00Z" } },
    });
    expect(replaced.data.summary).toBe("Demo (moved)");
    expect(replaced.data.iCalUID).toBe(created.iCalUID);
    // conferenceDataVersion 0 keeps the conference as it was.
    expect(replaced.data.hangoutLink).toBe(created.hangoutLink);

    const del = await cal.events.delete({ calendarId: "primary", eventId: created.id!, sendUpdates: "none" });
    expect(del.status).toBe(204);
    expect(google.events(HOST).find((e) => e.id === created.id)).toBeUndefined();
    expect((await cal.events.get({ calendarId: "primary", eventId: created.id! })).data.status).toBe("cancelled");
    const gone = await failure(cal.events.delete({ calendarId: "primary", eventId: created.id! }));
    expect(gone.name).toBe("GaxiosError");
    expect(gone.status).toBe(410);
    expect(gone.data).toEqual({ error: { code: 410, message: "Resource has been deleted", errors: [{ domain: "global", reason: "deleted", message: "Resource has been deleted" }] } });
    const unknown = await failure(cal.events.get({ calendarId: "primary", eventId: "nosuchevent0" }));
    expect(unknown.status).toBe(404);
    expect(reason(unknown)).toBe("notFound");
    expect(google.writes.filter((w) => w.eventId === created.id).map((w) => [w.kind, w.sendUpdates])).toEqual([
      ["insert", "none"],
      ["patch", "none"],
      ["update", "none"],
      ["delete", "none"],
      ["delete", null],
    ]);
  });

  it("events.list returns events in range, singleEvents ordered by start, without deleted ones", async () => {
    const id = google.addCalendar(HOST, { summary: "Listed", accessRole: "owner" });
    google.addEvent(id, { start: "2031-05-01T12:00:00Z", end: "2031-05-01T13:00:00Z", summary: "b" });
    google.addEvent(id, { start: "2031-05-01T08:00:00Z", end: "2031-05-01T09:00:00Z", summary: "a" });
    google.addEvent(id, { start: "2031-05-01T10:00:00Z", end: "2031-05-01T11:00:00Z", summary: "gone", status: "cancelled" });
    google.addEvent(id, { start: "2031-06-01T10:00:00Z", end: "2031-06-01T11:00:00Z", summary: "later" });
    const res = await cal.events.list({ calendarId: id, timeMin: "2031-05-01T00:00:00Z", timeMax: "2031-05-02T00:00:00Z", singleEvents: true, orderBy: "startTime" });
    expect(res.data.items?.map((e) => e.summary)).toEqual(["a", "b"]);
    expect(res.data.accessRole).toBe("owner");
  });

  it("a pending conference is answered pending on insert and ready on the next get", async () => {
    const pending = await startFakeGoogle({ redirectUris: [REDIRECT], users: [{ email: HOST }], conference: "pending" });
    try {
      const client = new OAuth2Client({ clientId: pending.clientId, clientSecret: pending.clientSecret, redirectUri: REDIRECT, endpoints: { oauth2TokenUrl: pending.tokenUrl, oauth2AuthBaseUrl: pending.authUrl } });
      const { codeVerifier, codeChallenge } = await client.generateCodeVerifierAsync();
      const back = new URL(
        pending.approve(client.generateAuthUrl({ scope: ALL_SCOPES, state: "s", code_challenge: codeChallenge, code_challenge_method: CodeChallengeMethod.S256 })),
      );
      client.setCredentials((await client.getToken({ code: back.searchParams.get("code")!, codeVerifier })).tokens);
      const c = calendar({ version: "v3", auth: client, rootUrl: `${pending.apiUrl}/` });
      const ev = await c.events.insert({
        calendarId: "primary",
        conferenceDataVersion: 1,
        requestBody: { start: { date: "2031-04-05" }, end: { date: "2031-04-06" }, conferenceData: { createRequest: { requestId: "p-1", conferenceSolutionKey: { type: "hangoutsMeet" } } } },
      });
      expect(ev.data.conferenceData).toEqual({ createRequest: { requestId: "p-1", conferenceSolutionKey: { type: "hangoutsMeet" }, status: { statusCode: "pending" } } });
      expect(ev.data.hangoutLink).toBeUndefined();
      const later = await c.events.get({ calendarId: "primary", eventId: ev.data.id! });
      expect(later.data.conferenceData?.createRequest?.status?.statusCode).toBe("success");
      expect(later.data.hangoutLink).toMatch(/^https:\/\/meet\.google\.com\//);
    } finally {
      await pending.close();
    }
  });

  it("validation errors are 400 with Google's reasons and words", async () => {
    const noEnd = await failure(cal.events.insert({ calendarId: "primary", requestBody: { start: { dateTime: "2031-04-02T09:00:00Z" } } }));
    expect(noEnd.status).toBe(400);
    expect(noEnd.data).toMatchObject({ error: { code: 400, message: "Missing end time.", errors: [{ domain: "global", reason: "required", message: "Missing end time." }] } });
    expect(noEnd.message).toBe("Missing end time.");
    const noZone = await failure(cal.events.insert({ calendarId: "primary", requestBody: { start: { dateTime: "2031-04-02T09:00:00" }, end: { dateTime: "2031-04-02T10:00:00Z" } } }));
    expect(noZone.message).toBe("Missing time zone definition for start time.");
    const color = await failure(cal.events.insert({ calendarId: "primary", requestBody: { start: { date: "2031-04-02" }, end: { date: "2031-04-03" }, colorId: "12" } }));
    expect(reason(color)).toBe("invalid");
    const backwards = await failure(cal.events.insert({ calendarId: "primary", requestBody: { start: { date: "2031-04-03" }, end: { date: "2031-04-02" } } }));
    expect(reason(backwards)).toBe("timeRangeEmpty");
    const meet = await failure(
      cal.events.insert({
        calendarId: "primary",
        conferenceDataVersion: 1,
        requestBody: { start: { date: "2031-04-02" }, end: { date: "2031-04-03" }, conferenceData: { createRequest: { requestId: "x", conferenceSolutionKey: { type: "zoom" } } } },
      }),
    );
    expect(meet.message).toBe("Invalid conference type value.");
    const reader = google.addCalendar(HOST, { summary: "Read only", accessRole: "reader" });
    const ro = await failure(cal.events.insert({ calendarId: reader, requestBody: { start: { date: "2031-04-02" }, end: { date: "2031-04-03" } } }));
    expect(ro.status).toBe(403);
    expect(reason(ro)).toBe("requiredAccessLevel");
  });

  it("a call outside the granted scopes is 403 insufficientPermissions with ACCESS_TOKEN_SCOPE_INSUFFICIENT", async () => {
    const { client } = await connect({ scopes: [GOOGLE_SCOPES.calendarListReadonly] });
    const c = api(client);
    expect((await c.calendarList.list()).status).toBe(200);
    const f = await failure(c.events.insert({ calendarId: "primary", requestBody: { start: { date: "2031-04-02" }, end: { date: "2031-04-03" } } }));
    expect(f.status).toBe(403);
    expect(f.data).toMatchObject({
      error: {
        code: 403,
        message: "Request had insufficient authentication scopes.",
        errors: [{ domain: "global", reason: "insufficientPermissions", message: "Insufficient Permission" }],
        status: "PERMISSION_DENIED",
        details: [{ reason: "ACCESS_TOKEN_SCOPE_INSUFFICIENT", metadata: { method: "calendar.v3.Events.Insert" } }],
      },
    });
    expect(f.headers["www-authenticate"]).toContain('error="insufficient_scope"');
  });

  it("a consent that unticks a scope grants only the rest", async () => {
    const client = oauthClient();
    const { codeVerifier, codeChallenge } = await client.generateCodeVerifierAsync();
    const url = client.generateAuthUrl({ access_type: "offline", scope: ALL_SCOPES, state: "s", code_challenge: codeChallenge, code_challenge_method: CodeChallengeMethod.S256 });
    const back = new URL(google.approve(url, { user: HOST, scopes: [GOOGLE_SCOPES.freeBusy] }));
    expect(back.searchParams.get("scope")).toBe(GOOGLE_SCOPES.freeBusy);
    const { tokens } = await client.getToken({ code: back.searchParams.get("code")!, codeVerifier });
    expect(tokens.scope).toBe(GOOGLE_SCOPES.freeBusy);
  });

  it("rate limits and outages by fault injection: 429 with Retry-After, 403 userRateLimitExceeded, 503; gaxios retries a GET by itself", async () => {
    google.rateLimit(GOOGLE_ROUTES.freeBusy, { status: 429, retryAfter: 7 });
    const limited = await failure(cal.freebusy.query({ requestBody: { timeMin: "2031-03-03T00:00:00Z", timeMax: "2031-03-04T00:00:00Z", items: [{ id: HOST }] } }));
    expect(limited.status).toBe(429);
    expect(limited.headers["retry-after"]).toBe("7");
    expect(limited.data).toMatchObject({ error: { code: 429, errors: [{ domain: "usageLimits", reason: "rateLimitExceeded" }] } });

    google.rateLimit(GOOGLE_ROUTES.calendarList, { status: 403, reason: "userRateLimitExceeded" });
    const user = await failure(cal.calendarList.list({}, { retry: false }));
    expect(user.status).toBe(403);
    expect(reason(user)).toBe("userRateLimitExceeded");

    // gaxios retries GETs on 429 and 5xx by default: one 503, then the real answer.
    const before = google.http.calls(GOOGLE_ROUTES.calendarList);
    google.serverError(GOOGLE_ROUTES.calendarList, { status: 503 });
    expect((await cal.calendarList.list()).status).toBe(200);
    expect(google.http.calls(GOOGLE_ROUTES.calendarList)).toBe(before + 2);
  });

  it("a missing or unknown bearer token is 401 as Google answers it", async () => {
    const res = await fetch(`${google.apiUrl}/calendar/v3/users/me/calendarList`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: 401, errors: [{ reason: "required", message: "Login Required.", location: "Authorization" }], status: "UNAUTHENTICATED" } });
    const bad = await failure(api(oauthWith("ya29.nonsense")).calendarList.list());
    expect(bad.status).toBe(401);
    expect(bad.data).toMatchObject({ error: { errors: [{ domain: "global", reason: "authError", message: "Invalid Credentials", locationType: "header" }] } });
  });
});
