// One call, any protocol: runs an RPC as REST, grpc-js or a Connect transport from one JSON request, so a rule is tested on each.
import { fromJson, toJson, type DescMethodUnary, type DescService, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "vitest";
import { EventService } from "../../gen/scheduling/v1/event_pb.js";
import { QuestionService } from "../../gen/scheduling/v1/question_pb.js";
import { protoNamed } from "../../src/platform/rest/json.js";
import { CONNECT_KINDS, connectClient, grpcCall, rest, type Json } from "./api.js";
import { detailsOf, type ReadDetails } from "./errorDetails.js";

export type Protocol = "rest" | "grpc" | (typeof CONNECT_KINDS)[number];
export const PROTOCOLS: Protocol[] = ["rest", "grpc", ...CONNECT_KINDS];

export interface Call {
  service: DescService;
  /** Local name of the RPC, e.g. "createEvent". */
  rpc: string;
  /** The RPC request as REST names it (proto JSON, snake_case names work, and `_destroy` for the REST names of src/platform/rest/schemaFacts.ts). */
  request: JsonObject;
  rest: { method: string; path: string; body?: unknown };
  /** Field of the RPC response that REST returns as `data`. */
  pick?: string;
}

export interface Outcome {
  ok: boolean;
  /** REST: the HTTP status. RPC: 200 on success, else undefined (see code). */
  http: number | undefined;
  code: Code | undefined;
  message: string;
  /** REST envelope data, or the picked RPC response field as proto JSON with snake_case names. */
  data: Json;
  /** A failed RPC's google.rpc details (REST has none). */
  details?: ReadDetails;
}

function methodOf(call: Call): DescMethodUnary {
  const m = call.service.methods.find((x) => x.localName === call.rpc);
  if (!m || m.methodKind !== "unary") throw new Error(`no unary ${call.rpc} on ${call.service.typeName}`);
  return m as DescMethodUnary;
}

/**
 * connect-node percent-encodes grpc-message with encodeURIComponent; grpc-js decodes it with decodeURI, which
 * leaves ", ; / : ?" escaped ("%2C"). Clients that follow the gRPC spec decode every escape, as done here.
 */
function grpcJsMessage(message: string): string {
  try {
    return decodeURIComponent(message);
  } catch {
    return message;
  }
}

export async function invoke(protocol: Protocol, key: string | undefined, call: Call): Promise<Outcome> {
  if (protocol === "rest") {
    const res = await rest(call.rest.method, call.rest.path, { key, body: call.rest.body });
    return { ok: res.body.success, http: res.status, code: undefined, message: res.body.message, data: res.body.data };
  }
  const method = methodOf(call);
  const request = fromJson(method.input, protoNamed(method.input, call.request));
  try {
    let response: unknown;
    if (protocol === "grpc") {
      response = await grpcCall(method, request, key === undefined ? {} : { "x-api-key": key });
    } else {
      const client = connectClient(call.service, protocol, key) as unknown as Record<string, (r: unknown) => Promise<unknown>>;
      response = await client[call.rpc](request);
    }
    const json = toJson(method.output, response as never, { useProtoFieldName: true, alwaysEmitImplicit: true }) as JsonObject;
    return { ok: true, http: 200, code: undefined, message: "", data: call.pick ? json[call.pick] : json };
  } catch (err) {
    const ce = ConnectError.from(err);
    return { ok: false, http: undefined, code: ce.code, message: protocol === "grpc" ? grpcJsMessage(ce.rawMessage) : ce.rawMessage, data: undefined, details: detailsOf(ce) };
  }
}

/** Runs the call and fails the test unless it succeeded; returns the data. */
export async function ok(protocol: Protocol, key: string, call: Call, restStatus = 200, restMessage?: string): Promise<Json> {
  const o = await invoke(protocol, key, call);
  if (!o.ok) throw new Error(`${protocol} ${call.rpc} failed: ${o.http ?? o.code} ${o.message} ${JSON.stringify(o.data)}`);
  if (protocol === "rest") {
    expect(o.http).toBe(restStatus);
    if (restMessage !== undefined) expect(o.message).toBe(restMessage);
  }
  return o.data;
}

const CODE_OF_HTTP: Record<number, Code> = { 400: Code.InvalidArgument, 404: Code.NotFound, 409: Code.AlreadyExists, 422: Code.InvalidArgument };

/**
 * Asserts a refusal: REST status, envelope message and data (empty unless given); RPC the matching code and the
 * same message. A value outside an enumerated list gives `data` `{field, allowed}` (allowedData).
 */
export function expectRefused(protocol: Protocol, o: Outcome, http: 404 | 409 | 422, message: string, data: Json = {}): void {
  expect(o.ok).toBe(false);
  if (protocol === "rest") {
    expect({ http: o.http, message: o.message, data: o.data }).toEqual({ http, message, data });
  } else {
    expect({ code: o.code, message: o.message }).toEqual({ code: CODE_OF_HTTP[http], message });
    // Every refusal says why in a stable word; a missing record is NOT_FOUND, a value outside a list names its field.
    expect(o.details).toMatchObject({ infos: 1, domain: "scheduling.v1", reason: http === 404 ? "NOT_FOUND" : expect.stringMatching(/^[A-Z][A-Z0-9_]*$/) });
    if (typeof data?.field === "string") {
      expect(o.details).toMatchObject({ reason: "INVALID_VALUE", metadata: { field: data.field }, violations: [{ field: data.field, description: message }] });
    }
  }
}

/**
 * Asserts a time refused for `reason` (extensions.md "Why a time is refused"): REST 409 `slot is not available`
 * with `data.reason`; RPC ALREADY_EXISTS for a taken time and FAILED_PRECONDITION for any other reason, with the
 * reason in the message and, in capitals, as the ErrorInfo's (callers.md "Errors programs can read").
 */
export function expectSlotRefused(protocol: Protocol, o: Outcome, reason: string): void {
  expect(o.ok).toBe(false);
  if (protocol === "rest") expect({ http: o.http, message: o.message, data: o.data }).toEqual({ http: 409, message: "slot is not available", data: { reason } });
  else {
    expect({ code: o.code, message: o.message }).toEqual({ code: slotRefusalCode(reason), message: `slot is not available: ${reason}` });
    expect(o.details).toMatchObject({ infos: 1, domain: "scheduling.v1", reason: reason.toUpperCase(), violations: undefined });
  }
}

/** The RPC code of a refused time: ALREADY_EXISTS when someone holds it, FAILED_PRECONDITION for the event's rules and the calendar. */
export function slotRefusalCode(reason: string): Code {
  return reason === "taken" ? Code.AlreadyExists : Code.FailedPrecondition;
}

/** Asserts a used, revoked or expired single-use link (booking-kinds.md): REST 410 `link is no longer valid` with `data.status` `gone`; RPC FAILED_PRECONDITION, reason GONE. */
export function expectGone(protocol: Protocol, o: Outcome): void {
  expect(o.ok).toBe(false);
  if (protocol === "rest") expect({ http: o.http, message: o.message, data: o.data }).toEqual({ http: 410, message: "link is no longer valid", data: { status: "gone" } });
  else {
    expect({ code: o.code, message: o.message }).toEqual({ code: Code.FailedPrecondition, message: "link is no longer valid" });
    expect(o.details).toMatchObject({ reason: "GONE" });
  }
}

/** The `data` of a 422 for a value outside an enumerated list (extensions.md "Allowed values"). */
export function allowedData(field: string, allowed: readonly (string | number)[]): Json {
  return { field, allowed };
}

/** Asserts a 400 `missing params` grouped by object (RPC: INVALID_ARGUMENT naming object.field). */
export function expectMissing(protocol: Protocol, o: Outcome, groups: Record<string, string[]>): void {
  expect(o.ok).toBe(false);
  if (protocol === "rest") {
    expect({ http: o.http, message: o.message, data: o.data }).toEqual({ http: 400, message: "missing params", data: groups });
  } else {
    const names = Object.entries(groups).flatMap(([obj, fields]) => (fields.length === 0 ? [obj] : fields.map((f) => `${obj}.${f}`)));
    expect({ code: o.code, message: o.message }).toEqual({ code: Code.InvalidArgument, message: `missing params: ${names.join(", ")}` });
    expect(o.details).toMatchObject({
      infos: 1,
      domain: "scheduling.v1",
      reason: "MISSING_PARAMS",
      metadata: { field: names[0] },
      violations: names.map((field) => ({ field, description: `${field} is missing` })),
    });
  }
}

// ---- Calls of the event and question services -----------------------------------------------------------

export const withObject = (name: string, value: Json | undefined): JsonObject => (value === undefined ? {} : { [name]: value });

export const events = {
  list: (): Call => ({ service: EventService, rpc: "listEvents", request: {}, rest: { method: "GET", path: "/events" }, pick: "events" }),
  get: (id: string): Call => ({ service: EventService, rpc: "getEvent", request: { id }, rest: { method: "GET", path: `/events/${encodeURIComponent(id)}` }, pick: "event" }),
  create: (event?: Json): Call => ({
    service: EventService, rpc: "createEvent", request: withObject("event", event), rest: { method: "POST", path: "/events", body: withObject("event", event) }, pick: "event",
  }),
  update: (id: string, event?: Json): Call => ({
    service: EventService, rpc: "updateEvent", request: { id, ...withObject("event", event) },
    rest: { method: "PATCH", path: `/events/${encodeURIComponent(id)}`, body: withObject("event", event) }, pick: "event",
  }),
  clone: (id: string): Call => ({ service: EventService, rpc: "cloneEvent", request: { id }, rest: { method: "POST", path: `/events/${encodeURIComponent(id)}/clone` }, pick: "event" }),
  remove: (id: string): Call => ({ service: EventService, rpc: "deleteEvent", request: { id }, rest: { method: "DELETE", path: `/events/${encodeURIComponent(id)}` } }),
  checkUrl: (event?: Json): Call => ({
    service: EventService, rpc: "checkEventUrlAvailability", request: withObject("event", event),
    rest: { method: "POST", path: "/events/validate_url_availability", body: withObject("event", event) },
  }),
};

export const questions = {
  list: (): Call => ({ service: QuestionService, rpc: "listQuestions", request: {}, rest: { method: "GET", path: "/questions" }, pick: "questions" }),
  create: (question?: Json): Call => ({
    service: QuestionService, rpc: "createQuestion", request: withObject("question", question),
    rest: { method: "POST", path: "/questions", body: withObject("question", question) }, pick: "question",
  }),
  update: (id: string, question?: Json): Call => ({
    service: QuestionService, rpc: "updateQuestion", request: { id, ...withObject("question", question) },
    rest: { method: "PATCH", path: `/questions/${encodeURIComponent(id)}`, body: withObject("question", question) }, pick: "question",
  }),
};
