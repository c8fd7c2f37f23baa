// Idempotency-Key on writes: a repeat answers what the first answered without doing it again, over REST, Connect, gRPC-Web and gRPC, on either of two replicas of one database.
import { randomUUID } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary, type DescMethodUnary, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/scheduling/v1/event_pb.js";
import { PublicBookingService } from "../../gen/scheduling/v1/public_booking_pb.js";
import { WebhookService } from "../../gen/scheduling/v1/webhook_pb.js";
import { restAt, type Json } from "../helpers/api.js";
import { detailsOf } from "../helpers/errorDetails.js";
import { ALWAYS_OPEN, dayFromToday, fixturesAt, utcIso, type Account } from "../helpers/fixtures.js";
import { grpcClientAt } from "../helpers/grpcAt.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { ADMIN_TOKEN, startServer, type RunningServer } from "../helpers/server.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";

let db: TestDatabase;
let a: RunningServer;
let b: RunningServer;
let receiver: Receiver;
let host: Account;
let other: Account;
let seq = 0;

/** A fresh key: keys live a day in the shared database, so every test makes its own; a UUID, as a public write needs (32+ characters). */
const newKey = () => `key-${++seq}-${randomUUID()}`;

const call = (server: RunningServer, method: string, path: string, opts: { key?: string; body?: unknown; idem?: string; headers?: Record<string, string> } = {}) =>
  restAt(server.baseUrl, method, `/api/v1${path}`, { ...opts, headers: { ...opts.headers, ...(opts.idem === undefined ? {} : { "Idempotency-Key": opts.idem }) }, timeoutMs: 15_000 });

const eventBody = (url: string, name = "Intro call") => ({ event: { name, url, slot_duration: "30_minutes", padding_duration: "0_minutes" } });

async function eventCount(server: RunningServer, account: Account): Promise<number> {
  return (await call(server, "GET", "/events", { key: account.key })).body.data.length;
}

/** A grpc-js unary call that also hands back the answer's header metadata and its trailers. */
function grpcWithMetadata<I extends DescMessage, O extends DescMessage>(
  server: RunningServer,
  method: DescMethodUnary<I, O>,
  request: MessageInitShape<I>,
  metadata: Record<string, string>,
): Promise<{ value?: MessageShape<O>; error?: ConnectError; headers: grpc.Metadata | undefined; trailers: grpc.Metadata | undefined }> {
  const client = grpcClientAt(server.baseUrl);
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  return new Promise((resolve) => {
    let headers: grpc.Metadata | undefined;
    let trailers: grpc.Metadata | undefined;
    const c = client.makeUnaryRequest(
      `/${method.parent.typeName}/${method.name}`,
      (m: MessageShape<I>) => Buffer.from(toBinary(method.input, m)),
      (buf: Buffer) => fromBinary(method.output, buf),
      create(method.input, request),
      md,
      (err, value) => {
        client.close();
        resolve(err ? { error: new ConnectError(err.details, err.code as number as Code), headers, trailers: err.metadata } : { value: value as MessageShape<O>, headers, trailers });
      },
    );
    c.on("metadata", (m) => (headers = m));
    c.on("status", (s) => (trailers = s.metadata));
  });
}

beforeAll(async () => {
  db = await startDatabase();
  receiver = await startReceiver();
  // Two replicas of one database: a key taken on one is honoured by the other.
  // Clocks a test may move (both replicas together, as replicas of one database agree on the time).
  const env = { MONGODB_URI: db.uri, OUTBOUND_ALLOW_PRIVATE: "true", ...CLOCK_CONTROL_ENV };
  [a, b] = await Promise.all([startServer(env), startServer(env)]);
  host = await fixturesAt(a.baseUrl).newHost();
  other = await fixturesAt(a.baseUrl).newHost();
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await receiver?.close();
  await db?.kill();
});

