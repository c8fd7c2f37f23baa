// The last place of a daily or weekly limit under racing requests: two replicas on one database, REST and gRPC at once, exactly one booking (or move) wins; and calendar_busy from a host's feed.
import http from "node:http";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import mongoose from "mongoose";
import { describe, expect, it } from "vitest";
import { PublicBookingService } from "../../gen/scheduling/v1/public_booking_pb.js";
import { restAt, type Json } from "../helpers/api.js";
import { detailsOf } from "../helpers/errorDetails.js";
import { addDays } from "../../src/domain/timezones.js";
import { dayFromToday, fixturesAt, utcIso as at, type Host } from "../helpers/fixtures.js";
import { unaryAt } from "../helpers/grpcAt.js";
import { slotRefusalCode } from "../helpers/calls.js";
import { useReplicas } from "../helpers/replicas.js";

// A feed read gets 30 s: at load 30 the default 3 s made calendar_busy a 503 "calendar is unavailable".
const cluster = useReplicas(2, { OUTBOUND_ALLOW_PRIVATE: "true", CALENDAR_TIMEOUT_MS: "30000" });

interface Answer {
  ok: boolean;
  /** "409 daily_limit" (REST status and data.reason) or the RPC code and message. */
  refusal?: string;
  id?: string;
}

/** One attempt through replica `r` over REST or gRPC: a booking (`privateKey` unset) or a move of the booking. */
async function attempt(r: number, protocol: "rest" | "grpc", host: Host, event: Json, start: string, privateKey?: string): Promise<Answer> {
  if (protocol === "rest") {
    const path = privateKey ? `/api/v1/public/bookings/${privateKey}/reschedule` : `/api/v1/public/users/${host.user.url}/events/${event.url}/bookings`;
    const body = privateKey ? { booking: { start_time: start } } : { booking: { start_time: start, attendee_name: "Racer", attendee_email: "racer@example.com" } };
    const res = await restAt(cluster.servers[r].baseUrl, "POST", path, { body });
    return res.status === 201 ? { ok: true, id: res.body.data.id } : { ok: false, refusal: `${res.status} ${res.body.message} ${res.body.data?.reason}` };
  }
  try {
    const answer = privateKey
      ? await unaryAt(cluster.grpc[r], PublicBookingService.method.rescheduleBooking, { privateKey, booking: { startTime: start } })
      : await unaryAt(cluster.grpc[r], PublicBookingService.method.createBooking, {
          userUrl: host.user.url,
          eventUrl: event.url,
          booking: { startTime: start, attendeeName: "Racer", attendeeEmail: "racer@example.com" },
        });
    return { ok: true, id: answer.booking?.id };
  } catch (err) {
    const e = ConnectError.from(err);
    return { ok: false, refusal: `${Code[e.code]} ${decodeURIComponent(e.rawMessage)}` };
  }
}

/** Each request through the next of: REST on the first replica, gRPC on the second, REST on the second, gRPC on the first. */
const WAYS = [
  [0, "rest"],
  [1, "grpc"],
  [1, "rest"],
  [0, "grpc"],
] as const;

/** The refusals a lost race may give for `reason`: the REST envelope's or the RPC code and message (callers.md: ALREADY_EXISTS only for `taken`). */
const refusalsFor = (reason: string) => [`409 slot is not available ${reason}`, `${Code[slotRefusalCode(reason)]} slot is not available: ${reason}`];

/** A database deadline missed on the loaded machine: 503 (Unavailable over RPC), and nothing written. */
const isUnavailable = (a: Answer) => /^(503 |Unavailable )/.test(a.refusal ?? "");

/**
 * The race's outcome: at most one won, every other was refused for `reason`, except answers that missed a database
 * deadline (503, nothing written). When the one that took the place was such an answer, no one won, and the place
 * is still free for exactly one more: `retry` (a sequential request) takes it, and a second one is refused.
 */
async function expectOneWinner(answers: Answer[], reason: string, retry: (n: number) => Promise<Answer>): Promise<void> {
  const won = answers.filter((a) => a.ok).length;
  expect(won, JSON.stringify(answers)).toBeLessThanOrEqual(1);
  for (const a of answers.filter((x) => !x.ok && !isUnavailable(x))) expect(refusalsFor(reason)).toContain(a.refusal);
  if (won === 1) return;
  expect(answers.some(isUnavailable), JSON.stringify(answers)).toBe(true);
  expect((await retry(0)).ok).toBe(true);
  expect(refusalsFor(reason)).toContain((await retry(1)).refusal);
}

async function confirmedOn(eventId: string, from: string, to: string): Promise<number> {
  return cluster.direct.collection("bookings").countDocuments({
    event_id: new mongoose.Types.ObjectId(eventId),
    status: "confirmed",
    start_time: { $gte: new Date(`${from}T00:00:00Z`), $lt: new Date(`${addDays(to, 1)}T00:00:00Z`) },
  });
}

async function slotCount(r: number, host: Host, event: Json, from: string, to = from): Promise<number> {
  const res = await restAt(cluster.servers[r].baseUrl, "GET", `/api/v1/public/users/${host.user.url}/events/${event.url}/slots?date_from=${from}&date_to=${to}&timezone=UTC`);
  expect(res.status).toBe(200);
  return res.body.data.slots.length;
}

