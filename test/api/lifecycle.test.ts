// The process around the service: start-up messages, configuration errors, graceful SIGTERM, no orphaned database, health and reflection on the port.
import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import * as reflectionV1 from "../../gen/grpc/reflection/v1/reflection_pb.js";
import * as reflectionV1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { GetUserResponseSchema } from "../../gen/scheduling/v1/user_pb.js";
import { specGrpcMessage } from "../../src/platform/transport/grpcMessage.js";
import { rpcError } from "../helpers/api.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { grpcFrame } from "../helpers/raw.js";
import { bidiAt, grpcClientAt, unaryAt } from "../helpers/grpcAt.js";
import { childrenOf, commandOf, isAlive } from "../helpers/processes.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

// These tests are about the embedded database, so they never use a MONGODB_URI the run may have.
const EMBEDDED = { MONGODB_URI: "" };

/** The JSON lines of a server's stderr. */
function logLines(logs: string): Array<Record<string, unknown>> {
  return logs.split("\n").flatMap((line) => {
    try {
      const parsed: unknown = JSON.parse(line);
      return typeof parsed === "object" && parsed !== null ? [parsed as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
}

async function createAccount(baseUrl: string): Promise<string> {
  return (await fixturesAt(baseUrl).newAccount({ full_name: "Life Cycle" })).key;
}

describe("npm start", () => {
  it("runs src/app/main.ts with tsx, as test/helpers/server.ts does (exec: npm's signals reach node, test/api/npm-start.test.ts)", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    expect(pkg.scripts.start).toBe("MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-131072} exec node --max-old-space-size=1024 --import tsx src/app/main.ts");
  });

  it("with MONGODB_URI set but no API_KEY_SECRET: exits non-zero, saying why, before listening", async () => {
    const err = await startServer({ MONGODB_URI: "mongodb://127.0.0.1:1/never", API_KEY_SECRET: "" }).then(
      (s) => s.stop().then(() => new Error("the server started")),
      (e: Error) => e,
    );
    expect(err.message).toMatch(/^server exited with [1-9]\d* before listening/);
    expect(err.message).toContain("API_KEY_SECRET is required when MONGODB_URI is set");
  });

  it("with a malformed PORT: exits non-zero, saying why", async () => {
    const err = await startServer({ PORT: "eighty" }).then(
      (s) => s.stop().then(() => new Error("the server started")),
      (e: Error) => e,
    );
    expect(err.message).toMatch(/^server exited with [1-9]\d* before listening/);
    expect(err.message).toContain('PORT must be an integer 0..65535, got \\"eighty\\"');
  });
});

describe("a server on the embedded database", () => {
  let server: RunningServer;
  let grpc: ReturnType<typeof grpcClientAt>;
  beforeAll(async () => {
    server = await startServer(EMBEDDED);
    grpc = grpcClientAt(server.baseUrl);
  });
  afterAll(async () => {
    grpc?.close();
    await server?.stop("SIGKILL");
  });

  it("says on stderr that the data lives in memory only", () => {
    const logs = server.logs();
    expect(logs).toContain("MONGODB_URI is not set: using the embedded in-memory database");
    expect(logs).toContain("all data is lost when the service stops");
    expect(logs).toContain("stays comfortable up to about 2 000 bookings; use MongoDB for more");
    const warning = logLines(logs).find((l) => String(l.msg).includes("MONGODB_URI is not set"));
    // A warning, whether the level is written by name or by pino's number.
    expect(["warn", 40]).toContain(warning?.level);
  });

  it("grpc-js: health Check is SERVING for the server and each service; unknown names are NOT_FOUND", async () => {
    // Every service the server mounts, those of later issues too (calendars, integrations, webhooks, OAuth were missing).
    const services = ["Admin", "Booking", "Calendar", "Event", "Integration", "OAuth", "PublicBooking", "Question", "User", "Webhook"].map((n) => `scheduling.v1.${n}Service`);
    for (const service of ["", ...services]) {
      expect((await unaryAt(grpc, Health.method.check, { service })).status, service).toBe(ServingStatus.SERVING);
    }
    const err = await rpcError(() => unaryAt(grpc, Health.method.check, { service: "nope.Ünknown 100%, really: yes" }));
    expect(err.code).toBe(Code.NotFound);
    // Non-ASCII, "%", "," and ":" all reach a grpc-js caller as sent.
    expect(err.rawMessage).toBe('unknown service "nope.Ünknown 100%, really: yes"');
  });

  it("grpc-message is percent-encoded the gRPC way: only non-printable bytes and %", () => {
    expect(specGrpcMessage(encodeURIComponent('missing params: user.url, "ü" 100%'))).toBe('missing params: user.url, "%C3%BC" 100%25');
    expect(specGrpcMessage("plain text")).toBe("plain text");
    // Not valid percent-encoding: passed on as it came.
    expect(specGrpcMessage("%E0%A4%A")).toBe("%E0%A4%A");
  });

  it("grpc-js: reflection v1 and v1alpha list every service and serve their files", async () => {
    const expected = [
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
      "scheduling.v1.AdminService",
      "scheduling.v1.BookingService",
      "scheduling.v1.CalendarService",
      "scheduling.v1.EventService",
      "scheduling.v1.IntegrationService",
      "scheduling.v1.OAuthService",
      "scheduling.v1.PublicBookingService",
      "scheduling.v1.PublicTeamBookingService",
      "scheduling.v1.QuestionService",
      "scheduling.v1.ReminderService",
      "scheduling.v1.ScheduleService",
      "scheduling.v1.TeamService",
      "scheduling.v1.UserService",
      "scheduling.v1.WebhookService",
    ];
    const v1 = await bidiAt(grpc, reflectionV1.ServerReflection.method.serverReflectionInfo, [
      { messageRequest: { case: "listServices", value: "" } },
      { messageRequest: { case: "fileContainingSymbol", value: "scheduling.v1.UserService" } },
    ]);
    expect(v1).toHaveLength(2);
    const list = v1[0].messageResponse;
    expect(list.case).toBe("listServicesResponse");
    const names = list.case === "listServicesResponse" ? list.value.service.map((s) => s.name).sort() : [];
    expect(names).toEqual(expected);
    const files = v1[1].messageResponse;
    expect(files.case).toBe("fileDescriptorResponse");
    const fileNames = files.case === "fileDescriptorResponse" ? files.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b).name) : [];
    expect(fileNames[0]).toBe("scheduling/v1/user.proto");
    expect(fileNames).toContain("google/protobuf/struct.proto");

    const alpha = await bidiAt(grpc, reflectionV1alpha.ServerReflection.method.serverReflectionInfo, [{ messageRequest: { case: "listServices", value: "" } }]);
    const alphaList = alpha[0].messageResponse;
    expect(alphaList.case === "listServicesResponse" ? alphaList.value.service.map((s) => s.name).sort() : []).toEqual(expected);
  });

  it("after SIGKILL of the service, the embedded database process is gone within seconds", async () => {
    const pid = server.child.pid!;
    // setpriv execs the database binary, so the database is a direct child of the service.
    const database = childrenOf(pid).filter((c) => commandOf(c).includes("jongodb"));
    expect(database, `children of ${pid}: ${childrenOf(pid).map(commandOf).join(" | ")}`).toHaveLength(1);
    expect(isAlive(database[0])).toBe(true);
    expect(await server.stop("SIGKILL")).toBeNull();
    await until(`jongodb ${database[0]} gone after the service`, () => !isAlive(database[0]), { timeoutMs: 5000 });
    expect(isAlive(database[0]), `jongodb ${database[0]} outlived the service`).toBe(false);
  });
});

/** Sends a multipart picture upload in chunks with pauses; `onChunk` runs after each chunk is written. */
function slowUpload(
  baseUrl: string,
  key: string,
  picture: Buffer,
  chunkBytes: number,
  pauseMs: number,
  onChunk: (index: number) => void,
): Promise<{ status: number; body: string }> {
  const boundary = "----lifecycle-boundary";
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="user[profile_picture]"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const body = Buffer.concat([head, picture, tail]);
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: "PUT",
        path: "/api/v1/users/profile_picture",
        headers: { "Content-Type": `multipart/form-data; boundary=${boundary}`, "Content-Length": body.length, "X-API-KEY": key },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    void (async () => {
      for (let i = 0, offset = 0; offset < body.length; i++, offset += chunkBytes) {
        req.write(body.subarray(offset, offset + chunkBytes));
        onChunk(i);
        await new Promise((r) => setTimeout(r, pauseMs));
      }
      req.end();
    })();
  });
}

