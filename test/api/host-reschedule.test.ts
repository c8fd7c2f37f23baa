// The host moves a booking (booking-kinds.md "The host's desk"): POST /bookings/<id>/reschedule over REST and gRPC, not bound by the cancel notice, the event's rules set aside only with override_rules, never onto a taken time; the booker's e-mail says the host moved it, with the reason (real SMTP), and so does the webhook.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt, type Json } from "../helpers/api.js";
import { dayFromToday, deskCalls, hostCalls, publicCalls, utcIso, type Host } from "../helpers/bookings.js";
import { expectMissing, expectRefused, expectSlotRefused, invoke, ok, type Protocol } from "../helpers/calls.js";
import { MORNINGS } from "../helpers/fixtures.js";
import { useMailServer } from "../helpers/mailServer.js";
import type { ReceivedMail } from "../helpers/smtp.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";

const DAY = dayFromToday(4);
const at = (time: string, day = DAY) => utcIso(day, time);
/** A week's cancel notice binds the booker of a booking four days out; two days' notice keeps tomorrow from being booked. */
const RULES = { cancel_notice_minutes: 7 * 24 * 60, minimum_notice_minutes: 2 * 24 * 60 };

const mail = useMailServer({ OUTBOUND_ALLOW_PRIVATE: "true" });
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});
const fixtures = () => mail.fixtures();
let seq = 0;
const newEvent = (host: Host, over: Json = {}) => fixtures().newEvent(host, { name: `Moved call ${process.pid} ${++seq}`, url: `moved-${process.pid}-${seq}`, ...RULES, ...over });
const booker = (start: string, over: Json = {}) => ({ start_time: start, attendee_name: "Ada Lovelace", attendee_email: "ada@example.com", ...over });

