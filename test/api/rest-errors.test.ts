// REST error answers: 401s, the session-only 403s, 404 for unknown paths and methods, body errors; always the 4-field envelope.
import { beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { baseUrl, grpcUnary, newAccount, rest, rpcError, type Json, type RestAnswer } from "../helpers/api.js";

const STATUS_NAMES: Record<number, string> = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "unprocessable_entity",
};

/** The answer is exactly the envelope: these four fields, `status` the name of the HTTP status. */
function expectError(res: RestAnswer<Json>, status: number, message: string, data: Json = {}): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(Object.keys(res.body).sort()).toEqual(["data", "message", "status", "success"]);
  expect(res.body).toEqual({ success: false, message, data, status: STATUS_NAMES[status] });
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
}

/** A raw request whose body is sent exactly as given. */
async function raw(method: string, path: string, body: string | Buffer | undefined, headers: Record<string, string>): Promise<RestAnswer<Json>> {
  const res = await fetch(`${baseUrl()}${path}`, { method, headers, body: body === undefined ? undefined : new Uint8Array(Buffer.from(body)) });
  const text = await res.text();
  let parsed: Json;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`non-JSON answer ${res.status} from ${method} ${path}: ${text.slice(0, 200)}`);
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

let key: string;
beforeAll(async () => {
  key = (await newAccount()).key;
});

const KEYED_ENDPOINTS: Array<[string, string]> = [
  ["GET", "/user"],
  ["GET", "/user/settings"],
  ["PATCH", "/user"],
  ["POST", "/users/validate_url_availability"],
  ["PUT", "/users/profile_picture"],
  ["DELETE", "/users/remove_profile_picture"],
  ["PUT", "/users/regenerate_api_key"],
];

describe("401", () => {
  for (const [method, path] of KEYED_ENDPOINTS) {
    it(`${method} ${path} without a key: api_key is missing; with a wrong one: Invalid api_key`, async () => {
      expectError(await rest(method, path), 401, "api_key is missing");
      expectError(await rest(method, path, { key: "" }), 401, "api_key is missing");
      expectError(await rest(method, path, { key: "k".repeat(73) }), 401, "Invalid api_key");
    });
  }

  it("the key is checked before the body", async () => {
    expectError(await rest("PATCH", "/user", { body: { user: { locale: "xx" } } }), 401, "api_key is missing");
  });

  it("a key sent as Authorization: Bearer: the spec's message, and a hint where the key goes (X-API-KEY), over REST and gRPC", async () => {
    const hint = "send the key in the X-API-KEY header (gRPC metadata x-api-key), not in Authorization";
    expectError(await rest("GET", "/user", { headers: { Authorization: `Bearer ${key}` } }), 401, "api_key is missing", { hint });
    const err = await rpcError(() => grpcUnary(UserService, "getUser", {}, undefined, { authorization: `Bearer ${key}` }));
    expect([err.code, err.rawMessage]).toEqual([Code.Unauthenticated, "api_key is missing"]);
    expect(err.findDetails(ErrorInfoSchema)[0]?.metadata).toMatchObject({ hint });
    // Without anything in Authorization the message stays the spec's, word for word.
    expect((await rpcError(() => grpcUnary(UserService, "getUser", {}))).rawMessage).toBe("api_key is missing");
  });
});

describe("403 on session-only endpoints", () => {
  const TWO_FACTOR = "Sign in to the app to manage two factor authentication.";
  const PASSWORD = "Sign in to the app to change your password or delete your account.";
  const HELLOBAR = "A signed in session is required";
  const cases: Array<[string, string, string]> = [
    ...["GET", "POST", "PUT", "PATCH", "DELETE"].map((m): [string, string, string] => [m, "/two_factor", TWO_FACTOR]),
    ["GET", "/two_factor/backup_codes", TWO_FACTOR],
    ["POST", "/two_factor/backup_codes", TWO_FACTOR],
    ["POST", "/two_factor/enable", TWO_FACTOR],
    ["PUT", "/users/change_password", PASSWORD],
    ["PUT", "/user/destroy_me", PASSWORD],
    ...["GET", "POST", "PUT", "PATCH", "DELETE"].map((m): [string, string, string] => [m, "/hellobar", HELLOBAR]),
    ["GET", "/hellobar/x", HELLOBAR],
    ["POST", "/hellobar/x", HELLOBAR],
    ["PUT", "/hellobar/dismiss", HELLOBAR],
  ];
  for (const [method, path, message] of cases) {
    it(`${method} ${path} with a valid key`, async () => {
      expectError(await rest(method, path, { key, body: method === "GET" ? undefined : { user: {} } }), 403, message);
    });
  }

  it("without a valid key they answer 401 first", async () => {
    expectError(await rest("GET", "/two_factor"), 401, "api_key is missing");
    expectError(await rest("PUT", "/user/destroy_me", { key: "nope" }), 401, "Invalid api_key");
  });

  it("the account is untouched by PUT /user/destroy_me", async () => {
    await rest("PUT", "/user/destroy_me", { key });
    expect((await rest("GET", "/user", { key })).status).toBe(200);
  });
});

