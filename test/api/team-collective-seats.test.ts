// Seats on collective team events (booking-kinds.md "Seats", teams.md, docs/teams.md "Seats"): the slots show seats_left; of racing bookings exactly the seats win and the rest are 409 full; each seat holds every host, whose other events are blocked then; a cancel frees one seat; a seat rescheduled moves alone; a full slot is not offered.
import { beforeAll, describe, expect, it } from "vitest";
import { rest, type Json } from "../helpers/api.js";
import { dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { ok } from "../helpers/calls.js";
import { bookPersonal, bookTeam, teamOf, teams } from "../helpers/teams.js";

const DAY = dayFromToday(5);
const at = (time: string) => utcIso(DAY, time);

/** "201", or "409 full": the status and the refusal's reason (or message). */
const answerOf = (res: { status: number; body: Json }) => (res.status === 201 ? "201" : `${res.status} ${res.body.data?.reason ?? res.body.message}`);

const slotsOf = async (path: string): Promise<{ start_time: string; seats_left?: number }[]> => {
  const res = await rest("GET", `${path}/slots?date_from=${DAY}&date_to=${DAY}&timezone=UTC`);
  expect(res.status).toBe(200);
  return res.body.data.slots;
};

describe("seats on a collective team event", () => {
  let a: Host;
  let b: Host;
  let c: Host;
  let team: Json;
  let panel: Json;
  let teamPath: string;
  beforeAll(async () => {
    [a, b, c] = await Promise.all([newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" })]);
    team = await teamOf(a, [b, c]);
    panel = await ok(
      "rest",
      a.key,
      teams.createEvent(team.id, { name: "Panel", url: "panel", slot_duration: "30_minutes", scheduling: "collective", seats_per_slot: 3, hosts: [{ user_id: b.user.id }, { user_id: c.user.id }] }),
      201,
    );
    teamPath = `/public/teams/${team.url}/events/${panel.url}`;
  });

  it("slots show seats_left; of 6 racing bookings of a 3-seat slot exactly 3 win, the rest are 409 full; every host's other events are blocked then; a full slot is not offered", async () => {
    const start = at("10:00");
    expect((await slotsOf(teamPath)).find((s) => s.start_time === start)?.seats_left).toBe(3);
    const personalB = await newEvent(b, { name: "B's own" });
    const personalC = await newEvent(c, { name: "C's own" });
    const personalSlots = async (h: Host, event: Json) => (await slotsOf(`/public/users/${h.user.url}/events/${event.url}`)).map((s) => s.start_time);
    expect(await personalSlots(b, personalB)).toContain(start);

    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => bookTeam(team, panel, start, `racer-${i}@example.com`)));
    expect(answers.map(answerOf).sort()).toEqual(["201", "201", "201", "409 full", "409 full", "409 full"]);
    // Each seat is its own booking, with its own key, holding both hosts as a collective booking does.
    const won = answers.filter((r) => r.status === 201).map((r) => r.body.data);
    expect(new Set(won.map((w: Json) => w.private_key)).size).toBe(3);
    for (const w of won) expect((w.hosts as Json[]).map((h) => h.user_id).sort()).toEqual([b.user.id, c.user.id].sort());

    expect((await slotsOf(teamPath)).map((s) => s.start_time)).not.toContain(start);
    expect(await personalSlots(b, personalB)).not.toContain(start);
    expect(await personalSlots(c, personalC)).not.toContain(start);
    expect(answerOf(await bookPersonal(b, personalB, start))).toBe("409 taken");
    expect(answerOf(await bookTeam(team, panel, start, "late@example.com"))).toBe("409 full");
  }, 60_000);

  it("seats fill one by one; a cancel frees one seat, which another booking wins", async () => {
    const start = at("13:00");
    const first = await bookTeam(team, panel, start, "one@example.com");
    expect(answerOf(first)).toBe("201");
    expect((await slotsOf(teamPath)).find((s) => s.start_time === start)?.seats_left).toBe(2);
    expect(answerOf(await bookTeam(team, panel, start, "two@example.com"))).toBe("201");
    expect(answerOf(await bookTeam(team, panel, start, "three@example.com"))).toBe("201");
    expect((await slotsOf(teamPath)).map((s) => s.start_time)).not.toContain(start);

    expect((await rest("POST", `/public/bookings/${first.body.data.private_key}/cancel`, { body: { booking: {} } })).status).toBe(200);
    expect((await slotsOf(teamPath)).find((s) => s.start_time === start)?.seats_left).toBe(1);
    expect(answerOf(await bookTeam(team, panel, start, "four@example.com"))).toBe("201");
    expect(answerOf(await bookTeam(team, panel, start, "five@example.com"))).toBe("409 full");
  }, 60_000);
  it("a seat rescheduled moves alone, taking a seat of the new slot with every host", async () => {
    const [from, to] = [at("15:00"), at("16:00")];
    const first = await bookTeam(team, panel, from, "six@example.com");
    expect(answerOf(await bookTeam(team, panel, from, "seven@example.com"))).toBe("201");
    const moved = await rest("POST", `/public/bookings/${first.body.data.private_key}/reschedule`, { body: { booking: { start_time: to } } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(201);
    const slots = await slotsOf(teamPath);
    expect(slots.find((s) => s.start_time === from)?.seats_left).toBe(2);
    expect(slots.find((s) => s.start_time === to)?.seats_left).toBe(2);
    const own = await newEvent(c, { name: "C's other" });
    expect(answerOf(await bookPersonal(c, own, to))).toBe("409 taken");
    expect(answerOf(await bookTeam(team, panel, to, "eight@example.com"))).toBe("201");
  }, 60_000);
});
