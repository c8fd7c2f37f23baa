// Errors programs can read (callers.md): every RPC error carries google.rpc details, read over the wire by grpc-js (grpc-status-details-bin as google.rpc.Status), Connect over HTTP/1.1 and HTTP/2, and gRPC-Web.
import type { DescMethodServerStreaming, DescMethodUnary, DescService, JsonObject } from "@bufbuild/protobuf";
import { fromBinary, fromJson, toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { AdminService } from "../../gen/scheduling/v1/admin_pb.js";
import { EventService } from "../../gen/scheduling/v1/event_pb.js";
import { PublicBookingService } from "../../gen/scheduling/v1/public_booking_pb.js";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { StatusSchema, type Status } from "../../gen/google/rpc/status_pb.js";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { BookingService } from "../../gen/scheduling/v1/booking_pb.js";
import { baseUrl, CONNECT_KINDS, connectClient, grpcCall, rest, rpcError, useServer, type Json } from "../helpers/api.js";
import { grpcFrame, grpcWebTrailers, h2Request, rawRequest } from "../helpers/raw.js";
import { detailsOf } from "../helpers/errorDetails.js";
import { dayFromToday, fixturesAt, MORNINGS, newEvent, newHost, utcIso as at } from "../helpers/fixtures.js";
import { startDbProxy, type DbProxy } from "../helpers/dbProxy.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, ADMIN_TOKEN, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

type RpcProtocol = "grpc" | (typeof CONNECT_KINDS)[number];
const RPC_PROTOCOLS: RpcProtocol[] = ["grpc", ...CONNECT_KINDS];

/** One RPC over `protocol` that must fail; its error, with details read as that protocol's client reads them. */
async function rpcFailure(protocol: RpcProtocol, service: DescService, rpc: string, request: JsonObject, headers: Record<string, string> = {}): Promise<ConnectError> {
  const method = service.methods.find((m) => m.localName === rpc) as DescMethodUnary;
  const message = fromJson(method.input, request);
  try {
    if (protocol === "grpc") await grpcCall(method, message, headers);
    else await (connectClient(service, protocol) as unknown as Record<string, (r: unknown, o: unknown) => Promise<unknown>>)[rpc](message, { headers });
  } catch (err) {
    const error = ConnectError.from(err);
    if (protocol === "grpc") {
      // The trailer is a google.rpc.Status with the error's own code and message.
      const status = error.cause as Status | undefined;
      expect(status, "grpc-status-details-bin").toBeDefined();
      expect({ code: status?.code, message: status?.message }).toEqual({ code: error.code, message: decodeURIComponent(error.rawMessage) });
    }
    return error;
  }
  throw new Error(`${protocol} ${rpc} succeeded`);
}

const key = (k: string) => ({ "x-api-key": k });

/** Runs `fn` on a cleartext HTTP/2 session to the server, closed after. */
async function overH2(fn: (session: http2.ClientHttp2Session) => Promise<void>): Promise<void> {
  const session = http2.connect(baseUrl());
  session.on("error", () => undefined);
  try {
    await fn(session);
  } finally {
    session.close();
  }
}

/** A gRPC request body (unary, or a server stream's one request): the message in its 5-byte envelope. */
function grpcBody(method: DescMethodUnary | DescMethodServerStreaming, request: JsonObject): Buffer {
  const bytes = toBinary(method.input, fromJson(method.input, request));
  const body = Buffer.alloc(5 + bytes.length);
  body.writeUInt32BE(bytes.length, 1);
  body.set(bytes, 5);
  return body;
}

describe.each(RPC_PROTOCOLS)("%s: error details", (protocol) => {
  let host: { key: string; user: Json };
  let open: Json;
  let limited: Json;
  beforeAll(async () => {
    host = await newHost();
    open = await newEvent(host);
    limited = await newEvent(host, { daily_limit: 1 });
  });

  const booking = (event: Json, startTime: string, email = "ada@example.com") => ({
    user_url: host.user.url,
    event_url: event.url,
    booking: { start_time: startTime, attendee_name: "Ada", attendee_email: email },
  });

  it("a refused time: its REST data.reason in capitals, naming the event and the time; ALREADY_EXISTS for taken, FAILED_PRECONDITION for the rest", async () => {
    const day = dayFromToday(5);
    for (const [event, time] of [[open, "10:00"], [limited, "13:00"]]) {
      expect((await rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, { body: { booking: booking(event, at(day, time)).booking } })).status).toBe(201);
    }
    const cases: Array<[Json, string, string, Code]> = [
      [open, at(day, "10:00"), "taken", Code.AlreadyExists],
      [limited, at(day, "15:00"), "daily_limit", Code.FailedPrecondition],
      [open, at(dayFromToday(-2), "10:00"), "in_the_past", Code.FailedPrecondition],
      [open, at(dayFromToday(90), "10:00"), "too_far", Code.FailedPrecondition],
      [open, at(dayFromToday(6), "10:07"), "not_on_the_grid", Code.FailedPrecondition],
    ];
    for (const [event, start, reason, code] of cases) {
      const viaRest = await rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, { body: { booking: booking(event, start, "b@example.com").booking } });
      expect({ status: viaRest.status, message: viaRest.body.message, data: viaRest.body.data }).toEqual({ status: 409, message: "slot is not available", data: { reason } });
      const err = await rpcFailure(protocol, PublicBookingService, "createBooking", booking(event, start, "b@example.com"));
      expect({ code: err.code, message: err.rawMessage }).toEqual({ code, message: `slot is not available: ${reason}` });
      // The metadata names the event and the time asked for.
      expect(detailsOf(err)).toEqual({
        infos: 1,
        reason: reason.toUpperCase(),
        domain: "scheduling.v1",
        metadata: { event_id: event.id, start_time: new Date(start).toISOString() },
        violations: undefined,
        retrySeconds: undefined,
      });
    }
  });

  it("the other refused times: TOO_SOON, OUTSIDE_HOURS, WEEKLY_LIMIT, each FAILED_PRECONDITION with its REST data.reason", async () => {
    const mornings = await newHost({ timezone: "UTC" }, MORNINGS);
    const early = await newEvent(mornings);
    const notice = await newEvent(host, { minimum_notice_minutes: 2880 });
    const weekly = await newEvent(host, { weekly_limit: 1 });
    const day = dayFromToday(8);
    expect((await rest("POST", `/public/users/${host.user.url}/events/${weekly.url}/bookings`, { body: { booking: booking(weekly, at(day, "10:00")).booking } })).status).toBe(201);
    const cases: Array<[{ user: { url: string } }, Json, string, string]> = [
      [host, notice, at(dayFromToday(1), "10:00"), "too_soon"],
      [mornings, early, at(day, "15:00"), "outside_hours"],
      [host, weekly, at(day, "14:00"), "weekly_limit"],
    ];
    for (const [owner, event, start, reason] of cases) {
      const body = { user_url: owner.user.url, event_url: event.url, booking: { start_time: start, attendee_name: "Bea", attendee_email: "bea@example.com" } };
      const viaRest = await rest("POST", `/public/users/${owner.user.url}/events/${event.url}/bookings`, { body: { booking: body.booking } });
      expect({ status: viaRest.status, message: viaRest.body.message, data: viaRest.body.data }).toEqual({ status: 409, message: "slot is not available", data: { reason } });
      const err = await rpcFailure(protocol, PublicBookingService, "createBooking", body);
      expect({ code: err.code, message: err.rawMessage }).toEqual({ code: Code.FailedPrecondition, message: `slot is not available: ${reason}` });
      expect(detailsOf(err)).toMatchObject({ infos: 1, reason: reason.toUpperCase(), domain: "scheduling.v1", metadata: { event_id: event.id }, violations: undefined, retrySeconds: undefined });
    }
  });

  it("missing params: MISSING_PARAMS with one field violation per field the REST data names", async () => {
    const viaRest = await rest("POST", "/events", { key: host.key, body: { event: { description: "no name, no url" } } });
    expect(viaRest.status).toBe(400);
    const fields = Object.entries(viaRest.body.data as Record<string, string[]>).flatMap(([obj, names]) => names.map((n) => `${obj}.${n}`));
    expect(fields.length).toBeGreaterThan(0);
    const err = await rpcFailure(protocol, EventService, "createEvent", { event: { description: "no name, no url" } }, key(host.key));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(detailsOf(err)).toEqual({
      infos: 1,
      reason: "MISSING_PARAMS",
      domain: "scheduling.v1",
      metadata: { field: fields[0] },
      violations: fields.map((field) => ({ field, description: `${field} is missing` })),
      retrySeconds: undefined,
    });
  });

  it("a value not allowed: INVALID_VALUE naming the field as the REST message does (slot_duration), with metadata.field", async () => {
    const body = { event: { name: "Odd", url: `odd-${protocol}-${Date.now()}`, slot_duration: "7_minutes" } };
    const viaRest = await rest("POST", "/events", { key: host.key, body });
    expect({ status: viaRest.status, field: viaRest.body.data.field }).toEqual({ status: 422, field: "slot_duration" });
    const err = await rpcFailure(protocol, EventService, "createEvent", body, key(host.key));
    expect({ code: err.code, message: err.rawMessage }).toEqual({ code: Code.InvalidArgument, message: viaRest.body.message });
    expect(detailsOf(err)).toEqual({
      infos: 1,
      reason: "INVALID_VALUE",
      domain: "scheduling.v1",
      metadata: { field: "slot_duration" },
      violations: [{ field: "slot_duration", description: viaRest.body.message }],
      retrySeconds: undefined,
    });
    // A message that names a nested field names it as its path.
    const phone = await rpcFailure(protocol, EventService, "createEvent", { event: { ...body.event, slot_duration: "30_minutes", location: { name: "phone_call", selected_option: "invitee_will_call_host", host_contact_number: "not a phone" } } }, key(host.key));
    expect(detailsOf(phone)).toMatchObject({ reason: "INVALID_VALUE", violations: [{ field: "location.host_contact_number", description: phone.rawMessage }] });
  });

  it("a value inside a list names its path (availability: date_overrides[0].date)", async () => {
    const err = await rpcFailure(protocol, UserService, "updateAvailability", { availability: { date_overrides: [{ date: "2026-02-30", intervals: [] }] } }, key(host.key));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(detailsOf(err)).toMatchObject({ reason: "INVALID_VALUE", metadata: { field: "date_overrides[0].date" }, violations: [{ field: "date_overrides[0].date", description: err.rawMessage }] });
  });

  it("NOT_FOUND (naming the resource), UNAUTHENTICATED, IDEMPOTENCY_KEY_REUSED", async () => {
    const missing = await rpcFailure(protocol, EventService, "getEvent", { id: "0123456789abcdef01234567" }, key(host.key));
    expect(missing.code).toBe(Code.NotFound);
    expect(detailsOf(missing)).toMatchObject({ infos: 1, reason: "NOT_FOUND", domain: "scheduling.v1", metadata: { resource: "event" }, violations: undefined });
    const anonymous = await rpcFailure(protocol, UserService, "getUser", {});
    expect(anonymous.code).toBe(Code.Unauthenticated);
    expect(detailsOf(anonymous)).toMatchObject({ infos: 1, reason: "UNAUTHENTICATED", domain: "scheduling.v1", retrySeconds: undefined });
    const idem = { ...key(host.key), "idempotency-key": `reuse-${protocol}-${Date.now()}` };
    const url = `idem-${protocol}-${Date.now()}`;
    await rest("POST", "/events", { key: host.key, headers: { "Idempotency-Key": idem["idempotency-key"] }, body: { event: { name: "First", url, slot_duration: "30_minutes" } } });
    const reused = await rpcFailure(protocol, EventService, "createEvent", { event: { name: "Second", url: `${url}-2`, slot_duration: "30_minutes" } }, idem);
    expect({ code: reused.code, message: reused.rawMessage }).toEqual({ code: Code.InvalidArgument, message: "idempotency key was used with another request" });
    expect(detailsOf(reused)).toMatchObject({ infos: 1, reason: "IDEMPOTENCY_KEY_REUSED", domain: "scheduling.v1", violations: undefined });
  });

  it("a cross-origin write CORS does not allow: PERMISSION_DENIED as the protocol's own error, with its details; nothing is written", async () => {
    const url = `cross-${protocol}-${Date.now()}`;
    const err = await rpcFailure(protocol, EventService, "createEvent", { event: { name: "Cross", url, slot_duration: "30_minutes" } }, { ...key(host.key), origin: "https://evil.example" });
    expect({ code: err.code, message: err.rawMessage }).toEqual({ code: Code.PermissionDenied, message: "cross-origin write refused: https://evil.example is not an allowed origin (CORS_ORIGINS)" });
    expect(detailsOf(err)).toEqual({ infos: 1, reason: "PERMISSION_DENIED", domain: "scheduling.v1", metadata: {}, violations: undefined, retrySeconds: undefined });
    const events = await rest("GET", "/events", { key: host.key });
    expect(events.body.data.map((e: Json) => e.url)).not.toContain(url);
  });

  it("an error a handler outside scheduling.v1 raises as a plain ConnectError (health Check of an unknown service, Connect's own handler): its code as the reason", async () => {
    const err = await rpcFailure(protocol, Health, "check", { service: "no.such.Service" });
    expect(err.code).toBe(Code.NotFound);
    expect(detailsOf(err)).toEqual({ infos: 1, reason: "NOT_FOUND", domain: "scheduling.v1", metadata: {}, violations: undefined, retrySeconds: undefined });
  });

  it("a refusal kept under an Idempotency-Key is answered again with the same details", async () => {
    const idem = { ...key(host.key), "idempotency-key": `kept-${protocol}-${Date.now()}` };
    const body = { event: { name: "Odd", url: `kept-${protocol}-${Date.now()}`, slot_duration: "7_minutes" } };
    const first = await rpcFailure(protocol, EventService, "createEvent", body, idem);
    const again = await rpcFailure(protocol, EventService, "createEvent", body, idem);
    expect(again.metadata.get("idempotent-replayed")).toBe("true");
    expect(detailsOf(again)).toEqual(detailsOf(first));
    expect(detailsOf(again).reason).toBe("INVALID_VALUE");
  });
});

