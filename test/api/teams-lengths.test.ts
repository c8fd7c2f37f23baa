// A team event's lengths (booking-kinds.md "Several lengths", teams.md): its slots answer for the `duration` asked, one of its `durations` (else 422), and a booking of a chosen length holds its host for that long.
import { beforeAll, describe, expect, it } from "vitest";
import { rest, type Json } from "../helpers/api.js";
import { dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { ok } from "../helpers/calls.js";
import { bookPersonal, teamOf, teams } from "../helpers/teams.js";

const DAY = dayFromToday(6);
const at = (time: string) => utcIso(DAY, time);
const MINUTE = 60_000;

describe("a team event of several lengths", () => {
  let a: Host;
  let b: Host;
  let team: Json;
  let rr: Json;
  beforeAll(async () => {
    [a, b] = await Promise.all([newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" })]);
    team = await teamOf(a, [b], "Lengths");
    rr = await ok("rest", a.key, teams.createEvent(team.id, { name: "Talk", url: "talk", durations: [30, 60], scheduling: "round_robin", hosts: [{ user_id: b.user.id }] }), 201);
    expect(rr.durations).toEqual([30, 60]);
  });

  const slots = (query: string) => rest("GET", `/public/teams/${team.url}/events/${rr.url}/slots?date_from=${DAY}&date_to=${DAY}&timezone=UTC${query}`);
  const lengths = (list: Json[]) => [...new Set(list.map((s) => (Date.parse(s.end_time) - Date.parse(s.start_time)) / MINUTE))];

  it("lists the slots of the length asked: the first by default, 60 minutes when asked, and 422 for one it does not offer", async () => {
    const first = await slots("");
    expect(first.status).toBe(200);
    expect(lengths(first.body.data.slots)).toEqual([30]);
    expect(first.body.data.slots.map((s: Json) => s.start_time)).toContain(at("09:30"));
    const hour = await slots("&duration=60");
    expect(hour.status).toBe(200);
    expect(lengths(hour.body.data.slots)).toEqual([60]);
    const starts = hour.body.data.slots.map((s: Json) => s.start_time);
    expect(starts).toContain(at("09:00"));
    expect(starts).not.toContain(at("09:30"));
    for (const duration of ["45", "abc"]) {
      const refused = await slots(`&duration=${duration}`);
      expect({ duration, status: refused.status, message: refused.body.message }).toEqual({ duration, status: 422, message: "duration is not one of the event's durations" });
    }
  });

  it("books the length chosen, which holds the host for all of it", async () => {
    const made = await rest("POST", `/public/teams/${team.url}/events/${rr.url}/bookings`, { body: { booking: { start_time: at("10:00"), duration_minutes: 60, attendee_name: "Ada", attendee_email: "ada@example.com" } } });
    expect(made.status).toBe(201);
    expect(made.body.data).toMatchObject({ start_time: at("10:00"), end_time: at("11:00"), duration_minutes: 60 });
    const own = await newEvent(b);
    expect((await bookPersonal(b, own, at("10:30"))).status).toBe(409);
    expect((await slots("&duration=60")).body.data.slots.map((s: Json) => s.start_time)).not.toContain(at("10:00"));
  });
});
