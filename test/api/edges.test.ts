// The edges of every range the API reads (dates, page sizes) and small answers that were wrong there (issue 14).
import { beforeAll, describe, expect, it } from "vitest";
import { baseUrl, type Json } from "../helpers/api.js";
import { grpcFrame, grpcWebTrailers } from "../helpers/raw.js";
import { dayFromToday, hostCalls, importBookings, newEvent, newHost, publicCalls, pageOf, type Host, utcIso } from "../helpers/bookings.js";
import { expectRefused, invoke, ok, PROTOCOLS, type Protocol } from "../helpers/calls.js";
import { rest } from "../helpers/api.js";
import { RPC_READ_MAX_BYTES } from "../../src/platform/http/app.js";

describe("dates at the edges of the calendar", () => {
  let host: Host;
  let event: Json;
  let booked: string;

  beforeAll(async () => {
    host = await newHost({ timezone: "UTC" });
    event = await newEvent(host, { name: "Edges" });
    [booked] = await importBookings([{ event_id: event.id, start_time: utcIso(dayFromToday(3), "10:00"), attendee_name: "Ada", attendee_email: "ada@example.com" }]);
  });

  describe.each(PROTOCOLS)("over %s", (protocol: Protocol) => {
    it("bookings lists and counts clamp a date beyond the bounds (9999-12-31 was a 500) and keep the default for year 0000", async () => {
      for (const q of [{ date_to: "9999-12-31" }, { date_from: "1900-01-01", date_to: "9999-12-31" }, { date_from: "0001-01-01" }, { date_to: "2999-12-31" }]) {
        const list = await ok(protocol, host.key, hostCalls.list(event.id, q), 200, "Bookings found");
        expect(list.records.map((r: Json) => r.id), JSON.stringify(q)).toEqual([booked]);
        const counts = await ok(protocol, host.key, hostCalls.counts(event.id, q), 200, "Counts fetched");
        expect(counts.upcoming, JSON.stringify(q)).toBe(1);
      }
      for (const q of [{ date_from: "0000-01-01" }, { date_to: "0000-12-31" }, { date_from: "9999-12-31", date_to: "9999-12-31" }]) {
        expect((await invoke(protocol, host.key, hostCalls.list(event.id, q))).ok, JSON.stringify(q)).toBe(true);
        expect((await invoke(protocol, host.key, hostCalls.counts(event.id, q))).ok, JSON.stringify(q)).toBe(true);
      }
    });

    it("slots: a date beyond the bounds is a 422 that states them; 31 days is the widest range, 32 is refused", async () => {
      const { user, event: url } = pageOf(host, event);
      const slots = (q: Json) => invoke(protocol, undefined, publicCalls.slots(user, url, q));
      expectRefused(protocol, await slots({ date_from: "9999-12-31" }), 422, "date_from must be a date from 1970-01-01 to 2999-12-31");
      expectRefused(protocol, await slots({ date_from: "2999-12-01", date_to: "9999-12-31" }), 422, "date_to must be a date from 1970-01-01 to 2999-12-31");
      expectRefused(protocol, await slots({ date_from: "1969-12-31" }), 422, "date_from must be a date from 1970-01-01 to 2999-12-31");
      expectRefused(protocol, await slots({ date_from: "0000-01-01" }), 422, "date_from is not a valid date (YYYY-MM-DD)");
      expect((await slots({ date_from: "2999-12-01", date_to: "2999-12-31" })).ok).toBe(true);
      expect((await slots({ date_from: "1970-01-01", date_to: "1970-02-01" })).ok).toBe(true);
      expectRefused(protocol, await slots({ date_from: "2030-01-01", date_to: "2030-02-02" }), 422, "date_to must be at most 31 days after date_from");
    });

    it("a booking time on a date beyond the bounds is a 422 that states them", async () => {
      const { user, event: url } = pageOf(host, event);
      const o = await invoke(protocol, undefined, publicCalls.book(user, url, { start_time: "9999-12-31T23:30:00-05:00", attendee_name: "Ada", attendee_email: "ada@example.com" }));
      expectRefused(protocol, o, 422, "start_time must be on a date from 1970-01-01 to 2999-12-31");
    });
  });

  it("availability: a date override beyond the bounds is a 422 that states them", async () => {
    const res = await rest("PUT", "/user/availability", {
      key: host.key,
      body: { availability: { weekly_hours: {}, date_overrides: [{ date: "9999-12-31", intervals: [] }], minimum_notice_minutes: 0, booking_window_days: 60 } },
    });
    expect({ status: res.status, message: res.body.message }).toEqual({ status: 422, message: "date_overrides[0].date must be a date from 1970-01-01 to 2999-12-31" });
  });

  it("import: a start or booked_at beyond the bounds is a 422 naming the entry", async () => {
    const res = await rest("POST", "/admin/bookings/import", {
      admin: true,
      body: { bookings: [{ event_id: event.id, start_time: "9999-12-31T23:00:00Z", attendee_name: "Ada", attendee_email: "ada@example.com" }] },
    });
    expect({ status: res.status, message: res.body.message }).toEqual({ status: 422, message: "bookings[0].start_time must be on a date from 1970-01-01 to 2999-12-31" });
  });
});

