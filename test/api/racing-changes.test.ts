// Two changes of one record written from the same read: the later write must not write over the earlier one's (a booking's owed change, its webhook and feed entry; a schedule's other field). A proxy holds one write until the other has landed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt, type Json } from "../helpers/api.js";
import { utcIso, dayFromToday } from "../helpers/bookings.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { startDbProxy, type DbProxy, type SeenCommand } from "../helpers/dbProxy.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";

let db: TestDatabase;
let proxy: DbProxy;
let receiver: Receiver;
/** Reaches the database through the proxy: its write is the one held. */
let held: RunningServer;
/** A replica reaching the database directly: its write lands while the other waits. */
let direct: RunningServer;

beforeAll(async () => {
  db = await startDatabase();
  [proxy, receiver] = await Promise.all([startDbProxy(db.uri), startReceiver()]);
  const env = { OUTBOUND_ALLOW_PRIVATE: "true", ...CLOCK_CONTROL_ENV };
  [held, direct] = await Promise.all([startServer({ ...env, MONGODB_URI: proxy.uri }), startServer({ ...env, MONGODB_URI: db.uri })]);
}, 150_000);

afterAll(async () => {
  await Promise.all([held?.stop(), direct?.stop(), receiver?.close()]);
  await proxy?.close();
  await db?.kill();
});

/** The update that records a no-show on the booking `id`. */
const noShowWriteOf = (id: string) => (c: SeenCommand) =>
  c.name === "update" && c.collection === "bookings" && c.items.some((u) => String((u.q as { _id?: unknown })._id) === id && "no_show" in ((u.u as { $set?: object }).$set ?? {}));

describe("a no-show recorded on two replicas at once", () => {
  it("owes each its own change: two booking.no_show webhooks, the last one as the booking is, and both in the feed", async () => {
    const fixtures = fixturesAt(direct.baseUrl);
    const host = await fixtures.newHost({ timezone: "UTC" });
    const event = await fixtures.newEvent(host, { url: "racing-no-show", slot_duration: "30_minutes" });
    const hook = await restAt(direct.baseUrl, "POST", "/api/v1/webhooks", { key: host.key, body: { webhook: { url: receiver.url("/no-show"), events: ["booking.no_show"] } } });
    expect(hook.status).toBe(201);
    receiver.secret("/no-show", hook.body.data.secret);
    const start = utcIso(dayFromToday(2), "09:00");
    const made = await restAt(direct.baseUrl, "POST", `/api/v1/public/users/${host.user.url}/events/${event.url}/bookings`, {
      body: { booking: { start_time: start, attendee_name: "Nora", attendee_email: "nora@example.com" } },
    });
    expect(made.status).toBe(201);
    const id = made.body.data.id as string;
    // Both replicas past the booking's start (a no-show is recorded once it has begun).
    const [now] = await advanceClock([held, direct], 0);
    await advanceClock([held, direct], Date.parse(start) - now.getTime() + 60_000);
    const noShow = (server: RunningServer, who: string) => restAt(server.baseUrl, "POST", `/api/v1/bookings/${id}/no_show`, { key: host.key, body: { booking: { no_show: who } } });

    // The first replica has read the booking and made its write; the proxy holds the write there.
    const hold = proxy.holdNext(noShowWriteOf(id));
    const first = noShow(held, "host");
    await hold.held;
    // The other replica records its no-show in full, and its webhook goes out.
    const second = await noShow(direct, "attendee");
    expect(second.status).toBe(200);
    await receiver.waitFor("/no-show", 1);
    hold.release();
    const firstAnswer = await first;
    expect({ status: firstAnswer.status, no_show: firstAnswer.body.data?.no_show }).toEqual({ status: 200, no_show: "host" });

    const got = await receiver.waitFor("/no-show", 2);
    const shown = (m: (typeof got)[number]) => (m.message?.data as Json | undefined)?.booking?.no_show;
    expect(got.map(shown)).toEqual(["attendee", "host"]);
    const now2 = await restAt(direct.baseUrl, "GET", `/api/v1/bookings/${id}`, { key: host.key });
    expect(now2.body.data.no_show).toBe("host");
    const feed = await until("both changes in the feed", async () => {
      const res = await restAt(direct.baseUrl, "GET", "/api/v1/booking_changes?limit=500", { key: host.key });
      const mine = (res.body.data.changes as Json[]).filter((c) => c.booking?.id === id && c.type === "booking.updated");
      return mine.length >= 2 ? mine : undefined;
    });
    expect(feed.map((c) => c.booking.no_show)).toEqual(["attendee", "host"]);
  });
});

