// One host's calendar never hurts the service or anyone else (issue 25): hostile feeds read off the event loop and failing closed with a plain last_error, old and frequent series blocking, real feeds' deviations read, warnings shown.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt, useServer, type Json } from "../helpers/api.js";
import { dayFromToday } from "../helpers/bookings.js";
import { invoke, PROTOCOLS } from "../helpers/calls.js";
import { bookAt, calendarCalls, eventAt, hostAt, slotsAt } from "../helpers/calendars.js";
import { startServer, type RunningServer } from "../helpers/server.js";

const TIMEOUT_MS = 3000;
/** The feeds' address holds this, as a real feed's secret address does: it must never show. */
const SECRET = "s3cr3t-feed-token-7f1c";

let server: RunningServer;
let base: string;
let feeds: http.Server;
let feedBase: string;
/** What each feed path answers; a function is called per request. */
const bodies = new Map<string, string | Buffer | ((res: http.ServerResponse) => void)>();
/** How often each feed path was asked for. */
const hits = new Map<string, number>();

const cal = (...parts: string[]) => ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//limits test//EN", ...parts, "END:VCALENDAR", ""].join("\r\n");
const ev = (uid: string, ...lines: string[]) => ["BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20250101T000000Z", ...lines, "END:VEVENT"].join("\r\n");
const compact = (day: string) => day.replace(/-/g, "");
/** Slow to expand on purpose: ical.js takes a good fraction of a millisecond per monthly BYDAY instance. */
const slowFeed = () => cal(...Array.from({ length: 15_000 }, (_, i) => ev(`slow-${i}`, "DTSTART:20000111T100000Z", "DURATION:PT1H", "RRULE:FREQ=MONTHLY;BYDAY=2TU")));

beforeAll(async () => {
  feeds = http.createServer((req, res) => {
    const body = bodies.get(req.url ?? "");
    hits.set(req.url ?? "", (hits.get(req.url ?? "") ?? 0) + 1);
    if (body === undefined) return res.writeHead(404).end();
    if (typeof body === "function") return body(res);
    res.writeHead(200, { "content-type": "text/calendar" }).end(body);
  });
  await new Promise<void>((r) => feeds.listen(0, "127.0.0.1", r));
  feedBase = `http://127.0.0.1:${(feeds.address() as { port: number }).port}/${SECRET}`;
  server = await startServer({ OUTBOUND_ALLOW_PRIVATE: "true", CALENDAR_TIMEOUT_MS: String(TIMEOUT_MS), CALENDAR_CACHE_SECONDS: "1" });
  base = server.baseUrl;
  useServer(base);
}, 60_000);

afterAll(async () => {
  useServer(undefined);
  await server?.stop();
  feeds?.closeAllConnections();
  await new Promise((r) => feeds?.close(r));
  // The feed's address is a credential: whatever failed above, it reached no log line.
  expect(server.logs()).not.toContain(SECRET);
});

let feedCount = 0;
/** A host (open around the clock, UTC) with one feed connected at a path of its own, and an event. */
async function hostWithFeed(body: string): Promise<{ key: string; user: Json; event: Json; path: string; connection: Json }> {
  const path = `/${SECRET}/feed-${++feedCount}.ics`;
  bodies.set(path, body);
  const host = await hostAt(base);
  const res = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "ics", url: `${feedBase}/feed-${feedCount}.ics` } } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { ...host, event: await eventAt(base, host.key), path, connection: res.body.data };
}

async function connectionOf(key: string): Promise<Json> {
  return (await restAt(base, "GET", "/api/v1/calendar_connections", { key })).body.data[0];
}

