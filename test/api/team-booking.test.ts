// Public booking of team events (teams.md): round robin slots are the union of the hosts' own free times, collective the intersection; a booking goes to the highest priority, then the weighted share, and two bookings of one slot at once get two different hosts; a collective booking holds every host; removed members are not picked; the attendee's view of a team booking names its hosts as the booking's answer did.
import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { PublicTeamBookingService } from "../../gen/scheduling/v1/public_team_pb.js";
import { rest, type Json } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, publicCalls, utcIso, type Host } from "../helpers/bookings.js";
import { invoke, ok, type Protocol } from "../helpers/calls.js";
import { bookTeam, teamOf, teams } from "../helpers/teams.js";

const DAY = dayFromToday(3);
const at = (time: string) => utcIso(DAY, time);

const teamEvent = (owner: Host, team: Json, scheduling: string, hosts: Json[], url = `e${Math.random().toString(36).slice(2, 8)}`) =>
  ok("rest", owner.key, teams.createEvent(team.id, { name: "Demo", url, slot_duration: "30_minutes", scheduling, hosts }), 201);

const slotsOf = async (team: Json, event: Json): Promise<string[]> => {
  const res = await rest("GET", `/public/teams/${team.url}/events/${event.url}/slots?date_from=${DAY}&date_to=${DAY}&timezone=UTC`);
  expect(res.status).toBe(200);
  return res.body.data.slots.map((s: Json) => s.start_time);
};

