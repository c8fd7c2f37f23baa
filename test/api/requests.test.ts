// Bookings that wait for the host (booking-kinds.md): requests, the host's confirm and decline, expiry on a moved clock, the slot held and freed, e-mails at a real SMTP server and webhooks at a real receiver.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, useServer, type Json } from "../helpers/api.js";
import { dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { startRadicale } from "../helpers/radicale.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { startSmtp, type ReceivedMail, type TestSmtp } from "../helpers/smtp.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";
import { until } from "../helpers/wait.js";

const FAST_OUTBOX = { EFFECTS_POLL_MS: "100", EFFECTS_LEASE_MS: "2000", EFFECTS_RETRY_SCALE: "0.00005", EFFECTS_CONCURRENCY: "4" };
const REQUEST_EVENTS = ["booking.requested", "booking.declined", "booking.created", "booking.canceled"];

let server: RunningServer;
let smtp: TestSmtp;
let receiver: Receiver;
let pathSeq = 0;
let slotSeq = 0;

beforeAll(async () => {
  smtp = await startSmtp();
  receiver = await startReceiver();
  server = await startServer({ SMTP_URL: smtp.url, OUTBOUND_ALLOW_PRIVATE: "true", ...FAST_OUTBOX, ...CLOCK_CONTROL_ENV });
  useServer(server.baseUrl);
}, 120_000);

afterAll(async () => {
  useServer(undefined);
  await server?.stop();
  await smtp?.stop();
  await receiver?.close();
});

/** A fresh half hour of its own each call, five days ahead and on (the clock moves a few hours at most here). */
function nextSlot(): string {
  const n = slotSeq++;
  return utcIso(dayFromToday(5 + Math.floor(n / 48)), `${String(Math.floor((n % 48) / 2)).padStart(2, "0")}:${n % 2 === 0 ? "00" : "30"}`);
}

/** A host, an event that waits for the host, and a webhook of the request events on a receiver path of its own. */
async function requestSetup(event: Json = {}): Promise<{ host: Host; event: Json; hook: string }> {
  const host = await newHost({ timezone: "UTC" });
  // A Jitsi link is made with a confirmed booking: a request must have none until the host confirms it.
  expect((await rest("PUT", "/integrations/conference", { key: host.key, body: { integration: { provider: "jitsi" } } })).status).toBe(200);
  const made = await newEvent(host, { requires_confirmation: true, ...event });
  const hook = `/requests-${++pathSeq}`;
  const res = await rest("POST", "/webhooks", { key: host.key, body: { webhook: { url: receiver.url(hook), events: REQUEST_EVENTS } } });
  expect(res.status).toBe(201);
  receiver.secret(hook, res.body.data.secret);
  return { host, event: made, hook };
}

const request = (host: Host, event: Json, start: string, email = "booker@example.com") =>
  rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, { body: { booking: { start_time: start, attendee_name: "Grace Hopper", attendee_email: email } } });

const hostGet = (host: Host, id: string) => rest("GET", `/bookings/${id}`, { key: host.key });
const confirm = (host: Host, id: string) => rest("POST", `/bookings/${id}/confirm`, { key: host.key });
const decline = (host: Host, id: string, reason?: string) => rest("POST", `/bookings/${id}/decline`, { key: host.key, body: reason === undefined ? {} : { booking: { reason } } });