/** last_error and warnings are one line of plain words: no stack, no source path, no address, no secret. */
function expectPlain(text: string): void {
  expect(text).not.toMatch(/[\r\n]/);
  expect(text).not.toMatch(/\bat .*\(|\.ts\b|\.js\b|\/src\/|node_modules|file:|https?:|127\.0\.0\.1/);
  expect(text).not.toContain(SECRET);
  expect(text.length).toBeLessThanOrEqual(300);
}

describe("series that started long ago or repeat often block every slot they overlap", () => {
  it("a daily all-day event since 1850, an hourly one since 2020, one every second since 2000: their slots are not offered, the connection is ok", async () => {
    const day = dayFromToday(5);
    const daily = await hostWithFeed(cal(ev("d", "DTSTART;VALUE=DATE:18500101", "RRULE:FREQ=DAILY")));
    expect((await slotsAt(base, daily.user, daily.event, day)).starts).toEqual([]);
    const hourly = await hostWithFeed(cal(ev("h", "DTSTART:20200101T000000Z", "DURATION:PT30M", "RRULE:FREQ=HOURLY")));
    const h = await slotsAt(base, hourly.user, hourly.event, day);
    expect(h.starts.length).toBe(24);
    expect(h.starts.every((s) => s.endsWith(":30"))).toBe(true);
    const secondly = await hostWithFeed(cal(ev("s", "DTSTART:20000101T000000Z", "DURATION:PT1S", "RRULE:FREQ=SECONDLY")));
    expect((await slotsAt(base, secondly.user, secondly.event, day)).starts).toEqual([]);
    expect((await bookAt(base, secondly.user, secondly.event, `${day}T09:00:00.000Z`)).status).toBe(409);
    for (const host of [daily, hourly, secondly]) expect(await connectionOf(host.key)).toMatchObject({ status: "ok", last_error: null, warnings: [] });
  });

  it("the issue's 257 KB feed (2 000 events repeating daily since 1971) is read, within the deadline, and blocks", async () => {
    const events = Array.from({ length: 2000 }, (_, i) =>
      ev(`daily-${i}@feed`, `DTSTART;TZID=Europe/Berlin:19710101T${String(6 + (i % 12)).padStart(2, "0")}${String((i * 7) % 60).padStart(2, "0")}00`, "DURATION:PT15M", "RRULE:FREQ=DAILY", `SUMMARY:Series ${i}`),
    );
    const host = await hostWithFeed(cal(...events));
    const day = dayFromToday(6);
    const t0 = performance.now();
    const { status, starts } = await slotsAt(base, host.user, host.event, day, dayFromToday(12));
    expect(status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(TIMEOUT_MS + 1000);
    // Berlin 06:00-18:00 is busy every day; the night is free.
    expect(starts).not.toContain(`${day} 10:00`);
    expect(starts).toContain(`${day} 22:00`);
  });
});

describe("real feeds' deviations are read as calendar programs read them", () => {
  it("a CalendarLabs holiday feed (8-digit DTSTART without VALUE=DATE) connects and blocks its dates", async () => {
    const day = dayFromToday(9);
    const host = await hostWithFeed(cal(ev("holiday@calendarlabs.com", `DTSTART:${compact(day)}`, `DTEND:${compact(dayFromToday(10))}`, "SUMMARY:Holiday", "TRANSP:OPAQUE")));
    expect((await slotsAt(base, host.user, host.event, day)).starts).toEqual([]);
    expect((await slotsAt(base, host.user, host.event, dayFromToday(10))).starts).toHaveLength(48);
  });

  it("one event that cannot be read is left out and shown in warnings (REST and every RPC protocol); the rest still blocks", async () => {
    const day = dayFromToday(11);
    const host = await hostWithFeed(
      cal(ev("bad", "DTSTART:2019-01-01T::", "DTEND:20190101T100000Z"), ev("good", `DTSTART:${compact(day)}T100000Z`, `DTEND:${compact(day)}T110000Z`), "", "BEGIN:VEVENT\r\nUID:empty-rule\r\nRRULE:\r\nDTSTART:" + `${compact(day)}T140000Z\r\nDURATION:PT30M\r\nEND:VEVENT`),
    );
    const warning = '1 event could not be read: DTSTART "2019-01-01T::"';
    expect(host.connection).toMatchObject({ status: "ok", warnings: [warning] });
    const { starts } = await slotsAt(base, host.user, host.event, day);
    expect([starts.includes(`${day} 10:00`), starts.includes(`${day} 14:00`), starts.includes(`${day} 11:00`)]).toEqual([false, false, true]);
    for (const protocol of PROTOCOLS) {
      const listed = await invoke(protocol, host.key, calendarCalls.connections());
      expect(listed.data[0].warnings).toEqual([warning]);
    }
    // Fixed at the source: the next read finds nothing to warn about.
    bodies.set(host.path, cal(ev("good", `DTSTART:${compact(day)}T100000Z`, `DTEND:${compact(day)}T110000Z`)));
    await new Promise((r) => setTimeout(r, 1100));
    await slotsAt(base, host.user, host.event, day);
    expect((await connectionOf(host.key)).warnings).toEqual([]);
  });
});

describe("a calendar past a limit is unreadable, fails closed, and says why in one plain line", () => {
  const nested = (depth: number) => `${"BEGIN:X-A\r\n".repeat(depth)}${"END:X-A\r\n".repeat(depth)}`;
  const faults: Array<[string, () => string | Buffer | ((res: http.ServerResponse) => void), RegExp]> = [
    ["~3 MB of components nested 162 deep", () => cal(nested(162).repeat(600), ev("e", "DTSTART:20250101T100000Z")), /^the calendar holds more than the service reads: the calendar nests components more than 8 deep$/],
    ["one line with 300 000 dates", () => cal(ev("x", "DTSTART:20000101T000000Z", "DURATION:PT1H", "RRULE:FREQ=HOURLY", `EXDATE:${Array.from({ length: 300_000 }, () => "20000101T000000Z").join(",")}`)), /^the calendar holds more than the service reads: a EXDATE line of the calendar is longer than 65 536 bytes$/],
    ["20 000 time-zone definitions", () => cal(...Array.from({ length: 20_000 }, (_, i) => `BEGIN:VTIMEZONE\r\nTZID:Z${i}\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0100\r\nEND:STANDARD\r\nEND:VTIMEZONE`)), /^the calendar holds more than the service reads: the calendar has more than 1 000 time-zone definitions$/],
    ["a rule that cannot be expanded to the range", () => cal(ev("c", "DTSTART:20000101T000000Z", "DURATION:PT30S", "RRULE:FREQ=MINUTELY;BYSECOND=0;COUNT=100000000")), /^the calendar holds more than the service reads: an event repeats more than 50 000 times before the range/],
    ["an answer cut off inside an event", () => cal(ev("e", "DTSTART:20250101T100000Z")).slice(0, -30), /^the calendar is not valid iCalendar: the calendar ends inside a VEVENT/],
    ["more computation than the deadline allows", slowFeed, /^reading the calendar took longer than 3000 ms and was stopped$/],
    ["a feed larger than 20 MB", () => Buffer.concat([Buffer.from(cal()), Buffer.alloc(21 * 1024 * 1024, 0x20)]), /^the feed is too large$/],
    ["a server error", () => (res: http.ServerResponse) => res.writeHead(500).end("Error: boom\n    at /srv/app/src/feed.ts:12:3"), /^the feed's server answered 500$/],
  ];

  it("each fault in turn, on one connection: listing a range not read before answers 503, the connection shows status error and the limit", async () => {
    const host = await hostWithFeed(cal(ev("ok", "DTSTART:20250101T100000Z", "DTEND:20250101T110000Z")));
    let offset = 20;
    for (const [name, body, reason] of faults) {
      bodies.set(host.path, body());
      const day = dayFromToday(offset++);
      const listed = await slotsAt(base, host.user, host.event, day);
      expect({ name, status: listed.status, message: listed.body.message }).toEqual({ name, status: 503, message: "calendar is unavailable" });
      const booking = await bookAt(base, host.user, host.event, `${day}T09:00:00.000Z`);
      expect({ name, status: booking.status }).toEqual({ name, status: 503 });
      const connection = await connectionOf(host.key);
      expect({ name, status: connection.status }).toEqual({ name, status: "error" });
      expect(connection.last_error, name).toMatch(reason);
      expectPlain(connection.last_error);
    }
    // Back to a good feed: readable again once the last failure is older than CALENDAR_CACHE_SECONDS, and the connection says so.
    bodies.set(host.path, cal(ev("ok", "DTSTART:20250101T100000Z", "DTEND:20250101T110000Z")));
    await new Promise((r) => setTimeout(r, 1100));
    expect((await slotsAt(base, host.user, host.event, dayFromToday(offset))).status).toBe(200);
    expect(await connectionOf(host.key)).toMatchObject({ status: "ok", last_error: null });
  }, 120_000);

  it("a calendar that just failed is not asked again by listings for CALENDAR_CACHE_SECONDS; a booking asks it", async () => {
    const host = await hostWithFeed(cal(ev("ok", "DTSTART:20250101T100000Z", "DTEND:20250101T110000Z")));
    bodies.set(host.path, cal(nested(20)));
    const asked = () => hits.get(host.path) ?? 0;
    const before = asked();
    expect((await slotsAt(base, host.user, host.event, dayFromToday(40))).status).toBe(503);
    expect(asked()).toBe(before + 1);
    // Listings within the second that follows (CALENDAR_CACHE_SECONDS is 1 here): 503 at once, nothing fetched.
    for (const d of [41, 42, 43]) expect((await slotsAt(base, host.user, host.event, dayFromToday(d))).status).toBe(503);
    expect(asked()).toBe(before + 1);
    expect((await bookAt(base, host.user, host.event, `${dayFromToday(41)}T09:00:00.000Z`)).status).toBe(503);
    expect(asked()).toBe(before + 2);
  });

  it("a hostile feed is refused at connect, naming the limit", async () => {
    const host = await hostAt(base);
    bodies.set(`/${SECRET}/hostile.ics`, cal(nested(20), ev("e", "DTSTART:20250101T100000Z")));
    const res = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "ics", url: `${feedBase}/hostile.ics` } } });
    expect({ status: res.status, message: res.body.message }).toEqual({
      status: 422,
      message: "connection could not be made: the calendar holds more than the service reads: the calendar nests components more than 8 deep",
    });
  });
});

