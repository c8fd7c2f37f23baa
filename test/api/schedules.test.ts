// Named schedules over every protocol: create, list, read, change (only what is sent), delete, the limit of 20 under racing creates, another account's, and an event booked by its schedule's hours.
import { beforeAll, describe, expect, it } from "vitest";
import { ScheduleService } from "../../gen/scheduling/v1/schedule_pb.js";
import { rest, type Json } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, publicCalls, type Host, utcIso as at } from "../helpers/bookings.js";
import { events, expectMissing, expectRefused, expectSlotRefused, invoke, ok, PROTOCOLS, withObject, type Call, type Protocol } from "../helpers/calls.js";
import { newAccount } from "../helpers/fixtures.js";

const schedules = {
  create: (schedule?: Json): Call => ({
    service: ScheduleService, rpc: "createSchedule", request: withObject("schedule", schedule), rest: { method: "POST", path: "/schedules", body: withObject("schedule", schedule) }, pick: "schedule",
  }),
  list: (): Call => ({ service: ScheduleService, rpc: "listSchedules", request: {}, rest: { method: "GET", path: "/schedules" }, pick: "schedules" }),
  get: (id: string): Call => ({ service: ScheduleService, rpc: "getSchedule", request: { id }, rest: { method: "GET", path: `/schedules/${encodeURIComponent(id)}` }, pick: "schedule" }),
  /** `mask`: the RPC's update_mask, in its JSON form (lowerCamelCase paths); REST makes it from the names the body sends. */
  update: (id: string, schedule: Json | undefined, mask?: string[]): Call => ({
    service: ScheduleService, rpc: "updateSchedule",
    request: { id, ...withObject("schedule", schedule), ...(mask ? { update_mask: mask.join(",") } : {}) },
    rest: { method: "PATCH", path: `/schedules/${encodeURIComponent(id)}`, body: withObject("schedule", schedule) }, pick: "schedule",
  }),
  remove: (id: string): Call => ({ service: ScheduleService, rpc: "deleteSchedule", request: { id }, rest: { method: "DELETE", path: `/schedules/${encodeURIComponent(id)}` } }),
};

const NINE_TO_FIVE = [{ start: "09:00", end: "17:00" }];
const WEEKDAYS = { monday: NINE_TO_FIVE, tuesday: NINE_TO_FIVE, wednesday: NINE_TO_FIVE, thursday: NINE_TO_FIVE, friday: NINE_TO_FIVE, saturday: [], sunday: [] };
const WEEKENDS = { monday: [], tuesday: [], wednesday: [], thursday: [], friday: [], saturday: [{ start: "10:00", end: "12:00" }], sunday: [{ start: "10:00", end: "12:00" }] };

/** Every weekday key present, as answers carry them (RPC answers leave out empty lists). */
const hoursOf = (s: Json): Json => Object.fromEntries(Object.keys(WEEKDAYS).map((d) => [d, s.weekly_hours?.[d] ?? []]));