describe("REST", () => {
  it("a repeat on either replica answers what the first answered, marked Idempotent-Replayed, and makes nothing twice", async () => {
    const key = newKey();
    const before = await eventCount(a, host);
    const first = await call(a, "POST", "/events", { key: host.key, idem: key, body: eventBody(`idem-${seq}`) });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    for (const server of [a, b]) {
      const again = await call(server, "POST", "/events", { key: host.key, idem: key, body: eventBody(`idem-${seq - 0}`) });
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
    }
    expect(await eventCount(b, host)).toBe(before + 1);
  });

  it("the same key with another body is 422, and nothing is written", async () => {
    const key = newKey();
    const url = `idem-body-${seq}`;
    expect((await call(a, "POST", "/events", { key: host.key, idem: key, body: eventBody(url) })).status).toBe(201);
    const before = await eventCount(a, host);
    const changed = await call(b, "POST", "/events", { key: host.key, idem: key, body: eventBody(`${url}-b`) });
    expect(changed.status).toBe(422);
    expect(changed.body).toEqual({ success: false, message: "idempotency key was used with another request", data: {}, status: "unprocessable_entity" });
    // Another method under the same key is another request too.
    const patched = await call(a, "PATCH", "/user", { key: host.key, idem: key, body: { user: { bio: "x" } } });
    expect(patched.status).toBe(422);
    expect(patched.body.message).toBe("idempotency key was used with another request");
    expect(await eventCount(a, host)).toBe(before);
  });

  it("is per caller: another account's request under the same key runs as its own", async () => {
    const key = newKey();
    const mine = await call(a, "POST", "/events", { key: host.key, idem: key, body: eventBody(`idem-own-${seq}`) });
    const theirs = await call(a, "POST", "/events", { key: other.key, idem: key, body: eventBody(`idem-own-${seq}`) });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
  });

  it("a refusal that answers the request (422) is answered again; writes without a key run every time", async () => {
    const key = newKey();
    const bad = { event: { name: "x", url: `idem-bad-${seq}`, slot_duration: "31_minutes" } };
    const first = await call(a, "POST", "/events", { key: host.key, idem: key, body: bad });
    expect(first.status).toBe(422);
    const again = await call(b, "POST", "/events", { key: host.key, idem: key, body: bad });
    expect(again.status).toBe(422);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    // Without the header nothing changes: two creates are two events (the second url is taken: 422).
    const url = `idem-none-${seq}`;
    expect((await call(a, "POST", "/events", { key: host.key, body: eventBody(url) })).status).toBe(201);
    expect((await call(a, "POST", "/events", { key: host.key, body: eventBody(url) })).status).toBe(422);
  });

  it("PATCH, PUT and DELETE take it too", async () => {
    const patch = newKey();
    const p1 = await call(a, "PATCH", "/user", { key: host.key, idem: patch, body: { user: { bio: "first" } } });
    expect(p1.status).toBe(200);
    const p2 = await call(b, "PATCH", "/user", { key: host.key, idem: patch, body: { user: { bio: "first" } } });
    expect(p2.headers.get("idempotent-replayed")).toBe("true");
    expect(p2.body).toEqual(p1.body);

    const put = newKey();
    const availability = { availability: ALWAYS_OPEN };
    const u1 = await call(a, "PUT", "/user/availability", { key: other.key, idem: put, body: availability });
    expect(u1.status, JSON.stringify(u1.body)).toBe(200);
    const u2 = await call(b, "PUT", "/user/availability", { key: other.key, idem: put, body: availability });
    expect(u2.headers.get("idempotent-replayed")).toBe("true");
    expect(u2.body).toEqual(u1.body);
    const created = await call(a, "POST", "/events", { key: host.key, body: eventBody(`idem-del-${seq}`) });
    const del = newKey();
    const d1 = await call(a, "DELETE", `/events/${created.body.data.id}`, { key: host.key, idem: del });
    expect(d1.status).toBe(200);
    // Without the key a second delete is a 404; with it, the first answer again.
    const d2 = await call(b, "DELETE", `/events/${created.body.data.id}`, { key: host.key, idem: del });
    expect(d2.status).toBe(200);
    expect(d2.body).toEqual(d1.body);
    expect(d2.headers.get("idempotent-replayed")).toBe("true");
    expect((await call(b, "DELETE", `/events/${created.body.data.id}`, { key: host.key })).status).toBe(404);
  });

  it("a malformed key is 422 before anything runs", async () => {
    const before = await eventCount(a, host);
    for (const bad of ["x".repeat(256), "caf\u00e9"]) {
      const res = await call(a, "POST", "/events", { key: host.key, idem: bad, body: eventBody(`idem-malformed-${++seq}`) });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe("Idempotency-Key must be 1 to 255 printable ASCII characters");
    }
    expect((await call(a, "POST", "/events", { key: host.key, idem: "x".repeat(255), body: eventBody(`idem-long-${++seq}`) })).status).toBe(201);
    expect(await eventCount(a, host)).toBe(before + 1);
  });

  it("a bad API key is 401 and keeps nothing: the key works afterwards for the right caller", async () => {
    const key = newKey();
    expect((await call(a, "POST", "/events", { key: "nope", idem: key, body: eventBody(`idem-401-${seq}`) })).status).toBe(401);
    const good = await call(a, "POST", "/events", { key: host.key, idem: key, body: eventBody(`idem-401-${seq}`) });
    expect(good.status).toBe(201);
    expect(good.headers.get("idempotent-replayed")).toBeNull();
  });

  it("a repeat while the first still runs is 409; once it answered, the repeat gets its answer", async () => {
    const hook = await call(a, "POST", "/webhooks", { key: host.key, body: { webhook: { url: receiver.url("/held"), events: ["booking.created"] } } });
    expect(hook.status).toBe(201);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    receiver.answer("/held", (n) => (n === 0 ? { status: 200, hold: held } : { status: 200 }));
    const key = newKey();
    const first = call(a, "POST", `/webhooks/${hook.body.data.id}/ping`, { key: host.key, idem: key });
    await receiver.waitFor("/held", 1);
    const during = await call(b, "POST", `/webhooks/${hook.body.data.id}/ping`, { key: host.key, idem: key });
    expect(during.status).toBe(409);
    expect(during.body).toEqual({ success: false, message: "request with this idempotency key is in progress", data: {}, status: "conflict" });
    // Over RPC the same refusal is ABORTED, reason IDEMPOTENCY_KEY_IN_PROGRESS (callers.md "Errors programs can read").
    const viaRpc = await createClient(WebhookService, createConnectTransport({ baseUrl: b.baseUrl, httpVersion: "1.1" }))
      .pingWebhook({ id: hook.body.data.id }, { headers: { "x-api-key": host.key, "idempotency-key": key } })
      .then(() => undefined, (e: unknown) => ConnectError.from(e));
    expect({ code: viaRpc?.code, message: viaRpc?.rawMessage }).toEqual({ code: Code.Aborted, message: "request with this idempotency key is in progress" });
    expect(detailsOf(viaRpc!)).toMatchObject({ infos: 1, reason: "IDEMPOTENCY_KEY_IN_PROGRESS", domain: "scheduling.v1", retrySeconds: undefined });
    release();
    const done = await first;
    expect(done.status).toBe(200);
    const after = await call(b, "POST", `/webhooks/${hook.body.data.id}/ping`, { key: host.key, idem: key });
    expect(after.status).toBe(200);
    expect(after.body).toEqual(done.body);
    expect(after.headers.get("idempotent-replayed")).toBe("true");
    // The receiver was pinged once.
    expect(receiver.received("/held")).toHaveLength(1);
  });
});

