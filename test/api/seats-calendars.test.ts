// A seated slot is one event in the host's calendar and one meeting (booking-kinds.md "Seats"), against a real Radicale and the local Google and Microsoft fakes: seats taken and freed add and remove its attendees, a seat moved leaves one slot's event and joins another's.
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seatedSlotId } from "../../src/features/bookings/cells.js";
import { restAt, type Json } from "../helpers/api.js";
import { dayFromToday } from "../helpers/bookings.js";
import { eventAt, hostAt } from "../helpers/calendars.js";
import { connectThroughOAuth, hostWithGoogle, hostWithMicrosoft, startProviderWorld, type ProviderWorld } from "../helpers/providers.js";
import { startRadicale, type Radicale } from "../helpers/radicale.js";
import { until } from "../helpers/wait.js";

let radicale: Radicale;
let w: ProviderWorld;

beforeAll(async () => {
  radicale = await startRadicale({ ann: "secret" });
  w = await startProviderWorld({}, { googleConference: "success" });
});

afterAll(async () => {
  await w?.stop();
  await radicale?.dispose();
});

const at = (day: string, time: string) => `${day}T${time}:00.000Z`;

/** The slot's id, which names its calendar object (the same on every replica). */
const slotOf = (event: Json, start: string) => seatedSlotId(new mongoose.Types.ObjectId(String(event.id)), new Date(start)).toHexString();