describe("404 endpoint does not exists", () => {
  const unknown: Array<[string, string]> = [
    ["GET", "/nope"],
    ["GET", "/users"],
    ["GET", "/user/settings/extra"],
    ["POST", "/users/unknown_action"],
  ];
  for (const [method, path] of unknown) {
    it(`${method} ${path}`, async () => {
      expectError(await rest(method, path, { key }), 404, "endpoint does not exists");
      expectError(await rest(method, path), 404, "endpoint does not exists");
    });
  }

  // Known paths, wrong methods: still the spec's 404, naming the methods the path takes (Allow and data).
  const wrongMethods: Array<[string, string, string[]]> = [
    ["DELETE", "/user", ["GET", "HEAD", "PATCH"]],
    ["POST", "/user", ["GET", "HEAD", "PATCH"]],
    ["PUT", "/user", ["GET", "HEAD", "PATCH"]],
    ["PATCH", "/user/settings", ["GET", "HEAD"]],
    ["GET", "/users/regenerate_api_key", ["PUT"]],
    ["POST", "/users/regenerate_api_key", ["PUT"]],
    ["GET", "/users/validate_url_availability", ["POST"]],
    ["GET", "/users/profile_picture", ["PUT"]],
    ["POST", "/users/profile_picture", ["PUT"]],
    ["GET", "/users/remove_profile_picture", ["DELETE"]],
    ["GET", "/users/change_password", ["PUT"]],
    ["POST", "/users/change_password", ["PUT"]],
    ["GET", "/user/destroy_me", ["PUT"]],
    ["DELETE", "/user/destroy_me", ["PUT"]],
    ["DELETE", "/events", ["GET", "HEAD", "POST"]],
    ["PUT", "/events/0123456789abcdef01234567", ["GET", "HEAD", "PATCH", "DELETE"]],
  ];
  for (const [method, path, allowed] of wrongMethods) {
    it(`${method} ${path}: 404 with Allow: ${allowed.join(", ")}`, async () => {
      for (const res of [await rest(method, path, { key }), await rest(method, path)]) {
        expectError(res, 404, "endpoint does not exists", { allowed_methods: allowed });
        expect(res.headers.get("allow")).toBe(allowed.join(", "));
      }
    });
  }

  it("outside /api/v1 too", async () => {
    expectError(await raw("GET", "/api/v2/user", undefined, { "X-API-KEY": key }), 404, "endpoint does not exists");
    expectError(await raw("GET", "/api/user", undefined, {}), 404, "endpoint does not exists");
  });
});

