// Public booking abuse (issues 14, 29): writes must declare JSON, cross-origin writes CORS does not allow are refused, and a host's booking caps (per e-mail, per host, new bookers per address) hold across replicas.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseUrl, rest, restAt, type Json } from "../helpers/api.js";
import { dayFromToday, newEvent, newHost, utcIso } from "../helpers/bookings.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { startDbProxy, type DbProxy, type SeenCommand } from "../helpers/dbProxy.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";

const EVIL = "https://evil.example";
const APP = "https://app.example.com";
const PAGES = "https://book.example.com";
/**
 * Moves the replicas' clocks to just past the start of the next hour. The caps count in windows of the clock's hours
 * (and days, which begin with an hour): a block that ran across a boundary saw its counts start over (a run at
 * 08:59:48 UTC let a fourth new booker through). After the move, the block has the whole hour.
 */
async function toFreshWindow(servers: readonly RunningServer[]): Promise<void> {
  const hour = 3_600_000;
  await advanceClock(servers, hour - (Date.now() % hour) + 1_000);
}

let slot = 0;
/** A fresh free slot each call: 30-minute steps through a day three weeks ahead. */
const nextSlot = () => {
  const n = slot++;
  return utcIso(dayFromToday(21 + Math.floor(n / 48)), `${String(Math.floor((n % 48) / 2)).padStart(2, "0")}:${n % 2 === 0 ? "00" : "30"}`);
};

describe("writes must declare JSON, and cross-origin writes need CORS", () => {
  let host: { key: string; user: Json };
  let event: Json;
  let path: string;
  const booking = (email = "ada@example.com") => JSON.stringify({ booking: { start_time: nextSlot(), attendee_name: "Ada", attendee_email: email } });

  beforeAll(async () => {
    host = await newHost();
    event = await newEvent(host);
    path = `${baseUrl()}/api/v1/public/users/${host.user.url}/events/${event.url}/bookings`;
  });

  it("a booking POST as text/plain (what any web page may send unasked) is 415, booking nothing", async () => {
    for (const type of ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const res = await fetch(path, { method: "POST", headers: { "content-type": type }, body: booking() });
      expect(res.status, type).toBe(415);
      expect(await res.json()).toEqual({ success: false, message: "Content-Type must be application/json", data: {}, status: "unsupported_media_type" });
    }
    const list = await rest("GET", `/events/${event.id}/bookings?date_from=${dayFromToday(20)}&date_to=${dayFromToday(25)}`, { key: host.key });
    expect(list.body.data.page.total_records).toBe(0);
    expect((await fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: booking() })).status).toBe(201);
  });

  it("Connect refuses a text/plain body too (415), without reaching the method", async () => {
    const res = await fetch(`${baseUrl()}/scheduling.v1.PublicBookingService/CreateBooking`, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" });
    expect(res.status).toBe(415);
  });

  it("a write from an origin CORS does not allow is 403, whatever its content type; a cancel without a body included", async () => {
    for (const type of ["application/json", "text/plain"]) {
      const res = await fetch(path, { method: "POST", headers: { "content-type": type, origin: EVIL }, body: booking() });
      expect(res.status, type).toBe(403);
      expect(await res.json()).toEqual({ success: false, message: `cross-origin write refused: ${EVIL} is not an allowed origin (CORS_ORIGINS)`, data: {}, status: "forbidden" });
    }
    const made = await (await fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: booking() })).json();
    const cancel = await fetch(`${baseUrl()}/api/v1/public/bookings/${made.data.private_key}/cancel`, { method: "POST", headers: { origin: EVIL } });
    expect(cancel.status).toBe(403);
    expect((await rest("GET", `/public/bookings/${made.data.private_key}`)).body.data.status).toBe("confirmed");
    const rpc = await fetch(`${baseUrl()}/scheduling.v1.PublicBookingService/CancelBooking`, { method: "POST", headers: { "content-type": "application/json", origin: "null" }, body: JSON.stringify({ privateKey: made.data.private_key }) });
    expect(rpc.status).toBe(403);
    expect((await rpc.json()).code).toBe("permission_denied");
    // Reads from anywhere still work (the browser alone decides whether the page may see them), and so do
    // writes from this origin itself: a page served here.
    expect((await fetch(`${baseUrl()}/api/v1/public/bookings/${made.data.private_key}`, { headers: { origin: EVIL } })).status).toBe(200);
    const same = await fetch(path, { method: "POST", headers: { "content-type": "application/json", origin: baseUrl() }, body: booking() });
    expect(same.status).toBe(201);
  });
});

