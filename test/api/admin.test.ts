// Admin CreateAccount over REST, Connect and grpc-js: defaults, derived unique urls, validation, the admin token, and a server without one.
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdminService } from "../../gen/scheduling/v1/admin_pb.js";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { ADMIN_TOKEN, CONNECT_KINDS, connectClient, grpcUnary, rest, rpcError, type Json, type RestAnswer } from "../helpers/api.js";
import { grpcClientAt, unaryAt } from "../helpers/grpcAt.js";
import { startServer, type RunningServer } from "../helpers/server.js";

let n = 0;
/** An e-mail and a name no other test or run uses. */
function fresh(label = "Admin Made"): { email: string; full_name: string; tag: string } {
  n++;
  const tag = `${process.pid}${Date.now().toString(36)}${n}`;
  return { email: `admin-${tag}@example.com`, full_name: `${label} ${tag}`, tag };
}

const create = (account: unknown, opts: { admin?: boolean; headers?: Record<string, string> } = { admin: true }) =>
  rest("POST", "/admin/accounts", { ...opts, body: account === undefined ? {} : { account } });

function expectError(res: RestAnswer<Json>, status: number, statusName: string, message: string, data: Json = {}): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ success: false, message, data, status: statusName });
}

/** `token` null sends no token metadata at all. */
const grpcCreate = (account: Record<string, unknown>, token: string | null = ADMIN_TOKEN) =>
  grpcUnary(AdminService, "createAccount", { account }, undefined, token === null ? {} : { "x-admin-token": token });

