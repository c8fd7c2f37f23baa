// The booking-change feed (callers.md "Booking changes") over the wire: the REST list and its Server-Sent Events form, WatchBookingChanges over gRPC, gRPC-Web and Connect, resumed without loss or repeat, two replicas of one database, bad tokens and other accounts.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { ConnectError, Code } from "@connectrpc/connect";
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseUrl, rest, restAt, type Json } from "../helpers/api.js";
import { FEED_PROTOCOLS as PROTOCOLS, feedClient, sse, watch } from "../helpers/changeFeed.js";
import { detailsOf } from "../helpers/errorDetails.js";
import { book, dayFromToday, fixturesAt, importBookings, newEvent, newHost, utcIso, type Host } from "../helpers/fixtures.js";
import { tokenOf } from "../../src/domain/bookingFeed.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";
import { grpcFrame, grpcWebTrailers, h2Request, rawRequest } from "../helpers/raw.js";
import { BookingService } from "../../gen/scheduling/v1/booking_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";

let host: Host;
let event: Json;
let day = 0;
/** A fresh time on a day of its own, so bookings in this file never meet. */
const nextStart = () => utcIso(dayFromToday(3 + (day++ % 20)), `${String(8 + Math.floor(day / 20)).padStart(2, "0")}:00`);

beforeAll(async () => {
  host = await newHost();
  event = await newEvent(host);
});

const list = (key: string, query = "") => rest("GET", `/booking_changes${query}`, { key });