describe("booking caps per booker e-mail and per host, shared by two replicas on one database", () => {
  let db: TestDatabase;
  let a: RunningServer;
  let b: RunningServer;
  beforeAll(async () => {
    db = await startDatabase();
    const env = { MONGODB_URI: db.uri, BOOKING_LIMIT_PER_BOOKER: "3", BOOKING_LIMIT_PER_HOST: "5", CORS_ORIGINS: APP, APP_URL: `${PAGES}/`, ...CLOCK_CONTROL_ENV };
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
    await toFreshWindow([a, b]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.kill();
  });

  async function hostAt(base: string): Promise<{ key: string; url: string; eventUrl: string }> {
    const fixtures = fixturesAt(base);
    const host = await fixtures.newHost({ full_name: "Capped Host" });
    const ev = await fixtures.newEvent(host, { name: "Capped", url: `capped-${slot}`, slot_duration: "30_minutes" });
    return { key: host.key, url: host.user.url, eventUrl: ev.url };
  }

  const bookAt = (base: string, h: { url: string; eventUrl: string }, email: string, headers: Record<string, string> = {}) =>
    restAt(base, "POST", `/api/v1/public/users/${h.url}/events/${h.eventUrl}/bookings`, { headers, body: { booking: { start_time: nextSlot(), attendee_name: "Booker", attendee_email: email } } });

  it("one e-mail gets 3 bookings with a host across both replicas, then 429 with Retry-After; the host takes 5 in all", async () => {
    const h = await hostAt(a.baseUrl);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await bookAt(i % 2 === 0 ? a.baseUrl : b.baseUrl, h, "Same.Person@example.com")).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
    const refused = await bookAt(b.baseUrl, h, "same.person@EXAMPLE.com");
    expect(refused.status).toBe(429);
    expect(refused.body.message).toBe("this e-mail address has made as many bookings with this host as a day allows; try again later");
    expect(refused.body.status).toBe("too_many_requests");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    // Other bookers go on until the host's cap of 5 (3 + 2), on either replica; the allowed origin may book.
    expect((await bookAt(b.baseUrl, h, "other1@example.com", { origin: APP })).status).toBe(201);
    expect((await bookAt(a.baseUrl, h, "other2@example.com")).status).toBe(201);
    const full = await bookAt(b.baseUrl, h, "other3@example.com");
    expect({ status: full.status, message: full.body.message }).toEqual({ status: 429, message: "this host takes no more bookings today; try again later" });
    // Another host is not affected; its pages' own origin (APP_URL, behind a proxy that rewrites Host) may book.
    const other = await hostAt(b.baseUrl);
    expect((await bookAt(a.baseUrl, other, "same.person@example.com", { origin: PAGES })).status).toBe(201);
    expect((await bookAt(a.baseUrl, other, "same.person@example.com", { origin: EVIL })).status).toBe(403);
  });

  it("reschedules count against the same caps", async () => {
    const h = await hostAt(b.baseUrl);
    const made = await bookAt(a.baseUrl, h, "mover@example.com");
    expect(made.status).toBe(201);
    let key = made.body.data.private_key;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const moved = await restAt(i % 2 === 0 ? b.baseUrl : a.baseUrl, "POST", `/api/v1/public/bookings/${key}/reschedule`, { body: { booking: { start_time: nextSlot() } } });
      statuses.push(moved.status);
      if (moved.status === 201) key = moved.body.data.private_key;
    }
    expect(statuses).toEqual([201, 201, 429]);
  });
});

/**
 * Sends again while the answer is 503, as a client would: one host's bookings at once may meet a write conflict the
 * database asks to retry. A 429 is an answer, not tried again.
 */
async function retried<T extends { status: number }>(send: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    const res = await send();
    if (res.status !== 503 || tries === 5) return res;
  }
}

