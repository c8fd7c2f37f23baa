// Microsoft 365 through the public surface (providers.md, Microsoft rows): connecting through the identity platform, calendars, busy times, failure closed, Retry-After, invalid grants and repair, consent in Chromium, no token anywhere.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newAccount, rest, restAt, type Json } from "../helpers/api.js";
import { dayFromToday, utcIso } from "../helpers/bookings.js";
import { launchBrowser } from "../helpers/browser.js";
import { bookAt, eventAt, hostAt, slotsAt } from "../helpers/calendars.js";
import { authorize, connectThroughOAuth, finish, hostWithMicrosoft, recordOf, startProviderWorld, visit, type ProviderWorld } from "../helpers/providers.js";
import { until } from "../helpers/wait.js";
import { startSmtp, type TestSmtp } from "../helpers/smtp.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";

let w: ProviderWorld;
let smtp: TestSmtp;
let receiver: Receiver;
/** Deadline of one calendar read on this server (CALENDAR_TIMEOUT_MS). */
const TIMEOUT_MS = 1500;

beforeAll(async () => {
  smtp = await startSmtp();
  receiver = await startReceiver();
  w = await startProviderWorld({ CALENDAR_TIMEOUT_MS: String(TIMEOUT_MS), CALENDAR_CACHE_SECONDS: "0", SMTP_URL: smtp.url, MEETING_WAIT_SECONDS: "20" });
});

afterAll(async () => {
  await w?.stop();
  await smtp?.stop();
  await receiver?.close();
});

async function connections(key: string): Promise<Json[]> {
  return (await restAt(w.base, "GET", "/api/v1/calendar_connections", { key })).body.data;
}

/** The host's record of a booking once its calendar event is synced. */
function synced(key: string, eventId: string, bookingId: string, category = "upcoming"): Promise<Json> {
  return until(`booking ${bookingId} synced`, async () => {
    const r = await recordOf(w.base, key, eventId, bookingId, category);
    return r?.calendar_event_status === "synced" ? r : undefined;
  });
}

describe("POST /oauth/microsoft/authorize", () => {
  it("answers 422 `microsoft is not configured` on a server without MICROSOFT_CLIENT_ID", async () => {
    const { key } = await newAccount();
    const res = await rest("POST", "/oauth/microsoft/authorize", { key, body: { authorization: { purpose: "calendar" } } });
    expect([res.status, res.body.message]).toEqual([422, "microsoft is not configured"]);
  });

  it("sends the host to {login}/{tenant}/oauth2/v2.0/authorize with PKCE and the least scopes, offline_access among them", async () => {
    const { key } = await hostAt(w.base);
    const res = await authorize(w.base, key, "microsoft", { purpose: "calendar" });
    expect([res.status, res.body.message]).toEqual([200, "authorization started"]);
    const url = new URL(res.body.data.authorization_url);
    expect(`${url.origin}${url.pathname}`).toBe(`${w.microsoft.loginUrl}/common/oauth2/v2.0/authorize`);
    const q = Object.fromEntries(url.searchParams);
    expect(q).toMatchObject({ response_type: "code", client_id: w.microsoft.clientId, redirect_uri: `${w.base}/oauth/microsoft/callback`, code_challenge_method: "S256" });
    expect(q.scope.split(" ")).toEqual(["Calendars.ReadWrite", "User.Read", "offline_access"]);
    expect(Buffer.from(q.state, "base64url").length).toBeGreaterThanOrEqual(16);
    const wrong = await authorize(w.base, key, "microsoft", { purpose: "conference" });
    expect([wrong.status, wrong.body.message]).toEqual([422, "purpose is not included in the list"]);
  });
});

