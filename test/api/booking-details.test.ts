// GET /api/v1/bookings/<id> and BookingService.GetBooking over every protocol: the host's whole booking (extensions.md), and its 404s.
import { beforeAll, describe, expect, it } from "vitest";
import { rest, type Json } from "../helpers/api.js";
import { book, dayFromToday, hostCalls, newEvent, newHost, publicCalls, utcIso, type Host } from "../helpers/bookings.js";
import { expectRefused, invoke, ok, PROTOCOLS, type Protocol } from "../helpers/calls.js";

/** The fields extensions.md adds to the record of the bookings list. */
const ADDED = ["answers", "guest_emails", "timezone", "cancel_reason", "canceled_by", "canceled_at", "previous_booking_id", "next_booking_id", "meeting_url", "meeting_status", "reminders"];

/** RPC answers leave unset optional fields out where REST writes null: one shape for both. */
function nullsFilled(b: Json): Json {
  return Object.fromEntries([...new Set([...Object.keys(b), ...ADDED])].map((k) => [k, b[k] ?? null]));
}

let host: Host;
let event: Json;
let topic: Json;
let size: Json;
let retired: Json;

beforeAll(async () => {
  host = await newHost({ full_name: "Grace Hopper", timezone: "UTC" });
  const question = async (title: string, extra: Json = {}) =>
    (await rest("POST", "/questions", { key: host.key, body: { question: { title, question_type: "one_line", ...extra } } })).body.data;
  topic = await question("Topic?");
  size = await question("Size", { question_type: "radio_button", question_details: { options: ["S", "M"] } });
  retired = await question("Old question");
  // The form asks size first, then topic; `retired` is answered, then taken off the form.
  event = await newEvent(host, {
    name: "Consultation",
    enable_guest_emails: true,
    guest_emails_limit: 2,
    event_questions_attributes: [
      { question_id: topic.id, required: true, order_number: 2 },
      { question_id: size.id, required: false, order_number: 1 },
      { question_id: retired.id, required: false, order_number: 3 },
    ],
  });
});

