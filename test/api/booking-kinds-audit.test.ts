// booking-kinds.md statement by statement where the feature files leave a gap: bounds accepted and refused with their texts, requests, no-shows and links over every protocol, expiry on a moved clock (at its time, and at the start when sooner), a link that ran out, the desk's default page, the host's move on every protocol.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, useServer, type Json } from "../helpers/api.js";
import { dayFromToday, deskCalls, hostCalls, importBookings, links, newEvent, newHost, publicCalls, tokenOf, utcIso, type Host } from "../helpers/bookings.js";
import { allowedData, events, expectGone, expectRefused, invoke, ok, PROTOCOLS, type Protocol } from "../helpers/calls.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

const APP_URL = "https://book.example.test";
const NOT_PENDING = "booking is not pending";
const NO_SHOW_VALUES = ["attendee", "host"];

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ APP_URL, EFFECTS_POLL_MS: "1000", ...CLOCK_CONTROL_ENV });
  useServer(server.baseUrl);
}, 120_000);
afterAll(async () => {
  useServer(undefined);
  await server?.stop();
});

let seq = 0;
const url = (stem: string) => `${stem}-${process.pid}-${++seq}`;
const booker = (start: string, extra: Json = {}) => ({ start_time: start, attendee_name: "Grace Hopper", attendee_email: "grace@example.com", ...extra });
/** The server's time now (other tests here moved it on). */
const serverNow = async (): Promise<number> => (await advanceClock(server, 0))[0].getTime();
/** The first half hour that starts at least `minutes` after the server's now. */
const halfHourAfter = async (minutes: number): Promise<string> => new Date(Math.ceil(((await serverNow()) + minutes * 60_000) / 1_800_000) * 1_800_000).toISOString();
/** The account's booking-change feed (callers.md) as [type, booking id, status, no_show] from its start. */
async function feedOf(host: Host): Promise<[string, string, string, string | null][]> {
  const res = await rest("GET", "/booking_changes?limit=500", { key: host.key });
  expect(res.status).toBe(200);
  return (res.body.data.changes as Json[]).filter((c) => c.booking).map((c) => [c.type, c.booking.id, c.booking.status, c.booking.no_show ?? null]);
}
const statusOf = async (host: Host, id: string): Promise<string> => (await ok("rest", host.key, hostCalls.get(id))).status;

