// Public slots read through each replica's cache (src/db/accountVersions.ts): two replicas on one database see each other's changes within a second (their own at once), and the cached path gives what a replica without the cache gives, on random hosts, zones, bookings and changes.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVICE_TIME_ZONES } from "../../src/domain/timezones.js";
import { restAt, type Json } from "../helpers/api.js";
import { ALWAYS_OPEN, dayFromToday, fixturesAt, utcIso, type Host } from "../helpers/fixtures.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

let db: TestDatabase;
/** Two replicas with the cache, as deployed. */
let a: RunningServer;
let b: RunningServer;
/** A replica that reads everything per request (SLOTS_CACHE_SECONDS=0): the old path. */
let plain: RunningServer;

beforeAll(async () => {
  db = await startDatabase();
  const env = { MONGODB_URI: db.uri };
  // One after the other: three starts at once on a loaded 2-core machine outlasted the start deadline.
  a = await startServer(env);
  b = await startServer(env);
  plain = await startServer({ ...env, SLOTS_CACHE_SECONDS: "0" });
});

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop(), plain?.stop()]);
  await db?.kill();
});

const api = (server: RunningServer, method: string, path: string, opts: Parameters<typeof restAt>[3] = {}) => restAt(server.baseUrl, method, `/api/v1${path}`, opts);

async function slots(server: RunningServer, userUrl: string, eventUrl: string, query: string): Promise<{ status: number; body: Json }> {
  const res = await api(server, "GET", `/public/users/${encodeURIComponent(userUrl)}/events/${encodeURIComponent(eventUrl)}/slots?${query}`);
  return { status: res.status, body: res.body };
}

const startsOf = (res: { status: number; body: Json }): string[] => (res.status === 200 ? (res.body.data.slots as Json[]).map((s) => s.start_time as string) : []);

function expectOk<T extends { status: number; body: Json }>(res: T, status = 200): T {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  return res;
}

/** What a listing shows: its status and slot starts. */
type Listing = { status: number; starts: string[] };

/**
 * Makes `change` through replica a, then checks that a's next listing shows it (`shows`), and that b shows it
 * within a second: b is listed until it does, and no listing of b begun a second or more after the change had
 * answered may miss it (the cache's bound across replicas, ACCOUNT_CACHE_MS; b's listings may take longer than
 * that on a loaded machine, so it is their start that counts).
 */
async function seenEverywhere(list: (server: RunningServer) => Promise<Listing>, change: () => Promise<unknown>, shows: (l: Listing) => boolean): Promise<void> {
  await change();
  const answered = performance.now();
  const own = await list(a);
  expect(shows(own), `replica a's own listing after the change: ${JSON.stringify(own)}`).toBe(true);
  let lastMissed = -Infinity;
  await until("replica b shows the change", async () => {
    const began = performance.now();
    const seen = shows(await list(b));
    if (!seen) lastMissed = began;
    return seen;
  });
  expect(lastMissed - answered, "a listing of b begun a second or more after the change missed it").toBeLessThan(1000);
}

