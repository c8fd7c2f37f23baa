// Bookings written to the host's calendar through the outbox, against a real Radicale: create, reschedule, cancel.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt, type Json } from "../helpers/api.js";
import { dayFromToday } from "../helpers/bookings.js";
import { bookAt, eventAt, hostAt } from "../helpers/calendars.js";
import { startDatabase } from "../helpers/jongodb.js";
import { startFaultProxy, startRadicale, startSwitchProxy, type Radicale } from "../helpers/radicale.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

let radicale: Radicale;
let server: RunningServer;
let base: string;
let host: { key: string; user: Json };
let calendarUrl: string;
let event: Json;

async function record(bookingId: string, category = "upcoming"): Promise<Json> {
  const res = await restAt(base, "GET", `/api/v1/events/${event.id}/bookings?category=${category}`, { key: host.key });
  return (res.body.data.records as Json[]).find((r) => r.id === bookingId);
}

async function syncedRecord(bookingId: string, category = "upcoming"): Promise<Json> {
  return until(`booking ${bookingId} synced`, async () => {
    const r = await record(bookingId, category);
    return r?.calendar_event_status === "synced" ? r : undefined;
  });
}

const objectOf = (bookingId: string) => radicale.get("ann", `${calendarUrl}${bookingId}.ics`);

/**
 * An event of `owner` (on the server at `at`) that writes its bookings to ann's "Bookings" calendar reached through
 * `serverUrl`; no calendar of the connection checks for conflicts, so booking never needs to read one while the
 * way to Radicale misbehaves.
 */
async function writeOnlyEvent(at: string, owner: { key: string }, serverUrl: string): Promise<Json> {
  const conn = await restAt(at, "POST", "/api/v1/calendar_connections", { key: owner.key, body: { connection: { provider: "caldav", server_url: serverUrl, username: "ann", password: "secret" } } });
  expect(conn.status).toBe(201);
  const cal = (conn.body.data.calendars as Json[]).find((c) => c.name === "Bookings");
  for (const c of conn.body.data.calendars as Json[]) {
    await restAt(at, "PATCH", `/api/v1/calendars/${c.id}`, { key: owner.key, body: { calendar: { check_for_conflicts: false } } });
  }
  return eventAt(at, owner.key, { connected_calendar_id: cal.id });
}

beforeAll(async () => {
  radicale = await startRadicale({ ann: "secret" });
  calendarUrl = await radicale.mkcalendar("ann", "bookings", "Bookings");
  server = await startServer({ OUTBOUND_ALLOW_PRIVATE: "true", EFFECTS_POLL_MS: "100", EFFECTS_RETRY_SCALE: "0.001" });
  base = server.baseUrl;
  host = await hostAt(base);
  const res = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "caldav", server_url: radicale.url, username: "ann", password: "secret" } } });
  expect(res.status).toBe(201);
  await restAt(base, "PUT", "/api/v1/integrations/conference", { key: host.key, body: { integration: { provider: "jitsi", base_url: "https://meet.example.org" } } });
  event = await eventAt(base, host.key, { name: "Intro call", connected_calendar_id: res.body.data.calendars[0].id, location: { name: "conference" } });
});

afterAll(async () => {
  await server?.stop();
  await radicale?.dispose();
});

