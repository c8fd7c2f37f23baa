// Google Calendar (providers.md "Calendars"): busy times from freeBusy and their failures (errors, 5xx, deadline, rate limits), tokens (expiry, 401, revoked grant), bookings written, moved, deleted, never twice.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GOOGLE_ROUTES } from "../fakes/google.js";
import { restAt, type Json } from "../helpers/api.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { dayFromToday } from "../helpers/bookings.js";
import { bookAt, eventAt, hostAt, slotsAt } from "../helpers/calendars.js";
import { authorize, connectThroughOAuth, finish, hostWithGoogle, recordOf, startProviderWorld, type ProviderWorld } from "../helpers/providers.js";
import { until } from "../helpers/wait.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";

const TIMEOUT_MS = 1500;
let w: ProviderWorld;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  w = await startProviderWorld({ CALENDAR_TIMEOUT_MS: String(TIMEOUT_MS), CALENDAR_CACHE_SECONDS: "0", ...CLOCK_CONTROL_ENV });
});

afterAll(async () => {
  await w?.stop();
  await receiver?.close();
});

let n = 0;
/** A host with a Google account of its own (so faults of one test do not reach another's account). */
async function googleHost(): Promise<{ key: string; user: Json; connection: Json; email: string; primary: Json }> {
  const email = `host${++n}-${Date.now().toString(36)}@gmail.test`;
  const h = await hostWithGoogle(w, email);
  const primary = (h.connection.calendars as Json[]).find((c) => c.email === email);
  return { ...h, email, primary };
}

async function connectionOf(key: string): Promise<Json> {
  return (await restAt(w.base, "GET", "/api/v1/calendar_connections", { key })).body.data[0];
}

const at = (day: string, time: string) => `${day}T${time}:00.000Z`;

describe("busy times from freeBusy", () => {
  it("an event on a conflict-checked Google calendar takes its slots; unchecked it does not", async () => {
    const h = await googleHost();
    const day = dayFromToday(2);
    w.google.addEvent(h.email, { start: at(day, "10:00"), end: at(day, "11:00") });
    w.google.addEvent(h.email, { start: at(day, "12:00"), end: at(day, "13:00"), transparency: "transparent" });
    const event = await eventAt(w.base, h.key);
    const { starts } = await slotsAt(w.base, h.user, event, day);
    expect(starts).not.toContain(`${day} 10:00`);
    expect(starts).not.toContain(`${day} 10:30`);
    expect(starts).toContain(`${day} 11:00`);
    expect(starts).toContain(`${day} 12:00`);
    expect(w.google.http.requests.some((r) => r.route === GOOGLE_ROUTES.freeBusy && JSON.parse(r.body).items[0].id === h.email)).toBe(true);
    expect((await bookAt(w.base, h.user, event, at(day, "10:30"))).status).toBe(409);
    await restAt(w.base, "PATCH", `/api/v1/calendars/${h.primary.id}`, { key: h.key, body: { calendar: { check_for_conflicts: false } } });
    expect((await slotsAt(w.base, h.user, event, day)).starts).toContain(`${day} 10:00`);
  });

  it("a calendar listed under `errors`, a 5xx, or no answer within the deadline: 503, nothing booked, status error", async () => {
    const h = await googleHost();
    const event = await eventAt(w.base, h.key);
    const day = dayFromToday(3);
    w.google.freeBusyError(h.email, "internalError");
    const listed = await bookAt(w.base, h.user, event, at(day, "09:00"));
    expect([listed.status, listed.body.message]).toEqual([503, "calendar is unavailable"]);
    expect(listed.headers.get("retry-after")).toBeTruthy();
    expect(await connectionOf(h.key)).toMatchObject({ status: "error" });
    expect((await connectionOf(h.key)).last_error).toContain("internalError");
    w.google.freeBusyError(h.email, null);

    w.google.serverError(GOOGLE_ROUTES.freeBusy, { status: 500 });
    expect((await bookAt(w.base, h.user, event, at(day, "09:30"))).status).toBe(503);

    w.google.http.fault(GOOGLE_ROUTES.freeBusy, { hang: true });
    const t0 = Date.now();
    const slow = await bookAt(w.base, h.user, event, at(day, "10:00"));
    expect(slow.status).toBe(503);
    expect(Date.now() - t0).toBeLessThan(TIMEOUT_MS + 1500);
    expect((await connectionOf(h.key)).last_error).toMatch(/did not answer in time|no answer within/);

    const ok = await bookAt(w.base, h.user, event, at(day, "10:30"));
    expect(ok.status).toBe(201);
    expect(await connectionOf(h.key)).toMatchObject({ status: "ok", last_error: null });
  });

  for (const [label, limit] of [
    ["429", { status: 429 as const }],
    ["403 rateLimitExceeded", { status: 403 as const, reason: "rateLimitExceeded" as const }],
    ["403 userRateLimitExceeded", { status: 403 as const, reason: "userRateLimitExceeded" as const }],
  ] as const) {
    it(`${label} with Retry-After: reads fail closed, the 503 says to wait as long, and Google is not asked again before it`, async () => {
      const h = await googleHost();
      const event = await eventAt(w.base, h.key);
      const day = dayFromToday(4);
      w.google.rateLimit(GOOGLE_ROUTES.freeBusy, { ...limit, retryAfter: 20 });
      const first = await bookAt(w.base, h.user, event, at(day, "09:00"));
      expect({ status: first.status, retryAfter: first.headers.get("retry-after"), data: first.body.data }).toEqual({ status: 503, retryAfter: "20", data: { retry_after: 20 } });
      const calls = w.google.http.calls(GOOGLE_ROUTES.freeBusy);
      const again = await bookAt(w.base, h.user, event, at(day, "09:00"));
      expect(again.status).toBe(503);
      expect(Number(again.headers.get("retry-after"))).toBeGreaterThanOrEqual(18);
      expect((await slotsAt(w.base, h.user, event, day)).status).toBe(503);
      expect(w.google.http.calls(GOOGLE_ROUTES.freeBusy)).toBe(calls);
      expect((await connectionOf(h.key)).last_error).toMatch(/rate limit/);
      // Google's Retry-After (20 s) passes on the service's clock.
      await advanceClock(w.base, 20_100);
      expect((await bookAt(w.base, h.user, event, at(day, "09:00"))).status).toBe(201);
      expect(w.google.http.calls(GOOGLE_ROUTES.freeBusy)).toBe(calls + 1);
    });
  }
});