describe("a cap of one new booker per address (issue 39: one booker's racing bookings counted as several people)", () => {
  let db: TestDatabase;
  let servers: RunningServer[] = [];
  beforeAll(async () => {
    db = await startDatabase();
    const env = { MONGODB_URI: db.uri, BOOKING_LIMIT_NEW_BOOKERS_PER_ADDRESS: "1", TRUSTED_PROXY_HOPS: "1", ...CLOCK_CONTROL_ENV };
    servers = await Promise.all([startServer(env), startServer(env)]);
    await toFreshWindow(servers);
  }, 150_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await db?.kill();
  });

  it("concurrent bookings by one e-mail over two replicas all pass; two different e-mails after it are refused", async () => {
    const fixtures = fixturesAt(servers[0].baseUrl);
    const host = await fixtures.newHost({ full_name: "One Booker Host" });
    const ev = await fixtures.newEvent(host, { name: "One booker", url: `one-booker-${slot}`, slot_duration: "30_minutes" });
    const book = (server: RunningServer, email: string) =>
      restAt(server.baseUrl, "POST", `/api/v1/public/users/${host.user.url}/events/${ev.url}/bookings`, {
        headers: { "x-forwarded-for": "203.0.113.50" },
        body: { booking: { start_time: nextSlot(), attendee_name: "Booker", attendee_email: email } },
      });
    const racing = await Promise.all(Array.from({ length: 8 }, (_, i) => retried(() => book(servers[i % 2], "only-one@example.com"))));
    expect(racing.map((r) => r.status)).toEqual(Array(8).fill(201));
    for (const [i, email] of ["second@example.com", "third@example.com"].entries()) {
      const refused = await book(servers[i % 2], email);
      expect({ email, status: refused.status, message: refused.body.message }).toEqual({ email, status: 429, message: "this network address has booked as many different people with this host as an hour allows; try again later" });
    }
    // The one person goes on booking.
    expect((await book(servers[1], "only-one@example.com")).status).toBe(201);
  });
});