describe("page[limit] and page[number]: one rule", () => {
  let host: Host;
  let event: Json;

  beforeAll(async () => {
    host = await newHost({ timezone: "UTC" });
    event = await newEvent(host, { name: "Pages" });
    await importBookings(Array.from({ length: 12 }, (_, i) => ({ event_id: event.id, start_time: utcIso(dayFromToday(2), `${String(i).padStart(2, "0")}:00`), attendee_name: `P${i}`, attendee_email: `p${i}@example.com` })));
  });

  it("REST reads page[limit] as the number it writes, as Connect reads JSON: 1e9 and 99999999999 are both 500", async () => {
    const limitOf = async (v: string) => (await rest("GET", `/events/${event.id}/bookings?page[limit]=${encodeURIComponent(v)}`, { key: host.key })).body.data.page.limit;
    expect(await limitOf("1e9")).toBe(500);
    expect(await limitOf("99999999999")).toBe(500);
    expect(await limitOf("1e999")).toBe(500);
    expect(await limitOf("5e0")).toBe(5);
    expect(await limitOf("2.0")).toBe(2);
    expect(await limitOf("2.5")).toBe(10);
    expect(await limitOf("0x10")).toBe(10);
    expect(await limitOf("500")).toBe(500);
    expect(await limitOf("501")).toBe(500);
    const connect = await ok("connect-h1", host.key, hostCalls.list(event.id, { limit: 1e9 }));
    expect(connect.page.limit).toBe(500);
  });

  it("page[number] far beyond the last page is an empty page, at every edge of int32", async () => {
    for (const n of ["2", "2147483647", "99999999999", "1e12"]) {
      const res = await rest("GET", `/events/${event.id}/bookings?page[limit]=10&page[number]=${n}`, { key: host.key });
      expect(res.status, n).toBe(200);
      expect(res.body.data.page.total_records).toBe(12);
    }
  });
});

describe("small wrong answers", () => {
  it("a Connect body over the read limit (a 5 MB picture in base64 and 1 MB) is 413 'too large' (code resource_exhausted), on the fast path and Connect's own; gRPC says the same in its message", async () => {
    const limit = RPC_READ_MAX_BYTES;
    const body = JSON.stringify({ pad: "x".repeat(limit) });
    const answers: unknown[] = [];
    for (const extra of [{}, { "connect-timeout-ms": "10000" }] as Record<string, string>[]) {
      const res = await fetch(`${baseUrl()}/scheduling.v1.UserService/GetUser`, { method: "POST", headers: { "content-type": "application/json", ...extra }, body });
      expect(res.status, JSON.stringify(extra)).toBe(413);
      const answer = await res.json();
      expect(answer).toMatchObject({ code: "resource_exhausted", message: `the request body is too large (${body.length} bytes): at most ${limit} bytes` });
      // callers.md: its reason says it will never fit (and no RetryInfo says "later").
      expect(answer.details).toEqual([{ type: "google.rpc.ErrorInfo", value: expect.any(String), debug: { reason: "REQUEST_TOO_LARGE", domain: "scheduling.v1" } }]);
      answers.push(answer);
    }
    // The fast path and Connect's own answer the same bytes.
    expect(answers[1]).toEqual(answers[0]);
    const web = await fetch(`${baseUrl()}/scheduling.v1.UserService/GetUser`, { method: "POST", headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" }, body: new Uint8Array(grpcFrame(new Uint8Array(limit + 1))) });
    const trailers = grpcWebTrailers(Buffer.from(await web.arrayBuffer()));
    expect(trailers["grpc-status"]).toBe("8");
    expect(decodeURIComponent(trailers["grpc-message"] ?? "")).toMatch(new RegExp(`^the request body is too large( \\(\\d+ bytes\\))?: at most ${limit} bytes$`));
  });

  it("of 20 concurrent reschedules of one booking, at most one moves it and the others are told it was moved (422), not that their free slot is taken", async () => {
    const host = await newHost({ timezone: "UTC" });
    const event = await newEvent(host, { name: "Race" });
    const day = dayFromToday(25);
    const { user, event: url } = pageOf(host, event);
    const booked = await ok("rest", "", publicCalls.book(user, url, { start_time: utcIso(day, "01:00"), attendee_name: "Ada", attendee_email: "ada@example.com" }), 201);
    const targets = Array.from({ length: 20 }, (_, i) => utcIso(day, `${String(2 + Math.floor(i / 2)).padStart(2, "0")}:${i % 2 === 0 ? "00" : "30"}`));
    const answers = await Promise.all(targets.map((t) => invoke("rest", undefined, publicCalls.reschedule(booked.private_key, { start_time: t }))));
    const seen = JSON.stringify(answers.map((a) => [a.http, a.message]));
    const won = answers.filter((a) => a.http === 201);
    // On a loaded database (CI's full run) the one request holding the booking's move may be told 503 (try again)
    // instead: then nobody moved it. Never two moves, never a 409 for a free slot.
    expect(won.length, seen).toBeLessThanOrEqual(1);
    const unavailable = answers.filter((a) => a.http === 503);
    if (won.length === 0) expect(unavailable.length, seen).toBeGreaterThan(0);
    const refused = answers.filter((a) => a.http !== 201 && a.http !== 503);
    expect(refused.length, seen).toBeGreaterThanOrEqual(18);
    for (const a of refused) {
      expect(a.http, a.message).toBe(422);
      expect(a.message).toMatch(/^(booking is rescheduled, only a confirmed booking can be changed|booking is being rescheduled by another request; reload it)$/);
    }
    // The refused left nothing behind: every slot they wanted is free, and the moved booking can move again.
    const free = targets.filter((_, i) => answers[i].http === 422);
    const again = await invoke("rest", undefined, publicCalls.book(user, url, { start_time: free[0], attendee_name: "Bob", attendee_email: "bob@example.com" }));
    expect(again.http).toBe(201);
    if (won.length === 1) {
      const moved = await invoke("rest", undefined, publicCalls.reschedule(won[0].data.private_key, { start_time: free[1] }));
      expect(moved.http).toBe(201);
    }
  });
});