describe("an RPC to a method the server does not serve", () => {
  const getUser = UserService.method.getUser;
  /** GetUser under another name, or of a service that does not exist: the call grpc-js makes is `/<service>/<method>`. */
  const unknown = (service: string, name: string) => ({ ...getUser, name, parent: { ...UserService, typeName: service } }) as unknown as DescMethodUnary;
  const infoOf = (details: string | undefined) => {
    const status = fromBinary(StatusSchema, Buffer.from(details ?? "", "base64"));
    const info = status.details.map((d) => anyUnpack(d, ErrorInfoSchema)).find((d) => d !== undefined);
    return { code: status.code, message: status.message, reason: info?.reason, domain: info?.domain };
  };

  it("grpc-js: UNIMPLEMENTED with its google.rpc.Status and ErrorInfo (UNKNOWN_METHOD), for a method and for a whole service", async () => {
    for (const [method, message] of [
      [unknown("scheduling.v1.UserService", "Nope"), "unknown method Nope for service scheduling.v1.UserService"],
      [unknown("scheduling.v1.Nope", "GetUser"), "unknown service scheduling.v1.Nope"],
    ] as const) {
      const err = await rpcError(() => grpcCall(method, {}));
      expect({ code: err.code, message: err.rawMessage }).toEqual({ code: Code.Unimplemented, message });
      const status = err.cause as Status | undefined;
      expect({ code: status?.code, message: status?.message }).toEqual({ code: Code.Unimplemented, message });
      expect(detailsOf(err)).toEqual({ infos: 1, reason: "UNKNOWN_METHOD", domain: "scheduling.v1", metadata: {}, violations: undefined, retrySeconds: undefined });
    }
  });

  it("gRPC (no body at all, as curl sends it) and gRPC-Web: HTTP 200, grpc-status 12 and grpc-status-details-bin", async () => {
    await overH2(async (session) => {
      const headers = { ":method": "POST", ":path": "/scheduling.v1.UserService/Nope", "content-type": "application/grpc", te: "trailers" };
      const answer = await h2Request(session, headers, Buffer.alloc(0));
      expect({ status: answer.status, grpcStatus: answer.grpcStatus }).toEqual({ status: 200, grpcStatus: "12" });
      expect(infoOf(answer.grpcDetails)).toEqual({ code: 12, message: "unknown method Nope for service scheduling.v1.UserService", reason: "UNKNOWN_METHOD", domain: "scheduling.v1" });
    });
    const web = await rawRequest(baseUrl(), { method: "POST", path: "/scheduling.v1.Nope/Nope", headers: { "content-type": "application/grpc-web+proto" }, body: grpcFrame(new Uint8Array(0)) });
    const trailers = grpcWebTrailers(web.bytes);
    expect({ status: web.status, grpcStatus: trailers["grpc-status"] }).toEqual({ status: 200, grpcStatus: "12" });
    expect(infoOf(trailers["grpc-status-details-bin"])).toMatchObject({ code: 12, reason: "UNKNOWN_METHOD" });
  });

  it("Connect: unary JSON and binary HTTP 404 with Connect's unimplemented error and its details, a stream its end-of-stream error; REST's paths keep the envelope", async () => {
    const details = [{ type: "google.rpc.ErrorInfo", value: expect.any(String), debug: { reason: "UNKNOWN_METHOD", domain: "scheduling.v1" } }];
    for (const type of ["application/json", "application/proto"]) {
      const res = await fetch(`${baseUrl()}/scheduling.v1.BookingService/Nope`, { method: "POST", headers: { "content-type": type }, body: type === "application/json" ? "{}" : "" });
      expect({ type, status: res.status, body: await res.json() }).toEqual({
        type,
        status: 404,
        body: { code: "unimplemented", message: "unknown method Nope for service scheduling.v1.BookingService", details },
      });
    }
    const stream = await rawRequest(baseUrl(), { method: "POST", path: "/scheduling.v1.BookingService/WatchNope", headers: { "content-type": "application/connect+json" }, body: Buffer.concat([Buffer.from([0, 0, 0, 0, 2]), Buffer.from("{}")]) });
    expect(stream.status).toBe(200);
    expect(stream.bytes[0]).toBe(0x02);
    expect(JSON.parse(stream.bytes.subarray(5).toString("utf8"))).toEqual({ error: { code: "unimplemented", message: "unknown method WatchNope for service scheduling.v1.BookingService", details } });
    // REST's unknown paths, and what is no RPC by its form, keep the JSON 404 of the REST spec.
    for (const [path, type] of [["/api/v1/nope", "application/json"], ["/API/V1/scheduling.v1.X/Y", "application/json"], ["/scheduling.v1.X/Y", "text/plain"]]) {
      const res = await rawRequest(baseUrl(), { method: "POST", path, headers: { "content-type": type }, body: "{}" });
      expect({ path, status: res.status, body: JSON.parse(res.text) }).toEqual({ path, status: 404, body: { success: false, message: "endpoint does not exists", data: {}, status: "not_found" } });
    }
  });
});

