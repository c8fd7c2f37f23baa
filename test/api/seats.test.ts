// Seats (booking-kinds.md "Seats"): seats_per_slot on events, seats_left in slots, exactly N winners of a slot under racing bookings over three replicas of one database (REST and gRPC at once), a freed seat, a seat's slot blocking the host's other events.
import { Code, ConnectError } from "@connectrpc/connect";
import mongoose from "mongoose";
import { describe, expect, it } from "vitest";
import { EventService } from "../../gen/scheduling/v1/event_pb.js";
import { PublicBookingService } from "../../gen/scheduling/v1/public_booking_pb.js";
import { restAt, type Json } from "../helpers/api.js";
import { addDays } from "../../src/domain/timezones.js";
import { dayFromToday, fixturesAt, utcIso as at, type Host } from "../helpers/fixtures.js";
import { unaryAt } from "../helpers/grpcAt.js";
import { useReplicas } from "../helpers/replicas.js";

// Fifty different bookers from one test address: the abuse caps are not what is tested here.
const cluster = useReplicas(3, { BOOKING_LIMIT_NEW_BOOKERS_PER_ADDRESS: "1000", BOOKING_LIMIT_PER_HOST: "1000", RATE_LIMIT_PUBLIC_PER_IP: "10000" });

interface Answer {
  ok: boolean;
  /** "409 full" (REST status and data.reason) or the RPC code and message. */
  refusal?: string;
  privateKey?: string;
}

/** One booking through replica `r` over REST or gRPC, by booker `n`. */
async function attempt(r: number, protocol: "rest" | "grpc", host: Host, event: Json, start: string, n: number): Promise<Answer> {
  const attendee = { name: `Seat ${n}`, email: `seat-${n}@example.com` };
  if (protocol === "rest") {
    const path = `/api/v1/public/users/${host.user.url}/events/${event.url}/bookings`;
    const res = await restAt(cluster.servers[r].baseUrl, "POST", path, { body: { booking: { start_time: start, attendee_name: attendee.name, attendee_email: attendee.email } } });
    return res.status === 201 ? { ok: true, privateKey: res.body.data.private_key } : { ok: false, refusal: `${res.status} ${res.body.data?.reason ?? res.body.message}` };
  }
  try {
    const answer = await unaryAt(cluster.grpc[r], PublicBookingService.method.createBooking, {
      userUrl: host.user.url,
      eventUrl: event.url,
      booking: { startTime: start, attendeeName: attendee.name, attendeeEmail: attendee.email },
    });
    return { ok: true, privateKey: answer.booking?.privateKey };
  } catch (err) {
    const e = ConnectError.from(err);
    return { ok: false, refusal: `${Code[e.code]} ${decodeURIComponent(e.rawMessage)}` };
  }
}

const WAYS = [
  [0, "rest"],
  [1, "grpc"],
  [2, "rest"],
  [0, "grpc"],
  [1, "rest"],
  [2, "grpc"],
] as const;

const FULL = ["409 full", "FailedPrecondition slot is not available: full"];
/** Fifty racing bookings over three replicas, on a machine the whole suite shares. */
const SLOW = 120_000;

/** A database deadline missed on the loaded machine: 503, nothing written. */
const isUnavailable = (a: Answer) => /^(503 |Unavailable )/.test(a.refusal ?? "");

async function seatedOn(eventId: string, start: string): Promise<number> {
  return cluster.direct.collection("bookings").countDocuments({ event_id: new mongoose.Types.ObjectId(eventId), status: "confirmed", start_time: new Date(start) });
}

async function slotsOf(r: number, host: Host, event: Json, day: string): Promise<{ start_time: string; seats_left?: number }[]> {
  const res = await restAt(cluster.servers[r].baseUrl, "GET", `/api/v1/public/users/${host.user.url}/events/${event.url}/slots?date_from=${day}&date_to=${day}&timezone=UTC`);
  expect(res.status).toBe(200);
  return res.body.data.slots;
}

