// The OpenAPI document: valid OpenAPI 3.1, every row of the REST table in it, and real answers matching what it says.
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DescMessage } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { BookingService } from "../../gen/scheduling/v1/booking_pb.js";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { buildOpenApi, openApiPath, operationsOf, pathParams } from "../../src/platform/rest/openapi.js";
import { restRoutes } from "../../src/app/routes.js";
import type { RestRoute } from "../../src/platform/rest/table.js";
import { baseUrl, newAccount, rest, type Json } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { BODY_ROWS, bodyObjectOf, filledPath, rowAuth, rowRecords, type RowRecords } from "../helpers/tableRows.js";
import { allFiles } from "../../src/platform/http/files.js";
import { ALLOWED_VALUES, JSON_VALUES, STRING_FORMATS } from "../../src/platform/rest/schemaFacts.js";

/** Every message of the files, nested ones included. */
function nestedMessages(messages: readonly DescMessage[]): DescMessage[] {
  return messages.flatMap((m) => [m, ...nestedMessages(m.nestedMessages)]);
}

let doc: Json;

beforeAll(async () => {
  const res = await fetch(`${baseUrl()}/api/v1/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  doc = await res.json();
});

function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refs(n, out));
  else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref" && typeof v === "string") out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

function resolve(ref: string): unknown {
  return ref.replace(/^#\//, "").split("/").reduce<Json>((node, part) => node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
}

/** A validator for the success (or error) envelope of one operation, with the document's components. */
function answerValidator(path: string, verb: string, status: number) {
  // Formats are checked too: a field documented as date-time, date, email or uri must hold one in real answers.
  const ajv = new Ajv2020({ strict: false });
  addFormats.default(ajv);
  ajv.addSchema({ $id: "doc", components: doc.components });
  let answer = doc.paths[path][verb].responses[String(status)];
  if (answer.$ref) answer = resolve(answer.$ref);
  const schema = JSON.parse(JSON.stringify(answer.content["application/json"].schema).replace(/"#\/components/g, '"doc#/components'));
  return ajv.compile(schema);
}

describe("GET /api/v1/openapi.json", () => {
  it("is the raw document (no envelope) and a valid OpenAPI 3.1 description", async () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.success).toBeUndefined();
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("has every row of the REST table, with its summary, path parameters and security", () => {
    let operations = 0;
    const seen = new Set<string>();
    for (const route of restRoutes) {
      const item = doc.paths[openApiPath(route.path)];
      expect(item, `${route.method} ${route.path}`).toBeDefined();
      for (const verb of operationsOf(route)) {
        const op = item[verb];
        expect(op, `${verb} ${route.path}`).toBeDefined();
        // When two rows answer the same method and path, the router (and so the document) takes the first.
        if (seen.has(`${verb} ${openApiPath(route.path)}`)) continue;
        seen.add(`${verb} ${openApiPath(route.path)}`);
        operations++;
        expect(op.summary).toBe(route.summary);
        const params = (op.parameters ?? []).filter((p: Json) => p.in === "path").map((p: Json) => p.name);
        expect(params).toEqual(pathParams(route.path));
        if (route.kind === "rpc") {
          expect(op.description).toContain(`${route.service.typeName}/`);
          const auth = route.service.typeName === "scheduling.v1.PublicBookingService" ? [] : route.service.typeName === "scheduling.v1.AdminService" ? [{ adminToken: [] }] : [{ apiKey: [] }];
          expect(op.security).toEqual(auth);
          const success = op.responses[String(route.status ?? 200)];
          // A row whose answer picks its message (a booking or a request) lists every one it may pick.
          const message = success.content["application/json"].schema.properties.message;
          if (route.messageOf) expect(message.enum).toEqual(route.messageOf.all);
          else expect(message.const).toBe(route.message);
          for (const e of ["422", "500", "503"]) expect(op.responses[e].$ref).toMatch(/^#\/components\/responses\//);
        }
      }
    }
    expect(operations).toBeGreaterThanOrEqual(restRoutes.length);
    expect(doc.components.securitySchemes.apiKey).toEqual({ type: "apiKey", in: "header", name: "X-API-KEY", description: "the account's API key" });
    expect(doc.components.securitySchemes.adminToken.name).toBe("X-ADMIN-TOKEN");
  });

  it("has no $ref that points nowhere", () => {
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(20);
    expect(all.filter((r) => resolve(r) === undefined)).toEqual([]);
  });

  it("describes bodies without the fields taken from the path, and the picture upload as multipart", () => {
    const patch = doc.paths["/events/{id}"].patch;
    expect(Object.keys(patch.requestBody.content["application/json"].schema.properties)).toEqual(["event"]);
    expect(doc.paths["/events/{id}"].get.requestBody).toBeUndefined();
    const upload = doc.paths["/users/profile_picture"].put.requestBody.content["multipart/form-data"].schema;
    expect(upload.properties["user[profile_picture]"]).toMatchObject({ type: "string", format: "binary" });
    // A body without its object is 400 missing params: the object is required.
    expect(doc.paths["/user"].patch.requestBody).toMatchObject({ required: true });
    expect(doc.paths["/user"].patch.requestBody.content["application/json"].schema).toEqual({ allOf: [{ $ref: "#/components/schemas/UpdateUserRequest" }], required: ["user"] });
    expect(doc.paths["/admin/bookings/import"].post.requestBody.content["application/json"].schema.required).toEqual(["bookings"]);
    expect(doc.components.schemas.UpdateUserRequest.properties.user).toEqual({ anyOf: [{ $ref: "#/components/schemas/UserUpdate" }, { type: "null" }] });
    expect(doc.components.schemas.User.properties.bio).toEqual({ type: ["string", "null"] });
    expect(doc.components.schemas.User.properties.full_name).toEqual({ type: "string" });
  });

  it("documents the query parameters rows read, with the rows' descriptions and types", () => {
    const list = doc.paths["/events/{id}/bookings"].get.parameters;
    expect(list.map((p: Json) => `${p.in}:${p.name}`)).toEqual(["path:id", "query:category", "query:date_from", "query:date_to", "query:no_show", "query:page[number]", "query:page[limit]"]);
    expect(list.find((p: Json) => p.name === "page[limit]")).toMatchObject({ required: false, schema: { type: "integer", maximum: 500 } });
    const slots = doc.paths["/public/users/{user_url}/events/{event_url}/slots"].get;
    expect(slots.parameters.map((p: Json) => p.name)).toEqual(["user_url", "event_url", "date_from", "date_to", "timezone", "duration"]);
    expect(slots.security).toEqual([]);
  });

  it("lists the error answers with the envelope", () => {
    const get = doc.paths["/user"].get.responses;
    expect(Object.keys(get).sort()).toEqual(["200", "401", "422", "500", "503"]);
    const post = doc.paths["/admin/accounts"].post.responses;
    expect(Object.keys(post).sort()).toEqual(["201", "400", "401", "403", "409", "413", "422", "500", "503"]);
    expect(doc.components.responses.NotFound.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ErrorEnvelope" });
  });
});

describe("real answers match the document", () => {
  it("GET /user, /user/settings and /user/availability, and a 401", async () => {
    const { key } = await newAccount();
    for (const path of ["/user", "/user/settings", "/user/availability"]) {
      const res = await rest("GET", path, { key });
      expect(res.status).toBe(200);
      const validate = answerValidator(path, "get", 200);
      expect(validate(res.body), `${path}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    const denied = await rest("GET", "/user", { key: "nope" });
    const validate = answerValidator("/user", "get", 401);
    expect(validate(denied.body), JSON.stringify(validate.errors)).toBe(true);
    // The validator is not vacuous: the success envelope is refused for the error answer.
    expect(answerValidator("/user", "get", 200)(denied.body)).toBe(false);
  });

  it("events: create, list, get", async () => {
    const { key } = await newAccount();
    const created = await rest("POST", "/events", { key, body: { event: { name: "Open Api Event", url: "open-api-event" } } });
    expect(created.status).toBe(201);
    const checks: [string, string, string, number, Json][] = [
      ["/events", "post", "/events", 201, created.body],
      ["/events", "get", "/events", 200, (await rest("GET", "/events", { key })).body],
      ["/events/{id}", "get", `/events/${created.body.data.id}`, 200, (await rest("GET", `/events/${created.body.data.id}`, { key })).body],
      ["/events/{id}", "get", "/events/x", 404, (await rest("GET", "/events/000000000000000000000000", { key })).body],
    ];
    for (const [path, verb, called, status, body] of checks) {
      const validate = answerValidator(path, verb, status);
      expect(validate(body), `${verb} ${called}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it("POST /admin/accounts", async () => {
    const res = await rest("POST", "/admin/accounts", { admin: true, body: { account: { email: `oa-${Date.now()}@example.com`, full_name: "Open Api" } } });
    expect(res.status).toBe(201);
    const validate = answerValidator("/admin/accounts", "post", 201);
    expect(validate(res.body), JSON.stringify(validate.errors)).toBe(true);
  });
});

describe("what a row reads is found from the row itself", () => {
  const rows: RestRoute[] = [
    {
      kind: "rpc", method: "GET", path: "/events/:id/bookings", service: BookingService, rpc: "listBookings", body: "none",
      request: ({ params, query }) => ({ event_id: params.id, category: query.category as string, page: { number: query["page[number]"] as string } }),
      query: [{ name: "category", description: "which bookings" }],
      data: (r) => ({ page: r.page, bookings: r.records }), message: "bookings found", summary: "List bookings",
    },
    {
      kind: "rpc", method: "PATCH", path: "/bookings/:id", service: BookingService, rpc: "updateBooking",
      request: ({ params, body }) => ({ id: params.id, booking: body.booking }), message: "booking updated", summary: "Update a booking",
    },
    { kind: "rpc", method: "PUT", path: "/user", service: UserService, rpc: "updateUser", request: ({ body }) => ({ ...body }), message: "m", summary: "s" },
  ];
  const synthetic: Json = buildOpenApi(rows);

  it("query parameters, typed from the request field they fill, with the row's description", () => {
    const op = synthetic.paths["/events/{id}/bookings"].get;
    expect(op.parameters).toEqual([
      { name: "id", in: "path", required: true, schema: { type: "string" } },
      { name: "category", in: "query", required: false, schema: { type: "string", enum: ["upcoming", "recent", "past", "canceled", "archived", "pending"] }, description: "which bookings" },
      { name: "page[number]", in: "query", required: false, schema: { type: "integer", format: "int32" } },
    ]);
    expect(op.requestBody).toBeUndefined();
    expect(op.responses["200"].content["application/json"].schema.properties.data).toEqual({
      type: "object",
      properties: { page: { $ref: "#/components/schemas/Pagination" }, bookings: { type: "array", items: { $ref: "#/components/schemas/BookingRecord" } } },
    });
  });

  it("body fields picked by name, and a body passed whole", () => {
    const patch = synthetic.paths["/bookings/{id}"].patch;
    expect(patch.requestBody.content["application/json"].schema).toEqual({ type: "object", properties: { booking: { $ref: "#/components/schemas/BookingUpdate" } }, required: ["booking"] });
    expect(patch.responses["200"].content["application/json"].schema.properties.data).toEqual({ $ref: "#/components/schemas/UpdateBookingResponse" });
    const put = synthetic.paths["/user"].put;
    expect(put.requestBody.content["application/json"].schema).toEqual({ allOf: [{ $ref: "#/components/schemas/UpdateUserRequest" }], required: ["user"] });
  });
});

/** Follows $ref, allOf, anyOf and array items down to the schema of `path` (names below the body; "[]" for list entries). */
function schemaAt(schema: Json, path: string[]): Json[] {
  if (schema === undefined) return [];
  if (schema.$ref) return schemaAt(resolve(schema.$ref), path);
  const here = [schema, ...(schema.allOf ?? []).flatMap((s: Json) => schemaAt(s, [])), ...(schema.anyOf ?? []).flatMap((s: Json) => schemaAt(s, []))];
  if (path.length === 0) return here;
  const [head, ...rest] = path;
  return here.flatMap((s) => (head === "[]" ? schemaAt(s.items, rest) : schemaAt(s.properties?.[head], rest)));
}

/** The allowed values the document gives for a field (null, the value of an unset field, left out). */
function enumAt(schema: Json, path: string[]): unknown[] | undefined {
  const found = schemaAt(schema, path).find((s) => Array.isArray(s.enum));
  return found?.enum.filter((v: unknown) => v !== null);
}

const bodySchema = (path: string, verb: string): Json => doc.paths[path][verb].requestBody.content["application/json"].schema;

describe("what integrators' tools check", () => {
  it("has servers, contact, and a defined tag on every operation", () => {
    expect(doc.servers).toEqual([{ url: "/api/v1", description: expect.any(String) }]);
    expect(doc.info.contact).toEqual({ name: expect.any(String) });
    const defined = doc.tags.map((t: Json) => t.name);
    expect(new Set(defined).size).toBe(defined.length);
    for (const t of doc.tags) expect(t.description, t.name).toEqual(expect.any(String));
    const used = new Set<string>();
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [verb, op] of Object.entries<Json>(item)) {
        expect(op.tags, `${verb} ${path}`).toHaveLength(1);
        expect(defined, `${verb} ${path}`).toContain(op.tags[0]);
        used.add(op.tags[0]);
      }
    }
    expect([...used].sort()).toEqual([...defined].sort());
  });

  it("passes Spectral's spectral:oas ruleset: no error, and no warning but the session-only paths' (explained here)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "spectral-"));
    try {
      writeFileSync(join(dir, "openapi.json"), JSON.stringify(doc));
      writeFileSync(join(dir, ".spectral.yaml"), 'extends: ["spectral:oas"]\n');
      // Not spawnSync: a test process blocked for longer than the server's 5 s keep-alive found its next request's
      // pooled connection closed under it ("other side closed") on a loaded machine.
      const run = await promisify(execFile)(join(process.cwd(), "node_modules/.bin/spectral"), ["lint", "-r", join(dir, ".spectral.yaml"), "-f", "json", "-q", join(dir, "openapi.json")], {
        encoding: "utf8",
        timeout: 120_000,
        maxBuffer: 64 * 1024 * 1024,
      }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? "" }));
      const results = JSON.parse(run.stdout || "[]") as { code: string; severity: number; path: string[]; message: string }[];
      const shown = results.map((r) => `${["error", "warning", "info", "hint"][r.severity]} ${r.code} ${r.path.join(".")}`);
      // Severity 0 is an error, 1 a warning.
      expect(shown.filter((r) => r.startsWith("error"))).toEqual([]);
      // The one warning left: `operation-success-response` on the session-only paths (two factor, password,
      // account deletion, hellobar). They never succeed over this API, by design (scheduling-api.md): an API
      // key is answered 403, so the document lists their 401 and 403 and no 2xx it could not keep.
      const sessionOnly = new Set(restRoutes.filter((r) => r.kind === "session_only").map((r) => openApiPath(r.path)));
      const other = results.filter((r) => r.severity <= 1 && !(r.code === "operation-success-response" && sessionOnly.has(r.path[1])));
      expect(other.map((r) => `${r.code} ${r.path.join(".")}: ${r.message}`)).toEqual([]);
      expect(results.filter((r) => r.severity <= 1).length).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("names only real fields in its tables of allowed values and formats", () => {
    const messages = new Map(allFiles.flatMap((f) => nestedMessages(f.messages)).map((m) => [m.typeName, m]));
    for (const [table, entries] of [["ALLOWED_VALUES", ALLOWED_VALUES], ["STRING_FORMATS", STRING_FORMATS], ["JSON_VALUES", JSON_VALUES]] as const) {
      for (const [typeName, fields] of Object.entries(entries)) {
        const m = messages.get(typeName);
        expect(m, `${table}: ${typeName}`).toBeDefined();
        for (const field of Object.keys(fields)) expect(m!.fields.map((f) => f.name), `${table}: ${typeName}.${field}`).toContain(field);
      }
    }
  });
});

describe("allowed values: the document's enum is what a 422 lists", () => {
  let key: string;
  let host: Host;
  let event: Json;
  beforeAll(async () => {
    host = await newHost({ timezone: "UTC" });
    key = host.key;
    event = await newEvent(host);
  });

  const BAD = "zz-not-allowed";
  const cases: { path: string; verb: string; call: string; field: string[]; body: (bad: unknown) => Json; admin?: boolean; key?: boolean }[] = [
    ...["slot_duration", "padding_duration", "color", "buffer_before"].map((f) => ({ path: "/events", verb: "post", call: "/events", field: ["event", f], body: (bad: unknown) => ({ event: { name: "x", url: `enum-${f}`, [f]: bad } }) })),
    { path: "/events", verb: "post", call: "/events", field: ["event", "location", "name"], body: (bad) => ({ event: { name: "x", url: "enum-loc", location: { name: bad } } }) },
    { path: "/events", verb: "post", call: "/events", field: ["event", "location", "selected_option"], body: (bad) => ({ event: { name: "x", url: "enum-opt", location: { name: "phone_call", selected_option: bad } } }) },
    ...["timezone", "time_format", "date_format", "locale", "currency", "events_layout"].map((f) => ({ path: "/user", verb: "patch", call: "/user", field: ["user", f], body: (bad: unknown) => ({ user: { [f]: bad } }) })),
    { path: "/user", verb: "patch", call: "/user", field: ["user", "start_day_of_week"], body: () => ({ user: { start_day_of_week: 9 } }) },
    ...["timezone", "time_format", "date_format", "locale", "currency", "events_layout"].map((f) => ({
      path: "/admin/accounts", verb: "post", call: "/admin/accounts", admin: true, field: ["account", f], body: (bad: unknown) => ({ account: { email: `enum-${f}-${Date.now()}@example.com`, full_name: "E", [f]: bad } }),
    })),
    { path: "/admin/accounts", verb: "post", call: "/admin/accounts", admin: true, field: ["account", "start_day_of_week"], body: () => ({ account: { email: `enum-day-${Date.now()}@example.com`, full_name: "E", start_day_of_week: 9 } }) },
    ...["question_type", "state"].map((f) => ({ path: "/questions", verb: "post", call: "/questions", field: ["question", f], body: (bad: unknown) => ({ question: { title: "t", question_type: "one_line", [f]: bad } }) })),
    { path: "/webhooks", verb: "post", call: "/webhooks", field: ["webhook", "events", "[]"], body: (bad) => ({ webhook: { url: "https://example.com/hook", events: [bad] } }) },
    { path: "/admin/bookings/import", verb: "post", call: "/admin/bookings/import", admin: true, field: ["bookings", "[]", "status"], body: (bad) => ({ bookings: [{ event_id: event.id, start_time: "2026-01-05T10:00:00Z", attendee_name: "A", attendee_email: "a@example.com", status: bad }] }) },
  ];

  for (const c of cases) {
    it(`${c.verb.toUpperCase()} ${c.path}: ${c.field.join(".")}`, async () => {
      const documented = enumAt(bodySchema(c.path, c.verb), c.field);
      expect(documented?.length).toBeGreaterThan(1);
      const res = await rest(c.verb.toUpperCase(), c.call, { key, admin: c.admin, body: c.body(BAD) });
      expect({ status: res.status, allowed: res.body.data.allowed }).toEqual({ status: 422, allowed: documented });
    });
  }

  it("a booking's and the slots' zone (IANA and service names)", async () => {
    const bookings = "/public/users/{user_url}/events/{event_url}/bookings";
    const documented = enumAt(bodySchema(bookings, "post"), ["booking", "timezone"]);
    const booked = await rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, {
      body: { booking: { start_time: "2030-01-07T10:00:00Z", attendee_name: "A", attendee_email: "a@example.com", timezone: "Berlin/Mitte" } },
    });
    expect({ status: booked.status, allowed: booked.body.data.allowed }).toEqual({ status: 422, allowed: documented });
    expect(documented).toContain("Europe/Berlin");
    expect(documented).toContain("Berlin");
    const param = doc.paths["/public/users/{user_url}/events/{event_url}/slots"].get.parameters.find((p: Json) => p.name === "timezone");
    const slots = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots?timezone=Berlin/Mitte`);
    expect({ status: slots.status, allowed: slots.body.data.allowed }).toEqual({ status: 422, allowed: enumAt(param.schema, []) });
  });
});