describe("tokens", () => {
  it("an access token Google refuses (401) is refreshed and the same call repeated once", async () => {
    const h = await googleHost();
    const event = await eventAt(w.base, h.key);
    w.google.expireAccessToken();
    w.google.http.resetLog();
    const res = await bookAt(w.base, h.user, event, at(dayFromToday(5), "09:00"));
    expect(res.status).toBe(201);
    const seen = w.google.http.requests.map((r) => `${r.route} ${r.status}`);
    expect(seen).toEqual([`${GOOGLE_ROUTES.freeBusy} 401`, `${GOOGLE_ROUTES.token} 200`, `${GOOGLE_ROUTES.freeBusy} 200`]);
    expect(w.google.http.requests[1].body).toContain("grant_type=refresh_token");
  });

  it("a revoked grant: invalid with last_error, fails closed without calling Google, repaired by authorizing again (each change a calendar.connection_changed)", async () => {
    const h = await googleHost();
    const event = await eventAt(w.base, h.key);
    const hook = await restAt(w.base, "POST", "/api/v1/webhooks", { key: h.key, body: { webhook: { url: receiver.url("/revoked"), events: ["calendar.connection_changed"] } } });
    expect(hook.status).toBe(201);
    receiver.secret("/revoked", hook.body.data.secret);
    const day = dayFromToday(6);
    const grant = w.google.grants({ live: true }).find((g) => g.user.email === h.email)!;
    w.google.revokeGrant(grant.id);
    const refused = await bookAt(w.base, h.user, event, at(day, "09:00"));
    expect(refused.status).toBe(503);
    const conn = await connectionOf(h.key);
    expect(conn.status).toBe("invalid");
    expect(conn.last_error).toBe("google no longer accepts the authorization (revoked or expired); authorize google again");
    const calls = w.google.http.calls();
    expect((await bookAt(w.base, h.user, event, at(day, "09:00"))).status).toBe(503);
    expect(w.google.http.calls()).toBe(calls);
    await connectThroughOAuth(w, h.key, "google", h.email);
    const repaired = await connectionOf(h.key);
    expect(repaired).toMatchObject({ id: h.connection.id, status: "ok", last_error: null });
    expect((repaired.calendars as Json[]).map((c) => c.id)).toEqual((h.connection.calendars as Json[]).map((c) => c.id));
    // Turning invalid, and ok again through OAuth: a message each, the connection as listed then.
    const [invalid, reconnected] = await receiver.waitFor("/revoked", 2);
    expect(reconnected.verifyError).toBeUndefined();
    expect(invalid.message).toMatchObject({ type: "calendar.connection_changed", data: { connection: { id: h.connection.id, status: "invalid" } } });
    expect(reconnected.message).toMatchObject({ type: "calendar.connection_changed", data: { connection: repaired } });
    expect((await bookAt(w.base, h.user, event, at(day, "09:00"))).status).toBe(201);
  });
});

