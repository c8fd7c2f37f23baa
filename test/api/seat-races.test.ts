// Racing and failing bookings through a fault proxy before the database (booking-kinds.md "Seats", teams.md): a seat whose claim failed goes back at once, and a racer waits for a seat's holder still being written instead of calling the slot full; bursts end as exactly the seats (or hosts) in 201s and the rest 409; a slot with seats of several lengths is busy until its longest ends.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt, useServer, type Json } from "../helpers/api.js";
import { ok } from "../helpers/calls.js";
import { startProxiedService, type DbProxy, type ProxiedService, type SeenCommand } from "../helpers/dbProxy.js";
import { dayFromToday, fixturesAt, utcIso as at, type Host } from "../helpers/fixtures.js";
import type { RunningServer } from "../helpers/server.js";
import { teamOf, teams } from "../helpers/teams.js";
import { until } from "../helpers/wait.js";

let service: ProxiedService;
let proxy: DbProxy;
let server: RunningServer;

beforeAll(async () => {
  service = await startProxiedService();
  ({ proxy, server } = service);
  useServer(server.baseUrl);
}, 120_000);

afterAll(async () => {
  useServer(undefined);
  await service?.close();
});

const fx = () => fixturesAt(server.baseUrl);
const personal = (host: Host, event: Json) => `/api/v1/public/users/${host.user.url}/events/${event.url}/bookings`;
/** "201", or "409 full": the status and the refusal's reason (or message). */
const answerOf = (res: { status: number; body: Json }) => (res.status === 201 ? "201" : `${res.status} ${res.body.data?.reason ?? res.body.message}`);
const post = (path: string, start: string, n: number, extra: Json = {}) =>
  restAt(server.baseUrl, "POST", path, { body: { booking: { start_time: start, attendee_name: `Racer ${n}`, attendee_email: `racer-${n}@example.com`, ...extra } } });
/** `n` bookings of `start` at once, their answers sorted. */
const burst = async (path: string, start: string, n = 8) => (await Promise.all(Array.from({ length: n }, (_, i) => post(path, start, i)))).map(answerOf).sort();

async function slotsOf(host: Host, event: Json, day: string): Promise<{ start_time: string; seats_left?: number }[]> {
  const res = await restAt(server.baseUrl, "GET", `/api/v1/public/users/${host.user.url}/events/${event.url}/slots?date_from=${day}&date_to=${day}&timezone=UTC`);
  expect(res.status).toBe(200);
  return res.body.data.slots;
}

/** The insert of a seat key of the slot starting at `start` (cells.ts claimSeat). */
const seatInsertAt = (start: string) => (c: SeenCommand) =>
  c.name === "insert" && c.collection === "booking_cells" && c.items.some((d) => typeof d.key === "string" && d.key.startsWith("T:") && d.key.includes(`:${Date.parse(start)}:`));
/** The insert of the booking of `email`. */
const bookingInsertOf = (email: string) => (c: SeenCommand) => c.name === "insert" && c.collection === "bookings" && c.items.some((d) => d.attendee_email === email);
/** A database that gave up on the command (maxTimeMS): what a saturated database answers. */
const MAX_TIME = { code: 50, codeName: "MaxTimeMSExpired", errmsg: "operation exceeded time limit" };

