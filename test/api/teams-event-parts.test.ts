// What hangs on a team event besides its reminders (teams.md: everything a personal event does, per host): its bookings list, counts and attendees, its booking form (the questions of the owner or admin who puts them on it), and its single-use links (booking-kinds.md), for the team's owner and admins (a member 403, a stranger 404); the personal event routes stay the owner's own.
import { beforeAll, describe, expect, it } from "vitest";
import { baseUrl, rest, type Json } from "../helpers/api.js";
import { dayFromToday, newHost, utcIso, type Host } from "../helpers/fixtures.js";
import { bookTeam, collectiveTeam, teams } from "../helpers/teams.js";
import { ok } from "../helpers/calls.js";

const DAY = dayFromToday(5);
const at = (time: string) => utcIso(DAY, time);

let a: Host;
let b: Host;
let c: Host;
let stranger: Host;
let team: Json;
let collective: Json;
let roundRobin: Json;

beforeAll(async () => {
  ({ a, b, c, team, collective } = await collectiveTeam("Parts"));
  stranger = await newHost({ timezone: "UTC" });
  roundRobin = await ok("rest", a.key, teams.createEvent(team.id, { name: "Intro", url: "intro", slot_duration: "30_minutes", scheduling: "round_robin", hosts: [{ user_id: b.user.id }, { user_id: c.user.id }] }), 201);
});

