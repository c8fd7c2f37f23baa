// One host's calendar never hurts the service or anyone else (issue 25): hostile feeds read off the event loop and failing closed with a plain last_error, old and frequent series blocking, real feeds' deviations read, warnings shown.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt, useServer, type Json } from "../helpers/api.js";
import { dayFromToday } from "../helpers/bookings.js";
import { invoke, PROTOCOLS } from "../helpers/calls.js";
import { bookAt, calendarCalls, eventAt, hostAt, slotsAt } from "../helpers/calendars.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { icalDate as compact, icalEvent as ev, icalendar as cal, startFeeds, type Feeds } from "../helpers/feeds.js";

const TIMEOUT_MS = 3000;
/** The feeds' address holds this, as a real feed's secret address does: it must never show. */
const SECRET = "s3cr3t-feed-token-7f1c";

/**
 * The server most tests use (`base`): its deadline is far away (30 s), so what a test checks (a limit's reason, a
 * series that blocks, a warning) is what the calendar holds, however busy the machine: on 2 shared cores at load
 * 30 reading a legitimate feed took longer than 3 s, and the deadline's reason won over the limit's.
 */
let patient: RunningServer;
let base: string;
/** A server with a deadline of TIMEOUT_MS, for the tests of the deadline itself. */
let strict: RunningServer;
let feeds: Feeds;
let feedBase: string;
/** What each feed path answers; a function is called per request. */
/** How often each feed path was asked for. */

/** Slow to expand on purpose: ical.js takes a good fraction of a millisecond per monthly BYDAY instance. */
const slowFeed = () => cal(...Array.from({ length: 15_000 }, (_, i) => ev(`slow-${i}`, "DTSTART:20000111T100000Z", "DURATION:PT1H", "RRULE:FREQ=MONTHLY;BYDAY=2TU")));

beforeAll(async () => {
  feeds = await startFeeds();
  feedBase = `${feeds.base}/${SECRET}`;
  [strict, patient] = await Promise.all([
    startServer({ OUTBOUND_ALLOW_PRIVATE: "true", CALENDAR_TIMEOUT_MS: String(TIMEOUT_MS), CALENDAR_CACHE_SECONDS: "1" }),
    startServer({ OUTBOUND_ALLOW_PRIVATE: "true", CALENDAR_TIMEOUT_MS: "30000", CALENDAR_CACHE_SECONDS: "1" }),
  ]);
  base = patient.baseUrl;
  useServer(base);
});

afterAll(async () => {
  useServer(undefined);
  await Promise.all([strict?.stop(), patient?.stop()]);
  await feeds?.close();
  // The feed's address is a credential: whatever failed above, it reached no log line.
  expect(strict.logs()).not.toContain(SECRET);
  expect(patient.logs()).not.toContain(SECRET);
});

let feedCount = 0;
/** A host (open around the clock, UTC) with one feed connected at a path of its own, and an event. */
async function hostWithFeed(body: string, at = base): Promise<{ key: string; user: Json; event: Json; path: string; connection: Json }> {
  const path = `/${SECRET}/feed-${++feedCount}.ics`;
  feeds.bodies.set(path, body);
  const host = await hostAt(at);
  const res = await restAt(at, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "ics", url: `${feedBase}/feed-${feedCount}.ics` } } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { ...host, event: await eventAt(at, host.key), path, connection: res.body.data };
}

async function connectionOf(key: string, at = base): Promise<Json> {
  return (await restAt(at, "GET", "/api/v1/calendar_connections", { key })).body.data[0];
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

  it("the issue's 257 KB feed (2 000 events repeating daily since 1971) is read within the limits, and blocks", async () => {
    // What is checked here is that nothing of this feed is over a limit and every instance blocks. How fast it is read is a speed figure (bench/attacks.ts "daily", bench/RESULTS.md), not a timed assertion:
    // on 2 shared cores at load 30 the 3 s deadline alone refused it.
    const events = Array.from({ length: 2000 }, (_, i) =>
      ev(`daily-${i}@feed`, `DTSTART;TZID=Europe/Berlin:19710101T${String(6 + (i % 12)).padStart(2, "0")}${String((i * 7) % 60).padStart(2, "0")}00`, "DURATION:PT15M", "RRULE:FREQ=DAILY", `SUMMARY:Series ${i}`),
    );
    const host = await hostWithFeed(cal(...events));
    expect(host.connection).toMatchObject({ status: "ok", last_error: null, warnings: [] });
    const day = dayFromToday(6);
    const { status, starts } = await slotsAt(base, host.user, host.event, day, dayFromToday(12));
    expect(status).toBe(200);
    expect(await connectionOf(host.key)).toMatchObject({ status: "ok", last_error: null });
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
    const warning = 'event "bad" could not be read: DTSTART "2019-01-01T::"';
    expect(host.connection).toMatchObject({ status: "ok", warnings: [warning] });
    const { starts } = await slotsAt(base, host.user, host.event, day);
    expect([starts.includes(`${day} 10:00`), starts.includes(`${day} 14:00`), starts.includes(`${day} 11:00`)]).toEqual([false, false, true]);
    for (const protocol of PROTOCOLS) {
      const listed = await invoke(protocol, host.key, calendarCalls.connections());
      expect(listed.data[0].warnings).toEqual([warning]);
    }
    // Fixed at the source: the next read finds nothing to warn about.
    feeds.bodies.set(host.path, cal(ev("good", `DTSTART:${compact(day)}T100000Z`, `DTEND:${compact(day)}T110000Z`)));
    await new Promise((r) => setTimeout(r, 1100));
    await slotsAt(base, host.user, host.event, day);
    expect((await connectionOf(host.key)).warnings).toEqual([]);
  });
});