describe.each(["rest", "grpc"] as Protocol[])("the host moves a booking over %s", (protocol) => {
  let host: Host;
  let event: Json;
  beforeAll(async () => {
    host = await fixtures().newHost({ timezone: "UTC", full_name: "Grace Hopper" }, MORNINGS);
    event = await newEvent(host);
  });

  it("moves it: 201 booking rescheduled, the new booking confirmed at the time as GET shows it, the old one rescheduled; the cancel notice binds the booker only", async () => {
    const made = await fixtures().book(host, event, booker(at("09:00")));
    // Four days out under a week's notice: the booker may no longer move it.
    expectRefused("rest", await invoke("rest", undefined, publicCalls.reschedule(made.private_key, { start_time: at("10:00") })), 422, "booking can no longer be changed", {
      changeable_until: new Date(Date.parse(at("09:00")) - RULES.cancel_notice_minutes * 60_000).toISOString(),
      cancel_notice_minutes: RULES.cancel_notice_minutes,
    });
    const moved = await ok(protocol, host.key, deskCalls.reschedule(made.id, { start_time: at("10:00") }), 201, "booking rescheduled");
    expect(moved).toMatchObject({ status: "confirmed", start_time: at("10:00"), end_time: at("10:30"), previous_booking_id: made.id, attendee_email: "ada@example.com" });
    expect(moved.id).not.toBe(made.id);
    expect(moved).toEqual(await ok(protocol, host.key, hostCalls.get(moved.id)));
    expect(await ok(protocol, host.key, hostCalls.get(made.id))).toMatchObject({ status: "rescheduled", next_booking_id: moved.id });
    // Moved again, and the booking it replaced can no longer be moved.
    expect((await ok(protocol, host.key, deskCalls.reschedule(moved.id, { start_time: at("11:00") }), 201)).start_time).toBe(at("11:00"));
    expectRefused(protocol, await invoke(protocol, host.key, deskCalls.reschedule(made.id, { start_time: at("11:30") })), 422, "booking is rescheduled, only a confirmed booking can be changed");
  });

  it("outside the notice or the hours, or off the grid: refused without override_rules, moved with it", async () => {
    const made = await fixtures().book(host, event, booker(at("09:30")));
    const soon = at("10:00", dayFromToday(1));
    expectSlotRefused(protocol, await invoke(protocol, host.key, deskCalls.reschedule(made.id, { start_time: soon })), "too_soon");
    expectSlotRefused(protocol, await invoke(protocol, host.key, deskCalls.reschedule(made.id, { start_time: at("14:00"), override_rules: false })), "outside_hours");
    expectSlotRefused(protocol, await invoke(protocol, host.key, deskCalls.reschedule(made.id, { start_time: at("11:10") })), "not_on_the_grid");
    const late = await ok(protocol, host.key, deskCalls.reschedule(made.id, { start_time: at("14:00"), override_rules: true }), 201, "booking rescheduled");
    expect(late).toMatchObject({ status: "confirmed", start_time: at("14:00") });
    const early = await ok(protocol, host.key, deskCalls.reschedule(late.id, { start_time: soon, override_rules: true }), 201, "booking rescheduled");
    expect(early).toMatchObject({ status: "confirmed", start_time: soon });
  });

  it("never onto another booking or a past time, even with override_rules", async () => {
    const mine = await fixtures().book(host, event, booker(at("10:00", dayFromToday(5))));
    const other = await fixtures().book(host, event, booker(at("11:00", dayFromToday(5)), { attendee_email: "other@example.com" }));
    expectSlotRefused(protocol, await invoke(protocol, host.key, deskCalls.reschedule(mine.id, { start_time: other.start_time, override_rules: true })), "taken");
    expectSlotRefused(protocol, await invoke(protocol, host.key, deskCalls.reschedule(mine.id, { start_time: at("10:45", dayFromToday(5)), override_rules: true })), "taken");
    expectSlotRefused(protocol, await invoke(protocol, host.key, deskCalls.reschedule(mine.id, { start_time: at("10:00", dayFromToday(-1)), override_rules: true })), "in_the_past");
    // Nothing moved: both still stand where they were.
    expect(await ok(protocol, host.key, hostCalls.get(mine.id))).toMatchObject({ status: "confirmed", start_time: mine.start_time });
    expect(await ok(protocol, host.key, hostCalls.get(other.id))).toMatchObject({ status: "confirmed", start_time: other.start_time });
  });

  it("answers 404 for another account's booking, 400 without a start_time, 422 for a reason too long or a time without its offset", async () => {
    const made = await fixtures().book(host, event, booker(at("11:30", dayFromToday(5))));
    const stranger = await fixtures().newHost();
    expectRefused(protocol, await invoke(protocol, stranger.key, deskCalls.reschedule(made.id, { start_time: at("09:00", dayFromToday(6)) })), 404, "booking not found");
    expectMissing(protocol, await invoke(protocol, host.key, deskCalls.reschedule(made.id, { reason: "no time given" })), { booking: ["start_time"] });
    const long = await invoke(protocol, host.key, deskCalls.reschedule(made.id, { start_time: at("09:00", dayFromToday(6)), reason: "x".repeat(501) }));
    expect(long.ok).toBe(false);
    expect(protocol === "rest" ? long.http : undefined).toBe(protocol === "rest" ? 422 : undefined);
    expect(long.message).toMatch(/reason is too long/);
    const local = `${dayFromToday(6)}T09:00:00`;
    expectRefused(protocol, await invoke(protocol, host.key, deskCalls.reschedule(made.id, { start_time: local })), 422, "start_time needs a UTC offset or Z, e.g. 2026-12-09T13:00:00Z");
    expect(await ok(protocol, host.key, hostCalls.get(made.id))).toMatchObject({ status: "confirmed", start_time: made.start_time });
  });
});

describe("under an Idempotency-Key", () => {
  it("a repeat answers the same move and moves nothing twice", async () => {
    const host = await fixtures().newHost({ timezone: "UTC" }, MORNINGS);
    const event = await newEvent(host);
    const made = await fixtures().book(host, event, booker(at("09:00", dayFromToday(7))));
    const move = () =>
      restAt(mail.server().baseUrl, "POST", `/api/v1/bookings/${made.id}/reschedule`, {
        key: host.key,
        headers: { "Idempotency-Key": `move-${made.id}` },
        body: { booking: { start_time: at("10:00", dayFromToday(7)) } },
      });
    const first = await move();
    const again = await move();
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.data.id).toBe(first.body.data.id);
    const list = await ok("rest", host.key, deskCalls.list({ event_id: [event.id], status: ["confirmed"] }));
    expect(list.bookings.map((b: Json) => b.id)).toEqual([first.body.data.id]);
  });
});

