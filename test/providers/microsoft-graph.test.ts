// The Microsoft provider's Graph calls against the local identity platform and Graph (test/fakes/microsoft.ts), through the shared OAuth client: account, calendars, busy times over every page, writes without invitations, Teams links, 401, rotation, 429 and faults.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProviderError, OAuthClient, RateLimitedError, withDeadline, type OAuthSession, type TokenSet } from "../../src/providers/index.js";
import type { CalendarEvent } from "../../src/providers/shared/types.js";
import { deleteEvent, readAccount, readBusy, readCalendars, writeEvent } from "../../src/providers/microsoft/calendar.js";
import { GraphClient, MAX_ITEMS } from "../../src/providers/microsoft/graph.js";
import { microsoftOAuth } from "../../src/providers/microsoft/index.js";
import { startFakeMicrosoft, type FakeMicrosoft } from "../fakes/microsoft.js";

const REDIRECT = "http://127.0.0.1:9/oauth/microsoft/callback";
const APP_HOST = "app.example.test";

/** What the shared client stored, in order: the store a connection would seal its tokens into. */
class MemoryStore {
  saved: TokenSet[] = [];
  constructor(private tokens: TokenSet) {}
  save = async (t: TokenSet): Promise<void> => {
    this.saved.push(t);
    this.tokens = t;
  };
  load = async (): Promise<TokenSet> => this.tokens;
}

const ownUid = (uid: string) => uid.endsWith(`@${APP_HOST}`);
const busyOpts = (hostZone = "UTC") => ({ hostZone, hostEmails: [], ignoreUid: ownUid });
const JUNE = { from: new Date("2026-06-01T00:00:00Z"), to: new Date("2026-06-08T00:00:00Z") };

function booking(id: string, start: string, minutes = 30): CalendarEvent {
  const s = new Date(start);
  return {
    bookingId: id,
    uid: `${id}@${APP_HOST}`,
    sequence: 0,
    start: s,
    end: new Date(s.getTime() + minutes * 60_000),
    summary: "Intro call with Ann Booker",
    description: "What about?: Plans\nGuests: gus@guest.test",
    location: null,
    organizer: { name: "Ada Host", email: "ada@contoso.test" },
    attendees: [{ name: "Ann Booker", email: "ann@booker.test" }, { email: "gus@guest.test" }],
    status: "CONFIRMED",
  };
}