describe("a feed whose structure is broken fails closed; every event a read leaves out is named", () => {
  const busy = (day: string) => ev("planning", "SUMMARY:Planning", `DTSTART:${compact(day)}T090000Z`, `DTEND:${compact(day)}T100000Z`);
  const cases: Array<[string, (day: string) => string, string]> = [
    ["END:VEVENT where BEGIN:VEVENT belongs", (day) => cal(busy(day).replace("BEGIN:VEVENT", "END:VEVENT")), "the calendar has END:VEVENT without BEGIN:VEVENT"],
    ["a VEVENT inside a VTODO", (day) => cal(["BEGIN:VTODO", "UID:todo", busy(day), "END:VTODO"].join("\r\n")), "the calendar has a VEVENT inside a VTODO"],
  ];
  it.each(cases)("%s: the last good read keeps 09:00-10:00 busy, a booking answers 503, the connection shows error and the reason", async (_name, broken, reason) => {
    const day = dayFromToday(15);
    const host = await hostWithFeed(cal(busy(day)));
    expect((await slotsAt(base, host.user, host.event, day)).starts).not.toContain(`${day} 09:00`);
    feeds.bodies.set(host.path, broken(day));
    await new Promise((r) => setTimeout(r, 1100));
    const listed = await slotsAt(base, host.user, host.event, day);
    expect(listed.status).toBe(200);
    expect([listed.starts.includes(`${day} 09:00`), listed.starts.includes(`${day} 10:00`)]).toEqual([false, true]);
    const booking = await bookAt(base, host.user, host.event, `${day}T09:00:00.000Z`);
    expect({ status: booking.status, message: booking.body.message }).toEqual({ status: 503, message: "calendar is unavailable" });
    const connection = await connectionOf(host.key);
    expect({ status: connection.status, last_error: connection.last_error }).toEqual({ status: "error", last_error: `the calendar is not valid iCalendar: ${reason}` });
    // Such a feed cannot be connected either: it says why.
    const fresh = await hostAt(base);
    feeds.bodies.set(`/${SECRET}/broken-${fresh.user.id}.ics`, broken(day));
    const refused = await restAt(base, "POST", "/api/v1/calendar_connections", { key: fresh.key, body: { connection: { provider: "ics", url: `${feedBase}/broken-${fresh.user.id}.ics` } } });
    expect({ status: refused.status, message: refused.body.message }).toEqual({ status: 422, message: `connection could not be made: the calendar is not valid iCalendar: ${reason}` });
  });

  it("an event without DTSTART, with a negative DURATION or a DTEND before DTSTART: left out, each named in warnings, the others still block", async () => {
    const day = dayFromToday(16);
    const host = await hostWithFeed(
      cal(
        busy(day),
        ev("no-start", "SUMMARY:Dentist", `DTEND:${compact(day)}T120000Z`),
        ev("negative", "SUMMARY:Lunch", `DTSTART:${compact(day)}T120000Z`, "DURATION:-PT1H"),
        ev("backwards", `DTSTART:${compact(day)}T140000Z`, `DTEND:${compact(day)}T130000Z`),
      ),
    );
    const warnings = [
      'event "Dentist" could not be read: it has no DTSTART',
      'event "Lunch" could not be read: DURATION "-PT1H" is negative',
      `event "backwards" could not be read: DTEND "${compact(day)}T130000Z" is before DTSTART`,
    ];
    expect(host.connection).toMatchObject({ status: "ok", warnings });
    expect((await slotsAt(base, host.user, host.event, day)).starts).not.toContain(`${day} 09:00`);
    expect(await connectionOf(host.key)).toMatchObject({ status: "ok", warnings });
    for (const w of warnings) expectPlain(w);
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
    ["a feed larger than 20 MB", () => Buffer.concat([Buffer.from(cal()), Buffer.alloc(21 * 1024 * 1024, 0x20)]), /^the feed is too large$/],
    ["a server error", () => (res: http.ServerResponse) => res.writeHead(500).end("Error: boom\n    at /srv/app/src/feed.ts:12:3"), /^the feed's server answered 500$/],
  ];

  /** Each fault in turn on one connection of the server `at`: 503 for a range not read before, status error and the reason. */
  async function faultsInTurn(at: string, list: typeof faults): Promise<void> {
    const host = await hostWithFeed(cal(ev("ok", "DTSTART:20250101T100000Z", "DTEND:20250101T110000Z")), at);
    let offset = 20;
    for (const [name, body, reason] of list) {
      feeds.bodies.set(host.path, body());
      const day = dayFromToday(offset++);
      const listed = await slotsAt(at, host.user, host.event, day);
      expect({ name, status: listed.status, message: listed.body.message }).toEqual({ name, status: 503, message: "calendar is unavailable" });
      const booking = await bookAt(at, host.user, host.event, `${day}T09:00:00.000Z`);
      expect({ name, status: booking.status }).toEqual({ name, status: 503 });
      const connection = await connectionOf(host.key, at);
      expect({ name, status: connection.status }).toEqual({ name, status: "error" });
      expect(connection.last_error, name).toMatch(reason);
      expectPlain(connection.last_error);
    }
    // Back to a good feed: readable again once the last failure has rested (CALENDAR_CACHE_SECONDS is 1), and the connection says so.
    feeds.bodies.set(host.path, cal(ev("ok", "DTSTART:20250101T100000Z", "DTEND:20250101T110000Z")));
    await new Promise((r) => setTimeout(r, 1100));
    expect((await slotsAt(at, host.user, host.event, dayFromToday(offset))).status).toBe(200);
    expect(await connectionOf(host.key, at)).toMatchObject({ status: "ok", last_error: null });
  }

  it("each fault in turn, on one connection: listing a range not read before answers 503, the connection shows status error and the limit", async () => {
    // A deadline of 30 s: each of these is refused for what the calendar holds, however busy the machine.
    await faultsInTurn(base, faults);
  }, 180_000);

  it("a calendar that needs more computation than the deadline allows: stopped at CALENDAR_TIMEOUT_MS, the same answers", async () => {
    await faultsInTurn(strict.baseUrl, [["more computation than the deadline allows", slowFeed, /^reading the calendar took longer than 3000 ms and was stopped$/]]);
  }, 60_000);

  it("a calendar that just failed is not asked again by listings while it rests (at most CALENDAR_CACHE_SECONDS); a booking asks it", async () => {
    const host = await hostWithFeed(cal(ev("ok", "DTSTART:20250101T100000Z", "DTEND:20250101T110000Z")));
    feeds.bodies.set(host.path, cal(nested(20)));
    const asked = () => feeds.hits.get(host.path) ?? 0;
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
    feeds.bodies.set(`/${SECRET}/hostile.ics`, cal(nested(20), ev("e", "DTSTART:20250101T100000Z")));
    const res = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "ics", url: `${feedBase}/hostile.ics` } } });
    expect({ status: res.status, message: res.body.message }).toEqual({
      status: 422,
      message: "connection could not be made: the calendar holds more than the service reads: the calendar nests components more than 8 deep",
    });
  });
});

