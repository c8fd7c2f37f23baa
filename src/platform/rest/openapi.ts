// Builds the OpenAPI 3.1 document of /api/v1 from the REST route table and the proto descriptors, so it cannot drift.
import { IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER } from "../transport/idempotency.js";
import { readFileSync } from "node:fs";
import { ScalarType, type DescField, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { STATUS_NAMES } from "./errors.js";
import type { JsonObject } from "./json.js";
import { PICTURE_MAX_BYTES } from "../../domain/user.js";
import { API_PREFIX, fileField, JSON_BODY_LIMIT } from "./router.js";
import { REFUSAL_REASONS } from "../../domain/slots.js";
import { methodOf, probeData, type HttpMethod, type RestRoute, type RpcRoute, type SessionOnlyRoute } from "./table.js";
import { ABSENT_WHEN_UNSET, ALLOWED_VALUES, JSON_VALUES, restNameOf, STRING_FORMATS, type AllowedList } from "./schemaFacts.js";

export type Schema = { [key: string]: JsonValue };

const PACKAGE = "scheduling.v1.";
const ALL_METHODS: HttpMethod[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** Who may call a service's rows: everything else takes the account's API key. */
const AUTH_OF_SERVICE: Readonly<Record<string, "admin" | "public">> = {
  "scheduling.v1.AdminService": "admin",
  "scheduling.v1.PublicBookingService": "public",
};

const VERSION = (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }).version;

/**
 * "/events/:id" → "/events/{id}"; a "*rest" wildcard becomes a "{rest}" parameter (it may span segments). Paths are
 * below the document's one server, API_PREFIX.
 */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/[:*](\w+)/g, "{$1}");
}

export function pathParams(expressPath: string): string[] {
  return [...expressPath.matchAll(/[:*](\w+)/g)].map((m) => m[1]);
}

/** The HTTP methods a row answers, lower case as OpenAPI keys them. */
export function operationsOf(route: RestRoute): string[] {
  return (route.method === "ALL" ? ALL_METHODS : [route.method]).map((m) => m.toLowerCase());
}

const WELL_KNOWN: Readonly<Record<string, Schema>> = {
  "google.protobuf.Struct": { type: "object", additionalProperties: true },
  "google.protobuf.Value": { description: "any JSON value" },
  "google.protobuf.ListValue": { type: "array", items: {} },
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Duration": { type: "string", pattern: "^-?[0-9]+(\\.[0-9]+)?s$" },
  "google.protobuf.Empty": { type: "object" },
};

function scalarSchema(t: ScalarType): Schema {
  switch (t) {
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64" };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return { type: "number" };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: "integer", format: "int32" };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", format: "int32", minimum: 0 };
    default:
      // 64-bit integers are written as JSON strings by the proto JSON mapping; numbers are read too.
      return { type: ["string", "integer"], format: "int64" };
  }
}

function nullable(s: Schema): Schema {
  if (typeof s.type === "string") return { ...s, type: [s.type, "null"], ...(Array.isArray(s.enum) ? { enum: [...s.enum, null] } : {}) };
  return { anyOf: [s, { type: "null" }] };
}

/**
 * Where a message is used: in a request (parameters, bodies) or in an answer. Answers always carry every field
 * (unset optional ones as null, src/platform/rest/json.ts), so an answer's schema lists them all as required;
 * a request's lists none (a row's `required` says what its body's object needs). A message used both ways
 * (Availability, EventLocation...) gets two components, the request's named "<Name>Input".
 */
type Mode = "in" | "out";

/** Collects the messages the document refers to, and renders them as components. */
class Components {
  private readonly refs: { name: string; mode: Mode; node: Schema }[] = [];
  private readonly used = new Map<string, { desc: DescMessage; modes: Set<Mode> }>();
  private readonly lists = new Map<string, AllowedList>();
  readonly schemas: Record<string, Schema> = {};

  nameOf(desc: DescMessage): string {
    return desc.typeName.startsWith(PACKAGE) ? desc.typeName.slice(PACKAGE.length) : desc.typeName;
  }

  /** A reference to the message's component in this mode; the name is settled by render(). */
  message(desc: DescMessage, mode: Mode): Schema {
    const known = WELL_KNOWN[desc.typeName];
    if (known) return known;
    if (desc.typeName.startsWith("google.protobuf.")) return {};
    const name = this.nameOf(desc);
    const entry = this.used.get(name) ?? { desc, modes: new Set<Mode>() };
    entry.modes.add(mode);
    this.used.set(name, entry);
    const node: Schema = { $ref: "" };
    this.refs.push({ name, mode, node });
    return node;
  }