describe("who is told", () => {
  const rescheduled = (address: string, event: Json) => (m: ReceivedMail) => m.envelope.to.includes(address) && (m.parsed.subject ?? "").startsWith(`Rescheduled: ${event.name}`);

  it("the booker's, the guests' and the host's e-mails say the host moved it, with the reason; the webhook says rescheduled_by host and the reason", async () => {
    const host = await fixtures().newHost({ timezone: "UTC", full_name: "Grace Hopper" }, MORNINGS);
    const event = await newEvent(host, { enable_guest_emails: true, guest_emails_limit: 2 });
    const hook = `/moves-${host.user.id}`;
    const made = await fixtures().book(host, event, booker(at("09:00", dayFromToday(8)), { attendee_email: "ada-moved@example.com", guest_emails: ["guest-moved@example.com"] }));
    const created = await restAt(mail.server().baseUrl, "POST", "/api/v1/webhooks", { key: host.key, body: { webhook: { url: receiver.url(hook), events: ["booking.rescheduled"] } } });
    expect(created.status).toBe(201);
    receiver.secret(hook, created.body.data.secret);
    const moved = await ok("rest", host.key, deskCalls.reschedule(made.id, { start_time: at("10:00", dayFromToday(8)), reason: "My flight was moved" }), 201, "booking rescheduled");

    const [toBooker] = await mail.smtp().waitFor(1, rescheduled("ada-moved@example.com", event), 30_000);
    expect(toBooker.parsed.text).toContain("Grace Hopper has moved your booking to a new time.");
    expect(toBooker.parsed.text).toContain("Reason: My flight was moved");
    // The new booking's manage link: the booker may still move or cancel it.
    expect(toBooker.parsed.text).toContain(`/booking/${moved.private_key}`);
    const [toGuest] = await mail.smtp().waitFor(1, rescheduled("guest-moved@example.com", event), 30_000);
    expect(toGuest.parsed.text).toContain("Grace Hopper has given the meeting that Ada Lovelace invited you to a new time.");
    expect(toGuest.parsed.text).toContain("Reason: My flight was moved");
    const [toHost] = await mail.smtp().waitFor(1, rescheduled(host.user.email, event), 30_000);
    expect(toHost.parsed.text).toContain("You have moved the booking with Ada Lovelace to a new time.");

    const [message] = await receiver.waitFor(hook, 1);
    expect(message.message).toMatchObject({
      type: "booking.rescheduled",
      data: { previous_booking_id: made.id, rescheduled_by: "host", reschedule_reason: "My flight was moved", booking: { id: moved.id, start_time: at("10:00", dayFromToday(8)) } },
    });
  });

  it("the booker's own move still reads as theirs: rescheduled_by booker, no reason", async () => {
    const host = await fixtures().newHost({ timezone: "UTC", full_name: "Grace Hopper" }, MORNINGS);
    const event = await newEvent(host, { cancel_notice_minutes: 0 });
    const hook = `/own-moves-${host.user.id}`;
    const made = await fixtures().book(host, event, booker(at("09:00", dayFromToday(9)), { attendee_email: "ada-own@example.com" }));
    const created = await restAt(mail.server().baseUrl, "POST", "/api/v1/webhooks", { key: host.key, body: { webhook: { url: receiver.url(hook), events: ["booking.rescheduled"] } } });
    receiver.secret(hook, created.body.data.secret);
    const own = await invoke("rest", undefined, publicCalls.reschedule(made.private_key, { start_time: at("10:00", dayFromToday(9)) }));
    expect({ http: own.http, message: own.message }).toEqual({ http: 201, message: "booking rescheduled" });
    const [toBooker] = await mail.smtp().waitFor(1, rescheduled("ada-own@example.com", event), 30_000);
    expect(toBooker.parsed.text).toContain("Your booking with Grace Hopper has been moved to a new time.");
    expect(toBooker.parsed.text).not.toContain("Reason:");
    const [toHost] = await mail.smtp().waitFor(1, rescheduled(host.user.email, event), 30_000);
    expect(toHost.parsed.text).toContain("Ada Lovelace has moved their booking to a new time.");
    const [message] = await receiver.waitFor(hook, 1);
    expect(message.message?.data).toMatchObject({ previous_booking_id: made.id, rescheduled_by: "booker", reschedule_reason: null });
  });
});