describe("GET /oauth/microsoft/callback", () => {
  it("makes the connection: account from /me (mail, else userPrincipalName), calendars with canEdit and owner; tokens sealed", async () => {
    const kim = w.microsoft.addUser({ displayName: "Kim", mail: "kim@contoso.test", userPrincipalName: "kim@contoso.onmicrosoft.test" });
    w.microsoft.addCalendar(kim.id, { name: "Team (read only)", canEdit: false, owner: { name: "Team", address: "team@contoso.test" } });
    const { key } = await hostAt(w.base);
    const started = await authorize(w.base, key, "microsoft", { purpose: "calendar", return_url: `${w.base}/settings` });
    const landed = await finish(w.microsoft.approve(started.body.data.authorization_url, { user: kim.id }));
    expect([landed.status, landed.location]).toEqual([303, `${w.base}/settings?connected=microsoft`]);
    const [conn] = await connections(key);
    expect(conn).toMatchObject({ provider: "microsoft", account: "kim@contoso.test", status: "ok", last_error: null });
    const byName = Object.fromEntries((conn.calendars as Json[]).map((c) => [c.name, c]));
    expect(byName.Calendar).toMatchObject({ provider: "microsoft", can_write: true, email: "kim@contoso.test", check_for_conflicts: true });
    expect(byName["Team (read only)"]).toMatchObject({ can_write: false, email: "team@contoso.test" });
    const grant = w.microsoft.oauth.grants({ live: true }).find((g) => g.user.id === kim.id)!;
    const stored = JSON.stringify(await w.mongo.collection("calendar_connections").findOne({ account: "kim@contoso.test" }));
    for (const token of [...grant.liveAccessTokens, ...grant.liveRefreshTokens]) expect(stored).not.toContain(token);

    const upnOnly = w.microsoft.addUser({ mail: null, userPrincipalName: "lee@fabrikam.onmicrosoft.test" });
    const lee = await hostWithMicrosoft(w, upnOnly.id);
    expect(lee.connection.account).toBe("lee@fabrikam.onmicrosoft.test");
  });

  it("an organisation that lets only administrators consent: the page says why, and nothing is connected", async () => {
    const guarded = w.microsoft.addUser({ requiresAdminConsent: true });
    const { key } = await hostAt(w.base);
    const started = await authorize(w.base, key, "microsoft", { purpose: "calendar" });
    const landed = await visit(w.microsoft.approve(started.body.data.authorization_url, { user: guarded.id }));
    expect(landed.status).toBe(400);
    expect(landed.text).toContain("Microsoft answered with an error (consent_required)");
    expect(await connections(key)).toEqual([]);
  });

  it("a Graph that hangs while connecting, or a token endpoint that fails: a page within the deadline, nothing connected", async () => {
    const ben = w.microsoft.addUser({ mail: "ben@contoso.test" });
    const { key } = await hostAt(w.base);
    w.microsoft.fault("calendars", { hang: true });
    const started = await authorize(w.base, key, "microsoft", { purpose: "calendar" });
    const t0 = Date.now();
    const slow = await finish(w.microsoft.approve(started.body.data.authorization_url, { user: ben.id }));
    // Exchange and /me, then (once confirmed) the calendars, each get four times CALENDAR_TIMEOUT_MS.
    expect(Date.now() - t0).toBeLessThan(8 * TIMEOUT_MS + 1500);
    expect(slow.status).toBe(502);
    expect(slow.text).toContain("Microsoft could not be reached");
    w.microsoft.clearFaults();
    w.microsoft.fault("token", { status: 503, body: { error: "temporarily_unavailable", error_description: "AADSTS50001: busy" } });
    const again = await authorize(w.base, key, "microsoft", { purpose: "calendar" });
    const failed = await visit(w.microsoft.approve(again.body.data.authorization_url, { user: ben.id }));
    expect(failed.status).toBe(502);
    expect(await connections(key)).toEqual([]);
  });

  it("disconnecting forgets the tokens without calling Microsoft (its identity platform has no revocation)", async () => {
    const cy = w.microsoft.addUser({ mail: "cy@contoso.test" });
    const host = await hostWithMicrosoft(w, cy.id);
    const calls = w.microsoft.calls();
    expect((await restAt(w.base, "DELETE", `/api/v1/calendar_connections/${host.connection.id}`, { key: host.key })).status).toBe(200);
    expect(await connections(host.key)).toEqual([]);
    expect(await w.mongo.collection("calendar_connections").countDocuments({ account: "cy@contoso.test" })).toBe(0);
    expect(w.microsoft.calls()).toBe(calls);
  });

  it("connecting the same Microsoft account again updates the connection: same ids, same choices", async () => {
    const max = w.microsoft.addUser({ mail: "max@contoso.test" });
    const side = w.microsoft.addCalendar(max.id, { name: "Side" });
    const host = await hostWithMicrosoft(w, max.id);
    const sideCal = (host.connection.calendars as Json[]).find((c) => c.name === "Side");
    await restAt(w.base, "PATCH", `/api/v1/calendars/${sideCal.id}`, { key: host.key, body: { calendar: { check_for_conflicts: false } } });
    w.microsoft.addCalendar(max.id, { name: "New one" });
    await connectThroughOAuth(w, host.key, "microsoft", max.id);
    const list = await connections(host.key);
    expect(list).toHaveLength(1);
    expect(list[0].id).toBe(host.connection.id);
    const again = Object.fromEntries((list[0].calendars as Json[]).map((c) => [c.name, c]));
    expect(again.Side).toMatchObject({ id: sideCal.id, check_for_conflicts: false });
    expect(again["New one"]).toBeDefined();
    expect(side.id).toBeTruthy();
  });
});