describe.each(PROTOCOLS)("booking kinds over %s", (protocol: Protocol) => {
  let host: Host;
  beforeAll(async () => {
    host = await newHost({ timezone: "UTC" });
  });

  it("lengths and intervals at their bounds are taken: six lengths from 5 to 720, intervals of 5 and 720", async () => {
    const made = await ok(protocol, host.key, events.create({ name: "Bounds", url: url("bounds"), durations: [5, 720, 10, 15, 20, 25], slot_interval_minutes: 5 }), 201, "event created");
    expect({ durations: made.durations, interval: made.slot_interval_minutes, shown: made.slot_duration }).toEqual({ durations: [5, 720, 10, 15, 20, 25], interval: 5, shown: "5_minutes" });
    const wide = await ok(protocol, host.key, events.update(made.id, { slot_interval_minutes: 720 }), 200, "event updated");
    expect(wide.slot_interval_minutes).toBe(720);
  });

  it("seats_per_slot off 2–1000 is 422 with its rule; slots of a seated event show seats_left, of another none", async () => {
    const event = await newEvent(host, { url: url("seated"), seats_per_slot: 2 });
    for (const seats of [1, 1001]) {
      expectRefused(protocol, await invoke(protocol, host.key, events.update(event.id, { seats_per_slot: seats })), 422, "seats_per_slot must be a whole number from 2 to 1000, or null");
    }
    const plain = await newEvent(host, { url: url("unseated") });
    const day = dayFromToday(10);
    const slots = async (e: Json) => (await ok(protocol, host.key, publicCalls.slots(host.user.url, e.url, { date_from: day, date_to: day, timezone: "UTC" }), 200, "slots found")).slots as Json[];
    expect((await slots(event))[0]).toMatchObject({ start_time: utcIso(day, "00:00"), seats_left: 2 });
    expect((await slots(plain))[0].seats_left ?? null).toBeNull();
  });

  it("a request: defaults and bounds of the fields, 201 booking requested and pending, in the pending listing and count and the desk's status, confirmed once, declined once with the reason", async () => {
    const plain = await ok(protocol, host.key, events.create({ name: "Plain", url: url("plain") }), 201);
    expect({ requires: plain.requires_confirmation, hours: plain.confirmation_hours }).toEqual({ requires: false, hours: 24 });
    for (const hours of [0, 169]) {
      expectRefused(protocol, await invoke(protocol, host.key, events.update(plain.id, { confirmation_hours: hours })), 422, "confirmation_hours must be a whole number from 1 to 168");
    }
    const event = await ok(protocol, host.key, events.create({ name: "Waits", url: url("waits"), slot_duration: "30_minutes", requires_confirmation: true, confirmation_hours: 168 }), 201);
    expect({ requires: event.requires_confirmation, hours: event.confirmation_hours }).toEqual({ requires: true, hours: 168 });

    const day = dayFromToday(12);
    const asked = await ok(protocol, host.key, publicCalls.book(host.user.url, event.url, booker(utcIso(day, "09:00"))), 201, "booking requested");
    expect(asked.status).toBe("pending");
    const range = { date_from: dayFromToday(0), date_to: dayFromToday(30) };
    const pending = await ok(protocol, host.key, hostCalls.list(event.id, { category: "pending", ...range }), 200);
    expect(pending.records.map((r: Json) => [r.id, r.status])).toEqual([[asked.id, "pending"]]);
    expect((await ok(protocol, host.key, hostCalls.list(event.id, { category: "upcoming", ...range }))).records).toEqual([]);
    expect(await ok(protocol, host.key, hostCalls.counts(event.id, range))).toMatchObject({ pending: 1, upcoming: 0 });
    expect((await ok(protocol, host.key, deskCalls.list({ status: ["pending"] }), 200, "bookings found")).bookings.map((b: Json) => b.id)).toEqual([asked.id]);

    const confirmed = await ok(protocol, host.key, hostCalls.confirm(asked.id), 200, "booking confirmed");
    expect(confirmed).toMatchObject({ id: asked.id, status: "confirmed" });
    expectRefused(protocol, await invoke(protocol, host.key, hostCalls.confirm(asked.id)), 422, NOT_PENDING);
    expectRefused(protocol, await invoke(protocol, host.key, hostCalls.decline(asked.id, {})), 422, NOT_PENDING);
    expect(await ok(protocol, host.key, hostCalls.counts(event.id, range))).toMatchObject({ pending: 0, upcoming: 1 });

    const second = await ok(protocol, host.key, publicCalls.book(host.user.url, event.url, booker(utcIso(day, "10:00"))), 201, "booking requested");
    const declined = await ok(protocol, host.key, hostCalls.decline(second.id, { reason: "Away that day" }), 200, "booking declined");
    expect(declined).toMatchObject({ id: second.id, status: "declined", cancel_reason: "Away that day" });
    expectRefused(protocol, await invoke(protocol, host.key, hostCalls.confirm(second.id)), 422, NOT_PENDING);
    // The freed slot takes a new request.
    const third = await ok(protocol, host.key, publicCalls.book(host.user.url, event.url, booker(utcIso(day, "10:00"))), 201, "booking requested");
    expect(third.status).toBe("pending");
    // The feed follows each state: made pending, confirmed, declined.
    const mine = new Set([asked.id, second.id, third.id]);
    expect((await feedOf(host)).filter(([, id]) => mine.has(id))).toEqual([
      ["booking.created", asked.id, "pending", null],
      ["booking.updated", asked.id, "confirmed", null],
      ["booking.created", second.id, "pending", null],
      ["booking.canceled", second.id, "declined", null],
      ["booking.created", third.id, "pending", null],
    ]);
  });

  it("a no-show: 422 before the start, then recorded, refused values named, filtered in the listing, cleared with null", async () => {
    const event = await newEvent(host, { url: url("noshow") });
    const start = await halfHourAfter(5);
    const made = await ok(protocol, host.key, publicCalls.book(host.user.url, event.url, booker(start)), 201, "booking confirmed");
    expectRefused(protocol, await invoke(protocol, host.key, hostCalls.noShow(made.id, "attendee")), 422, "booking has not started yet");
    await advanceClock(server, Date.parse(start) - (await serverNow()) + 60_000);
    const recorded = await ok(protocol, host.key, hostCalls.noShow(made.id, "host"), 200, "no-show recorded");
    expect(recorded).toMatchObject({ id: made.id, no_show: "host" });
    expect((await ok(protocol, host.key, hostCalls.get(made.id))).no_show).toBe("host");
    expectRefused(protocol, await invoke(protocol, host.key, hostCalls.noShow(made.id, "nobody")), 422, "no_show is not included in the list", allowedData("no_show", NO_SHOW_VALUES));
    const listed = async (noShow: string) => (await ok(protocol, host.key, hostCalls.list(event.id, { category: "past", no_show: noShow }))).records.map((r: Json) => r.id);
    expect(await listed("host")).toEqual([made.id]);
    expect(await listed("attendee")).toEqual([]);
    expectRefused(protocol, await invoke(protocol, host.key, hostCalls.list(event.id, { category: "past", no_show: "maybe" })), 422, "no_show is not included in the list", allowedData("no_show", NO_SHOW_VALUES));
    expect((await ok(protocol, host.key, deskCalls.list({ no_show: "host" }))).bookings.map((b: Json) => b.id)).toEqual([made.id]);
    const cleared = await ok(protocol, host.key, hostCalls.noShow(made.id, null), 200, "no-show recorded");
    expect(cleared.no_show ?? null).toBeNull();
    expect(await listed("host")).toEqual([]);
    expect((await feedOf(host)).filter(([, id]) => id === made.id)).toEqual([
      ["booking.created", made.id, "confirmed", null],
      ["booking.updated", made.id, "confirmed", "host"],
      ["booking.updated", made.id, "confirmed", null],
    ]);
  });

  it("the host moves a booking, keeping its length: 201 booking rescheduled", async () => {
    const event = await newEvent(host, { url: url("moved"), slot_duration: undefined, durations: [20, 40] });
    const day = dayFromToday(14);
    const made = await ok(protocol, host.key, deskCalls.book(event.id, booker(utcIso(day, "08:00"), { duration_minutes: 40 })), 201, "booking confirmed");
    const moved = await ok(protocol, host.key, deskCalls.reschedule(made.id, { start_time: utcIso(day, "10:40"), reason: "Clash" }), 201, "booking rescheduled");
    expect(moved).toMatchObject({ status: "confirmed", start_time: utcIso(day, "10:40"), end_time: utcIso(day, "11:20"), previous_booking_id: made.id });
  });

  it("a link's url is under APP_URL; a request through it uses it up; one that ran out is 410 on the API and the page", async () => {
    const event = await newEvent(host, { url: url("linked"), is_public: false, requires_confirmation: true });
    const link = await ok(protocol, host.key, links.create(event.id), 201, "link created");
    expect(link.url).toMatch(new RegExp(`^${APP_URL}/d/[A-Za-z0-9_-]{22,}$`));
    const day = dayFromToday(20);
    const asked = await ok(protocol, host.key, links.book(tokenOf(link.url), utcIso(day, "09:00")), 201, "booking requested");
    expect(asked.status).toBe("pending");
    expectGone(protocol, await invoke(protocol, undefined, links.book(tokenOf(link.url), utcIso(day, "11:00"), "second@example.com")));
    expect((await ok(protocol, host.key, links.list(event.id))).find((l: Json) => l.id === link.id)).toMatchObject({ used: true, revoked: false });

    const short = await ok(protocol, host.key, links.create(event.id, { expires_in_days: 1 }), 201, "link created");
    expect(Date.parse(short.expires_at) - (await serverNow())).toBeLessThanOrEqual(86_400_000);
    await advanceClock(server, Date.parse(short.expires_at) - (await serverNow()) + 60_000);
    const token = tokenOf(short.url);
    expectGone(protocol, await invoke(protocol, undefined, links.event(token)));
    expectGone(protocol, await invoke(protocol, undefined, links.slots(token, day)));
    expectGone(protocol, await invoke(protocol, undefined, links.book(token, utcIso(day, "13:00"))));
    // The page says what the API says (the heading of the English page).
    const page = await fetch(`${server.baseUrl}/d/${token}?locale=en`);
    expect({ status: page.status, says: (await page.text()).includes("This link is no longer valid") }).toEqual({ status: 410, says: true });
    expect((await ok(protocol, host.key, links.list(event.id))).find((l: Json) => l.id === short.id)).toMatchObject({ used: false, revoked: false, expires_at: short.expires_at });
  });
});

