// Single-use links (booking-kinds.md "Single-use links"): made, listed and revoked by the host on every protocol; the public API under the token for an event that is not public; one winner under concurrency across two servers on one database; 410 afterwards; the token stored only as its digest.
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt, rest, sharedServer, type Json } from "../helpers/api.js";
import { dayFromToday, links, newEvent, newHost, tokenOf, type Host, utcIso as at } from "../helpers/bookings.js";
import { expectGone, invoke, ok, PROTOCOLS, type Protocol } from "../helpers/calls.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { startServer, type RunningServer } from "../helpers/server.js";

describe.each(PROTOCOLS)("single-use links over %s", (protocol: Protocol) => {
  let host: Host;
  let event: Json;
  beforeAll(async () => {
    host = await newHost({ timezone: "UTC" });
    event = await newEvent(host, { name: "Private chat", is_public: false });
  });

  it("a link of an event that is not public opens it, lists its slots, books it once, and answers 410 after", async () => {
    const link = await ok(protocol, host.key, links.create(event.id), 201, "link created");
    expect(link).toMatchObject({ used: false, expires_at: expect.any(String) });
    expect(link.url).toMatch(/\/d\/[A-Za-z0-9_-]{22,}$/);
    expect(link.url.startsWith(sharedServer().baseUrl) || link.url.startsWith("http")).toBe(true);
    const days = (Date.parse(link.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
    const token = tokenOf(link.url);

    expect((await ok(protocol, host.key, links.event(token), 200, "event found")).name).toBe("Private chat");
    const day = dayFromToday(3);
    const slots = await ok(protocol, host.key, links.slots(token, day), 200, "slots found");
    expect(slots.slots.length).toBeGreaterThan(0);
    const made = await ok(protocol, host.key, links.book(token, at(day, "10:00")), 201, "booking confirmed");
    expect(made).toMatchObject({ status: "confirmed", start_time: at(day, "10:00") });

    expectGone(protocol, await invoke(protocol, undefined, links.book(token, at(day, "11:00"), "other@example.com")));
    expectGone(protocol, await invoke(protocol, undefined, links.event(token)));
    expectGone(protocol, await invoke(protocol, undefined, links.slots(token, day)));
    const listed = (await ok(protocol, host.key, links.list(event.id), 200, "links found")).find((l: Json) => l.id === link.id);
    expect(listed).toMatchObject({ id: link.id, url: link.url, used: true, revoked: false, booking_id: made.id, status: "used" });
  });

  it("a revoked link answers 410 and stays listed; an unknown token is 404; expires_in_days is checked", async () => {
    const link = await ok(protocol, host.key, links.create(event.id, { expires_in_days: 2 }), 201, "link created");
    expect(Math.round((Date.parse(link.expires_at) - Date.now()) / 3_600_000)).toBe(48);
    const revoked = await ok(protocol, host.key, links.revoke(event.id, link.id), 200, "link revoked");
    expect(revoked).toMatchObject({ id: link.id, revoked: true, used: false, status: "revoked" });
    expectGone(protocol, await invoke(protocol, undefined, links.book(tokenOf(link.url), at(dayFromToday(4), "10:00"))));
    expectGone(protocol, await invoke(protocol, undefined, links.event(tokenOf(link.url))));
    expect((await ok(protocol, host.key, links.list(event.id))).map((l: Json) => l.id)).toContain(link.id);
    const unknown = await invoke(protocol, undefined, links.event("x".repeat(43)));
    expect(protocol === "rest" ? unknown.http : unknown.code).toBe(protocol === "rest" ? 404 : 5);
    for (const days of [0, 91]) {
      const bad = await invoke(protocol, host.key, links.create(event.id, { expires_in_days: days }));
      expect(protocol === "rest" ? [bad.http, bad.message] : [bad.code, bad.message]).toEqual([protocol === "rest" ? 422 : 3, "expires_in_days must be a whole number from 1 to 90"]);
    }
    // Another account's event is not found.
    const other = await newHost();
    const foreign = await invoke(protocol, other.key, links.create(event.id));
    expect(protocol === "rest" ? foreign.http : foreign.code).toBe(protocol === "rest" ? 404 : 5);
  });
});

describe("a link's event and rules", () => {
  it("an inactive event is 404 through its link; the event's rules still apply", async () => {
    const host = await newHost({ timezone: "UTC" });
    const event = await newEvent(host, { name: "Paused", is_public: false, minimum_notice_minutes: 1440 });
    const link = (await rest("POST", `/events/${event.id}/single_use_links`, { key: host.key })).body.data;
    const token = tokenOf(link.url);
    const soon = await rest("POST", `/public/links/${token}/bookings`, { body: { booking: { start_time: at(dayFromToday(0), "23:30"), attendee_name: "A", attendee_email: "a@example.com" } } });
    expect({ status: soon.status, reason: soon.body.data?.reason }).toMatchObject({ status: 409 });
    // A refused booking leaves the link unused.
    expect((await rest("GET", `/events/${event.id}/single_use_links`, { key: host.key })).body.data[0].used).toBe(false);
    expect((await rest("PATCH", `/events/${event.id}`, { key: host.key, body: { event: { active: false } } })).status).toBe(200);
    expect((await rest("GET", `/public/links/${token}`)).status).toBe(404);
  });

  it("keeps the token only as its digest", async () => {
    const host = await newHost({ timezone: "UTC" });
    const event = await newEvent(host);
    const link = (await rest("POST", `/events/${event.id}/single_use_links`, { key: host.key })).body.data;
    const conn = await mongoose.createConnection(sharedServer().databaseUri).asPromise();
    try {
      const stored = await conn.collection("single_use_links").findOne({ _id: new mongoose.Types.ObjectId(link.id) });
      expect(stored).not.toBeNull();
      expect(JSON.stringify(stored)).not.toContain(tokenOf(link.url));
    } finally {
      await conn.close();
    }
  });
});

describe("one winner across two servers on one database", () => {
  let db: TestDatabase;
  const servers: RunningServer[] = [];
  beforeAll(async () => {
    db = await startDatabase();
    const env = { MONGODB_URI: db.uri, API_KEY_SECRET: "a".repeat(64) };
    servers.push(...(await Promise.all([startServer(env), startServer(env)])));
  }, 180_000);
  afterAll(async () => {
    for (const s of servers) await s.stop("SIGKILL");
    await db?.kill();
  });

  it("of 12 bookings at different times through one link, sent at once to both servers, exactly one is made; the rest are 410", async () => {
    const [a, b] = servers;
    const host = await fixturesAt(a.baseUrl).newHost({ timezone: "UTC" });
    const event = await fixturesAt(a.baseUrl).newEvent(host, { is_public: false });
    const link = (await restAt(a.baseUrl, "POST", `/api/v1/events/${event.id}/single_use_links`, { key: host.key })).body.data;
    const token = tokenOf(link.url);
    const day = dayFromToday(5);
    // A 503 (the database busy on a loaded machine) is tried again, as a client would.
    const send = async (i: number) => {
      for (let attempt = 0; ; attempt++) {
        const res = await restAt(i % 2 === 0 ? a.baseUrl : b.baseUrl, "POST", `/api/v1/public/links/${token}/bookings`, {
          body: { booking: { start_time: at(day, `${String(8 + i).padStart(2, "0")}:00`), attendee_name: `Racer ${i}`, attendee_email: `racer${i}@example.com` } },
        });
        if (res.status !== 503 || attempt === 5) return res;
      }
    };
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => send(i)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201), JSON.stringify(statuses)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 201).every((s) => s === 410), JSON.stringify(statuses)).toBe(true);
    const list = await restAt(b.baseUrl, "GET", `/api/v1/events/${event.id}/bookings?category=upcoming`, { key: host.key });
    expect(list.body.data.records).toHaveLength(1);
  }, 120_000);
});