describe("new bookers per client address per host and hour (issue 29: one address booked 93 strangers of one host in 8.6 s)", () => {
  let db: TestDatabase;
  /** Between replica a and the database: fails one command on purpose. */
  let proxy: DbProxy;
  let a: RunningServer;
  let b: RunningServer;
  beforeAll(async () => {
    db = await startDatabase();
    proxy = await startDbProxy(db.uri);
    // One proxy in front: its X-Forwarded-For entry is the client address, so one test can speak from several.
    const env = { BOOKING_LIMIT_NEW_BOOKERS_PER_ADDRESS: "3", TRUSTED_PROXY_HOPS: "1", ...CLOCK_CONTROL_ENV };
    [a, b] = await Promise.all([startServer({ ...env, MONGODB_URI: proxy.uri }), startServer({ ...env, MONGODB_URI: db.uri })]);
    await toFreshWindow([a, b]);
  }, 150_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await proxy?.close();
    await db?.kill();
  });

  async function hostAt(base: string): Promise<{ url: string; eventUrl: string }> {
    const fixtures = fixturesAt(base);
    const host = await fixtures.newHost({ full_name: "Stranger Host" });
    const ev = await fixtures.newEvent(host, { name: "Strangers", url: `strangers-${slot}`, slot_duration: "30_minutes" });
    return { url: host.user.url, eventUrl: ev.url };
  }
  const bookFrom = (base: string, address: string, h: { url: string; eventUrl: string }, email: string) =>
    restAt(base, "POST", `/api/v1/public/users/${h.url}/events/${h.eventUrl}/bookings`, {
      headers: { "x-forwarded-for": address },
      body: { booking: { start_time: nextSlot(), attendee_name: "Booker", attendee_email: email } },
    });

  it("an address books 3 different people with a host across both replicas, then 429 with Retry-After; the same people again, other addresses and other hosts go on", async () => {
    const h = await hostAt(a.baseUrl);
    const statuses: number[] = [];
    for (let i = 1; i <= 3; i++) statuses.push((await bookFrom(i % 2 === 0 ? a.baseUrl : b.baseUrl, "203.0.113.7", h, `stranger${i}@victims.example`)).status);
    expect(statuses).toEqual([201, 201, 201]);
    const refused = await bookFrom(a.baseUrl, "203.0.113.7", h, "stranger4@victims.example");
    expect({ status: refused.status, code: refused.body.status, message: refused.body.message }).toEqual({
      status: 429,
      code: "too_many_requests",
      message: "this network address has booked as many different people with this host as an hour allows; try again later",
    });
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(refused.body.data.retry_after).toBe(retryAfter);
    // Refused stays refused (trying again is not a way in), on the other replica too.
    expect((await bookFrom(b.baseUrl, "203.0.113.7", h, "stranger4@victims.example")).status).toBe(429);
    // A person already booked from this address is not a new booker: booking again works.
    expect((await bookFrom(b.baseUrl, "203.0.113.7", h, "stranger1@victims.example")).status).toBe(201);
    // Another address, and another host from the same address, have their own counts.
    expect((await bookFrom(a.baseUrl, "198.51.100.9", h, "stranger4@victims.example")).status).toBe(201);
    expect((await bookFrom(a.baseUrl, "203.0.113.7", await hostAt(b.baseUrl), "stranger4@victims.example")).status).toBe(201);
  });

  it("one booker's bookings racing each other count once, on both replicas", async () => {
    const h = await hostAt(a.baseUrl);
    const racing = await Promise.all(Array.from({ length: 6 }, (_, i) => retried(() => bookFrom(i % 2 === 0 ? a.baseUrl : b.baseUrl, "203.0.113.99", h, "racer@example.com"))));
    expect(racing.map((r) => r.status)).toEqual(Array(6).fill(201));
    // One person so far: two more different people fit the cap of 3, the next does not.
    for (const email of ["second@example.com", "third@example.com"]) expect((await bookFrom(b.baseUrl, "203.0.113.99", h, email)).status).toBe(201);
    expect((await bookFrom(a.baseUrl, "203.0.113.99", h, "fourth@example.com")).status).toBe(429);
  });

  it("different bookers racing each other from one address: exactly the cap of 3 pass, over both replicas", async () => {
    const h = await hostAt(a.baseUrl);
    const racing = await Promise.all(Array.from({ length: 8 }, (_, i) => retried(() => bookFrom(i % 2 === 0 ? a.baseUrl : b.baseUrl, "203.0.113.123", h, `racer${i}@example.com`))));
    const statuses = racing.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 429, 429, 429, 429, 429]);
    // The three who passed go on booking; nobody else does.
    const passed = racing.flatMap((r, i) => (r.status === 201 ? [`racer${i}@example.com`] : []));
    for (const email of passed) expect((await bookFrom(b.baseUrl, "203.0.113.123", h, email)).status).toBe(201);
    expect((await bookFrom(a.baseUrl, "203.0.113.123", h, "late@example.com")).status).toBe(429);
  });

  it("a database error while counting a new booker is a 503, and that booker's retry is judged afresh, not refused as a new person", async () => {
    const h = await hostAt(a.baseUrl);
    // The conditional increment of the window's count (its filter holds the count; the mark's writes do not).
    const isCount = (c: SeenCommand) =>
      c.name === "update" && c.collection === "rate_limits" && c.items.some((u) => String((u.q as { _id?: unknown })._id).startsWith("newbookers:") && "count" in (u.q as object));
    const failed = proxy.failNext(isCount, { code: 50, codeName: "MaxTimeMSExpired", errmsg: "operation exceeded time limit (the test's proxy)" });
    const first = await bookFrom(a.baseUrl, "192.0.2.61", h, "unlucky@example.com");
    await failed;
    expect({ status: first.status, message: first.body.message }).toEqual({ status: 503, message: "service unavailable" });
    const again = await bookFrom(a.baseUrl, "192.0.2.61", h, "unlucky@example.com");
    expect({ status: again.status, message: again.body.message }).toEqual({ status: 201, message: "booking confirmed" });
  });

  it("reschedules and cancels name nobody new and are not counted", async () => {
    const h = await hostAt(b.baseUrl);
    const made = await bookFrom(a.baseUrl, "192.0.2.44", h, "mover@example.com");
    expect(made.status).toBe(201);
    let key = made.body.data.private_key;
    for (let i = 0; i < 4; i++) {
      const moved = await restAt(b.baseUrl, "POST", `/api/v1/public/bookings/${key}/reschedule`, { headers: { "x-forwarded-for": "192.0.2.44" }, body: { booking: { start_time: nextSlot() } } });
      expect(moved.status).toBe(201);
      key = moved.body.data.private_key;
    }
    const canceled = await restAt(a.baseUrl, "POST", `/api/v1/public/bookings/${key}/cancel`, { headers: { "x-forwarded-for": "192.0.2.44" }, body: { booking: { reason: "no" } } });
    expect(canceled.status).toBe(200);
    for (const email of ["two@example.com", "three@example.com"]) expect((await bookFrom(a.baseUrl, "192.0.2.44", h, email)).status).toBe(201);
    expect((await bookFrom(b.baseUrl, "192.0.2.44", h, "four@example.com")).status).toBe(429);
  });
});