describe("public booking writes (no API key): the caller is the event and the booker's e-mail, or the private key", () => {
  it("a repeated booking is the same booking; another booker under the same key books their own", async () => {
    const event = await fixturesAt(a.baseUrl).newEvent(host);
    const path = `/public/users/${host.user.url}/events/${event.url}/bookings`;
    const key = newKey();
    const start = utcIso(dayFromToday(3), "09:00");
    const body = { booking: { start_time: start, attendee_name: "Ada", attendee_email: "ada@example.com" } };
    const first = await call(a, "POST", path, { idem: key, body });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const again = await call(b, "POST", path, { idem: key, body });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    // Without the key the same time is taken now.
    expect((await call(a, "POST", path, { body })).status).toBe(409);
    // Someone else using the same key string is not answered with Ada's booking (nor her private key).
    const grace = await call(b, "POST", path, { idem: key, body: { booking: { start_time: utcIso(dayFromToday(3), "10:00"), attendee_name: "Grace", attendee_email: "grace@example.com" } } });
    expect(grace.status).toBe(201);
    expect(grace.body.data.private_key).not.toBe(first.body.data.private_key);

    const cancelKey = newKey();
    const cancelPath = `/public/bookings/${first.body.data.private_key}/cancel`;
    const c1 = await call(a, "POST", cancelPath, { idem: cancelKey, body: { booking: { cancel_reason: "ill" } } });
    expect(c1.status).toBe(200);
    const c2 = await call(b, "POST", cancelPath, { idem: cancelKey, body: { booking: { cancel_reason: "ill" } } });
    expect(c2.status).toBe(200);
    expect(c2.body).toEqual(c1.body);
    expect(c2.headers.get("idempotent-replayed")).toBe("true");
  });
});

