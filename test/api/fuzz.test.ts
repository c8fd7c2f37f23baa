// Fuzzing every REST row and every RPC with hostile input: never a 5xx, always the envelope on /api/v1, another account untouched.
import http2 from "node:http2";
import { fromJson, toBinary, type DescMessage, type DescMethod, type DescService, type JsonValue } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { restRoutes } from "../../src/app/routes.js";
import { allFiles } from "../../src/platform/http/files.js";
import type { RpcRoute } from "../../src/platform/rest/table.js";
import { baseUrl, newAccount, rest, type Json } from "../helpers/api.js";
import { edgeDate, edgePageValue, edgeRange, idArb, messageJson, mutated, nastyValue, OPERATOR_OBJECTS, VALID_BODIES } from "../helpers/fuzzArbs.js";
import { envelopeProblem, grpcFrame, grpcWebTrailers, h2Request, rawRequest, type RawAnswer, type RawRequest } from "../helpers/raw.js";

const SERVICES: DescService[] = allFiles.flatMap((f) => f.services);
const METHODS: DescMethod[] = SERVICES.flatMap((s) => s.methods);
const RPC_ROWS = restRoutes.filter((r): r is RpcRoute => r.kind === "rpc");
const ALL_PATHS = restRoutes.map((r) => r.path);

/** The hostile caller's key; replaced when the fuzzer regenerates it. */
let attackerKey = "";
let victim: { key: string; user: Json };
let victimIds: string[] = [];
let attackerIds: string[] = [];
/** Ids for the generators: both accounts' own and hostile ones (set once both accounts exist). */
let knownIds: fc.Arbitrary<string>;
const failures: string[] = [];
let sent = 0;
/** How often each status came back: the fuzzer must reach past validation, not only bounce off it. */
const statuses = new Map<number, number>();

/** What the victim's account looks like through the API; `*_ago` strings move with the clock and are left out. */
async function snapshotOfVictim(): Promise<unknown> {
  const paths = ["/user", "/user/settings", "/user/availability", "/events", "/questions", ...victimIds.filter((id) => id.startsWith("event:")).map((id) => `/events/${id.slice(6)}`)];
  const out: Record<string, unknown> = {};
  for (const p of paths) {
    const res = await rest("GET", p, { key: victim.key });
    out[p] = { status: res.status, body: withoutClockFields(res.body) };
  }
  return out;
}

function withoutClockFields(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutClockFields);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).filter(([k]) => !k.endsWith("_ago")).map(([k, x]) => [k, withoutClockFields(x)]));
  return v;
}

const plainIds = () => [...victimIds, ...attackerIds].map((id) => id.replace(/^\w+:/, ""));

/**
 * An arbitrary built once per key and drawn from for every case: building one (each fc.stringMatching parses its
 * regex into a tree of arbitraries) costs far more than drawing a value, and built inside a chain it was built anew
 * for every generated request.
 */
function once<K, V>(build: (key: K) => V): (key: K) => V {
  const built = new Map<K, V>();
  return (key) => {
    if (!built.has(key)) built.set(key, build(key));
    return built.get(key)!;
  };
}
const messageOf = once((input: DescMessage) => messageJson(input, knownIds));
const rowPath = once((path: string) => restPath([path]));
const mutatedBody = once((row: string) => mutated(VALID_BODIES[row]).map((b) => JSON.stringify(b)));

/** Checks one answer; records (does not throw) so a run reports every kind of failure at once. */
function check(req: RawRequest, ans: RawAnswer, kind: "rest" | "rpc"): void {
  sent++;
  statuses.set(ans.status, (statuses.get(ans.status) ?? 0) + 1);
  const label = `${req.method} ${req.path.slice(0, 120)} body=${String(req.body ?? "").slice(0, 200)}`;
  // A call past its own deadline (connect-timeout-ms: 1) is DEADLINE_EXCEEDED, Connect's 504: the caller's limit, not a server fault.
  const ownDeadline = ans.status === 504 && req.headers?.["connect-timeout-ms"] !== undefined && /"code":"deadline_exceeded"/.test(ans.text);
  if (ans.status >= 500 && !ownDeadline) failures.push(`${ans.status} for ${label}: ${ans.text.slice(0, 300)}`);
  if (kind === "rest" && req.method !== "HEAD" && /^\/api\/v1(\/|$|\?)/i.test(req.path)) {
    const problem = envelopeProblem(ans);
    if (problem) failures.push(`not the envelope (${problem}) for ${label}: ${ans.status} ${ans.text.slice(0, 200)}`);
  }
  // The fuzzer may regenerate its own key; keep using the new one.
  if (ans.status < 300 && /regenerate_api_key|RegenerateApiKey/.test(req.path)) {
    try {
      const body = JSON.parse(ans.text) as { data?: { api_key?: string }; apiKey?: string };
      attackerKey = body.data?.api_key ?? body.apiKey ?? attackerKey;
    } catch {
      // checked above
    }
  }
}

