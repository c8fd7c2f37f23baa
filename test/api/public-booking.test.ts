// Public booking over every protocol: the event page, slots, booking, the booker's view, cancel and reschedule, and concurrent requests for one slot.
import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { PublicBookingService } from "../../gen/scheduling/v1/public_booking_pb.js";
import { grpcUnary, rest, rpcError, type Json } from "../helpers/api.js";
import { ALWAYS_OPEN, book, dayFromToday, hostCalls, newEvent, newHost, publicCalls, type Host, utcIso as at } from "../helpers/bookings.js";
import { allowedData, expectMissing, expectRefused, expectSlotRefused, invoke, ok, PROTOCOLS, type Protocol } from "../helpers/calls.js";

const TAKEN = "slot is not available";
/** The `data` of a 422 on a visitor's zone: the zones by their IANA names and by the service's names (both are read). */
const IANA_ZONES = allowedData("timezone", expect.arrayContaining(["UTC", "Europe/Berlin", "America/New_York", "Berlin", "Eastern Time (US & Canada)"]));
const NOT_A_ZONE = "timezone is not a valid time zone (an IANA name such as Europe/Berlin, or a service name such as Berlin)";

describe("the event page", () => {
  let host: Host;
  let event: Json;
  let question: Json;

  beforeAll(async () => {
    host = await newHost({ full_name: "Grace Hopper", timezone: "Berlin" });
    const q = await rest("POST", "/questions", { key: host.key, body: { question: { title: "Topic?", question_type: "one_line" } } });
    question = q.body.data;
    event = await newEvent(host, {
      name: "Consultation",
      description: "Line one\nline two",
      slot_duration: "45_minutes",
      location: { name: "in_person", details: "Room 4" },
      enable_guest_emails: true,
      guest_emails_limit: 2,
      event_questions_attributes: [{ question_id: question.id, required: true, order_number: 1 }],
    });
  });

  it.each(PROTOCOLS)("answers what the booking page shows over %s", async (protocol: Protocol) => {
    const page = await ok(protocol, "", publicCalls.event(host.user.url, event.url), 200, "event found");
    expect(page).toMatchObject({
      name: "Consultation",
      description: "Line one<br>line two",
      slot_duration: "45 minutes",
      location_name: "Room 4",
      host_full_name: "Grace Hopper",
      host_timezone: "Europe/Berlin",
      enable_guest_emails: true,
      guest_emails_limit: 2,
      questions: [{ id: question.id, title: "Topic?", question_type: "one_line", required: true, order_number: 1 }],
    });
  });

  it("finds the page whatever the case of its url parts", async () => {
    const res = await rest("GET", `/public/users/${host.user.url.toUpperCase()}/events/${event.url.toUpperCase()}`);
    expect(res.status).toBe(200);
  });

  it.each(PROTOCOLS)("is 404 for unknown, inactive and deleted events over %s", async (protocol: Protocol) => {
    expectRefused(protocol, await invoke(protocol, undefined, publicCalls.event(host.user.url, "no-such-event")), 404, "event not found");
    expectRefused(protocol, await invoke(protocol, undefined, publicCalls.event("no-such-user-x", event.url)), 404, "event not found");
    const inactive = await newEvent(host, { active: false });
    expectRefused(protocol, await invoke(protocol, undefined, publicCalls.event(host.user.url, inactive.url)), 404, "event not found");
    const gone = await newEvent(host);
    await rest("DELETE", `/events/${gone.id}`, { key: host.key });
    expectRefused(protocol, await invoke(protocol, undefined, publicCalls.slots(host.user.url, gone.url)), 404, "event not found");
  });
});