/** The update of the schedule `id`. */
const scheduleWriteOf = (id: string) => (c: SeenCommand) =>
  c.name === "update" && c.collection === "schedules" && c.items.some((u) => String((u.q as { _id?: unknown })._id) === id);

describe("a schedule patched on two replicas at once, each a different field", () => {
  it("keeps both: the weekly hours of one and the date overrides of the other", async () => {
    const host = await fixturesAt(direct.baseUrl).newHost({ timezone: "UTC" });
    const made = await restAt(direct.baseUrl, "POST", "/api/v1/schedules", { key: host.key, body: { schedule: { name: "Racing" } } });
    expect(made.status).toBe(201);
    const id = made.body.data.id as string;
    const patch = (server: RunningServer, schedule: Json) => restAt(server.baseUrl, "PATCH", `/api/v1/schedules/${id}`, { key: host.key, body: { schedule } });
    const weekly = { monday: [{ start: "08:00", end: "12:00" }] };
    const overrides = [{ date: "2030-06-03", intervals: [] }];

    // The first replica has read the schedule and made its write of the weekly hours; the proxy holds it there.
    const hold = proxy.holdNext(scheduleWriteOf(id));
    const first = patch(held, { weekly_hours: weekly });
    await hold.held;
    expect((await patch(direct, { date_overrides: overrides })).status).toBe(200);
    hold.release();
    expect((await first).status).toBe(200);

    const now = await restAt(direct.baseUrl, "GET", `/api/v1/schedules/${id}`, { key: host.key });
    expect({ monday: now.body.data.weekly_hours.monday, overrides: now.body.data.date_overrides }).toEqual({ monday: weekly.monday, overrides });
  });
});

describe("changes written on two replicas whose clocks differ", () => {
  it("show occurred_at never going back in the feed's order: a change appended after another is at least as late", async () => {
    const fixtures = fixturesAt(direct.baseUrl);
    const host = await fixtures.newHost({ timezone: "UTC" });
    const event = await fixtures.newEvent(host, { url: "skewed-clocks", slot_duration: "30_minutes" });
    const book = (time: string) => restAt(direct.baseUrl, "POST", `/api/v1/public/users/${host.user.url}/events/${event.url}/bookings`, {
      body: { booking: { start_time: utcIso(dayFromToday(3), time), attendee_name: "Skew", attendee_email: `skew-${time.replace(":", "")}@example.com` } },
    });
    const [first, second] = [(await book("09:00")).body.data, (await book("10:00")).body.data];
    // The direct replica's clock a minute ahead: its write is made "later" than the one after it on the other.
    const [ahead] = await advanceClock(direct, 60_000);
    const note = (server: RunningServer, id: string) => restAt(server.baseUrl, "PATCH", `/api/v1/bookings/${id}`, { key: host.key, body: { booking: { internal_notes: `note ${id}` } } });
    expect((await note(direct, first.id)).status).toBe(200);
    expect((await note(held, second.id)).status).toBe(200);
    const listed = await restAt(direct.baseUrl, "GET", "/api/v1/booking_changes", { key: host.key });
    const times = (listed.body.data.changes as Json[]).map((c) => Date.parse(c.occurred_at as string));
    expect(times).toHaveLength(4);
    expect(times.every((t, i) => i === 0 || t >= times[i - 1])).toBe(true);
    // The later change shows the earlier one's time (the minute ahead), not its own replica's.
    expect(times[3]).toBe(times[2]);
    expect(times[2]).toBeGreaterThanOrEqual(ahead.getTime() - 1000);
  });
});
