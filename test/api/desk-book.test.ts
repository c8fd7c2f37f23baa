// The host books for someone (booking-kinds.md "The host's desk"): POST /events/<id>/bookings on every protocol, refused outside the event's rules unless override_rules, never a double booking even then, always confirmed; notify_attendee false mails nobody but the host (real SMTP).
import { beforeAll, describe, expect, it } from "vitest";
import { restAt, type Json } from "../helpers/api.js";
import { dayFromToday, deskCalls, hostCalls, utcIso, type Host } from "../helpers/bookings.js";
import { expectMissing, expectRefused, expectSlotRefused, invoke, ok, PROTOCOLS } from "../helpers/calls.js";
import { MORNINGS } from "../helpers/fixtures.js";
import { useMailServer } from "../helpers/mailServer.js";
import type { ReceivedMail } from "../helpers/smtp.js";

const DAY = dayFromToday(4);
const at = (time: string) => utcIso(DAY, time);

const mail = useMailServer();
const fixtures = () => mail.fixtures();
let seq = 0;
const newEvent = (host: Host, over: Json = {}) => fixtures().newEvent(host, { name: `Desk call ${process.pid} ${++seq}`, url: `desk-${process.pid}-${seq}`, ...over });
const attendee = (start: string, over: Json = {}) => ({ start_time: start, attendee_name: "Ada Lovelace", attendee_email: "ada@example.com", ...over });

describe.each(PROTOCOLS)("the host books for someone over %s", (protocol) => {
  let host: Host;
  let event: Json;
  beforeAll(async () => {
    host = await fixtures().newHost({ timezone: "UTC" }, MORNINGS);
    // Waiting for the host's answer, limited to one a day: neither binds the host's own booking for someone.
    event = await newEvent(host, { requires_confirmation: true, daily_limit: 1 });
  });

  it("books a free slot: 201 booking confirmed, never pending, the whole booking as GET shows it", async () => {
    const made = await ok(protocol, host.key, deskCalls.book(event.id, attendee(at("09:00"))), 201, "booking confirmed");
    expect(made).toMatchObject({ status: "confirmed", start_time: at("09:00"), attendee_email: "ada@example.com", event_id: event.id });
    expect(made).toEqual(await ok(protocol, host.key, hostCalls.get(made.id)));
  });

  it("outside working hours, off the grid, past the daily limit: refused without override_rules, booked with it", async () => {
    // The limit of one a day is used by the booking above.
    expectSlotRefused(protocol, await invoke(protocol, host.key, deskCalls.book(event.id, attendee(at("10:00")))), "daily_limit");
    expectSlotRefused(protocol, await invoke(protocol, host.key, deskCalls.book(event.id, attendee(at("14:00")))), "outside_hours");
    expectSlotRefused(protocol, await invoke(protocol, host.key, deskCalls.book(event.id, attendee(at("09:40"), { override_rules: false }))), "not_on_the_grid");
    const late = await ok(protocol, host.key, deskCalls.book(event.id, attendee(at("14:00"), { override_rules: true })), 201, "booking confirmed");
    expect(late).toMatchObject({ status: "confirmed", start_time: at("14:00") });
    const odd = await ok(protocol, host.key, deskCalls.book(event.id, attendee(at("15:07"), { override_rules: true })), 201, "booking confirmed");
    expect(odd.end_time).toBe(at("15:37"));
    // Beyond the booking window too.
    const far = utcIso(dayFromToday(40), "20:00");
    expectSlotRefused(protocol, await invoke(protocol, host.key, deskCalls.book(event.id, attendee(far))), "too_far");
    expect((await ok(protocol, host.key, deskCalls.book(event.id, attendee(far, { override_rules: true })), 201)).start_time).toBe(far);
  });

  it("never a double booking, a past time or a start off the minute, even with override_rules", async () => {
    const other = await newEvent(host);
    // 09:00-09:30 is taken (the first test), and 14:00-14:30.
    expectSlotRefused(protocol, await invoke(protocol, host.key, deskCalls.book(other.id, attendee(at("09:00"), { override_rules: true }))), "taken");
    expectSlotRefused(protocol, await invoke(protocol, host.key, deskCalls.book(other.id, attendee(at("14:15"), { override_rules: true }))), "taken");
    expectSlotRefused(protocol, await invoke(protocol, host.key, deskCalls.book(other.id, attendee(utcIso(dayFromToday(-1), "10:00"), { override_rules: true }))), "in_the_past");
    expectSlotRefused(protocol, await invoke(protocol, host.key, deskCalls.book(other.id, attendee(`${DAY}T16:00:30Z`, { override_rules: true }))), "not_on_the_grid");
  });

  it("answers 404 for another account's event and 400 without the booking's fields", async () => {
    const stranger = await fixtures().newHost();
    expectRefused(protocol, await invoke(protocol, stranger.key, deskCalls.book(event.id, attendee(at("11:00")))), 404, "event not found");
    expectMissing(protocol, await invoke(protocol, host.key, deskCalls.book(event.id, { override_rules: true })), { booking: ["start_time", "attendee_name", "attendee_email"] });
    expectMissing(protocol, await invoke(protocol, host.key, deskCalls.book(event.id, null)), { booking: [] });
  });
});

describe("notify_attendee", () => {
  it("false: the attendee and the guests get no e-mail, the host does; true (the default): everyone does", async () => {
    const host = await fixtures().newHost({ timezone: "UTC" });
    const quiet = await newEvent(host, { enable_guest_emails: true, guest_emails_limit: 2 });
    const told = await newEvent(host, { enable_guest_emails: true, guest_emails_limit: 2 });
    const made = await ok("rest", host.key, deskCalls.book(quiet.id, attendee(at("10:00"), { notify_attendee: false, guest_emails: ["guest@example.com"] })), 201, "booking confirmed");
    await ok("rest", host.key, deskCalls.book(told.id, attendee(at("11:00"), { guest_emails: ["guest@example.com"] })), 201, "booking confirmed");
    const of = (event: Json) => (m: ReceivedMail) => (m.parsed.subject ?? "").includes(event.name);
    const toldMails = await mail.smtp().waitFor(3, of(told), 30_000);
    expect(toldMails.map((m) => m.envelope.to.join()).sort()).toEqual(["ada@example.com", "guest@example.com", host.user.email].sort());
    const quietMails = await mail.smtp().waitFor(1, of(quiet), 30_000);
    expect(quietMails.map((m) => m.envelope.to.join())).toEqual([host.user.email]);
    // Booked before the other, so its mails would have gone out by now; the booker's view says the guests were not told.
    expect(mail.smtp().received.filter(of(quiet)).map((m) => m.envelope.to.join())).toEqual([host.user.email]);
    const view = await restAt(mail.server().baseUrl, "GET", `/api/v1/public/bookings/${made.private_key}`);
    expect(view.body.data).toMatchObject({ guests_notified: false, reminders_enabled: false });
  });
});
