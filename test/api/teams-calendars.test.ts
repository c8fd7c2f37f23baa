// A team booking written to every host's calendar (teams.md), against a real Radicale: a collective booking in each host's calendar, listing the other host; a cancel removes every copy; a collective seated slot is one object in each host's calendar with its seats' attendees; a reassign, or a round robin reschedule given to another host, moves the event from the old host's calendar to the new host's.
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seatedSlotId } from "../../src/features/bookings/cells.js";
import { rest, useServer, type Json } from "../helpers/api.js";
import { dayFromToday, utcIso, type Host } from "../helpers/bookings.js";
import { ok } from "../helpers/calls.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { startRadicale, type Radicale } from "../helpers/radicale.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { bookTeam, teamOf, teams } from "../helpers/teams.js";
import { until } from "../helpers/wait.js";

const DAY = dayFromToday(7);
const at = (time: string) => utcIso(DAY, time);

let radicale: Radicale;
let server: RunningServer;
let a: Host;
let team: Json;
/** Each host's Radicale user and the URL of their "Bookings" calendar. */
const calendars = new Map<string, { user: string; url: string }>();
let b: Host;
let c: Host;

/** A host whose only calendar is their own "Bookings" collection on Radicale (as `user`). */
async function hostWithCalendar(user: string): Promise<Host> {
  const host = await fixturesAt(server.baseUrl).newHost({ timezone: "UTC" });
  const url = await radicale.mkcalendar(user, "bookings", "Bookings");
  const conn = await rest("POST", "/calendar_connections", { key: host.key, body: { connection: { provider: "caldav", server_url: radicale.url, username: user, password: "secret" } } });
  expect(conn.status).toBe(201);
  calendars.set(host.user.id, { user, url });
  return host;
}

/** The booking's object in the host's calendar: its text (unfolded), or undefined while it is not there. */
async function copyOf(host: Host, bookingId: string): Promise<string | undefined> {
  const cal = calendars.get(host.user.id) as { user: string; url: string };
  const res = await radicale.get(cal.user, `${cal.url}${bookingId}.ics`);
  return res.status === 200 ? res.body.replace(/\r\n /g, "") : undefined;
}
const goneFrom = (host: Host, bookingId: string) => until(`the event gone from ${host.user.email}'s calendar`, async () => ((await copyOf(host, bookingId)) === undefined ? true : undefined));

beforeAll(async () => {
  radicale = await startRadicale({ bea: "secret", cal: "secret" });
  server = await startServer({ OUTBOUND_ALLOW_PRIVATE: "true", EFFECTS_POLL_MS: "100", EFFECTS_RETRY_SCALE: "0.001" });
  useServer(server.baseUrl);
  a = await fixturesAt(server.baseUrl).newHost({ timezone: "UTC" });
  b = await hostWithCalendar("bea");
  c = await hostWithCalendar("cal");
  team = await teamOf(a, [b, c], "Calendars");
});

afterAll(async () => {
  useServer(undefined);
  await server?.stop();
  await radicale?.dispose();
});