describe("a hostile calendar being read does not hold anyone else", () => {
  it("while a feed takes its whole deadline to compute, /healthz and another host's listing answer at once", async () => {
    const quiet = await hostWithFeed(cal(ev("q", `DTSTART:${compact(dayFromToday(30))}T100000Z`, "DURATION:PT1H")));
    const hostile = await hostWithFeed(cal(ev("first", "DTSTART:20250101T100000Z")));
    bodies.set(hostile.path, slowFeed());
    const quietDay = dayFromToday(30);
    // Warm: the quiet host's calendar and the readers.
    expect((await slotsAt(base, quiet.user, quiet.event, quietDay)).status).toBe(200);
    const reading = slotsAt(base, hostile.user, hostile.event, dayFromToday(31));
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    const health = await fetch(`${base}/healthz`);
    const healthMs = performance.now() - t0;
    const t1 = performance.now();
    await new Promise((r) => setTimeout(r, 1100));
    const other = await slotsAt(base, quiet.user, quiet.event, quietDay);
    const otherMs = performance.now() - t1 - 1100;
    expect((await reading).status).toBe(503);
    expect(health.status).toBe(200);
    // Generous for a shared machine; with the read on the event loop both waited the whole read (tens of seconds).
    expect(healthMs).toBeLessThan(1000);
    expect(other.status).toBe(200);
    expect(otherMs).toBeLessThan(2000);
  }, 60_000);
});