describe("write-back", () => {
  it("a booking becomes a VEVENT; a reschedule moves it; a cancel removes it", async () => {
    const day = dayFromToday(3);
    const booked = await bookAt(base, host.user, event, `${day}T10:00:00.000Z`);
    expect(booked.status).toBe(201);
    const first = booked.body.data;
    expect((await record(first.id)).calendar_event_status).toMatch(/^(pending|synced)$/);
    await syncedRecord(first.id);
    const written = await objectOf(first.id);
    expect(written.status).toBe(200);
    const text = written.body.replace(/\r\n /g, "");
    expect(text).toContain(`UID:${first.id}@localhost`);
    expect(text).toContain(`DTSTART:${day.replace(/-/g, "")}T100000Z`);
    // The host's copy of the booking's event (domain/bookingEvent.ts), the same the host's invitation e-mail carries.
    expect(text).toContain(`SUMMARY:Intro call (${host.user.full_name}\\, Ada Lovelace)`);
    expect(text).toContain("SEQUENCE:0");
    expect(text).toContain(`LOCATION:${first.meeting_url}`);
    expect(text).toMatch(/ATTENDEE;[^\r\n]*SCHEDULE-AGENT=CLIENT[^\r\n]*:mailto:ada@example\.com/);
    expect(text).not.toContain("METHOD:");

    const moved = await restAt(base, "POST", `/api/v1/public/bookings/${first.private_key}/reschedule`, { body: { booking: { start_time: `${day}T10:30:00.000Z` } } });
    expect(moved.status).toBe(201);
    const second = moved.body.data;
    await syncedRecord(second.id);
    await until("the old event removed", async () => ((await objectOf(first.id)).status === 404 ? true : undefined));
    const movedText = (await objectOf(second.id)).body.replace(/\r\n /g, "");
    expect(movedText).toContain(`DTSTART:${day.replace(/-/g, "")}T103000Z`);
    expect(movedText).toContain(`LOCATION:${first.meeting_url}`);

    const canceled = await restAt(base, "POST", `/api/v1/public/bookings/${second.private_key}/cancel`, { body: { booking: { reason: "conflict" } } });
    expect(canceled.status).toBe(200);
    await until("the event removed", async () => ((await objectOf(second.id)).status === 404 ? true : undefined));
    expect((await syncedRecord(second.id, "canceled")).calendar_event_status).toBe("synced");
  });

  it("a write the server refuses for good: calendar_event_status failed, with the reason", async () => {
    const other = await hostAt(base);
    const conn = await restAt(base, "POST", "/api/v1/calendar_connections", { key: other.key, body: { connection: { provider: "caldav", server_url: radicale.url, username: "ann", password: "secret" } } });
    expect(conn.status).toBe(201);
    const cal = (conn.body.data.calendars as Json[]).find((c) => c.name === "Bookings");
    // Not read for conflicts, so the booking itself does not need the calendar.
    await restAt(base, "PATCH", `/api/v1/calendars/${cal.id}`, { key: other.key, body: { calendar: { check_for_conflicts: false } } });
    const ev = await eventAt(base, other.key, { connected_calendar_id: cal.id });
    await radicale.setPassword("ann", "rotated");
    try {
      const booked = await bookAt(base, other.user, ev, `${dayFromToday(6)}T09:00:00.000Z`);
      expect(booked.status).toBe(201);
      const failed = await until("failed", async () => {
        const res = await restAt(base, "GET", `/api/v1/events/${ev.id}/bookings`, { key: other.key });
        const r = (res.body.data.records as Json[]).find((x) => x.id === booked.body.data.id);
        return r?.calendar_event_status === "failed" ? r : undefined;
      });
      expect(failed.calendar_event_error).toBe("the server refused the user name or password");
    } finally {
      await radicale.setPassword("ann", "secret");
    }
  });

  it("a write whose answer was lost: If-None-Match on the create, If-Match with the ETag on the retry, one object", async () => {
    const faults = await startFaultProxy(radicale.url);
    try {
      const other = await hostAt(base);
      const ev = await writeOnlyEvent(base, other, faults.url);
      faults.mode = "lost";
      const booked = await bookAt(base, other.user, ev, `${dayFromToday(7)}T09:00:00.000Z`);
      expect(booked.status).toBe(201);
      const id = booked.body.data.id as string;
      await until("synced", async () => {
        const res = await restAt(base, "GET", `/api/v1/events/${ev.id}/bookings`, { key: other.key });
        return (res.body.data.records as Json[]).find((x) => x.id === id && x.calendar_event_status === "synced");
      });
      const puts = faults.seen.filter((r) => r.method === "PUT" && r.path.endsWith(`/${id}.ics`));
      // The lost create, the retry's create refused because the object is there, the update on its ETag.
      expect(puts.map((p) => ({ ifNoneMatch: p.ifNoneMatch, ifMatch: p.ifMatch !== undefined, status: p.status === 412 ? 412 : p.status! < 300 ? "2xx" : p.status }))).toEqual([
        { ifNoneMatch: "*", ifMatch: false, status: "2xx" },
        { ifNoneMatch: "*", ifMatch: false, status: 412 },
        { ifNoneMatch: undefined, ifMatch: true, status: "2xx" },
      ]);
      const text = (await objectOf(id)).body.replace(/\r\n /g, "");
      expect(text.match(/BEGIN:VEVENT/g)).toHaveLength(1);
      // SEQUENCE is the booking's state (0 while it holds its time), not its count of writes.
      expect(text).toContain("SEQUENCE:0");
    } finally {
      await faults.close();
    }
  });

  it("an event without a calendar owes none: calendar_event_status none", async () => {
    const plain = await eventAt(base, host.key);
    const booked = await bookAt(base, host.user, plain, `${dayFromToday(4)}T09:00:00.000Z`);
    expect(booked.status).toBe(201);
    const res = await restAt(base, "GET", `/api/v1/events/${plain.id}/bookings`, { key: host.key });
    expect(res.body.data.records[0]).toMatchObject({ calendar_event_status: "none", calendar_event_error: null });
  });
});

describe("a worker killed in the middle of a calendar write", () => {
  it("the write still happens once the lease runs out, on the next process", async () => {
    const db = await startDatabase();
    const proxy = await startSwitchProxy(radicale.port);
    const env = { MONGODB_URI: db.uri, OUTBOUND_ALLOW_PRIVATE: "true", EFFECTS_POLL_MS: "100", EFFECTS_LEASE_MS: "1000", EFFECTS_RETRY_SCALE: "0.001" };
    let first: RunningServer | undefined = await startServer(env);
    let second: RunningServer | undefined;
    try {
      const at = first.baseUrl;
      const owner = await hostAt(at);
      // The calendar only receives bookings here, so booking does not need to read it while it hangs.
      const ev = await writeOnlyEvent(at, owner, proxy.url);
      proxy.mode = "hang";
      const booked = await bookAt(at, owner.user, ev, `${dayFromToday(5)}T08:00:00.000Z`);
      expect(booked.status).toBe(201);
      // Let the worker claim the effect and get stuck in the PUT, then kill the process outright.
      await until("the worker's write stuck at the proxy", () => proxy.held > 0, { timeoutMs: 10_000 });
      first.child.kill("SIGKILL");
      await first.stop();
      first = undefined;
      proxy.mode = "pass";
      second = await startServer(env);
      const id = booked.body.data.id as string;
      await until("the event written by the second process", async () => ((await objectOf(id)).status === 200 ? true : undefined));
      const res = await until("synced", async () => {
        const r = await restAt(second!.baseUrl, "GET", `/api/v1/events/${ev.id}/bookings`, { key: owner.key });
        const rec = (r.body.data.records as Json[]).find((x) => x.id === id);
        return rec?.calendar_event_status === "synced" ? rec : undefined;
      });
      expect(res.calendar_event_status).toBe("synced");
    } finally {
      await first?.stop();
      await second?.stop();
      await proxy.close();
      await db.kill();
    }
  }, 90_000);
});