/** A seat of `event` at `start` booked by `name` (`<name>@example.com`); the booking. */
async function seat(host: Json, event: Json, start: string, name: string): Promise<Json> {
  const res = await restAt(w.base, "POST", `/api/v1/public/users/${host.url}/events/${event.url}/bookings`, {
    body: { booking: { start_time: start, attendee_name: name, attendee_email: `${name.toLowerCase()}@example.com` } },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function cancel(b: Json): Promise<void> {
  expect((await restAt(w.base, "POST", `/api/v1/public/bookings/${b.private_key}/cancel`, { body: { booking: {} } })).status).toBe(200);
}

async function booking(b: Json): Promise<Json> {
  return (await restAt(w.base, "GET", `/api/v1/public/bookings/${b.private_key}`)).body.data;
}

/** The attendees' addresses of a CalDAV object (unfolded), or null when it is not there. */
function caldavAttendees(object: { status: number; body: string }): string[] | null {
  if (object.status === 404) return null;
  const text = object.body.replace(/\r\n[ \t]/g, "");
  return [...text.matchAll(/^ATTENDEE[^:]*:mailto:(.+)$/gim)].map((m) => m[1].trim().toLowerCase()).sort();
}

describe("a seated slot in the host's calendars", () => {
  it("CalDAV (Radicale): two seats are one object with two attendees and one Jitsi link; a cancel leaves one; a seat moved leaves its slot (the empty slot's object goes) and joins the other's", async () => {
    const calendarUrl = await radicale.mkcalendar("ann", "seats", "Seats");
    const host = await hostAt(w.base);
    const conn = await restAt(w.base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "caldav", server_url: radicale.url, username: "ann", password: "secret" } } });
    expect(conn.status).toBe(201);
    const calendar = (conn.body.data.calendars as Json[]).find((c) => c.name === "Seats");
    await restAt(w.base, "PUT", "/api/v1/integrations/conference", { key: host.key, body: { integration: { provider: "jitsi", base_url: "https://meet.example.org" } } });
    const event = await eventAt(w.base, host.key, { name: "Workshop", seats_per_slot: 3, connected_calendar_id: calendar.id, location: { name: "conference" } });
    const day = dayFromToday(4);
    const [ten, eleven] = [at(day, "10:00"), at(day, "11:00")];
    const objectAt = (start: string) => radicale.get("ann", `${calendarUrl}${slotOf(event, start)}.ics`);

    const ada = await seat(host.user, event, ten, "Ada");
    const bob = await seat(host.user, event, ten, "Bob");
    const cy = await seat(host.user, event, eleven, "Cy");
    // One meeting: the second seat joins the first's link.
    expect(bob.meeting_url).toBe(ada.meeting_url);
    expect(cy.meeting_url).not.toBe(ada.meeting_url);
    await until("the 10:00 slot's object holds both seats", async () => (caldavAttendees(await objectAt(ten))?.join() === "ada@example.com,bob@example.com" ? true : undefined));
    const text = (await objectAt(ten)).body.replace(/\r\n[ \t]/g, "");
    expect(text).toContain(`UID:${slotOf(event, ten)}@127.0.0.1`);
    expect(text).toContain(`LOCATION:${ada.meeting_url}`);
    expect(text).toContain(`SUMMARY:Workshop (${host.user.full_name})`);
    // Nothing is named after a seat's booking.
    for (const b of [ada, bob, cy]) expect((await radicale.get("ann", `${calendarUrl}${b.id}.ics`)).status).toBe(404);

    await cancel(ada);
    await until("the 10:00 object holds Bob alone", async () => (caldavAttendees(await objectAt(ten))?.join() === "bob@example.com" ? true : undefined));

    const moved = await restAt(w.base, "POST", `/api/v1/public/bookings/${bob.private_key}/reschedule`, { body: { booking: { start_time: eleven } } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(201);
    // The moved seat joins the 11:00 slot's meeting, not the one it left.
    expect(moved.body.data.meeting_url).toBe(cy.meeting_url);
    await until("the empty 10:00 slot's object is gone", async () => (caldavAttendees(await objectAt(ten)) === null ? true : undefined));
    await until("the 11:00 object holds Cy and Bob", async () => (caldavAttendees(await objectAt(eleven))?.join() === "bob@example.com,cy@example.com" ? true : undefined));
  }, 120_000);

  it("Google: seats are one event with their attendees and one Meet link; a third seat still books; a cancel removes one attendee; the last cancel deletes the event", async () => {
    const email = `seats-${Date.now().toString(36)}@gmail.test`;
    const h = await hostWithGoogle(w, email);
    const primary = (h.connection.calendars as Json[]).find((c) => c.email === email);
    const event = await eventAt(w.base, h.key, { name: "Class", seats_per_slot: 4, connected_calendar_id: primary.id, location: { name: "calendar_meet" } });
    const start = at(dayFromToday(5), "09:00");
    const ada = await seat(h.user, event, start, "Ada");
    const bob = await seat(h.user, event, start, "Bob");
    const attendeesOf = () => w.google.events(email).map((e) => ((e.attendees ?? []) as { email: string }[]).map((a) => a.email).sort().join());
    await until("one event with both seats", async () => (attendeesOf().join("|") === "ada@example.com,bob@example.com" ? true : undefined));
    const [written] = w.google.events(email);
    expect(written.iCalUID).toBe(`${slotOf(event, start)}@127.0.0.1`);
    expect(written.summary).toBe(`Class (${h.user.full_name})`);
    // One Meet link, which both seats show.
    const links = await until("both seats have the link", async () => {
      const [a, b] = [await booking(ada), await booking(bob)];
      return a.meeting_url && b.meeting_url ? [a.meeting_url, b.meeting_url] : undefined;
    });
    expect(links[0]).toBe(links[1]);
    expect(links[0]).toBe(written.hangoutLink);
    // The slot's own event in a calendar that checks conflicts does not make the slot busy for its next seat.
    expect(primary.check_for_conflicts).toBe(true);
    const cy = await seat(h.user, event, start, "Cy");
    await until("three attendees", async () => (attendeesOf().join("|") === "ada@example.com,bob@example.com,cy@example.com" ? true : undefined));

    await cancel(ada);
    await until("two attendees left", async () => (attendeesOf().join("|") === "bob@example.com,cy@example.com" ? true : undefined));
    expect(w.google.events(email)).toHaveLength(1);
    expect(w.google.events(email)[0].id).toBe(written.id);
    await cancel(cy);
    await cancel(bob);
    await until("the event deleted", async () => (w.google.events(email).length === 0 ? true : undefined));
  }, 120_000);

  it("Zoom: the seats of a slot share one meeting, made once; a seat's cancel keeps it for the others; a seat moved leaves it, and the last seat's cancel deletes it", async () => {
    const email = `seats-zoom-${Date.now().toString(36)}@example.test`;
    w.zoom.addUser(email);
    const host = await hostAt(w.base);
    await connectThroughOAuth(w, host.key, "zoom", email);
    const event = await eventAt(w.base, host.key, { name: "Seminar", seats_per_slot: 3, location: { name: "conference" } });
    const day = dayFromToday(7);
    const [nine, ten] = [at(day, "09:00"), at(day, "10:00")];
    const ada = await seat(host.user, event, nine, "Ada");
    const bob = await seat(host.user, event, nine, "Bob");
    const cy = await seat(host.user, event, nine, "Cy");
    const links = await until("every seat has the link", async () => {
      const all = await Promise.all([ada, bob, cy].map(booking));
      return all.every((b) => b.meeting_url) ? all.map((b) => b.meeting_url as string) : undefined;
    });
    expect(new Set(links).size).toBe(1);
    const mine = () => w.zoom.meetings().filter((m) => m.host_email === email);
    expect(mine()).toHaveLength(1);
    expect(mine()[0].join_url).toBe(links[0]);
    expect(mine()[0].topic).toBe("Seminar");

    await cancel(ada);
    const moved = await restAt(w.base, "POST", `/api/v1/public/bookings/${bob.private_key}/reschedule`, { body: { booking: { start_time: ten } } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(201);
    // Bob's new slot gets a meeting of its own; the 09:00 one stays, Cy still holds it.
    const bobLink = await until("the moved seat's meeting", async () => (await booking(moved.body.data)).meeting_url ?? undefined);
    expect(bobLink).not.toBe(links[0]);
    expect(mine().map((m) => m.join_url).sort()).toEqual([links[0], bobLink].sort());
    await cancel(cy);
    await until("the 09:00 meeting deleted", async () => (mine().map((m) => m.join_url).join() === bobLink ? true : undefined));
  }, 120_000);

  it("Microsoft: two seats are one event naming both; a cancel leaves one", async () => {
    const uma = w.microsoft.addUser({ mail: `seats-${Date.now().toString(36)}@contoso.test` });
    const h = await hostWithMicrosoft(w, uma.id);
    const calendar = (h.connection.calendars as Json[])[0];
    const event = await eventAt(w.base, h.key, { name: "Lab", seats_per_slot: 2, connected_calendar_id: calendar.id });
    const start = at(dayFromToday(6), "14:00");
    const ada = await seat(h.user, event, start, "Ada");
    await seat(h.user, event, start, "Bob");
    const mine = () => w.microsoft.writtenEvents().filter((e) => e.userId === uma.id && !e.isCancelled);
    const bookedBy = () => mine().map((e) => e.body.content.split("\n")[0]);
    await until("one event naming both seats", async () => (bookedBy().join("|") === "Booked by: Ada <ada@example.com>, Bob <bob@example.com>" ? true : undefined));
    expect(mine()[0].subject).toBe(`Lab (${h.user.full_name})`);
    await cancel(ada);
    await until("one seat left", async () => (bookedBy().join("|") === "Booked by: Bob <bob@example.com>" ? true : undefined));
  }, 120_000);
});