describe("the transport's own refusals", () => {
  /** The code and ErrorInfo reason of a grpc-status-details-bin value. */
  const detailsIn = (details: string | undefined) => {
    const status = fromBinary(StatusSchema, Buffer.from(details ?? "", "base64"));
    const reason = status.details.map((d) => anyUnpack(d, ErrorInfoSchema)).find((d) => d !== undefined)?.reason;
    return { code: status.code, reason };
  };

  it("gRPC, with a deadline (Connect's path) and without (the fast path): a body that does not decode is INVALID_VALUE as a handler's INVALID_ARGUMENT is; protocol misuse UNIMPLEMENTED", async () => {
    const host = await newHost();
    await overH2(async (session) => {
      const call = (extra: Record<string, string>, body: Buffer) =>
        h2Request(session, { ":method": "POST", ":path": "/scheduling.v1.UserService/GetUser", "content-type": "application/grpc", te: "trailers", "x-api-key": host.key, ...extra }, body);
      const cases: Array<[string, Record<string, string>, Buffer, string, string]> = [
        ["not protobuf", {}, Buffer.from("0000000005ff6edb80d4", "hex"), "3", "INVALID_VALUE"],
        ["an envelope cut short", {}, Buffer.from("000000000a01", "hex"), "3", "INVALID_VALUE"],
        ["two messages to a unary method", {}, Buffer.from("00000000000000000000", "hex"), "12", "UNIMPLEMENTED"],
        ["an encoding not known", { "grpc-encoding": "snappy" }, Buffer.from("0100000003010203", "hex"), "12", "UNIMPLEMENTED"],
      ];
      for (const [what, extra, body, code, reason] of cases) {
        for (const deadline of [{}, { "grpc-timeout": "5S" }] as Record<string, string>[]) {
          const answer = await call({ ...extra, ...deadline }, body);
          expect({ what, deadline, status: answer.grpcStatus, details: detailsIn(answer.grpcDetails) }).toEqual({ what, deadline, status: code, details: { code: Number(code), reason } });
        }
      }
    });
  });

  it("Connect binary and gRPC-Web: a body that does not decode is INVALID_VALUE", async () => {
    const host = await newHost();
    const connect = await rawRequest(baseUrl(), { method: "POST", path: "/scheduling.v1.UserService/GetUser", headers: { "content-type": "application/proto", "x-api-key": host.key }, body: Buffer.from("ff6edb80d4", "hex") });
    expect({ status: connect.status, body: JSON.parse(connect.text) }).toMatchObject({ status: 400, body: { code: "invalid_argument", details: [{ debug: { reason: "INVALID_VALUE", domain: "scheduling.v1" } }] } });
    const web = await rawRequest(baseUrl(), { method: "POST", path: "/scheduling.v1.UserService/GetUser", headers: { "content-type": "application/grpc-web+proto", "x-api-key": host.key }, body: Buffer.from("0000000005ff6edb80d4", "hex") });
    const trailers = grpcWebTrailers(web.bytes);
    expect({ status: trailers["grpc-status"], details: detailsIn(trailers["grpc-status-details-bin"]) }).toEqual({ status: "3", details: { code: 3, reason: "INVALID_VALUE" } });
  });
});