describe("required: the names a body's object must carry are the ones the service asks for", () => {
  let records: RowRecords;
  beforeAll(async () => {
    records = await rowRecords();
  });

  for (const row of BODY_ROWS) {
    it(`${row.method} ${row.path}`, async () => {
      const { name, list } = bodyObjectOf(row);
      const documented: string[] = schemaAt(bodySchema(openApiPath(row.path), row.method.toLowerCase()), list ? [name, "[]"] : [name]).flatMap((s) => s.required ?? []);
      const res = await rest(row.method, filledPath(row, records), { headers: rowAuth(records), body: { [name]: list ? [{}] : {} } });
      if (list) {
        // An import entry is checked as a whole: the first missing name is a 422 naming the entry.
        expect(documented.length).toBeGreaterThan(0);
        expect({ status: res.status, message: res.body.message }).toEqual({ status: 422, message: `${name}[0].${documented[0]} can't be blank` });
      } else if (documented.length > 0) {
        expect({ status: res.status, message: res.body.message, missing: res.body.data[name] }).toEqual({ status: 400, message: "missing params", missing: documented });
      } else {
        expect({ status: res.status, message: res.body.message }).not.toMatchObject({ status: 400, message: "missing params" });
      }
    });
  }
});

describe("formats: real answers hold what the document says", () => {
  it("the whole booking, the list, attendees, the booker's view, slots and the public event", async () => {
    const host = await newHost({ timezone: "UTC" });
    await rest("PUT", "/integrations/conference", { key: host.key, body: { integration: { provider: "jitsi" } } });
    const event = await newEvent(host, { location: { name: "conference" }, enable_guest_emails: true, guest_emails_limit: 1 });
    const b = await book(host, event, { start_time: utcIso(dayFromToday(2), "10:00"), guest_emails: ["g@example.com"], timezone: "Europe/Paris" });
    await rest("POST", `/bookings/${b.id}/cancel`, { key: host.key, body: { booking: { reason: "x" } } });
    const page = `/public/users/${host.user.url}/events/${event.url}`;
    const checks: [string, string][] = [
      ["/bookings/{id}", `/bookings/${b.id}`],
      ["/events/{id}/bookings", `/events/${event.id}/bookings?category=canceled`],
      ["/events/{id}/attendees", `/events/${event.id}/attendees`],
      ["/public/bookings/{private_key}", `/public/bookings/${b.private_key}`],
      ["/public/users/{user_url}/events/{event_url}/slots", `${page}/slots`],
      ["/public/users/{user_url}/events/{event_url}", page],
      ["/user/settings", "/user/settings"],
      ["/integrations", "/integrations"],
    ];
    for (const [path, called] of checks) {
      const res = await rest("GET", called, { key: host.key });
      expect(res.status, called).toBe(200);
      const validate = answerValidator(path, "get", 200);
      expect(validate(res.body), `${called}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    // Not vacuous: a display date where the document says date-time is refused.
    const whole = (await rest("GET", `/bookings/${b.id}`, { key: host.key })).body;
    expect(answerValidator("/bookings/{id}", "get", 200)({ ...whole, data: { ...whole.data, canceled_at: "Tue, 5 Jan" } })).toBe(false);
  });
});