describe("slots", () => {
  let host: Host;
  let event: Json;

  beforeAll(async () => {
    host = await newHost({ timezone: "UTC" }, {
      ...ALWAYS_OPEN,
      weekly_hours: Object.fromEntries(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map((d) => [d, [{ start: "09:00", end: "12:00" }]])),
    });
    event = await newEvent(host, { slot_duration: "1_hour", padding_duration: "15_minutes" });
  });

  it.each(PROTOCOLS)("lists the free slots of a day over %s", async (protocol: Protocol) => {
    const day = dayFromToday(5);
    const data = await ok(protocol, "", publicCalls.slots(host.user.url, event.url, { date_from: day, date_to: day }), 200, "slots found");
    expect(data.timezone).toBe("Etc/UTC");
    expect(data.slots).toEqual([
      { start_time: at(day, "09:00"), end_time: at(day, "10:00") },
      { start_time: at(day, "10:00"), end_time: at(day, "11:00") },
      { start_time: at(day, "11:00"), end_time: at(day, "12:00") },
    ]);
  });

  it("defaults to today and 7 days on, in the host's zone", async () => {
    const res = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots`);
    expect(res.status).toBe(200);
    const days = new Set(res.body.data.slots.map((s: Json) => s.start_time.slice(0, 10)));
    expect(days.has(dayFromToday(7))).toBe(true);
    expect(days.has(dayFromToday(8))).toBe(false);
  });

  it("reads the days in the visitor's zone", async () => {
    const day = dayFromToday(5);
    const res = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots?date_from=${day}&date_to=${day}&timezone=Pacific/Kiritimati`);
    // Kiritimati is UTC+14: its day runs from 10:00 UTC the day before to 10:00 UTC on `day`.
    expect(res.body.data.timezone).toBe("Pacific/Kiritimati");
    expect(res.body.data.slots.map((s: Json) => s.start_time)).toEqual([at(dayFromToday(4), "10:00"), at(dayFromToday(4), "11:00"), at(day, "09:00")]);
  });

  it("leaves out a booked slot and the neighbours its padding reaches", async () => {
    const day = dayFromToday(6);
    await book(host, event, { start_time: at(day, "10:00") });
    const res = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots?date_from=${day}&date_to=${day}`);
    // 10:00-11:00 blocks 10:00-11:15 (padding after only); the 09:00 slot's own padding reaches to 10:15, and 11:00 starts inside it.
    expect(res.body.data.slots).toEqual([]);
  });

  it.each(PROTOCOLS)("refuses bad ranges and zones over %s", async (protocol: Protocol) => {
    const slots = (q: Json) => invoke(protocol, undefined, publicCalls.slots(host.user.url, event.url, q));
    expectRefused(protocol, await slots({ date_from: "2026-02-30" }), 422, "date_from is not a valid date (YYYY-MM-DD)");
    expectRefused(protocol, await slots({ date_to: "soon" }), 422, "date_to is not a valid date (YYYY-MM-DD)");
    expectRefused(protocol, await slots({ date_from: "2026-03-01", date_to: "2026-04-02" }), 422, "date_to must be at most 31 days after date_from");
    expectRefused(protocol, await slots({ date_from: "2026-03-10", date_to: "2026-03-09" }), 422, "date_to must not be before date_from");
    expectRefused(protocol, await slots({ timezone: "Mars/Olympus" }), 422, NOT_A_ZONE, IANA_ZONES);
    // A slip of one letter comes with the zone it most likely was (extensions.md "Allowed values").
    expectRefused(protocol, await slots({ timezone: "Europe/Berln" }), 422, NOT_A_ZONE, { ...IANA_ZONES, suggestion: "Europe/Berlin" });
    // A service name (the host's vocabulary) is read as its IANA zone (extensions.md "Accounts").
    const berlin = await slots({ timezone: "Berlin" });
    expect(berlin.ok).toBe(true);
    const ok31 = await slots({ date_from: "2026-03-01", date_to: "2026-04-01" });
    expect(ok31.ok).toBe(true);
  });
});

describe("padding is kept after each meeting only (docs/spec/extensions.md's example)", () => {
  let host: Host;
  let event: Json;
  const day = dayFromToday(9);
  const starts = async (protocol: Protocol): Promise<string[]> =>
    (await ok(protocol, "", publicCalls.slots(host.user.url, event.url, { date_from: day, date_to: day }), 200, "slots found")).slots.map((s: Json) => s.start_time);

  beforeAll(async () => {
    host = await newHost({ timezone: "UTC" }, {
      ...ALWAYS_OPEN,
      weekly_hours: Object.fromEntries(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map((d) => [d, [{ start: "09:00", end: "12:00" }]])),
    });
    event = await newEvent(host, { slot_duration: "30_minutes", padding_duration: "30_minutes" });
    await book(host, event, { start_time: at(day, "10:00") });
  });

  it.each(PROTOCOLS)("a booking at 10:00 leaves 09:00 and 11:00 free and takes 09:30 and 10:30 over %s", async (protocol: Protocol) => {
    expect(await starts(protocol)).toEqual([at(day, "09:00"), at(day, "11:00"), at(day, "11:30")]);
  });

  it("books exactly what the slots offer", async () => {
    for (const time of ["09:30", "10:30"]) {
      const res = await rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, {
        body: { booking: { start_time: at(day, time), attendee_name: "Late", attendee_email: "late@example.com" } },
      });
      expect({ time, status: res.status, message: res.body.message }).toEqual({ time, status: 409, message: TAKEN });
    }
    // 09:00 with its padding ends as the 10:00 booking starts; 11:00 starts as its padding ends.
    await book(host, event, { start_time: at(day, "09:00") });
    await book(host, event, { start_time: at(day, "11:00") });
    expect(await starts("rest")).toEqual([]);
  });
});

/** The first date after tomorrow (UTC) that is the `nth` Sunday of `month` (1-12); nth -1 is the last. Not tomorrow:
 *  Berlin's change day starts at 22:00 UTC the day before, so late on that Saturday its first hours are gone. */
function nextSunday(month: number, nth: number): string {
  const tomorrow = dayFromToday(1);
  for (let year = Number(tomorrow.slice(0, 4)); ; year++) {
    const sundays: string[] = [];
    for (let day = 1; day <= 31; day++) {
      const date = new Date(Date.UTC(year, month - 1, day));
      if (date.getUTCMonth() === month - 1 && date.getUTCDay() === 0) sundays.push(date.toISOString().slice(0, 10));
    }
    const found = nth > 0 ? sundays[nth - 1] : sundays[sundays.length + nth];
    if (found > tomorrow) return found;
  }
}

describe("slots on daylight-saving change days", () => {
  const earlyHours = (day: string) => ({
    ...ALWAYS_OPEN,
    weekly_hours: {},
    date_overrides: [{ date: day, intervals: [{ start: "01:00", end: "04:00" }] }],
    booking_window_days: 730,
  });

  it("New York springing forward: 01:00-04:00 holds two real hours, so two one-hour slots", async () => {
    const day = nextSunday(3, 2);
    const host = await newHost({ timezone: "Eastern Time (US & Canada)" }, earlyHours(day));
    const event = await newEvent(host, { slot_duration: "1_hour" });
    const res = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots?date_from=${day}&date_to=${day}&timezone=Europe/Berlin`);
    // 01:00 EST is 06:00 UTC; the clock jumps from 02:00 to 03:00 EDT (07:00 UTC), which runs to 04:00 EDT (08:00 UTC).
    expect(res.body.data.slots).toEqual([
      { start_time: at(day, "06:00"), end_time: at(day, "07:00") },
      { start_time: at(day, "07:00"), end_time: at(day, "08:00") },
    ]);
    await book(host, event, { start_time: at(day, "07:00") });
    const after = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots?date_from=${day}&date_to=${day}`);
    expect(after.body.data.slots.map((s: Json) => s.start_time)).toEqual([at(day, "06:00")]);
  });

  it("Berlin falling back: the repeated hour gets no grid time of its own", async () => {
    const day = nextSunday(10, -1);
    const host = await newHost({ timezone: "Berlin" }, earlyHours(day));
    const event = await newEvent(host, { slot_duration: "1_hour" });
    const res = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots?date_from=${day}&date_to=${day}`);
    const before = dayFromTodayOf(day, -1);
    // 01:00 CEST = 23:00 UTC the day before, 02:00 CEST = 00:00 UTC, then 02:00-03:00 again in CET, 03:00 CET = 02:00 UTC.
    expect(res.body.data.timezone).toBe("Europe/Berlin");
    expect(res.body.data.slots.map((s: Json) => s.start_time)).toEqual([at(before, "23:00"), at(day, "00:00"), at(day, "02:00")]);
  });
});