describe("the list (REST)", () => {
  it("lists every change of the account in commit order, each with the booking after it, and resumes after next", async () => {
    const start = (await list(host.key, "?limit=500")).body.data;
    const first = await book(host, event, { start_time: nextStart() });
    const second = await book(host, event, { start_time: nextStart() });
    expect((await rest("POST", `/bookings/${second.id}/cancel`, { key: host.key, body: { booking: { reason: "ill" } } })).status).toBe(200);
    expect((await rest("PATCH", `/bookings/${first.id}`, { key: host.key, body: { booking: { internal_notes: "bring slides" } } })).status).toBe(200);
    // The same notes again, and archived: false on a booking never archived, change nothing: no change is listed.
    const same = await rest("PATCH", `/bookings/${first.id}`, { key: host.key, body: { booking: { internal_notes: "bring slides", archived: false } } });
    expect([same.status, same.body.data.internal_notes]).toEqual([200, "bring slides"]);
    const moved = await rest("POST", `/public/bookings/${first.private_key}/reschedule`, { body: { booking: { start_time: nextStart() } } });
    expect(moved.status).toBe(201);

    const res = await list(host.key, `?after=${start.next}`);
    expect(res.status).toBe(200);
    expect(res.body.message).toBe("booking changes found");
    const changes = res.body.data.changes;
    expect(changes.map((c: Json) => c.type)).toEqual(["booking.created", "booking.created", "booking.canceled", "booking.updated", "booking.rescheduled"]);
    expect(changes.map((c: Json) => c.booking.id)).toEqual([first.id, second.id, second.id, first.id, moved.body.data.id]);
    expect(changes[0].booking.status).toBe("confirmed");
    expect(changes[2].booking).toMatchObject({ status: "canceled", cancel_reason: "ill" });
    expect(changes[3].booking.internal_notes).toBe("bring slides");
    expect(changes[4].previous_booking_id).toBe(first.id);
    expect(changes[0].previous_booking_id).toBeUndefined();
    for (const c of changes) {
      expect(c.token.length).toBeLessThanOrEqual(128);
      expect(c.occurred_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    }
    expect(res.body.data.next).toBe(changes[4].token);

    // Resuming after the second change gives exactly the three after it; after the last, nothing and the same token.
    const rest3 = (await list(host.key, `?after=${changes[1].token}`)).body.data;
    expect(rest3.changes.map((c: Json) => c.token)).toEqual(changes.slice(2).map((c: Json) => c.token));
    const none = (await list(host.key, `?after=${changes[4].token}`)).body.data;
    expect(none).toEqual({ changes: [], next: changes[4].token });
    // Pages of one.
    const page = (await list(host.key, `?after=${start.next}&limit=1`)).body.data;
    expect(page.changes.map((c: Json) => c.token)).toEqual([changes[0].token]);
    expect(page.next).toBe(changes[0].token);
  });

  it("without after, starts at the oldest kept change; event_id narrows it", async () => {
    const other = await newEvent(host);
    const before = (await list(host.key, "?limit=500")).body.data;
    const a = await book(host, other, { start_time: nextStart() });
    const all = (await list(host.key, "?limit=500")).body.data.changes;
    expect(all.length).toBeGreaterThan(before.changes.length);
    expect(all.at(-1).booking.id).toBe(a.id);
    const only = (await list(host.key, `?event_id=${other.id}&limit=500`)).body.data.changes;
    expect(only.map((c: Json) => c.booking.id)).toEqual([a.id]);
  });

  it("refuses a bad token with 410 and a bad limit with 422", async () => {
    const real = (await list(host.key, "?limit=1")).body.data.next as string;
    // Control characters, a character added to a real token, the same token twice, a nested key: none is a token
    // the service gave (a reader resuming must never be listed the feed from its start again).
    const bad = ["nonsense", "YmMxOmFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYTox", "x".repeat(200), "ab%00cd", "ab%0Acd", `${real}A`, `${real}&after=${real}`, "x&after[]=y"];
    for (const after of bad) {
      const res = await list(host.key, `?after=${after}`);
      expect({ after, status: res.status, message: res.body.message }).toEqual({ after, status: 410, message: "changes are no longer kept; list the bookings again" });
    }
    for (const limit of ["0", "501", "ten", "-1"]) {
      const res = await list(host.key, `?limit=${limit}`);
      expect(res.status).toBe(422);
      expect(res.body.message).toBe("limit must be between 1 and 500");
    }
  });

  it("shows an account only its own changes, and another account's token is not one of its own", async () => {
    const other = await newHost();
    const otherEvent = await newEvent(other);
    await book(other, otherEvent, { start_time: nextStart() });
    const mine = (await list(host.key, "?limit=500")).body.data.changes;
    const theirs = (await list(other.key, "?limit=500")).body.data.changes;
    expect(theirs.length).toBe(1);
    expect(mine.some((c: Json) => c.booking.event_id === otherEvent.id)).toBe(false);
    expect((await list(host.key, `?after=${theirs[0].token}`)).status).toBe(410);
    expect((await rest("GET", "/booking_changes")).status).toBe(401);
  });
});

describe("the stream (Server-Sent Events)", () => {
  it("starts now with a bookmark, sends each change as an event, and resumes from Last-Event-ID", async () => {
    const s = sse(host.key);
    await until("the bookmark", () => s.events[0]);
    expect(s.status()).toBe(200);
    expect(s.events[0].event).toBe("bookmark");
    expect(Object.keys(s.events[0].data).sort()).toEqual(["occurred_at", "token", "type"]);
    const b = await book(host, event, { start_time: nextStart() });
    await until("the change", () => s.events.find((e) => e.data.booking?.id === b.id));
    const created = s.events.find((e) => e.data.booking?.id === b.id)!;
    expect(created.event).toBe("booking.created");
    expect(created.id).toBe(created.data.token);
    await s.stop();

    await rest("POST", `/bookings/${b.id}/cancel`, { key: host.key, body: { booking: {} } });
    const resumed = sse(host.key, { "Last-Event-ID": created.id });
    await until("the cancel", () => resumed.events.find((e) => e.event === "booking.canceled"));
    expect(resumed.events[0]).toMatchObject({ event: "booking.canceled" });
    expect(resumed.events[0].data.booking.id).toBe(b.id);
    await resumed.stop();
  });

  it("answers a bad Last-Event-ID or after with the 410 envelope, and no key with 401", async () => {
    for (const [headers, query] of [[{ "Last-Event-ID": "bogus" }, ""], [{}, "?after=bogus"]] as const) {
      const res = await fetch(`${baseUrl()}/api/v1/booking_changes${query}`, { headers: { Accept: "text/event-stream", "X-API-KEY": host.key, ...headers } });
      expect(res.status).toBe(410);
      expect((await res.json()).message).toBe("changes are no longer kept; list the bookings again");
    }
    expect((await fetch(`${baseUrl()}/api/v1/booking_changes`, { headers: { Accept: "text/event-stream" } })).status).toBe(401);
  });

  it("takes the Accept header's preferences: the event stream refused (q=0) or ranked below JSON is the list", async () => {
    for (const accept of ["text/event-stream;q=0, application/json", "application/json;q=1, text/event-stream;q=0.1", "*/*"]) {
      const res = await fetch(`${baseUrl()}/api/v1/booking_changes?limit=1`, { headers: { Accept: accept, "X-API-KEY": host.key } });
      expect({ accept, status: res.status, type: res.headers.get("content-type") }).toEqual({ accept, status: 200, type: "application/json; charset=utf-8" });
      expect(((await res.json()) as Json).message).toBe("booking changes found");
    }
  });
});

describe("WatchBookingChanges", () => {
  it.each(PROTOCOLS)("over %s: a bookmark first, then live changes; resumed after a token it misses and repeats nothing", async (kind) => {
    const w = watch(kind, host.key);
    await until("the bookmark", () => w.got[0]);
    expect(w.got[0].type).toBe("bookmark");
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await book(host, event, { start_time: nextStart() }));
    await until("three changes", () => w.got.length >= 4);
    await w.stop();
    expect(w.got.slice(1).map((c) => c.booking?.id)).toEqual(made.map((m) => m.id));
    expect(w.got[1].occurredAt).toBeDefined();
    expect(w.got[1].previousBookingId).toBeUndefined();
    // The proto's booking is what GetBooking answers (nothing changed it since).
    expect(w.got[3].booking).toEqual((await feedClient(kind, host.key).getBooking({ id: made[2].id })).booking);

    // Resumed after the first: the other two, then the live ones.
    const again = watch(kind, host.key, w.got[1].token);
    await until("the two after the first", () => again.got.length >= 2);
    const later = await book(host, event, { start_time: nextStart() });
    await until("the live one", () => again.got.length >= 3);
    await again.stop();
    expect(again.got.map((c) => c.booking?.id)).toEqual([made[1].id, made[2].id, later.id]);
  });

  it.each(PROTOCOLS)("over %s: a bad token is FAILED_PRECONDITION with reason CHANGES_EXPIRED", async (kind) => {
    const err = await (async () => {
      try {
        for await (const _ of feedClient(kind, host.key).watchBookingChanges({ after: "bogus" })) return undefined;
      } catch (e) {
        return ConnectError.from(e);
      }
    })();
    expect(err?.code).toBe(Code.FailedPrecondition);
    expect(detailsOf(err!).reason).toBe("CHANGES_EXPIRED");
  });

  it.each(PROTOCOLS)("over %s: a bad key is UNAUTHENTICATED, with its ErrorInfo", async (kind) => {
    const w = watch(kind, "not-a-key");
    await until("the refusal", () => w.ended());
    const err = ConnectError.from(w.failure());
    expect(err.code).toBe(Code.Unauthenticated);
    expect(detailsOf(err)).toMatchObject({ infos: 1, reason: "UNAUTHENTICATED", domain: "scheduling.v1", retrySeconds: undefined });
  });

  it("lists over RPC as over REST", async () => {
    const rpc = await feedClient("connect-h1", host.key).listBookingChanges({ limit: 500 });
    const restList = (await list(host.key, "?limit=500")).body.data;
    expect(rpc.changes.map((c) => c.token)).toEqual(restList.changes.map((c: Json) => c.token));
    expect(rpc.next).toBe(restList.next);
  });
});