describe("public team booking", () => {
  let a: Host;
  let b: Host;
  let c: Host;
  let team: Json;
  beforeAll(async () => {
    [a, b, c] = await Promise.all([newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" })]);
    team = await teamOf(a, [b, c]);
    // A's own meeting at 14:00 (a personal event) blocks A in every team event.
    await book(a, await newEvent(a), { start_time: at("14:00") });
  });

  it("round robin offers a time any host is free; collective only when every host is", async () => {
    const rr = await teamEvent(a, team, "round_robin", [{ user_id: a.user.id }, { user_id: b.user.id }]);
    const co = await teamEvent(a, team, "collective", [{ user_id: a.user.id }, { user_id: b.user.id }]);
    expect(await slotsOf(team, rr)).toContain(at("14:00"));
    const collective = await slotsOf(team, co);
    expect(collective).not.toContain(at("14:00"));
    expect(collective).toContain(at("14:30"));
    // The page's reads: the team and its event.
    const page = await rest("GET", `/public/teams/${team.url}`);
    expect(page.body).toMatchObject({ message: "team found", data: { name: "Sales", url: team.url } });
    expect(page.body.data.events.map((e: Json) => e.url)).toEqual(expect.arrayContaining([rr.url, co.url]));
    expect((await rest("GET", `/public/teams/${team.url}/events/${rr.url}`)).body.data.name).toBe("Demo");
    expect((await rest("GET", `/public/teams/${team.url}/events/nope`)).status).toBe(404);
  });

  it("gives a booking to the highest priority free host, with hosts and assignment_reason", async () => {
    const rr = await teamEvent(a, team, "round_robin", [{ user_id: a.user.id, priority: 2 }, { user_id: b.user.id, priority: 4 }, { user_id: c.user.id, priority: 2 }]);
    const first = await bookTeam(team, rr, at("09:00"));
    expect(first.status).toBe(201);
    expect(first.body.data).toMatchObject({ hosts: [{ user_id: b.user.id, full_name: b.user.full_name, email: b.user.email }], assignment_reason: "priority 4, 0 of 0 bookings this month", team: { id: team.id, url: team.url } });
    // The host sees it among their bookings.
    const own = await rest("GET", `/bookings/${first.body.data.id}`, { key: b.key });
    expect(own.status).toBe(200);
    // 14:00: A is busy, B has priority; once B holds 14:00 as well, C is next over A (who is not free).
    expect((await bookTeam(team, rr, at("14:00"))).body.data.hosts[0].user_id).toBe(b.user.id);
    expect((await bookTeam(team, rr, at("14:00"))).body.data.hosts[0].user_id).toBe(c.user.id);
    const none = await bookTeam(team, rr, at("14:00"));
    expect({ status: none.status, message: none.body.message, data: none.body.data }).toEqual({ status: 409, message: "slot is not available", data: { reason: "taken" } });
  });

  it("two bookings of one slot at once get two different free hosts; a third is refused", async () => {
    const rr = await teamEvent(a, team, "round_robin", [{ user_id: b.user.id }, { user_id: c.user.id }]);
    const answers = await Promise.all([bookTeam(team, rr, at("16:00"), "x@example.com"), bookTeam(team, rr, at("16:00"), "y@example.com")]);
    expect(answers.map((r) => r.status)).toEqual([201, 201]);
    expect(answers.map((r) => r.body.data.hosts[0].user_id).sort()).toEqual([b.user.id, c.user.id].sort());
    expect((await bookTeam(team, rr, at("16:00"), "z@example.com")).status).toBe(409);
  });

  it("equal hosts share the month evenly; over RPC too", async () => {
    const rr = await teamEvent(a, team, "round_robin", [{ user_id: b.user.id }, { user_id: c.user.id }]);
    const hosts: string[] = [];
    for (const time of ["10:00", "10:30", "11:00", "11:30"]) {
      const made = await invoke("grpc", undefined, {
        service: PublicTeamBookingService, rpc: "createTeamBooking",
        request: { team_url: team.url, event_url: rr.url, booking: { start_time: at(time), attendee_name: "Ada", attendee_email: "ada@example.com" } },
        rest: { method: "POST", path: "" }, pick: "booking",
      });
      expect(made.ok).toBe(true);
      hosts.push(made.data.hosts[0].user_id);
    }
    expect(hosts.filter((h) => h === b.user.id)).toHaveLength(2);
    expect(hosts.filter((h) => h === c.user.id)).toHaveLength(2);
    const taken = await invoke("grpc", undefined, {
      service: PublicTeamBookingService, rpc: "createTeamBooking",
      request: { team_url: team.url, event_url: "missing", booking: { start_time: at("12:00"), attendee_name: "Ada", attendee_email: "ada@example.com" } },
      rest: { method: "POST", path: "" },
    });
    expect(taken.code).toBe(Code.NotFound);
  });

  it("a collective booking holds every host: each host's time is taken", async () => {
    const co = await teamEvent(a, team, "collective", [{ user_id: b.user.id }, { user_id: c.user.id }]);
    const made = await bookTeam(team, co, at("17:00"));
    expect(made.status).toBe(201);
    expect(made.body.data.hosts.map((h: Json) => h.user_id).sort()).toEqual([b.user.id, c.user.id].sort());
    // C's own event cannot be booked then: the team booking holds C's cells too.
    const own = await rest("POST", `/public/users/${c.user.url}/events/${(await newEvent(c)).url}/bookings`, { body: { booking: { start_time: at("17:00"), attendee_name: "Bo", attendee_email: "bo@example.com" } } });
    expect(own.status).toBe(409);
    expect(await slotsOf(team, co)).not.toContain(at("17:00"));
  });

  it("a removed member is no longer picked", async () => {
    const d = await newHost({ timezone: "UTC" });
    const invited = await ok("rest", a.key, teams.invite(team.id, { email: d.user.email }), 201);
    await ok("rest", d.key, teams.accept(invited.id));
    const rr = await teamEvent(a, team, "round_robin", [{ user_id: a.user.id, priority: 0 }, { user_id: d.user.id, priority: 4 }]);
    expect((await bookTeam(team, rr, at("18:00"))).body.data.hosts[0].user_id).toBe(d.user.id);
    await ok("rest", d.key, teams.removeMember(team.id, invited.id));
    expect((await bookTeam(team, rr, at("18:30"))).body.data.hosts[0].user_id).toBe(a.user.id);
  });

  it("the month's bookings a share is of count those of a host who left: they are the event's bookings", async () => {
    const d = await newHost({ timezone: "UTC" });
    const invited = await ok("rest", a.key, teams.invite(team.id, { email: d.user.email }), 201);
    await ok("rest", d.key, teams.accept(invited.id));
    const hosts = (priorities: number[]) => [a, b, d].map((h, i) => ({ user_id: h.user.id, weight: [300, 100, 100][i], priority: priorities[i] }));
    const rr = await teamEvent(a, team, "round_robin", hosts([0, 0, 4]));
    for (const time of ["19:00", "19:30", "20:00", "20:30"]) expect((await bookTeam(team, rr, at(time))).body.data.hosts[0].user_id).toBe(d.user.id);
    await ok("rest", a.key, teams.updateEvent(team.id, rr.id, { hosts: hosts([4, 0, 0]) }));
    expect((await bookTeam(team, rr, at("21:00"))).body.data.hosts[0].user_id).toBe(a.user.id);
    await ok("rest", a.key, teams.updateEvent(team.id, rr.id, { hosts: hosts([2, 2, 2]) }));
    await ok("rest", d.key, teams.removeMember(team.id, invited.id));
    // Five bookings this month: A's share is 300/500 x 5 = 3 (holds 1, 2 below), B's 1 (holds 0, 1 below). Counting
    // only the hosts still there (1 booking) would put B below and A above.
    const next = await bookTeam(team, rr, at("21:30"));
    expect({ host: next.body.data.hosts[0].user_id, reason: next.body.data.assignment_reason }).toEqual({ host: a.user.id, reason: expect.stringContaining("1 of 5") });
  });

  /** GET /api/v1/public/bookings/<private_key>, or its RPC PublicBookingService.GetBooking over `protocol`. */
  const viewOf = async (protocol: Protocol, privateKey: string): Promise<Json> => {
    const found = await invoke(protocol, undefined, publicCalls.get(privateKey));
    expect(found.ok).toBe(true);
    return found.data;
  };

  it("the attendee's view, round robin: the hosts and assignment_reason of the booking's answer, over REST and RPC; after a reassign, the host it has now", async () => {
    const rr = await teamEvent(a, team, "round_robin", [{ user_id: b.user.id, priority: 4 }, { user_id: c.user.id }]);
    const made = await bookTeam(team, rr, at("12:30"));
    expect(made.status).toBe(201);
    const { hosts, assignment_reason, private_key } = made.body.data;
    expect(hosts).toEqual([{ user_id: b.user.id, full_name: b.user.full_name, email: b.user.email }]);
    for (const protocol of ["rest", "grpc", "connect-h2"] as const) expect(await viewOf(protocol, private_key)).toMatchObject({ hosts, assignment_reason, team: { id: team.id } });
    await ok("rest", a.key, teams.reassign(made.body.data.id, { host_id: c.user.id }));
    expect(await viewOf("rest", private_key)).toMatchObject({ hosts: [{ user_id: c.user.id, full_name: c.user.full_name, email: c.user.email }], assignment_reason: "reassigned by the team" });
  });

  it("the attendee's view, collective: every host, as the booking's answer; a personal booking's view names none", async () => {
    const co = await teamEvent(a, team, "collective", [{ user_id: b.user.id }, { user_id: c.user.id }]);
    const made = await bookTeam(team, co, at("13:00"));
    expect(made.status).toBe(201);
    expect(made.body.data.hosts).toHaveLength(2);
    for (const protocol of ["rest", "grpc"] as const) expect((await viewOf(protocol, made.body.data.private_key)).hosts).toEqual(made.body.data.hosts);
    const personal = await book(a, await newEvent(a), { start_time: at("15:30") });
    expect((await viewOf("rest", personal.private_key)).hosts ?? []).toEqual([]);
  });
});