function dayFromTodayOf(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

describe.each(PROTOCOLS)("booking over %s", (protocol: Protocol) => {
  let host: Host;
  let event: Json;
  let required: Json;
  let choice: Json;
  const day = dayFromToday(9);
  const call = (booking?: Json) => invoke(protocol, undefined, publicCalls.book(host.user.url, event.url, booking));
  const base = (over: Json = {}): Json => ({ start_time: at(day, "10:00"), attendee_name: "Alan Turing", attendee_email: "Alan@Example.com", answers: [{ question_id: required.id, value: "Enigma" }], ...over });

  beforeAll(async () => {
    host = await newHost({ full_name: "Host Person" });
    required = (await rest("POST", "/questions", { key: host.key, body: { question: { title: "What about?", question_type: "one_line" } } })).body.data;
    choice = (await rest("POST", "/questions", { key: host.key, body: { question: { title: "Size", question_type: "radio_button", question_details: { options: ["S", "M"] } } } })).body.data;
    event = await newEvent(host, {
      name: "Chat",
      enable_guest_emails: true,
      guest_emails_limit: 1,
      location: { name: "phone_call", selected_option: "host_will_call_invitee", invitee_contact_number: "+49 30 1234567" },
      event_questions_attributes: [
        { question_id: required.id, required: true, order_number: 1 },
        { question_id: choice.id, required: false, order_number: 2 },
      ],
    });
  });

  it("confirms a free slot and shows it to the booker", async () => {
    const b = await ok(protocol, "", publicCalls.book(host.user.url, event.url, base({ timezone: "America/New_York", guest_emails: ["Guest@Example.com"], answers: [{ question_id: required.id, value: "Enigma" }, { question_id: choice.id, value: "M" }] })), 201, "booking confirmed");
    expect(b).toMatchObject({
      status: "confirmed",
      start_time: at(day, "10:00"),
      end_time: at(day, "10:30"),
      event_name: "Chat",
      attendee_name: "Alan Turing",
      attendee_email: "alan@example.com",
      timezone: "America/New_York",
      guest_emails: ["guest@example.com"],
      host_full_name: "Host Person",
      location_name: "Phone call",
      answers: [{ question_id: required.id, value: "Enigma" }, { question_id: choice.id, value: "M" }],
    });
    expect(b.id).toMatch(/^[0-9a-f]{24}$/);
    expect(b.private_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const seen = await ok(protocol, "", publicCalls.get(b.private_key), 200, "booking found");
    expect(seen).toEqual(b);
  });

  it("refuses the same slot, an overlapping one and a time off the grid with 409, saying why", async () => {
    await ok(protocol, "", publicCalls.book(host.user.url, event.url, base({ start_time: at(day, "12:00") })), 201);
    expectSlotRefused(protocol, await call(base({ start_time: at(day, "12:00"), attendee_email: "other@example.com" })), "taken");
    expectSlotRefused(protocol, await call(base({ start_time: at(day, "12:10") })), "not_on_the_grid");
    expectSlotRefused(protocol, await call(base({ start_time: at(dayFromToday(10), "12:10") })), "not_on_the_grid");
    expectSlotRefused(protocol, await call(base({ start_time: "2020-01-01T10:00:00Z" })), "in_the_past");
    expectSlotRefused(protocol, await call(base({ start_time: at(dayFromToday(90), "10:00") })), "too_far");
  });

  it("asks for the missing fields with 400", async () => {
    expectMissing(protocol, await call({}), { booking: ["start_time", "attendee_name", "attendee_email"] });
    expectMissing(protocol, await call(base({ attendee_email: " " })), { booking: ["attendee_email"] });
  });

  it("refuses bad values with 422 naming the field", async () => {
    const d = dayFromToday(11);
    const t = (time: string) => at(d, time);
    expectRefused(protocol, await call(base({ start_time: "tomorrow at ten" })), 422, "start_time is not a valid ISO 8601 time");
    // A time without its offset names no instant: the message says what it lacks.
    expectRefused(protocol, await call(base({ start_time: `${d}T10:00:00` })), 422, "start_time needs a UTC offset or Z, e.g. 2026-12-09T13:00:00Z");
    expectRefused(protocol, await call(base({ start_time: `${d}T10:00` })), 422, "start_time needs a UTC offset or Z, e.g. 2026-12-09T13:00:00Z");
    expectRefused(protocol, await call(base({ start_time: `${d} 10:00:00` })), 422, "start_time needs a UTC offset or Z, e.g. 2026-12-09T13:00:00Z");
    expectRefused(protocol, await call(base({ start_time: t("10:00"), attendee_email: "not-an-email" })), 422, "attendee_email is invalid");
    expectRefused(protocol, await call(base({ start_time: t("10:00"), timezone: "Nowhere/Special" })), 422, NOT_A_ZONE, IANA_ZONES);
    expectRefused(protocol, await call(base({ start_time: t("10:00"), answers: [] })), 422, 'answers: "What about?" is required');
    expectRefused(protocol, await call(base({ start_time: t("10:00"), answers: [{ question_id: required.id, value: "  " }] })), 422, 'answers: "What about?" is required');
    expectRefused(protocol, await call(base({ start_time: t("10:00"), answers: [{ question_id: required.id, value: "x" }, { question_id: choice.id, value: "XL" }] })), 422, "answers[1].value is not one of the options", allowedData("answers[1].value", ["S", "M"]));
    expectRefused(protocol, await call(base({ start_time: t("10:00"), answers: [{ question_id: "0123456789abcdef01234567", value: "x" }] })), 422, "answers[0].question_id is not a question of this event's form");
    expectRefused(protocol, await call(base({ start_time: t("10:00"), guest_emails: ["a@example.com", "b@example.com"] })), 422, "guest_emails has more than 1 entries (the event's limit)");
    expectRefused(protocol, await call(base({ start_time: t("10:00"), guest_emails: ["nope"] })), 422, "guest_emails[0] is invalid");
  });

  it("takes a rating within its scale and records a hidden question's preset, as the page does", async () => {
    const question = async (body: Json): Promise<Json> => (await rest("POST", "/questions", { key: host.key, body: { question: body } })).body.data;
    const rating = await question({ title: "How sure?", question_type: "rating", question_details: { max: 3 } });
    const source = await question({ title: "Source", question_type: "hidden", question_details: { value: "newsletter" } });
    const form = await newEvent(host, { event_questions_attributes: [{ question_id: rating.id, order_number: 1 }, { question_id: source.id, order_number: 2 }] });
    const booking = (value: Json): Json => ({ start_time: at(dayFromToday(14), "09:00"), attendee_name: "A", attendee_email: "a@example.com", answers: [{ question_id: rating.id, value }] });
    for (const value of [4, 0, 2.5, "3"]) {
      const o = await invoke(protocol, undefined, publicCalls.book(host.user.url, form.url, booking(value)));
      expectRefused(protocol, o, 422, "answers[0].value must be a whole number from 1 to 3", allowedData("answers[0].value", [1, 2, 3]));
    }
    const made = await ok(protocol, "", publicCalls.book(host.user.url, form.url, booking(3)), 201, "booking confirmed");
    expect(made.answers).toEqual([{ question_id: rating.id, value: 3 }, { question_id: source.id, value: "newsletter" }]);
  });

  it("refuses guests when the event does not allow them", async () => {
    const plain = await newEvent(host);
    const o = await invoke(protocol, undefined, publicCalls.book(host.user.url, plain.url, { start_time: at(dayFromToday(12), "09:00"), attendee_name: "A", attendee_email: "a@example.com", guest_emails: ["g@example.com"] }));
    expectRefused(protocol, o, 422, "guest_emails are not allowed for this event");
  });

  it("is 404 for an unknown booking key", async () => {
    expectRefused(protocol, await invoke(protocol, undefined, publicCalls.get("no-such-key")), 404, "booking not found");
    expectRefused(protocol, await invoke(protocol, undefined, publicCalls.cancel("no-such-key")), 404, "booking not found");
    expectRefused(protocol, await invoke(protocol, undefined, publicCalls.reschedule("no-such-key", { start_time: at(day, "10:00") })), 404, "booking not found");
  });
});

describe.each(PROTOCOLS)("cancel and reschedule over %s", (protocol: Protocol) => {
  let host: Host;
  let event: Json;
  const day = dayFromToday(14);

  beforeAll(async () => {
    host = await newHost();
    event = await newEvent(host, { slot_duration: "1_hour", padding_duration: "15_minutes" });
  });

  it("cancels once, frees the slot, and refuses a second cancel", async () => {
    const b = await book(host, event, { start_time: at(day, "08:00") });
    const canceled = await ok(protocol, "", publicCalls.cancel(b.private_key, { reason: "Ill" }), 200, "booking canceled");
    expect(canceled).toMatchObject({ id: b.id, status: "canceled", cancel_reason: "Ill" });
    expectRefused(protocol, await invoke(protocol, undefined, publicCalls.cancel(b.private_key)), 422, "booking is canceled, only a confirmed booking can be changed");
    const again = await book(host, event, { start_time: at(day, "08:00") });
    expect(again.status).toBe("confirmed");
  });

  it("moves a booking: a new confirmed booking, the old one rescheduled", async () => {
    const b = await book(host, event, { start_time: at(day, "12:00"), attendee_email: "mover@example.com" });
    const moved = await ok(protocol, "", publicCalls.reschedule(b.private_key, { start_time: at(day, "15:00") }), 201, "booking rescheduled");
    expect(moved).toMatchObject({ status: "confirmed", start_time: at(day, "15:00"), end_time: at(day, "16:00"), attendee_email: "mover@example.com" });
    expect(moved.id).not.toBe(b.id);
    expect(moved.private_key).not.toBe(b.private_key);
    const old = await ok(protocol, "", publicCalls.get(b.private_key));
    expect(old.status).toBe("rescheduled");
    // The old time is free again, the new one taken.
    await book(host, event, { start_time: at(day, "12:00") });
    const o = await invoke(protocol, undefined, publicCalls.book(host.user.url, event.url, { start_time: at(day, "15:00"), attendee_name: "X", attendee_email: "x@example.com" }));
    expectSlotRefused(protocol, o, "taken");
    expectRefused(protocol, await invoke(protocol, undefined, publicCalls.reschedule(b.private_key, { start_time: at(day, "18:00") })), 422, "booking is rescheduled, only a confirmed booking can be changed");
  });

  it("moves a booking onto time its own padding held", async () => {
    const b = await book(host, event, { start_time: at(day, "20:00") });
    const moved = await ok(protocol, "", publicCalls.reschedule(b.private_key, { start_time: at(day, "21:00") }), 201);
    expect(moved.start_time).toBe(at(day, "21:00"));
    const back = await ok(protocol, "", publicCalls.reschedule(moved.private_key, { start_time: at(day, "20:00") }), 201);
    expect(back.start_time).toBe(at(day, "20:00"));
  });

  it("refuses a move onto a taken slot with 409 and keeps the booking", async () => {
    const a = await book(host, event, { start_time: at(dayFromToday(15), "08:00") });
    const b = await book(host, event, { start_time: at(dayFromToday(15), "10:00") });
    expectSlotRefused(protocol, await invoke(protocol, undefined, publicCalls.reschedule(b.private_key, { start_time: at(dayFromToday(15), "08:00") })), "taken");
    expect((await ok(protocol, "", publicCalls.get(b.private_key))).status).toBe("confirmed");
    // b's claim is whole again: a's move onto b's time is refused too.
    expectSlotRefused(protocol, await invoke(protocol, undefined, publicCalls.reschedule(a.private_key, { start_time: at(dayFromToday(15), "10:00") })), "taken");
    expectMissing(protocol, await invoke(protocol, undefined, publicCalls.reschedule(b.private_key, {})), { booking: ["start_time"] });
    const local = `${dayFromToday(15)}T12:00:00`;
    expectRefused(protocol, await invoke(protocol, undefined, publicCalls.reschedule(b.private_key, { start_time: local })), 422, "start_time needs a UTC offset or Z, e.g. 2026-12-09T13:00:00Z");
  });

  it("refuses to cancel or move a booking that has started", async () => {
    const started = await importPast(host, event);
    expectRefused(protocol, await invoke(protocol, undefined, publicCalls.cancel(started)), 422, "booking has already started");
    expectRefused(protocol, await invoke(protocol, undefined, publicCalls.reschedule(started, { start_time: at(day, "06:00") })), 422, "booking has already started");
  });
});

/** A confirmed booking that started an hour ago, moved in through the import; returns its private key. */
async function importPast(host: Host, event: Json): Promise<string> {
  const start = new Date(Date.now() - 3_600_000).toISOString();
  const res = await rest("POST", "/admin/bookings/import", { admin: true, body: { bookings: [{ event_id: event.id, start_time: start, attendee_name: "Past", attendee_email: "past@example.com" }] } });
  expect(res.status).toBe(201);
  const list = await rest("GET", `/events/${event.id}/bookings?category=past`, { key: host.key });
  const record = list.body.data.records.find((r: Json) => r.id === res.body.data.ids[0]);
  return record.private_key;
}

describe("concurrent requests", () => {
  it("lets exactly one of 15 requests for one slot win; the rest get 409", async () => {
    const host = await newHost();
    const event = await newEvent(host);
    const start = at(dayFromToday(20), "10:00");
    const answers = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, {
          body: { booking: { start_time: start, attendee_name: `Racer ${i}`, attendee_email: `racer${i}@example.com` } },
        }),
      ),
    );
    const won = answers.filter((a) => a.status === 201);
    const lost = answers.filter((a) => a.status !== 201);
    expect(won).toHaveLength(1);
    for (const a of lost) expect(a.body).toEqual({ success: false, message: TAKEN, data: { reason: "taken" }, status: "conflict" });
    expect(lost.map((a) => a.status)).toEqual(Array(14).fill(409));
    const list = await rest("GET", `/events/${event.id}/bookings?date_from=${dayFromToday(20)}&date_to=${dayFromToday(20)}`, { key: host.key });
    expect(list.body.data.page.total_records).toBe(1);
  });

  it("never confirms two overlapping bookings across events with different lengths and paddings", async () => {
    const host = await newHost();
    const short = await newEvent(host, { name: "Short", slot_duration: "15_minutes", padding_duration: "5_minutes" });
    const long = await newEvent(host, { name: "Long", slot_duration: "1_hour", padding_duration: "10_minutes" });
    const day = dayFromToday(21);
    // Every request pairs up with at least one other: all overlap 10:00-11:00 once padding is counted.
    const wanted = [
      [short, "10:00"], [short, "10:15"], [short, "10:30"], [short, "10:45"], [short, "09:45"], [short, "11:00"],
      [long, "10:00"], [long, "09:00"], [long, "11:00"], [long, "10:00"], [short, "10:15"], [long, "09:00"],
    ] as const;
    const answers = await Promise.all(
      wanted.map(([event, time], i) =>
        rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, {
          body: { booking: { start_time: at(day, time), attendee_name: `R${i}`, attendee_email: `r${i}@example.com` } },
        }),
      ),
    );
    for (const a of answers) expect([201, 409]).toContain(a.status);
    const confirmed = answers.filter((a) => a.status === 201).map((a) => a.body.data);
    expect(confirmed.length).toBeGreaterThanOrEqual(1);
    const padding = (b: Json) => (b.event_name === "Long" ? 10 : 5);
    // Padding is kept after each meeting only.
    const blocked = confirmed.map((b) => ({ from: new Date(b.start_time).getTime(), to: new Date(b.end_time).getTime() + padding(b) * 60_000 }));
    for (let i = 0; i < blocked.length; i++) {
      for (let j = i + 1; j < blocked.length; j++) {
        expect(blocked[i].from < blocked[j].to && blocked[j].from < blocked[i].to, JSON.stringify([confirmed[i], confirmed[j]])).toBe(false);
      }
    }
  });
});

