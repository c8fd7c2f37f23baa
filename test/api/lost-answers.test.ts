// A write whose answer is lost keeps its reservation cells, and its keyed retry answers what it made (issue 29): a fault proxy between the service and its database applies the write and drops the answer.
import { fromJson, toJson, type DescMethodUnary, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PublicBookingService } from "../../gen/scheduling/v1/public_booking_pb.js";
import { connectClient, grpcCall, rest, useServer, type Json } from "../helpers/api.js";
import { PROTOCOLS, type Protocol } from "../helpers/calls.js";
import { book, dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { startDbProxy, type DbProxy } from "../helpers/dbProxy.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

let db: TestDatabase;
let proxy: DbProxy;
let server: RunningServer;
/** The database seen directly, not through the proxy: what the service stored. */
let direct: mongoose.Connection;
let host: Host;
let event: Json;

beforeAll(async () => {
  db = await startDatabase();
  proxy = await startDbProxy(db.uri);
  server = await startServer({ MONGODB_URI: proxy.uri });
  useServer(server.baseUrl);
  direct = await mongoose.createConnection(db.uri).asPromise();
  host = await newHost();
  event = await newEvent(host);
});

afterAll(async () => {
  useServer(undefined);
  await server?.stop("SIGKILL");
  await direct?.close();
  await proxy?.close();
  await db?.kill();
});

const bookingsAt = (start: string) => direct.collection("bookings").find({ start_time: new Date(start) }).toArray();
const cellsOf = (bookingId: unknown) => direct.collection("booking_cells").countDocuments({ booking_id: bookingId, key: { $not: /^R:/ } });

const isBookingInsert = (c: { name: string; collection: string | undefined }) => c.name === "insert" && c.collection === "bookings";

/** Books through the public API, without expecting success. */
const tryBook = (start: string, email: string) =>
  rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, { body: { booking: { start_time: start, attendee_name: "Ada", attendee_email: email } } });

/** Waits until the service answers through the proxy again. */
const answering = () => until("the service answers again", async () => (await rest("GET", "/user", { key: host.key })).status === 200, { timeoutMs: 20_000, everyMs: 200 });

describe("a booking whose insert was applied but whose answer was lost", () => {
  it("is found right after and stands, with its cells", async () => {
    const start = utcIso(dayFromToday(3), "09:00");
    const dropped = proxy.dropAnswerOf(isBookingInsert);
    const res = await tryBook(start, "lost-1@example.com");
    await dropped;
    expect(res.status).toBe(201);
    const [stored] = await bookingsAt(start);
    expect(stored).toMatchObject({ status: "confirmed" });
    expect(stored._id.toHexString()).toBe(res.body.data.id);
    // 30 minutes: four reservation keys (src/domain/reservation.ts).
    expect(await cellsOf(stored._id)).toBe(4);
  });

  it("keeps its cells when the database stays silent after it (503), so the time is not offered again", async () => {
    const start = utcIso(dayFromToday(3), "11:00");
    const dropped = proxy.dropAnswerOf(isBookingInsert, 3000);
    const res = await tryBook(start, "lost-2@example.com");
    await dropped;
    expect(res.status).toBe(503);
    await answering();
    const stored = await bookingsAt(start);
    expect(stored.map((b) => b.status)).toEqual(["confirmed"]);
    expect(await cellsOf(stored[0]._id)).toBe(4);
  });
});