describe.each(PROTOCOLS)("schedules over %s", (protocol: Protocol) => {
  let key: string;
  beforeAll(async () => {
    ({ key } = await newAccount());
  });

  it("creates, lists, reads, changes only what is sent, and deletes", async () => {
    const made = await ok(protocol, key, schedules.create({ name: " Weekends ", weekly_hours: WEEKENDS, date_overrides: [{ date: "2030-06-01", intervals: [] }] }), 201, "schedule created");
    expect(made.id).toMatch(/^[0-9a-f]{24}$/);
    expect({ name: made.name, hours: hoursOf(made), overrides: made.date_overrides }).toEqual({ name: "Weekends", hours: WEEKENDS, overrides: [{ date: "2030-06-01", intervals: [] }] });
    // Without hours a schedule starts as a new account's availability does: Monday to Friday, 09:00 to 17:00.
    const plain = await ok(protocol, key, schedules.create({ name: "Plain" }), 201);
    expect(hoursOf(plain)).toEqual(WEEKDAYS);
    expect((await ok(protocol, key, schedules.list(), 200, "schedules found")).map((s: Json) => s.name)).toEqual(["Plain", "Weekends"]);
    expect(await ok(protocol, key, schedules.get(made.id), 200, "schedule found")).toEqual(made);

    const renamed = await ok(protocol, key, schedules.update(made.id, { name: "Weekend mornings" }), 200, "schedule updated");
    expect({ name: renamed.name, hours: hoursOf(renamed), overrides: renamed.date_overrides }).toEqual({ name: "Weekend mornings", hours: WEEKENDS, overrides: [{ date: "2030-06-01", intervals: [] }] });
    // Overrides sent empty are cleared: REST by the name in the body, RPC by the update mask.
    const cleared = await ok(protocol, key, schedules.update(made.id, { date_overrides: [] }, ["dateOverrides"]), 200);
    expect({ name: cleared.name, hours: hoursOf(cleared), overrides: cleared.date_overrides ?? [] }).toEqual({ name: "Weekend mornings", hours: WEEKENDS, overrides: [] });
    const rehoured = await ok(protocol, key, schedules.update(made.id, { weekly_hours: WEEKDAYS }), 200);
    expect(hoursOf(rehoured)).toEqual(WEEKDAYS);
    expect(await ok(protocol, key, schedules.get(made.id))).toEqual(rehoured);

    await ok(protocol, key, schedules.remove(made.id), 200, "schedule deleted");
    expectRefused(protocol, await invoke(protocol, key, schedules.get(made.id)), 404, "schedule not found");
    expect((await ok(protocol, key, schedules.list())).map((s: Json) => s.name)).toEqual(["Plain"]);
  });

  it("refuses what is missing or wrong, and another account's schedule", async () => {
    expectMissing(protocol, await invoke(protocol, key, schedules.create({ weekly_hours: WEEKDAYS })), { schedule: ["name"] });
    expectMissing(protocol, await invoke(protocol, key, schedules.create({ name: "  " })), { schedule: ["name"] });
    const made = await ok(protocol, key, schedules.create({ name: "Blank later" }), 201);
    expectRefused(protocol, await invoke(protocol, key, schedules.update(made.id, { name: " " })), 422, "name can't be blank");
    expectRefused(protocol, await invoke(protocol, key, schedules.create({ name: "x".repeat(81) })), 422, "name is too long (maximum is 80 characters)");
    expectRefused(
      protocol,
      await invoke(protocol, key, schedules.create({ name: "Bad", weekly_hours: { ...WEEKDAYS, monday: [{ start: "10:00", end: "09:00" }] } })),
      422,
      "weekly_hours.monday[0].start must be before weekly_hours.monday[0].end",
    );
    const mine = await ok(protocol, key, schedules.create({ name: "Mine" }), 201);
    const other = await newAccount();
    for (const call of [schedules.get(mine.id), schedules.update(mine.id, { name: "Theirs" }), schedules.remove(mine.id)]) {
      expectRefused(protocol, await invoke(protocol, other.key, call), 404, "schedule not found");
    }
    expectRefused(protocol, await invoke(protocol, key, schedules.get("nope")), 404, "schedule not found");
    expect((await ok(protocol, key, schedules.get(mine.id))).name).toBe("Mine");
  });
});

describe("at most 20 schedules", () => {
  it("racing creates never make more than 20; then the 21st is refused, and a delete frees a place", async () => {
    const { key } = await newAccount();
    const TOO_MANY = "an account may have at most 20 schedules";
    const answers = await Promise.all(Array.from({ length: 23 }, (_, i) => invoke(i % 2 === 0 ? "rest" : "grpc", key, schedules.create({ name: `Schedule ${i}` }))));
    const made = answers.filter((a) => a.ok).length;
    expect(made).toBeLessThanOrEqual(20);
    // A loaded machine may make the database miss its deadline for some: those answer 503. Such an answer says
    // nothing of the insert (it may have been done before the deadline passed: a retry with an Idempotency-Key is
    // how a client learns which), so the list holds the created ones and at most those.
    const unavailable = answers.filter((x) => !x.ok && x.message !== TOO_MANY);
    for (const a of unavailable) expect(["service unavailable", "database unavailable"]).toContain(a.message);
    const listed = (await ok("rest", key, schedules.list())).length;
    expect(listed).toBeGreaterThanOrEqual(made);
    expect(listed).toBeLessThanOrEqual(Math.min(20, made + unavailable.length));
    for (let n = listed; n < 20; n++) await ok("rest", key, schedules.create({ name: `Top up ${n}` }), 201);
    for (const protocol of PROTOCOLS) expectRefused(protocol, await invoke(protocol, key, schedules.create({ name: "One too many" })), 422, TOO_MANY);
    expect(await ok("rest", key, schedules.list())).toHaveLength(20);
    const one = (await ok("rest", key, schedules.list()))[0];
    await ok("rest", key, schedules.remove(one.id));
    await ok("grpc", key, schedules.create({ name: "After a delete" }), 201);
  });
});