  /** A string or number field's own schema: its type, and its allowed values or format when it has them. */
  private value(field: DescField, type: Schema): Schema {
    const allowed = ALLOWED_VALUES[field.parent.typeName]?.[field.name];
    if (allowed) {
      if (allowed.name === undefined) return { ...type, enum: [...allowed.values] };
      this.lists.set(allowed.name, allowed);
      return { $ref: `#/components/schemas/${allowed.name}` };
    }
    const format = STRING_FORMATS[field.parent.typeName]?.[field.name];
    return format === undefined ? type : { ...type, format };
  }

  field(field: DescField, mode: Mode): Schema {
    switch (field.fieldKind) {
      case "scalar": {
        const s = this.value(field, scalarSchema(field.scalar));
        return field.presence === 2 /* IMPLICIT */ ? s : nullable(s);
      }
      case "enum": {
        const s: Schema = { type: "string", enum: field.enum.values.map((v) => v.name) };
        return field.presence === 2 ? s : nullable(s);
      }
      case "message": {
        // A value that null clears (an event's rules): its own schema, null included.
        const json = JSON_VALUES[field.parent.typeName]?.[field.name];
        if (json) return { ...json } as Schema;
        // A list of enumerated strings carried as a ListValue (a webhook's events).
        if (field.message.typeName === "google.protobuf.ListValue" && ALLOWED_VALUES[field.parent.typeName]?.[field.name]) {
          return nullable({ type: "array", items: this.value(field, { type: "string" }) });
        }
        // Unset message fields are written as null (src/platform/rest/json.ts).
        return nullable(this.message(field.message, mode));
      }
      case "list": {
        const items = field.listKind === "scalar" ? this.value(field, scalarSchema(field.scalar)) : field.listKind === "enum"
          ? { type: "string", enum: field.enum.values.map((v) => v.name) } : this.message(field.message, mode);
        return { type: "array", items };
      }
      case "map": {
        const values = field.mapKind === "scalar" ? scalarSchema(field.scalar) : field.mapKind === "enum"
          ? { type: "string", enum: field.enum.values.map((v) => v.name) } : this.message(field.message, mode);
        return { type: "object", additionalProperties: values };
      }
    }
  }

  /** The message as an object schema, optionally without some fields (those taken from the path or query). */
  objectOf(desc: DescMessage, mode: Mode, without: ReadonlySet<string> = new Set()): Schema {
    const properties: Schema = {};
    for (const f of desc.fields) if (!without.has(f.name)) properties[restNameOf(f)] = this.field(f, mode);
    // An answer holds every field, unset optional ones as null, except those left out when unset.
    const absent = ABSENT_WHEN_UNSET[desc.typeName] ?? [];
    const names = Object.keys(properties).filter((n) => !absent.includes(n));
    return { type: "object", ...(mode === "out" && names.length > 0 ? { required: names } : {}), properties };
  }

  private componentName(name: string, mode: Mode): string {
    return mode === "in" && this.used.get(name)!.modes.has("out") ? `${name}Input` : name;
  }

  render(): void {
    const done = new Set<string>();
    for (let i = 0; i < this.refs.length; i++) {
      // Rendering a component may refer to more messages: the loop runs until every reference is rendered.
      const { name, mode } = this.refs[i];
      const key = `${mode} ${name}`;
      if (done.has(key)) continue;
      done.add(key);
      const desc = this.used.get(name)!.desc;
      this.schemas[this.componentName(name, mode)] = { ...this.objectOf(desc, mode), "x-proto-message": desc.typeName };
    }
    for (const { name, mode, node } of this.refs) node.$ref = `#/components/schemas/${this.componentName(name, mode)}`;
    for (const [name, allowed] of this.lists) {
      this.schemas[name] = { type: typeof allowed.values[0] === "number" ? "integer" : "string", enum: [...allowed.values] };
    }
  }
}

/** How a row builds its RPC request, found by running its `request` function on marked inputs. */
interface RequestShape {
  /** Request field names filled from the path or the query string (so not from the body). */
  boundFields: Set<string>;
  query: Map<string, Schema>;
  /** Body properties read (name → schema), or "whole" when the body is the request (minus path and query fields). */
  body: Map<string, Schema> | "whole";
}