describe("the fast unary path and Connect's own send the same details", () => {
  it("gRPC: the same trailers, grpc-status-details-bin byte for byte, with a deadline (Connect's path) as without (the fast path)", async () => {
    const host = await newHost();
    await overH2(async (session) => {
      // CreateEvent with a value not allowed: INVALID_VALUE with a BadRequest; GetUser without a key: UNAUTHENTICATED.
      const calls: Array<[string, Record<string, string>, Buffer]> = [
        ["/scheduling.v1.EventService/CreateEvent", { "x-api-key": host.key }, grpcBody(EventService.method.createEvent, { event: { name: "Odd", url: "odd-paths", slot_duration: "7_minutes" } })],
        ["/scheduling.v1.UserService/GetUser", {}, grpcBody(UserService.method.getUser, {})],
      ];
      for (const [path, extra, body] of calls) {
        const answers = [];
        for (const deadline of [{}, { "grpc-timeout": "5S" }] as Record<string, string>[]) {
          const headers = { ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", ...extra, ...deadline };
          const { grpcStatus, grpcMessage, grpcDetails } = await h2Request(session, headers, body);
          answers.push({ grpcStatus, grpcMessage, grpcDetails });
        }
        expect(answers[0].grpcDetails, path).toEqual(expect.any(String));
        expect(answers[1], path).toEqual(answers[0]);
      }
    });
  });

  it("Connect: the same error body, details included, with a deadline (Connect's path) as without (the fast path)", async () => {
    const host = await newHost();
    const bodies = [];
    for (const deadline of [{}, { "connect-timeout-ms": "5000" }] as Record<string, string>[]) {
      const res = await fetch(`${baseUrl()}/scheduling.v1.EventService/CreateEvent`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": host.key, ...deadline },
        body: JSON.stringify({ event: { name: "Odd", url: "odd-connect", slotDuration: "7_minutes" } }),
      });
      expect(res.status).toBe(400);
      bodies.push(await res.text());
    }
    expect(JSON.parse(bodies[0]).details).toHaveLength(2);
    expect(bodies[1]).toBe(bodies[0]);
  });
});