describe("authorizing one Google account twice at once", () => {
  it("makes one connection, its calendars once, and both landings say connected", async () => {
    const email = `twice${++n}-${Date.now().toString(36)}@gmail.test`;
    w.google.addUser(email);
    const host = await hostAt(w.base);
    const callbacks = [];
    for (let i = 0; i < 2; i++) {
      const started = await authorize(w.base, host.key, "google", { purpose: "calendar" });
      expect(started.status).toBe(200);
      callbacks.push(w.google.approve(started.body.data.authorization_url, { user: email }));
    }
    const landed = await Promise.all(callbacks.map((url) => finish(url)));
    for (const page of landed) expect([page.status, page.text.includes("connected")], page.text).toEqual([200, true]);
    const connections = (await restAt(w.base, "GET", "/api/v1/calendar_connections", { key: host.key })).body.data as Json[];
    expect(connections.map((c) => c.account)).toEqual([email]);
    const urls = (connections[0].calendars as Json[]).map((c) => c.url ?? c.id);
    expect(new Set(urls).size).toBe(urls.length);
    // A third authorization repairs that one connection, as before.
    await connectThroughOAuth(w, host.key, "google", email);
    expect(((await restAt(w.base, "GET", "/api/v1/calendar_connections", { key: host.key })).body.data as Json[]).map((c) => c.id)).toEqual([connections[0].id]);
  });
});