async function send(req: RawRequest, kind: "rest" | "rpc"): Promise<void> {
  let ans: RawAnswer;
  try {
    ans = await rawRequest(baseUrl(), req);
  } catch (err) {
    // A server may answer and close before reading a large body it does not want; anything else is a failure.
    const large = req.body !== undefined && Buffer.byteLength(req.body) > 64 * 1024;
    if (!(large && /ECONNRESET|EPIPE/.test(String(err)))) failures.push(`transport error ${String(err)} for ${req.method} ${req.path.slice(0, 120)} body=${String(req.body ?? "").slice(0, 200)}`);
    return;
  }
  check(req, ans, kind);
}

const keyHeader = fc.oneof(
  { arbitrary: fc.constant<string | undefined>("attacker"), weight: 6 },
  { arbitrary: fc.constantFrom<string | undefined>(undefined, "", " ", "x".repeat(73), "null", "${jndi:x}", "k".repeat(9000), "é"), weight: 2 },
);

const contentType = fc.constantFrom<string | undefined>(
  "application/json",
  "application/json",
  "application/json",
  undefined,
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=zz",
  "multipart/form-data",
  "application/json; charset=utf-16",
  "application/json; charset=bogus",
  "application/proto",
);

const extraHeaders = fc.constantFrom<Record<string, string>>(
  {},
  {},
  { "content-encoding": "gzip" },
  { "content-encoding": "bogus" },
  { "x-admin-token": "wrong" },
  { "x-admin-token": "" },
  { "x-forwarded-for": "1.2.3.4, ::1" },
  { "transfer-encoding": "chunked" },
  { accept: "application/xml" },
);

function headersOf(key: string | undefined, type: string | undefined, extra: Record<string, string>): Record<string, string> {
  const h: Record<string, string> = { ...extra };
  if (key !== undefined) h["x-api-key"] = key === "attacker" ? attackerKey : key;
  if (type !== undefined) h["content-type"] = type;
  return h;
}

function bodyText(body: unknown): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { arbitrary: fc.constant(JSON.stringify(body)), weight: 6 },
    { arbitrary: nastyValue.map((v) => JSON.stringify(v) ?? "null"), weight: 2 },
    { arbitrary: fc.constantFrom(undefined, "", "{", "{\"a\":", "[]", "null", "\"x\"", "1e999999", "{\"__proto__\":{\"polluted\":1}}", "\uFEFF{}"), weight: 2 },
    { arbitrary: fc.integer({ min: 1_000_000, max: 1_100_000 }).map((n) => JSON.stringify({ user: { bio: "b".repeat(n) } })), weight: 1 },
  );
}