describe("the host's whole booking", () => {
  let booked: Json;
  let moved: Json;

  beforeAll(async () => {
    booked = await book(host, event, {
      start_time: utcIso(dayFromToday(3), "10:00"),
      timezone: "Europe/Paris",
      guest_emails: ["bob@example.com"],
      // Sent in another order than the form's.
      answers: [{ question_id: retired.id, value: "gone soon" }, { question_id: topic.id, value: "Engines" }, { question_id: size.id, value: "M" }],
    });
    const form = (await rest("GET", `/events/${event.id}`, { key: host.key })).body.data.active_event_questions as Json[];
    const entry = form.find((q) => q.question.id === retired.id);
    const off = await rest("PATCH", `/events/${event.id}`, { key: host.key, body: { event: { event_questions_attributes: [{ id: entry.id, destroy: true }] } } });
    expect(off.status).toBe(200);
    const res = await rest("POST", `/public/bookings/${booked.private_key}/reschedule`, { body: { booking: { start_time: utcIso(dayFromToday(3), "12:00") } } });
    expect(res.status).toBe(201);
    moved = res.body.data;
  });

  it.each(PROTOCOLS)("is the record of the list plus answers, guests, zone and reschedule links over %s", async (protocol: Protocol) => {
    const whole = nullsFilled(await ok(protocol, host.key, hostCalls.get(moved.id), 200, "booking found"));
    const list = await ok(protocol, host.key, hostCalls.list(event.id, { date_from: dayFromToday(3), date_to: dayFromToday(3) }));
    const record = nullsFilled(list.records.find((r: Json) => r.id === moved.id));
    // Every field of the list's record, with the same values.
    const { answers, guest_emails, timezone, cancel_reason, canceled_by, canceled_at, previous_booking_id, next_booking_id, reminders, ...rest } = whole;
    // The event has no reminders (test/api/reminders.test.ts has those).
    expect(reminders).toEqual([]);
    expect(rest).toEqual(Object.fromEntries(Object.entries(record).filter(([k]) => !ADDED.includes(k) || k === "meeting_url" || k === "meeting_status")));
    expect({ guest_emails, timezone, cancel_reason, canceled_by, canceled_at, previous_booking_id, next_booking_id }).toEqual({
      guest_emails: ["bob@example.com"],
      timezone: "Europe/Paris",
      cancel_reason: null,
      canceled_by: null,
      canceled_at: null,
      previous_booking_id: booked.id,
      next_booking_id: null,
    });
    // The form's order (size, then topic), the answer to a question no longer on it last; each with its question.
    expect(answers.map((a: Json) => ({ question: null, ...a }))).toEqual([
      { question_id: size.id, question: "Size", value: "M" },
      { question_id: topic.id, question: "Topic?", value: "Engines" },
      { question_id: retired.id, question: "Old question", value: "gone soon" },
    ]);
    expect(whole).toMatchObject({ id: moved.id, status: "confirmed", meeting_url: null, meeting_status: "none", start_time: utcIso(dayFromToday(3), "12:00") });

    const old = nullsFilled(await ok(protocol, host.key, hostCalls.get(booked.id)));
    expect(old).toMatchObject({ status: "rescheduled", previous_booking_id: null, next_booking_id: moved.id });
  });

  it("says who canceled, when and why", async () => {
    const byBooker = await book(host, event, { start_time: utcIso(dayFromToday(4), "10:00"), answers: [{ question_id: topic.id, value: "x" }] });
    const byHost = await book(host, event, { start_time: utcIso(dayFromToday(4), "11:00"), answers: [{ question_id: topic.id, value: "y" }] });
    const before = Date.now();
    expect((await rest("POST", `/public/bookings/${byBooker.private_key}/cancel`, { body: { booking: { reason: "ill" } } })).status).toBe(200);
    expect((await rest("POST", `/bookings/${byHost.id}/cancel`, { key: host.key, body: { booking: {} } })).status).toBe(200);
    for (const protocol of PROTOCOLS) {
      const booker = nullsFilled(await ok(protocol, host.key, hostCalls.get(byBooker.id)));
      expect(booker).toMatchObject({ status: "canceled", cancel_reason: "ill", canceled_by: "booker", timezone: null, guest_emails: [] });
      expect(Date.parse(booker.canceled_at)).toBeGreaterThanOrEqual(before - 1000);
      const hostSide = nullsFilled(await ok(protocol, host.key, hostCalls.get(byHost.id)));
      expect(hostSide).toMatchObject({ status: "canceled", cancel_reason: null, canceled_by: "host" });
      expect(new Date(hostSide.canceled_at).toISOString()).toBe(hostSide.canceled_at);
    }
  });

  it("gives the meeting link and its status: ready for Jitsi", async () => {
    const jitsi = await newHost();
    await rest("PUT", "/integrations/conference", { key: jitsi.key, body: { integration: { provider: "jitsi" } } });
    const conf = await newEvent(jitsi, { location: { name: "conference" } });
    const b = await book(jitsi, conf, { start_time: utcIso(dayFromToday(2), "09:00") });
    for (const protocol of PROTOCOLS) {
      const whole = await ok(protocol, jitsi.key, hostCalls.get(b.id));
      expect(whole).toMatchObject({ meeting_url: b.meeting_url, meeting_status: "ready" });
      expect(whole.meeting_url).toMatch(/^https:\/\/meet\.jit\.si\//);
      const list = await ok(protocol, jitsi.key, hostCalls.list(conf.id, { date_from: dayFromToday(2), date_to: dayFromToday(2) }));
      expect(list.records[0]).toMatchObject({ meeting_url: b.meeting_url, meeting_status: "ready" });
    }
  });

  it.each(PROTOCOLS)("is 404 for another account's booking and for ids that name nothing over %s", async (protocol: Protocol) => {
    const other = await newHost();
    expectRefused(protocol, await invoke(protocol, other.key, hostCalls.get(moved.id)), 404, "booking not found");
    expectRefused(protocol, await invoke(protocol, host.key, hostCalls.get("0123456789abcdef01234567")), 404, "booking not found");
    expectRefused(protocol, await invoke(protocol, host.key, hostCalls.get("nope")), 404, "booking not found");
    // The booker's key is not a booking id.
    expectRefused(protocol, await invoke(protocol, host.key, hostCalls.get(moved.private_key)), 404, "booking not found");
  });

  it("needs the API key", async () => {
    const res = await rest("GET", `/bookings/${moved.id}`);
    expect(res.status).toBe(401);
    // The booker's own view stays where it was.
    expect((await ok("rest", "", publicCalls.get(moved.private_key), 200, "booking found")).id).toBe(moved.id);
  });
});