describe("a reschedule whose commit was applied but answered as timed out (outcome unknown)", () => {
  it("leaves the new booking its cells when the check whether it exists fails too", async () => {
    const first = await book(host, event, { start_time: utcIso(dayFromToday(4), "09:00"), attendee_email: "moving@example.com" });
    const to = utcIso(dayFromToday(4), "13:00");
    // The commit is applied, but the database answers that it ran out of time (the outcome the driver calls
    // unknown); then the check whether the new booking exists runs out of time too. The writes after it go through.
    const timedOut = { code: 50, codeName: "MaxTimeMSExpired", errmsg: "operation exceeded time limit" };
    const committed = proxy.failNext((c) => c.name === "commitTransaction", timedOut, { applied: true });
    void committed.then(() => proxy.failNext((c) => c.name === "find" && c.collection === "bookings", timedOut));
    const res = await rest("POST", `/public/bookings/${first.private_key}/reschedule`, { body: { booking: { start_time: to } } });
    await committed;
    expect(res.status).toBe(503);
    await answering();
    const [moved] = await bookingsAt(to);
    expect(moved).toMatchObject({ status: "confirmed" });
    expect(moved.rescheduled_from.toHexString()).toBe(first.id);
    expect(await cellsOf(moved._id)).toBe(4);
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
 * is made again, under a new key; `disarm` takes back a fault armed and never hit before the test goes on.
 */
async function firstTryMeeting<T>(
  arm: () => Promise<unknown>,
  disarm: () => void,
  keyOf: (n: number) => string,
  write: (key: string) => Promise<T>,
): Promise<{ key: string; first: T }> {
  for (let n = 0; ; n++) {
    let hit = false;
    // Armed again each time: the one armed before, never hit, is replaced.
    const faulted = arm().then(() => (hit = true));
    const key = keyOf(n);
    const first = await write(key);
    if (hit) {
      await faulted;
      return { key, first };
    }
    if (n >= 4) {
      disarm();
      throw new Error(`no try reached the fault in ${n + 1} tries; the last answered ${JSON.stringify(first)}`);
    }
  }
}

describe("a keyed retry of a write whose answer was lost (503)", { timeout: 90_000 }, () => {
  const bookingCall = (start: string, email: string) => ({
    request: { user_url: host.user.url, event_url: event.url, booking: { start_time: start, attendee_name: "Ada", attendee_email: email } },
    path: `/public/users/${host.user.url}/events/${event.url}/bookings`,
    body: { booking: { start_time: start, attendee_name: "Ada", attendee_email: email } },
  });

  it.each(PROTOCOLS.map((p, i) => [p, i] as const))("answers the booking the first try made, and only one exists (%s)", async (protocol, i) => {
    const start = utcIso(dayFromToday(5), `${String(9 + i).padStart(2, "0")}:00`);
    const { request, path, body } = bookingCall(start, `keyed-${protocol}@example.com`);
    const { key, first } = await firstTryMeeting(
      () => proxy.dropAnswerOf(isBookingInsert, 3000),
      () => void proxy.dropAnswerOf(() => false),
      (n) => `lost-${protocol}-${Date.now()}-${n}`,
      (k) => keyedWrite(protocol, k, "createBooking", request, path, body),
    );
    expect(first.ok).toBe(false);
    expect(first.status).toBe(protocol === "rest" ? 503 : Code.Unavailable);
    await answering();
    const stored = await bookingsAt(start);
    expect(stored.map((b) => b.status)).toEqual(["confirmed"]);

    const retry = await retried(() => keyedWrite(protocol, key, "createBooking", request, path, body));
    expect(retry.ok, JSON.stringify(retry)).toBe(true);
    expect(retry.booking).toMatchObject({ id: stored[0]._id.toHexString(), private_key: stored[0].private_key, status: "confirmed", start_time: start });
    expect((await bookingsAt(start)).length).toBe(1);
    expect(await cellsOf(stored[0]._id)).toBe(4);
    // The key now holds that answer: another repeat is the same booking again.
    const again = await keyedWrite(protocol, key, "createBooking", request, path, body);
    expect(again.booking).toMatchObject({ id: stored[0]._id.toHexString() });
  });

  it.each(["rest", "grpc"] as const)("of a reschedule answers the booking the first try moved to (%s)", async (protocol) => {
    const first = await book(host, event, { start_time: utcIso(dayFromToday(6), protocol === "rest" ? "09:00" : "10:00"), attendee_email: `keyed-move-${protocol}@example.com` });
    const to = utcIso(dayFromToday(6), protocol === "rest" ? "13:00" : "15:00");
    const timedOut = { code: 50, codeName: "MaxTimeMSExpired", errmsg: "operation exceeded time limit" };
    const call = (key: string) =>
      keyedWrite(protocol, key, "rescheduleBooking", { private_key: first.private_key, booking: { start_time: to } }, `/public/bookings/${first.private_key}/reschedule`, { booking: { start_time: to } });
    // The commit is applied and answered as timed out, then the check whether the new booking exists times out too.
    const { key, first: res } = await firstTryMeeting(
      () => {
        const committed = proxy.failNext((c) => c.name === "commitTransaction", timedOut, { applied: true });
        void committed.then(() => proxy.failNext((c) => c.name === "find" && c.collection === "bookings", timedOut));
        return committed;
      },
      () => void proxy.failNext(() => false, timedOut),
      (n) => `lost-move-${protocol}-${Date.now()}-${n}`,
      call,
    );
    expect(res.ok).toBe(false);
    await answering();
    const [moved] = await bookingsAt(to);
    expect(moved.rescheduled_from.toHexString()).toBe(first.id);

    const retry = await retried(() => call(key));
    expect(retry.ok, JSON.stringify(retry)).toBe(true);
    expect(retry.booking).toMatchObject({ id: moved._id.toHexString(), private_key: moved.private_key, status: "confirmed", start_time: to });
    expect((await bookingsAt(to)).length).toBe(1);
    expect(await cellsOf(moved._id)).toBe(4);
  });
});

describe("a keyed retry of a cancel whose answer was lost (503)", { timeout: 90_000 }, () => {
  const isBookingUpdate = (c: { name: string; collection: string | undefined }) => c.name === "update" && c.collection === "bookings";

  it.each(["booker", "host"] as const)("answers the canceled booking, not `booking is canceled` (%s)", async (who) => {
    await answering();
    const made = await book(host, event, { start_time: utcIso(dayFromToday(7), who === "booker" ? "09:00" : "11:00"), attendee_email: `keyed-cancel-${who}@example.com` });
    const cancel = (key: string) =>
      who === "booker"
        ? rest("POST", `/public/bookings/${made.private_key}/cancel`, { body: { booking: { reason: "ill" } }, headers: { "Idempotency-Key": key } })
        : rest("POST", `/bookings/${made.id}/cancel`, { key: host.key, body: { booking: { reason: "ill" } }, headers: { "Idempotency-Key": key } });
    // The outbox's own updates of bookings (clearing what it planned) done first, so the update dropped is the cancel's.
    await until("the outbox planned every booking change", async () => (await direct.collection("bookings").countDocuments({ changes_pending: true })) === 0);
    const { key, first } = await firstTryMeeting(
      () => proxy.dropAnswerOf(isBookingUpdate, 3000),
      () => void proxy.dropAnswerOf(() => false),
      (n) => `lost-cancel-${who}-${Date.now()}-${n}`,
      cancel,
    );
    expect(first.status).toBe(503);
    await answering();
    const stored = await direct.collection("bookings").findOne({ _id: new mongoose.Types.ObjectId(made.id) });
    expect(stored).toMatchObject({ status: "canceled", cancel_reason: "ill" });

    const retry = await until("an answer other than in progress or unavailable", () => cancel(key), { timeoutMs: 30_000, everyMs: 250, accept: (r) => r.body.message !== IN_PROGRESS && r.status !== 503 });
    expect([retry.status, retry.body.message], JSON.stringify(retry.body)).toEqual([200, "booking canceled"]);
    expect(retry.body.data).toMatchObject({ id: made.id, status: "canceled" });
  });
});