describe("an event's schedule_id", () => {
  let host: Host;
  beforeAll(async () => {
    host = await newHost({ timezone: "UTC" });
  });

  /** The "HH:MM" starts of the event's slots on one UTC day. */
  async function startsOn(event: Json, day: string): Promise<string[]> {
    const res = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots?date_from=${day}&date_to=${day}&timezone=UTC`);
    return (res.body.data.slots as Json[]).map((s) => (s.start_time as string).slice(11, 16));
  }

  it("books the event by the schedule's hours; deleting a schedule in use is refused naming the events", async () => {
    const weekends = await ok("rest", host.key, schedules.create({ name: "Weekends", weekly_hours: WEEKENDS }), 201);
    const event = await newEvent(host, { name: "Weekend chat", schedule_id: weekends.id });
    expect(event.schedule_id).toBe(weekends.id);
    const other = await newEvent(host, { name: "Anytime" });
    let saturday = dayFromToday(3);
    while (new Date(`${saturday}T00:00:00Z`).getUTCDay() !== 6) saturday = addDay(saturday);
    const monday = addDay(addDay(saturday));
    expect(await startsOn(event, saturday)).toEqual(["10:00", "10:30", "11:00", "11:30"]);
    expect(await startsOn(event, monday)).toEqual([]);
    expect(await startsOn(other, monday)).toHaveLength(48);
    expectSlotRefused("grpc", await invoke("grpc", undefined, publicCalls.book(host.user.url, event.url, { start_time: at(monday, "10:00"), attendee_name: "A", attendee_email: "a@example.com" })), "outside_hours");
    await book(host, event, { start_time: at(saturday, "10:30") });

    // A change of the schedule's hours shows at once.
    await ok("grpc", host.key, schedules.update(weekends.id, { weekly_hours: { ...WEEKENDS, saturday: [{ start: "14:00", end: "15:00" }] } }));
    expect(await startsOn(event, saturday)).toEqual(["14:00", "14:30"]);

    const second = await newEvent(host, { name: "Also weekends", schedule_id: weekends.id });
    for (const protocol of PROTOCOLS) {
      const refused = await invoke(protocol, host.key, schedules.remove(weekends.id));
      expectRefused(protocol, refused, 422, 'schedule is used by the events "Weekend chat", "Also weekends"; give them another schedule_id (or null) first', {
        events: [{ id: event.id, name: "Weekend chat" }, { id: second.id, name: "Also weekends" }].sort((a, b) => (a.id < b.id ? -1 : 1)),
      });
    }
    // Back to the account's availability, then the schedule can go.
    await ok("rest", host.key, events.update(event.id, { schedule_id: null }));
    await ok("rest", host.key, events.remove(second.id));
    expect(await startsOn(event, monday)).toHaveLength(48);
    await ok("connect-h1", host.key, schedules.remove(weekends.id), 200, "schedule deleted");
  });

  it("takes only a schedule of the account", async () => {
    const other = await newAccount();
    const theirs = await ok("rest", other.key, schedules.create({ name: "Theirs" }), 201);
    const mine = await ok("rest", host.key, schedules.create({ name: "Mine" }), 201);
    const res = await rest("POST", "/events", { key: host.key, body: { event: { name: "X", url: "x-theirs", schedule_id: theirs.id } } });
    expect(res.status).toBe(422);
    expect(res.body.data.field).toBe("schedule_id");
    expect(res.body.data.allowed).toContain(mine.id);
    expect(res.body.data.allowed).not.toContain(theirs.id);
  });
});

function addDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}