describe("paths, as Express matched them", () => {
  it("are case-insensitive and take one trailing slash", async () => {
    for (const path of ["/API/V1/USER", "/api/v1/User", "/api/v1/user/", "/api/v1/user?x=1", "/api/v1/user/?x=1"]) {
      const res = await raw("GET", path, undefined, { "X-API-KEY": key });
      expect(res.status, path).toBe(200);
      expect(res.body.message, path).toBe("user details");
    }
    for (const path of ["/api/v1//user", "/api/v1/user//", "/api/v1/user/x", "/api/v1/us%65r"]) {
      expectError(await raw("GET", path, undefined, { "X-API-KEY": key }), 404, "endpoint does not exists");
    }
  });

  it("a GET row answers HEAD, with the GET's status and no body", async () => {
    const res = await fetch(`${baseUrl()}/api/v1/user`, { method: "HEAD", headers: { "X-API-KEY": key } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
    expect((await fetch(`${baseUrl()}/api/v1/user`, { method: "HEAD" })).status).toBe(401);
  });

  it("path parameters are percent-decoded; one that cannot be is 400", async () => {
    expectError(await raw("GET", "/api/v1/events/%ZZ", undefined, { "X-API-KEY": key }), 400, "malformed percent-encoding in the path");
    expectError(await raw("GET", "/api/v1/events/%E0%A4%A", undefined, { "X-API-KEY": key }), 400, "malformed percent-encoding in the path");
    // Decoded "a/b" is an id like any other: not found, not another path.
    expectError(await raw("GET", "/api/v1/events/a%2Fb", undefined, { "X-API-KEY": key }), 404, "event not found");
  });

  it("a number JSON cannot hold (1e400 parses to Infinity) is refused by the field's rule, never a 500", async () => {
    const headers = { "Content-Type": "application/json", "X-API-KEY": key };
    const cases: Array<[string, string]> = [
      ['"slot_interval_minutes":1e400', "slot_interval_minutes must be a whole number from 5 to 720 and a multiple of 5, or null"],
      ['"durations":[-1e400]', "durations must be 1 to 6 distinct whole numbers of minutes, each from 5 to 720 and a multiple of 5"],
      ['"seats_per_slot":1e400', "seats_per_slot must be a whole number from 2 to 1000, or null"],
      ['"daily_limit":1e400', "daily_limit must be a whole number from 1 to 1000, or null"],
    ];
    for (const [field, message] of cases) expectError(await raw("POST", "/api/v1/events", `{"event":{"name":"Huge","url":"huge-number",${field}}}`, headers), 422, message);
    const connect = await fetch(`${baseUrl()}/scheduling.v1.EventService/CreateEvent`, { method: "POST", headers, body: '{"event":{"name":"Huge","url":"huge-number","slotIntervalMinutes":1e400}}' });
    expect(connect.status).toBe(400);
    expect(((await connect.json()) as { code: string }).code).toBe("invalid_argument");
  });

  it("outside /api/v1 too: a page path that cannot be decoded is the not-found page, another path the envelope; never Express's stack trace", async () => {
    for (const path of ["/%ZZ", "/someone/%FF", "/booking/%ZZ"]) {
      const res = await fetch(`${baseUrl()}${path}`);
      const html = await res.text();
      expect({ path, status: res.status, type: res.headers.get("content-type") }).toEqual({ path, status: 404, type: "text/html; charset=utf-8" });
      expect(html).toContain('<meta name="description"');
      expect(html).not.toContain("URIError");
    }
    for (const path of ["/pictures/%ZZ", "/oauth/%ZZ/callback"]) expectError(await raw("GET", path, undefined, {}), 400, "malformed percent-encoding in the path");
  });

  it("a body is read on every row that matched, also one that needs none; a path of no row is 404 whatever the body", async () => {
    const headers = { "Content-Type": "application/json", "X-API-KEY": key };
    expectError(await raw("DELETE", "/api/v1/users/remove_profile_picture", "{not json", headers), 400, "malformed JSON in request body");
    expectError(await raw("POST", "/api/v1/nope", "{not json", headers), 404, "endpoint does not exists");
  });
});

describe("request bodies", () => {
  const json = { "Content-Type": "application/json" };

  it.each(['{"user": {', "{user: 1}", '{"user": {"locale": "fr"}} trailing', "'single'"])("malformed JSON %j is 400", async (text) => {
    expectError(await raw("PATCH", "/api/v1/user", text, { ...json, "X-API-KEY": key }), 400, "malformed JSON in request body");
  });

  it("a write whose body is not declared JSON is 415, whatever it holds (a browser sends those cross-origin unasked)", async () => {
    for (const type of ["application/x-www-form-urlencoded", "text/plain", "text/plain;charset=UTF-8", "multipart/form-data; boundary=x", "application/jsonx"]) {
      const res = await raw("PATCH", "/api/v1/user", '{"user": {"locale": "it"}}', { "Content-Type": type, "X-API-KEY": key });
      expectError(res, 415, "Content-Type must be application/json");
    }
    const none = await raw("PATCH", "/api/v1/user", '{"user": {"locale": "it"}}', { "X-API-KEY": key });
    expectError(none, 415, "Content-Type must be application/json");
    const ok = await raw("PATCH", "/api/v1/user", '{"user": {"locale": "it"}}', { "Content-Type": "application/json; charset=utf-8", "X-API-KEY": key });
    expect(ok.status).toBe(200);
    expect(ok.body.data.locale).toBe("it");
  });

  it("a body over 1 MB is 413", async () => {
    const big = JSON.stringify({ user: { bio: "x".repeat(1024 * 1024 + 10) } });
    expectError(await raw("PATCH", "/api/v1/user", big, { ...json, "X-API-KEY": key }), 413, "request body is larger than 1MB");
    // Just under the limit is read (and then refused for the bio's length, naming the field).
    const under = JSON.stringify({ user: { bio: "x".repeat(1000 * 1000) } });
    expectError(await raw("PATCH", "/api/v1/user", under, { ...json, "X-API-KEY": key }), 422, "bio is too long (maximum is 500 characters)");
  });

  it.each(["[1, 2]", '"text"', "42", "true", "[]"])("a JSON body that is not an object (%s) is 400", async (text) => {
    expectError(await raw("PATCH", "/api/v1/user", text, { ...json, "X-API-KEY": key }), 400, "request body must be a JSON object");
    expectError(await raw("POST", "/api/v1/users/validate_url_availability", text, { ...json, "X-API-KEY": key }), 400, "request body must be a JSON object");
  });

  const LOCALES = ["en", "fr", "de", "es", "nl", "ru", "zh", "ja", "ar", "hi", "it"];
  it.each([
    [{ full_name: 123 }, "full_name is not valid", {}],
    // A field of an enumerated list lists its values whatever the type sent (extensions.md "Allowed values").
    [{ start_day_of_week: "monday" }, "start_day_of_week is not valid", { field: "start_day_of_week", allowed: [0, 1, 2, 3, 4, 5, 6] }],
    [{ start_day_of_week: 1.5 }, "start_day_of_week is not valid", { field: "start_day_of_week", allowed: [0, 1, 2, 3, 4, 5, 6] }],
    [{ show_message_button_on_events: "yes" }, "show_message_button_on_events is not valid", {}],
    [{ locale: ["en"] }, "locale is not valid", { field: "locale", allowed: LOCALES }],
    [{ locale: 7 }, "locale is not valid", { field: "locale", allowed: LOCALES }],
    [{ time_format: 24 }, "time_format is not valid", { field: "time_format", allowed: ["12_hours", "24_hours"] }],
    [{ bio: { text: "hi" } }, "bio is not valid", {}],
  ])("wrong JSON type %j is 422 naming the field", async (user, message, data) => {
    expectError(await rest("PATCH", "/user", { key, body: { user } }), 422, message, data);
  });

  it("an event's slot_duration sent as a number (30) lists the durations it takes", async () => {
    const res = await rest("POST", "/events", { key, body: { event: { name: "Typed", url: "typed-duration", slot_duration: 30 } } });
    expectError(res, 422, "slot_duration is not valid", { field: "slot_duration", allowed: expect.arrayContaining(["15_minutes", "30_minutes", "1_hour"]) });
    const color = await rest("POST", "/events", { key, body: { event: { name: "Typed", url: "typed-color", color: { name: "sage" } } } });
    expectError(color, 422, "color is not valid", { field: "color", allowed: expect.arrayContaining(["sage", "tomato"]) });
  });

  it.each([[{ user: "fr" }], [{ user: [1] }], [{ user: 5 }]])("a `user` that is not an object (%j) is 422 naming it", async (body) => {
    expectError(await rest("PATCH", "/user", { key, body }), 422, "user is not valid");
  });

  it("unknown fields are ignored and change nothing", async () => {
    const before = (await rest("GET", "/user/settings", { key })).body.data;
    const res = await rest("PATCH", "/user", { key, body: { user: { email: "evil@example.com", api_key: "x", id: "y" }, other: 1 } });
    expect(res.status).toBe(200);
    expect((await rest("GET", "/user/settings", { key })).body.data).toEqual(before);
  });

  it("wrong JSON types on url availability are 422 too", async () => {
    expectError(await rest("POST", "/users/validate_url_availability", { key, body: { user: { url: 12 } } }), 422, "url is not valid");
  });

  it("an unsupported content encoding is 415", async () => {
    expectError(await raw("PATCH", "/api/v1/user", "{}", { ...json, "Content-Encoding": "br-nonsense", "X-API-KEY": key }), 415, "unsupported request body encoding");
  });
});

describe("successful answers are the envelope too", () => {
  it.each(KEYED_ENDPOINTS.filter(([m]) => m === "GET"))("%s %s", async (method, path) => {
    const res = await rest(method, path, { key });
    expect(Object.keys(res.body).sort()).toEqual(["data", "message", "status", "success"]);
    expect(res.body.success).toBe(true);
    expect(res.body.status).toBe(200);
  });
});
