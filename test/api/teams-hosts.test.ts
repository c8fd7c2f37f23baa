// Every host of a team booking (teams.md "Public booking of team events", last bullet, and "Host actions"): a collective booking blocks each host's other events, in their slots and against racing bookings, and a reschedule moves every host's hold; reassigning a round robin booking; the host a reassign or a move takes it from, in their booking-change feed; removed members and deleted accounts are not picked.
import { beforeAll, describe, expect, it } from "vitest";
import mongoose from "mongoose";
import { rest, sharedServer, type Json } from "../helpers/api.js";
import { dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { expectRefused, invoke, ok } from "../helpers/calls.js";
import { bookPersonal, bookTeam, collectiveTeam, teamOf, teams } from "../helpers/teams.js";
import { watch } from "../helpers/changeFeed.js";
import { until } from "../helpers/wait.js";

const DAY = dayFromToday(4);
const at = (time: string) => utcIso(DAY, time);

const personalSlots = async (h: Host, event: Json): Promise<string[]> => {
  const res = await rest("GET", `/public/users/${h.user.url}/events/${event.url}/slots?date_from=${DAY}&date_to=${DAY}&timezone=UTC`);
  expect(res.status).toBe(200);
  return res.body.data.slots.map((s: Json) => s.start_time);
};

describe("every host of a collective booking", () => {
  let b: Host;
  let c: Host;
  let team: Json;
  let collective: Json;
  beforeAll(async () => {
    ({ b, c, team, collective } = await collectiveTeam("Hosts"));
  });

  it("blocks the time in every host's personal event slots, not only the first host's", async () => {
    const [bOwn, cOwn] = await Promise.all([newEvent(b), newEvent(c)]);
    // Read first, so the hosts' busy lists are kept (src/db/accountVersions.ts): the booking must change them.
    expect(await personalSlots(c, cOwn)).toContain(at("10:00"));
    const made = await bookTeam(team, collective, at("10:00"));
    expect(made.status).toBe(201);
    expect(await personalSlots(b, bOwn)).not.toContain(at("10:00"));
    expect(await personalSlots(c, cOwn)).not.toContain(at("10:00"));
    expect(await personalSlots(c, cOwn)).toContain(at("10:30"));
    const refused = await bookPersonal(c, cOwn, at("10:00"));
    expect({ status: refused.status, reason: refused.body.data?.reason }).toEqual({ status: 409, reason: "taken" });
  });

  it("a personal booking racing the collective one for the second host's time: exactly one of them", async () => {
    const cOwn = await newEvent(c);
    const [team409, own] = await Promise.all([bookTeam(team, collective, at("11:00")), bookPersonal(c, cOwn, at("11:00"))]);
    expect([team409.status, own.status].sort()).toEqual([201, 409]);
  });

  it("a rescheduled collective booking holds every host's new time and frees the old", async () => {
    const cOwn = await newEvent(c);
    const made = await bookTeam(team, collective, at("13:00"));
    expect(made.status).toBe(201);
    const moved = await rest("POST", `/public/bookings/${made.body.data.private_key}/reschedule`, { body: { booking: { start_time: at("13:30") } } });
    expect(moved.status).toBe(201);
    expect((await bookPersonal(c, cOwn, at("13:30"))).status).toBe(409);
    const slots = await personalSlots(c, cOwn);
    expect(slots).not.toContain(at("13:30"));
    expect(slots).toContain(at("13:00"));
    expect((await bookPersonal(c, cOwn, at("13:00"))).status).toBe(201);
  });
});

describe("reassigning a round robin booking", () => {
  let a: Host;
  let b: Host;
  let c: Host;
  let d: Host;
  let team: Json;
  let rr: Json;
  beforeAll(async () => {
    [a, b, c, d] = await Promise.all([newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" })]);
    team = await teamOf(a, [b, c, d], "Reassign");
    // B first, then C, then D: the order round robin tries them in.
    rr = await ok("rest", a.key, teams.createEvent(team.id, { name: "Demo", url: "demo", slot_duration: "30_minutes", scheduling: "round_robin", hosts: [{ user_id: b.user.id, priority: 4 }, { user_id: c.user.id, priority: 3 }, { user_id: d.user.id, priority: 0 }] }), 201);
  });

  const hostOf = (booking: Json) => booking.hosts.map((h: Json) => h.user_id);

  it("without a host: to the next one the rules pick who is free then; the time moves from the old host to the new", async () => {
    const [bOwn, cOwn] = await Promise.all([newEvent(b), newEvent(c)]);
    const made = (await bookTeam(team, rr, at("09:00"))).body.data;
    expect(hostOf(made)).toEqual([b.user.id]);
    const res = await rest("POST", `/bookings/${made.id}/reassign`, { key: a.key, body: { booking: {} } });
    expect({ status: res.status, message: res.body.message }).toEqual({ status: 200, message: "booking reassigned" });
    expect(res.body.data).toMatchObject({ id: made.id, status: "confirmed", team: { id: team.id }, assignment_reason: "priority 3, 0 of 1 bookings this month" });
    expect(hostOf(res.body.data)).toEqual([c.user.id]);
    // B is free again then, C is not; the booker's link still works.
    expect(await personalSlots(b, bOwn)).toContain(at("09:00"));
    expect(await personalSlots(c, cOwn)).not.toContain(at("09:00"));
    expect((await bookPersonal(c, cOwn, at("09:00"))).status).toBe(409);
    expect((await bookPersonal(b, bOwn, at("09:00"))).status).toBe(201);
    expect((await rest("GET", `/public/bookings/${made.private_key}`)).status).toBe(200);
    // The booking is C's now: C sees it and may act on it; B (under whose account it was first kept) no longer does.
    expect((await rest("GET", `/bookings/${made.id}`, { key: c.key })).status).toBe(200);
    expect((await rest("GET", `/bookings/${made.id}`, { key: b.key })).body.message).toBe("booking not found");
    expect((await rest("POST", `/bookings/${made.id}/cancel`, { key: b.key, body: { booking: {} } })).status).toBe(404);
    const desk = async (h: Host) => ((await rest("GET", "/bookings", { key: h.key })).body.data.bookings as Json[]).map((x) => x.id);
    expect(await desk(c)).toContain(made.id);
    expect(await desk(b)).not.toContain(made.id);
    // The team's list shows the new host.
    const listed = await rest("GET", `/teams/${team.id}/bookings`, { key: a.key });
    expect(hostOf((listed.body.data.records as Json[]).find((r) => r.id === made.id))).toEqual([c.user.id]);
  });

  it("to the host named, over every protocol; one who is not free, or no one free: 409 no host is free at that time", async () => {
    const made = (await bookTeam(team, rr, at("10:00"))).body.data;
    const named = await invoke("grpc", a.key, teams.reassign(made.id, { host_id: d.user.id }));
    expect(named.ok).toBe(true);
    expect(hostOf(named.data)).toEqual([d.user.id]);
    expect(named.data.assignment_reason).toBe("reassigned by the team");
    // Back to B by REST, with no body at all: C is busy at 10:00 with nothing, so the rules pick B (priority 4).
    const again = await rest("POST", `/bookings/${made.id}/reassign`, { key: a.key });
    expect(hostOf(again.body.data)).toEqual([b.user.id]);
    // C and D busy at 11:00: no one but the booking's own host is free.
    await Promise.all([bookPersonal(c, await newEvent(c), at("11:00")), bookPersonal(d, await newEvent(d), at("11:00"))]);
    const busy = (await bookTeam(team, rr, at("11:00"))).body.data;
    expect(hostOf(busy)).toEqual([b.user.id]);
    for (const body of [{ booking: {} }, { booking: { host_id: c.user.id } }]) {
      const refused = await rest("POST", `/bookings/${busy.id}/reassign`, { key: a.key, body });
      expect({ status: refused.status, message: refused.body.message }).toEqual({ status: 409, message: "no host is free at that time" });
    }
    const stranger = await rest("POST", `/bookings/${busy.id}/reassign`, { key: a.key, body: { booking: { host_id: a.user.id } } });
    expect(stranger.status).toBe(422);
  });

  it("the team's owner or admin only, round robin only", async () => {
    const made = (await bookTeam(team, rr, at("12:00"))).body.data;
    // A member without the role: 403; an outsider (even the host of another team): 404.
    expect((await rest("POST", `/bookings/${made.id}/reassign`, { key: c.key, body: { booking: {} } })).status).toBe(403);
    const outsider = await newHost({ timezone: "UTC" });
    expect((await rest("POST", `/bookings/${made.id}/reassign`, { key: outsider.key, body: { booking: {} } })).body.message).toBe("booking not found");
    expectRefused("grpc", await invoke("grpc", outsider.key, teams.reassign(made.id, {})), 404, "booking not found");
    const co = await ok("rest", a.key, teams.createEvent(team.id, { name: "Panel", url: "panel2", slot_duration: "30_minutes", scheduling: "collective", hosts: [{ user_id: b.user.id }, { user_id: c.user.id }] }), 201);
    const held = (await bookTeam(team, co, at("15:00"))).body.data;
    const refused = await rest("POST", `/bookings/${held.id}/reassign`, { key: a.key, body: { booking: {} } });
    expect({ status: refused.status, message: refused.body.message }).toEqual({ status: 422, message: "only a round robin booking can be reassigned" });
  });

  it("a member removed from the team, or whose account is deleted, is picked neither for a booking nor for a reassign", async () => {
    const e = await newHost({ timezone: "UTC" });
    const f = await newHost({ timezone: "UTC" });
    const invitedE = await ok("rest", a.key, teams.invite(team.id, { email: e.user.email }), 201);
    await ok("rest", e.key, teams.accept(invitedE.id));
    const invitedF = await ok("rest", a.key, teams.invite(team.id, { email: f.user.email }), 201);
    await ok("rest", f.key, teams.accept(invitedF.id));
    const solo = await ok("rest", a.key, teams.createEvent(team.id, { name: "Solo", url: "solo", slot_duration: "30_minutes", scheduling: "round_robin", hosts: [{ user_id: e.user.id, priority: 4 }, { user_id: f.user.id, priority: 3 }, { user_id: a.user.id, priority: 0 }] }), 201);
    const first = (await bookTeam(team, solo, at("16:00"))).body.data;
    expect(hostOf(first)).toEqual([e.user.id]);
    await ok("rest", a.key, teams.removeMember(team.id, invitedE.id));
    expect(hostOf((await bookTeam(team, solo, at("16:30"))).body.data)).toEqual([f.user.id]);
    // F's account goes (the API has no way to delete one: the database's document, as an operator would, with the
    // account's stamp moved as every account write does, src/db/accountVersions.ts).
    const conn = await mongoose.createConnection(sharedServer().databaseUri).asPromise();
    try {
      const fId = new mongoose.Types.ObjectId(f.user.id);
      expect((await conn.db!.collection("users").deleteOne({ _id: fId })).deletedCount).toBe(1);
      await conn.db!.collection("account_versions").updateOne({ _id: fId as never }, { $set: { settings: new mongoose.Types.ObjectId().toHexString() } }, { upsert: true });
    } finally {
      await conn.close();
    }
    expect(hostOf((await bookTeam(team, solo, at("17:00"))).body.data)).toEqual([a.user.id]);
    // Reassigning E's booking: not to E (removed) nor F (deleted).
    expect((await rest("POST", `/bookings/${first.id}/reassign`, { key: a.key, body: { booking: { host_id: f.user.id } } })).status).toBe(422);
    const moved = await rest("POST", `/bookings/${first.id}/reassign`, { key: a.key, body: { booking: {} } });
    expect(hostOf(moved.body.data)).toEqual([a.user.id]);
  });

  // After the tests above: the bookings below add to the event's monthly counts, which their reasons name.
  const feedOf = async (h: Host, after = ""): Promise<{ changes: Json[]; next: string }> => {
    const res = await rest("GET", `/booking_changes${after === "" ? "" : `?after=${after}`}`, { key: h.key });
    expect(res.status).toBe(200);
    return res.body.data;
  };

  it("a reassign: the host it leaves gets the change, a booking.updated whose booking no longer names them, as the host it goes to does; over REST and WatchBookingChanges", async () => {
    // Kept under B (its first host), then C's: C holds it without being the account it is kept under.
    const made = (await bookTeam(team, rr, at("14:00"))).body.data;
    await ok("rest", a.key, teams.reassign(made.id, { host_id: c.user.id }));
    const [cBefore, dBefore] = await Promise.all([feedOf(c), feedOf(d)]);
    expect(cBefore.changes.filter((x) => x.booking?.id === made.id).map((x) => x.type)).toEqual(["booking.updated"]);
    const stream = watch("grpc", c.key, cBefore.next);
    try {
      await ok("rest", a.key, teams.reassign(made.id, { host_id: d.user.id }));
      // In the feed before the reassign answered (the write appends its change first).
      const dHost = { user_id: d.user.id, full_name: d.user.full_name, email: d.user.email };
      const left = (await feedOf(c, cBefore.next)).changes.filter((x) => x.booking?.id === made.id);
      expect(left).toEqual([expect.objectContaining({ type: "booking.updated", team: expect.objectContaining({ id: team.id }), booking: expect.objectContaining({ id: made.id, status: "confirmed", hosts: [dHost] }) })]);
      const gained = (await feedOf(d, dBefore.next)).changes.filter((x) => x.booking?.id === made.id);
      expect(gained).toEqual([expect.objectContaining({ type: "booking.updated", booking: expect.objectContaining({ id: made.id, hosts: [dHost] }) })]);
      // The same change, once, on C's open stream.
      const streamed = await until("the reassign on C's stream", () => stream.got.find((x) => x.booking?.id === made.id), { describe: () => stream.failure() });
      expect({ type: streamed.type, hosts: streamed.booking?.hosts.map((h) => h.userId) }).toEqual({ type: "booking.updated", hosts: [d.user.id] });
      expect(stream.got.filter((x) => x.booking?.id === made.id)).toHaveLength(1);
    } finally {
      await stream.stop();
    }
  });

  it("a round robin move to a time its host is busy at: the host it leaves gets the booking.rescheduled, whose booking names the host it went to", async () => {
    const made = (await bookTeam(team, rr, at("16:00"))).body.data;
    await ok("rest", a.key, teams.reassign(made.id, { host_id: c.user.id }));
    expect((await bookPersonal(c, await newEvent(c), at("16:30"))).status).toBe(201);
    const before = await feedOf(c);
    const moved = await rest("POST", `/public/bookings/${made.private_key}/reschedule`, { body: { booking: { start_time: at("16:30") } } });
    expect(moved.status).toBe(201);
    expect(moved.body.data.hosts.map((h: Json) => h.user_id)).toEqual([b.user.id]);
    const left = (await feedOf(c, before.next)).changes.filter((x) => x.booking?.id === moved.body.data.id);
    expect(left).toEqual([expect.objectContaining({ type: "booking.rescheduled", previous_booking_id: made.id, booking: expect.objectContaining({ hosts: [{ user_id: b.user.id, full_name: b.user.full_name, email: b.user.email }] }) })]);
  });
});

describe("the team events' bookings list", () => {
  it("takes date_from and date_to as an event's bookings do (teams.md: the list shape of an event's bookings)", async () => {
    const { a, team, collective } = await collectiveTeam("Dated");
    const later = dayFromToday(25);
    const soon = (await bookTeam(team, collective, at("09:00"))).body.data;
    const far = (await bookTeam(team, collective, utcIso(later, "09:00"))).body.data;
    const ids = async (query: string) => ((await rest("GET", `/teams/${team.id}/bookings${query}`, { key: a.key })).body.data.records as Json[]).map((r) => r.id);
    // The default range is the next 15 days; a range names its own days.
    expect(await ids("")).toEqual([soon.id]);
    expect((await ids(`?date_from=${DAY}&date_to=${later}`)).sort()).toEqual([soon.id, far.id].sort());
    expect(await ids(`?date_from=${dayFromToday(20)}&date_to=${dayFromToday(30)}`)).toEqual([far.id]);
  });
});