describe("busy times", () => {
  it("events in Outlook block slots unless shown as free or cancelled; tentative blocks", async () => {
    const nia = w.microsoft.addUser({ mail: "nia@contoso.test" });
    const host = await hostWithMicrosoft(w, nia.id);
    const event = await eventAt(w.base, host.key);
    const day = dayFromToday(3);
    const cal = nia.defaultCalendarId;
    w.microsoft.addEvent(cal, { start: utcIso(day, "09:00"), end: utcIso(day, "10:00"), showAs: "busy" });
    w.microsoft.addEvent(cal, { start: utcIso(day, "11:00"), end: utcIso(day, "11:30"), showAs: "tentative" });
    w.microsoft.addEvent(cal, { start: utcIso(day, "12:00"), end: utcIso(day, "13:00"), showAs: "free" });
    w.microsoft.addEvent(cal, { start: utcIso(day, "14:00"), end: utcIso(day, "15:00"), isCancelled: true });
    const { status, starts } = await slotsAt(w.base, host.user, event, day);
    expect(status).toBe(200);
    for (const taken of ["09:00", "09:30", "11:00"]) expect(starts).not.toContain(`${day} ${taken}`);
    for (const open of ["08:30", "10:00", "11:30", "12:00", "12:30", "14:00", "14:30"]) expect(starts).toContain(`${day} ${open}`);
    expect((await bookAt(w.base, host.user, event, utcIso(day, "09:30"))).status).toBe(409);
    expect((await bookAt(w.base, host.user, event, utcIso(day, "12:00"))).status).toBe(201);
  });

  it("a 429 with Retry-After: the booking fails closed and no call reaches Graph for that connection before it", async () => {
    const ora = w.microsoft.addUser({ mail: "ora@contoso.test" });
    const host = await hostWithMicrosoft(w, ora.id);
    const event = await eventAt(w.base, host.key);
    const day = dayFromToday(4);
    w.microsoft.throttle("calendarView", { retryAfterSeconds: 3 });
    const before = w.microsoft.calls("calendarView");
    const first = await bookAt(w.base, host.user, event, utcIso(day, "09:00"));
    expect([first.status, first.body.message]).toEqual([503, "calendar is unavailable"]);
    expect(w.microsoft.calls("calendarView")).toBe(before + 1);
    const [conn] = await connections(host.key);
    expect(conn).toMatchObject({ status: "error", last_error: expect.stringContaining("retrying after 3 s") });
    // Held back: slots and bookings fail closed at once, without asking Graph.
    expect((await slotsAt(w.base, host.user, event, day)).status).toBe(503);
    expect((await bookAt(w.base, host.user, event, utcIso(day, "09:00"))).status).toBe(503);
    expect(w.microsoft.calls("calendarView")).toBe(before + 1);
    // After it, the calendar is read again.
    const booked = await until("the Retry-After to pass", async () => {
      const res = await bookAt(w.base, host.user, event, utcIso(day, "09:00"));
      return res.status === 201 ? res : undefined;
    });
    expect(booked.status).toBe(201);
    expect(w.microsoft.calls("calendarView")).toBe(before + 2);
  });

  it("a Graph that does not answer fails closed within CALENDAR_TIMEOUT_MS; errors fail closed too", async () => {
    const pia = w.microsoft.addUser({ mail: "pia@contoso.test" });
    const host = await hostWithMicrosoft(w, pia.id);
    const event = await eventAt(w.base, host.key);
    const day = dayFromToday(5);
    w.microsoft.fault("calendarView", { hang: true });
    const started = Date.now();
    const slow = await slotsAt(w.base, host.user, event, day);
    expect(slow.status).toBe(503);
    expect(slow.headers.get("retry-after")).toBeTruthy();
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1000);
    w.microsoft.clearFaults();
    w.microsoft.fault("calendarView", { status: 500, body: { error: { code: "generalException", message: "General failure." } } });
    expect((await bookAt(w.base, host.user, event, utcIso(day, "10:00"))).status).toBe(503);
    expect((await connections(host.key))[0]).toMatchObject({ status: "error", last_error: expect.stringContaining("500 (generalException: General failure.)") });
    expect((await bookAt(w.base, host.user, event, utcIso(day, "10:00"))).status).toBe(201);
  });

  it("refreshes an expired access token, keeps the rotated refresh token before using it; an expired one (AADSTS70008) makes the connection invalid", async () => {
    const uma = w.microsoft.addUser({ mail: "uma@contoso.test" });
    const host = await hostWithMicrosoft(w, uma.id);
    const event = await eventAt(w.base, host.key);
    const day = dayFromToday(7);
    const live = () => w.microsoft.oauth.grants({ live: true }).find((g) => g.user.id === uma.id)!.liveRefreshTokens;
    const [first] = live();
    const sealed = async () => (await w.mongo.collection("calendar_connections").findOne({ account: "uma@contoso.test" }))!.credentials_sealed as string;
    const before = await sealed();
    w.microsoft.expireAccessToken();
    expect((await slotsAt(w.base, host.user, event, day)).status).toBe(200);
    expect(await sealed()).not.toBe(before);
    // Microsoft keeps the old refresh token working; ending it proves the stored one is the rotated one.
    w.microsoft.expireRefreshToken(first);
    w.microsoft.expireAccessToken();
    expect((await slotsAt(w.base, host.user, event, day)).status).toBe(200);
    expect((await connections(host.key))[0].status).toBe("ok");

    w.microsoft.expireRefreshToken();
    w.microsoft.expireAccessToken();
    // A booking reads the calendar and has no older read to fall back on (a listing may, for 15 minutes).
    expect((await bookAt(w.base, host.user, event, utcIso(day, "09:00"))).status).toBe(503);
    expect((await connections(host.key))[0]).toMatchObject({ status: "invalid", last_error: expect.stringContaining("authorize microsoft again") });
  });

  it("a revoked grant (AADSTS50173) makes the connection invalid until the host authorizes again, which repairs it", async () => {
    const quin = w.microsoft.addUser({ mail: "quin@contoso.test" });
    const host = await hostWithMicrosoft(w, quin.id);
    const event = await eventAt(w.base, host.key);
    const day = dayFromToday(6);
    w.microsoft.revoke(quin.id);
    expect((await bookAt(w.base, host.user, event, utcIso(day, "09:00"))).status).toBe(503);
    const [broken] = await connections(host.key);
    expect(broken).toMatchObject({ id: host.connection.id, status: "invalid", last_error: expect.stringContaining("authorize microsoft again") });
    // Invalid: no more calls to the identity platform or Graph until the host authorizes again.
    const calls = w.microsoft.calls();
    expect((await slotsAt(w.base, host.user, event, day)).status).toBe(503);
    expect(w.microsoft.calls()).toBe(calls);
    await connectThroughOAuth(w, host.key, "microsoft", quin.id);
    const [repaired] = await connections(host.key);
    expect(repaired).toMatchObject({ id: host.connection.id, status: "ok", last_error: null });
    expect((await bookAt(w.base, host.user, event, utcIso(day, "09:00"))).status).toBe(201);
  });
});

