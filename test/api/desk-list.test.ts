// The host's desk list (booking-kinds.md "The host's desk"): every booking of the caller's events, personal and team, in any status, newest start first, in cursor pages with no repeats or misses, each filter, and the 404 and 422s, on every protocol.
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, sharedServer, type Json } from "../helpers/api.js";
import { book, dayFromToday, deskCalls, hostCalls, importBookings, newEvent, newHost, utcIso, type DeskAsk, type Host } from "../helpers/bookings.js";
import { allowedData, expectRefused, invoke, ok, PROTOCOLS, type Protocol } from "../helpers/calls.js";
import { teams, teamUrl } from "../helpers/teams.js";

const DAY = dayFromToday(3);
const PAST = dayFromToday(-3);

/** Every page of the list from the first on, as the ids each showed. */
async function allPages(protocol: Protocol, key: string, q: DeskAsk): Promise<{ pages: string[][]; bookings: Json[] }> {
  const pages: string[][] = [];
  const bookings: Json[] = [];
  let after: string | undefined;
  for (let i = 0; i < 50; i++) {
    const data = await ok(protocol, key, deskCalls.list({ ...q, after }), 200, "bookings found");
    pages.push(data.bookings.map((b: Json) => b.id));
    bookings.push(...data.bookings);
    after = data.next ?? undefined;
    if (after === undefined) return { pages, bookings };
  }
  throw new Error("the list never ended");
}

