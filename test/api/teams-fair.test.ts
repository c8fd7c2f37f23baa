// teams.md "Fair and fast" through the public API: round robin bookings in a row over three free hosts of equal priority end even, and with weights 200, 100, 100 in the shares 2:1:1. The spec's 300 are checked on the rule itself (test/unit/team.test.ts) and by `npm run bench:teams`; here 60 (600 bookings took 200-450 s of the suite on the embedded database and slowed every later file sharing it).
import { describe, expect, it } from "vitest";
import { rest, type Json } from "../helpers/api.js";
import { newHost, type Host } from "../helpers/bookings.js";
import { ok } from "../helpers/calls.js";
import { teams, teamUrl } from "../helpers/teams.js";

const BOOKINGS = 60;
const HALF_HOUR = 30 * 60_000;

/** A round robin event of three hosts open all day, with these weights; the hosts in weight order. */
async function fairEvent(weights: number[]): Promise<{ team: Json; event: Json; hosts: Host[] }> {
  const hosts = await Promise.all(weights.map(() => newHost({ timezone: "UTC" })));
  const [owner, ...others] = hosts;
  const team = await ok("rest", owner.key, teams.create({ name: "Fair", url: teamUrl("fair"), timezone: "UTC" }), 201);
  await Promise.all(others.map(async (h) => ok("rest", h.key, teams.accept((await ok("rest", owner.key, teams.invite(team.id, { email: h.user.email }), 201)).id))));
  const event = await ok(
    "rest",
    owner.key,
    teams.createEvent(team.id, { name: "Fair", url: "fair", slot_duration: "30_minutes", scheduling: "round_robin", hosts: hosts.map((h, i) => ({ user_id: h.user.id, weight: weights[i] })) }),
    201,
  );
  return { team, event, hosts };
}

/** BOOKINGS bookings one after the other, each of a fresh half hour of next month (one UTC calendar month, as the share counts), every host free; how many each host got. */
async function bookInARow(weights: number[]): Promise<number[]> {
  const { team, event, hosts } = await fairEvent(weights);
  const now = new Date();
  const first = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  const counts = new Map(hosts.map((h) => [h.user.id as string, 0]));
  for (let i = 0; i < BOOKINGS; i++) {
    const booking = { start_time: new Date(first + i * HALF_HOUR).toISOString(), attendee_name: `Booker ${i}`, attendee_email: `booker-${i}@example.com` };
    // A 503 (the loaded database past its deadline: the outcome unknown) is sent again under the same key, as a
    // client would: the booking made, if any, is answered instead of a second one.
    const headers = { "Idempotency-Key": `fair-booking-${team.id}-${i}` };
    let res = await rest("POST", `/public/teams/${team.url}/events/${event.url}/bookings`, { body: { booking }, headers });
    for (let tries = 1; res.status === 503 && tries < 10; tries++) res = await rest("POST", `/public/teams/${team.url}/events/${event.url}/bookings`, { body: { booking }, headers });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const host = res.body.data.hosts[0].user_id as string;
    counts.set(host, (counts.get(host) ?? 0) + 1);
  }
  return hosts.map((h) => counts.get(h.user.id) ?? 0);
}

describe(`round robin is fair over ${BOOKINGS} bookings in a row`, () => {
  it("three hosts of equal weight get a third each", { timeout: 300_000 }, async () => {
    expect(await bookInARow([100, 100, 100])).toEqual([20, 20, 20]);
  });

  it("weights 200, 100, 100 get half, a quarter and a quarter", { timeout: 300_000 }, async () => {
    expect(await bookInARow([200, 100, 100])).toEqual([30, 15, 15]);
  });
});