describe("bookings written to Google", () => {
  it("written with conferenceDataVersion=1, sendUpdates=none and the colour; moved in place on reschedule; deleted on cancel", async () => {
    const h = await googleHost();
    const event = await eventAt(w.base, h.key, { name: "Intro", color: "tomato", connected_calendar_id: h.primary.id });
    const day = dayFromToday(7);
    const booked = await bookAt(w.base, h.user, event, at(day, "09:00"));
    expect(booked.status).toBe(201);
    const first = booked.body.data;
    await until("synced", async () => ((await recordOf(w.base, h.key, event.id, first.id))?.calendar_event_status === "synced" ? true : undefined));
    // The host's copy of the booking's event (domain/bookingEvent.ts): the event and both people.
    const [written] = w.google.events(h.email).filter((e) => e.summary === `Intro (${h.user.full_name}, Ada Lovelace)`);
    expect(written.colorId).toBe("11");
    expect(new Date(written.start.dateTime!).toISOString()).toBe(at(day, "09:00"));
    expect(written.iCalUID).toBe(`${first.id}@127.0.0.1`);
    expect(written.attendees).toEqual([{ email: "ada@example.com", displayName: "Ada Lovelace" }]);
    const insert = w.google.writes.find((x) => x.kind === "insert" && x.eventId === written.id)!;
    expect(insert).toMatchObject({ sendUpdates: "none", conferenceDataVersion: "1", status: 200 });

    // A reschedule that overlaps the booking's own event (the host's hours now start at 09:15): our own event at
    // Google is not counted as busy against it; freeBusy alone would say 09:00-09:30 is taken.
    const shifted = Object.fromEntries(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map((d) => [d, [{ start: "09:15", end: "18:00" }]]));
    await restAt(w.base, "PUT", "/api/v1/user/availability", { key: h.key, body: { availability: { weekly_hours: shifted, date_overrides: [], minimum_notice_minutes: 0, booking_window_days: 60 } } });
    const moved = await restAt(w.base, "POST", `/api/v1/public/bookings/${first.private_key}/reschedule`, { body: { booking: { start_time: at(day, "09:15") } } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(201);
    const second = moved.body.data;
    await until("moved", async () => ((await recordOf(w.base, h.key, event.id, second.id))?.calendar_event_status === "synced" ? true : undefined));
    const after = w.google.events(h.email).filter((e) => e.summary === `Intro (${h.user.full_name}, Ada Lovelace)`);
    expect(after).toHaveLength(1);
    expect(after[0].id).toBe(written.id);
    expect(new Date(after[0].start.dateTime!).toISOString()).toBe(at(day, "09:15"));
    expect(w.google.writes.filter((x) => x.eventId === written.id).map((x) => x.kind)).toEqual(["insert", "patch"]);
    expect(w.google.writes.every((x) => x.sendUpdates === "none")).toBe(true);

    const canceled = await restAt(w.base, "POST", `/api/v1/public/bookings/${second.private_key}/cancel`, { body: { booking: {} } });
    expect(canceled.status).toBe(200);
    await until("deleted", async () => (w.google.events(h.email).some((e) => e.id === written.id) ? undefined : true));
    expect(w.google.writes.filter((x) => x.eventId === written.id).map((x) => x.kind)).toEqual(["insert", "patch", "delete"]);
  });

  it("an event already gone at Google (404/410) counts as deleted; a write whose id was never stored finds its event instead of writing another", async () => {
    const h = await googleHost();
    const event = await eventAt(w.base, h.key, { connected_calendar_id: h.primary.id });
    const day = dayFromToday(8);
    const b = (await bookAt(w.base, h.user, event, at(day, "11:00"))).body.data;
    await until("synced", async () => ((await recordOf(w.base, h.key, event.id, b.id))?.calendar_event_status === "synced" ? true : undefined));
    // As if the answer of the insert had been lost: the booking does not know its event's id.
    await w.mongo.collection("bookings").updateOne({ private_key: b.private_key }, { $set: { calendar_event_id: null } });
    const moved = (await restAt(w.base, "POST", `/api/v1/public/bookings/${b.private_key}/reschedule`, { body: { booking: { start_time: at(day, "12:00") } } })).body.data;
    await until("synced", async () => ((await recordOf(w.base, h.key, event.id, moved.id))?.calendar_event_status === "synced" ? true : undefined));
    const mine = w.google.events(h.email, { includeDeleted: true }).filter((e) => e.summary?.endsWith(", Ada Lovelace)"));
    expect(mine).toHaveLength(1);
    expect(new Date(mine[0].start.dateTime!).toISOString()).toBe(at(day, "12:00"));
    // Deleted at Google by the host first: the cancel's delete meets 410 and is done.
    const grant = w.google.grants({ live: true }).find((g) => g.user.email === h.email)!;
    const del = await fetch(`${w.google.apiUrl}/calendar/v3/calendars/${encodeURIComponent(h.email)}/events/${mine[0].id}`, { method: "DELETE", headers: { authorization: `Bearer ${grant.liveAccessTokens[0]}` } });
    expect(del.status).toBe(204);
    expect((await restAt(w.base, "POST", `/api/v1/public/bookings/${moved.private_key}/cancel`, { body: { booking: {} } })).status).toBe(200);
    await until("the delete tried", async () => (w.google.writes.some((x) => x.eventId === mine[0].id && x.status === 410) ? true : undefined));
    const rec = await until("synced", async () => {
      const r = await recordOf(w.base, h.key, event.id, moved.id, "canceled");
      return r?.calendar_event_status === "synced" ? r : undefined;
    });
    expect(rec.calendar_event_error).toBeNull();
    await new Promise((r) => setTimeout(r, 300));
    expect(w.google.writes.filter((x) => x.eventId === mine[0].id && x.kind === "delete").map((x) => x.status)).toEqual([204, 410]);
  });

  it("a write that fails with 503 is retried by the outbox and lands once", async () => {
    const h = await googleHost();
    const event = await eventAt(w.base, h.key, { connected_calendar_id: h.primary.id });
    w.google.serverError(GOOGLE_ROUTES.eventsInsert, { status: 503 });
    const b = (await bookAt(w.base, h.user, event, at(dayFromToday(9), "11:00"))).body.data;
    await until("synced", async () => ((await recordOf(w.base, h.key, event.id, b.id))?.calendar_event_status === "synced" ? true : undefined));
    expect(w.google.events(h.email)).toHaveLength(1);
  });
});

describe("secrets", () => {
  it("no access or refresh token in the server's logs", async () => {
    const tokens = w.google.grants().flatMap((g) => [...g.liveAccessTokens, ...g.liveRefreshTokens]);
    const logs = w.server.logs();
    for (const t of tokens) expect(logs).not.toContain(t);
    expect(logs).not.toMatch(/ya29\.[A-Za-z0-9_-]{10}|1\/\/[A-Za-z0-9_-]{10}/);
  });
});

describe("a token about to expire", () => {
  let short: ProviderWorld;
  beforeAll(async () => {
    // Google's tokens here live 30 s: always within the minute before expiry in which the service renews them.
    short = await startProviderWorld({ CALENDAR_CACHE_SECONDS: "0" }, { googleTokenTtlSeconds: 30 });
  }, 60_000);
  afterAll(async () => {
    await short?.stop();
  });

  it("is refreshed before the call, not after a 401", async () => {
    const h = await hostWithGoogle(short, "soon@gmail.test");
    const event = await eventAt(short.base, h.key);
    short.google.http.resetLog();
    expect((await bookAt(short.base, h.user, event, at(dayFromToday(2), "09:00"))).status).toBe(201);
    expect(short.google.http.requests.map((r) => `${r.route} ${r.status}`)).toEqual([`${GOOGLE_ROUTES.token} 200`, `${GOOGLE_ROUTES.freeBusy} 200`]);
  });
});
