// The host's desk for team events (booking-kinds.md "The host's desk", teams.md, docs/teams.md "Booking for someone"): the team's owner and admins book a team event for someone (round robin by the team rules, collective with every host free, override_rules never over a booking) and answer its requests; a member 403 at the desk, 404 on a request they do not hold; a stranger 404.
import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { rest, type Json } from "../helpers/api.js";
import { dayFromToday, deskCalls, hostCalls, utcIso } from "../helpers/bookings.js";
import { expectRefused, expectSlotRefused, invoke, ok, PROTOCOLS, type Protocol } from "../helpers/calls.js";
import { newHost, type Host } from "../helpers/fixtures.js";
import { bookTeam, collectiveTeam, teams } from "../helpers/teams.js";

const DAY = dayFromToday(6);
const at = (time: string, day = DAY) => utcIso(day, time);
const attendee = (start: string, over: Json = {}) => ({ start_time: start, attendee_name: "Ada Lovelace", attendee_email: "ada@example.com", ...over });

/** 403 over REST, PERMISSION_DENIED over RPC. */
function expectForbidden(protocol: Protocol, o: Awaited<ReturnType<typeof invoke>>): void {
  expect(o.ok).toBe(false);
  if (protocol === "rest") expect(o.http).toBe(403);
  else expect(o.code).toBe(Code.PermissionDenied);
}

let a: Host;
let b: Host;
let c: Host;
let admin: Host;
let member: Host;
let stranger: Host;
let team: Json;
let collective: Json;

