// RPC requests sent as JSON (Connect over HTTP/1.1 and HTTP/2, gRPC-Web and gRPC with the JSON codec, with a deadline or without): unknown fields refused as UNKNOWN_FIELD and undecodable values as INVALID_VALUE, each naming its field (callers.md "Errors programs can read"); binary protobuf keeps ignoring unknown fields.
import { create, toBinary, type DescMethodUnary, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { errorFromJsonBytes } from "@connectrpc/connect/protocol-connect";
import { findTrailerError } from "@connectrpc/connect/protocol-grpc";
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { baseUrl, rest, type Json } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { detailsOf } from "../helpers/errorDetails.js";
import { grpcFrame, grpcWebTrailers, h2Request } from "../helpers/raw.js";

/** Every way a JSON request reaches the service: the fast unary path (no deadline) and Connect's own handlers. */
const WAYS = ["connect-h1", "connect-h1 deadline", "connect-h2", "connect-h2 deadline", "grpc-web+json", "grpc+json"] as const;
type Way = (typeof WAYS)[number];

let session: http2.ClientHttp2Session;
let host: Host;
let event: Json;

beforeAll(async () => {
  session = http2.connect(baseUrl());
  session.on("error", () => undefined);
  host = await newHost();
  event = await newEvent(host);
});

afterAll(() => session?.close());

/** Headers beside the request's own: its key and, for the ways that say so, a deadline. */
function headersOf(way: Way, key: string | undefined): Record<string, string> {
  return { ...(key === undefined ? {} : { "x-api-key": key }), ...(way.endsWith("deadline") ? { "connect-timeout-ms": "10000" } : {}) };
}

/** One call of `path` with `json` as its message; its error as that protocol's client reads it, or undefined on success. */
async function call(way: Way, path: string, json: JsonObject, key?: string): Promise<ConnectError | undefined> {
  const text = JSON.stringify(json);
  if (way === "connect-h1" || way === "connect-h1 deadline") {
    const res = await fetch(`${baseUrl()}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headersOf(way, key) }, body: text });
    const bytes = new Uint8Array(await res.arrayBuffer());
    return res.status === 200 ? undefined : errorFromJsonBytes(bytes, undefined, new ConnectError(`HTTP ${res.status}`, Code.Unknown));
  }
  if (way === "connect-h2" || way === "connect-h2 deadline") {
    const ans = await h2Request(session, { ":method": "POST", ":path": path, "content-type": "application/json", ...headersOf(way, key) }, Buffer.from(text));
    return ans.status === 200 ? undefined : errorFromJsonBytes(ans.body, undefined, new ConnectError(`HTTP ${ans.status}`, Code.Unknown));
  }
  const frame = grpcFrame(Buffer.from(text));
  let trailers: Record<string, string>;
  if (way === "grpc-web+json") {
    const res = await fetch(`${baseUrl()}${path}`, { method: "POST", headers: { "content-type": "application/grpc-web+json", "x-grpc-web": "1", ...headersOf(way, key) }, body: new Uint8Array(frame) });
    expect(res.status).toBe(200);
    trailers = grpcWebTrailers(Buffer.from(await res.arrayBuffer()));
  } else {
    const ans = await h2Request(session, { ":method": "POST", ":path": path, "content-type": "application/grpc+json", te: "trailers", ...headersOf(way, key) }, frame);
    expect(ans.status).toBe(200);
    trailers = Object.fromEntries(Object.entries({ "grpc-status": ans.grpcStatus, "grpc-message": ans.grpcMessage, "grpc-status-details-bin": ans.grpcDetails }).filter(([, v]) => v !== undefined)) as Record<string, string>;
  }
  return findTrailerError(new Headers(trailers));
}

async function refused(way: Way, path: string, json: JsonObject, key?: string): Promise<ConnectError> {
  const err = await call(way, path, json, key);
  if (err === undefined) throw new Error(`${way} ${path} succeeded`);
  return err;
}

describe.each(WAYS)("%s", (way) => {
  it("an unknown field is INVALID_ARGUMENT, UNKNOWN_FIELD, with a field violation naming it as REST does (inside the resource object, and the name one edit away)", async () => {
    const b = await book(host, event, { start_time: utcIso(dayFromToday(3), `${10 + WAYS.indexOf(way)}:00`), attendee_email: `${way.replace(/\W/g, "")}@example.com` });
    const err = await refused(way, "/scheduling.v1.BookingService/UpdateBooking", { id: b.id, booking: { internalNote: "typo" } }, host.key);
    const message = "unknown field internalNote (did you mean internalNotes?)";
    expect({ code: err.code, message: err.rawMessage }).toEqual({ code: Code.InvalidArgument, message });
    expect(detailsOf(err)).toEqual({
      infos: 1,
      reason: "UNKNOWN_FIELD",
      domain: "scheduling.v1",
      metadata: { field: "internalNote" },
      violations: [{ field: "internalNote", description: message }],
      retrySeconds: undefined,
    });
    // Nothing was changed.
    const after = await rest("GET", `/bookings/${b.id}`, { key: host.key });
    expect(after.body.data.internal_notes ?? null).toBe(b.internal_notes ?? null);
  });

  it("every unknown field is named, one violation each, at any depth; nothing is booked", async () => {
    const email = `bogus-${way.replace(/\W/g, "")}-${Date.now()}@example.com`;
    const request = {
      userUrl: host.user.url,
      eventUrl: event.url,
      booking: { startTime: utcIso(dayFromToday(4), "10:00"), attendeeName: "Ada", attendeeEmail: email, zz_extra: true },
      bogus: 1,
    };
    const err = await refused(way, "/scheduling.v1.PublicBookingService/CreateBooking", request);
    expect(err.code).toBe(Code.InvalidArgument);
    expect(detailsOf(err)).toMatchObject({
      reason: "UNKNOWN_FIELD",
      metadata: { field: "zz_extra" },
      violations: [
        { field: "zz_extra", description: "unknown field zz_extra" },
        { field: "bogus", description: "unknown field bogus" },
      ],
    });
    const list = await rest("GET", "/bookings", { key: host.key });
    expect(JSON.stringify(list.body.data)).not.toContain(email);
  });

  it("a value protobuf cannot read is INVALID_VALUE naming the field as REST does (limit; name inside the event)", async () => {
    for (const [path, json, field] of [
      ["/scheduling.v1.BookingService/ListBookingChanges", { limit: 2147483648 }, "limit"],
      ["/scheduling.v1.BookingService/ListBookingChanges", { limit: 1.5 }, "limit"],
      ["/scheduling.v1.BookingService/ListBookingChanges", { eventIds: ["a", 5] }, "event_ids[1]"],
      ["/scheduling.v1.EventService/CreateEvent", { event: { name: 5 } }, "name"],
      ["/scheduling.v1.EventService/CreateEvent", { event: "x" }, "event"],
    ] as Array<[string, JsonObject, string]>) {
      const err = await refused(way, path, json, host.key);
      expect({ code: err.code, message: err.rawMessage }, `${path} ${JSON.stringify(json)}`).toEqual({ code: Code.InvalidArgument, message: `${field} is not valid` });
      expect(detailsOf(err)).toEqual({
        infos: 1,
        reason: "INVALID_VALUE",
        domain: "scheduling.v1",
        metadata: { field },
        violations: [{ field, description: `${field} is not valid` }],
        retrySeconds: undefined,
      });
    }
  });

  it("a request that reads well is answered (camelCase and proto names alike)", async () => {
    expect(await call(way, "/scheduling.v1.BookingService/ListBookingChanges", { limit: 2, event_ids: [] }, host.key)).toBeUndefined();
    expect(await call(way, "/scheduling.v1.UserService/GetUser", {}, host.key)).toBeUndefined();
  });
});

describe("the fast path and Connect's own handlers answer the same", () => {
  it("Connect JSON: the same error body with a deadline as without", async () => {
    for (const json of [{ limit: 1.5 }, { limit: 2, zz: 1, event_idz: [] }]) {
      const bodies: string[] = [];
      for (const deadline of [{}, { "connect-timeout-ms": "5000" }] as Record<string, string>[]) {
        const res = await fetch(`${baseUrl()}/scheduling.v1.BookingService/ListBookingChanges`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": host.key, ...deadline },
          body: JSON.stringify(json),
        });
        expect(res.status).toBe(400);
        bodies.push(await res.text());
      }
      expect(bodies[1]).toBe(bodies[0]);
    }
  });
});

describe("binary protobuf keeps protobuf's rule", () => {
  it("gRPC and Connect: an unknown field (a newer client's) is ignored", async () => {
    const method = UserService.method.getUser as DescMethodUnary;
    // Field 999, varint 1: a field this server's GetUserRequest does not have.
    const message = Buffer.concat([Buffer.from(toBinary(method.input, create(method.input))), Buffer.from([0xb8, 0x3e, 0x01])]);
    const grpc = await h2Request(session, { ":method": "POST", ":path": "/scheduling.v1.UserService/GetUser", "content-type": "application/grpc", te: "trailers", "x-api-key": host.key }, grpcFrame(message));
    expect(grpc.grpcStatus).toBe("0");
    const connect = await fetch(`${baseUrl()}/scheduling.v1.UserService/GetUser`, { method: "POST", headers: { "content-type": "application/proto", "x-api-key": host.key }, body: new Uint8Array(message) });
    expect(connect.status).toBe(200);
  });
});
