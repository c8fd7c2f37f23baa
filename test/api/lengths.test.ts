// Several lengths and slot intervals (booking-kinds.md "Several lengths"): the event fields, slots for a chosen length, bookings of a chosen length, over every protocol.
import { beforeAll, describe, expect, it } from "vitest";
import { rest, type Json } from "../helpers/api.js";
import { dayFromToday, newEvent, newHost, publicCalls, type Host, utcIso as at } from "../helpers/bookings.js";
import { events, expectRefused, invoke, ok, PROTOCOLS, type Protocol } from "../helpers/calls.js";

const NOT_OFFERED = "duration is not one of the event's durations";
const DURATIONS_RULE = "durations must be 1 to 6 distinct whole numbers of minutes, each from 5 to 720 and a multiple of 5";
const INTERVAL_RULE = "slot_interval_minutes must be a whole number from 5 to 720 and a multiple of 5, or null";

let seq = 0;
const url = (stem: string) => `${stem}-${process.pid}-${++seq}`;

/** An event with these lengths (the fixture's slot_duration left out: a request sets one or the other). */
const withLengths = (host: Host, fields: Json) => newEvent(host, { slot_duration: undefined, ...fields });

/** The free slots of one UTC day for `duration` (none: the default), as [HH:MM start, minutes long]. */
async function slotsOn(protocol: Protocol, host: Host, event: Json, day: string, duration?: number): Promise<[string, number][]> {
  const q = { date_from: day, date_to: day, timezone: "UTC", ...(duration === undefined ? {} : { duration: String(duration) }) };
  const call = publicCalls.slots(host.user.url, event.url, q);
  if (duration !== undefined) call.request.duration = duration;
  const data = await ok(protocol, host.key, call, 200, "slots found");
  return (data.slots as Json[]).map((s) => [(s.start_time as string).slice(11, 16), (Date.parse(s.end_time) - Date.parse(s.start_time)) / 60_000]);
}

const booking = (start: string, extra: Json = {}) => ({ start_time: start, attendee_name: "Ada Lovelace", attendee_email: "ada@example.com", ...extra });