/** Whether the event's free slots of that day offer `start`. */
async function offered(host: Host, event: Json, start: string): Promise<boolean> {
  const day = start.slice(0, 10);
  const res = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots?date_from=${day}&date_to=${day}&timezone=UTC`);
  expect(res.status).toBe(200);
  return res.body.data.slots.some((s: Json) => s.start_time === start);
}

const mailsTo = (address: string, subject: RegExp) => (m: ReceivedMail) => m.envelope.to.includes(address) && subject.test(m.parsed.subject ?? "");

describe("a request", () => {
  it("is 201 booking requested, pending, holds its slot, mails booker and host, sends booking.requested, and makes no calendar event or meeting", async () => {
    const { host, event, hook } = await requestSetup({ location: { name: "conference" } });
    const start = nextSlot();
    const made = await request(host, event, start, "waiting@example.com");
    expect(made.status).toBe(201);
    expect(made.body.message).toBe("booking requested");
    expect(made.body.data.status).toBe("pending");
    const id = made.body.data.id;

    // The slot is held like a booking's: not offered, and a second booker is refused.
    expect(await offered(host, event, start)).toBe(false);
    const second = await request(host, event, start, "second@example.com");
    expect(second.status).toBe(409);
    expect(second.body.message).toBe("slot is not available");

    const whole = (await hostGet(host, id)).body.data;
    expect(whole).toMatchObject({ status: "pending", meeting_url: null, meeting_status: "none", calendar_event_status: "none" });

    const [booker] = await smtp.waitFor(1, mailsTo("waiting@example.com", /^Request sent/));
    expect(booker.parsed.text).toContain("not confirmed yet");
    expect(booker.parsed.attachments.filter((a) => a.contentType.startsWith("text/calendar"))).toHaveLength(0);
    const [toHost] = await smtp.waitFor(1, mailsTo(host.user.email, /^Booking request/));
    // The host answers on the request's page (test/web/answer-page.test.ts), not by an API call a mail cannot make.
    expect(toHost.parsed.text).toMatch(new RegExp(`Answer the request: http://\\S+/booking/${made.body.data.private_key}/answer/[A-Za-z0-9_-]{32}\n`));
    expect(toHost.parsed.text).not.toContain("/api/v1/bookings/");

    const [requested] = await receiver.waitFor(hook, 1);
    expect(requested.message).toMatchObject({ type: "booking.requested", data: { booking: { id, status: "pending" } } });

    // Listings: pending is a category of its own; upcoming holds confirmed bookings only.
    const pending = (await rest("GET", `/events/${event.id}/bookings?category=pending&date_to=${dayFromToday(30)}`, { key: host.key })).body.data;
    expect(pending.records.map((r: Json) => r.id)).toEqual([id]);
    const upcoming = (await rest("GET", `/events/${event.id}/bookings?category=upcoming&date_to=${dayFromToday(30)}`, { key: host.key })).body.data;
    expect(upcoming.records).toHaveLength(0);
    const counts = (await rest("GET", `/events/${event.id}/bookings_counts?date_to=${dayFromToday(30)}`, { key: host.key })).body.data;
    expect(counts).toMatchObject({ pending: 1, upcoming: 0 });
  });

  it("confirmed by the host: 200 booking confirmed, then what a booking gets (invitation, booking.created); answering again is 422", async () => {
    const { host, event, hook } = await requestSetup({ location: { name: "conference" } });
    const made = await request(host, event, nextSlot(), "confirm-me@example.com");
    const id = made.body.data.id;
    await receiver.waitFor(hook, 1);

    const confirmed = await confirm(host, id);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.message).toBe("booking confirmed");
    expect(confirmed.body.data).toMatchObject({ id, status: "confirmed", meeting_status: "ready" });
    expect(confirmed.body.data.meeting_url).toMatch(/^https:\/\/meet\.jit\.si\//);

    const [mail] = await smtp.waitFor(1, mailsTo("confirm-me@example.com", /^Confirmed/));
    expect(mail.parsed.attachments.some((a) => a.contentType.startsWith("text/calendar"))).toBe(true);
    const messages = await receiver.waitFor(hook, 2);
    expect(messages[1].message).toMatchObject({ type: "booking.created", data: { booking: { id, status: "confirmed" } } });

    for (const again of [await confirm(host, id), await decline(host, id)]) {
      expect(again.status).toBe(422);
      expect(again.body.message).toBe("booking is not pending");
    }
    const counts = (await rest("GET", `/events/${event.id}/bookings_counts?date_to=${dayFromToday(30)}`, { key: host.key })).body.data;
    expect(counts).toMatchObject({ pending: 0, upcoming: 1 });
    // Another account's host cannot answer it.
    const stranger = await newHost();
    expect((await confirm(stranger, id)).status).toBe(404);
  });

  it("the booker can neither cancel nor move a request (extensions.md: a booking that is not confirmed: 422); it stays pending for the host", async () => {
    const { host, event } = await requestSetup();
    const made = await request(host, event, nextSlot(), "waiting@example.com");
    const key = made.body.data.private_key;
    const cancel = await rest("POST", `/public/bookings/${key}/cancel`, { body: { booking: { reason: "changed my mind" } } });
    expect({ status: cancel.status, message: cancel.body.message }).toEqual({ status: 422, message: "booking is pending, only a confirmed booking can be changed" });
    const move = await rest("POST", `/public/bookings/${key}/reschedule`, { body: { booking: { start_time: nextSlot() } } });
    expect({ status: move.status, message: move.body.message }).toEqual({ status: 422, message: "booking is pending, only a confirmed booking can be changed" });
    expect((await rest("GET", `/bookings/${made.body.data.id}`, { key: host.key })).body.data.status).toBe("pending");
  });

  it("declined by the host: 200 booking declined, the slot freed, the booker told, booking.declined with the reason", async () => {
    const { host, event, hook } = await requestSetup();
    const start = nextSlot();
    const id = (await request(host, event, start, "decline-me@example.com")).body.data.id;
    await receiver.waitFor(hook, 1);

    const declined = await decline(host, id, "Fully booked that week");
    expect(declined.status).toBe(200);
    expect(declined.body.message).toBe("booking declined");
    expect(declined.body.data).toMatchObject({ id, status: "declined", cancel_reason: "Fully booked that week" });

    expect(await offered(host, event, start)).toBe(true);
    const [mail] = await smtp.waitFor(1, mailsTo("decline-me@example.com", /^Declined/));
    expect(mail.parsed.text).toContain("Fully booked that week");
    const messages = await receiver.waitFor(hook, 2);
    expect(messages[1].message).toMatchObject({ type: "booking.declined", data: { booking: { id, status: "declined", cancel_reason: "Fully booked that week" } } });

    expect((await confirm(host, id)).body.message).toBe("booking is not pending");
    // The freed slot takes a new request.
    expect((await request(host, event, start, "next@example.com")).status).toBe(201);
  });

  it("a decline without a body is fine; a booking that is no request cannot be answered", async () => {
    const host = await newHost({ timezone: "UTC" });
    const plain = await newEvent(host);
    const booked = await rest("POST", `/public/users/${host.user.url}/events/${plain.url}/bookings`, { body: { booking: { start_time: nextSlot(), attendee_name: "A", attendee_email: "a@example.com" } } });
    expect(booked.status).toBe(201);
    expect(booked.body.message).toBe("booking confirmed");
    expect(booked.body.data.status).toBe("confirmed");
    const answer = await rest("POST", `/bookings/${booked.body.data.id}/decline`, { key: host.key });
    expect({ status: answer.status, message: answer.body.message }).toEqual({ status: 422, message: "booking is not pending" });

    const { host: h2, event: e2 } = await requestSetup();
    const id = (await request(h2, e2, nextSlot())).body.data.id;
    const bare = await rest("POST", `/bookings/${id}/decline`, { key: h2.key });
    expect(bare.status).toBe(200);
    expect(bare.body.data.cancel_reason).toBeNull();
  });

  it("through a single-use link too", async () => {
    const { host, event } = await requestSetup({ is_public: false });
    const link = (await rest("POST", `/events/${event.id}/single_use_links`, { key: host.key })).body.data;
    const token = String(link.url).split("/d/")[1];
    const made = await rest("POST", `/public/links/${token}/bookings`, { body: { booking: { start_time: nextSlot(), attendee_name: "L", attendee_email: "link@example.com" } } });
    expect(made.status).toBe(201);
    expect(made.body.message).toBe("booking requested");
    expect(made.body.data.status).toBe("pending");
  });
});