describe("public writes: keys nobody else can guess, and a day's life", () => {
  const bookingPath = (event: Json) => `/public/users/${host.user.url}/events/${event.url}/bookings`;
  const bookingBody = (start: string, email: string) => ({ booking: { start_time: start, attendee_name: "Ada", attendee_email: email } });
  /** A booking at 09:00 `days` from today under a new key on replica a; the same request on b within the day is the same booking. */
  async function bookedUnderKey(days: number, email: string) {
    const event = await fixturesAt(a.baseUrl).newEvent(host);
    const key = newKey();
    const body = bookingBody(utcIso(dayFromToday(days), "09:00"), email);
    const first = await call(a, "POST", bookingPath(event), { idem: key, body });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect((await call(b, "POST", bookingPath(event), { idem: key, body })).body.data.private_key).toBe(first.body.data.private_key);
    return { event, key, body, first };
  }

  it("a public write's key is at least 32 characters, over REST and RPC; a host's write takes a short one", async () => {
    const event = await fixturesAt(a.baseUrl).newEvent(host);
    const body = bookingBody(utcIso(dayFromToday(4), "09:00"), "short-key@example.com");
    for (const short of ["1", "retry-1", "x".repeat(31)]) {
      const res = await call(a, "POST", bookingPath(event), { idem: short, body });
      expect({ short, status: res.status, message: res.body.message }).toEqual({ short, status: 422, message: "idempotency key of a public write must be at least 32 characters" });
    }
    const rpc = createClient(
      PublicBookingService,
      createConnectTransport({ baseUrl: a.baseUrl, httpVersion: "1.1", interceptors: [(next) => async (req) => (req.header.set("idempotency-key", "short"), next(req))] }),
    );
    const err = await rpc
      .createBooking({ userUrl: host.user.url, eventUrl: event.url as string, booking: { startTime: body.booking.start_time, attendeeName: "Ada", attendeeEmail: "short-key@example.com" } })
      .catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect([(err as ConnectError).code, (err as ConnectError).rawMessage]).toEqual([Code.InvalidArgument, "idempotency key of a public write must be at least 32 characters"]);
    // Nothing was booked: the time is still free.
    expect((await call(a, "POST", bookingPath(event), { idem: "x".repeat(32), body })).status).toBe(201);
    // A write with an API key: its caller is the key's holder, so a short key is theirs alone.
    expect((await call(a, "PATCH", "/user", { key: host.key, idem: `s${seq++}`, body: { user: { bio: "short key" } } })).status).toBe(200);
  });

  it("after the key's 24 hours the same request is a new request: never the old (since canceled) booking", async () => {
    const conn = await mongoose.createConnection(db.uri).asPromise();
    // The key's day as if it had begun 25 hours ago (what the clock would show a day later): the record stays, as
    // it does until MongoDB's TTL monitor comes by (the embedded server's never does).
    const ageKeys = async () => {
      const ago = Date.now() - 25 * 60 * 60 * 1000;
      await conn.collection("idempotency_keys").updateMany({ created_at: { $gt: new Date(ago) } }, { $set: { created_at: new Date(ago), expires_at: new Date(ago + 24 * 60 * 60 * 1000) } });
    };
    try {
      const { event, key, body, first } = await bookedUnderKey(5, "day-old@example.com");
      // A day later, the booking still there: the request runs again and is refused for its own reason.
      await ageKeys();
      const taken = await call(b, "POST", bookingPath(event), { idem: key, body });
      expect({ status: taken.status, replayed: taken.headers.get("idempotent-replayed"), reason: taken.body.data?.reason }).toEqual({ status: 409, replayed: null, reason: "taken" });
      // The booking canceled, a day later again: a new booking, not the canceled one answered as confirmed.
      expect((await call(a, "POST", `/public/bookings/${first.body.data.private_key}/cancel`, { body: { booking: { cancel_reason: "moved" } } })).status).toBe(200);
      await ageKeys();
      const again = await call(a, "POST", bookingPath(event), { idem: key, body });
      expect(again.status, JSON.stringify(again.body)).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBeNull();
      expect(again.body.data.private_key).not.toBe(first.body.data.private_key);
      expect(again.body.data.status).toBe("confirmed");
      const old = await call(a, "GET", `/public/bookings/${first.body.data.private_key}`);
      expect(old.body.data.status).toBe("canceled");
      // And within the new day, the new booking is what the key answers.
      expect((await call(b, "POST", bookingPath(event), { idem: key, body })).body.data.private_key).toBe(again.body.data.private_key);
    } finally {
      await conn.close();
    }
  });

  it("a day later by the service's clock (moved 25 hours), the same request and key book anew: not the old booking, even canceled, as `booking confirmed`", async () => {
    // Days ahead of both clocks, moved or not.
    const { event, key, body, first } = await bookedUnderKey(12, "clock-day@example.com");
    expect((await call(a, "POST", `/public/bookings/${first.body.data.private_key}/cancel`, { body: { booking: {} } })).status).toBe(200);
    await advanceClock([a, b], 25 * 60 * 60 * 1000);
    const again = await call(b, "POST", bookingPath(event), { idem: key, body });
    expect({ status: again.status, message: again.body.message, replayed: again.headers.get("idempotent-replayed"), status_of_booking: again.body.data?.status }).toEqual({
      status: 201,
      message: "booking confirmed",
      replayed: null,
      status_of_booking: "confirmed",
    });
    expect(again.body.data.private_key).not.toBe(first.body.data.private_key);
    expect(again.body.data.id).not.toBe(first.body.data.id);
    // The new booking holds the time now: another day on, the same request is refused for its own reason.
    await advanceClock([a, b], 25 * 60 * 60 * 1000);
    const taken = await call(a, "POST", bookingPath(event), { idem: key, body });
    expect({ status: taken.status, replayed: taken.headers.get("idempotent-replayed"), reason: taken.body.data?.reason }).toEqual({ status: 409, replayed: null, reason: "taken" });
  });
});

