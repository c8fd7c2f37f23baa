// Event rules through the public surface: the rule fields over every protocol, the buffer before, per-event notice and window, daily and weekly limits, the booker's cancel notice, and why a time is refused.
import { beforeAll, describe, expect, it } from "vitest";
import { PADDING_DURATION_NAMES } from "../../src/domain/event.js";
import { rest, type Json } from "../helpers/api.js";
import { ALWAYS_OPEN, book, dayFromToday, hostCalls, newEvent, newHost, publicCalls, type Host, utcIso as at } from "../helpers/bookings.js";
import { allowedData, events, expectRefused, expectSlotRefused, invoke, ok, PROTOCOLS, type Protocol } from "../helpers/calls.js";
import { addDays } from "../../src/domain/timezones.js";

const RULES = ["buffer_before", "minimum_notice_minutes", "booking_window_days", "schedule_id", "daily_limit", "weekly_limit", "cancel_notice_minutes"] as const;

/** A rule field as the answer carries it: REST writes unset ones as null, RPC leaves them out. */
const rulesOf = (e: Json): Json => Object.fromEntries(RULES.map((r) => [r, e[r] ?? null]));

/** The "HH:MM" starts of the host's free slots on one UTC day. */
async function startsOn(host: Host, event: Json, day: string): Promise<string[]> {
  const res = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots?date_from=${day}&date_to=${day}&timezone=UTC`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data.slots as Json[]).map((s) => (s.start_time as string).slice(11, 16));
}

const bookCall = (host: Host, event: Json, iso: string, email = "ada@example.com") =>
  publicCalls.book(host.user.url, event.url, { start_time: iso, attendee_name: "Ada Lovelace", attendee_email: email });

let seq = 0;
const url = (stem: string) => `${stem}-${++seq}`;

describe.each(PROTOCOLS)("rule fields over %s", (protocol: Protocol) => {
  let host: Host;
  beforeAll(async () => {
    host = await newHost();
  });

  it("a new event has none; every rule is set, read back, cloned, and cleared with null", async () => {
    const plain = await ok(protocol, host.key, events.create({ name: "Plain", url: url("plain") }), 201, "event created");
    expect(rulesOf(plain)).toEqual({ ...Object.fromEntries(RULES.map((r) => [r, null])), buffer_before: "0_minutes" });

    const rules = { buffer_before: "15_minutes", minimum_notice_minutes: 60, booking_window_days: 14, daily_limit: 3, weekly_limit: 10, cancel_notice_minutes: 1440 };
    const made = await ok(protocol, host.key, events.create({ name: "Ruled", url: url("ruled"), ...rules }), 201, "event created");
    expect(rulesOf(made)).toEqual({ ...rules, schedule_id: null });
    expect(rulesOf(await ok(protocol, host.key, events.get(made.id), 200, "event found"))).toEqual({ ...rules, schedule_id: null });
    const copy = await ok(protocol, host.key, events.clone(made.id), 201, "event cloned");
    expect(rulesOf(copy)).toEqual({ ...rules, schedule_id: null });

    // Only the fields sent change; null clears a rule (the account's notice and window apply again, no limit).
    const changed = await ok(protocol, host.key, events.update(made.id, { daily_limit: null, minimum_notice_minutes: null, cancel_notice_minutes: 0, buffer_before: "2_hours" }), 200, "event updated");
    expect(rulesOf(changed)).toEqual({ ...rules, daily_limit: null, minimum_notice_minutes: null, cancel_notice_minutes: 0, buffer_before: "2_hours", schedule_id: null });
    expect(rulesOf(await ok(protocol, host.key, events.update(made.id, { name: "Renamed" }), 200))).toEqual(rulesOf(changed));
  });

  it("refuses values outside the rules with 422 naming the field (and listing the values where there is a list)", async () => {
    const refused = async (event: Json, message: string, data: Json = {}) =>
      expectRefused(protocol, await invoke(protocol, host.key, events.create({ name: "Bad", url: url("bad"), ...event })), 422, message, data);
    await refused({ buffer_before: "20_minutes" }, "buffer_before is not included in the list", allowedData("buffer_before", PADDING_DURATION_NAMES));
    await refused({ daily_limit: 0 }, "daily_limit must be a whole number from 1 to 1000, or null");
    await refused({ weekly_limit: 1001 }, "weekly_limit must be a whole number from 1 to 1000, or null");
    await refused({ daily_limit: 1.5 }, "daily_limit must be a whole number from 1 to 1000, or null");
    await refused({ daily_limit: "2" }, "daily_limit must be a whole number from 1 to 1000, or null");
    await refused({ cancel_notice_minutes: 43201 }, "cancel_notice_minutes must be a whole number from 0 to 43200, or null");
    await refused({ minimum_notice_minutes: -1 }, "minimum_notice_minutes must be a whole number from 0 to 43200, or null");
    await refused({ booking_window_days: 731 }, "booking_window_days must be a whole number from 1 to 730, or null");
    await refused({ schedule_id: "0123456789abcdef01234567" }, "schedule_id is not a schedule of this account (or null for the account's availability)", allowedData("schedule_id", []));
    // Nothing was written.
    const listed = await ok(protocol, host.key, events.list());
    expect(listed.every((e: Json) => e.name !== "Bad")).toBe(true);
  });
});

describe("buffer_before", () => {
  it("a booking keeps its buffer free before it, for every event of the host; a slot keeps its own", async () => {
    const host = await newHost();
    const buffered = await newEvent(host, { name: "Buffered", buffer_before: "30_minutes" });
    const plain = await newEvent(host, { name: "Plain" });
    const day = dayFromToday(6);
    expect(await startsOn(host, buffered, day)).toContain("10:00");
    await book(host, buffered, { start_time: at(day, "10:00") });
    // The booking blocks 09:30–10:30; a buffered slot blocks 30 minutes before its start.
    const around = (starts: string[]) => ["09:00", "09:30", "10:00", "10:30", "11:00"].map((t) => starts.includes(t));
    expect(around(await startsOn(host, buffered, day))).toEqual([true, false, false, false, true]);
    expect(around(await startsOn(host, plain, day))).toEqual([true, false, false, true, true]);
    expectSlotRefused("rest", await invoke("rest", undefined, bookCall(host, plain, at(day, "09:30"))), "taken");
    expectSlotRefused("grpc", await invoke("grpc", undefined, bookCall(host, buffered, at(day, "10:30"))), "taken");
    const list = await rest("GET", `/events/${buffered.id}/bookings?date_from=${day}&date_to=${day}`, { key: host.key });
    expect(list.body.data.page.total_records).toBe(1);
  });
});

describe("minimum_notice_minutes and booking_window_days per event", () => {
  it("override the account's: slots and bookings follow the event's", async () => {
    const host = await newHost();
    const strict = await newEvent(host, { name: "Strict", minimum_notice_minutes: 2880, booking_window_days: 5 });
    const open = await newEvent(host, { name: "Open" });
    expect(await startsOn(host, strict, dayFromToday(1))).toEqual([]);
    expect(await startsOn(host, open, dayFromToday(1))).toHaveLength(48);
    expect(await startsOn(host, strict, dayFromToday(3))).toHaveLength(48);
    expect(await startsOn(host, strict, dayFromToday(5))).toEqual([]);
    expect(await startsOn(host, open, dayFromToday(5))).toHaveLength(48);
    for (const protocol of ["rest", "grpc"] as const) {
      expectSlotRefused(protocol, await invoke(protocol, undefined, bookCall(host, strict, at(dayFromToday(1), "12:00"))), "too_soon");
      expectSlotRefused(protocol, await invoke(protocol, undefined, bookCall(host, strict, at(dayFromToday(5), "12:00"))), "too_far");
    }
    await book(host, open, { start_time: at(dayFromToday(1), "12:00") });
  });
});

describe("daily_limit and weekly_limit", () => {
  it("a full day offers no slots and refuses its times with daily_limit; a cancel or a move within the day frees or keeps the place", async () => {
    const host = await newHost();
    const limited = await newEvent(host, { name: "Limited", daily_limit: 2 });
    const other = await newEvent(host, { name: "Other" });
    const day = dayFromToday(7);
    const first = await book(host, limited, { start_time: at(day, "10:00") });
    expect(await startsOn(host, limited, day)).not.toEqual([]);
    await book(host, limited, { start_time: at(day, "11:00") });
    expect(await startsOn(host, limited, day)).toEqual([]);
    expect(await startsOn(host, limited, addDays(day, 1))).toHaveLength(48);
    // Bookings of other events do not count, and the full day stays open to them.
    expect((await startsOn(host, other, day)).length).toBeGreaterThan(40);
    for (const protocol of PROTOCOLS) expectSlotRefused(protocol, await invoke(protocol, undefined, bookCall(host, limited, at(day, "14:00"))), "daily_limit");

    // A move within the full day keeps its place; a move onto it from another day is refused.
    const moved = await ok("grpc", "", publicCalls.reschedule(first.private_key, { start_time: at(day, "15:00") }), 201);
    const elsewhere = await book(host, limited, { start_time: at(addDays(day, 1), "10:00") });
    expectSlotRefused("rest", await invoke("rest", undefined, publicCalls.reschedule(elsewhere.private_key, { start_time: at(day, "16:00") })), "daily_limit");
    expectSlotRefused("connect-h2", await invoke("connect-h2", undefined, publicCalls.reschedule(elsewhere.private_key, { start_time: at(day, "16:00") })), "daily_limit");

    // The host cancels one: the day has a place again, and it can be taken once.
    await ok("rest", host.key, hostCalls.cancel(moved.id), 200);
    expect(await startsOn(host, limited, day)).not.toEqual([]);
    await ok("rest", "", publicCalls.reschedule(elsewhere.private_key, { start_time: at(day, "16:00") }), 201);
    expect(await startsOn(host, limited, day)).toEqual([]);
  });

  it("a full week offers no slots and refuses with weekly_limit; the week starts on the account's start_day_of_week", async () => {
    const host = await newHost();
    expect((await rest("PATCH", "/user", { key: host.key, body: { user: { start_day_of_week: 1 } } })).status).toBe(200);
    const limited = await newEvent(host, { name: "Weekly", weekly_limit: 2 });
    // A Monday at least a week ahead, and its week.
    let monday = dayFromToday(8);
    while (new Date(`${monday}T00:00:00Z`).getUTCDay() !== 1) monday = addDays(monday, 1);
    const [tuesday, thursday, sunday, nextMonday] = [1, 3, 6, 7].map((n) => addDays(monday, n));
    await book(host, limited, { start_time: at(monday, "10:00") });
    await book(host, limited, { start_time: at(tuesday, "10:00") });
    expect(await startsOn(host, limited, thursday)).toEqual([]);
    expect(await startsOn(host, limited, sunday)).toEqual([]);
    expect(await startsOn(host, limited, nextMonday)).toHaveLength(48);
    for (const protocol of ["rest", "grpc", "grpc-web"] as const) {
      expectSlotRefused(protocol, await invoke(protocol, undefined, bookCall(host, limited, at(thursday, "10:00"))), "weekly_limit");
    }
    // Weeks from Wednesday: Monday and Tuesday belong to the week before, Thursday's week is empty.
    expect((await rest("PATCH", "/user", { key: host.key, body: { user: { start_day_of_week: 3 } } })).status).toBe(200);
    expect(await startsOn(host, limited, thursday)).toHaveLength(48);
    await book(host, limited, { start_time: at(thursday, "10:00") });
  });
});

describe("cancel_notice_minutes", () => {
  let host: Host;
  let event: Json;
  /** The `n`th half hour from the first one at least three hours from now: all inside a day's notice. */
  const soon = (n: number): string => new Date((Math.ceil((Date.now() + 3 * 3_600_000) / 1_800_000) + n) * 1_800_000).toISOString();

  beforeAll(async () => {
    host = await newHost();
    event = await newEvent(host, { name: "Firm", cancel_notice_minutes: 1440 });
  });

  it.each(PROTOCOLS)("%s: the booker cannot cancel or move within the notice; the answer says until when it could", async (protocol: Protocol) => {
    const start = soon(PROTOCOLS.indexOf(protocol));
    const b = await book(host, event, { start_time: start, attendee_email: `late-${protocol}@example.com` });
    const until = new Date(Date.parse(start) - 1440 * 60_000).toISOString();
    const view = await ok(protocol, "", publicCalls.get(b.private_key), 200, "booking found");
    expect({ changeable: view.changeable, changeable_until: view.changeable_until }).toEqual({ changeable: false, changeable_until: until });
    const data = { changeable_until: until, cancel_notice_minutes: 1440 };
    expectRefused(protocol, await invoke(protocol, undefined, publicCalls.cancel(b.private_key, { reason: "late" })), 422, "booking can no longer be changed", data);
    expectRefused(protocol, await invoke(protocol, undefined, publicCalls.reschedule(b.private_key, { start_time: at(dayFromToday(20), "10:00") })), 422, "booking can no longer be changed", data);
    expect((await ok(protocol, "", publicCalls.get(b.private_key))).status).toBe("confirmed");
    // The host is not bound by it.
    const canceled = await ok(protocol, host.key, hostCalls.cancel(b.id, { reason: "host" }), 200);
    expect(canceled.status).toBe("canceled");
  });

  it("before the cutoff the booker may change it; the answer says until when", async () => {
    const start = at(dayFromToday(12), "10:00");
    const b = await book(host, event, { start_time: start });
    const view = await ok("rest", "", publicCalls.get(b.private_key));
    expect({ changeable: view.changeable, changeable_until: view.changeable_until }).toEqual({ changeable: true, changeable_until: at(dayFromToday(11), "10:00") });
    const moved = await ok("grpc", "", publicCalls.reschedule(b.private_key, { start_time: at(dayFromToday(13), "10:00") }), 201);
    expect((await ok("rest", "", publicCalls.cancel(moved.private_key, {}))).status).toBe("canceled");
    // Without a notice the booking may change until it starts.
    const plain = await newEvent(host, { name: "Loose" });
    const early = await book(host, plain, { start_time: soon(PROTOCOLS.length + 1), attendee_email: "loose@example.com" });
    const loose = await ok("rest", "", publicCalls.get(early.private_key));
    expect({ changeable: loose.changeable, changeable_until: loose.changeable_until }).toEqual({ changeable: true, changeable_until: early.start_time });
  });
});

describe.each(PROTOCOLS)("why a time is refused, over %s", (protocol: Protocol) => {
  it("names each reason in data.reason (REST) or the message (RPC)", async () => {
    const nineToFive = { ...ALWAYS_OPEN, weekly_hours: Object.fromEntries(Object.keys(ALWAYS_OPEN.weekly_hours).map((d) => [d, [{ start: "09:00", end: "17:00" }]])), booking_window_days: 30 };
    const host = await newHost({}, nineToFive);
    const event = await newEvent(host, { name: "Reasons", minimum_notice_minutes: 1440 });
    const day = dayFromToday(4);
    await book(host, event, { start_time: at(day, "10:00") });
    const why = async (iso: string, reason: string) => expectSlotRefused(protocol, await invoke(protocol, undefined, bookCall(host, event, iso, "why@example.com")), reason);
    await why(at(day, "10:00"), "taken");
    await why(at(day, "10:10"), "not_on_the_grid");
    await why(at(day, "16:45"), "outside_hours");
    await why(at(day, "20:00"), "outside_hours");
    await why("2020-01-01T10:00:00Z", "in_the_past");
    await why(new Date(Math.ceil((Date.now() + 3_600_000) / 1_800_000) * 1_800_000).toISOString(), "too_soon");
    await why(at(dayFromToday(40), "10:00"), "too_far");
  });
});