/** The google.rpc.ErrorInfo reason of a grpc-status-details-bin value (base64 of a google.rpc.Status), and its code. */
function statusOf(details: string | undefined): { code: number; reason: string | undefined } | undefined {
  if (details === undefined) return undefined;
  const status = fromBinary(StatusSchema, Buffer.from(details, "base64"));
  return { code: status.code, reason: status.details.map((d) => anyUnpack(d, ErrorInfoSchema)).find((d) => d !== undefined)?.reason };
}

/** A Connect stream's end-of-stream message (the frame flagged 0x02): its JSON. */
function connectEndStream(body: Buffer): Json {
  for (let at = 0; at + 5 <= body.length; at += 5 + body.readUInt32BE(at + 1)) {
    if (body[at] === 0x02) return JSON.parse(body.subarray(at + 5, at + 5 + body.readUInt32BE(at + 1)).toString("utf8"));
  }
  return undefined;
}

describe("a deadline that passes", () => {
  const watchPath = "/scheduling.v1.BookingService/WatchBookingChanges";
  const request = (method: typeof BookingService.method.watchBookingChanges | typeof BookingService.method.listBookingChanges) =>
    grpcFrame(toBinary(method.input, create(method.input, {})));

  it("gRPC: a WatchBookingChanges stream ends with DEADLINE_EXCEEDED and its ErrorInfo, not OK; so does a unary call answered after its deadline", async () => {
    const session = http2.connect(baseUrl());
    session.on("error", () => undefined);
    try {
      const headers = (path: string, timeout: string) => ({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", "x-api-key": host.key, "grpc-timeout": timeout });
      const stream = await h2Request(session, headers(watchPath, "700m"), request(BookingService.method.watchBookingChanges));
      // The bookmark came before the end.
      expect(stream.body.length).toBeGreaterThan(5);
      expect({ status: stream.grpcStatus, details: statusOf(stream.grpcDetails) }).toEqual({ status: "4", details: { code: 4, reason: "DEADLINE_EXCEEDED" } });
      // A deadline of one nanosecond has passed before the answer is ready.
      const unary = await h2Request(session, headers("/scheduling.v1.BookingService/ListBookingChanges", "1n"), request(BookingService.method.listBookingChanges));
      expect({ status: unary.grpcStatus, details: statusOf(unary.grpcDetails) }).toEqual({ status: "4", details: { code: 4, reason: "DEADLINE_EXCEEDED" } });
      // Without a deadline the same call answers.
      const plain = await h2Request(session, { ...headers("/scheduling.v1.BookingService/ListBookingChanges", "5S"), "grpc-timeout": "30S" }, request(BookingService.method.listBookingChanges));
      expect(plain.grpcStatus).toBe("0");
    } finally {
      session.close();
    }
  });

  it("gRPC-Web and Connect: the stream ends with deadline_exceeded and its details", async () => {
    const web = await rawRequest(baseUrl(), {
      method: "POST",
      path: watchPath,
      headers: { "content-type": "application/grpc-web+proto", "x-api-key": host.key, "grpc-timeout": "700m" },
      body: request(BookingService.method.watchBookingChanges),
    });
    const trailers = grpcWebTrailers(web.bytes);
    expect({ status: trailers["grpc-status"], details: statusOf(trailers["grpc-status-details-bin"]) }).toEqual({ status: "4", details: { code: 4, reason: "DEADLINE_EXCEEDED" } });

    const connect = await rawRequest(baseUrl(), {
      method: "POST",
      path: watchPath,
      headers: { "content-type": "application/connect+json", "x-api-key": host.key, "connect-timeout-ms": "700" },
      body: Buffer.concat([Buffer.from([0, 0, 0, 0, 2]), Buffer.from("{}")]),
    });
    const end = connectEndStream(connect.bytes);
    expect(end?.error).toMatchObject({ code: "deadline_exceeded", details: [{ type: "google.rpc.ErrorInfo", debug: { reason: "DEADLINE_EXCEEDED", domain: "scheduling.v1" } }] });
  });
});

describe("a key regenerated while its streams are open", () => {
  it.each(["grpc", "connect-h1"] as const)("over %s: the stream ends UNAUTHENTICATED before it delivers anything written after the regeneration answered", async (kind) => {
    const h = await newHost();
    const ev = await newEvent(h);
    const w = watch(kind, h.key);
    await until("the bookmark", () => w.got[0]);
    const regenerated = await rest("PUT", "/users/regenerate_api_key", { key: h.key });
    expect(regenerated.status).toBe(200);
    const newKey = regenerated.body.data.api_key as string;
    const after = await book({ ...h, key: newKey }, ev, { start_time: nextStart() });
    await until("the stream's end", () => w.ended());
    const err = ConnectError.from(w.failure());
    expect(err.code).toBe(Code.Unauthenticated);
    expect(detailsOf(err)).toMatchObject({ infos: 1, reason: "UNAUTHENTICATED", domain: "scheduling.v1" });
    // The attendee of the booking made after the regeneration never reached the old key's stream.
    expect(w.got.map((c) => c.booking?.id)).not.toContain(after.id);
    // The new key's stream delivers it.
    const fresh = watch(kind, newKey, w.got[0].token);
    await until("the booking on the new key's stream", () => fresh.got.find((c) => c.booking?.id === after.id));
    await fresh.stop();
  });
});

describe("callers.md, statement by statement", () => {
  it("a host's booking and an import are booking.created, a host's move booking.rescheduled, archiving booking.updated; a change's booking is GET /bookings/<id> after it", async () => {
    const h = await newHost();
    const ev = await newEvent(h);
    const start = (await list(h.key)).body.data.next;
    const desk = await rest("POST", `/events/${ev.id}/bookings`, { key: h.key, body: { booking: { start_time: nextStart(), attendee_name: "Grace", attendee_email: "grace@example.com" } } });
    expect(desk.status).toBe(201);
    const [imported] = await importBookings([{ event_id: ev.id, start_time: nextStart(), attendee_name: "Sam", attendee_email: "sam@example.com" }]);
    const moved = await rest("POST", `/bookings/${desk.body.data.id}/reschedule`, { key: h.key, body: { booking: { start_time: nextStart() } } });
    expect(moved.status).toBe(201);
    expect((await rest("PATCH", `/bookings/${imported}`, { key: h.key, body: { booking: { archived: true } } })).status).toBe(200);
    const changes = (await list(h.key, `?after=${start}`)).body.data.changes;
    expect(changes.map((c: Json) => [c.type, c.booking.id, c.previous_booking_id])).toEqual([
      ["booking.created", desk.body.data.id, undefined],
      ["booking.created", imported, undefined],
      ["booking.rescheduled", moved.body.data.id, desk.body.data.id],
      ["booking.updated", imported, undefined],
    ]);
    expect(changes[3].booking.archived).toBe(true);
    // The change's JSON: exactly the fields callers.md names, previous_booking_id only on a move (team only on a team's booking).
    expect(changes.map((c: Json) => Object.keys(c).sort())).toEqual([
      ["booking", "occurred_at", "token", "type"],
      ["booking", "occurred_at", "token", "type"],
      ["booking", "occurred_at", "previous_booking_id", "token", "type"],
      ["booking", "occurred_at", "token", "type"],
    ]);
    for (const c of changes.slice(2)) expect(c.booking).toEqual((await rest("GET", `/bookings/${c.booking.id}`, { key: h.key })).body.data);
  });

  it("without limit a page holds 100 changes", async () => {
    const h = await newHost();
    const ev = await newEvent(h);
    const ids = await importBookings(
      Array.from({ length: 101 }, (_, i) => ({ event_id: ev.id, start_time: utcIso(dayFromToday(3 + (i % 20)), `${String(8 + Math.floor(i / 20)).padStart(2, "0")}:00`), attendee_name: "Sam", attendee_email: "sam@example.com" })),
    );
    const page = (await list(h.key)).body.data;
    expect(page.changes.map((c: Json) => c.booking.id)).toEqual(ids.slice(0, 100));
    expect(page.next).toBe(page.changes[99].token);
    expect((await list(h.key, `?after=${page.next}`)).body.data.changes.map((c: Json) => c.booking.id)).toEqual(ids.slice(100));
  });

  it("a well-formed token of the account past its feed's end is unknown: 410, and CHANGES_EXPIRED on the stream", async () => {
    const h = await newHost();
    const beyond = tokenOf({ accountId: h.user.id, seq: 1000 });
    const res = await list(h.key, `?after=${beyond}`);
    expect({ status: res.status, message: res.body.message }).toEqual({ status: 410, message: "changes are no longer kept; list the bookings again" });
    const w = watch("grpc", h.key, beyond);
    await until("the refusal", () => w.ended());
    expect(ConnectError.from(w.failure()).code).toBe(Code.FailedPrecondition);
    expect(detailsOf(ConnectError.from(w.failure())).reason).toBe("CHANGES_EXPIRED");
  });

  it("SSE: after resumes like Last-Event-ID, each event's data is the change as the list shows it; event_id narrows streams, bookmarks still come", async () => {
    const h = await newHost();
    const [one, two] = [await newEvent(h), await newEvent(h)];
    const start = (await list(h.key)).body.data.next;
    const b1 = await book(h, one, { start_time: nextStart() });
    const b2 = await book(h, two, { start_time: nextStart() });
    const listed = (await list(h.key, `?after=${start}`)).body.data.changes;
    const resumed = sse(h.key, {}, `?after=${start}`);
    await until("the two kept changes", () => resumed.events.length >= 2);
    await resumed.stop();
    expect(resumed.events).toEqual(listed.map((c: Json) => ({ id: c.token, event: c.type, data: c })));
    expect(listed.map((c: Json) => c.booking.id)).toEqual([b1.id, b2.id]);
    const both = (await list(h.key, `?after=${start}&event_id=${one.id}&event_id=${two.id}`)).body.data.changes;
    expect(both.map((c: Json) => c.booking.id)).toEqual([b1.id, b2.id]);
    const onlyOne = sse(h.key, {}, `?after=${start}&event_id=${one.id}`);
    await until("the first event's change", () => onlyOne.events[0]);
    await onlyOne.stop();

    // Narrowed live streams: a bookmark first, then only the second event's changes.
    const narrowSse = sse(h.key, {}, `?event_id=${two.id}`);
    const narrowRpc = watch("connect-h2", h.key, "", baseUrl(), [two.id]);
    await until("the bookmarks", () => narrowSse.events[0] && narrowRpc.got[0]);
    await book(h, one, { start_time: nextStart() });
    const b4 = await book(h, two, { start_time: nextStart() });
    await until("the second event's change", () => narrowSse.events[1] && narrowRpc.got[1]);
    await Promise.all([narrowSse.stop(), narrowRpc.stop()]);
    expect(onlyOne.events.map((e) => e.data.booking.id)).toEqual([b1.id]);
    expect(narrowSse.events.map((e) => [e.event, e.data.booking?.id])).toEqual([["bookmark", undefined], ["booking.created", b4.id]]);
    expect(narrowRpc.got.map((c) => [c.type, c.booking?.id])).toEqual([["bookmark", undefined], ["booking.created", b4.id]]);
  });

  it.each(["grpc", "connect-h1"] as const)("ListBookingChanges over %s: a limit out of 1..500 is INVALID_VALUE naming limit, as REST's 422", async (kind) => {
    for (const limit of [0, 501]) {
      const err = await feedClient(kind, host.key)
        .listBookingChanges({ limit })
        .then(() => undefined, (e: unknown) => ConnectError.from(e));
      expect({ code: err?.code, message: err?.rawMessage }).toEqual({ code: Code.InvalidArgument, message: "limit must be between 1 and 500" });
      expect(detailsOf(err!)).toMatchObject({ infos: 1, reason: "INVALID_VALUE", domain: "scheduling.v1", violations: [{ field: "limit", description: "limit must be between 1 and 500" }] });
    }
  });
});

describe("two replicas of one database", () => {
  let a: RunningServer;
  let b: RunningServer;
  beforeAll(async () => {
    const { sharedServer } = await import("../helpers/api.js");
    const uri = sharedServer().databaseUri;
    [a, b] = await Promise.all([startServer({ MONGODB_URI: uri }), startServer({ MONGODB_URI: uri })]);
  }, 240_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it("a reader on one sees, in order, what is written through the other; a stopping server ends its streams with UNAVAILABLE", async () => {
    const onA = fixturesAt(a.baseUrl);
    const h = await onA.newHost();
    const ev = await onA.newEvent(h);
    const w = watch("grpc", h.key, "", b.baseUrl);
    const s = sse(h.key, {}, "", b.baseUrl);
    await until("the bookmarks", () => w.got[0] && s.events[0]);
    const made = [];
    for (let i = 0; i < 4; i++) {
      made.push(await onA.book(h, ev, { start_time: nextStart() }));
      // callers.md: on every open stream within 1 s of the write's answer (p99), on any replica; 5 s on a loaded machine.
      await until(`change ${i + 1} on B`, () => w.got.length >= i + 2 && s.events.length >= i + 2, { timeoutMs: 5_000 });
    }
    expect(w.got.slice(1).map((c) => c.booking?.id)).toEqual(made.map((m) => m.id));
    expect(s.events.slice(1).map((e) => e.data.booking.id)).toEqual(made.map((m) => m.id));
    const listed = (await restAt(b.baseUrl, "GET", "/api/v1/booking_changes", { key: h.key })).body.data.changes;
    expect(listed.map((c: Json) => c.booking.id)).toEqual(made.map((m) => m.id));

    // B stops: its stream ends with UNAVAILABLE; resumed on A with the last token, nothing is missed.
    const last = w.got.at(-1)!.token;
    await b.stop("SIGTERM");
    await until("the stream's end", () => w.failure());
    const ended = ConnectError.from(w.failure());
    expect(ended.code).toBe(Code.Unavailable);
    await until("the SSE stream's end", () => s.ended());
    expect(detailsOf(ended)).toMatchObject({ infos: 1, reason: "UNAVAILABLE", domain: "scheduling.v1", retrySeconds: 1 });
    await s.stop();
    const more = await onA.book(h, ev, { start_time: nextStart() });
    const resumed = watch("connect-h2", h.key, last, a.baseUrl);
    const resumedSse = sse(h.key, { "Last-Event-ID": s.events.at(-1)!.id }, "", a.baseUrl);
    await until("the change made meanwhile", () => resumed.got[0] && resumedSse.events[0]);
    await Promise.all([resumed.stop(), resumedSse.stop()]);
    expect(resumed.got.map((c) => c.booking?.id)).toEqual([more.id]);
    expect(resumedSse.events.map((e) => e.data.booking.id)).toEqual([more.id]);
    expect((await restAt(a.baseUrl, "GET", `/api/v1/booking_changes?after=${last}`, { key: h.key })).body.data.changes.map((c: Json) => c.booking.id)).toEqual([more.id]);
  }, 120_000);
});