describe("two replicas with their caches on one database", () => {
  const day = dayFromToday(3);
  const query = `date_from=${day}&date_to=${day}&timezone=UTC`;
  const at = (...times: string[]) => times.map((t) => utcIso(day, t));
  const same = (expected: string[]) => (l: Listing) => l.status === 200 && JSON.stringify(l.starts) === JSON.stringify(expected);

  it("a change of availability, of an event, of a booking and of the url made on one is in the other's listings within a second", async () => {
    const host = await fixturesAt(a.baseUrl).newHost({ timezone: "UTC" });
    const event = await fixturesAt(a.baseUrl).newEvent(host);
    let userUrl = host.user.url as string;
    const list = async (server: RunningServer): Promise<Listing> => {
      const res = await slots(server, userUrl, event.url, query);
      return { status: res.status, starts: startsOf(res) };
    };
    // Replica b reads (and keeps) the host, the event and the day's bookings.
    expect((await list(b)).starts).toHaveLength(48);
    expect((await list(b)).starts).toHaveLength(48);

    const hours = { ...ALWAYS_OPEN, weekly_hours: Object.fromEntries(Object.entries(ALWAYS_OPEN.weekly_hours).map(([d]) => [d, [{ start: "10:00", end: "12:00" }]])) };
    await seenEverywhere(list, async () => expectOk(await api(a, "PUT", "/user/availability", { key: host.key, body: { availability: hours } })), same(at("10:00", "10:30", "11:00", "11:30")));
    await seenEverywhere(list, async () => expectOk(await api(a, "PATCH", `/events/${event.id}`, { key: host.key, body: { event: { slot_duration: "1_hour" } } })), same(at("10:00", "11:00")));
    let booked: Json = {};
    await seenEverywhere(list, async () => (booked = await fixturesAt(a.baseUrl).book(host, event, { start_time: utcIso(day, "10:00") })), same(at("11:00")));
    await seenEverywhere(list, async () => expectOk(await api(a, "POST", `/public/bookings/${booked.private_key}/cancel`, { body: { booking: { reason: "moved" } } })), same(at("10:00", "11:00")));
    await seenEverywhere(list, async () => expectOk(await api(a, "PATCH", `/events/${event.id}`, { key: host.key, body: { event: { active: false } } })), (l) => l.status === 404);
    await seenEverywhere(list, async () => expectOk(await api(a, "PATCH", `/events/${event.id}`, { key: host.key, body: { event: { active: true } } })), same(at("10:00", "11:00")));

    // The host's url: the old one is gone, the new one works, and another account may take the old one.
    const oldUrl = userUrl;
    await seenEverywhere(list, async () => expectOk(await api(a, "PATCH", "/user", { key: host.key, body: { user: { url: `${oldUrl}-moved` } } })), (l) => l.status === 404);
    userUrl = `${oldUrl}-moved`;
    expect((await list(b)).starts).toHaveLength(2);
    userUrl = oldUrl;
    await seenEverywhere(list, async () => fixturesAt(a.baseUrl).newEvent(await fixturesAt(a.baseUrl).newHost({ url: oldUrl, timezone: "UTC" }), { url: event.url }), (l) => l.starts.length === 48);
  });

  it("a booking imported through one replica is in the other's listings within a second", async () => {
    const host = await fixturesAt(a.baseUrl).newHost({ timezone: "UTC" });
    const event = await fixturesAt(a.baseUrl).newEvent(host);
    const list = async (server: RunningServer): Promise<Listing> => ({ status: 200, starts: startsOf(expectOk(await slots(server, host.user.url, event.url, query))) });
    expect((await list(b)).starts).toContain(utcIso(day, "09:00"));
    await seenEverywhere(
      list,
      () => fixturesAt(a.baseUrl).importBookings([{ event_id: event.id, start_time: utcIso(day, "09:00"), attendee_name: "Imported", attendee_email: "imported@example.com" }]),
      (l) => !l.starts.includes(utcIso(day, "09:00")),
    );
  });
});

/*
 * The cached path against the old one: random hosts (zone, weekly hours, an override, notice, window), events
 * (length, padding), viewers (zone, days) and a random series of changes made on either cached replica (hours,
 * the event, bookings made, canceled and imported); after each change, the cached replicas' listings (the first
 * after the change and a second one, from what was kept) must be the plain replica's: at once on the replica that
 * made the change, within the cache's bound on the other.
 */
const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;
const VIEWER_ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Pacific/Chatham", "Australia/Lord_Howe", "America/St_Johns"];
const clock = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;

const intervalArb = fc
  .tuple(fc.integer({ min: 0, max: 46 }), fc.integer({ min: 1, max: 20 }))
  .map(([start, length]) => ({ start: clock(start * 30), end: start + length >= 48 ? "24:00" : clock((start + length) * 30) }));