describe("a team event's bookings", () => {
  it("list, counts and attendees for the team's owner, every host's bookings; a member 403, a stranger 404", async () => {
    // Round robin at two times at once: the two bookings go to two hosts, each kept under their own account.
    const made = await Promise.all([bookTeam(team, roundRobin, at("09:00"), "one@example.com"), bookTeam(team, roundRobin, at("09:00"), "two@example.com"), bookTeam(team, collective, at("11:00"), "three@example.com")]);
    expect(made.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(new Set(made.slice(0, 2).map((r) => r.body.data.hosts[0].user_id)).size).toBe(2);

    const list = await rest("GET", `/events/${roundRobin.id}/bookings?category=upcoming`, { key: a.key });
    expect([list.status, list.body.message]).toEqual([200, "Bookings found"]);
    expect(list.body.data.records.map((r: Json) => r.id).sort()).toEqual(made.slice(0, 2).map((r) => r.body.data.id).sort());
    const counts = await rest("GET", `/events/${roundRobin.id}/bookings_counts`, { key: a.key });
    expect([counts.status, counts.body.data.upcoming]).toEqual([200, 2]);
    const attendees = await rest("GET", `/events/${roundRobin.id}/attendees`, { key: a.key });
    expect(attendees.status).toBe(200);
    expect(attendees.body.data.map((x: Json) => x.email).sort()).toEqual(["one@example.com", "two@example.com"]);
    const panel = await rest("GET", `/events/${collective.id}/bookings?category=upcoming`, { key: a.key });
    expect(panel.body.data.records.map((r: Json) => r.id)).toEqual([made[2].body.data.id]);

    // A new booking shows at once (the snapshot of the team's event follows its writes).
    const later = await bookTeam(team, roundRobin, at("10:00"), "four@example.com");
    expect(later.status).toBe(201);
    expect((await rest("GET", `/events/${roundRobin.id}/bookings_counts`, { key: a.key })).body.data.upcoming).toBe(3);

    for (const [who, status] of [[b, 403], [stranger, 404]] as const) {
      for (const path of ["bookings", "bookings_counts", "attendees"]) expect((await rest("GET", `/events/${roundRobin.id}/${path}`, { key: who.key })).status, `${path} ${status}`).toBe(status);
    }
    // The personal event routes stay the owner's own (the team's routes change a team event); booking it for an attendee is the owner's (test/api/teams-desk.test.ts).
    expect((await rest("GET", `/events/${roundRobin.id}`, { key: a.key })).status).toBe(404);
    expect((await rest("DELETE", `/events/${roundRobin.id}`, { key: a.key })).status).toBe(404);
    expect((await rest("POST", `/events/${roundRobin.id}/bookings`, { key: a.key, body: { booking: { start_time: at("13:00"), attendee_name: "Ed", attendee_email: "ed@example.com" } } })).status).toBe(201);
  });
});

describe("a team event's single-use links", () => {
  const day = dayFromToday(6);
  const tokenOf = (url: string): string => url.slice(url.lastIndexOf("/d/") + 3);

  it("a link of a round robin event that is not public opens it, lists the team's slots, books a host by the team's rules once, then 410", async () => {
    const hidden = await ok("rest", a.key, teams.createEvent(team.id, { name: "Hidden", url: "hidden", slot_duration: "30_minutes", scheduling: "round_robin", is_public: false, hosts: [{ user_id: b.user.id }, { user_id: c.user.id }] }), 201);
    const made = await rest("POST", `/events/${hidden.id}/single_use_links`, { key: a.key, body: { link: { expires_in_days: 3 } } });
    expect([made.status, made.body.message]).toEqual([201, "link created"]);
    const token = tokenOf(made.body.data.url);

    const view = await rest("GET", `/public/links/${token}`);
    expect([view.status, view.body.data.name]).toEqual([200, "Hidden"]);
    const slots = await rest("GET", `/public/links/${token}/slots?date_from=${day}&date_to=${day}&timezone=UTC`);
    expect(slots.status).toBe(200);
    expect(slots.body.data.slots.length).toBeGreaterThan(0);
    // The page the link's url opens.
    const page = await fetch(`${baseUrl()}${new URL(made.body.data.url).pathname}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Hidden");

    // Two at once, at two times two hosts are free for: one wins the link.
    const both = await Promise.all(
      ["09:00", "10:00"].map((time, i) => rest("POST", `/public/links/${token}/bookings`, { body: { booking: { start_time: utcIso(day, time), attendee_name: "Lin", attendee_email: `lin${i}@example.com` } } })),
    );
    expect(both.map((r) => r.status).sort()).toEqual([201, 410]);
    const booked = both.find((r) => r.status === 201)!;
    expect(booked.body.message).toBe("booking confirmed");
    expect([b.user.id, c.user.id]).toContain(booked.body.data.hosts[0].user_id);
    expect(booked.body.data.assignment_reason).toMatch(/^priority 2/);
    const again = await rest("POST", `/public/links/${token}/bookings`, { body: { booking: { start_time: utcIso(day, "11:00"), attendee_name: "Lin", attendee_email: "lin2@example.com" } } });
    expect([again.status, again.body.message]).toEqual([410, "link is no longer valid"]);
    expect((await rest("GET", `/public/links/${token}`)).status).toBe(410);

    const listed = await rest("GET", `/events/${hidden.id}/single_use_links`, { key: a.key });
    expect(listed.body.data).toMatchObject([{ id: made.body.data.id, used: true, booking_id: booked.body.data.id }]);
    // The team's owner sees the booking with the event's others.
    expect((await rest("GET", `/events/${hidden.id}/bookings?category=upcoming`, { key: a.key })).body.data.records.map((r: Json) => r.id)).toEqual([booked.body.data.id]);
  });

  it("a collective event's link books every host; a booking refused for its time leaves the link usable; a member 403, a stranger 404", async () => {
    const made = await rest("POST", `/events/${collective.id}/single_use_links`, { key: a.key });
    expect(made.status).toBe(201);
    const token = tokenOf(made.body.data.url);
    // A time in the past: refused, and the link stays usable.
    const refused = await rest("POST", `/public/links/${token}/bookings`, { body: { booking: { start_time: utcIso(dayFromToday(-1), "09:00"), attendee_name: "Col", attendee_email: "col@example.com" } } });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).not.toBe(410);
    const booked = await rest("POST", `/public/links/${token}/bookings`, { body: { booking: { start_time: utcIso(day, "14:00"), attendee_name: "Col", attendee_email: "col@example.com" } } });
    expect(booked.status).toBe(201);
    expect(booked.body.data.hosts.map((h: Json) => h.user_id).sort()).toEqual([b.user.id, c.user.id].sort());

    const revoking = await rest("POST", `/events/${collective.id}/single_use_links`, { key: a.key });
    for (const [who, status] of [[b, 403], [stranger, 404]] as const) {
      expect((await rest("POST", `/events/${collective.id}/single_use_links`, { key: who.key })).status).toBe(status);
      expect((await rest("GET", `/events/${collective.id}/single_use_links`, { key: who.key })).status).toBe(status);
      expect((await rest("DELETE", `/events/${collective.id}/single_use_links/${revoking.body.data.id}`, { key: who.key })).status).toBe(status);
    }
    const revoked = await rest("DELETE", `/events/${collective.id}/single_use_links/${revoking.body.data.id}`, { key: a.key });
    expect([revoked.status, revoked.body.data.revoked]).toEqual([200, true]);
    expect((await rest("GET", `/public/links/${tokenOf(revoking.body.data.url)}`)).status).toBe(410);
  });
});

describe("a team event's booking form", () => {
  it("takes the questions of the owner or admin who puts them on it, shows them, asks the booker and shows the answers to every host", async () => {
    const question = async (host: Host, title: string) => (await rest("POST", "/questions", { key: host.key, body: { question: { title, question_type: "one_line" } } })).body.data;
    const topic = await question(a, "Topic?");
    const theirs = await question(stranger, "Not theirs");
    const made = await ok("rest", a.key, teams.createEvent(team.id, {
      name: "Asked",
      url: "asked",
      slot_duration: "30_minutes",
      scheduling: "collective",
      hosts: [{ user_id: b.user.id }, { user_id: c.user.id }],
      event_questions_attributes: [{ question_id: topic.id, required: true, order_number: 1 }, { question_id: theirs.id, required: false, order_number: 2 }],
    }), 201);
    // Another account's question is left out, as on a personal event.
    expect(made.active_event_questions.map((q: Json) => [q.question.title, q.required])).toEqual([["Topic?", true]]);
    expect((await ok("rest", a.key, teams.getEvent(team.id, made.id))).active_event_questions).toHaveLength(1);
    const page = await rest("GET", `/public/teams/${team.url}/events/asked`);
    expect(page.body.data.questions.map((q: Json) => q.title)).toEqual(["Topic?"]);

    const start = utcIso(dayFromToday(7), "09:00");
    const unanswered = await bookTeam(team, made, start, "q@example.com");
    expect(unanswered.status).toBe(422);
    const answered = await rest("POST", `/public/teams/${team.url}/events/asked/bookings`, {
      body: { booking: { start_time: start, attendee_name: "Q", attendee_email: "q@example.com", answers: [{ question_id: topic.id, value: "Engines" }] } },
    });
    expect(answered.status).toBe(201);
    for (const host of [b, c]) {
      const whole = await rest("GET", `/bookings/${answered.body.data.id}`, { key: host.key });
      expect(whole.body.data.answers).toMatchObject([{ question_id: topic.id, question: "Topic?", value: "Engines" }]);
    }

    // An admin changes the form: the question off, then on again as optional.
    const entry = made.active_event_questions[0];
    const off = await ok("rest", a.key, teams.updateEvent(team.id, made.id, { event_questions_attributes: [{ id: entry.id, destroy: true }] }));
    expect(off.active_event_questions).toEqual([]);
    // The booking still shows what was asked, as a personal booking does.
    expect((await rest("GET", `/bookings/${answered.body.data.id}`, { key: c.key })).body.data.answers).toMatchObject([{ question_id: topic.id, question: "Topic?", value: "Engines" }]);
    const on = await ok("rest", a.key, teams.updateEvent(team.id, made.id, { event_questions_attributes: [{ question_id: topic.id, required: false, order_number: 1 }] }));
    expect(on.active_event_questions.map((q: Json) => [q.question.id, q.required])).toEqual([[topic.id, false]]);
  });
});