/** A path from the REST table with its `:id` / `*rest` parts filled by hostile ids, or a random one. */
function restPath(paths: readonly string[] = ALL_PATHS): fc.Arbitrary<string> {
  // Query values: random text, or the edges of the ranges the API reads (dates, a range 31 + 1 days long, page sizes).
  const queryValue = (k: string): fc.Arbitrary<string> =>
    k.startsWith("page[") ? fc.oneof(fc.string({ maxLength: 10 }), edgePageValue) : k.startsWith("date_") ? fc.oneof(fc.string({ maxLength: 10 }), edgeDate) : fc.string({ maxLength: 10 });
  const queryArb = fc.oneof(
    fc.dictionary(fc.constantFrom("page[number]", "page[limit]", "status", "date_from", "date_to", "timezone", "$gt", "a[$ne]"), fc.string({ maxLength: 10 })),
    fc.tuple(fc.subarray(["page[number]", "page[limit]", "date_from", "date_to", "category"]), edgeRange).chain(([keys, range]) =>
      fc.tuple(...keys.map((k) => (k === "date_from" || k === "date_to" ? fc.constant(range[k]) : k === "category" ? fc.constantFrom("upcoming", "past", "archived") : queryValue(k)))).map((values) =>
        Object.fromEntries(keys.map((k, i) => [k, values[i]])),
      ),
    ),
  );
  const fromTable = fc.tuple(fc.constantFrom(...paths), knownIds, fc.option(queryArb, { nil: undefined }))
    .map(([p, id, query]) => {
      const filled = p.replace(/:\w+/g, () => encodeURIComponent(id)).replace(/\*\w+/g, () => encodeURIComponent(id));
      const qs = query ? "?" + Object.entries(query).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&") : "";
      return `/api/v1${filled}${qs}`;
    });
  const random = fc.oneof(
    fc.constantFrom("/api/v1", "/api/v1/", "/api/v1/nope", "/API/V1/USER", "/api/v1//user", "/api/v1/user/", "/api/v1/../healthz", "/api/v1/%2e%2e/user", "/api/v1/events/%ZZ", "/api/v1/events/a%2Fb", "/api/v1/user?x=%ZZ", "/api/v1/events/%E0%A4%A", "/api/v1/user?__proto__[x]=1", "/api/v1/events?" + "a=1&".repeat(2000)),
    fc.webPath().map((p) => `/api/v1${p.startsWith("/") ? p : "/" + p}`),
    fc.array(fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }), { maxLength: 4 }).map((segs) => "/api/v1/" + segs.map(encodeURIComponent).join("/")),
  );
  return paths === ALL_PATHS ? fc.oneof({ arbitrary: fromTable, weight: 4 }, { arbitrary: random, weight: 1 }) : fromTable;
}