describe("POST /admin/accounts", () => {
  it("creates an account: 201 account created, the user object with a working api_key", async () => {
    const f = fresh("Katherine Johnson");
    const res = await create({ email: f.email, full_name: f.full_name });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(res.body.message).toBe("account created");
    expect(res.body.status).toBe(201);
    const u = res.body.data;
    expect(u.api_key).toMatch(/^[A-Za-z0-9]{73}$/);
    expect(u).toMatchObject({ email: f.email, full_name: f.full_name, timezone: "UTC", date_timezone: "Etc/UTC", bio: null, url: `katherine-johnson-${f.tag}` });
    const me = await rest("GET", "/user", { key: u.api_key });
    expect(me.status).toBe(200);
    expect(me.body.data).toEqual(u);
  });

  it("stores the e-mail trimmed and lowercased, and refuses it again in any case", async () => {
    const f = fresh();
    const res = await create({ email: `  ${f.email.toUpperCase()} `, full_name: f.full_name });
    expect(res.status).toBe(201);
    expect(res.body.data.email).toBe(f.email);
    expectError(await create({ email: f.email, full_name: "Other" }), 422, "unprocessable_entity", "email has already been taken");
    expectError(await create({ email: f.email.toUpperCase(), full_name: "Other" }), 422, "unprocessable_entity", "email has already been taken");
  });

  it("takes a given url and timezone", async () => {
    const f = fresh();
    const url = `Chosen-${f.tag}`;
    const res = await create({ email: f.email, full_name: f.full_name, url, timezone: "Eastern Time (US & Canada)" });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ url, timezone: "Eastern Time (US & Canada)", date_timezone: "America/New_York" });
  });

  it("derives the url from the name and makes it unique for the same name twice", async () => {
    const name = `Same Name ${fresh().tag}`;
    const first = await create({ email: fresh().email, full_name: name });
    const second = await create({ email: fresh().email, full_name: name });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    const base = name.toLowerCase().replaceAll(" ", "-");
    expect(first.body.data.url).toBe(base);
    expect(second.body.data.url).toBe(`${base}-2`);
    // A derived url also steps around a url someone chose in another case.
    const chosen = await create({ email: fresh().email, full_name: "Chooser", url: `${base}-3`.toUpperCase() });
    expect(chosen.status).toBe(201);
    const fourth = await create({ email: fresh().email, full_name: name });
    expect(fourth.body.data.url).toBe(`${base}-4`);
  });

  it("gives distinct urls to the same name created at once", async () => {
    const name = `Race Name ${fresh().tag}`;
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => create({ email: fresh().email, full_name: name })));
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(201);
    expect(new Set(answers.map((a) => a.body.data.url)).size).toBe(5);
  });

  it("the same e-mail created at once: exactly one account", async () => {
    const f = fresh();
    const answers = await Promise.all([1, 2, 3, 4].map((i) => create({ email: i % 2 ? f.email : f.email.toUpperCase(), full_name: `Twin ${i}` })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 201)) expectError(a, 422, "unprocessable_entity", "email has already been taken");
  });

  it("derived urls always pass the url rules, even for names starting with http or without letters", async () => {
    for (const name of ["Http Master", "李小龍", "A"]) {
      const res = await create({ email: fresh().email, full_name: name });
      expect(res.status, name).toBe(201);
      const url: string = res.body.data.url;
      const check = await rest("PATCH", "/user", { key: res.body.data.api_key, body: { user: { url } } });
      expect(check.status, `${name} → ${url}: ${JSON.stringify(check.body)}`).toBe(200);
    }
  });

  it.each([
    [undefined, ["email", "full_name"]],
    [{}, ["email", "full_name"]],
    [{ full_name: "No Email" }, ["email"]],
    [{ email: "no-name@example.com" }, ["full_name"]],
    [{ email: "", full_name: "  " }, ["email", "full_name"]],
  ])("missing fields %j: 400 missing params", async (account, names) => {
    expectError(await create(account), 400, "bad_request", "missing params", { account: names });
  });

  it.each(["not-an-email", "a@b", "two@@example.com", "spa ce@example.com", `${"x".repeat(250)}@example.com`])("bad e-mail %j: 422", async (email) => {
    expectError(await create({ email, full_name: "Bad Mail" }), 422, "unprocessable_entity", "email is invalid");
  });

  it("taken url (in any case) and malformed urls: 422", async () => {
    const f = fresh();
    const url = `Taken-${f.tag}`;
    expect((await create({ email: f.email, full_name: f.full_name, url })).status).toBe(201);
    expectError(await create({ email: fresh().email, full_name: "X", url: url.toLowerCase() }), 422, "unprocessable_entity", "url has already been taken");
    expectError(await create({ email: fresh().email, full_name: "X", url: "https-me" }), 422, "unprocessable_entity", "url must not start with http, https or /");
    expectError(await create({ email: fresh().email, full_name: "X", url: "a.b" }), 422, "unprocessable_entity", "url must not contain ., ? or #");
    expectError(await create({ email: fresh().email, full_name: "X", url: "a" }), 422, "unprocessable_entity", "url is too short (minimum is 2 characters)");
  });

  it.each(["Mars/Olympus_Mons", "Nowhere", ""])("timezone %j: 422", async (timezone) => {
    const res = await create({ email: fresh().email, full_name: "Zone", timezone });
    // The names taken: the service's, and the IANA names one of them stands for.
    expectError(res, 422, "unprocessable_entity", "timezone is not included in the list", { field: "timezone", allowed: expect.arrayContaining(["UTC", "Berlin", "Tokyo", "Europe/Berlin"]) });
  });

  it("an IANA zone no service name stands for: 422 listing the service names", async () => {
    const res = await create({ email: fresh().email, full_name: "Zone", timezone: "America/Boise" });
    expectError(res, 422, "unprocessable_entity", "timezone America/Boise has no service time-zone name; use one of the listed names", {
      field: "timezone",
      allowed: expect.arrayContaining(["UTC", "Berlin", "Mountain Time (US & Canada)", "America/Denver"]),
    });
    expect(res.body.data.allowed).not.toContain("America/Boise");
  });

  it("a name over 80 characters: 422", async () => {
    expectError(await create({ email: fresh().email, full_name: "n".repeat(81) }), 422, "unprocessable_entity", "full_name is too long (maximum is 80 characters)");
  });

  it("a refused request creates nothing", async () => {
    const f = fresh();
    await create({ email: f.email, full_name: f.full_name, timezone: "Nowhere" });
    expect((await create({ email: f.email, full_name: f.full_name })).status).toBe(201);
  });

  it.each([
    ["no token", {}],
    ["a wrong token", { "X-ADMIN-TOKEN": "wrong" }],
    ["an empty token", { "X-ADMIN-TOKEN": "" }],
    ["the token with a suffix", { "X-ADMIN-TOKEN": `${ADMIN_TOKEN}x` }],
  ])("%s: 401", async (_label, headers) => {
    const f = fresh();
    expectError(await create({ email: f.email, full_name: f.full_name }, { headers }), 401, "unauthorized", "admin token is missing or invalid");
  });

  it("an API key is not an admin token", async () => {
    const made = await create(fresh());
    const res = await rest("POST", "/admin/accounts", { key: made.body.data.api_key, body: { account: fresh() } });
    expectError(res, 401, "unauthorized", "admin token is missing or invalid");
  });

  it("the token header name is case-insensitive", async () => {
    const f = fresh();
    expect((await create({ email: f.email, full_name: f.full_name }, { headers: { "x-admin-token": ADMIN_TOKEN } })).status).toBe(201);
  });
});