describe("bookings written to Outlook", () => {
  it("written once without attendees (no invitation from Microsoft), moved in place on reschedule, deleted on cancel, never counted twice", async () => {
    const vic = w.microsoft.addUser({ mail: "vic@contoso.test" });
    const host = await hostWithMicrosoft(w, vic.id);
    const calendar = (host.connection.calendars as Json[]).find((c) => c.name === "Calendar");
    const event = await eventAt(w.base, host.key, { name: "Intro", connected_calendar_id: calendar.id });
    const day = dayFromToday(8);
    const booked = await bookAt(w.base, host.user, event, utcIso(day, "09:00"));
    expect(booked.status).toBe(201);
    const first = booked.body.data;
    await synced(host.key, event.id, first.id);
    const mine = () => w.microsoft.writtenEvents().filter((e) => e.userId === vic.id);
    expect(mine()).toHaveLength(1);
    const [written] = mine();
    expect(written).toMatchObject({ calendarId: vic.defaultCalendarId, subject: `Intro (${host.user.full_name}, Ada Lovelace)`, attendees: [], showAs: "busy", transactionId: `${first.id}@127.0.0.1`, isOnlineMeeting: false });
    expect(written.body.content).toContain("Booked by: Ada Lovelace <ada@example.com>");
    expect([written.startMs, written.endMs]).toEqual([Date.parse(utcIso(day, "09:00")), Date.parse(utcIso(day, "09:30"))]);
    const created = w.microsoft.requests().filter((r) => r.route === "POST /v1.0/me/calendars/:calendarId/events" && r.status === 201);
    expect(created.map((r) => JSON.parse(r.body).transactionId)).toContain(`${first.id}@127.0.0.1`);

    // A reschedule into its own old time (the host's hours now start at 09:15): its event in Outlook is the booking's
    // own, not a conflict; calendarView alone would say 09:00-09:30 is taken.
    const shifted = Object.fromEntries(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map((d) => [d, [{ start: "09:15", end: "18:00" }]]));
    await restAt(w.base, "PUT", "/api/v1/user/availability", { key: host.key, body: { availability: { weekly_hours: shifted, date_overrides: [], minimum_notice_minutes: 0, booking_window_days: 60 } } });
    const moved = await restAt(w.base, "POST", `/api/v1/public/bookings/${first.private_key}/reschedule`, { body: { booking: { start_time: utcIso(day, "09:15") } } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(201);
    const second = moved.body.data;
    await synced(host.key, event.id, second.id);
    expect(mine()).toHaveLength(1);
    expect(mine()[0].id).toBe(written.id);
    expect(mine()[0].startMs).toBe(Date.parse(utcIso(day, "09:15")));
    const patched = w.microsoft.requests().filter((r) => r.route === "PATCH /v1.0/me/events/:eventId" && decodeURIComponent(r.path).endsWith(written.id));
    expect(patched.length).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(patched[0].body).transactionId).toBeUndefined();

    const canceled = await restAt(w.base, "POST", `/api/v1/public/bookings/${second.private_key}/cancel`, { body: { booking: {} } });
    expect(canceled.status).toBe(200);
    await until("deleted", async () => (mine().length === 0 ? true : undefined));
    expect(w.microsoft.deletedEvents().map((e) => e.id)).toContain(written.id);
    expect(w.microsoft.invitations()).toEqual([]);
  });

  it("an event the host already deleted in Outlook (404) counts as deleted", async () => {
    const wes = w.microsoft.addUser({ mail: "wes@contoso.test" });
    const host = await hostWithMicrosoft(w, wes.id);
    const calendar = (host.connection.calendars as Json[]).find((c) => c.name === "Calendar");
    const event = await eventAt(w.base, host.key, { connected_calendar_id: calendar.id });
    const b = (await bookAt(w.base, host.user, event, utcIso(dayFromToday(9), "11:00"))).body.data;
    await synced(host.key, event.id, b.id);
    const [written] = w.microsoft.writtenEvents().filter((e) => e.userId === wes.id);
    w.microsoft.state.events.delete(written.id);
    expect((await restAt(w.base, "POST", `/api/v1/public/bookings/${b.private_key}/cancel`, { body: { booking: {} } })).status).toBe(200);
    const gone = (r: { route: string | null; path: string; status?: number }) => r.route === "DELETE /v1.0/me/events/:eventId" && decodeURIComponent(r.path).endsWith(written.id);
    await until("the delete tried", async () => (w.microsoft.requests().some(gone) ? true : undefined));
    const rec = await synced(host.key, event.id, b.id, "canceled");
    expect(rec.calendar_event_error).toBeNull();
    // Once: the 404 was the answer that counts as done, not a failure to retry.
    await new Promise((r) => setTimeout(r, 300));
    expect(w.microsoft.requests().filter(gone).map((r) => r.status)).toEqual([404]);
  });

  it("a write Graph throttles (429, Retry-After) is retried by the outbox after it, and lands once", async () => {
    const xia = w.microsoft.addUser({ mail: "xia@contoso.test" });
    const host = await hostWithMicrosoft(w, xia.id);
    const calendar = (host.connection.calendars as Json[]).find((c) => c.name === "Calendar");
    const event = await eventAt(w.base, host.key, { connected_calendar_id: calendar.id });
    w.microsoft.throttle("createEvent", { retryAfterSeconds: 2 });
    const b = (await bookAt(w.base, host.user, event, utcIso(dayFromToday(10), "11:00"))).body.data;
    await synced(host.key, event.id, b.id);
    expect(w.microsoft.writtenEvents().filter((e) => e.userId === xia.id)).toHaveLength(1);
    const creates = w.microsoft.requests().filter((r) => r.route === "POST /v1.0/me/calendars/:calendarId/events" && JSON.parse(r.body).transactionId === `${b.id}@127.0.0.1`);
    expect(creates.map((r) => r.status)).toEqual([429, 201]);
    expect(creates[1].at - creates[0].at).toBeGreaterThanOrEqual(2000);
  });
});

describe("Teams for calendar_meet", () => {
  const TEAMS = /https:\/\/teams\.microsoft\.com\/l\/meetup-join\/[^\s"<>]+/;
  let hooks = 0;

  /** A host with a Microsoft account, a calendar_meet event writing to its calendar, and a webhook on a fresh path. */
  async function teamsHost(seed: Parameters<ProviderWorld["microsoft"]["addUser"]>[0]) {
    const account = w.microsoft.addUser(seed);
    const host = await hostWithMicrosoft(w, account.id);
    const calendar = (host.connection.calendars as Json[]).find((c) => c.name === "Calendar");
    const event = await eventAt(w.base, host.key, { name: "Sync", location: { name: "calendar_meet" }, connected_calendar_id: calendar.id });
    const path = `/ms-hook-${++hooks}`;
    const hook = await restAt(w.base, "POST", "/api/v1/webhooks", { key: host.key, body: { webhook: { url: receiver.url(path), events: ["booking.created", "booking.rescheduled", "booking.canceled"] } } });
    expect(hook.status).toBe(201);
    receiver.secret(path, hook.body.data.secret);
    return { account, host, event, path };
  }

  it("is accepted on a writable Microsoft calendar only", async () => {
    const yan = w.microsoft.addUser({ mail: "yan@contoso.test" });
    w.microsoft.addCalendar(yan.id, { name: "Read only", canEdit: false });
    const host = await hostWithMicrosoft(w, yan.id);
    const readOnly = (host.connection.calendars as Json[]).find((c) => c.name === "Read only");
    const refused = await restAt(w.base, "POST", "/api/v1/events", { key: host.key, body: { event: { name: "x", url: `ro-${yan.id.slice(0, 8)}`, location: { name: "calendar_meet" }, connected_calendar_id: readOnly.id } } });
    expect(refused.status).toBe(422);
    const none = await restAt(w.base, "POST", "/api/v1/events", { key: host.key, body: { event: { name: "x", url: `none-${yan.id.slice(0, 8)}`, location: { name: "calendar_meet" } } } });
    expect([none.status, none.body.message]).toEqual([422, "calendar_meet needs a Google or Microsoft calendar selected for the event"]);
    const calendar = (host.connection.calendars as Json[]).find((c) => c.name === "Calendar");
    expect((await restAt(w.base, "POST", "/api/v1/events", { key: host.key, body: { event: { name: "x", url: `ok-${yan.id.slice(0, 8)}`, location: { name: "calendar_meet" }, connected_calendar_id: calendar.id } } })).status).toBe(201);
  });

  it("a booking answers with the link pending; the Teams link then reaches the e-mails, the webhook and the pages; a reschedule keeps it; a cancel removes the event", async () => {
    const { account, host, event, path } = await teamsHost({ displayName: "Zoe", mail: "zoe@contoso.test" });
    const day = dayFromToday(11);
    const booked = await bookAt(w.base, host.user, event, utcIso(day, "10:00"));
    expect(booked.status).toBe(201);
    expect(booked.body.data).toMatchObject({ meeting_url: null, meeting_status: "pending" });
    const b = booked.body.data;

    const [mail] = await smtp.waitFor(1, (m) => m.envelope.to.includes("ada@example.com") && /Sync/.test(m.parsed.subject ?? ""));
    const link = TEAMS.exec(mail.parsed.text ?? "")?.[0];
    expect(link, mail.parsed.text).toBeDefined();
    await smtp.waitFor(1, (m) => m.envelope.to.includes(host.user.email) && (m.parsed.text ?? "").includes(link!));
    const [message] = await receiver.waitFor(path, 1);
    expect(message.message?.data.booking).toMatchObject({ meeting_url: link, meeting_status: "ready", meeting_error: null });
    expect((await restAt(w.base, "GET", `/api/v1/public/bookings/${b.private_key}`)).body.data).toMatchObject({ meeting_url: link, meeting_status: "ready" });
    expect(await recordOf(w.base, host.key, event.id, b.id)).toMatchObject({ meeting_url: link, meeting_status: "ready", calendar_event_status: "synced" });
    expect(await (await fetch(`${w.base}/booking/${b.private_key}`)).text()).toContain(`href="${link}"`);

    // Outlook made the meeting: an online event for Teams for business, nobody invited by Exchange.
    const mine = () => w.microsoft.writtenEvents().filter((e) => e.userId === account.id);
    expect(mine()).toHaveLength(1);
    const [written] = mine();
    expect(written).toMatchObject({ isOnlineMeeting: true, onlineMeetingProvider: "teamsForBusiness", attendees: [], onlineMeeting: { joinUrl: link } });
    const create = w.microsoft.requests().find((r) => r.route === "POST /v1.0/me/calendars/:calendarId/events" && JSON.parse(r.body).transactionId === `${b.id}@127.0.0.1`)!;
    expect(JSON.parse(create.body)).toMatchObject({ isOnlineMeeting: true, onlineMeetingProvider: "teamsForBusiness" });

    const moved = await restAt(w.base, "POST", `/api/v1/public/bookings/${b.private_key}/reschedule`, { body: { booking: { start_time: utcIso(day, "15:00") } } });
    expect(moved.status).toBe(201);
    expect(moved.body.data).toMatchObject({ meeting_url: link, meeting_status: "ready" });
    await until("moved", async () => (mine()[0]?.startMs === Date.parse(utcIso(day, "15:00")) ? true : undefined));
    expect(mine()).toHaveLength(1);
    expect(mine()[0]).toMatchObject({ id: written.id, onlineMeeting: { joinUrl: link } });
    await smtp.waitFor(1, (m) => m.envelope.to.includes("ada@example.com") && (m.parsed.text ?? "").includes(link!) && /3:00 PM/.test(m.parsed.text ?? ""));
    const [rescheduled] = await receiver.waitFor(path, 2).then((all) => all.filter((x) => x.message?.type === "booking.rescheduled"));
    expect(rescheduled.message?.data.booking).toMatchObject({ meeting_url: link, meeting_status: "ready" });

    await restAt(w.base, "POST", `/api/v1/public/bookings/${moved.body.data.private_key}/cancel`, { body: { booking: {} } });
    await until("deleted", async () => (mine().length === 0 ? true : undefined));
    expect(w.microsoft.deletedEvents().map((e) => e.id)).toContain(written.id);
    expect(w.microsoft.invitations()).toEqual([]);
  });

  it("a calendar that offers no Teams (a personal account): the event is written, the meeting fails at once with the reason, the e-mail says the host sends the link", async () => {
    const { host, event, path } = await teamsHost({ personal: true, mail: "amy@outlook.test" });
    const t0 = Date.now();
    const b = (await bookAt(w.base, host.user, event, utcIso(dayFromToday(12), "10:00"))).body.data;
    // The meeting's failure and the event's write are recorded one after the other: both are waited for.
    const rec = await until("the meeting failed and the event written", async () => {
      const r = await recordOf(w.base, host.key, event.id, b.id);
      return r?.meeting_status === "failed" && r.calendar_event_status === "synced" ? r : undefined;
    });
    expect(rec).toMatchObject({ meeting_url: null, calendar_event_status: "synced", meeting_error: expect.stringContaining("no Teams meetings") });
    const [mail] = await smtp.waitFor(1, (m) => m.envelope.to.includes("ada@example.com") && (m.parsed.text ?? "").includes("will send you the meeting link"));
    // Not held back for MEETING_WAIT_SECONDS: nothing is coming.
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(mail.parsed.text).not.toMatch(TEAMS);
    const [message] = await receiver.waitFor(path, 1);
    expect(message.message?.data.booking).toMatchObject({ meeting_url: null, meeting_status: "failed" });
  });
});

describe("consent in a browser", () => {
  it("Chromium follows the authorization URL to the identity platform, picks the account, allows, confirms on our page, and lands back", async () => {
    const rae = w.microsoft.addUser({ displayName: "Rae", mail: "rae@contoso.test" });
    const { key } = await hostAt(w.base);
    const link = (await authorize(w.base, key, "microsoft", { purpose: "calendar", return_url: `${w.base}/healthz` })).body.data.authorization_url as string;
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(link);
      await page.selectOption("#user", { label: "Rae <rae@contoso.test>" });
      await Promise.all([page.waitForURL(/\/oauth\/microsoft\/callback/), page.click("button[value=allow]")]);
      // Our page names both accounts before anything is stored.
      expect(await page.textContent("#outcome")).toMatch(/^Connect the Microsoft account rae@contoso\.test to the scheduling account of .+\?$/);
      await Promise.all([page.waitForURL(/connected=microsoft/), page.click("#confirm")]);
      expect(page.url()).toBe(`${w.base}/healthz?connected=microsoft`);
    } finally {
      await browser.close();
    }
    expect((await connections(key))[0]).toMatchObject({ provider: "microsoft", account: "rae@contoso.test", status: "ok" });
    expect(rae.id).toBeTruthy();
  }, 90_000);
});

describe("secrets", () => {
  it("no token, code, verifier or client secret in any answer or log line", async () => {
    const grants = w.microsoft.oauth.grants();
    const secrets = grants.flatMap((g) => [...g.liveAccessTokens, ...g.liveRefreshTokens]);
    expect(secrets.length).toBeGreaterThan(0);
    const logs = w.server.logs();
    for (const s of secrets) expect(logs).not.toContain(s);
    // A token's prefix where a token starts: a random id holds "EwB" now and then (msg_RgEwBb6DzRxv98GdWfAuemPV failed a full run).
    expect(logs).not.toMatch(/(?<![A-Za-z0-9_.-])(?:EwB|0\.AR|0\.AQ)[A-Za-z0-9_-]{10}/);
    expect(logs).not.toContain(w.microsoft.clientSecret);
    const { key } = await hostAt(w.base);
    const answers = JSON.stringify([await connections(key), (await restAt(w.base, "GET", "/api/v1/calendars", { key })).body]);
    for (const s of secrets) expect(answers).not.toContain(s);
    // States are kept only as their hash.
    const state = new URL((await authorize(w.base, key, "microsoft", { purpose: "calendar" })).body.data.authorization_url).searchParams.get("state")!;
    expect(await w.mongo.collection("oauth_states").countDocuments({ _id: createHash("sha256").update(state).digest("hex") as never })).toBe(1);
  });
});