describe("a visitor over gRPC", () => {
  it("books, reschedules and cancels, and the host sees each step", async () => {
    const host = await newHost();
    const event = await newEvent(host);
    const day = dayFromToday(25);
    const slots = await grpcUnary(PublicBookingService, "listSlots", { userUrl: host.user.url, eventUrl: event.url, dateFrom: day, dateTo: day });
    expect(slots.slots[20]).toMatchObject({ startTime: at(day, "10:00"), endTime: at(day, "10:30") });
    const booked = await grpcUnary(PublicBookingService, "createBooking", {
      userUrl: host.user.url,
      eventUrl: event.url,
      booking: { startTime: at(day, "10:00"), attendeeName: "Via Grpc", attendeeEmail: "grpc@example.com" },
    });
    expect(booked.booking?.status).toBe("confirmed");
    const taken = await rpcError(() =>
      grpcUnary(PublicBookingService, "createBooking", { userUrl: host.user.url, eventUrl: event.url, booking: { startTime: at(day, "10:00"), attendeeName: "B", attendeeEmail: "b@example.com" } }),
    );
    expect({ code: taken.code, message: taken.rawMessage }).toEqual({ code: Code.AlreadyExists, message: `${TAKEN}: taken` });

    const moved = await grpcUnary(PublicBookingService, "rescheduleBooking", { privateKey: booked.booking!.privateKey, booking: { startTime: at(day, "11:00") } });
    expect(moved.booking?.startTime).toBe(at(day, "11:00"));
    const canceled = await grpcUnary(PublicBookingService, "cancelBooking", { privateKey: moved.booking!.privateKey, booking: { reason: "changed my mind" } });
    expect(canceled.booking).toMatchObject({ status: "canceled", cancelReason: "changed my mind" });

    const counts = await ok("rest", host.key, hostCalls.counts(event.id, { date_from: day, date_to: day }), 200, "Counts fetched");
    expect(counts).toEqual({ recent: 0, upcoming: 0, past: 0, canceled: 1, archived: 0, pending: 0 });
    const attendees = await ok("rest", host.key, hostCalls.attendees(event.id), 200, "Attendees found");
    expect(attendees).toMatchObject([{ email: "grpc@example.com", bookings_count: 0, canceled_count: 1, ids: [moved.booking!.id] }]);
  });
});

describe("the answers of booking and rescheduling", () => {
  it("are the booker's view as GET /public/bookings/<key> reads it (they reuse the event and host the request read)", async () => {
    const host = await newHost({ full_name: "Katherine Johnson", timezone: "UTC" });
    const event = await newEvent(host, { slot_duration: "30_minutes", location: { name: "in_person", details: "Room 4" } });
    const day = dayFromToday(6);
    const made = await book(host, event, { start_time: at(day, "10:00"), timezone: "Europe/Paris" });
    const read = await rest("GET", `/public/bookings/${made.private_key}`);
    expect(read.status).toBe(200);
    expect(made).toEqual(read.body.data);
    const moved = await rest("POST", `/public/bookings/${made.private_key}/reschedule`, { body: { booking: { start_time: at(day, "11:00") } } });
    expect(moved.status).toBe(201);
    const movedRead = await rest("GET", `/public/bookings/${moved.body.data.private_key}`);
    expect(moved.body.data).toEqual(movedRead.body.data);
  });
});