describe("a streaming RPC's error", () => {
  it("gRPC: WatchBookingChanges refused ends with trailers whose google.rpc.Status has the error's code and message and the ErrorInfo", async () => {
    const host = await newHost();
    await overH2(async (session) => {
      const body = grpcBody(BookingService.method.watchBookingChanges, { after: "bogus" });
      const headers = { ":method": "POST", ":path": "/scheduling.v1.BookingService/WatchBookingChanges", "content-type": "application/grpc", te: "trailers", "x-api-key": host.key };
      const { grpcStatus, grpcMessage, grpcDetails } = await h2Request(session, headers, body);
      const status = fromBinary(StatusSchema, Buffer.from(grpcDetails ?? "", "base64"));
      const info = status.details.map((d) => anyUnpack(d, ErrorInfoSchema)).find((d) => d !== undefined);
      expect({ grpcStatus, grpcMessage: decodeURIComponent(grpcMessage ?? "") }).toEqual({ grpcStatus: "9", grpcMessage: "changes are no longer kept; list the bookings again" });
      expect({ code: status.code, message: status.message, reason: info?.reason, domain: info?.domain }).toEqual({
        code: 9,
        message: "changes are no longer kept; list the bookings again",
        reason: "CHANGES_EXPIRED",
        domain: "scheduling.v1",
      });
    });
  });
});

