// What hangs on a team event besides its reminders (teams.md: everything a personal event does, per host): its bookings list, counts and attendees for the team's owner and admins (a member 403, a stranger 404); the personal event routes stay the owner's own.
import { beforeAll, describe, expect, it } from "vitest";
import { rest, type Json } from "../helpers/api.js";
import { dayFromToday, newHost, utcIso, type Host } from "../helpers/fixtures.js";
import { bookTeam, collectiveTeam, teams } from "../helpers/teams.js";
import { ok } from "../helpers/calls.js";

const DAY = dayFromToday(5);
const at = (time: string) => utcIso(DAY, time);

let a: Host;
let b: Host;
let c: Host;
let stranger: Host;
let team: Json;
let collective: Json;
let roundRobin: Json;

beforeAll(async () => {
  ({ a, b, c, team, collective } = await collectiveTeam("Parts"));
  stranger = await newHost({ timezone: "UTC" });
  roundRobin = await ok("rest", a.key, teams.createEvent(team.id, { name: "Intro", url: "intro", slot_duration: "30_minutes", scheduling: "round_robin", hosts: [{ user_id: b.user.id }, { user_id: c.user.id }] }), 201);
});

describe("a team event's bookings", () => {
  it("list, counts and attendees for the team's owner, every host's bookings; a member 403, a stranger 404", async () => {
    // Round robin at two times at once: the two bookings go to two hosts, each kept under their own account.
    const made = await Promise.all([bookTeam(team, roundRobin, at("09:00"), "one@example.com"), bookTeam(team, roundRobin, at("09:00"), "two@example.com"), bookTeam(team, collective, at("11:00"), "three@example.com")]);
    expect(made.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(new Set(made.slice(0, 2).map((r) => r.body.data.hosts[0].user_id)).size).toBe(2);

    const list = await rest("GET", `/events/${roundRobin.id}/bookings?category=upcoming`, { key: a.key });
    expect([list.status, list.body.message]).toEqual([200, "Bookings found"]);
    expect(list.body.data.records.map((r: Json) => r.id).sort()).toEqual(made.slice(0, 2).map((r) => r.body.data.id).sort());
    const counts = await rest("GET", `/events/${roundRobin.id}/bookings_counts`, { key: a.key });
    expect([counts.status, counts.body.data.upcoming]).toEqual([200, 2]);
    const attendees = await rest("GET", `/events/${roundRobin.id}/attendees`, { key: a.key });
    expect(attendees.status).toBe(200);
    expect(attendees.body.data.map((x: Json) => x.email).sort()).toEqual(["one@example.com", "two@example.com"]);
    const panel = await rest("GET", `/events/${collective.id}/bookings?category=upcoming`, { key: a.key });
    expect(panel.body.data.records.map((r: Json) => r.id)).toEqual([made[2].body.data.id]);

    // A new booking shows at once (the snapshot of the team's event follows its writes).
    const later = await bookTeam(team, roundRobin, at("10:00"), "four@example.com");
    expect(later.status).toBe(201);
    expect((await rest("GET", `/events/${roundRobin.id}/bookings_counts`, { key: a.key })).body.data.upcoming).toBe(3);

    for (const [who, status] of [[b, 403], [stranger, 404]] as const) {
      for (const path of ["bookings", "bookings_counts", "attendees"]) expect((await rest("GET", `/events/${roundRobin.id}/${path}`, { key: who.key })).status, `${path} ${status}`).toBe(status);
    }
    // The personal event routes stay the owner's own (the team's routes change a team event), and nobody books a team event for an attendee there.
    expect((await rest("GET", `/events/${roundRobin.id}`, { key: a.key })).status).toBe(404);
    expect((await rest("DELETE", `/events/${roundRobin.id}`, { key: a.key })).status).toBe(404);
    expect((await rest("POST", `/events/${roundRobin.id}/bookings`, { key: a.key, body: { booking: { start_time: at("13:00"), attendee_name: "Ed", attendee_email: "ed@example.com" } } })).status).toBe(404);
  });
});