describe("Microsoft provider against the local identity platform and Graph", () => {
  let ms: FakeMicrosoft;
  let client: OAuthClient;
  const signal = new AbortController().signal;

  /** A fresh user authorized as a host's browser would (authorization URL, consent, code exchange), with a session over their tokens. */
  async function account(seed: Parameters<FakeMicrosoft["addUser"]>[0] = {}) {
    const user = ms.addUser(seed);
    const request = await client.authorizationRequest(REDIRECT);
    const back = new URL(ms.approve(request.url, { user: user.id }));
    const tokens = await client.exchangeCode(back.searchParams, request.state, request.codeVerifier, REDIRECT, signal);
    const store = new MemoryStore(tokens);
    const session: OAuthSession = client.session(user.id, tokens, store);
    const graph = (s = signal) => new GraphClient(session, s);
    return { user, store, session, graph };
  }

  beforeAll(async () => {
    ms = await startFakeMicrosoft({ redirectUris: [REDIRECT] });
    const identity = `${ms.loginUrl}/${ms.tenant}/oauth2/v2.0`;
    client = new OAuthClient(microsoftOAuth, { clientId: ms.clientId, clientSecret: ms.clientSecret, authorizationUrl: `${identity}/authorize`, tokenUrl: `${identity}/token`, revocationUrl: undefined, apiUrl: ms.graphUrl });
  });
  afterAll(() => ms.close());

  it("asks for Calendars.ReadWrite, User.Read and offline_access with PKCE, and gets a refresh token", async () => {
    const request = await client.authorizationRequest(REDIRECT);
    const q = new URL(request.url).searchParams;
    expect(q.get("scope")).toBe("Calendars.ReadWrite User.Read offline_access");
    expect(q.get("code_challenge_method")).toBe("S256");
    const { session } = await account();
    expect(session.current().refresh_token).toMatch(/^0\.AR/);
  });

  it("reads the account (mail, else userPrincipalName) and every calendar (canEdit, owner) over every page", async () => {
    const { user, graph } = await account({ mail: "ada@contoso.test", userPrincipalName: "ada@contoso.onmicrosoft.test" });
    expect(await readAccount(graph())).toEqual({ id: user.id, email: "ada@contoso.test" });
    const { graph: upnOnly } = await account({ mail: null, userPrincipalName: "bob@fabrikam.onmicrosoft.test" });
    expect((await readAccount(upnOnly())).email).toBe("bob@fabrikam.onmicrosoft.test");

    for (let i = 1; i <= 12; i++) ms.addCalendar(user.id, { name: `Shared ${i}`, canEdit: i % 3 !== 0, owner: { name: "Team", address: `team${i}@contoso.test` } });
    const calendars = await readCalendars(graph());
    // Graph answers ten a page: three calendars are only on the second page.
    expect(calendars).toHaveLength(13);
    expect(calendars[0]).toEqual({ url: user.defaultCalendarId, name: "Calendar", canWrite: true, email: "ada@contoso.test" });
    expect(calendars.find((c) => c.name === "Shared 12")).toMatchObject({ canWrite: false, email: "team12@contoso.test" });
    expect(calendars.find((c) => c.name === "Shared 11")).toMatchObject({ canWrite: true, email: "team11@contoso.test" });
  });

  it("counts as busy every event but free and cancelled ones, over every page with Prefer sent again on each", async () => {
    const { user, graph } = await account();
    const cal = user.defaultCalendarId;
    const kinds = ["busy", "free", "tentative", "oof", "workingElsewhere", "unknown"] as const;
    // 240 events over three days: three pages of 100.
    for (let i = 0; i < 240; i++) {
      const start = new Date(Date.UTC(2026, 5, 2, 0, 0) + i * 15 * 60_000);
      ms.addEvent(cal, { subject: `E${i}`, start, end: new Date(start.getTime() + 10 * 60_000), showAs: kinds[i % 6] });
    }
    ms.addEvent(cal, { start: "2026-06-01T10:00:00Z", end: "2026-06-01T11:00:00Z", isCancelled: true });
    ms.addEvent(cal, { start: "2026-06-05T08:00:00+02:00", end: "2026-06-05T09:00:00+02:00", timeZone: "Europe/Berlin", daily: { count: 3 } });
    ms.graph.resetLog();

    const periods = await readBusy(graph(), { url: cal }, JUNE, busyOpts());
    const views = ms.graph.requests.filter((r) => r.route === "GET /v1.0/me/calendars/:calendarId/calendarView");
    expect(views).toHaveLength(3);
    for (const v of views) expect(v.headers.prefer).toBe('outlook.timezone="UTC", odata.maxpagesize=100');
    // Five busy-looking kinds of six, and the series' three occurrences (06:00 UTC, wall clock kept).
    expect(periods).toHaveLength(200 + 3);
    expect(periods.some((p) => p.start.toISOString() === "2026-06-01T10:00:00.000Z")).toBe(false);
    const hourLong = periods.filter((p) => p.end.getTime() - p.start.getTime() === 3_600_000);
    expect(hourLong.map((p) => p.start.toISOString())).toEqual(["2026-06-05T06:00:00.000Z", "2026-06-06T06:00:00.000Z", "2026-06-07T06:00:00.000Z"]);
    const free = new Date(Date.UTC(2026, 5, 2, 0, 15));
    expect(periods.some((p) => p.start.getTime() === free.getTime())).toBe(false);
    const tentative = new Date(Date.UTC(2026, 5, 2, 0, 30));
    expect(periods.find((p) => p.start.getTime() === tentative.getTime())?.end.toISOString()).toBe("2026-06-02T00:40:00.000Z");
  });

  it("blocks an all-day event's date in the host's zone, as feeds do", async () => {
    const { user, graph } = await account();
    ms.addEvent(user.defaultCalendarId, { isAllDay: true, start: "2026-06-03", end: "2026-06-04" });
    const tokyo = await readBusy(graph(), { url: user.defaultCalendarId }, JUNE, busyOpts("Asia/Tokyo"));
    expect(tokyo.map((p) => [p.start.toISOString(), p.end.toISOString()])).toEqual([["2026-06-02T15:00:00.000Z", "2026-06-03T15:00:00.000Z"]]);
    const ny = await readBusy(graph(), { url: user.defaultCalendarId }, JUNE, busyOpts("America/New_York"));
    expect(ny.map((p) => [p.start.toISOString(), p.end.toISOString()])).toEqual([["2026-06-03T04:00:00.000Z", "2026-06-04T04:00:00.000Z"]]);
  });

  it("writes a booking once, without attendees (no invitation from Microsoft), recognises it as its own, moves it and deletes it", async () => {
    const { user, graph } = await account({ mail: "ada@contoso.test" });
    const cal = { url: user.defaultCalendarId };
    const b = booking("65a000000000000000000001", "2026-06-03T09:00:00Z");
    const first = await writeEvent(graph(), cal, b, { teamsMeeting: false }, null);
    // A create retried after its answer was lost: same transactionId, the same event.
    const again = await writeEvent(graph(), cal, b, { teamsMeeting: false }, null);
    expect(again.id).toBe(first.id);
    expect(ms.writtenEvents()).toHaveLength(1);
    const stored = ms.writtenEvents()[0];
    expect(stored).toMatchObject({ subject: "Intro call with Ann Booker", attendees: [], showAs: "busy", transactionId: b.uid, isOnlineMeeting: false });
    expect(stored.body.content).toContain("Booked by: Ann Booker <ann@booker.test>, gus@guest.test");
    expect(stored.body.content).toContain("What about?: Plans");
    expect([stored.startMs, stored.endMs]).toEqual([b.start.getTime(), b.end.getTime()]);
    expect(ms.invitations()).toEqual([]);

    // Its own event blocks nothing: by transactionId (the booking's UID), or by the stored id alone.
    expect(await readBusy(graph(), cal, JUNE, busyOpts())).toEqual([]);
    expect(await readBusy(graph(), cal, JUNE, { hostZone: "UTC", hostEmails: [], ignoreUid: () => false, ownEvents: [{ id: first.id, start: b.start, end: b.end }] })).toEqual([]);
    expect(await readBusy(graph(), cal, JUNE, { hostZone: "UTC", hostEmails: [], ignoreUid: () => false })).toHaveLength(1);

    const moved = await writeEvent(graph(), cal, { ...b, start: new Date("2026-06-04T10:00:00Z"), end: new Date("2026-06-04T10:30:00Z") }, { teamsMeeting: false }, first.id);
    expect(moved.id).toBe(first.id);
    expect(ms.writtenEvents()).toHaveLength(1);
    expect(new Date(ms.writtenEvents()[0].startMs).toISOString()).toBe("2026-06-04T10:00:00.000Z");

    await deleteEvent(graph(), first.id);
    expect(ms.writtenEvents()).toHaveLength(0);
    // Already gone: done, not an error.
    await deleteEvent(graph(), first.id);
    expect(ms.invitations()).toEqual([]);
  });

  it("makes a Teams meeting for calendar_meet, keeps it when the event moves, and writes anew an event the host deleted", async () => {
    const { user, graph } = await account();
    const cal = { url: user.defaultCalendarId };
    const b = booking("65a000000000000000000002", "2026-06-03T09:00:00Z");
    const made = await writeEvent(graph(), cal, b, { teamsMeeting: true }, null);
    expect(made).toMatchObject({ joinUrl: expect.stringMatching(/^https:\/\/teams\.microsoft\.com\/l\/meetup-join\//), noMeeting: false });
    expect(ms.writtenEvents()[0]).toMatchObject({ isOnlineMeeting: true, onlineMeetingProvider: "teamsForBusiness" });
    const moved = await writeEvent(graph(), cal, { ...b, start: new Date("2026-06-05T09:00:00Z"), end: new Date("2026-06-05T09:30:00Z") }, { teamsMeeting: true }, made.id);
    expect(moved).toEqual(made);

    // Deleted in Outlook: the next write makes it again rather than failing on the 404.
    ms.state.events.delete(made.id);
    const remade = await writeEvent(graph(), cal, b, { teamsMeeting: true }, made.id);
    expect(remade.id).not.toBe(made.id);
    expect(ms.writtenEvents()).toHaveLength(1);
    // Under a transaction of its own (a retry of it finds it again), and still known as the booking's.
    expect(ms.writtenEvents()[0].transactionId).toMatch(new RegExp(`^${b.uid}#[0-9a-f]{16}$`));
    expect((await writeEvent(graph(), cal, b, { teamsMeeting: true }, made.id)).id).toBe(remade.id);
    expect(await readBusy(graph(), cal, JUNE, busyOpts())).toEqual([]);

    // A personal account's calendar offers no Teams for business: the event is saved without a meeting.
    const { user: person, graph: personal } = await account({ personal: true });
    const none = await writeEvent(personal(), { url: person.defaultCalendarId }, booking("65a000000000000000000003", "2026-06-03T09:00:00Z"), { teamsMeeting: true }, null);
    expect(none).toMatchObject({ joinUrl: null, noMeeting: true });
  });

  it("renews the token once after a 401 and repeats the call, stores the rotated refresh token before using it, and a revoked grant is refused", async () => {
    const { user, store, session, graph } = await account();
    const first = session.current();
    ms.expireAccessToken();
    const tokenCalls = ms.calls("token");
    expect(await readBusy(graph(), { url: user.defaultCalendarId }, JUNE, busyOpts())).toEqual([]);
    expect(ms.calls("token")).toBe(tokenCalls + 1);
    // The refresh asked for the same scopes (the identity platform picks the token's resource from them).
    const refresh = new URLSearchParams(ms.login.requests.filter((r) => r.route === "POST /:tenant/oauth2/v2.0/token").at(-1)!.body);
    expect([refresh.get("grant_type"), refresh.get("scope")]).toEqual(["refresh_token", "Calendars.ReadWrite User.Read offline_access"]);
    // Microsoft rotates: the new refresh token was stored, and it is the one used from now on.
    expect(store.saved).toHaveLength(1);
    expect(store.saved[0].refresh_token).not.toBe(first.refresh_token);
    expect(session.current()).toEqual(store.saved[0]);
    ms.expireRefreshToken(first.refresh_token ?? "");
    ms.expireAccessToken();
    expect(await readCalendars(graph())).toHaveLength(1);
    expect(store.saved).toHaveLength(2);

    ms.revoke(user.id);
    ms.expireAccessToken();
    const err = await readBusy(graph(), { url: user.defaultCalendarId }, JUNE, busyOpts()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ kind: "refused", message: expect.stringContaining("authorize microsoft again") });
  });

  it("reads 429 and 503 with Retry-After as Graph asking to wait, with how long", async () => {
    const { user, graph } = await account();
    const cal = { url: user.defaultCalendarId };
    ms.throttle("calendarView", { retryAfterSeconds: 7 });
    const throttled = await readBusy(graph(), cal, JUNE, busyOpts()).catch((e: unknown) => e);
    expect(throttled).toBeInstanceOf(RateLimitedError);
    expect(throttled).toMatchObject({ kind: "rate_limited", retryAfterMs: 7000 });
    ms.throttle("createEvent", { retryAfterSeconds: 3 });
    const write = await writeEvent(graph(), cal, booking("65a000000000000000000004", "2026-06-03T09:00:00Z"), { teamsMeeting: false }, null).catch((e: unknown) => e);
    expect(write).toMatchObject({ kind: "rate_limited", retryAfterMs: 3000 });
    ms.unavailable("calendarView", { retryAfterSeconds: 2 });
    expect(await readBusy(graph(), cal, JUNE, busyOpts()).catch((e: unknown) => e)).toMatchObject({ kind: "rate_limited", retryAfterMs: 2000 });
    // A 503 without Retry-After, or a 504, is an outage like any other.
    ms.unavailable("calendarView");
    expect(await readBusy(graph(), cal, JUNE, busyOpts()).catch((e: unknown) => e)).toMatchObject({ kind: "unreachable", message: expect.stringContaining("503 (serviceNotAvailable") });
    ms.unavailable("calendarView", { status: 504 });
    expect(await readBusy(graph(), cal, JUNE, busyOpts()).catch((e: unknown) => e)).toMatchObject({ kind: "unreachable" });
    expect(await readBusy(graph(), cal, JUNE, busyOpts())).toEqual([]);
  });

  it("fails closed on errors, broken answers, next links elsewhere, too many events and deadlines", async () => {
    const { user, graph } = await account();
    const cal = { url: user.defaultCalendarId };
    const read = (g = graph()) => readBusy(g, cal, JUNE, busyOpts()).catch((e: unknown) => e);

    ms.fault("calendarView", { status: 500, body: { error: { code: "generalException", message: "boom" } } });
    expect(await read()).toMatchObject({ kind: "unreachable", message: expect.stringContaining("500 (generalException: boom)") });
    ms.fault("calendarView", { status: 200, body: "<html>proxy</html>" });
    expect(await read()).toMatchObject({ kind: "bad_response" });
    ms.fault("calendarView", { status: 200, body: { value: [], "@odata.nextLink": "https://elsewhere.test/v1.0/me/calendarView?$skip=10" } });
    expect(await read()).toMatchObject({ kind: "bad_response", message: expect.stringContaining("outside its API") });
    ms.fault("calendarView", { status: 200, body: { value: [{ id: "x", showAs: "busy", start: { dateTime: "soon", timeZone: "UTC" }, end: { dateTime: "later", timeZone: "UTC" } }] } });
    expect(await read()).toMatchObject({ kind: "bad_response", message: expect.stringContaining("cannot be read") });
    ms.fault("calendarView", { status: 404, body: { error: { code: "ErrorItemNotFound", message: "The specified object was not found in the store." } } });
    expect(await read()).toMatchObject({ kind: "not_found" });

    // A next link that keeps coming back (a calendar larger than the service reads, or a server in a loop) ends at MAX_ITEMS.
    const event = (i: number) => ({ id: `e${i}`, showAs: "busy", start: { dateTime: "2026-06-02T09:00:00.0000000", timeZone: "UTC" }, end: { dateTime: "2026-06-02T10:00:00.0000000", timeZone: "UTC" } });
    const endless = `${ms.graphUrl}/v1.0/me/calendars/${encodeURIComponent(cal.url)}/calendarView?startDateTime=2026-06-01T00:00:00Z&endDateTime=2026-06-08T00:00:00Z`;
    ms.fault("calendarView", { status: 200, body: { value: Array.from({ length: 100 }, (_, i) => event(i)), "@odata.nextLink": endless }, times: Infinity });
    expect(await read()).toMatchObject({ kind: "bad_response", message: expect.stringContaining(`more than ${MAX_ITEMS}`) });
    ms.clearFaults();

    ms.fault("calendarView", { hang: true });
    const started = Date.now();
    const late = await withDeadline(500, (signal) => readBusy(graph(signal), cal, JUNE, busyOpts())).catch((e: unknown) => e);
    expect(late).toMatchObject({ kind: "unreachable" });
    expect(Date.now() - started).toBeLessThan(1500);
    ms.clearFaults();
  });
});
