// A booking change whose append to the feed failed (src/features/bookings/feed.ts): the booking is answered and kept, the feed's sweep appends the change once it is old enough, once, to every feed it goes to (a reassign's old host's too), and a change whose append was applied but not answered is not appended again. A fault proxy between the service and its database fails the append.
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt, useServer, type Json } from "../helpers/api.js";
import { ok } from "../helpers/calls.js";
import { bookTeam, teamOf, teams } from "../helpers/teams.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { startProxiedService, type DbProxy, type ProxiedService, type SeenCommand } from "../helpers/dbProxy.js";
import { dayFromToday, fixturesAt, utcIso, type Host } from "../helpers/fixtures.js";
import type { RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

let service: ProxiedService;
let proxy: DbProxy;
let server: RunningServer;
let host: Host;
let event: Json;
/** The database seen directly, not through the proxy: whether a booking still waits for the sweep. */
let direct: mongoose.Connection;

/** Past the age at which the sweep takes a change over (feed.ts SWEEP_AFTER_MS, 30 s). */
const PAST_SWEEP_AGE_MS = 31_000;

beforeAll(async () => {
  service = await startProxiedService(CLOCK_CONTROL_ENV);
  ({ proxy, server, direct } = service);
  const at = fixturesAt(server.baseUrl);
  host = await at.newHost();
  event = await at.newEvent(host);
  // The account's first change opens its feed, so the appends below are updates of its bucket.
  await at.book(host, event, { start_time: utcIso(dayFromToday(2), "08:00") });
}, 240_000);

afterAll(async () => {
  await service?.close();
});

/** An append of the account's changes: the conditional update of its feed bucket. */
const isAppend = (c: SeenCommand) => c.name === "update" && c.collection === "booking_changes";
/** A failure the append does not retry (only an unreachable database or a transient conflict is waited out). */
const refused = { code: 2, codeName: "BadValue", errmsg: "refused by the test's proxy" };

/** Whether the booking is still marked as owing the feed a change (feed_pending: what the sweep looks for). */
const waitsForSweep = async (id: unknown) =>
  (await direct.collection("bookings").findOne({ _id: new mongoose.Types.ObjectId(String(id)) }, { projection: { feed_pending: 1 } }))?.feed_pending === true;

const feedIds = async () => {
  const res = await restAt(server.baseUrl, "GET", "/api/v1/booking_changes?limit=500", { key: host.key });
  expect(res.status).toBe(200);
  return (res.body.data.changes as Json[]).map((c) => `${c.type} ${c.booking.id}`);
};

describe("the booking-change feed's sweep", () => {
  it("appends, once, a change whose append the database refused; the booking itself was answered", async () => {
    const failed = proxy.failNext(isAppend, refused);
    const booking = await fixturesAt(server.baseUrl).book(host, event, { start_time: utcIso(dayFromToday(2), "09:00") });
    await failed;
    expect(await feedIds()).not.toContain(`booking.created ${booking.id}`);
    // Young changes are left to their writes; past the age, the sweep (every replica, each poll) takes them.
    await advanceClock(server, PAST_SWEEP_AGE_MS);
    await until("the swept change", async () => (await feedIds()).includes(`booking.created ${booking.id}`), { timeoutMs: 20_000 });
    await until("the mark cleared", async () => !(await waitsForSweep(booking.id)));
    // The booking's next change follows it; more passes find nothing left to do.
    const canceled = await restAt(server.baseUrl, "POST", `/api/v1/bookings/${booking.id}/cancel`, { key: host.key, body: { booking: {} } });
    expect(canceled.status).toBe(200);
    await until("the cancel", async () => (await feedIds()).includes(`booking.canceled ${booking.id}`));
    await advanceClock(server, PAST_SWEEP_AGE_MS);
    await until("the cancel's mark cleared", async () => !(await waitsForSweep(booking.id)));
    expect((await feedIds()).filter((c) => c.endsWith(booking.id as string))).toEqual([`booking.created ${booking.id}`, `booking.canceled ${booking.id}`]);
  }, 120_000);

  it("appends a failed change of a booking that goes on changing, without waiting for the booking to be quiet", async () => {
    const booking = await fixturesAt(server.baseUrl).book(host, event, { start_time: utcIso(dayFromToday(2), "11:00") });
    await until("the booking's change", async () => (await feedIds()).includes(`booking.created ${booking.id}`));
    const edit = async (notes: string) => expect((await restAt(server.baseUrl, "PATCH", `/api/v1/bookings/${booking.id}`, { key: host.key, body: { booking: { internal_notes: notes } } })).status).toBe(200);
    const notesInFeed = async () => {
      const res = await restAt(server.baseUrl, "GET", "/api/v1/booking_changes?limit=500", { key: host.key });
      return (res.body.data.changes as Json[]).filter((c) => c.booking?.id === booking.id && c.type === "booking.updated").map((c) => c.booking.internal_notes);
    };
    const failed = proxy.failNext(isAppend, refused);
    await edit("first");
    await failed;
    // The booking changes again before the first change is old enough for the sweep, and again after: it is never
    // quiet for the sweep's age, but its first change is past it.
    await advanceClock(server, 20_000);
    await edit("second");
    await advanceClock(server, 12_000);
    // Past the sweep's age (32 s) the first goes in at the next pass; a sweep that waited for the booking to be
    // quiet would take it only once the second edit is 30 s old, 18 s from now.
    await until("the first edit swept in", async () => (await notesInFeed()).includes("first"), { timeoutMs: 10_000 });
    expect(await notesInFeed()).toEqual(["second", "first"]);
  }, 120_000);

  it("two edits of one booking at once: both reach the feed, each once", async () => {
    const booking = await fixturesAt(server.baseUrl).book(host, event, { start_time: utcIso(dayFromToday(2), "12:00") });
    const answers = await Promise.all(["a", "b", "c", "d"].map((notes) => restAt(server.baseUrl, "PATCH", `/api/v1/bookings/${booking.id}`, { key: host.key, body: { booking: { internal_notes: notes } } })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const stored = await direct.collection("bookings").findOne({ _id: new mongoose.Types.ObjectId(String(booking.id)) }, { projection: { feed_owed: 1, feed_n: 1 } });
    // Each edit recorded its change on the booking over the one before (none set the list from the same read).
    expect(stored?.feed_n).toBe(5);
    expect((stored?.feed_owed as { n: number }[]).map((o) => o.n)).toEqual([1, 2, 3, 4, 5]);
    await until("the four edits in the feed", async () => (await feedIds()).filter((c) => c === `booking.updated ${booking.id}`).length === 4);
  }, 60_000);

  it("sweeps a reassign's change into the feed of the host it left, whose append the database refused; once in each feed", async () => {
    useServer(server.baseUrl);
    try {
      const at = fixturesAt(server.baseUrl);
      const [a, b, c, d] = await Promise.all([at.newHost({ timezone: "UTC" }), at.newHost({ timezone: "UTC" }), at.newHost({ timezone: "UTC" }), at.newHost({ timezone: "UTC" })]);
      const team = await teamOf(a, [b, c, d], "Swept");
      const rr = await ok("rest", a.key, teams.createEvent(team.id, { name: "Demo", url: "demo", slot_duration: "30_minutes", scheduling: "round_robin", hosts: [{ user_id: b.user.id, priority: 4 }, { user_id: c.user.id }, { user_id: d.user.id }] }), 201);
      const booking = (await bookTeam(team, rr, utcIso(dayFromToday(3), "14:00"))).body.data;
      await ok("rest", a.key, teams.reassign(booking.id, { host_id: c.user.id }));
      const changesOf = async (h: Host) => {
        const res = await restAt(server.baseUrl, "GET", "/api/v1/booking_changes?limit=500", { key: h.key });
        return (res.body.data.changes as Json[]).filter((x) => x.booking?.id === booking.id).map((x) => `${x.type} ${x.booking.hosts.map((h: Json) => h.user_id).join(",")}`);
      };
      // C's feed bucket: the next append to it is C's share of the second reassign.
      const bucket = await direct.collection("booking_changes").findOne({ user_id: new mongoose.Types.ObjectId(String(c.user.id)) }, { sort: { block: -1 }, projection: { _id: 1 } });
      const failed = proxy.failNext((cmd) => isAppend(cmd) && String((cmd.items[0]?.q as { _id?: unknown } | undefined)?._id) === String(bucket?._id), refused);
      await ok("rest", a.key, teams.reassign(booking.id, { host_id: d.user.id }));
      await failed;
      expect(await changesOf(c)).toEqual([`booking.updated ${c.user.id}`]);
      await advanceClock(server, PAST_SWEEP_AGE_MS);
      await until("the reassign swept into C's feed", async () => (await changesOf(c)).length === 2, { timeoutMs: 20_000 });
      await until("the mark cleared", async () => !(await waitsForSweep(booking.id)));
      expect(await changesOf(c)).toEqual([`booking.updated ${c.user.id}`, `booking.updated ${d.user.id}`]);
      // The feeds the write reached are not given it again.
      expect(await changesOf(d)).toEqual([`booking.updated ${d.user.id}`]);
      expect(await changesOf(b)).toEqual([`booking.created ${b.user.id}`, `booking.updated ${c.user.id}`, `booking.updated ${d.user.id}`]);
    } finally {
      useServer(undefined);
    }
  }, 120_000);

  it("does not append again a change whose append was applied but answered with an error", async () => {
    const failed = proxy.failNext(isAppend, refused, { applied: true });
    const booking = await fixturesAt(server.baseUrl).book(host, event, { start_time: utcIso(dayFromToday(2), "10:00") });
    await failed;
    expect(await feedIds()).toContain(`booking.created ${booking.id}`);
    expect(await waitsForSweep(booking.id)).toBe(true);
    await advanceClock(server, PAST_SWEEP_AGE_MS);
    await until("the sweep's pass", async () => !(await waitsForSweep(booking.id)), { timeoutMs: 20_000 });
    const ids = await feedIds();
    expect(ids.filter((c) => c.endsWith(booking.id as string))).toEqual([`booking.created ${booking.id}`]);
  }, 120_000);
});