const PATH_MARK = "\u0000path:";
const QUERY_MARK = "\u0000query:";

function requestShape(route: RpcRoute, input: DescMessage, c: Components): RequestShape {
  const shape: RequestShape = { boundFields: new Set(), query: new Map(), body: new Map() };
  const params = Object.fromEntries(pathParams(route.path).map((p) => [p, PATH_MARK + p]));
  if (!route.request) {
    shape.body = route.body === "none" ? new Map() : "whole";
    return shape;
  }
  const queryRead = new Set<string>();
  const query = new Proxy<Record<string, unknown>>({}, {
    get(_t, key) {
      if (typeof key !== "string") return undefined;
      queryRead.add(key);
      return QUERY_MARK + key;
    },
  });
  const bodyMarks = new Map<object, string>();
  let bodyWhole = false;
  const body = new Proxy<JsonObject>({}, {
    get(_t, key) {
      if (typeof key !== "string") return undefined;
      for (const [mark, name] of bodyMarks) if (name === key) return mark;
      const mark = {};
      bodyMarks.set(mark, key);
      return mark;
    },
    ownKeys() {
      bodyWhole = true;
      return [];
    },
  });
  let built: JsonValue;
  try {
    built = route.request({ params, query, body });
  } catch {
    // A row whose builder cannot run on placeholders is described by its path names alone.
    shape.body = route.body === "none" ? new Map() : "whole";
    for (const p of Object.keys(params)) shape.boundFields.add(p);
    return shape;
  }
  if (built === body) bodyWhole = true;

  const walk = (value: unknown, desc: DescMessage, top: boolean) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return;
    for (const [key, v] of Object.entries(value)) {
      const field = desc.fields.find((f) => f.name === key || f.jsonName === key);
      // Made only where used: a field filled from the path or query must not make its message a component.
      const schema = () => (field ? c.field(field, "in") : {});
      if (typeof v === "string" && v.startsWith(PATH_MARK)) {
        if (top) shape.boundFields.add(key);
      } else if (typeof v === "string" && v.startsWith(QUERY_MARK)) {
        shape.query.set(v.slice(QUERY_MARK.length), field ? stripNull(schema()) : { type: "string" });
        if (top) shape.boundFields.add(key);
      } else if (typeof v === "object" && v !== null && bodyMarks.has(v)) {
        if (shape.body !== "whole") shape.body.set(bodyMarks.get(v)!, stripNull(schema()));
      } else if (field?.fieldKind === "message") {
        walk(v, field.message, false);
      }
    }
  };
  walk(built, input, true);
  for (const key of queryRead) if (!shape.query.has(key)) shape.query.set(key, { type: "string" });
  if (bodyWhole) shape.body = "whole";
  if (route.body === "none") shape.body = new Map();
  return shape;
}

/** Query values are never null: a missing parameter is simply left out. */
function stripNull(s: Schema): Schema {
  if (Array.isArray(s.type)) {
    const type = s.type.filter((t) => t !== "null")[0] ?? "string";
    return { ...s, type, ...(Array.isArray(s.enum) ? { enum: s.enum.filter((v) => v !== null) } : {}) };
  }
  if (Array.isArray(s.anyOf)) return (s.anyOf as Schema[]).find((x) => x.type !== "null") ?? {};
  return s;
}

/** The envelope's `data`, found by running the row's `data` picker on a response whose fields are marked. */
function dataSchema(route: RpcRoute, output: DescMessage, c: Components): Schema {
  if (!route.data) return c.message(output, "out");
  const probe = probeData(route);
  if (!probe) return {};
  const describe = (v: unknown): Schema => {
    if (v === probe.answer) return c.message(output, "out");
    const field = probe.fieldOf(v);
    if (field) return stripNull(c.field(field, "out"));
    if (Array.isArray(v)) return { type: "array", items: v.length > 0 ? describe(v[0]) : {} };
    if (typeof v === "object" && v !== null) {
      return { type: "object", properties: Object.fromEntries(Object.entries(v).map(([k, x]) => [k, describe(x)])) };
    }
    return v === undefined ? {} : { const: v as JsonValue };
  };
  return describe(probe.picked);
}

