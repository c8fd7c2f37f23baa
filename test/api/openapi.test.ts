// The OpenAPI document: valid OpenAPI 3.1, every row of the REST table in it, and real answers matching what it says.
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { beforeAll, describe, expect, it } from "vitest";
import { BookingService } from "../../gen/scheduling/v1/booking_pb.js";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { buildOpenApi, openApiPath, operationsOf, pathParams } from "../../src/platform/rest/openapi.js";
import { restRoutes } from "../../src/app/routes.js";
import type { RestRoute } from "../../src/platform/rest/table.js";
import { baseUrl, newAccount, rest, type Json } from "../helpers/api.js";

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
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
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
          expect(success.content["application/json"].schema.properties.message.const).toBe(route.message);
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
    const patch = doc.paths["/api/v1/events/{id}"].patch;
    expect(Object.keys(patch.requestBody.content["application/json"].schema.properties)).toEqual(["event"]);
    expect(doc.paths["/api/v1/events/{id}"].get.requestBody).toBeUndefined();
    const upload = doc.paths["/api/v1/users/profile_picture"].put.requestBody.content["multipart/form-data"].schema;
    expect(upload.properties["user[profile_picture]"]).toMatchObject({ type: "string", format: "binary" });
    // A body without its object is 400 missing params: the object is required.
    expect(doc.paths["/api/v1/user"].patch.requestBody).toMatchObject({ required: true });
    expect(doc.paths["/api/v1/user"].patch.requestBody.content["application/json"].schema).toEqual({ allOf: [{ $ref: "#/components/schemas/UpdateUserRequest" }], required: ["user"] });
    expect(doc.paths["/api/v1/admin/bookings/import"].post.requestBody.content["application/json"].schema.required).toEqual(["bookings"]);
    expect(doc.components.schemas.UpdateUserRequest.properties.user).toEqual({ anyOf: [{ $ref: "#/components/schemas/UserUpdate" }, { type: "null" }] });
    expect(doc.components.schemas.User.properties.bio).toEqual({ type: ["string", "null"] });
    expect(doc.components.schemas.User.properties.full_name).toEqual({ type: "string" });
  });

  it("documents the query parameters rows read, with the rows' descriptions and types", () => {
    const list = doc.paths["/api/v1/events/{id}/bookings"].get.parameters;
    expect(list.map((p: Json) => `${p.in}:${p.name}`)).toEqual(["path:id", "query:category", "query:date_from", "query:date_to", "query:page[number]", "query:page[limit]"]);
    expect(list.find((p: Json) => p.name === "page[limit]")).toMatchObject({ required: false, schema: { type: "integer", maximum: 500 } });
    const slots = doc.paths["/api/v1/public/users/{user_url}/events/{event_url}/slots"].get;
    expect(slots.parameters.map((p: Json) => p.name)).toEqual(["user_url", "event_url", "date_from", "date_to", "timezone"]);
    expect(slots.security).toEqual([]);
  });

  it("lists the error answers with the envelope", () => {
    const get = doc.paths["/api/v1/user"].get.responses;
    expect(Object.keys(get).sort()).toEqual(["200", "401", "422", "500", "503"]);
    const post = doc.paths["/api/v1/admin/accounts"].post.responses;
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
      const validate = answerValidator(`/api/v1${path}`, "get", 200);
      expect(validate(res.body), `${path}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    const denied = await rest("GET", "/user", { key: "nope" });
    const validate = answerValidator("/api/v1/user", "get", 401);
    expect(validate(denied.body), JSON.stringify(validate.errors)).toBe(true);
    // The validator is not vacuous: the success envelope is refused for the error answer.
    expect(answerValidator("/api/v1/user", "get", 200)(denied.body)).toBe(false);
  });

  it("events: create, list, get", async () => {
    const { key } = await newAccount();
    const created = await rest("POST", "/events", { key, body: { event: { name: "Open Api Event", url: "open-api-event" } } });
    expect(created.status).toBe(201);
    const checks: [string, string, string, number, Json][] = [
      ["/api/v1/events", "post", "/events", 201, created.body],
      ["/api/v1/events", "get", "/events", 200, (await rest("GET", "/events", { key })).body],
      ["/api/v1/events/{id}", "get", `/events/${created.body.data.id}`, 200, (await rest("GET", `/events/${created.body.data.id}`, { key })).body],
      ["/api/v1/events/{id}", "get", "/events/x", 404, (await rest("GET", "/events/000000000000000000000000", { key })).body],
    ];
    for (const [path, verb, called, status, body] of checks) {
      const validate = answerValidator(path, verb, status);
      expect(validate(body), `${verb} ${called}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it("POST /admin/accounts", async () => {
    const res = await rest("POST", "/admin/accounts", { admin: true, body: { account: { email: `oa-${Date.now()}@example.com`, full_name: "Open Api" } } });
    expect(res.status).toBe(201);
    const validate = answerValidator("/api/v1/admin/accounts", "post", 201);
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
    const op = synthetic.paths["/api/v1/events/{id}/bookings"].get;
    expect(op.parameters).toEqual([
      { name: "id", in: "path", required: true, schema: { type: "string" } },
      { name: "category", in: "query", required: false, schema: { type: "string" }, description: "which bookings" },
      { name: "page[number]", in: "query", required: false, schema: { type: "integer", format: "int32" } },
    ]);
    expect(op.requestBody).toBeUndefined();
    expect(op.responses["200"].content["application/json"].schema.properties.data).toEqual({
      type: "object",
      properties: { page: { $ref: "#/components/schemas/Pagination" }, bookings: { type: "array", items: { $ref: "#/components/schemas/BookingRecord" } } },
    });
  });

  it("body fields picked by name, and a body passed whole", () => {
    const patch = synthetic.paths["/api/v1/bookings/{id}"].patch;
    expect(patch.requestBody.content["application/json"].schema).toEqual({ type: "object", properties: { booking: { $ref: "#/components/schemas/BookingUpdate" } }, required: ["booking"] });
    expect(patch.responses["200"].content["application/json"].schema.properties.data).toEqual({ $ref: "#/components/schemas/UpdateBookingResponse" });
    const put = synthetic.paths["/api/v1/user"].put;
    expect(put.requestBody.content["application/json"].schema).toEqual({ allOf: [{ $ref: "#/components/schemas/UpdateUserRequest" }], required: ["user"] });
  });
});