describe.each(PROTOCOLS)("lengths over %s", (protocol: Protocol) => {
  let host: Host;
  beforeAll(async () => {
    host = await newHost({ timezone: "UTC" });
  });

  it("an event takes durations and slot_interval_minutes, shows the first length as slot_duration, and clears the interval with null", async () => {
    const made = await ok(protocol, host.key, events.create({ name: "Lengths", url: url("lengths"), durations: [20, 90], slot_interval_minutes: 15 }), 201, "event created");
    expect({ durations: made.durations, interval: made.slot_interval_minutes, shown: made.slot_duration }).toEqual({ durations: [20, 90], interval: 15, shown: "20_minutes" });
    const read = await ok(protocol, host.key, events.get(made.id), 200, "event found");
    expect(read.durations).toEqual([20, 90]);
    const cleared = await ok(protocol, host.key, events.update(made.id, { slot_interval_minutes: null }), 200, "event updated");
    expect({ durations: cleared.durations, interval: cleared.slot_interval_minutes ?? null }).toEqual({ durations: [20, 90], interval: null });
    // The seed's slot_duration sets one length again; a seed length keeps the seed's form.
    const one = await ok(protocol, host.key, events.update(made.id, { slot_duration: "45_minutes" }), 200, "event updated");
    expect({ durations: one.durations, shown: one.slot_duration }).toEqual({ durations: [45], shown: "45 minutes" });
    // An event made with neither has its slot_duration as its one length.
    const plain = await ok(protocol, host.key, events.create({ name: "Plain", url: url("plain") }), 201, "event created");
    expect({ durations: plain.durations, interval: plain.slot_interval_minutes ?? null }).toEqual({ durations: [30], interval: null });
  });

  it("refuses lengths and intervals off the rules, and both ways of setting lengths at once", async () => {
    const refused = async (fields: Json, message: string) =>
      expectRefused(protocol, await invoke(protocol, host.key, events.create({ name: "Bad", url: url("bad"), ...fields })), 422, message);
    for (const durations of [[], [7], [20, 20], [0], [725], [5, 10, 15, 20, 25, 30, 35], [30.5], ["30"], 30]) await refused({ durations }, DURATIONS_RULE);
    for (const interval of [0, 3, 721, 12, "15"]) await refused({ slot_interval_minutes: interval }, INTERVAL_RULE);
    const both = await invoke(protocol, host.key, events.create({ name: "Both", url: url("both"), slot_duration: "30_minutes", durations: [20] }));
    expect(both.ok).toBe(false);
    expect(protocol === "rest" ? both.http : both.code).toBe(protocol === "rest" ? 422 : 3);
    expect(both.message).toMatch(/^durations and slot_duration cannot both be sent/);
  });

  it("slots answer for the chosen length and start on the interval; an unknown length is 422", async () => {
    const event = await withLengths(host, { url: url("grid"), durations: [20, 40], slot_interval_minutes: 15 });
    const day = dayFromToday(3);
    const short = await slotsOn(protocol, host, event, day);
    expect(short.slice(0, 4)).toEqual([["00:00", 20], ["00:15", 20], ["00:30", 20], ["00:45", 20]]);
    const long = await slotsOn(protocol, host, event, day, 40);
    expect(long.slice(0, 3)).toEqual([["00:00", 40], ["00:15", 40], ["00:30", 40]]);
    // The last one ends by midnight: 23:30 + 40 minutes would pass it.
    expect(long.at(-1)).toEqual(["23:15", 40]);
    const call = publicCalls.slots(host.user.url, event.url, { date_from: day, date_to: day, duration: "30" });
    call.request.duration = 30;
    expectRefused(protocol, await invoke(protocol, undefined, call), 422, NOT_OFFERED);
    if (protocol !== "rest") return;
    // A query that is no whole number of minutes is not one of them either (before: "duration is not valid").
    for (const duration of ["abc", "", "20.5"]) {
      const res = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots?date_from=${day}&date_to=${day}&duration=${duration}`);
      expect({ duration, status: res.status, message: res.body.message }).toEqual({ duration, status: 422, message: NOT_OFFERED });
    }
  });

  it("without an interval, slots start the chosen length apart", async () => {
    const event = await withLengths(host, { url: url("apart"), durations: [20, 40] });
    const day = dayFromToday(4);
    expect((await slotsOn(protocol, host, event, day, 40)).slice(0, 3).map(([s]) => s)).toEqual(["00:00", "00:40", "01:20"]);
    expect((await slotsOn(protocol, host, event, day)).slice(0, 3).map(([s]) => s)).toEqual(["00:00", "00:20", "00:40"]);
  });

  it("a booking takes duration_minutes (default the first) and its end follows; the times it blocks leave the slots of every length", async () => {
    const event = await withLengths(host, { url: url("book"), durations: [20, 40], slot_interval_minutes: 15 });
    const day = dayFromToday(5);
    const long = await ok(protocol, host.key, publicCalls.book(host.user.url, event.url, booking(at(day, "01:15"), { duration_minutes: 40 })), 201, "booking confirmed");
    expect({ start: long.start_time, end: long.end_time, minutes: long.duration_minutes }).toEqual({ start: at(day, "01:15"), end: at(day, "01:55"), minutes: 40 });
    const short = await ok(protocol, host.key, publicCalls.book(host.user.url, event.url, booking(at(day, "03:00"))), 201, "booking confirmed");
    expect(short.end_time).toBe(at(day, "03:20"));
    const starts = (await slotsOn(protocol, host, event, day)).map(([s]) => s);
    // 01:15–01:55 is taken: a 20-minute slot may end at 01:15 or start at 02:00 (the next grid start after 01:55).
    expect(starts.filter((s) => s >= "00:45" && s <= "02:15")).toEqual(["00:45", "02:00", "02:15"]);
    const wrong = await invoke(protocol, undefined, publicCalls.book(host.user.url, event.url, booking(at(day, "05:00"), { duration_minutes: 25 })));
    expectRefused(protocol, wrong, 422, NOT_OFFERED);
    // A start off the interval's grid is refused for what it is.
    const off = await invoke(protocol, undefined, publicCalls.book(host.user.url, event.url, booking(at(day, "05:05"), { duration_minutes: 40 })));
    expect(off.ok).toBe(false);
    expect(protocol === "rest" ? off.data : off.message).toEqual(protocol === "rest" ? { reason: "not_on_the_grid" } : "slot is not available: not_on_the_grid");
  });

  it("a reschedule keeps the booking's length", async () => {
    const event = await withLengths(host, { url: url("move"), durations: [20, 40] });
    const day = dayFromToday(6);
    const made = await ok(protocol, host.key, publicCalls.book(host.user.url, event.url, booking(at(day, "02:00"), { duration_minutes: 40 })), 201);
    const moved = await ok(protocol, host.key, publicCalls.reschedule(made.private_key, { start_time: at(day, "04:00") }), 201, "booking rescheduled");
    expect({ start: moved.start_time, end: moved.end_time }).toEqual({ start: at(day, "04:00"), end: at(day, "04:40") });
  });
});

describe("five-minute lengths side by side", () => {
  it("books 5-minute meetings one after another in a quarter hour, and refuses one that overlaps, also when sent at once", async () => {
    const host = await newHost({ timezone: "UTC" });
    const event = await withLengths(host, { url: url("five"), durations: [5, 10] });
    const day = dayFromToday(7);
    const send = (time: string, minutes = 5) =>
      rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, { body: { booking: booking(at(day, time), { duration_minutes: minutes, attendee_email: `five-${time.replace(":", "")}@example.com` }) } });
    const answers = await Promise.all(["09:00", "09:05", "09:10"].map((t) => send(t)));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
    // 10 minutes from 09:05 would cover the meetings at 09:05 and 09:10.
    expect((await send("09:20", 10)).status).toBe(201);
    const racing = await Promise.all([send("09:40", 10), send("09:45"), send("09:45")]);
    expect(racing.filter((a) => a.status === 201)).toHaveLength(1);
    expect(racing.filter((a) => a.status === 409)).toHaveLength(2);
  });
});

describe("public reads show the lengths", () => {
  it("the public event and the profile list the durations and the interval", async () => {
    const host = await newHost({ timezone: "UTC" });
    const event = await withLengths(host, { url: url("public"), durations: [30, 60, 90], slot_interval_minutes: 30 });
    const shown = await rest("GET", `/public/users/${host.user.url}/events/${event.url}`);
    expect({ durations: shown.body.data.durations, interval: shown.body.data.slot_interval_minutes, slot: shown.body.data.slot_duration }).toEqual({ durations: [30, 60, 90], interval: 30, slot: "30 minutes" });
    const profile = await rest("GET", `/public/users/${host.user.url}`);
    expect(profile.body.data.events.map((e: Json) => e.durations)).toEqual([[30, 60, 90]]);
    const bad = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots?duration=abc`);
    expect(bad.status).toBe(422);
  });
});