function successEnvelope(status: number, messages: readonly string[], data: Schema): Schema {
  const message: Schema = messages.length === 1 ? { type: "string", const: messages[0] } : { type: "string", enum: [...messages] };
  return {
    type: "object",
    required: ["success", "message", "data", "status"],
    properties: { success: { const: true }, message, data, status: { const: status } },
  };
}

const ERROR_RESPONSES: Readonly<Record<number, { name: string; description: string }>> = {
  400: { name: "BadRequest", description: "missing params (data lists the missing names grouped by object, e.g. {\"event\": [\"name\"]}) or a malformed body" },
  401: { name: "Unauthorized", description: "api_key is missing or invalid (admin rows: admin token is missing or invalid)" },
  403: { name: "Forbidden", description: "not allowed with an API key, or the admin API is disabled" },
  404: { name: "NotFound", description: "no such resource, or not the caller's" },
  409: {
    name: "Conflict",
    description: `already taken, e.g. slot is not available (data.reason says why: ${REFUSAL_REASONS.join(", ")}); or a request with the same Idempotency-Key is still in progress`,
  },
  413: { name: "PayloadTooLarge", description: `request body is larger than ${JSON_BODY_LIMIT.toUpperCase()} (a picture: 5 MB)` },
  422: {
    name: "UnprocessableEntity",
    description:
      "validation failed; the message names the field. A value outside an enumerated list adds data {field, allowed}; " +
      "a name the body's object does not take is `unknown field <name>` with data {unknown, allowed}; an Idempotency-Key used with another " +
      "request is `idempotency key was used with another request`",
  },
  500: { name: "InternalServerError", description: "internal server error" },
  503: { name: "ServiceUnavailable", description: "the database is not reachable" },
};

function errorRef(status: number): Schema {
  return { $ref: `#/components/responses/${ERROR_RESPONSES[status].name}` };
}

function securityOf(auth: "key" | "admin" | "public"): JsonValue {
  if (auth === "public") return [];
  return [auth === "admin" ? { adminToken: [] } : { apiKey: [] }];
}

function parameter(name: string, where: "path" | "query", schema: Schema, description?: string): Schema {
  return { name, in: where, required: where === "path", schema, ...(description ? { description } : {}) };
}

/**
 * The objects a body must carry: its message and list fields (`{"event": {...}}`, `{"bookings": [...]}`). A body
 * without its object is 400 `missing params` on every path (services call requireObject/requireFields). A
 * well-known type written as a JSON value (an update_mask is a string) is no such object.
 */
export function bodyObjects(input: DescMessage, names: Iterable<string>): string[] {
  return [...names].filter((n) => {
    const f = input.fields.find((x) => x.name === n);
    if (f?.fieldKind === "message") return !f.message.typeName.startsWith("google.protobuf.") || f.message.typeName === "google.protobuf.Struct";
    return f?.fieldKind === "list";
  });
}

/** What the row requires inside its body's object (`required` of the row), as the object's (or its entries') schema. */
function requiredInside(route: RpcRoute, input: DescMessage, objects: readonly string[]): Schema | undefined {
  if (route.required === undefined || route.required.length === 0 || objects.length !== 1) return undefined;
  const [name] = objects;
  const within: Schema = { required: [...route.required] };
  return { [name]: input.fields.find((f) => f.name === name)?.fieldKind === "list" ? { items: within } : within };
}