describe("team bookings in every host's calendar", () => {
  it("a collective booking is written to each host's calendar, listing the other host; a cancel removes both", async () => {
    const event = await ok("rest", a.key, teams.createEvent(team.id, { name: "Panel", url: "panel", slot_duration: "30_minutes", scheduling: "collective", hosts: [{ user_id: b.user.id }, { user_id: c.user.id }] }), 201);
    const made = await bookTeam(team, event, at("10:00"));
    expect(made.status).toBe(201);
    const id = made.body.data.id;
    for (const [host, other] of [[b, c], [c, b]] as const) {
      const text = await until(`the event in ${host.user.email}'s calendar`, () => copyOf(host, id));
      expect(text).toContain(`UID:${id}@localhost`);
      expect(text).toContain(`DTSTART:${DAY.replace(/-/g, "")}T100000Z`);
      expect(text).toMatch(/ATTENDEE;[^\r\n]*:mailto:ada@example\.com/);
      expect(text).toMatch(new RegExp(`ATTENDEE;[^\\r\\n]*:mailto:${other.user.email.replace(/[.+]/g, "\\$&")}`, "i"));
    }
    const canceled = await rest("POST", `/public/bookings/${made.body.data.private_key}/cancel`, { body: { booking: { reason: "sorry" } } });
    expect(canceled.status).toBe(200);
    await Promise.all([goneFrom(b, id), goneFrom(c, id)]);
  });

  it("a reassigned booking leaves the old host's calendar and is written to the new host's", async () => {
    const event = await ok("rest", a.key, teams.createEvent(team.id, { name: "Demo", url: "demo", slot_duration: "30_minutes", scheduling: "round_robin", hosts: [{ user_id: b.user.id, priority: 4 }, { user_id: c.user.id }] }), 201);
    const made = await bookTeam(team, event, at("11:00"));
    expect(made.body.data.hosts[0].user_id).toBe(b.user.id);
    const id = made.body.data.id;
    await until("the event in the first host's calendar", () => copyOf(b, id));
    const moved = await rest("POST", `/bookings/${id}/reassign`, { key: a.key, body: { booking: { host_id: c.user.id } } });
    expect(moved.status).toBe(200);
    const text = await until("the event in the new host's calendar", () => copyOf(c, id));
    expect(text).toContain(`UID:${id}@localhost`);
    expect(text).toContain(`ORGANIZER;CN=${c.user.full_name}`);
    await goneFrom(b, id);
  });

  it("a round robin booking moved to a time only another host is free at leaves the old host's calendar for the new host's", async () => {
    const event = await ok("rest", a.key, teams.createEvent(team.id, { name: "Moves", url: "moves", slot_duration: "30_minutes", scheduling: "round_robin", hosts: [{ user_id: b.user.id, priority: 4 }, { user_id: c.user.id }] }), 201);
    const made = await bookTeam(team, event, at("12:00"));
    expect(made.body.data.hosts[0].user_id).toBe(b.user.id);
    const id = made.body.data.id;
    await until("the event in the first host's calendar", () => copyOf(b, id));
    // B is busy at 13:00 with a booking of their own; C is free.
    const own = await fixturesAt(server.baseUrl).newEvent(b);
    const busy = await rest("POST", `/public/users/${b.user.url}/events/${own.url}/bookings`, { body: { booking: { start_time: at("13:00"), attendee_name: "Bo", attendee_email: "bo@example.com" } } });
    expect(busy.status).toBe(201);
    const moved = await rest("POST", `/public/bookings/${made.body.data.private_key}/reschedule`, { body: { booking: { start_time: at("13:00") } } });
    expect(moved.status).toBe(201);
    expect(moved.body.data.hosts.map((h: Json) => h.user_id)).toEqual([c.user.id]);
    const newId = moved.body.data.id;
    const text = await until("the moved booking in the new host's calendar", () => copyOf(c, newId));
    expect(text).toContain(`DTSTART:${DAY.replace(/-/g, "")}T130000Z`);
    expect(text).toContain(`ORGANIZER;CN=${c.user.full_name}`);
    await goneFrom(b, id);
    expect(await copyOf(b, newId)).toBeUndefined();
  });
  it("a collective seated slot is one object in each host's calendar with the attendees of its seats; a cancel leaves the other seat; the last cancel removes it", async () => {
    const event = await ok("rest", a.key, teams.createEvent(team.id, { name: "Class", url: "class", slot_duration: "30_minutes", scheduling: "collective", seats_per_slot: 3, hosts: [{ user_id: b.user.id }, { user_id: c.user.id }] }), 201);
    const start = at("15:00");
    // The slot's id names its object (cells.ts seatedSlotId: the same on every replica).
    const slot = seatedSlotId(new mongoose.Types.ObjectId(String(event.id)), new Date(start)).toHexString();
    const first = await bookTeam(team, event, start, "ada@example.com");
    const second = await bookTeam(team, event, start, "bo@example.com");
    expect([first.status, second.status]).toEqual([201, 201]);
    const attendees = (text: string | undefined) => [...(text ?? "").matchAll(/^ATTENDEE[^:]*:mailto:(.+)$/gim)].map((m) => m[1].trim().toLowerCase());
    const holding = (host: Host, emails: readonly string[]) =>
      until(`${emails.join(", ")} in ${host.user.email}'s calendar`, async () => {
        const text = await copyOf(host, slot);
        return emails.every((e) => attendees(text).includes(e)) && attendees(text).length === emails.length ? text : undefined;
      });
    // Each host's copy: both seats' attendees, and the other host.
    for (const [host, other] of [[b, c], [c, b]] as const) await holding(host, ["ada@example.com", "bo@example.com", other.user.email.toLowerCase()]);
    expect((await rest("POST", `/public/bookings/${first.body.data.private_key}/cancel`, { body: { booking: {} } })).status).toBe(200);
    for (const [host, other] of [[b, c], [c, b]] as const) await holding(host, ["bo@example.com", other.user.email.toLowerCase()]);
    expect((await rest("POST", `/public/bookings/${second.body.data.private_key}/cancel`, { body: { booking: {} } })).status).toBe(200);
    await Promise.all([goneFrom(b, slot), goneFrom(c, slot)]);
  });
});
