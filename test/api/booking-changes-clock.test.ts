// The booking-change feed against time (callers.md "Booking changes"), on a server whose clock the test moves: what is kept for BOOKING_CHANGES_RETENTION_DAYS, a bookmark at least every 30 s on a quiet stream, and WATCH_STREAMS_PER_KEY open streams per key.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt, type Json } from "../helpers/api.js";
import { sse, watch, type FeedProtocol } from "../helpers/changeFeed.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { detailsOf } from "../helpers/errorDetails.js";
import { dayFromToday, fixturesAt, utcIso, type Fixtures, type Host } from "../helpers/fixtures.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

const DAY_MS = 86_400_000;
const EXPIRED = "changes are no longer kept; list the bookings again";

let server: RunningServer;
let at: Fixtures;

beforeAll(async () => {
  // Defaults but the clock: retention 7 days, 10 streams per key.
  server = await startServer({ ...CLOCK_CONTROL_ENV });
  at = fixturesAt(server.baseUrl);
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

const list = (key: string, query = "") => restAt(server.baseUrl, "GET", `/api/v1/booking_changes${query}`, { key });

/** The first message or error of a watch that should fail at once. */
async function refusal(kind: FeedProtocol, key: string, after = ""): Promise<ConnectError> {
  const w = watch(kind, key, after, server.baseUrl);
  await until("the refusal", () => w.ended() || w.got.length > 0);
  await w.stop();
  expect(w.got).toEqual([]);
  return ConnectError.from(w.failure());
}

describe("retention (BOOKING_CHANGES_RETENTION_DAYS, default 7)", () => {
  it("resumes within it; past it a token whose next change is gone is CHANGES_EXPIRED / 410, the list starts at its end, and an idle reader at the end resumes", async () => {
    const host = await at.newHost();
    const event = await at.newEvent(host);
    const day = dayFromToday(20);
    const a = await at.book(host, event, { start_time: utcIso(day, "08:00") });
    const b = await at.book(host, event, { start_time: utcIso(day, "09:00") });
    const all = (await list(host.key)).body.data;
    expect(all.changes.map((c: Json) => c.booking.id)).toEqual([a.id, b.id]);
    const [tokenA, tokenB] = all.changes.map((c: Json) => c.token);

    await advanceClock(server, 6 * DAY_MS);
    expect((await list(host.key, `?after=${tokenA}`)).body.data.changes.map((c: Json) => c.booking.id)).toEqual([b.id]);

    await advanceClock(server, 2 * DAY_MS);
    const gone = await list(host.key, `?after=${tokenA}`);
    expect({ status: gone.status, message: gone.body.message }).toEqual({ status: 410, message: EXPIRED });
    const goneSse = await fetch(`${server.baseUrl}/api/v1/booking_changes`, { headers: { Accept: "text/event-stream", "X-API-KEY": host.key, "Last-Event-ID": tokenA } });
    expect({ status: goneSse.status, message: (await goneSse.json()).message }).toEqual({ status: 410, message: EXPIRED });
    for (const kind of ["grpc", "connect-h1"] as const) {
      const err = await refusal(kind, host.key, tokenA);
      expect({ code: err.code, message: err.rawMessage }).toEqual({ code: Code.FailedPrecondition, message: EXPIRED });
      expect(detailsOf(err)).toMatchObject({ infos: 1, reason: "CHANGES_EXPIRED", domain: "scheduling.v1" });
    }
    // Nothing older than the retention is listed: the list starts at the feed's end.
    expect((await list(host.key)).body.data).toEqual({ changes: [], next: tokenB });
    // A reader that had seen everything missed nothing, however long it was away.
    expect((await list(host.key, `?after=${tokenB}`)).body.data).toEqual({ changes: [], next: tokenB });
    const c = await at.book(host, event, { start_time: utcIso(day, "10:00") });
    expect((await list(host.key, `?after=${tokenB}`)).body.data.changes.map((x: Json) => x.booking.id)).toEqual([c.id]);
    expect((await list(host.key)).body.data.changes.map((x: Json) => x.booking.id)).toEqual([c.id]);
  }, 60_000);
});

describe("bookmarks", () => {
  it("a quiet stream gets a bookmark at least every 30 s, with event_ids too, over RPC and SSE, and SSE a comment line", async () => {
    const host = await at.newHost();
    const event = await at.newEvent(host);
    const w = watch("grpc", host.key, "", server.baseUrl, [event.id]);
    const s = sse(host.key, {}, "", server.baseUrl);
    try {
      await until("the first bookmarks", () => w.got.length >= 1 && s.events.length >= 1);
      // Well under the 25 s of real quiet the server would otherwise wait.
      await advanceClock(server, 30_000);
      await until("the next bookmarks", () => w.got.length >= 2 && s.events.length >= 2, { timeoutMs: 8_000 });
      expect(w.got.map((c) => c.type)).toEqual(["bookmark", "bookmark"]);
      expect(w.got[1].token).toBe(w.got[0].token);
      expect(w.got[1].booking).toBeUndefined();
      expect(s.events.map((e) => e.event)).toEqual(["bookmark", "bookmark"]);
      expect(s.events[1].id).toBe(s.events[0].id);
      // And a comment line, which keeps proxies from closing the connection.
      expect(s.comments).toContain(": keep-alive");
      expect(s.status()).toBe(200);
    } finally {
      await Promise.all([w.stop(), s.stop()]);
    }
  }, 60_000);
});

describe("WATCH_STREAMS_PER_KEY (default 10)", () => {
  it("past 10 open streams of one key: RESOURCE_EXHAUSTED with a RetryInfo of REST's Retry-After; a closed stream frees its place", async () => {
    const host: Host = await at.newHost();
    const kinds: FeedProtocol[] = ["grpc", "grpc-web", "connect-h1", "connect-h2"];
    const open = Array.from({ length: 10 }, (_, i) => watch(kinds[i % kinds.length], host.key, "", server.baseUrl));
    try {
      await until("ten streams", () => open.every((w) => w.got.length >= 1));
      for (const kind of kinds) {
        const err = await refusal(kind, host.key);
        expect({ code: err.code, message: err.rawMessage }).toEqual({ code: Code.ResourceExhausted, message: "at most 10 open booking change streams per API key" });
        expect(detailsOf(err)).toMatchObject({ infos: 1, domain: "scheduling.v1", reason: "RATE_LIMITED", retrySeconds: 1 });
      }
      const viaSse = await fetch(`${server.baseUrl}/api/v1/booking_changes`, { headers: { Accept: "text/event-stream", "X-API-KEY": host.key } });
      expect({ status: viaSse.status, retryAfter: viaSse.headers.get("retry-after"), message: (await viaSse.json()).message }).toEqual({
        status: 429,
        retryAfter: "1",
        message: "at most 10 open booking change streams per API key",
      });
      // Another account is not counted with this one.
      const other = watch("grpc", (await at.newHost()).key, "", server.baseUrl);
      await until("another account's stream", () => other.got[0] ?? other.failure());
      await other.stop();
      expect(other.got[0]?.type).toBe("bookmark");

      await open.pop()!.stop();
      const again = watch("connect-h1", host.key, "", server.baseUrl);
      await until("a stream in the freed place", () => again.got[0] ?? again.failure());
      await again.stop();
      expect(again.got[0]?.type).toBe("bookmark");
    } finally {
      await Promise.all(open.map((w) => w.stop()));
    }
  }, 60_000);
});
