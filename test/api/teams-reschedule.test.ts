// Rescheduling team bookings (teams.md, docs/teams.md "Moving a team booking"): a round robin booking stays with its host when free, else goes to the free host round robin picks (not with reschedule_with_same_host), race-free through the hosts' cells; a collective booking moves only to a time every host is free at.
import { beforeAll, describe, expect, it } from "vitest";
import { rest, type Json } from "../helpers/api.js";
import { dayFromToday, deskCalls, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { invoke, ok } from "../helpers/calls.js";
import { bookPersonal, bookTeam, collectiveTeam, teamOf, teams } from "../helpers/teams.js";

const DAY = dayFromToday(5);
const at = (time: string) => utcIso(DAY, time);

const reschedule = (privateKey: string, start: string) => rest("POST", `/public/bookings/${privateKey}/reschedule`, { body: { booking: { start_time: start } } });

/** The team event's slots a reschedule of the booking is offered (the booker's page asks with its private key). */
const rescheduleSlots = async (team: Json, event: Json, privateKey: string): Promise<string[]> => {
  const res = await rest("GET", `/public/teams/${team.url}/events/${event.url}/slots?date_from=${DAY}&date_to=${DAY}&timezone=UTC&private_key=${privateKey}`);
  expect(res.status).toBe(200);
  return res.body.data.slots.map((s: Json) => s.start_time);
};

const hostIds = (booking: Json): string[] => booking.hosts.map((h: Json) => h.user_id);

describe("rescheduling a round robin booking", () => {
  let a: Host;
  let b: Host;
  let c: Host;
  let team: Json;
  let rr: Json;
  let same: Json;
  let bOwn: Json;
  let cOwn: Json;
  beforeAll(async () => {
    [a, b, c] = await Promise.all([newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" })]);
    team = await teamOf(a, [b, c], "Moves");
    // B first (priority 4), then C.
    const hosts = [{ user_id: b.user.id, priority: 4 }, { user_id: c.user.id, priority: 3 }];
    rr = await ok("rest", a.key, teams.createEvent(team.id, { name: "Demo", url: "demo", slot_duration: "30_minutes", scheduling: "round_robin", hosts }), 201);
    same = await ok("rest", a.key, teams.createEvent(team.id, { name: "Same", url: "same", slot_duration: "30_minutes", scheduling: "round_robin", reschedule_with_same_host: true, hosts }), 201);
    [bOwn, cOwn] = await Promise.all([newEvent(b), newEvent(c)]);
  });

  it("to a time only another host is free at: 201, the booking goes to that host, the time moves from one host to the other", async () => {
    const made = (await bookTeam(team, rr, at("09:00"))).body.data;
    expect(hostIds(made)).toEqual([b.user.id]);
    expect((await bookPersonal(b, bOwn, at("10:00"))).status).toBe(201);
    // The slots offered for the reschedule show 10:00 (C is free)...
    expect(await rescheduleSlots(team, rr, made.private_key)).toContain(at("10:00"));
    // ...and the move to it is taken.
    const moved = await reschedule(made.private_key, at("10:00"));
    expect(moved.status).toBe(201);
    expect(moved.body.data).toMatchObject({ status: "confirmed", start_time: at("10:00"), team: { id: team.id } });
    expect(hostIds(moved.body.data)).toEqual([c.user.id]);
    expect(moved.body.data.assignment_reason).toMatch(/^priority 3, /);
    // C holds 10:00 now; B is free again at 09:00.
    const refused = await bookPersonal(c, cOwn, at("10:00"));
    expect({ status: refused.status, reason: refused.body.data?.reason }).toEqual({ status: 409, reason: "taken" });
    expect((await bookPersonal(b, bOwn, at("09:00"))).status).toBe(201);
    // The team's list and the host's own view show the new host.
    const listed = await rest("GET", `/teams/${team.id}/bookings`, { key: a.key });
    expect(hostIds((listed.body.data.records as Json[]).find((r) => r.id === moved.body.data.id))).toEqual([c.user.id]);
  });

  it("stays with its host when that host is free at the new time", async () => {
    const made = (await bookTeam(team, rr, at("11:00"))).body.data;
    expect(hostIds(made)).toEqual([b.user.id]);
    const moved = await reschedule(made.private_key, at("11:30"));
    expect(moved.status).toBe(201);
    expect(hostIds(moved.body.data)).toEqual([b.user.id]);
    expect(moved.body.data.assignment_reason).toBe(made.assignment_reason);
    expect((await bookPersonal(c, cOwn, at("11:30"))).status).toBe(201);
  });

  it("with reschedule_with_same_host: 409 at a time its host is busy, though another host is free", async () => {
    const made = (await bookTeam(team, same, at("12:00"))).body.data;
    expect(hostIds(made)).toEqual([b.user.id]);
    expect((await bookPersonal(b, bOwn, at("12:30"))).status).toBe(201);
    expect(await rescheduleSlots(team, same, made.private_key)).not.toContain(at("12:30"));
    const refused = await reschedule(made.private_key, at("12:30"));
    expect({ status: refused.status, message: refused.body.message, reason: refused.body.data?.reason }).toEqual({ status: 409, message: "slot is not available", reason: "taken" });
    // The booking is where it was.
    expect((await rest("GET", `/public/bookings/${made.private_key}`)).body.data).toMatchObject({ status: "confirmed", start_time: at("12:00") });
  });

  it("two moves racing for the one free host: one gets it, the other 409", async () => {
    const first = (await bookTeam(team, rr, at("13:00"), "one@example.com")).body.data;
    const second = (await bookTeam(team, rr, at("13:30"), "two@example.com")).body.data;
    expect([hostIds(first), hostIds(second)]).toEqual([[b.user.id], [b.user.id]]);
    expect((await bookPersonal(b, bOwn, at("14:00"))).status).toBe(201);
    const answers = await Promise.all([reschedule(first.private_key, at("14:00")), reschedule(second.private_key, at("14:00"))]);
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(hostIds(answers.find((r) => r.status === 201)!.body.data)).toEqual([c.user.id]);
  });

  it("the host's own move (the desk) follows the same rules: to a time they are busy at, it goes to the free host", async () => {
    const made = (await bookTeam(team, rr, at("17:00"))).body.data;
    expect(hostIds(made)).toEqual([b.user.id]);
    expect((await bookPersonal(b, bOwn, at("17:30"))).status).toBe(201);
    const moved = await ok("rest", b.key, deskCalls.reschedule(made.id, { start_time: at("17:30") }), 201, "booking rescheduled");
    expect(moved.hosts.map((h: Json) => h.user_id)).toEqual([c.user.id]);
    // C holds it now, so C may move it on; B no longer can.
    expect((await invoke("rest", b.key, deskCalls.reschedule(moved.id, { start_time: at("18:00") }))).http).toBe(404);
    expect((await ok("rest", c.key, deskCalls.reschedule(moved.id, { start_time: at("18:00") }), 201)).hosts.map((h: Json) => h.user_id)).toEqual([c.user.id]);
  });

  it("a reassigned booking moves with its host now, and holds no time of the host it was made with", async () => {
    const made = (await bookTeam(team, rr, at("15:00"))).body.data;
    expect(hostIds(made)).toEqual([b.user.id]);
    await ok("rest", a.key, teams.reassign(made.id, { host_id: c.user.id }));
    // B is busy at 16:00, C free: the booking stays with C (its host now), checked and held as C.
    expect((await bookPersonal(b, bOwn, at("16:00"))).status).toBe(201);
    const moved = await reschedule(made.private_key, at("16:00"));
    expect(moved.status).toBe(201);
    expect(hostIds(moved.body.data)).toEqual([c.user.id]);
    expect((await bookPersonal(c, cOwn, at("16:00"))).status).toBe(409);
    // The old time is free again for B too.
    const bOther = await newEvent(b, { slot_duration: "1_hour" });
    expect((await bookPersonal(b, bOther, at("15:00"))).status).toBe(201);
  });
});

describe("rescheduling a collective booking", () => {
  let b: Host;
  let c: Host;
  let team: Json;
  let collective: Json;
  beforeAll(async () => {
    ({ b, c, team, collective } = await collectiveTeam("Panels"));
  });

  it("is refused when any host it holds is busy at the new time, and offers only the times all are free", async () => {
    const made = (await bookTeam(team, collective, at("09:00"))).body.data;
    expect(hostIds(made).sort()).toEqual([b.user.id, c.user.id].sort());
    // The second host is busy at 10:00 (the first host is free).
    expect((await bookPersonal(c, await newEvent(c), at("10:00"))).status).toBe(201);
    expect(await rescheduleSlots(team, collective, made.private_key)).not.toContain(at("10:00"));
    const refused = await reschedule(made.private_key, at("10:00"));
    expect({ status: refused.status, reason: refused.body.data?.reason }).toEqual({ status: 409, reason: "taken" });
    // The first host busy too is refused alike; a time both are free at moves it, holding both.
    const moved = await reschedule(made.private_key, at("10:30"));
    expect(moved.status).toBe(201);
    expect(hostIds(moved.body.data).sort()).toEqual([b.user.id, c.user.id].sort());
  });
});
