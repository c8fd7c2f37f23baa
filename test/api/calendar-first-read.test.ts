// A calendar's first read after a fresh start (issue 33): the reader threads are warm before the service says it listens, and a first read that fails is tried again within seconds, not after a minute of 503s.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt } from "../helpers/api.js";
import { dayFromToday } from "../helpers/bookings.js";
import { eventAt, hostAt, slotsAt } from "../helpers/calendars.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";

let feeds: http.Server;
let feedBase: string;
/** What each feed path answers: a body, or a status with no body. */
const answers = new Map<string, string | number>();

const compact = (day: string) => day.replace(/-/g, "");
const busyAt = (day: string) =>
  ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//first read test//EN", "BEGIN:VEVENT", "UID:busy@first-read", `DTSTART:${compact(day)}T090000Z`, `DTEND:${compact(day)}T100000Z`, "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");

beforeAll(async () => {
  feeds = http.createServer((req, res) => {
    const answer = answers.get(req.url ?? "");
    if (answer === undefined) return res.writeHead(404).end();
    if (typeof answer === "number") return res.writeHead(answer).end();
    res.writeHead(200, { "content-type": "text/calendar" }).end(answer);
  });
  await new Promise<void>((r) => feeds.listen(0, "127.0.0.1", r));
  feedBase = `http://127.0.0.1:${(feeds.address() as { port: number }).port}`;
});

afterAll(async () => {
  feeds?.closeAllConnections();
  await new Promise((r) => feeds?.close(r));
});

describe("the calendar readers are warm before the service says it listens", () => {
  let db: TestDatabase;
  const servers: RunningServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
    await db?.kill();
  });

  it("a fresh start through tsx (as npm start): the readers are warm before it listens; the first listing reads the calendar within a 1.5 s deadline and its busy time blocks", async () => {
    db = await startDatabase();
    const env = { MONGODB_URI: db.uri, OUTBOUND_ALLOW_PRIVATE: "true", CALENDAR_TIMEOUT_MS: "1500" };
    const day = dayFromToday(3);
    answers.set("/first.ics", busyAt(day));
    // Made on one server, then read first by fresh ones on the same database.
    const setup = await startServer(env);
    servers.push(setup);
    const host = await hostAt(setup.baseUrl);
    const made = await restAt(setup.baseUrl, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "ics", url: `${feedBase}/first.ics` } } });
    expect(made.status).toBe(201);
    const event = await eventAt(setup.baseUrl, host.key);
    await setup.stop();
    for (const start of [1]) {
      // tsx: a reader thread that starts cold compiles its modules first, which took seconds on a busy machine.
      const fresh = await startServer(env, 120_000, ["--import", "tsx", "src/app/main.ts"]);
      servers.push(fresh);
      const logs = fresh.logs();
      expect(logs.indexOf('"msg":"calendar readers ready"'), `start ${start}`).toBeGreaterThan(-1);
      expect(logs.indexOf('"msg":"calendar readers ready"'), `start ${start}`).toBeLessThan(logs.indexOf('"msg":"listening"'));
      const listed = await slotsAt(fresh.baseUrl, host.user, event, day);
      expect({ start, status: listed.status }).toEqual({ start, status: 200 });
      expect(listed.starts).not.toContain(`${day} 09:00`);
      expect(listed.starts).toContain(`${day} 10:00`);
      await fresh.stop();
    }
  }, 300_000);
});

describe("a first read that fails is tried again within seconds", () => {
  let server: RunningServer;
  beforeAll(async () => {
    // CALENDAR_CACHE_SECONDS as it is by default: a failure used to hold listings off the calendar that long.
    server = await startServer({ OUTBOUND_ALLOW_PRIVATE: "true", CALENDAR_CACHE_SECONDS: "60" });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("a feed that answers 500 once: 503 with a Retry-After of seconds, then the busy time after a few seconds; a feed that stays down is asked less and less often", async () => {
    const day = dayFromToday(4);
    answers.set("/flaky.ics", busyAt(day));
    const host = await hostAt(server.baseUrl);
    expect((await restAt(server.baseUrl, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "ics", url: `${feedBase}/flaky.ics` } } })).status).toBe(201);
    const event = await eventAt(server.baseUrl, host.key);
    answers.set("/flaky.ics", 500);
    const failed = await slotsAt(server.baseUrl, host.user, event, day);
    expect({ status: failed.status, message: failed.body.message }).toEqual({ status: 503, message: "calendar is unavailable" });
    const retryAfter = Number(failed.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);
    answers.set("/flaky.ics", busyAt(day));
    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 200));
    const again = await slotsAt(server.baseUrl, host.user, event, day);
    expect(again.status).toBe(200);
    expect(again.starts).not.toContain(`${day} 09:00`);
    const connection = (await restAt(server.baseUrl, "GET", "/api/v1/calendar_connections", { key: host.key })).body.data[0];
    expect(connection).toMatchObject({ status: "ok", last_error: null });
    // Down for good: each failure in a row doubles the rest (2 s, 4 s, ...), up to CALENDAR_CACHE_SECONDS.
    answers.set("/flaky.ics", 500);
    const other = dayFromToday(5);
    const first = await slotsAt(server.baseUrl, host.user, event, other);
    expect(Number(first.headers.get("retry-after"))).toBeLessThanOrEqual(2);
    await new Promise((r) => setTimeout(r, Number(first.headers.get("retry-after")) * 1000 + 200));
    const second = await slotsAt(server.baseUrl, host.user, event, other);
    expect(second.status).toBe(503);
    expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(2);
    expect(Number(second.headers.get("retry-after"))).toBeLessThanOrEqual(4);
  }, 60_000);
});