describe("the host's desk list", () => {
  let host: Host;
  let other: Host;
  let first: Json;
  let second: Json;
  /** Every booking of the host, as GET /bookings/<id> shows it, newest start (then newest id) first. */
  let expected: Json[];
  let teamBooking: Json;
  let conn: mongoose.Connection;

  beforeAll(async () => {
    [host, other] = await Promise.all([newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" })]);
    [first, second] = await Promise.all([newEvent(host, { name: "First" }), newEvent(host, { name: "Second" })]);
    // Imported: several at one start in both events (the id decides their order), past ones, and each status.
    const imported = [
      ...["09:00", "09:00", "10:00", "11:00", "11:00", "12:00"].map((t, i) => ({ event_id: i % 2 === 0 ? first.id : second.id, start_time: utcIso(DAY, t), attendee_name: `A${i}`, attendee_email: `a${i}@example.com` })),
      { event_id: first.id, start_time: utcIso(PAST, "09:00"), attendee_name: "Past", attendee_email: "past@example.com" },
      { event_id: second.id, start_time: utcIso(PAST, "10:00"), attendee_name: "Gone", attendee_email: "gone@example.com", status: "canceled" },
    ];
    await importBookings(imported);
    const booked = await book(host, first, { start_time: utcIso(DAY, "15:00"), attendee_email: "Ada@Example.com" });
    await ok("rest", host.key, hostCalls.cancel((await book(host, second, { start_time: utcIso(DAY, "16:00") })).id, { reason: "no" }));
    // A collective team booking held first by the other host still shows on this host's desk.
    const team = await ok("rest", other.key, teams.create({ name: "Desk", url: teamUrl("desk"), timezone: "UTC" }), 201);
    const invited = await ok("rest", other.key, teams.invite(team.id, { email: host.user.email }), 201);
    await ok("rest", host.key, teams.accept(invited.id));
    const event = await ok("rest", other.key, teams.createEvent(team.id, { name: "Both", url: `both${process.pid}`, slot_duration: "30_minutes", scheduling: "collective", hosts: [{ user_id: other.user.id }, { user_id: host.user.id }] }), 201);
    const res = await rest("POST", `/public/teams/${team.url}/events/${event.url}/bookings`, { body: { booking: { start_time: utcIso(DAY, "17:00"), attendee_name: "Team", attendee_email: "team@example.com" } } });
    expect(res.status).toBe(201);
    teamBooking = res.body.data;
    expect(booked.status).toBe("confirmed");

    const listed = await ok("rest", host.key, deskCalls.list({ limit: 100 }), 200, "bookings found");
    expected = listed.bookings;
    conn = await mongoose.createConnection(sharedServer().databaseUri).asPromise();
  });
  afterAll(async () => {
    await conn?.close();
  });

  it("lists every booking of the caller's events, personal and team, newest start then newest id first, each as GET /bookings/<id> shows it", async () => {
    expect(expected).toHaveLength(11);
    const order = [...expected].sort((x, y) => Date.parse(y.start_time) - Date.parse(x.start_time) || (y.id > x.id ? 1 : -1));
    expect(expected.map((b) => b.id)).toEqual(order.map((b) => b.id));
    expect(new Set(expected.map((b) => b.status))).toEqual(new Set(["confirmed", "canceled"]));
    expect(expected[0]).toMatchObject({ id: teamBooking.id, event_name: "Both" });
    for (const b of expected) expect(b).toEqual(await ok("rest", host.key, hostCalls.get(b.id)));
    // Another account sees none of them.
    const theirs = await ok("rest", other.key, deskCalls.list({ limit: 100 }));
    expect(theirs.bookings.map((b: Json) => b.id)).toEqual([teamBooking.id]);
  });

  it.each(PROTOCOLS)("pages over %s follow each other with no repeats or misses, next null on the last", async (protocol) => {
    const { pages, bookings } = await allPages(protocol, host.key, { limit: 3 });
    expect(pages.map((p) => p.length)).toEqual([3, 3, 3, 2]);
    expect(pages.flat()).toEqual(expected.map((b) => b.id));
    expect(bookings[0]).toMatchObject({ id: expected[0].id, start_time: expected[0].start_time, status: expected[0].status });
    const last = await ok(protocol, host.key, deskCalls.list({ limit: 100 }));
    expect(last.next ?? null).toBeNull();
    expect((await ok(protocol, host.key, deskCalls.list())).bookings).toHaveLength(11);
  });

  it("filters by status, event, start range, attendee and no-show, and pages within a filter", async () => {
    const ids = async (q: DeskAsk) => (await ok("rest", host.key, deskCalls.list({ limit: 100, ...q }))).bookings.map((b: Json) => b.id);
    const where = (f: (b: Json) => boolean) => expected.filter(f).map((b) => b.id);
    expect(await ids({ status: ["canceled"] })).toEqual(where((b) => b.status === "canceled"));
    expect(await ids({ status: ["canceled", "confirmed"] })).toEqual(expected.map((b) => b.id));
    expect(await ids({ status: ["pending"] })).toEqual([]);
    expect(await ids({ event_id: [second.id] })).toEqual(where((b) => b.event_id === second.id));
    expect(await ids({ event_id: [second.id, first.id] })).toEqual(where((b) => b.event_id === second.id || b.event_id === first.id));
    const from = utcIso(DAY, "10:00");
    const to = utcIso(DAY, "15:00");
    expect(await ids({ from, to })).toEqual(where((b) => b.start_time >= from && b.start_time < to));
    expect(await ids({ from: `${DAY}T12:00:00+02:00` })).toEqual(where((b) => b.start_time >= utcIso(DAY, "10:00")));
    // A date (ISO 8601 too) is the start of that day in the host's zone (UTC here): one day's bookings.
    const dayAfter = new Date(Date.parse(`${DAY}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    expect(await ids({ from: DAY, to: dayAfter })).toEqual(where((b) => b.start_time >= utcIso(DAY, "00:00") && b.start_time < utcIso(dayAfter, "00:00")));
    expect(await ids({ from: DAY, to: dayAfter })).toHaveLength(9);
    expect(await ids({ attendee_email: " ADA@example.com" })).toEqual(where((b) => b.attendee_email === "ada@example.com"));
    const { pages } = await allPages("rest", host.key, { event_id: [first.id], limit: 2 });
    expect(pages.flat()).toEqual(where((b) => b.event_id === first.id));
    // The no-show field (booking-kinds.md "No-shows") as stored.
    const marked = expected.find((b) => b.start_time < new Date().toISOString())!;
    await conn.collection("bookings").updateOne({ _id: new mongoose.Types.ObjectId(marked.id) }, { $set: { no_show: "attendee" } });
    expect(await ids({ no_show: "attendee" })).toEqual([marked.id]);
    expect(await ids({ no_show: "host" })).toEqual([]);
  });

  it.each(PROTOCOLS)("over %s: 422 for a bad page[limit], page[after], time or value; 404 for another account's event", async (protocol) => {
    const refused = async (q: DeskAsk, http: 404 | 422, message: string, data: Json = {}) => expectRefused(protocol, await invoke(protocol, host.key, deskCalls.list(q)), http, message, data);
    for (const limit of [0, 101, -1]) await refused({ limit }, 422, "page[limit] must be between 1 and 100");
    await refused({ after: "not-a-cursor" }, 422, "page[after] is not a next of this list");
    await refused({ after: Buffer.from("1.zz").toString("base64url") }, 422, "page[after] is not a next of this list");
    await refused({ from: "tomorrow" }, 422, "from is not a valid ISO 8601 time");
    await refused({ to: "2026-13-01T00:00:00Z" }, 422, "to is not a valid ISO 8601 time");
    const outside = async (q: DeskAsk, field: string, allowed: string[]) => {
      const o = await invoke(protocol, host.key, deskCalls.list(q));
      expect({ ok: o.ok, http: protocol === "rest" ? o.http : 422, message: o.message }).toEqual({ ok: false, http: 422, message: `${field} is not included in the list` });
      if (protocol === "rest") expect(o.data).toMatchObject(allowedData(field, allowed));
    };
    await outside({ status: ["lost"] }, "status", ["confirmed", "canceled", "rescheduled", "pending", "declined", "expired"]);
    await outside({ no_show: "both" }, "no_show", ["attendee", "host"]);
    const theirs = await newEvent(other);
    await refused({ event_id: [first.id, theirs.id] }, 404, "event not found");
    await refused({ event_id: ["65f000000000000000000000"] }, 404, "event not found");
  });

  it("a page[limit] that is no number is 422 on REST", async () => {
    const res = await invoke("rest", host.key, { ...deskCalls.list(), rest: { method: "GET", path: "/bookings?page[limit]=ten" } });
    expectRefused("rest", res, 422, "page[limit] must be between 1 and 100");
  });
});