function rpcOperation(route: RpcRoute, c: Components, operationIds: Set<string>): Schema {
  const method = methodOf(route);
  const auth = AUTH_OF_SERVICE[route.service.typeName] ?? "key";
  const shape = requestShape(route, method.input, c);
  const pathFieldSchema = (name: string): Schema => {
    const f = method.input.fields.find((x) => x.name === name);
    return f ? stripNull(c.field(f, "in")) : { type: "string" };
  };
  const parameters: Schema[] = pathParams(route.path).map((p) => parameter(p, "path", pathFieldSchema(p)));
  const documented = new Map((route.query ?? []).map((q) => [q.name, q]));
  const queryNames = [...new Set([...shape.query.keys(), ...documented.keys()])];
  for (const name of queryNames) {
    const q = documented.get(name);
    parameters.push(parameter(name, "query", q?.schema ?? shape.query.get(name) ?? { type: "string" }, q?.description));
  }

  // Every write takes an Idempotency-Key (src/platform/transport/idempotency.ts).
  const write = route.method !== "GET";
  if (write) parameters.push({ $ref: "#/components/parameters/IdempotencyKey" });

  let requestBody: Schema | undefined;
  if (route.body === "multipart") {
    requestBody = {
      required: true,
      content: {
        "multipart/form-data": {
          schema: {
            type: "object",
            required: [fileField(route)],
            properties: { [fileField(route)]: { type: "string", format: "binary", description: `JPEG, PNG, GIF or WebP, at most ${PICTURE_MAX_BYTES / 1024 / 1024} MB` } },
          },
        },
      },
    };
  } else if (shape.body === "whole") {
    const without = new Set([...shape.boundFields, ...pathParams(route.path)]);
    const schema = without.size === 0 ? c.message(method.input, "in") : c.objectOf(method.input, "in", without);
    const objects = bodyObjects(method.input, method.input.fields.map((f) => f.name).filter((n) => !without.has(n)));
    const inside = requiredInside(route, method.input, objects);
    requestBody = objects.length === 0
      ? { content: { "application/json": { schema } } }
      : { required: true, content: { "application/json": { schema: { allOf: [schema], required: objects, ...(inside ? { properties: inside } : {}) } } } };
  } else if (shape.body.size > 0) {
    const objects = bodyObjects(method.input, shape.body.keys());
    const inside = requiredInside(route, method.input, objects);
    const properties = Object.fromEntries([...shape.body].map(([name, schema]) => [name, inside?.[name] ? { allOf: [schema], ...(inside[name] as Schema) } : schema]));
    requestBody = {
      ...(objects.length > 0 ? { required: true } : {}),
      content: { "application/json": { schema: { type: "object", properties, ...(objects.length > 0 ? { required: objects } : {}) } } },
    };
  }

  // An optional body: neither the body nor its object is required.
  if (requestBody && route.bodyOptional) requestBody = optionalBody(requestBody);

  const status = route.status ?? 200;
  const responses: Schema = {
    [String(status)]: {
      description: route.message,
      ...(write ? { headers: { [REPLAYED_HEADER]: { $ref: `#/components/headers/${REPLAYED_HEADER}` } } } : {}),
      content: { "application/json": { schema: successEnvelope(status, route.messageOf?.all ?? [route.message], dataSchema(route, method.output, c)) } },
    },
  };
  const errors = [422, 500, 503];
  if (requestBody) errors.push(400, 413);
  if (auth !== "public") errors.push(401);
  if (auth === "admin") errors.push(403);
  if (parameters.some((p) => p.in === "path")) errors.push(404);
  if (write) errors.push(409);
  for (const e of errors.sort((a, b) => a - b)) responses[String(e)] = errorRef(e);

  let operationId = `${route.service.name}_${method.name}`;
  for (let n = 2; operationIds.has(operationId); n++) operationId = `${route.service.name}_${method.name}_${n}`;
  operationIds.add(operationId);
  return {
    operationId,
    tags: [route.service.name],
    summary: route.summary,
    description: `Calls the RPC \`${route.service.typeName}/${method.name}\` (the same operation over gRPC, gRPC-Web and Connect).`,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
    security: securityOf(auth),
  };
}

function sessionOnlyOperation(route: SessionOnlyRoute, verb: string): Schema {
  const wildcard = pathParams(route.path);
  return {
    operationId: `session_only_${verb}_${route.path.replace(/[^a-z0-9]+/gi, "_").replace(/^_|_$/g, "")}`,
    tags: ["SessionOnly"],
    summary: route.summary,
    description: "Needs a signed-in browser session: a valid API key is answered 403.",
    ...(wildcard.length > 0
      ? { parameters: wildcard.map((p) => parameter(p, "path", { type: "string" }, "any sub-path, which may contain slashes")) }
      : {}),
    responses: {
      "401": errorRef(401),
      "403": {
        description: route.message,
        content: { "application/json": { schema: { allOf: [{ $ref: "#/components/schemas/ErrorEnvelope" }, { properties: { message: { const: route.message } } }] } } },
      },
    },
    security: securityOf("key"),
  };
}

/** What a 422's data may hold (extensions.md "Allowed values" and "Unknown fields (REST)"). */
const UNPROCESSABLE_DATA: Schema = {
  type: "object",
  properties: {
    field: { type: "string", description: "the field whose value is outside an enumerated list" },
    allowed: { type: "array", items: { type: ["string", "integer"] }, description: "the values that field takes, or the names the body's object takes" },
    unknown: { type: "array", items: { type: "string" }, description: "the names the body's object holds that the path does not take, in body order" },
  },
};