const httpMethod = fc.oneof(
  { arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE"), weight: 8 },
  { arbitrary: fc.constantFrom("HEAD", "OPTIONS", "PROPFIND", "PURGE"), weight: 1 },
);

beforeAll(async () => {
  victim = await newAccount({ full_name: "Victim Account" });
  const attacker = await newAccount({ full_name: "Fuzz Attacker" });
  attackerKey = attacker.key;
  for (const [acc, ids] of [[victim, victimIds], [attacker, attackerIds]] as const) {
    ids.push(`user:${acc.user.id}`);
    const q = await rest("POST", "/questions", { key: acc.key, body: { question: { title: "Dietary needs?", question_type: "one_line" } } });
    expect(q.status).toBe(201);
    ids.push(`question:${q.body.data.id}`);
    const ev = await rest("POST", "/events", {
      key: acc.key,
      body: { event: { name: "Intro call", url: "intro-call", event_questions_attributes: [{ question_id: q.body.data.id, required: true }] } },
    });
    expect(ev.status).toBe(201);
    ids.push(`event:${ev.body.data.id}`);
    for (const link of ev.body.data.active_event_questions as Json[]) ids.push(`link:${link.id}`);
  }
  victimIds = [...victimIds];
  attackerIds = [...attackerIds];
  knownIds = idArb(plainIds());
});

let before: unknown;
beforeAll(async () => {
  before = await snapshotOfVictim();
});

describe("fuzzing", () => {
  it("REST rows with hostile paths, ids, bodies and headers: no 5xx, always the envelope", { timeout: 240_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { arbitrary: fc.constantFrom(...RPC_ROWS).chain((row) => fc.tuple(fc.constant(row.method as string), rowPath(row.path), messageOf(row.service.method[row.rpc].input).chain(bodyText))), weight: 3 },
          { arbitrary: fc.tuple(httpMethod, restPath(), nastyValue.chain(bodyText)), weight: 2 },
          {
            arbitrary: fc.constantFrom(...RPC_ROWS.filter((r) => VALID_BODIES[`${r.method} ${r.path}`])).chain((row) =>
              fc.tuple(fc.constant(row.method as string), rowPath(row.path), mutatedBody(`${row.method} ${row.path}`)),
            ),
            weight: 3,
          },
        ),
        keyHeader,
        contentType,
        extraHeaders,
        async ([method, path, body], key, type, extra) => {
          await send({ method, path, headers: headersOf(key, body === undefined ? undefined : type, extra), body }, "rest");
        },
      ),
      { numRuns: 1500, endOnFailure: true },
    );
    expect(failures.slice(0, 40), `${failures.length} failures`).toEqual([]);
  });

  it("every RPC over Connect JSON with hostile messages: no 5xx", { timeout: 240_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...METHODS).chain((m) => fc.tuple(fc.constant(m), messageOf(m.input).chain(bodyText))),
        keyHeader,
        fc.constantFrom<string | undefined>("application/json", "application/json", "application/json", "application/proto", "text/plain", undefined),
        fc.constantFrom<Record<string, string>>({}, { "connect-protocol-version": "1" }, { "connect-timeout-ms": "1" }, { "connect-timeout-ms": "-5" }, { "content-encoding": "gzip" }, { "x-admin-token": "wrong" }),
        async ([m, body], key, type, extra) => {
          await send({ method: "POST", path: `/${m.parent.typeName}/${m.name}`, headers: headersOf(key, type, extra), body }, "rpc");
        },
      ),
      { numRuns: 1000, endOnFailure: true },
    );
    expect(failures.slice(0, 40), `${failures.length} failures`).toEqual([]);
  });

  it("every REST row and every RPC with each operator object in every field", { timeout: 240_000 }, async () => {
    for (const op of OPERATOR_OBJECTS) {
      for (const row of RPC_ROWS) {
        const input = row.service.method[row.rpc].input;
        const body = Object.fromEntries(input.fields.map((f) => [f.name, f.fieldKind === "message" ? Object.fromEntries(f.message.fields.map((g) => [g.name, op])) : op]));
        const path = "/api/v1" + row.path.replace(/:\w+/g, encodeURIComponent(JSON.stringify(op)));
        await send({ method: row.method, path, headers: headersOf("attacker", "application/json", {}), body: JSON.stringify(body) }, "rest");
      }
      for (const m of METHODS) {
        const body = Object.fromEntries(m.input.fields.map((f) => [f.jsonName, f.fieldKind === "message" ? Object.fromEntries(f.message.fields.map((g) => [g.jsonName, op])) : op]));
        await send({ method: "POST", path: `/${m.parent.typeName}/${m.name}`, headers: headersOf("attacker", "application/json", {}), body: JSON.stringify(body) }, "rpc");
      }
    }
    expect(failures.slice(0, 40), `${failures.length} failures`).toEqual([]);
  });

  it("every RPC over gRPC (HTTP/2) with hostile frames and messages: a gRPC status, never a server fault", { timeout: 240_000 }, async () => {
    const session = http2.connect(baseUrl());
    session.on("error", () => undefined);
    const faults = new Set([Code.Unknown, Code.Internal, Code.Unavailable, Code.DataLoss]);
    let answered = 0;
    /** The message as protobuf when the generated JSON is one (often it is not: then random bytes stand in). */
    const binaryOf = (m: DescMethod, json: unknown): Uint8Array | undefined => {
      try {
        return toBinary(m.input, fromJson(m.input, json as JsonValue, { ignoreUnknownFields: true }));
      } catch {
        return undefined;
      }
    };
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...METHODS).chain((m) =>
            fc.tuple(
              fc.constant(m),
              fc.oneof(
                { arbitrary: messageOf(m.input).map((j) => binaryOf(m, j) ?? new Uint8Array()).map((b) => grpcFrame(b)), weight: 5 },
                { arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => grpcFrame(b)), weight: 2 },
                { arbitrary: fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)), weight: 2 },
                { arbitrary: fc.uint8Array({ maxLength: 40 }).map((b) => grpcFrame(b, 1)), weight: 1 },
                { arbitrary: fc.constantFrom(Buffer.concat([grpcFrame(new Uint8Array()), grpcFrame(new Uint8Array())]), Buffer.from([0, 0xff, 0xff, 0xff, 0xff])), weight: 1 },
              ),
            ),
          ),
          keyHeader,
          fc.constantFrom("application/grpc", "application/grpc", "application/grpc+proto", "application/grpc+json", "application/grpc-web"),
          fc.constantFrom<Record<string, string>>({}, {}, { "grpc-encoding": "gzip" }, { "grpc-timeout": "1S" }, { "grpc-timeout": "bogus" }, { "x-request-id": "a b" }),
          // One call in five is reset by the caller while its message is still being sent.
          fc.nat(4).map((n) => n === 0),
          async ([m, body], key, type, extra, reset) => {
            // A watch that decodes and is allowed streams until its deadline: one of a second ends it (DEADLINE_EXCEEDED).
            const deadline = m.methodKind === "server_streaming" && !("grpc-timeout" in extra) ? { "grpc-timeout": "1S" } : {};
            const headers: http2.OutgoingHttpHeaders = { ":method": "POST", ":path": `/${m.parent.typeName}/${m.name}`, "content-type": type, te: "trailers", ...deadline, ...extra };
            if (key !== undefined) headers["x-api-key"] = key === "attacker" ? attackerKey : key;
            // A header value node:http2 will not send never reaches the service.
            const outcome = await h2Request(session, headers, body, reset).catch(() => undefined);
            if (outcome === undefined) return;
            sent++;
            if (reset) return;
            answered++;
            const what = `${m.parent.typeName}/${m.name} ${type} ${JSON.stringify(extra)} body=${body.subarray(0, 40).toString("hex")}`;
            if (outcome.status === undefined || outcome.status >= 500) failures.push(`gRPC HTTP status ${outcome.status} for ${what}`);
            else if (outcome.status === 200) {
              // gRPC-Web carries its status in the body's trailer frame.
              const status = type === "application/grpc-web" ? grpcWebTrailers(outcome.body)["grpc-status"] : outcome.grpcStatus;
              if (status === undefined || faults.has(Number(status) as Code)) failures.push(`grpc-status ${status} for ${what}`);
            }
          },
        ),
        { numRuns: 600, endOnFailure: true },
      );
    } finally {
      session.close();
    }
    expect(failures.slice(0, 40), `${failures.length} failures`).toEqual([]);
    expect(answered).toBeGreaterThan(400);
  });

  it("the server is still up, the victim's data unchanged, and the run was big enough", async () => {
    const health = await fetch(`${baseUrl()}/healthz`);
    expect(health.status).toBe(200);
    expect(await snapshotOfVictim()).toEqual(before);
    expect(sent).toBeGreaterThan(2500);
    const seen = Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0]));
    console.info("fuzz answers by status", seen);
    // Creations are rarer: 5 to 15 a run since writes must declare application/json (a run with exactly 5 failed
    // the old floor of more than 5), so the floor only asks that creation paths were reached at all.
    const floors: Record<number, number> = { 200: 50, 201: 1, 400: 50, 401: 20, 404: 50, 422: 30 };
    for (const [status, floor] of Object.entries(floors)) expect(statuses.get(Number(status)) ?? 0, `answers with ${status}`).toBeGreaterThan(floor);
  });
});