describe("AdminService.CreateAccount over RPC", () => {
  it("grpc-js: creates an account whose key works", async () => {
    const f = fresh("Grpc Admin");
    const { user } = await grpcCreate({ email: f.email, fullName: f.full_name });
    expect(user?.apiKey).toHaveLength(73);
    expect(user?.timezone).toBe("UTC");
    expect(user?.url).toBe(`grpc-admin-${f.tag}`);
    expect((await grpcUnary(UserService, "getUser", {}, user?.apiKey)).user?.email).toBe(f.email);
  });

  it("grpc-js: the same refusals with RPC codes", async () => {
    const f = fresh();
    await grpcCreate({ email: f.email, fullName: f.full_name });
    const cases: Array<[Record<string, unknown>, string | null, Code, string]> = [
      [{ fullName: "x" }, ADMIN_TOKEN, Code.InvalidArgument, "missing params: account.email"],
      [{}, ADMIN_TOKEN, Code.InvalidArgument, "missing params: account.email, account.full_name"],
      [{ email: "bad", fullName: "x" }, ADMIN_TOKEN, Code.InvalidArgument, "email is invalid"],
      [{ email: f.email.toUpperCase(), fullName: "x" }, ADMIN_TOKEN, Code.InvalidArgument, "email has already been taken"],
      [{ email: fresh().email, fullName: "x", timezone: "Mars/Olympus" }, ADMIN_TOKEN, Code.InvalidArgument, "timezone is not included in the list"],
      [{ email: fresh().email, fullName: "x", url: "/root" }, ADMIN_TOKEN, Code.InvalidArgument, "url must not start with http, https or /"],
      [{ email: fresh().email, fullName: "x" }, null, Code.Unauthenticated, "admin token is missing or invalid"],
      [{ email: fresh().email, fullName: "x" }, "wrong", Code.Unauthenticated, "admin token is missing or invalid"],
    ];
    for (const [account, token, code, message] of cases) {
      const err = await rpcError(() => grpcCreate(account, token));
      expect(err.code, message).toBe(code);
      expect(err.rawMessage).toBe(message);
    }
  });

  for (const kind of CONNECT_KINDS) {
    it(`${kind}: CreateAccount needs the token as metadata`, async () => {
      const client = connectClient(AdminService, kind);
      const f = fresh();
      const err = await rpcError(() => client.createAccount({ account: { email: f.email, fullName: f.full_name } }));
      expect(err.code).toBe(Code.Unauthenticated);
      const { user } = await client.createAccount({ account: { email: f.email, fullName: f.full_name } }, { headers: { "x-admin-token": ADMIN_TOKEN } });
      expect(user?.email).toBe(f.email);
    });
  }
});

describe("a server started without ADMIN_TOKEN", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ ADMIN_TOKEN: "" });
  });
  afterAll(async () => {
    expect(await server?.stop()).toBe(0);
  });

  it("answers 403 admin api is disabled, with or without a token", async () => {
    const tokens: Array<Record<string, string>> = [{}, { "X-ADMIN-TOKEN": ADMIN_TOKEN }, { "X-ADMIN-TOKEN": "" }];
    for (const headers of tokens) {
      const res = await fetch(`${server.baseUrl}/api/v1/admin/accounts`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers },
        body: JSON.stringify({ account: fresh() }),
      });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ success: false, message: "admin api is disabled", data: {}, status: "forbidden" });
    }
  });

  it("is PERMISSION_DENIED over grpc-js", async () => {
    const client = grpcClientAt(server.baseUrl);
    try {
      const request = { account: { email: fresh().email, fullName: "x" } };
      const err = await rpcError(() => unaryAt(client, AdminService.method.createAccount, request, { "x-admin-token": ADMIN_TOKEN }));
      expect(err.code).toBe(Code.PermissionDenied);
      expect(err.rawMessage).toBe("admin api is disabled");
    } finally {
      client.close();
    }
  });
});