describe("the last place of a limit, two replicas, REST and gRPC at once", () => {
  it("daily_limit: of 16 requests for 16 free times of a day with one place left, exactly one is booked", async () => {
    const fx = fixturesAt(cluster.servers[0].baseUrl);
    const host = await fx.newHost({ timezone: "UTC" });
    const event = await fx.newEvent(host, { name: "Daily", daily_limit: 3 });
    const day = dayFromToday(9);
    await fx.book(host, event, { start_time: at(day, "01:00") });
    await fx.book(host, event, { start_time: at(day, "02:00") });
    const times = Array.from({ length: 16 }, (_, i) => at(day, `${String(6 + i).padStart(2, "0")}:00`));
    const answers = await Promise.all(times.map((t, i) => attempt(WAYS[i % 4][0], WAYS[i % 4][1], host, event, t)));
    await expectOneWinner(answers, "daily_limit", (n) => attempt(n, "rest", host, event, at(day, `2${n}:00`)));
    expect(await confirmedOn(event.id, day, day)).toBe(3);
    for (const r of [0, 1]) expect(await slotCount(r, host, event, day)).toBe(0);
    expect(await slotCount(1, host, event, addDays(day, 1))).toBe(48);
  });

  it("weekly_limit: of 12 requests over the rest of a week with one place left, exactly one is booked", async () => {
    const fx = fixturesAt(cluster.servers[1].baseUrl);
    const host = await fx.newHost({ timezone: "UTC" });
    expect((await restAt(cluster.servers[1].baseUrl, "PATCH", "/api/v1/user", { key: host.key, body: { user: { start_day_of_week: 1 } } })).status).toBe(200);
    const event = await fx.newEvent(host, { name: "Weekly", weekly_limit: 2 });
    let monday = dayFromToday(8);
    while (new Date(`${monday}T00:00:00Z`).getUTCDay() !== 1) monday = addDays(monday, 1);
    await fx.book(host, event, { start_time: at(monday, "09:00") });
    const times = Array.from({ length: 12 }, (_, i) => at(addDays(monday, 1 + (i % 6)), i < 6 ? "10:00" : "15:00"));
    const answers = await Promise.all(times.map((t, i) => attempt(WAYS[i % 4][0], WAYS[i % 4][1], host, event, t)));
    await expectOneWinner(answers, "weekly_limit", (n) => attempt(n, "grpc", host, event, at(addDays(monday, 2 + n), "20:00")));
    expect(await confirmedOn(event.id, monday, addDays(monday, 6))).toBe(2);
    for (const r of [0, 1]) expect(await slotCount(r, host, event, monday, addDays(monday, 6))).toBe(0);
  });

  it("daily_limit: of 8 bookings of other days moved at once onto a day with one place, exactly one moves", async () => {
    const fx = fixturesAt(cluster.servers[0].baseUrl);
    const host = await fx.newHost({ timezone: "UTC" });
    const event = await fx.newEvent(host, { name: "Moves", daily_limit: 1 });
    const day = dayFromToday(12);
    const others = [];
    for (let i = 1; i <= 8; i++) others.push(await fx.book(host, event, { start_time: at(addDays(day, i), "10:00") }));
    const answers = await Promise.all(
      others.map((b, i) => attempt(WAYS[i % 4][0], WAYS[i % 4][1], host, event, at(day, `${String(8 + i).padStart(2, "0")}:00`), b.private_key)),
    );
    // A move that missed a deadline left its booking where it was: another one takes the place instead.
    const stayed = others.filter((_, i) => isUnavailable(answers[i]));
    await expectOneWinner(answers, "daily_limit", (n) => attempt(0, "rest", host, event, at(day, `2${n}:00`), stayed[n]?.private_key));
    expect(await confirmedOn(event.id, day, day)).toBe(1);
    expect(await confirmedOn(event.id, day, addDays(day, 8))).toBe(8);
  });
});

describe("calendar_busy", () => {
  it("a time the host's calendar holds is refused with calendar_busy over REST and gRPC", async () => {
    const day = dayFromToday(6);
    const stamp = (time: string) => `${day.replace(/-/g, "")}T${time.replace(":", "")}00Z`;
    const feed = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//rules tests//EN", "BEGIN:VEVENT", "UID:busy@rules", "DTSTAMP:20260101T000000Z", `DTSTART:${stamp("10:00")}`, `DTEND:${stamp("11:00")}`, "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");
    const srv = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/calendar" }).end(feed));
    await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
    try {
      const fx = fixturesAt(cluster.servers[0].baseUrl);
      const host = await fx.newHost({ timezone: "UTC" });
      const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}/busy.ics`;
      const connected = await restAt(cluster.servers[0].baseUrl, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "ics", url } } });
      expect(connected.status, JSON.stringify(connected.body)).toBe(201);
      const event = await fx.newEvent(host, { name: "Busy" });
      expect(await attempt(0, "rest", host, event, at(day, "10:30"))).toEqual({ ok: false, refusal: "409 slot is not available calendar_busy" });
      expect(await attempt(1, "grpc", host, event, at(day, "10:00"))).toEqual({ ok: false, refusal: "FailedPrecondition slot is not available: calendar_busy" });
      // Its details: reason CALENDAR_BUSY, naming the event and the time (callers.md "Errors programs can read").
      const viaConnect = await createClient(PublicBookingService, createConnectTransport({ baseUrl: cluster.servers[1].baseUrl, httpVersion: "1.1" }))
        .createBooking({ userUrl: host.user.url, eventUrl: event.url, booking: { startTime: at(day, "10:00"), attendeeName: "Racer", attendeeEmail: "racer@example.com" } })
        .then(() => undefined, (e: unknown) => ConnectError.from(e));
      expect(detailsOf(viaConnect!)).toEqual({
        infos: 1,
        reason: "CALENDAR_BUSY",
        domain: "scheduling.v1",
        metadata: { event_id: event.id, start_time: new Date(at(day, "10:00")).toISOString() },
        violations: undefined,
        retrySeconds: undefined,
      });
      expect((await attempt(1, "rest", host, event, at(day, "11:00"))).ok).toBe(true);
    } finally {
      srv.closeAllConnections();
      await new Promise((resolve) => srv.close(resolve));
    }
  });
});