describe("cases the fuzzer found", () => {
  it("Connect: a body that is not valid protobuf is INVALID_ARGUMENT (400), not INTERNAL (500)", async () => {
    const ans = await rawRequest(baseUrl(), { method: "POST", path: "/scheduling.v1.UserService/GetUser", headers: { "content-type": "application/proto", "x-api-key": attackerKey }, body: "{}" });
    expect(ans.status).toBe(400);
    expect(JSON.parse(ans.text)).toMatchObject({ code: "invalid_argument", message: "request body could not be decoded: parse binary: premature EOF" });
    expect(JSON.parse(ans.text).details).toEqual([{ type: "google.rpc.ErrorInfo", value: expect.any(String), debug: { reason: "INVALID_VALUE", domain: "scheduling.v1" } }]);
  });

  it("Connect: a gzip body that does not decompress is INVALID_ARGUMENT (400)", async () => {
    const ans = await rawRequest(baseUrl(), { method: "POST", path: "/scheduling.v1.UserService/GetUser", headers: { "content-type": "application/json", "content-encoding": "gzip", "x-api-key": attackerKey }, body: "{" });
    expect(ans.status).toBe(400);
    expect(JSON.parse(ans.text).code).toBe("invalid_argument");
  });

  it("gRPC: an undecodable message is INVALID_ARGUMENT with or without a deadline (a deadline takes Connect's own path)", async () => {
    const session = http2.connect(baseUrl());
    session.on("error", () => undefined);
    const call = async (extra: Record<string, string>, body: Buffer) => {
      const headers = { ":method": "POST", ":path": "/scheduling.v1.EventService/CheckEventUrlAvailability", "content-type": "application/grpc", te: "trailers", "x-api-key": attackerKey, ...extra };
      const { grpcStatus, grpcMessage, grpcDetails } = await h2Request(session, headers, body);
      return { status: grpcStatus, message: grpcMessage, details: grpcDetails };
    };
    try {
      const illegalTag = Buffer.from("0000000005ff6edb80d4", "hex");
      const answers = [];
      for (const extra of [{}, { "grpc-timeout": "5S" }] as Record<string, string>[]) {
        const answer = await call(extra, illegalTag);
        expect(answer, JSON.stringify(extra)).toEqual({
          status: "3",
          message: "request body could not be decoded: parse binary: illegal tag: field no 1775 wire type 7",
          details: expect.any(String),
        });
        answers.push(answer);
      }
      expect(answers[1].details).toBe(answers[0].details);
      // The compressed flag without a grpc-encoding: the caller's mistake too.
      expect((await call({ "grpc-timeout": "5S" }, Buffer.from("0100000000", "hex"))).status).toBe("3");
    } finally {
      session.close();
    }
  });

  it("gRPC: a unary body framed wrong gets one answer with or without a deadline (the fast path answers as Connect does)", async () => {
    const session = http2.connect(baseUrl());
    session.on("error", () => undefined);
    const envelope = (flag: number, message: number[], length = message.length) => {
      const b = Buffer.alloc(5 + message.length);
      b[0] = flag;
      b.writeUInt32BE(length, 1);
      b.set(message, 5);
      return b;
    };
    const empty = envelope(0, []);
    const incomplete = { status: "3", message: "protocol error: incomplete envelope" };
    // undefined: not a framing error (the call goes on to the key check; the fuzz run above may have made the key stale).
    const cases: Array<[string, Buffer, { status: string; message: string } | undefined]> = [
      ["no message", Buffer.alloc(0), { status: "12", message: "protocol error: missing input message for unary method" }],
      ["4 bytes", Buffer.from([0, 0, 0, 0]), incomplete],
      ["a length beyond the body", envelope(0, [8, 1], 9), incomplete],
      ["two messages", Buffer.concat([empty, empty]), { status: "12", message: "protocol error: received extra input message for unary method" }],
      ["a message and 3 bytes", Buffer.concat([empty, Buffer.from([0, 0, 0])]), incomplete],
      ["the compressed flag", envelope(1, []), { status: "3", message: "request body could not be decoded: received compressed envelope, but do not know how to decompress" }],
      ["bad protobuf and a second message", Buffer.concat([envelope(0, [0xff, 0xff]), empty]), { status: "3", message: "request body could not be decoded: parse binary: premature EOF" }],
      ["another flag bit (ignored)", envelope(2, []), undefined],
    ];
    try {
      for (const [what, body, expected] of cases) {
        const answers = [];
        for (const extra of [{}, { "grpc-timeout": "5S" }] as Record<string, string>[]) {
          const headers = { ":method": "POST", ":path": "/scheduling.v1.UserService/GetUser", "content-type": "application/grpc", te: "trailers", "x-api-key": attackerKey, ...extra };
          const { grpcStatus, grpcMessage, grpcDetails } = await h2Request(session, headers, body);
          answers.push({ status: grpcStatus, message: grpcMessage ?? "", details: grpcDetails });
        }
        // The same trailers, google.rpc details (callers.md) byte for byte included, on both paths.
        expect(answers[1], `${what}: with a deadline as without`).toEqual(answers[0]);
        const { details, ...status } = answers[0];
        // Every error carries details; the ignored flag bit may also be answered (a key still valid), which has none.
        if (status.status !== "0") expect(details, what).toBeDefined();
        if (expected) expect(status, what).toEqual(expected);
        else expect(["3", "12"], what).not.toContain(answers[0].status);
      }
    } finally {
      session.close();
    }
  });

  /** A gRPC-Web call over HTTP/1.1; the status is in the body's trailer frame (flag 0x80, then "name: value" lines). */
  async function grpcWebCall(path: string, type: string, body: Buffer, key: string): Promise<{ status?: string; message: string }> {
    const res = await fetch(`${baseUrl()}${path}`, { method: "POST", headers: { "content-type": type, "x-grpc-web": "1", "x-api-key": key }, body: new Uint8Array(body) });
    expect(res.status).toBe(200);
    const trailers = grpcWebTrailers(Buffer.from(await res.arrayBuffer()));
    return { status: trailers["grpc-status"], message: decodeURIComponent(trailers["grpc-message"] ?? "") };
  }

  it("gRPC and gRPC-Web: a server-streaming call's undecodable message is INVALID_ARGUMENT too (it is read inside the interceptors)", async () => {
    const { key } = await newAccount();
    const path = "/scheduling.v1.BookingService/WatchBookingChanges";
    const illegalTag = Buffer.from("000000000100", "hex");
    const session = http2.connect(baseUrl());
    session.on("error", () => undefined);
    try {
      const headers = { ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", "x-api-key": key };
      const { grpcStatus, grpcMessage } = await h2Request(session, headers, illegalTag);
      expect({ grpcStatus, grpcMessage }).toEqual({ grpcStatus: "3", grpcMessage: "request body could not be decoded: parse binary: illegal tag: field no 0 wire type 0" });
    } finally {
      session.close();
    }
    expect(await grpcWebCall(path, "application/grpc-web+proto", illegalTag, key)).toEqual({
      status: "3",
      message: "request body could not be decoded: parse binary: illegal tag: field no 0 wire type 0",
    });
  });

  it("gRPC-Web: an undecodable message is INVALID_ARGUMENT in the trailer frame, not INTERNAL", async () => {
    // A key of its own: the fuzz runs above may have regenerated the attacker's.
    const { key } = await newAccount();
    const check = (body: Buffer) => grpcWebCall("/scheduling.v1.EventService/CheckEventUrlAvailability", "application/grpc-web+proto", body, key);
    expect(await check(Buffer.from("0000000005ff6edb80d4", "hex"))).toEqual({
      status: "3",
      message: "request body could not be decoded: parse binary: illegal tag: field no 1775 wire type 7",
    });
    // A message that decodes gets its own answer (the url is missing), untouched.
    expect(await check(grpcFrame(new Uint8Array()))).toEqual({ status: "3", message: expect.not.stringMatching(/could not be decoded/) as unknown as string });
  });

  it("gRPC-JSON and gRPC-Web-JSON: a body that starts with an emoji is INVALID_ARGUMENT, not a reset stream", async () => {
    // V8 names the first character of text that is not JSON by one UTF-16 unit, here half of a surrogate pair,
    // and Connect's percent-encoding of grpc-message threw on it.
    const { key } = await newAccount();
    const emoji = grpcFrame(Buffer.from("😀", "utf8"));
    const session = http2.connect(baseUrl());
    session.on("error", () => undefined);
    try {
      const headers = { ":method": "POST", ":path": "/scheduling.v1.UserService/GetUser", "content-type": "application/grpc+json", te: "trailers", "x-api-key": key };
      const answer = await h2Request(session, headers, emoji);
      expect({ status: answer.grpcStatus, message: answer.grpcMessage }).toEqual({ status: "3", message: "request body could not be decoded" });
    } finally {
      session.close();
    }
    expect(await grpcWebCall("/scheduling.v1.UserService/GetUser", "application/grpc-web+json", emoji, key)).toEqual({ status: "3", message: "request body could not be decoded" });
  });

  it("a URL longer than node:http accepts gets the 431 envelope", async () => {
    const ans = await rawRequest(baseUrl(), { method: "GET", path: `/api/v1/events/${"a".repeat(20_000)}`, headers: { "x-api-key": attackerKey } });
    expect(ans.status).toBe(431);
    expect(envelopeProblem(ans)).toBeNull();
    expect(JSON.parse(ans.text)).toEqual({ success: false, message: "request headers or url too large", data: {}, status: "request_header_fields_too_large" });
  });

  it("the 431 answer to HEAD has no body (a client would read it as the next response)", async () => {
    const ans = await rawRequest(baseUrl(), { method: "HEAD", path: `/api/v1/events/${"a".repeat(20_000)}` });
    expect(ans.status).toBe(431);
    expect(ans.text).toBe("");
  });

  it("a request node:http cannot parse (Content-Length with chunked encoding) gets the 400 envelope", async () => {
    const ans = await rawRequest(baseUrl(), { method: "POST", path: "/api/v1/questions", headers: { "content-length": "2", "transfer-encoding": "chunked", "x-api-key": attackerKey }, body: "{}" });
    expect(ans.status).toBe(400);
    expect(JSON.parse(ans.text)).toEqual({ success: false, message: "malformed HTTP request", data: {}, status: "bad_request" });
  });
});