const SESSION_ONLY_TAG: Schema = { name: "SessionOnly", description: "Paths that need a signed-in browser session: an API key is answered 403." };

/** One tag per proto service: the REST rows of its RPCs. */
function tagOf(route: RpcRoute): Schema {
  const auth = AUTH_OF_SERVICE[route.service.typeName] ?? "key";
  const who = auth === "public" ? "no credentials (public)" : auth === "admin" ? "the X-ADMIN-TOKEN header" : "the account's API key";
  return { name: route.service.name, description: `The RPCs of \`${route.service.typeName}\` as REST rows; they take ${who}.` };
}

/** The whole document. Built from the table each call: cheap, and new rows appear without a restart of anything else. */
export function buildOpenApi(routes: readonly RestRoute[]): Schema {
  const c = new Components();
  const paths: Record<string, Schema> = {};
  const operationIds = new Set<string>();
  for (const route of routes) {
    const item = (paths[openApiPath(route.path)] ??= {});
    for (const verb of operationsOf(route)) {
      if (verb in item) continue; // an earlier row answers first in the router, so it is the one documented
      item[verb] = route.kind === "rpc" ? rpcOperation(route, c, operationIds) : sessionOnlyOperation(route, verb);
    }
  }
  c.render();
  const responses: Record<string, Schema> = {};
  for (const [status, { name, description }] of Object.entries(ERROR_RESPONSES)) {
    const schema: Schema = status === "422" ? { allOf: [{ $ref: "#/components/schemas/ErrorEnvelope" }], properties: { data: UNPROCESSABLE_DATA } } : { $ref: "#/components/schemas/ErrorEnvelope" };
    responses[name] = { description, content: { "application/json": { schema } } };
  }
  const tags = [...new Map(routes.map((r) => (r.kind === "rpc" ? [r.service.name, tagOf(r)] : [SESSION_ONLY_TAG.name, SESSION_ONLY_TAG]))).values()];
  return {
    openapi: "3.1.0",
    info: {
      title: "Scheduling API",
      version: VERSION,
      description:
        "REST `/api/v1` of the scheduling service. Every answer is the envelope `{success, message, data, status}`. " +
        "Every operation is also an RPC of the proto services in `scheduling.v1` (gRPC, gRPC-Web, Connect on the same port).",
      contact: { name: "Scheduling service maintainers" },
    },
    // Relative to this document's origin, so the document (and Swagger UI's "try it out") works wherever it is served.
    servers: [{ url: API_PREFIX, description: "this service, on the origin that serves this document" }],
    tags,
    paths,
    components: {
      schemas: {
        ...c.schemas,
        ErrorEnvelope: {
          type: "object",
          required: ["success", "message", "data", "status"],
          properties: {
            success: { const: false },
            message: { type: "string" },
            data: { type: "object", additionalProperties: true },
            status: { type: "string", enum: Object.values(STATUS_NAMES) },
          },
        },
      },
      responses,
      parameters: {
        IdempotencyKey: {
          name: IDEMPOTENCY_KEY_HEADER,
          in: "header",
          required: false,
          schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
          description:
            "Makes a retry safe: a repeat with the same key from the same caller within 24 hours answers what the first answered, without doing it " +
            "again, and adds Idempotent-Replayed: true. The same key with another body is 422 `idempotency key was used with another request`; " +
            "a repeat while the first still runs is 409 `request with this idempotency key is in progress`.",
        },
      },
      headers: {
        [REPLAYED_HEADER]: { schema: { type: "string", const: "true" }, description: "present on an answer repeated for an Idempotency-Key" },
      },
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "X-API-KEY", description: "the account's API key" },
        adminToken: { type: "apiKey", in: "header", name: "X-ADMIN-TOKEN", description: "the service's ADMIN_TOKEN (internal services only)" },
      },
    },
  };
}

/** A JSON request body neither required itself nor requiring its object. */
function optionalBody(body: Schema): Schema {
  const { required: _body, content, ...rest } = body;
  const json = (content as Schema)["application/json"] as Schema;
  const { required: _objects, ...schema } = json.schema as Schema;
  return { ...rest, content: { "application/json": { ...json, schema } } };
}
