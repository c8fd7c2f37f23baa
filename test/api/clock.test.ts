// The test server's clock (CLOCK_CONTROL, operations.md "Moving the clock in tests"): POST /admin/clock moves it with the admin token, is not there when off, and what the service decides by time follows it (an Idempotency-Key's day).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseUrl, restAt } from "../helpers/api.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { fixturesAt, type Account } from "../helpers/fixtures.js";
import { ADMIN_TOKEN, startServer, type RunningServer } from "../helpers/server.js";

let server: RunningServer;

beforeAll(async () => {
  server = await startServer({ ...CLOCK_CONTROL_ENV });
});

afterAll(async () => {
  await server?.stop();
});

const move = (base: string, body: unknown, token: string | null = ADMIN_TOKEN) =>
  fetch(`${base}/admin/clock`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token === null ? {} : { "x-admin-token": token }) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as { message: string; data: { now?: string; ahead_ms?: number } } }));

describe("POST /admin/clock", () => {
  it("is not there on a server without CLOCK_CONTROL (the shared one): 404, whatever the token", async () => {
    const res = await move(baseUrl(), { advance_ms: 1000 });
    expect(res.status).toBe(404);
  });

  it("moves the clock forward by advance_ms and answers the time it now reads", async () => {
    const before = Date.now();
    const res = await move(server.baseUrl, { advance_ms: 3_600_000 });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe("clock moved");
    const now = Date.parse(String(res.body.data.now));
    expect(now - before).toBeGreaterThanOrEqual(3_600_000);
    expect(now - Date.now()).toBeLessThanOrEqual(res.body.data.ahead_ms ?? 0);
    // Again: the moves add up.
    const [later] = await advanceClock(server, 60_000);
    expect(later.getTime() - Date.now()).toBeGreaterThanOrEqual(3_660_000 - 1000);
  });

  it("refuses a caller without the admin token, a missing or bad advance_ms, and a move back", async () => {
    expect((await move(server.baseUrl, { advance_ms: 1 }, null)).status).toBe(401);
    expect((await move(server.baseUrl, { advance_ms: 1 }, "wrong")).status).toBe(401);
    expect((await move(server.baseUrl, {})).status).toBe(400);
    expect((await move(server.baseUrl, "not json")).status).toBe(400);
    for (const advance of [-1, 1.5, "60000", 10 ** 12]) {
      const res = await move(server.baseUrl, { advance_ms: advance });
      expect(res.status, String(advance)).toBe(422);
      expect(res.body.message).toMatch(/^advance_ms must be a whole number/);
    }
  });
});

describe("what the service decides by time follows its clock", () => {
  let host: Account;
  beforeAll(async () => {
    host = await fixturesAt(server.baseUrl).newAccount();
  });

  it("an Idempotency-Key answers its first request for a day, and once the day is over the same request is a new one", async () => {
    const key = `clock-${randomUUID()}`;
    const create = () => restAt(server.baseUrl, "POST", "/api/v1/questions", { key: host.key, headers: { "Idempotency-Key": key }, body: { question: { title: "Topic?", question_type: "one_line" } } });
    const first = await create();
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const repeat = await create();
    expect(repeat.body.data.id).toBe(first.body.data.id);
    // 23 hours on, still the kept answer; past the day, a question of its own.
    await advanceClock(server, 23 * 3_600_000);
    expect((await create()).body.data.id).toBe(first.body.data.id);
    await advanceClock(server, 3_600_000 + 60_000);
    const after = await create();
    expect(after.status, JSON.stringify(after.body)).toBe(201);
    expect(after.body.data.id).not.toBe(first.body.data.id);
  });

});