describe("seats", () => {
  it("of 50 racing bookings of a 10-seat slot over 3 replicas, REST and gRPC, exactly 10 win; the rest are 409 full", async () => {
    const fx = fixturesAt(cluster.servers[0].baseUrl);
    const host = await fx.newHost({ timezone: "UTC" });
    const event = await fx.newEvent(host, { name: "Class", seats_per_slot: 10 });
    expect(event.seats_per_slot).toBe(10);
    const day = dayFromToday(5);
    const start = at(day, "10:00");
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => attempt(WAYS[i % 6][0], WAYS[i % 6][1], host, event, start, i)));
    const won = answers.filter((a) => a.ok).length;
    expect(won, JSON.stringify(answers)).toBeLessThanOrEqual(10);
    for (const a of answers.filter((x) => !x.ok && !isUnavailable(x))) expect(FULL, JSON.stringify(answers)).toContain(a.refusal);
    // A 503 is an answer lost on the way (the machine is loaded): its booking may stand, or not.
    const seated = await seatedOn(event.id, start);
    expect(seated).toBeGreaterThanOrEqual(won);
    expect(seated).toBeLessThanOrEqual(won + answers.filter(isUnavailable).length);
    // The seats those left free are taken one by one, and not one more.
    for (let n = 100; (await seatedOn(event.id, start)) < 10 && n < 140; n++) await attempt(n % 3, "rest", host, event, start, n);
    expect(await seatedOn(event.id, start)).toBe(10);
    expect(FULL).toContain((await attempt(2, "grpc", host, event, start, 200)).refusal);
    expect(FULL).toContain((await attempt(1, "rest", host, event, start, 201)).refusal);
    for (const r of [0, 1, 2]) expect((await slotsOf(r, host, event, day)).find((s) => s.start_time === start)).toBeUndefined();
  }, SLOW);

  it("slots show seats_left; a canceled seat frees one seat; the seated slot blocks the host's other events", async () => {
    const fx = fixturesAt(cluster.servers[1].baseUrl);
    const host = await fx.newHost({ timezone: "UTC" });
    const event = await fx.newEvent(host, { name: "Workshop", seats_per_slot: 3, show_attendees_to_attendees: true });
    const other = await fx.newEvent(host, { name: "One to one", slot_duration: "15_minutes" });
    const day = dayFromToday(6);
    const start = at(day, "09:00");
    const before = await slotsOf(0, host, event, day);
    expect(before.find((s) => s.start_time === start)?.seats_left).toBe(3);
    const first = await attempt(0, "rest", host, event, start, 1);
    const second = await attempt(1, "grpc", host, event, start, 2);
    expect(first.ok && second.ok).toBe(true);
    for (const r of [0, 1, 2]) expect((await slotsOf(r, host, event, day)).find((s) => s.start_time === start)?.seats_left).toBe(1);
    // The seated slot is the host's time like any booking: another event cannot take it, and 09:15 of this one neither.
    expect((await attempt(2, "rest", host, other, start, 3)).refusal).toBe("409 taken");
    expect((await attempt(2, "rest", host, other, at(day, "09:15"), 3)).refusal).toBe("409 taken");
    expect((await attempt(0, "rest", host, event, at(day, "09:15"), 3)).refusal).toBe("409 not_on_the_grid");
    // An unseated slot of the event right after is untouched.
    expect((await slotsOf(2, host, event, day)).find((s) => s.start_time === at(day, "09:30"))?.seats_left).toBe(3);

    const third = await attempt(2, "rest", host, event, start, 4);
    expect(third.ok).toBe(true);
    expect((await attempt(0, "rest", host, event, start, 5)).refusal).toBe("409 full");
    const canceled = await restAt(cluster.servers[0].baseUrl, "POST", `/api/v1/public/bookings/${second.privateKey}/cancel`, { body: { booking: { reason: "cannot come" } } });
    expect(canceled.status).toBe(200);
    expect((await slotsOf(1, host, event, day)).find((s) => s.start_time === start)?.seats_left).toBe(1);
    expect((await attempt(1, "grpc", host, event, start, 6)).ok).toBe(true);
    expect((await attempt(2, "grpc", host, event, start, 7)).refusal).toBe("FailedPrecondition slot is not available: full");

    // Every seat canceled: the slot is free again for any event of the host.
    const seats = await cluster.direct.collection("bookings").find({ event_id: new mongoose.Types.ObjectId(event.id), status: "confirmed" }).toArray();
    for (const s of seats) {
      const res = await restAt(cluster.servers[2].baseUrl, "POST", `/api/v1/bookings/${s._id.toHexString()}/cancel`, { key: host.key, body: { booking: {} } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    expect((await attempt(0, "rest", host, other, start, 8)).ok).toBe(true);
  }, SLOW);

  it("a seat's booker sees the others' names only when the event shows attendees to attendees: the public booking and the manage page", async () => {
    const fx = fixturesAt(cluster.servers[0].baseUrl);
    const host = await fx.newHost({ timezone: "UTC" });
    const shown = await fx.newEvent(host, { name: "Open class", seats_per_slot: 4, show_attendees_to_attendees: true });
    const hidden = await fx.newEvent(host, { name: "Quiet class", seats_per_slot: 4 });
    const day = dayFromToday(8);
    const [a, b, c] = [await attempt(0, "rest", host, shown, at(day, "09:00"), 11), await attempt(1, "grpc", host, shown, at(day, "09:00"), 12), await attempt(2, "rest", host, shown, at(day, "09:00"), 13)];
    const [x, y] = [await attempt(0, "rest", host, hidden, at(day, "11:00"), 14), await attempt(1, "rest", host, hidden, at(day, "11:00"), 15)];
    const others = async (key: string | undefined) => {
      const res = await restAt(cluster.servers[1].baseUrl, "GET", `/api/v1/public/bookings/${key}`);
      expect(res.status).toBe(200);
      return res.body.data.other_attendee_names ?? [];
    };
    expect(await others(a.privateKey)).toEqual(["Seat 12", "Seat 13"]);
    expect(await others(b.privateKey)).toEqual(["Seat 11", "Seat 13"]);
    const rpc = await unaryAt(cluster.grpc[2], PublicBookingService.method.getBooking, { privateKey: c.privateKey! });
    expect(rpc.booking?.otherAttendeeNames).toEqual(["Seat 11", "Seat 12"]);
    expect(await others(x.privateKey)).toEqual([]);
    expect(await others(y.privateKey)).toEqual([]);
    const page = await fetch(`${cluster.servers[2].baseUrl}/booking/${a.privateKey}?locale=en`).then((r) => r.text());
    expect(page).toContain("Also attending");
    expect(page).toMatch(/data-other-attendees>Seat 12, Seat 13</);
    const quiet = await fetch(`${cluster.servers[2].baseUrl}/booking/${x.privateKey}?locale=en`).then((r) => r.text());
    expect(quiet).not.toContain("Seat 15");
    // A canceled seat leaves the others' lists, and sees none itself.
    expect((await restAt(cluster.servers[0].baseUrl, "POST", `/api/v1/public/bookings/${b.privateKey}/cancel`, { body: { booking: {} } })).status).toBe(200);
    expect(await others(a.privateKey)).toEqual(["Seat 13"]);
    expect(await others(b.privateKey)).toEqual([]);
  }, SLOW);

  it("daily and weekly limits count slots, not seats: a slot's every seat fits a limit of one, a second slot does not, until the first is empty", async () => {
    const fx = fixturesAt(cluster.servers[1].baseUrl);
    const host = await fx.newHost({ timezone: "UTC" });
    expect((await restAt(cluster.servers[1].baseUrl, "PATCH", "/api/v1/user", { key: host.key, body: { user: { start_day_of_week: 1 } } })).status).toBe(200);
    const daily = await fx.newEvent(host, { name: "Daily class", seats_per_slot: 3, daily_limit: 1 });
    const weekly = await fx.newEvent(host, { name: "Weekly class", seats_per_slot: 2, weekly_limit: 2 });
    // A Monday at least a week ahead, and its week.
    let monday = dayFromToday(9);
    while (new Date(`${monday}T00:00:00Z`).getUTCDay() !== 1) monday = addDays(monday, 1);
    const [tuesday, wednesday, nextMonday] = [1, 2, 7].map((n) => addDays(monday, n));

    const seats = [];
    for (const [r, protocol, n] of [[0, "rest", 21], [1, "grpc", 22], [2, "rest", 23]] as const) seats.push(await attempt(r, protocol, host, daily, at(monday, "10:00"), n));
    expect(seats.map((s) => s.ok)).toEqual([true, true, true]);
    expect(await slotsOf(0, host, daily, monday)).toEqual([]);
    expect((await attempt(1, "rest", host, daily, at(monday, "14:00"), 24)).refusal).toBe("409 daily_limit");
    expect((await attempt(1, "grpc", host, daily, at(monday, "14:00"), 24)).refusal).toBe("FailedPrecondition slot is not available: daily_limit");
    // One seat canceled: its slot is offered again, still alone on its day.
    expect((await restAt(cluster.servers[2].baseUrl, "POST", `/api/v1/public/bookings/${seats[0].privateKey}/cancel`, { body: { booking: {} } })).status).toBe(200);
    expect((await slotsOf(2, host, daily, monday)).map((s) => [s.start_time, s.seats_left])).toEqual([[at(monday, "10:00"), 1]]);
    // Every seat gone: the day's place is free for another slot.
    for (const s of seats.slice(1)) expect((await restAt(cluster.servers[0].baseUrl, "POST", `/api/v1/public/bookings/${s.privateKey}/cancel`, { body: { booking: {} } })).status).toBe(200);
    expect((await attempt(0, "rest", host, daily, at(monday, "14:00"), 25)).ok).toBe(true);

    // Weekly: two slots of two seats each fill the week of a limit of two.
    for (const [day, n] of [[monday, 31], [monday, 32], [tuesday, 33], [tuesday, 34]] as const) expect((await attempt(n % 3, "rest", host, weekly, at(day, "16:00"), n)).ok).toBe(true);
    expect(await slotsOf(1, host, weekly, wednesday)).toEqual([]);
    expect((await attempt(2, "rest", host, weekly, at(wednesday, "16:00"), 35)).refusal).toBe("409 weekly_limit");
    expect((await slotsOf(1, host, weekly, nextMonday)).length).toBeGreaterThan(0);
  }, SLOW);

  it("seats_per_slot is 2–1000 or null, over REST and RPC; the event and the public event show it", async () => {
    const fx = fixturesAt(cluster.servers[2].baseUrl);
    const host = await fx.newHost({ timezone: "UTC" });
    const event = await fx.newEvent(host, { name: "Seats rules" });
    expect(event.seats_per_slot ?? null).toBeNull();
    expect(event.show_attendees_to_attendees).toBe(false);
    for (const bad of [1, 1001, 2.5, "3"]) {
      const res = await restAt(cluster.servers[2].baseUrl, "PATCH", `/api/v1/events/${event.id}`, { key: host.key, body: { event: { seats_per_slot: bad } } });
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(res.body.message).toBe("seats_per_slot must be a whole number from 2 to 1000, or null");
    }
    const set = await restAt(cluster.servers[2].baseUrl, "PATCH", `/api/v1/events/${event.id}`, { key: host.key, body: { event: { seats_per_slot: 1000 } } });
    expect(set.body.data.seats_per_slot).toBe(1000);
    const rpc = await unaryAt(cluster.grpc[0], EventService.method.getEvent, { id: event.id }, { "x-api-key": host.key });
    expect(rpc.event?.seatsPerSlot).toBe(1000);
    const pub = await restAt(cluster.servers[0].baseUrl, "GET", `/api/v1/public/users/${host.user.url}/events/${event.url}`);
    expect(pub.body.data.seats_per_slot).toBe(1000);
    const cleared = await restAt(cluster.servers[2].baseUrl, "PATCH", `/api/v1/events/${event.id}`, { key: host.key, body: { event: { seats_per_slot: null } } });
    expect(cleared.body.data.seats_per_slot ?? null).toBeNull();
    const day = dayFromToday(7);
    expect((await slotsOf(1, host, event, day))[0].seats_left ?? null).toBeNull();
  }, SLOW);
});
