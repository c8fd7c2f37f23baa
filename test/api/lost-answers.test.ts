// A write whose answer is lost keeps its reservation cells, and its keyed retry answers what it made (issue 29): a fault proxy between the service and its database applies the write and drops the answer.
import { randomUUID } from "node:crypto";
import { fromJson, toJson, type DescMethodUnary, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bookingCells } from "../../src/domain/reservation.js";
import { PublicBookingService } from "../../gen/scheduling/v1/public_booking_pb.js";
import { connectClient, grpcCall, rest, useServer, type Json } from "../helpers/api.js";
import { PROTOCOLS, type Protocol } from "../helpers/calls.js";
import { dayFromToday, newEvent, newHost, tokenOf, utcIso, type Host } from "../helpers/bookings.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { startProxiedService, type DbProxy, type ProxiedService, type SeenCommand } from "../helpers/dbProxy.js";
import { DEADLINE_DEFAULT_ENV, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

let service: ProxiedService;
let proxy: DbProxy;
let server: RunningServer;
/** The database seen directly, not through the proxy: what the service stored. */
let direct: mongoose.Connection;
let host: Host;
let event: Json;

beforeAll(async () => {
  service = await startProxiedService({ ...DEADLINE_DEFAULT_ENV, ...CLOCK_CONTROL_ENV });
  ({ proxy, server, direct } = service);
  useServer(server.baseUrl);
  host = await newHost();
  event = await newEvent(host);
});

afterAll(async () => {
  useServer(undefined);
  await service?.close();
});

const bookingsAt = (start: string) => direct.collection("bookings").find({ start_time: new Date(start) }).toArray();
const cellsOf = (bookingId: unknown) => direct.collection("booking_cells").countDocuments({ booking_id: bookingId, key: { $not: /^R:/ } });
/** The reservation cells a stored booking claims by the rule (src/domain/reservation.ts). */
const cellsClaimedBy = (b: { start_time: Date; end_time: Date; padding_minutes: number; buffer_before_minutes?: number }) =>
  bookingCells(b.start_time, b.end_time, b.padding_minutes, b.buffer_before_minutes ?? 0).length;

const isBookingInsert = (c: SeenCommand) => c.name === "insert" && c.collection === "bookings";

/*
 * A fault picks this test's own command, not the first of its name: the outbox and the reminders read and update
 * bookings too, at any moment, and a fault they take instead (full runs at load 10) leaves the write it was meant
 * for answered normally.
 */
const sameId = (a: unknown, b: unknown) => a !== undefined && b !== undefined && String(a) === String(b);
/** The insert of the booking that starts at `start`. */
const insertAt = (start: string) => (c: SeenCommand) =>
  isBookingInsert(c) && c.items.some((d) => d.start_time instanceof Date && d.start_time.getTime() === Date.parse(start));
/** The update that sets the booking `id`'s status to `status`. */
const statusSetOf = (id: unknown, status: string) => (c: SeenCommand) =>
  c.name === "update" &&
  c.collection === "bookings" &&
  c.items.some((u) => sameId((u.q as { _id?: unknown })._id, id) && (u.u as { $set?: { status?: unknown } }).$set?.status === status);
/** The first write of a move of the booking `id` (src/features/bookings/moves.ts), its commit point. */
const moveOf = (id: unknown) => statusSetOf(id, "rescheduled");
/** Books through the public API, without expecting success. */
function tryBook(start: string, email: string) {
  const { path, body } = bookingCall(start, email);
  return rest("POST", path, { body });
}

/** Waits until the service answers through the proxy again. */
const answering = () => until("the service answers again", async () => (await rest("GET", "/user", { key: host.key })).status === 200, { timeoutMs: 20_000, everyMs: 200 });

describe("a booking whose insert was applied but whose answer was lost", () => {
  it("is found right after and stands, with its cells", async () => {
    const start = utcIso(dayFromToday(3), "09:00");
    const dropped = proxy.dropAnswerOf(insertAt(start));
    const res = await tryBook(start, "lost-1@example.com");
    await dropped;
    expect(res.status).toBe(201);
    const [stored] = await bookingsAt(start);
    expect(stored).toMatchObject({ status: "confirmed" });
    expect(stored._id.toHexString()).toBe(res.body.data.id);
    expect(await cellsOf(stored._id)).toBe(cellsClaimedBy(stored as never));
  });

  it("keeps its cells when the database stays silent after it (503), so the time is not offered again", async () => {
    const start = utcIso(dayFromToday(3), "11:00");
    const dropped = proxy.dropAnswerOf(insertAt(start), 3000);
    const res = await tryBook(start, "lost-2@example.com");
    await dropped;
    expect(res.status).toBe(503);
    await answering();
    const stored = await bookingsAt(start);
    expect(stored.map((b) => b.status)).toEqual(["confirmed"]);
    expect(await cellsOf(stored[0]._id)).toBe(cellsClaimedBy(stored[0] as never));
  });
});

describe("a booking through a single-use link whose insert was applied but whose answer was lost (503)", () => {
  it("keeps the link with the booking that stands: a second booking through it is 410", async () => {
    const linked = await newEvent(host, { is_public: false });
    const made = await rest("POST", `/events/${linked.id}/single_use_links`, { key: host.key });
    expect(made.status).toBe(201);
    const token = tokenOf(made.body.data.url);
    const bookThrough = (start: string, email: string) =>
      rest("POST", `/public/links/${token}/bookings`, { body: { booking: { start_time: start, attendee_name: "Ada Lovelace", attendee_email: email } } });
    const start = utcIso(dayFromToday(3), "14:00");
    const dropped = proxy.dropAnswerOf(insertAt(start), 3000);
    const res = await bookThrough(start, "lost-link@example.com");
    await dropped;
    expect(res.status).toBe(503);
    await answering();
    expect((await bookingsAt(start)).map((b) => b.status)).toEqual(["confirmed"]);
    // Given back on the 503 (as the service did), the link booked a second time.
    const second = await until("an answer other than unavailable", () => bookThrough(utcIso(dayFromToday(3), "15:00"), "second-link@example.com"), {
      timeoutMs: 30_000,
      everyMs: 250,
      accept: (r) => r.status !== 503,
    });
    expect({ status: second.status, message: second.body.message }).toEqual({ status: 410, message: "link is no longer valid" });
  });
});

describe("a bulk write whose answer never comes (extensions.md \"Errors of the database\")", () => {
  it("the reservation cells' insertMany timing out on its socket answers 503 with Retry-After, never 500, and the time stays bookable", async () => {
    // Its own day: the reschedule below moves a booking to day 4 at 13:00, which this retry would have taken.
    const start = utcIso(dayFromToday(6), "13:00");
    // The driver wraps the socket's timeout in a MongoBulkWriteError that carries only its message: it was a 500.
    let dropped = false;
    void proxy.dropAnswerOf((c) => c.name === "insert" && c.collection === "booking_cells").then(() => (dropped = true));
    // At load 10 a try has answered 503 before it reached its cells (a read past its 1 s deadline), and the drop
    // waited for never came: the drop stays armed, and the next try takes it.
    const res = await until("a try whose cells' insert lost its answer", () => tryBook(start, "bulk-timeout@example.com"), { timeoutMs: 40_000, everyMs: 250, accept: () => dropped });
    expect({ status: res.status, message: res.body.message }).toEqual({ status: 503, message: "service unavailable" });
    expect(res.headers.get("retry-after")).toBe("1");
    await answering();
    // The cells it took went back: the same time books for the retry.
    expect((await tryBook(start, "bulk-timeout@example.com")).status).toBe(201);
  }, 90_000);
});

describe("a reschedule whose first write was applied but whose answer was lost (outcome unknown)", () => {
  it("is finished by the sweep, the new booking holding its cells, when the check whether it happened gets no answer either", async () => {
    const first = await booked(utcIso(dayFromToday(4), "09:00"), "moving@example.com");
    const to = utcIso(dayFromToday(4), "13:00");
    // The move's first write (its commit point) is applied, but its answer is lost, and so is every answer for 3 s
    // after it: the check whether it happened too.
    const marked = proxy.dropAnswerOf(moveOf(first.id), 3000);
    const res = await rest("POST", `/public/bookings/${first.private_key}/reschedule`, { body: { booking: { start_time: to } } });
    await marked;
    expect(res.status).toBe(503);
    await answering();
    // The move happened. Past the cells' grace (cells.ts CLAIM_GRACE_MS, 120 s) a claim of the new time would free
    // the cells of a booking that never appeared; the sweep finishes the move (past moves.ts STALLED_AFTER_MS), or
    // that claim does: either way the new time is not given to anyone else.
    const [movedClock] = await advanceClock(server, 121_000);
    // A 503 (once in a full run; most likely the claim that finishes the move met a database still catching up)
    // gives the time to no one and is tried again, as a client would; the first other answer must be "taken".
    const after = await until("an answer other than unavailable", () => tryBook(to, "after-move@example.com"), { timeoutMs: 30_000, everyMs: 250, accept: (r) => r.status !== 503 });
    expect(after.status).toBe(409);
    const [moved] = await until("the new booking", () => bookingsAt(to), { accept: (found) => found.length > 0 });
    expect(moved).toMatchObject({ status: "confirmed" });
    expect(moved.rescheduled_from.toHexString()).toBe(first.id);
    expect(await cellsOf(moved._id)).toBe(cellsClaimedBy(moved as never));
    // Stamped when it was written, not with its request's time: the host's lists re-read what changed since their
    // last refresh, and one made between the two writes would never see it otherwise.
    expect(moved.updated_at.getTime()).toBeGreaterThanOrEqual(movedClock.getTime());
    // The old booking drops the new one it carried (right after the insert).
    const old = await until("the old booking's marks dropped", () => direct.collection("bookings").findOne({ _id: new mongoose.Types.ObjectId(String(first.id)) }), { accept: (b) => b !== null && !("moving_to" in b) });
    expect(old).toMatchObject({ status: "rescheduled", rescheduled_to: moved._id });
    expect(old).not.toHaveProperty("move_pending");
    // As the host sees them. This server keeps the service's 1 s database deadline (DEADLINE_DEFAULT_ENV), and a full
    // run's load has answered a read here with an empty data (most likely a 503, which a client tries again); any
    // other status fails, with the status beside the data.
    const seen = async (id: string) => {
      const res = await until("an answer other than unavailable", () => rest("GET", `/bookings/${id}`, { key: host.key }), { timeoutMs: 30_000, everyMs: 250, accept: (r) => r.status !== 503 });
      return { http: res.status, data: res.body.data };
    };
    expect(await seen(String(moved._id))).toMatchObject({ http: 200, data: { status: "confirmed", start_time: to, previous_booking_id: first.id } });
    expect(await seen(String(first.id))).toMatchObject({ http: 200, data: { status: "rescheduled", next_booking_id: moved._id.toHexString() } });
  });
});

/**
 * One public booking write under an Idempotency-Key, over `protocol`: whether it succeeded, its REST status or RPC
 * code, and the booking it answered (REST `data`, the RPC's `booking` as proto JSON).
 */
async function keyedWrite(
  protocol: Protocol,
  key: string,
  rpc: "createBooking" | "rescheduleBooking",
  request: JsonObject,
  path: string,
  body: Json,
): Promise<{ ok: boolean; status: number | string; message: string; booking: Json }> {
  if (protocol === "rest") {
    const res = await rest("POST", path, { body, headers: { "Idempotency-Key": key } });
    return { ok: res.body.success, status: res.status, message: res.body.message, booking: res.body.data };
  }
  const method = PublicBookingService.method[rpc] as DescMethodUnary;
  const input = fromJson(method.input, request);
  try {
    const answer =
      protocol === "grpc"
        ? await grpcCall(method, input, { "idempotency-key": key })
        : await (connectClient(PublicBookingService, protocol) as unknown as Record<string, (r: unknown, o: unknown) => Promise<unknown>>)[rpc](input, { headers: { "Idempotency-Key": key } });
    const json = toJson(method.output, answer as never, { useProtoFieldName: true }) as JsonObject;
    return { ok: true, status: "ok", message: "", booking: json.booking };
  } catch (err) {
    const ce = ConnectError.from(err);
    return { ok: false, status: ce.code, message: decodeURIComponent(ce.rawMessage), booking: undefined };
  }
}

/**
 * A client's retry: again while it hears that the first try still holds the key (409 / ABORTED `in progress`:
 * the service could not let the key go while the database was silent, and does so in the background), or that the
 * service is unavailable (503 / UNAVAILABLE: a loaded database still catching up, which a client retries too).
 */
const IN_PROGRESS = "request with this idempotency key is in progress";
const retried = (write: () => ReturnType<typeof keyedWrite>) =>
  until("an answer other than in progress or unavailable", write, {
    timeoutMs: 30_000,
    everyMs: 250,
    accept: (r) => r.message !== IN_PROGRESS && r.status !== 503 && r.status !== Code.Unavailable,
  });

/**
 * A first try that meets the fault `arm` sets up (it resolves when the proxy applied it). On a loaded machine a try
 * may fail before it reaches the command the fault waits for (a read or the key's claim timing out: 503, nothing
 * written); waiting for a fault that never came hung the test until its timeout (full runs at load 10). Such a try
 * is made again, under a new key, on what `setUp` gives that try alone (its own time, its own booking): a try
 * answered 503 at its deadline may still be working, and its commit, met later by the next try's fault, let that
 * next try through unfaulted (a full run at load 14). `disarm` takes back a fault armed and never hit.
 */
async function firstTryMeeting<S, T>(
  setUp: (n: number) => S | Promise<S>,
  arm: (s: S) => Promise<unknown>,
  disarm: () => void,
  keyOf: (n: number) => string,
  write: (key: string, s: S) => Promise<T>,
): Promise<{ key: string; first: T; on: S }> {
  for (let n = 0; ; n++) {
    const on = await setUp(n);
    let hit = false;
    // Armed again each time: the one armed before, never hit, is replaced.
    const faulted = arm(on).then(() => (hit = true));
    const key = keyOf(n);
    const first = await write(key, on);
    if (hit) {
      await faulted;
      return { key, first, on };
    }
    if (n >= 4) {
      disarm();
      throw new Error(`no try reached the fault in ${n + 1} tries; the last answered ${JSON.stringify(first)}`);
    }
  }
}

/** The day of try `n` of a test whose first try books on day `base` (days from today): a week later each time. */
const dayOfTry = (base: number, n: number) => dayFromToday(base + 7 * n);

/** A public booking's request: as an RPC's message (proto JSON), and as REST's path and body. */
const bookingCall = (start: string, email: string) => ({
  request: { user_url: host.user.url, event_url: event.url, booking: { start_time: start, attendee_name: "Ada", attendee_email: email } },
  path: `/public/users/${host.user.url}/events/${event.url}/bookings`,
  body: { booking: { start_time: start, attendee_name: "Ada", attendee_email: email } },
});

/**
 * A booking a test starts from, made as a careful client makes one: under a key, again while the service answers
 * 503. The faults before it leave the driver catching up for a while (a heartbeat whose answer was dropped times out
 * after the service answered again, and the pool is cleared), which is no part of what these tests check.
 */
async function booked(start: string, email: string): Promise<Json> {
  const { request, path, body } = bookingCall(start, email);
  const key = `setup-${randomUUID()}`;
  const made = await retried(() => keyedWrite("rest", key, "createBooking", request, path, body));
  expect(made.ok, JSON.stringify(made)).toBe(true);
  return made.booking;
}

describe("a keyed retry of a write whose answer was lost (503)", { timeout: 90_000 }, () => {
  it.each(PROTOCOLS.map((p, i) => [p, i] as const))("answers the booking the first try made, and only one exists (%s)", async (protocol, i) => {
    const { key, first, on: start } = await firstTryMeeting(
      (n) => utcIso(dayOfTry(5, n), `${String(9 + i).padStart(2, "0")}:00`),
      (at) => proxy.dropAnswerOf(insertAt(at), 3000),
      () => void proxy.dropAnswerOf(() => false),
      (n) => `lost-${protocol}-${n}-${randomUUID()}`,
      (k, at) => {
        const { request, path, body } = bookingCall(at, `keyed-${protocol}@example.com`);
        return keyedWrite(protocol, k, "createBooking", request, path, body);
      },
    );
    const { request, path, body } = bookingCall(start, `keyed-${protocol}@example.com`);
    expect(first.ok).toBe(false);
    expect(first.status).toBe(protocol === "rest" ? 503 : Code.Unavailable);
    await answering();
    const stored = await bookingsAt(start);
    expect(stored.map((b) => b.status)).toEqual(["confirmed"]);

    const retry = await retried(() => keyedWrite(protocol, key, "createBooking", request, path, body));
    expect(retry.ok, JSON.stringify(retry)).toBe(true);
    expect(retry.booking).toMatchObject({ id: stored[0]._id.toHexString(), private_key: stored[0].private_key, status: "confirmed", start_time: start });
    expect((await bookingsAt(start)).length).toBe(1);
    expect(await cellsOf(stored[0]._id)).toBe(cellsClaimedBy(stored[0] as never));
    // The key now holds that answer: another repeat is the same booking again.
    const again = await retried(() => keyedWrite(protocol, key, "createBooking", request, path, body));
    expect(again.booking).toMatchObject({ id: stored[0]._id.toHexString() });
  });

  it.each(["rest", "grpc"] as const)("of a reschedule answers the booking the first try moved to (%s)", async (protocol) => {
    const call = (key: string, { first, to }: { first: Json; to: string }) =>
      keyedWrite(protocol, key, "rescheduleBooking", { private_key: first.private_key, booking: { start_time: to } }, `/public/bookings/${first.private_key}/reschedule`, { booking: { start_time: to } });
    // The move's first write is applied and its answer lost, and so is every answer for 3 s after it.
    const { key, first: res, on } = await firstTryMeeting(
      async (n) => ({
        first: await booked(utcIso(dayOfTry(6, n), protocol === "rest" ? "09:00" : "10:00"), `keyed-move-${protocol}-${n}@example.com`),
        to: utcIso(dayOfTry(6, n), protocol === "rest" ? "13:00" : "15:00"),
      }),
      ({ first }) => proxy.dropAnswerOf(moveOf(first.id), 3000),
      () => void proxy.dropAnswerOf(() => false),
      (n) => `lost-move-${protocol}-${n}-${randomUUID()}`,
      call,
    );
    expect(res.ok).toBe(false);
    await answering();

    // The retry finds the move stopped after its first write and finishes it.
    const retry = await retried(() => call(key, on));
    expect(retry.ok, JSON.stringify(retry)).toBe(true);
    const [moved] = await bookingsAt(on.to);
    expect(moved.rescheduled_from.toHexString()).toBe(on.first.id);
    expect(retry.booking).toMatchObject({ id: moved._id.toHexString(), private_key: moved.private_key, status: "confirmed", start_time: on.to });
    expect((await bookingsAt(on.to)).length).toBe(1);
    expect(await cellsOf(moved._id)).toBe(cellsClaimedBy(moved as never));
  });
});

describe("a keyed retry of a cancel whose answer was lost (503)", { timeout: 90_000 }, () => {
  /** The update that cancels the booking `id`. */
  const cancelOf = (id: string) => statusSetOf(id, "canceled");

  it.each(["booker", "host"] as const)("answers the canceled booking, not `booking is canceled` (%s)", async (who) => {
    const cancel = (key: string, made: Json) =>
      who === "booker"
        ? rest("POST", `/public/bookings/${made.private_key}/cancel`, { body: { booking: { reason: "ill" } }, headers: { "Idempotency-Key": key } })
        : rest("POST", `/bookings/${made.id}/cancel`, { key: host.key, body: { booking: { reason: "ill" } }, headers: { "Idempotency-Key": key } });
    const { key, first, on: made } = await firstTryMeeting(
      (n) => booked(utcIso(dayOfTry(7, n), who === "booker" ? "09:00" : "11:00"), `keyed-cancel-${who}-${n}@example.com`),
      (booking) => proxy.dropAnswerOf(cancelOf(booking.id), 3000),
      () => void proxy.dropAnswerOf(() => false),
      (n) => `lost-cancel-${who}-${n}-${randomUUID()}`,
      cancel,
    );
    expect(first.status).toBe(503);
    await answering();
    const stored = await direct.collection("bookings").findOne({ _id: new mongoose.Types.ObjectId(made.id) });
    expect(stored).toMatchObject({ status: "canceled", cancel_reason: "ill" });

    const retry = await until("an answer other than in progress or unavailable", () => cancel(key, made), { timeoutMs: 30_000, everyMs: 250, accept: (r) => r.body.message !== IN_PROGRESS && r.status !== 503 });
    expect([retry.status, retry.body.message], JSON.stringify(retry.body)).toEqual([200, "booking canceled"]);
    expect(retry.body.data).toMatchObject({ id: made.id, status: "canceled" });
  });
});