describe("seats under racing and failing bookings", () => {
  it("a seat whose claim failed after it was written goes back at once: the slot's seats are all bookable", async () => {
    const host = await fx().newHost({ timezone: "UTC" });
    const event = await fx().newEvent(host, { name: "Class", seats_per_slot: 3 });
    const day = dayFromToday(3);
    const start = at(day, "10:00");
    // The seat key lands, but the answer says the database gave up: the booking answers 503 and is never written.
    const failed = proxy.failNext(seatInsertAt(start), MAX_TIME, { applied: true });
    const first = await post(personal(host, event), start, 0);
    await failed;
    expect(answerOf(first)).toBe("503 service unavailable");
    expect((await slotsOf(host, event, day)).find((s) => s.start_time === start)?.seats_left).toBe(3);
    // All three seats can be taken: the failed claim's key does not hold one for the 2-minute grace (the third was `409 full`).
    expect([answerOf(await post(personal(host, event), start, 1)), answerOf(await post(personal(host, event), start, 2)), answerOf(await post(personal(host, event), start, 3))]).toEqual(["201", "201", "201"]);
    expect(answerOf(await post(personal(host, event), start, 4))).toBe("409 full");
  }, 60_000);

  it("a racer finding every seat held waits for a holder still being written: when that booking fails, the racer gets its seat", async () => {
    const host = await fx().newHost({ timezone: "UTC" });
    const event = await fx().newEvent(host, { name: "Class", seats_per_slot: 3 });
    const day = dayFromToday(4);
    const start = at(day, "10:00");
    expect(answerOf(await post(personal(host, event), start, 1))).toBe("201");
    expect(answerOf(await post(personal(host, event), start, 2))).toBe("201");
    // The third holds the last seat; its booking's insert waits in the proxy.
    const hold = proxy.holdNext(bookingInsertOf("racer-3@example.com"));
    const third = post(personal(host, event), start, 3);
    await hold.held;
    let fourthAnswered: string | undefined;
    const fourth = post(personal(host, event), start, 4).then((res) => (fourthAnswered = answerOf(res)));
    // The fourth has found the seats all held (its read of the seat keys came after the hold).
    const seen = proxy.commands().length;
    await until("the fourth reads the seats", async () => proxy.commands().slice(seen).some((c) => c.name === "find" && c.collection === "booking_cells"), { timeoutMs: 10_000, everyMs: 20 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fourthAnswered, "answered while a seat's holder was still being written").toBeUndefined();
    // The third's booking fails: its seat goes back, and the fourth takes it.
    hold.release(MAX_TIME);
    expect(answerOf(await third)).toBe("503 service unavailable");
    await fourth;
    expect(fourthAnswered).toBe("201");
    expect(answerOf(await post(personal(host, event), start, 5))).toBe("409 full");
  }, 60_000);

  it("of 8 racing bookings of a 3-seat slot exactly 3 win and 5 are 409 full; nothing stays held", async () => {
    const host = await fx().newHost({ timezone: "UTC" });
    const event = await fx().newEvent(host, { name: "Class", seats_per_slot: 3 });
    for (const d of [5, 6, 7]) {
      const day = dayFromToday(d);
      const start = at(day, "10:00");
      expect(await burst(personal(host, event), start)).toEqual(["201", "201", "201", "409 full", "409 full", "409 full", "409 full", "409 full"]);
      expect((await slotsOf(host, event, day)).find((s) => s.start_time === start)).toBeUndefined();
    }
  }, 120_000);

  it("8 racing bookings of one host's slot: one 201, seven 409 taken; of a 3-host round robin slot: three 201, five 409 taken", async () => {
    const host = await fx().newHost({ timezone: "UTC" });
    const event = await fx().newEvent(host, { name: "One to one" });
    const [a, b, c] = await Promise.all([fx().newHost({ timezone: "UTC" }), fx().newHost({ timezone: "UTC" }), fx().newHost({ timezone: "UTC" })]);
    const team = await teamOf(a, [b, c]);
    const rr = await ok("rest", a.key, teams.createEvent(team.id, { name: "Intro", url: "intro", slot_duration: "30_minutes", scheduling: "round_robin", hosts: [a, b, c].map((h) => ({ user_id: h.user.id })) }), 201);
    const start = at(dayFromToday(8), "10:00");
    expect(await burst(personal(host, event), start)).toEqual(["201", ...Array(7).fill("409 taken")]);
    const answers = await burst(`/api/v1/public/teams/${team.url}/events/${rr.url}/bookings`, start);
    expect(answers).toEqual(["201", "201", "201", ...Array(5).fill("409 taken")]);
  }, 120_000);

  it("a slot whose seats differ in length is busy until its longest seat ends: 09:30 is not offered inside a 09:00-10:00 seat", async () => {
    const host = await fx().newHost({ timezone: "UTC" });
    const event = await fx().newEvent(host, { name: "Lengths", slot_duration: undefined, durations: [30, 60], seats_per_slot: 3 });
    const day = dayFromToday(9);
    expect(answerOf(await post(personal(host, event), at(day, "09:00"), 1, { duration_minutes: 30 }))).toBe("201");
    expect(answerOf(await post(personal(host, event), at(day, "09:00"), 2, { duration_minutes: 60 }))).toBe("201");
    const slots = await slotsOf(host, event, day);
    expect(slots.find((s) => s.start_time === at(day, "09:00"))?.seats_left).toBe(1);
    expect(slots.find((s) => s.start_time === at(day, "09:30"))).toBeUndefined();
    expect(slots.find((s) => s.start_time === at(day, "10:00"))?.seats_left).toBe(3);
    expect(answerOf(await post(personal(host, event), at(day, "09:30"), 3, { duration_minutes: 30 }))).toBe("409 taken");
    expect(answerOf(await post(personal(host, event), at(day, "10:00"), 4, { duration_minutes: 30 }))).toBe("201");
  }, 60_000);
});