const hoursArb = fc.record({
  weekly_hours: fc.tuple(...WEEKDAYS.map(() => fc.oneof(fc.constant([]), intervalArb.map((i) => [i])))).map((days) => Object.fromEntries(WEEKDAYS.map((d, i) => [d, days[i]]))),
  date_overrides: fc.option(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.oneof(fc.constant([]), intervalArb.map((i) => [i]))), { nil: undefined }).map((o) => (o ? [{ date: dayFromToday(o[0]), intervals: o[1] }] : [])),
  minimum_notice_minutes: fc.constantFrom(0, 0, 90, 1440),
  booking_window_days: fc.constantFrom(3, 14, 60),
});
const eventArb = fc.record({ slot_duration: fc.constantFrom("15_minutes", "30_minutes", "1_hour", "2_hours"), padding_duration: fc.constantFrom("0_minutes", "15_minutes", "1_hour") });
const viewArb = fc.record({ zone: fc.constantFrom(...VIEWER_ZONES), from: fc.integer({ min: -1, max: 20 }), days: fc.integer({ min: 0, max: 10 }) });
const changeArb = fc.oneof(
  fc.record({ kind: fc.constant("hours" as const), hours: hoursArb }),
  fc.record({ kind: fc.constant("event" as const), event: eventArb }),
  fc.record({ kind: fc.constant("book" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("cancel" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("import" as const), day: fc.integer({ min: 0, max: 20 }), minute: fc.integer({ min: 0, max: 95 }) }),
);

describe("the cached path gives the old path's slots", () => {
  it("on random hosts, zones, bookings and changes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          zone: fc.constantFrom(...SERVICE_TIME_ZONES),
          hours: hoursArb,
          event: eventArb,
          views: fc.array(viewArb, { minLength: 1, maxLength: 2 }),
          changes: fc.array(fc.tuple(changeArb, fc.boolean()), { minLength: 3, maxLength: 6 }),
        }),
        async ({ zone, hours, event: eventFields, views, changes }) => {
          const host: Host = await fixturesAt(a.baseUrl).newHost({ timezone: zone }, hours);
          const event = await fixturesAt(a.baseUrl).newEvent(host, eventFields);
          const queries = views.map((v) => `date_from=${dayFromToday(v.from, v.zone)}&date_to=${dayFromToday(v.from + v.days, v.zone)}&timezone=${encodeURIComponent(v.zone)}`);
          const keys: string[] = [];
          /** The cached replica's listing, or what the plain replica said instead when they differ. */
          const differs = async (server: RunningServer, q: string): Promise<{ got: Json; plain: Json } | undefined> => {
            // Slots move with the clock (notice, the window's last day): the plain replica is asked before and,
            // when they differ, after; the cached answer must be one of the two.
            const before = await slots(plain, host.user.url, event.url, q);
            const got = await slots(server, host.user.url, event.url, q);
            const same = (x: { status: number; body: Json }) => JSON.stringify([x.status, x.body]) === JSON.stringify([got.status, got.body]);
            if (same(before) || same(await slots(plain, host.user.url, event.url, q))) return undefined;
            return { got: { status: got.status, body: got.body }, plain: { status: before.status, body: before.body } };
          };
          /** The replica that made the change answers it at once, twice; the other within ACCOUNT_CACHE_MS, then again. */
          const compare = async (step: string, writer: RunningServer) => {
            const other = writer === a ? b : a;
            for (const q of queries) {
              for (const server of [writer, writer]) {
                const diff = await differs(server, q);
                expect(diff?.got, `${step}, the writing replica, ${q}`).toEqual(diff?.plain);
              }
              await until(`${step}: the other replica, ${q}`, async () => (await differs(other, q)) === undefined);
              const diff = await differs(other, q);
              expect(diff?.got, `${step}, the other replica again, ${q}`).toEqual(diff?.plain);
            }
          };
          await compare("before any change", a);
          for (const [change, onA] of changes) {
            const writer = onA ? a : b;
            if (change.kind === "hours") expectOk(await api(writer, "PUT", "/user/availability", { key: host.key, body: { availability: change.hours } }));
            else if (change.kind === "event") expectOk(await api(writer, "PATCH", `/events/${event.id}`, { key: host.key, body: { event: change.event } }));
            else if (change.kind === "book") {
              const free = startsOf(await slots(plain, host.user.url, event.url, queries[0]));
              if (free.length > 0) {
                const res = await api(writer, "POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, {
                  body: { booking: { start_time: free[change.pick % free.length], attendee_name: "Ada", attendee_email: "ada@example.com" } },
                });
                keys.push(expectOk(res, 201).body.data.private_key as string);
              }
            } else if (change.kind === "cancel") {
              if (keys.length > 0) expectOk(await api(writer, "POST", `/public/bookings/${keys.splice(change.pick % keys.length, 1)[0]}/cancel`, { body: { booking: { reason: "no" } } }));
            } else {
              const start = new Date(Date.parse(`${dayFromToday(change.day)}T00:00:00Z`) + change.minute * 15 * 60_000).toISOString();
              expectOk(await api(writer, "POST", "/admin/bookings/import", { admin: true, body: { bookings: [{ event_id: event.id, start_time: start, attendee_name: "Old", attendee_email: "old@example.com" }] } }), 201);
            }
            await compare(`after ${JSON.stringify(change)} on ${onA ? "a" : "b"}`, writer);
          }
        },
      ),
      { numRuns: 4 },
    );
  });
});
