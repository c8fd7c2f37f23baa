// Every REST row with a JSON body, and its RPC over gRPC and Connect, answers 400 `missing params` naming the object when the body lacks it; driven by the route table.
import { fromJson, type DescMethodUnary, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { beforeAll, describe, expect, it } from "vitest";
import { methodOf, type RpcRoute } from "../../src/platform/rest/table.js";
import { baseUrl, CONNECT_KINDS, grpcCall, rest, type Json } from "../helpers/api.js";
import { book, dayFromToday, utcIso, type Host } from "../helpers/bookings.js";
import { BODY_ROWS, bodyObjectOf, filledPath, pathParams as filledParams, rowAuth, rowRecords, type RowRecords } from "../helpers/tableRows.js";

let records: RowRecords;
let host: Host;
let event: Json;

const pathParams = (row: RpcRoute) => filledParams(row, records);
const AUTH = (): Record<string, string> => rowAuth(records);

beforeAll(async () => {
  records = await rowRecords();
  ({ host, event } = records);
});

describe("the table", () => {
  it("has the rows docs/spec/extensions.md names, each with exactly one body object", () => {
    const rows = BODY_ROWS.map((r) => `${r.method} ${r.path} ${bodyObjectOf(r).name}`);
    expect(rows).toEqual(
      expect.arrayContaining([
        "PATCH /user user",
        "POST /events event",
        "POST /questions question",
        "POST /admin/accounts account",
        "POST /admin/bookings/import bookings",
        "POST /public/users/:user_url/events/:event_url/bookings booking",
      ]),
    );
  });
});

describe("REST: a body without its object is 400 missing params naming it", () => {
  for (const row of BODY_ROWS) {
    const object = bodyObjectOf(row).name;
    it(`${row.method} ${row.path} (${object})`, async () => {
      const path = filledPath(row, records);
      for (const body of [undefined, {}, "null", { [object]: null }, { unrelated: { x: 1 } }]) {
        // A JSON body that is `null` is sent as the text "null", declared JSON like every write body must be.
        const headers = body === undefined ? AUTH() : { ...AUTH(), "Content-Type": "application/json" };
        const res = await rest(row.method, path, { body, headers });
        const shown = { body: JSON.stringify(body ?? "(none)"), status: res.status, message: res.body.message, names: Object.keys(res.body.data ?? {}) };
        expect(shown).toEqual({ body: shown.body, status: 400, message: "missing params", names: [object] });
        expect(res.body).toMatchObject({ success: false, status: "bad_request" });
      }
    });
  }
});

function connectKind(kind: (typeof CONNECT_KINDS)[number]) {
  const auth: Interceptor = (next) => async (req) => {
    for (const [k, v] of Object.entries(AUTH())) req.header.set(k, v);
    return next(req);
  };
  return kind === "grpc-web"
    ? createGrpcWebTransport({ baseUrl: baseUrl(), httpVersion: "1.1", interceptors: [auth] })
    : createConnectTransport({ baseUrl: baseUrl(), httpVersion: kind === "connect-h2" ? "2" : "1.1", interceptors: [auth] });
}

describe("RPC: a request without its object is INVALID_ARGUMENT naming it", () => {
  for (const row of BODY_ROWS) {
    const object = bodyObjectOf(row).name;
    for (const protocol of ["grpc", ...CONNECT_KINDS] as const) {
      it(`${protocol} ${row.service.name}.${methodOf(row).name} (${object})`, async () => {
        const method: DescMethodUnary = methodOf(row);
        // The REST row's own mapping of the path, with no body: the same request a gRPC client sends without the object.
        const json = (row.request ? row.request({ params: pathParams(row), query: {}, body: {} }) : {}) as JsonObject;
        const request = fromJson(method.input, json);
        let error: ConnectError | undefined;
        try {
          if (protocol === "grpc") await grpcCall(method, request, AUTH());
          else await (createClient(row.service, connectKind(protocol)) as unknown as Record<string, (r: unknown) => Promise<unknown>>)[row.rpc](request);
        } catch (err) {
          error = ConnectError.from(err);
        }
        const message = error ? decodeURIComponent(error.rawMessage) : "(succeeded)";
        expect({ code: error ? Code[error.code] : "OK", missing: message.startsWith("missing params: ") }).toEqual({ code: "InvalidArgument", missing: true });
        expect(message.slice("missing params: ".length).split(", ").every((n) => n === object || n.startsWith(`${object}.`)), message).toBe(true);
      });
    }
  }
});

describe("the examples of docs/spec/extensions.md", () => {
  it("PATCH /user with {} or null is 400 and changes nothing; with an empty user object it is 200", async () => {
    const before = (await rest("GET", "/user/settings", { key: host.key })).body.data;
    for (const body of [{}, "null"]) {
      const res = await rest("PATCH", "/user", { key: host.key, body, headers: { "Content-Type": "application/json" } });
      expect({ status: res.status, message: res.body.message, data: res.body.data }).toEqual({ status: 400, message: "missing params", data: { user: [] } });
    }
    // Fields sent without their object are not read as a change either.
    const bare = await rest("PATCH", "/user", { key: host.key, body: { full_name: "Flat Name" } });
    expect(bare.status).toBe(400);
    expect((await rest("GET", "/user/settings", { key: host.key })).body.data).toEqual(before);
    expect((await rest("PATCH", "/user", { key: host.key, body: { user: {} } })).status).toBe(200);
  });

  it("an import without a bookings array is 400 naming bookings", async () => {
    const res = await rest("POST", "/admin/bookings/import", { admin: true, body: {} });
    expect({ status: res.status, message: res.body.message, data: res.body.data }).toEqual({ status: 400, message: "missing params", data: { bookings: [] } });
  });

  it("a create without its object lists the object's required fields", async () => {
    const event = await rest("POST", "/events", { key: host.key, body: {} });
    expect({ status: event.status, data: event.body.data }).toEqual({ status: 400, data: { event: ["name", "url"] } });
    const account = await rest("POST", "/admin/accounts", { admin: true, body: null });
    expect({ status: account.status, data: account.body.data }).toEqual({ status: 400, data: { account: ["email", "full_name"] } });
  });

  it("a cancel with an empty booking object goes on (the reason is optional)", async () => {
    const b = await book(host, event, { start_time: utcIso(dayFromToday(4), "10:00") });
    const res = await rest("POST", `/public/bookings/${b.private_key}/cancel`, { body: { booking: {} } });
    expect({ status: res.status, message: res.body.message }).toEqual({ status: 200, message: "booking canceled" });
  });
});