/** A GET on a new connection of its own (no pooling); resolves with the status. */
function freshGet(baseUrl: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${baseUrl}${path}`, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
  });
}

/** Makes one keep-alive request and returns its socket, left idle and open. */
function idleKeepAliveSocket(baseUrl: string): Promise<import("node:net").Socket> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return new Promise((resolve, reject) => {
    const req = http.get(`${baseUrl}/healthz`, { agent }, (res) => {
      res.resume();
      res.on("end", () => setImmediate(() => resolve(req.socket!)));
    });
    req.on("error", reject);
  });
}

/** A valid 1x1 PNG followed by zero padding up to `size` bytes (decoders stop at IEND). */
function paddedPng(size: number): Buffer {
  const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");
  return Buffer.concat([png, Buffer.alloc(size - png.length)]);
}

describe("SIGTERM", () => {
  it("lets a slow upload in flight finish, refuses new connections, then exits 0", async () => {
    const server = await startServer(EMBEDDED);
    try {
      const key = await createAccount(server.baseUrl);
      const picture = paddedPng(4 * 1024 * 1024);
      // A keep-alive connection that sits idle when the signal comes must be closed by the server at once.
      const idle = await idleKeepAliveSocket(server.baseUrl);
      let idleClosedAt: number | undefined;
      idle.once("close", () => (idleClosedAt = Date.now()));
      let signalledAt: number | undefined;
      let newConnection: Promise<unknown> | undefined;
      const upload = slowUpload(server.baseUrl, key, picture, 256 * 1024, 60, (i) => {
        if (i !== 2) return;
        if (server.child.kill("SIGTERM")) signalledAt = Date.now();
        // A new connection after the signal must not be accepted.
        newConnection = new Promise((r) => setTimeout(r, 150)).then(() => freshGet(server.baseUrl, "/healthz").then((status) => `answered ${status}`, (e: unknown) => e));
      });
      const answer = await upload;
      const answeredAt = Date.now();
      expect(signalledAt).toBeDefined();
      expect(answer.status, answer.body + server.logs().slice(-3000)).toBe(200);
      const envelope = JSON.parse(answer.body);
      expect(envelope.message).toBe("profile picture updated");
      expect(envelope.success).toBe(true);
      expect(await server.stop()).toBe(0);
      expect(await newConnection).toMatchObject({ code: "ECONNREFUSED" });
      expect(idleClosedAt, "idle keep-alive connection was left open during the drain").toBeDefined();
      expect(idleClosedAt!).toBeLessThan(answeredAt);
      expect(idleClosedAt! - signalledAt!).toBeLessThan(500);
      const logs = server.logs();
      expect(logLines(logs).find((l) => l.msg === "shutting down")).toMatchObject({ signal: "SIGTERM", in_flight: 1 });
      expect(logLines(logs).some((l) => l.msg === "stopped")).toBe(true);
    } finally {
      await server.stop("SIGKILL");
    }
  });

  it("lets a gRPC call whose message is still arriving finish over HTTP/2, then exits 0", async () => {
    const server = await startServer(EMBEDDED);
    const session = http2.connect(server.baseUrl);
    session.on("error", () => undefined);
    try {
      const key = await createAccount(server.baseUrl);
      // GetUserRequest is empty; a message of unknown fields (tag 15, 1000 bytes) keeps it honest and slow to send.
      const message = Buffer.concat([Buffer.from([0x7a, 0xe8, 0x07]), Buffer.alloc(1000, 0x61)]);
      const frame = grpcFrame(message);
      const stream = session.request({ ":method": "POST", ":path": "/scheduling.v1.UserService/GetUser", "content-type": "application/grpc", te: "trailers", "x-api-key": key });
      const answer = new Promise<{ status: string | undefined; body: Buffer }>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let status: string | undefined;
        stream.on("trailers", (t) => (status = String(t["grpc-status"])));
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => resolve({ status, body: Buffer.concat(chunks) }));
        stream.on("error", reject);
      });
      stream.write(frame.subarray(0, 100));
      await new Promise((r) => setTimeout(r, 200));
      expect(server.child.kill("SIGTERM")).toBe(true);
      await new Promise((r) => setTimeout(r, 300));
      stream.end(frame.subarray(100));
      const { status, body } = await answer;
      expect(status).toBe("0");
      const user = fromBinary(GetUserResponseSchema, body.subarray(5)).user;
      expect(user?.fullName).toBe("Life Cycle");
      expect(await server.stop()).toBe(0);
      expect(logLines(server.logs()).find((l) => l.msg === "shutting down")).toMatchObject({ signal: "SIGTERM", in_flight: 1 });
    } finally {
      session.destroy();
      await server.stop("SIGKILL");
    }
  });

  it("keeps answering while nobody reads its stderr, and every request line comes out, in full, by the stop", async () => {
    const server = await startServer(EMBEDDED);
    try {
      // Nobody reads: the pipe and the reading stream's buffer (about 128 KB) fill with the first ~500 lines. A
      // service that wrote its lines synchronously would stop in write(2) there, and these requests would hang.
      server.child.stderr!.pause();
      // About 330 KB of lines (the id is logged), well past the ~128 KB that fit.
      const ids = Array.from({ length: 1000 }, (_, i) => `pipe-${i}-${"p".repeat(110)}`);
      for (let i = 0; i < ids.length; i += 50) {
        const answers = await Promise.all(ids.slice(i, i + 50).map((id) => fetch(`${server.baseUrl}/api/v1/no-such-row`, { headers: { "x-request-id": id } })));
        expect(answers.map((a) => a.status)).toEqual(answers.map(() => 404));
      }
      server.child.stderr!.resume();
      expect(await server.stop()).toBe(0);
      const lines = logLines(server.logs());
      const logged = new Set(lines.filter((l) => l.msg === "request").map((l) => l.request_id));
      expect(ids.filter((id) => !logged.has(id))).toEqual([]);
      expect(lines.at(-1)?.msg).toBe("stopped");
    } finally {
      await server.stop("SIGKILL");
    }
  }, 120_000);

  it("with nothing in flight exits 0 at once", async () => {
    const server = await startServer(EMBEDDED);
    const started = Date.now();
    expect(await server.stop("SIGTERM")).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