describe("RPC: metadata idempotency-key", () => {
  const createReq = (url: string) => ({ event: { name: "Rpc call", url, slotDuration: "30_minutes", paddingDuration: "0_minutes" } });

  for (const kind of ["connect", "grpc-web"] as const) {
    it(`${kind}: a repeat on the other replica is the first answer, with idempotent-replayed`, async () => {
      const key = newKey();
      const clientOf = (server: RunningServer) =>
        createClient(
          EventService,
          (kind === "connect" ? createConnectTransport : createGrpcWebTransport)({
            baseUrl: server.baseUrl,
            httpVersion: "1.1",
            interceptors: [(next) => async (req) => (req.header.set("x-api-key", host.key), req.header.set("idempotency-key", key), next(req))],
          }),
        );
      const before = await eventCount(a, host);
      const url = `idem-${kind}-${seq}`;
      const headers: Headers[] = [];
      const first = await clientOf(a).createEvent(createReq(url), { onHeader: (h) => headers.push(h) });
      const again = await clientOf(b).createEvent(createReq(url), { onHeader: (h) => headers.push(h) });
      expect(again.event?.id).toBe(first.event?.id);
      expect(headers[0].get("idempotent-replayed")).toBeNull();
      expect(headers[1].get("idempotent-replayed")).toBe("true");
      const err = await clientOf(b).createEvent(createReq(`${url}-other`)).catch((e: unknown) => ConnectError.from(e));
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.InvalidArgument);
      expect((err as ConnectError).rawMessage).toBe("idempotency key was used with another request");
      expect(await eventCount(a, host)).toBe(before + 1);
    });
  }

  it("gRPC (grpc-js over HTTP/2): the same; an error answered again carries idempotent-replayed in its trailers", async () => {
    const key = newKey();
    const md = { "x-api-key": host.key, "idempotency-key": key };
    const url = `idem-grpc-${seq}`;
    const first = await grpcWithMetadata(a, EventService.method.createEvent, createReq(url), md);
    const again = await grpcWithMetadata(b, EventService.method.createEvent, createReq(url), md);
    expect(first.error).toBeUndefined();
    expect(again.value?.event?.id).toBe(first.value?.event?.id);
    expect(first.headers?.get("idempotent-replayed")).toEqual([]);
    expect(again.headers?.get("idempotent-replayed")).toEqual(["true"]);

    const badKey = newKey();
    const bad = { event: { name: "x", url: `${url}-bad`, slotDuration: "31_minutes" } };
    const e1 = await grpcWithMetadata(a, EventService.method.createEvent, bad, { ...md, "idempotency-key": badKey });
    const e2 = await grpcWithMetadata(b, EventService.method.createEvent, bad, { ...md, "idempotency-key": badKey });
    expect(e1.error?.code).toBe(Code.InvalidArgument);
    expect(e2.error?.code).toBe(Code.InvalidArgument);
    expect(e2.error?.rawMessage).toBe(e1.error?.rawMessage);
    expect(e2.trailers?.get("idempotent-replayed")).toEqual(["true"]);
  });

  it("a key first used over REST is answered over gRPC in gRPC's form", async () => {
    const key = newKey();
    const url = `idem-cross-${seq}`;
    const viaRest = await call(a, "POST", "/events", { key: host.key, idem: key, body: eventBody(url, "Rpc call") });
    expect(viaRest.status).toBe(201);
    const viaGrpc = await grpcWithMetadata(b, EventService.method.createEvent, createReq(url), { "x-api-key": host.key, "idempotency-key": key });
    expect(viaGrpc.value?.event?.id).toBe(viaRest.body.data.id);
    expect(viaGrpc.headers?.get("idempotent-replayed")).toEqual(["true"]);
  });
});