describe("under concurrency", () => {
  it("of requests racing for one slot exactly one holds it", async () => {
    const { host, event } = await requestSetup();
    const start = nextSlot();
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => request(host, event, start, `racer-${i}@example.com`)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  }, 120_000);

  it("of racing answers exactly one wins; the others are 422 booking is not pending", async () => {
    const { host, event } = await requestSetup();
    const id = (await request(host, event, nextSlot())).body.data.id;
    const answers = await Promise.all([confirm(host, id), confirm(host, id), decline(host, id), confirm(host, id)]);
    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) expect({ status: a.status, message: a.body.message }).toEqual({ status: 422, message: "booking is not pending" });
    expect((await hostGet(host, id)).body.data.status).toBe(won[0].body.data.status);
  }, 120_000);
});

describe("an unanswered request", () => {
  it("expires after confirmation_hours: the slot freed, the booker told, booking.declined with reason expired", async () => {
    const { host, event, hook } = await requestSetup({ confirmation_hours: 1 });
    const start = nextSlot();
    const id = (await request(host, event, start, "expire-me@example.com")).body.data.id;
    await receiver.waitFor(hook, 1);
    await advanceClock(server, 30 * 60_000);
    // Half its time: still waiting.
    expect((await hostGet(host, id)).body.data.status).toBe("pending");

    await advanceClock(server, 31 * 60_000);
    const expired = await until("the request expired", async () => {
      const b = (await hostGet(host, id)).body.data;
      return b.status === "expired" ? b : undefined;
    }, { timeoutMs: 60_000 });
    expect(expired.cancel_reason).toBe("expired");
    expect(await offered(host, event, start)).toBe(true);
    await smtp.waitFor(1, mailsTo("expire-me@example.com", /^Not confirmed/));
    const messages = await receiver.waitFor(hook, 2);
    expect(messages[1].message).toMatchObject({ type: "booking.declined", data: { booking: { id, status: "expired", cancel_reason: "expired" } } });
    expect((await confirm(host, id)).body.message).toBe("booking is not pending");
  }, 120_000);
});