beforeAll(async () => {
  // a owns the team; b and c host its events (plain members); admin administers it; member is a plain member who hosts nothing.
  ({ a, b, c, team, collective } = await collectiveTeam("Desk"));
  [admin, member, stranger] = await Promise.all([newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" })]);
  for (const [h, role] of [
    [admin, "admin"],
    [member, "member"],
  ] as const) {
    const invited = await ok("rest", a.key, teams.invite(team.id, { email: h.user.email, role }), 201);
    await ok("rest", h.key, teams.accept(invited.id));
  }
});

/** A round robin event of b and c, one booking a day per host and waiting for the host's answer: neither binds the desk's booking. */
const roundRobinEvent = (url: string) =>
  ok("rest", a.key, teams.createEvent(team.id, { name: `Intro ${url}`, url, slot_duration: "30_minutes", scheduling: "round_robin", requires_confirmation: true, daily_limit: 1, hosts: [{ user_id: b.user.id }, { user_id: c.user.id }] }), 201);

describe.each(PROTOCOLS)("the team's owner and admins book a team event for someone over %s", (protocol) => {
  let rr: Json;
  let panel: Json;
  const day = dayFromToday(7 + PROTOCOLS.indexOf(protocol));
  beforeAll(async () => {
    rr = await roundRobinEvent(`desk-${PROTOCOLS.indexOf(protocol)}`);
    panel = collective;
  });

  it("round robin: 201 booking confirmed (never pending) with the host the rules pick; the next one gets the other host", async () => {
    const first = await ok(protocol, a.key, deskCalls.book(rr.id, attendee(at("09:00", day))), 201, "booking confirmed");
    expect(first).toMatchObject({ status: "confirmed", start_time: at("09:00", day), event_id: rr.id, team: { id: team.id } });
    expect(first.hosts).toHaveLength(1);
    expect([b.user.id, c.user.id]).toContain(first.hosts[0].user_id);
    expect(first.assignment_reason).toMatch(/priority/);
    // The owner reads what they booked; its host holds it.
    expect(await ok(protocol, a.key, hostCalls.get(first.id))).toEqual(first);
    const host = first.hosts[0].user_id === b.user.id ? b : c;
    expect((await ok(protocol, host.key, hostCalls.get(first.id))).id).toBe(first.id);
    const second = await ok(protocol, admin.key, deskCalls.book(rr.id, attendee(at("09:00", day), { attendee_email: "bo@example.com" })), 201, "booking confirmed");
    expect(second.status).toBe("confirmed");
    expect(second.hosts[0].user_id).not.toBe(first.hosts[0].user_id);
  });

  it("override_rules leaves out the daily limit, never another booking: both hosts busy is 409 taken even then", async () => {
    expectSlotRefused(protocol, await invoke(protocol, a.key, deskCalls.book(rr.id, attendee(at("10:00", day)))), "daily_limit");
    const over = await ok(protocol, a.key, deskCalls.book(rr.id, attendee(at("10:00", day), { override_rules: true })), 201, "booking confirmed");
    expect(over.status).toBe("confirmed");
    expectSlotRefused(protocol, await invoke(protocol, a.key, deskCalls.book(rr.id, attendee(at("09:00", day), { override_rules: true }))), "taken");
  });

  it("collective: every host free or 409, with override_rules too; booked, it holds every host", async () => {
    // One host of the panel holds the round robin booking of 10:00, the other is free: the panel is not.
    expectSlotRefused(protocol, await invoke(protocol, a.key, deskCalls.book(panel.id, attendee(at("10:00", day), { override_rules: true }))), "taken");
    const made = await ok(protocol, admin.key, deskCalls.book(panel.id, attendee(at("12:00", day))), 201, "booking confirmed");
    expect(made.hosts.map((h: Json) => h.user_id).sort()).toEqual([b.user.id, c.user.id].sort());
  });

  it("a plain member (a host of the event too) 403, a stranger 404", async () => {
    expectForbidden(protocol, await invoke(protocol, member.key, deskCalls.book(rr.id, attendee(at("15:00", day)))));
    expectForbidden(protocol, await invoke(protocol, b.key, deskCalls.book(rr.id, attendee(at("15:00", day)))));
    expectRefused(protocol, await invoke(protocol, stranger.key, deskCalls.book(rr.id, attendee(at("15:00", day)))), 404, "event not found");
  });
});

describe("a team booking made for someone", () => {
  it("notify_attendee false: the attendee is not reminded (as for a personal event)", async () => {
    const rr = await roundRobinEvent("desk-quiet");
    const made = await ok("rest", a.key, deskCalls.book(rr.id, attendee(at("09:00"), { notify_attendee: false })), 201, "booking confirmed");
    const view = await rest("GET", `/public/bookings/${made.private_key}`);
    expect(view.body.data).toMatchObject({ status: "confirmed", reminders_enabled: false });
  });
});

describe.each(PROTOCOLS)("a team event's requests over %s", (protocol) => {
  it("the team's owner and admins confirm and decline them as its host does; a member who does not hold it and a stranger 404", async () => {
    const rr = await roundRobinEvent(`req-${PROTOCOLS.indexOf(protocol)}`);
    const day = dayFromToday(12 + PROTOCOLS.indexOf(protocol));
    const asked = await Promise.all([bookTeam(team, rr, at("09:00", day), "one@example.com"), bookTeam(team, rr, at("09:00", day), "two@example.com")]);
    expect(asked.map((r) => [r.status, r.body.data.status])).toEqual([
      [201, "pending"],
      [201, "pending"],
    ]);
    const [one, two] = asked.map((r) => r.body.data.id as string);
    // A booking a member holds no part of is as unknown to them as on the other booking routes.
    expectRefused(protocol, await invoke(protocol, member.key, hostCalls.confirm(one)), 404, "booking not found");
    expectRefused(protocol, await invoke(protocol, stranger.key, hostCalls.confirm(one)), 404, "booking not found");
    expectRefused(protocol, await invoke(protocol, stranger.key, hostCalls.decline(two)), 404, "booking not found");
    expect((await ok(protocol, a.key, hostCalls.confirm(one), 200, "booking confirmed")).status).toBe("confirmed");
    expect((await ok(protocol, admin.key, hostCalls.decline(two, { reason: "Full" }), 200, "booking declined")).status).toBe("declined");
    expectRefused(protocol, await invoke(protocol, admin.key, hostCalls.confirm(two)), 422, "booking is not pending");
  });
});

describe("seats on a round robin event (docs/teams.md \"Seats\")", () => {
  it("the slot shows seats_left; later seats join the host of its first seat, even when round robin would pick another; then 409 full", async () => {
    const seated = await ok("rest", a.key, teams.createEvent(team.id, { name: "Seated intro", url: "seated", slot_duration: "30_minutes", scheduling: "round_robin", seats_per_slot: 2, hosts: [{ user_id: b.user.id }, { user_id: c.user.id }] }), 201);
    const day = dayFromToday(20);
    const slotAt = async (time: string) => {
      const res = await rest("GET", `/public/teams/${team.url}/events/${seated.url}/slots?date_from=${day}&date_to=${day}&timezone=UTC`);
      expect(res.status).toBe(200);
      return res.body.data.slots.find((s: Json) => s.start_time === at(time, day));
    };
    expect((await slotAt("09:00")).seats_left).toBe(2);
    const first = await bookTeam(team, seated, at("09:00", day), "one@example.com");
    expect(first.status).toBe(201);
    expect((await slotAt("09:00")).seats_left).toBe(1);
    // The other host has no booking of the event: round robin alone would give them the second seat.
    const second = await bookTeam(team, seated, at("09:00", day), "two@example.com");
    expect([second.status, second.body.data.hosts]).toEqual([201, first.body.data.hosts]);
    expect(await slotAt("09:00")).toBeUndefined();
    const third = await bookTeam(team, seated, at("09:00", day), "three@example.com");
    expect([third.status, third.body.message, third.body.data]).toEqual([409, "slot is not available", { reason: "full" }]);
    // Another time is the other host's to open.
    const other = await bookTeam(team, seated, at("10:00", day), "four@example.com");
    expect(other.body.data.hosts[0].user_id).not.toBe(first.body.data.hosts[0].user_id);
  });
});