describe("a hostile calendar being read does not hold anyone else", () => {
  it("while a feed takes its whole deadline to compute, /healthz and another host's listing answer at once", async () => {
    const at = strict.baseUrl;
    const quiet = await hostWithFeed(cal(ev("q", `DTSTART:${compact(dayFromToday(30))}T100000Z`, "DURATION:PT1H")), at);
    const hostile = await hostWithFeed(cal(ev("first", "DTSTART:20250101T100000Z")), at);
    feeds.bodies.set(hostile.path, slowFeed());
    const quietDay = dayFromToday(30);
    // Warm: the quiet host's calendar and the readers.
    expect((await slotsAt(at, quiet.user, quiet.event, quietDay)).status).toBe(200);
    const reading = slotsAt(at, hostile.user, hostile.event, dayFromToday(31));
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    const health = await fetch(`${at}/healthz`);
    const healthMs = performance.now() - t0;
    const t1 = performance.now();
    await new Promise((r) => setTimeout(r, 1100));
    const other = await slotsAt(at, quiet.user, quiet.event, quietDay);
    const otherMs = performance.now() - t1 - 1100;
    expect((await reading).status).toBe(503);
    expect(health.status).toBe(200);
    // Generous for a shared machine; with the read on the event loop both waited the whole read (tens of seconds).
    expect(healthMs).toBeLessThan(1000);
    expect(other.status).toBe(200);
    expect(otherMs).toBeLessThan(2000);
  }, 60_000);
});