describe("the record", () => {
  it("is kept in MongoDB with a TTL index, so every replica sees it and it goes after a day", async () => {
    const conn = await mongoose.createConnection(db.uri).asPromise();
    try {
      const keys = conn.collection("idempotency_keys");
      const indexes: Json[] = await keys.indexes();
      const ttl = indexes.find((i) => i.key.expires_at === 1);
      expect(ttl?.expireAfterSeconds).toBe(0);
      const doc = await keys.findOne({ state: "done" });
      expect(doc).not.toBeNull();
      const lifetime = (doc!.expires_at as Date).getTime() - (doc!.created_at as Date).getTime();
      expect(lifetime).toBe(24 * 60 * 60 * 1000);
      // Neither the key nor the caller's API key is stored as sent.
      expect(JSON.stringify(doc)).not.toContain(host.key);
    } finally {
      await conn.close();
    }
  });

  it("keeps an answer's secrets sealed: a new account's API key is answered again, but not readable in the record", async () => {
    const idem = newKey();
    const account = { account: { email: `sealed-${seq}@example.com`, full_name: "Sealed Answers" } };
    const admin = { "X-ADMIN-TOKEN": ADMIN_TOKEN };
    const first = await call(a, "POST", "/admin/accounts", { body: account, idem, headers: admin });
    expect(first.status).toBe(201);
    const issued = first.body.data.api_key as string;
    expect(issued).toMatch(/\S{20,}/);
    const again = await call(b, "POST", "/admin/accounts", { body: account, idem, headers: admin });
    expect({ status: again.status, key: again.body.data.api_key, replayed: again.headers.get("idempotent-replayed") }).toEqual({ status: 201, key: issued, replayed: "true" });
    const conn = await mongoose.createConnection(db.uri).asPromise();
    try {
      const docs = await conn.collection("idempotency_keys").find({ state: "done" }).toArray();
      // Every string of every record, as stored and read as base64 (the message's bytes were kept so before).
      const strings = JSON.stringify(docs).match(/"(?:[^"\\]|\\.)*"/g) ?? [];
      const readable = strings.flatMap((s) => [s, Buffer.from(s.slice(1, -1), "base64").toString("latin1")]).join("\n");
      expect(readable).not.toContain(issued);
    } finally {
      await conn.close();
    }
  });
});