describe("a single-use link raced over every protocol at once", () => {
  it("has one winner; every other booking through it is 410 link is no longer valid", async () => {
    const host = await newHost({ timezone: "UTC" });
    const event = await newEvent(host, { is_public: false });
    const token = tokenOf((await ok("rest", host.key, links.create(event.id), 201)).url);
    const day = dayFromToday(21);
    const racers = [...PROTOCOLS, ...PROTOCOLS];
    const answers = await Promise.all(racers.map((p, i) => invoke(p, undefined, links.book(token, utcIso(day, `${String(8 + i).padStart(2, "0")}:00`), `racer${i}@example.com`))));
    expect(answers.filter((a) => a.ok), JSON.stringify(answers.map((a) => a.message))).toHaveLength(1);
    answers.forEach((a, i) => a.ok || expectGone(racers[i], a));
  });
});

describe("an unanswered request expires within 60 s of its time", () => {
  it("after confirmation_hours: pending just before, expired once the clock passes it, the slot offered again", async () => {
    const host = await newHost({ timezone: "UTC" });
    const event = await newEvent(host, { requires_confirmation: true, confirmation_hours: 2 });
    const start = utcIso(dayFromToday(25), "09:00");
    const id = (await ok("rest", host.key, publicCalls.book(host.user.url, event.url, booker(start)), 201, "booking requested")).id;
    const madeAt = await serverNow();
    await advanceClock(server, 2 * 3_600_000 - 120_000);
    expect(await statusOf(host, id)).toBe("pending");
    const [now] = await advanceClock(server, madeAt + 2 * 3_600_000 - (await serverNow()));
    await until("the request expired", async () => ((await statusOf(host, id)) === "expired" ? true : undefined), { timeoutMs: 60_000 - (Date.now() - now.getTime()) });
    expect(await ok("rest", host.key, hostCalls.get(id))).toMatchObject({ status: "expired", cancel_reason: "expired" });
    expect(await feedOf(host)).toEqual([["booking.created", id, "pending", null], ["booking.canceled", id, "expired", null]]);
    const day = start.slice(0, 10);
    const slots = (await ok("rest", host.key, publicCalls.slots(host.user.url, event.url, { date_from: day, date_to: day, timezone: "UTC" }))).slots as Json[];
    expect(slots.some((s) => s.start_time === start)).toBe(true);
  }, 120_000);

  it("at its start when that comes before confirmation_hours", async () => {
    const host = await newHost({ timezone: "UTC" });
    const event = await newEvent(host, { requires_confirmation: true, confirmation_hours: 24 });
    const start = await halfHourAfter(40);
    const id = (await ok("rest", host.key, publicCalls.book(host.user.url, event.url, booker(start)), 201, "booking requested")).id;
    await advanceClock(server, Date.parse(start) - (await serverNow()) - 60_000);
    expect(await statusOf(host, id)).toBe("pending");
    await advanceClock(server, 60_000);
    await until("the request expired at its start", async () => ((await statusOf(host, id)) === "expired" ? true : undefined), { timeoutMs: 60_000 });
  }, 120_000);
});

describe("the desk's pages", () => {
  it("hold 25 bookings unless page[limit] says, with next until the last", async () => {
    const host = await newHost({ timezone: "UTC" });
    const event = await newEvent(host);
    const day = dayFromToday(30);
    await importBookings(Array.from({ length: 30 }, (_, i) => ({ event_id: event.id, start_time: utcIso(day, `${String(Math.floor(i / 2)).padStart(2, "0")}:${i % 2 === 0 ? "00" : "30"}`), attendee_name: `A${i}`, attendee_email: `a${i}@example.com` })));
    const first = await ok("rest", host.key, deskCalls.list(), 200, "bookings found");
    expect(first.bookings).toHaveLength(25);
    expect(typeof first.next).toBe("string");
    const second = await ok("rest", host.key, deskCalls.list({ after: first.next }), 200, "bookings found");
    expect({ n: second.bookings.length, next: second.next }).toEqual({ n: 5, next: null });
  });
});