describe("no-shows", () => {
  it("are recorded only once the booking has started: 422 before, then 200 no-show recorded, booking.no_show, listings filter by it, null clears it", async () => {
    const host = await newHost({ timezone: "UTC" });
    const event = await newEvent(host);
    const hook = `/no-show-${++pathSeq}`;
    const made = await rest("POST", "/webhooks", { key: host.key, body: { webhook: { url: receiver.url(hook), events: ["booking.no_show"] } } });
    receiver.secret(hook, made.body.data.secret);
    // The next half hour on the server's clock (which other tests here moved on).
    const [now] = await advanceClock(server, 0);
    const start = new Date(Math.ceil((now.getTime() + 60_000) / 1_800_000) * 1_800_000).toISOString();
    const booked = await rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, { body: { booking: { start_time: start, attendee_name: "N", attendee_email: "no-show@example.com" } } });
    expect(booked.status).toBe(201);
    const id = booked.body.data.id;
    const mark = (noShow: string | null) => rest("POST", `/bookings/${id}/no_show`, { key: host.key, body: { booking: { no_show: noShow } } });

    const early = await mark("attendee");
    expect({ status: early.status, message: early.body.message }).toEqual({ status: 422, message: "booking has not started yet" });

    await advanceClock(server, 31 * 60_000);
    const recorded = await mark("attendee");
    expect(recorded.status).toBe(200);
    expect(recorded.body.message).toBe("no-show recorded");
    expect(recorded.body.data).toMatchObject({ id, no_show: "attendee" });
    expect((await hostGet(host, id)).body.data.no_show).toBe("attendee");
    const [message] = await receiver.waitFor(hook, 1);
    expect(message.message).toMatchObject({ type: "booking.no_show", data: { booking: { id, no_show: "attendee" } } });

    const listed = async (noShow: string) => {
      const res = await rest("GET", `/events/${event.id}/bookings?category=past&no_show=${noShow}`, { key: host.key });
      return { status: res.status, ids: res.body.data?.records?.map((r: Json) => r.id) };
    };
    expect(await listed("attendee")).toEqual({ status: 200, ids: [id] });
    expect(await listed("host")).toEqual({ status: 200, ids: [] });
    expect((await listed("maybe")).status).toBe(422);
    expect((await mark("nobody")).status).toBe(422);

    const cleared = await mark(null);
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.no_show).toBeNull();
    expect(await listed("attendee")).toEqual({ status: 200, ids: [] });
    await receiver.waitFor(hook, 2);
  }, 120_000);

  it("a request cannot have one", async () => {
    const { host, event } = await requestSetup();
    const id = (await request(host, event, nextSlot())).body.data.id;
    const res = await rest("POST", `/bookings/${id}/no_show`, { key: host.key, body: { booking: { no_show: "host" } } });
    expect(res.status).toBe(422);
  });
});

describe("the host's calendar", () => {
  it("gets no event for a request, one once the host confirms it, and none for a declined request", async () => {
    const radicale = await startRadicale({ ann: "secret" });
    try {
      const calendarUrl = await radicale.mkcalendar("ann", "requests", "Requests");
      const host = await newHost({ timezone: "UTC" });
      const conn = await rest("POST", "/calendar_connections", { key: host.key, body: { connection: { provider: "caldav", server_url: radicale.url, username: "ann", password: "secret" } } });
      expect(conn.status).toBe(201);
      const calendar = (conn.body.data.calendars as Json[]).find((c) => c.name === "Requests");
      const event = await newEvent(host, { requires_confirmation: true, connected_calendar_id: calendar.id });
      const objectOf = (id: string) => radicale.get("ann", `${calendarUrl}${id}.ics`);
      const [kept, turnedDown] = [(await request(host, event, nextSlot())).body.data.id, (await request(host, event, nextSlot())).body.data.id];
      // The declined one is answered first: its duties have run by the time the confirmed one's event is written.
      expect((await decline(host, turnedDown)).status).toBe(200);
      expect((await objectOf(kept)).status).toBe(404);
      expect((await confirm(host, kept)).status).toBe(200);
      await until("the confirmed request's event written", async () => ((await hostGet(host, kept)).body.data.calendar_event_status === "synced" ? true : undefined), { timeoutMs: 30_000 });
      expect((await objectOf(kept)).status).toBe(200);
      expect((await objectOf(turnedDown)).status).toBe(404);
      expect((await hostGet(host, turnedDown)).body.data.calendar_event_status).toBe("none");
    } finally {
      await radicale.dispose();
    }
  }, 120_000);
});