/** One gRPC call on `session`: the response's headers (but its date), its trailers and its body. */
function grpcExchange(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body: Buffer): Promise<{ headers: Record<string, unknown>; trailers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers);
    const answer = { headers: {} as Record<string, unknown>, trailers: {} as Record<string, unknown> };
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      const { date: _date, ...rest } = h;
      answer.headers = { ...rest };
    });
    stream.on("trailers", (t) => (answer.trailers = { ...t }));
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", reject);
    stream.on("close", () => resolve({ ...answer, body: Buffer.concat(chunks) }));
    stream.end(body);
  });
}

/** The google.rpc.ErrorInfo reason in a gRPC answer's trailers, or undefined. */
function reasonOf(trailers: Record<string, unknown>): string | undefined {
  const details = trailers["grpc-status-details-bin"];
  if (typeof details !== "string") return undefined;
  return fromBinary(StatusSchema, Buffer.from(details, "base64"))
    .details.map((d) => anyUnpack(d, ErrorInfoSchema))
    .find((d) => d !== undefined)?.reason;
}

/** The count of one series of scheduling_requests_total in a scrape of `base`'s /metrics, 0 before its first request. */
async function requestsCounted(base: string, labels: Record<string, string>): Promise<number> {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of (await (await fetch(`${base}/metrics`)).text()).split("\n")) {
    if (!line.startsWith("scheduling_requests_total{")) continue;
    const have = line.slice(line.indexOf("{") + 1, line.lastIndexOf("}")).split(/,(?=\w+=")/);
    if (have.length === want.length && want.every((w) => have.includes(w))) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return 0;
}

/** The request line a server logged under `id`, without what differs between any two requests (time, duration). */
function requestLine(server: RunningServer, id: string): Record<string, unknown> | undefined {
  const line = server
    .logs()
    .split("\n")
    .find((l) => l.includes(`"request_id":"${id}"`) && l.includes(`"msg":"request"`));
  if (line === undefined) return undefined;
  const { time: _time, duration_ms: _duration, pid: _pid, request_id: _id, ...rest } = JSON.parse(line) as Record<string, unknown>;
  return rest;
}

describe("RATE_LIMITED, UNAVAILABLE and PERMISSION_DENIED, on servers of their own", () => {
  let db: TestDatabase;
  let proxy: DbProxy;
  let server: RunningServer;
  let adminless: RunningServer;
  let cached: RunningServer;
  const LIMIT = 3;
  beforeAll(async () => {
    db = await startDatabase();
    proxy = await startDbProxy(db.uri);
    [server, adminless, cached] = await Promise.all([
      startServer({ MONGODB_URI: proxy.uri, RATE_LIMIT_PER_KEY: String(LIMIT), RATE_LIMIT_WINDOW_SECONDS: "120", ACCOUNT_CACHE_MS: "0" }),
      startServer({ MONGODB_URI: db.uri, ADMIN_TOKEN: "" }),
      startServer({ MONGODB_URI: db.uri, RATE_LIMIT_PER_KEY: String(LIMIT), RATE_LIMIT_WINDOW_SECONDS: "120", ACCOUNT_CACHE_MS: "1000" }),
    ]);
  }, 180_000);
  afterAll(async () => {
    useServer(undefined);
    await Promise.all([server?.stop(), adminless?.stop(), cached?.stop()]);
    await proxy?.close();
    await db?.kill();
  });

  it.each(RPC_PROTOCOLS)("%s: RESOURCE_EXHAUSTED is RATE_LIMITED with a RetryInfo of what Retry-After says", async (protocol) => {
    useServer(server.baseUrl);
    const account = await fixturesAt(server.baseUrl).newAccount();
    let refused: ConnectError | undefined;
    // LIMIT + 1 calls are refused once; twice as many if a window starts between them.
    for (let i = 0; i < 2 * (LIMIT + 1) && !refused; i++) {
      refused = await rpcFailure(protocol, UserService, "getUser", {}, key(account.key)).catch(() => undefined);
    }
    expect(refused?.code).toBe(Code.ResourceExhausted);
    const retryAfter = Number(refused!.metadata.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(120);
    expect(detailsOf(refused!)).toEqual({
      infos: 1,
      reason: "RATE_LIMITED",
      domain: "scheduling.v1",
      metadata: { retry_after: String(retryAfter) },
      violations: undefined,
      retrySeconds: retryAfter,
    });
    // REST refuses the same key the same way, with the same Retry-After.
    const viaRest = await rest("GET", "/user", { key: account.key });
    expect(viaRest.status).toBe(429);
    expect(Math.abs(Number(viaRest.headers.get("retry-after")) - retryAfter)).toBeLessThanOrEqual(1);
  });

  it.each(RPC_PROTOCOLS)("%s: a database that does not answer in time is UNAVAILABLE with a RetryInfo of REST's Retry-After", async (protocol) => {
    useServer(server.baseUrl);
    const account = await fixturesAt(server.baseUrl).newAccount();
    const timedOut = { code: 50, codeName: "MaxTimeMSExpired", errmsg: "operation exceeded time limit" };
    void proxy.failNext((c) => c.collection === "events", timedOut);
    const viaRest = await rest("GET", "/events", { key: account.key });
    expect(viaRest.status).toBe(503);
    const restRetryAfter = Number(viaRest.headers.get("retry-after"));
    expect(restRetryAfter).toBeGreaterThanOrEqual(1);
    void proxy.failNext((c) => c.collection === "events", timedOut);
    const err = await rpcFailure(protocol, EventService, "listEvents", {}, key(account.key));
    expect({ code: err.code, message: err.rawMessage }).toEqual({ code: Code.Unavailable, message: "database unavailable" });
    expect(detailsOf(err)).toEqual({ infos: 1, reason: "UNAVAILABLE", domain: "scheduling.v1", metadata: {}, violations: undefined, retrySeconds: restRetryAfter });
  });

  /*
   * The fast unary path (src/platform/transport/fastUnary.ts) runs the router's interceptors as one composed function
   * that hands an answer already there on without a promise (UnaryStep); a call with a deadline goes to Connect's own
   * handler, which runs them as Connect's interceptors. With the account read for each call (ACCOUNT_CACHE_MS=0)
   * the method answers with a promise, from the cache (`cached`) without one: both ways, both paths give the same
   * answer, headers, trailers, request line and metric, answered, refused for its key, or refused by the rate limit.
   */
  it("gRPC GetUser: the same answer, headers, trailers, request line and count with a deadline (Connect's path) as without (the fast path), the account read for the call or cached", async () => {
    for (const srv of [server, cached]) {
      const account = await fixturesAt(srv.baseUrl).newAccount();
      const session = http2.connect(srv.baseUrl);
      session.on("error", () => undefined);
      const ok = { protocol: "grpc", route: "scheduling.v1.UserService/GetUser", status: "ok" };
      const before = await requestsCounted(srv.baseUrl, ok);
      const call = async (extra: Record<string, string>, id: string) => {
        const headers = { ":method": "POST", ":path": "/scheduling.v1.UserService/GetUser", "content-type": "application/grpc", te: "trailers", "x-request-id": id, ...extra };
        return { ...(await grpcExchange(session, headers, grpcBody(UserService.method.getUser, {}))), line: undefined as Record<string, unknown> | undefined, id };
      };
      try {
        const run = `${Date.now()}-${srv.port}`;
        // The first call reads the account; on the cached server the two compared after it find it in the cache.
        await call(key(account.key), `warm-${run}`);
        const answered = [await call(key(account.key), `fast-${run}`), await call({ ...key(account.key), "grpc-timeout": "5S" }, `slow-${run}`)];
        const anonymous = [await call({}, `fast-anon-${run}`), await call({ "grpc-timeout": "5S" }, `slow-anon-${run}`)];
        // LIMIT calls a window: the ones after are refused, whichever path they take.
        const limited: Array<Awaited<ReturnType<typeof call>>> = [];
        let passed = 0;
        for (let i = 0; i < 2 * (LIMIT + 1) && limited.length === 0; i++) {
          const fast = await call(key(account.key), `fast-limit-${run}-${i}`);
          if (fast.trailers["grpc-status"] === String(Code.ResourceExhausted)) limited.push(fast, await call({ ...key(account.key), "grpc-timeout": "5S" }, `slow-limit-${run}`));
          else passed++;
        }
        expect(limited, "the rate limit refused a call").toHaveLength(2);
        await until("every call's request line", () => [...answered, ...anonymous, ...limited].every((a) => requestLine(srv, a.id) !== undefined));
        for (const [fast, slow] of [answered, anonymous, limited]) {
          // The id each call sent is echoed; everything else is the same.
          expect(fast.headers["x-request-id"]).toBe(fast.id);
          expect(slow.headers["x-request-id"]).toBe(slow.id);
          const same = (a: typeof fast) => ({ headers: { ...a.headers, "x-request-id": "(sent)" }, trailers: a.trailers, line: requestLine(srv, a.id) });
          const retry = (a: typeof fast) => Number(a.trailers["retry-after"] ?? 0);
          // The rate limit's Retry-After (and its RetryInfo) count down the window's seconds: one may have passed between the two.
          expect(Math.abs(retry(fast) - retry(slow))).toBeLessThanOrEqual(1);
          if (fast !== limited[0]) expect(same(slow)).toEqual(same(fast));
          else expect(same({ ...slow, trailers: { ...slow.trailers, "retry-after": 0, "grpc-status-details-bin": 0 } })).toEqual(same({ ...fast, trailers: { ...fast.trailers, "retry-after": 0, "grpc-status-details-bin": 0 } }));
          expect(slow.body.equals(fast.body)).toBe(true);
          expect(reasonOf(slow.trailers)).toBe(reasonOf(fast.trailers));
        }
        expect(reasonOf(limited[0].trailers)).toBe("RATE_LIMITED");
        expect(answered[0].headers["cache-control"]).toBe("no-store");
        expect(answered[0].trailers["grpc-status"]).toBe("0");
        expect(anonymous[0].trailers["grpc-status"]).toBe(String(Code.Unauthenticated));
        // Counted once each as the stream closes: the warm-up, the two answered, and any the rate limit let through.
        await until("the answered calls counted", async () => (await requestsCounted(srv.baseUrl, ok)) === before + 3 + passed);
      } finally {
        session.close();
      }
    }
  }, 90_000);

  it.each(RPC_PROTOCOLS)("%s: PERMISSION_DENIED", async (protocol) => {
    useServer(adminless.baseUrl);
    const err = await rpcFailure(protocol, AdminService, "createAccount", { account: { email: "x@example.com", full_name: "X" } }, { "x-admin-token": ADMIN_TOKEN });
    expect({ code: err.code, message: err.rawMessage }).toEqual({ code: Code.PermissionDenied, message: "admin api is disabled" });
    expect(detailsOf(err)).toMatchObject({ infos: 1, reason: "PERMISSION_DENIED", domain: "scheduling.v1", violations: undefined, retrySeconds: undefined });
  });
});
