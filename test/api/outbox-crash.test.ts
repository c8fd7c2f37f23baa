// The outbox across process deaths: a server killed mid-delivery, or stopped with SIGTERM, loses no webhook message; the next one sends it with the same id.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, useServer, type Json } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";
import { until } from "../helpers/wait.js";

const LEASE_MS = 1500;

let db: TestDatabase;
let receiver: Receiver;
const servers: RunningServer[] = [];

async function serve(allowPrivate = true): Promise<RunningServer> {
  const s = await startServer({ MONGODB_URI: db.uri, OUTBOUND_ALLOW_PRIVATE: String(allowPrivate), EFFECTS_POLL_MS: "100", EFFECTS_LEASE_MS: String(LEASE_MS), EFFECTS_RETRY_SCALE: "0.001" });
  servers.push(s);
  useServer(s.baseUrl);
  return s;
}

beforeAll(async () => {
  db = await startDatabase();
  receiver = await startReceiver();
});

afterAll(async () => {
  useServer(undefined);
  for (const s of servers) await s.stop("SIGKILL");
  await receiver?.close();
  await db?.kill();
});

async function hostWithHook(path: string): Promise<{ host: Host; event: Json; hookId: string }> {
  const host = await newHost();
  const event = await newEvent(host);
  const res = await rest("POST", "/webhooks", { key: host.key, body: { webhook: { url: receiver.url(path), events: ["booking.created"] } } });
  expect(res.status).toBe(201);
  receiver.secret(path, res.body.data.secret);
  return { host, event, hookId: res.body.data.id };
}

// Each of these starts two servers, which on the shared, loaded test machine took up to a minute each.
describe("a delivery cut short by the end of its process", () => {
  it("is sent again by another server within the lease, with the same webhook-id, and the history shows both tries", async () => {
    const first = await serve();
    const { host, event, hookId } = await hostWithHook("/killed");
    // The first try never gets an answer: the server dies while waiting for it.
    receiver.answer("/killed", (n) => (n === 0 ? { status: 200, hold: new Promise<void>(() => undefined) } : { status: 200 }));
    await book(host, event, { start_time: utcIso(dayFromToday(2), "10:00") });
    const [cut] = await receiver.waitFor("/killed", 1);
    const killedAt = Date.now();
    expect(await first.stop("SIGKILL")).toBeNull();
    // Another replica takes the delivery over once the lease runs out (at once if that was before it started).
    await serve();
    const readyAt = Date.now();

    const [, again] = await receiver.waitFor("/killed", 2, 20_000);
    expect(again.id).toBe(cut.id);
    expect(again.verifyError).toBeUndefined();
    expect(again.message).toEqual(cut.message);
    // The lease was renewed until the kill, so it ran out at most LEASE_MS later; the poll adds up to 100 ms.
    expect(again.at).toBeLessThan(Math.max(killedAt + LEASE_MS, readyAt) + 1000);
    const deliveries = await rest("GET", `/webhooks/${hookId}/deliveries`, { key: host.key });
    // Newest first: the retry, and the cut try, recorded by the replica that took it over.
    expect(deliveries.body.data.map((d: Json) => [d.attempt, d.status_code, d.message_id])).toEqual([
      [2, 200, cut.id],
      [1, null, cut.id],
    ]);
    expect(deliveries.body.data[1].error).toBe("interrupted: the service running it stopped before it finished");
    expect(Date.parse(deliveries.body.data[1].attempted_at)).toBeLessThanOrEqual(cut.at + 50);
  }, 150_000);

  it("SIGTERM gives the lease of an unfinished delivery back, and the next server sends it at once", async () => {
    const current = servers[servers.length - 1];
    const { host, event } = await hostWithHook("/termed");
    receiver.answer("/termed", (n) => (n === 0 ? { status: 200, hold: new Promise<void>(() => undefined) } : { status: 204 }));
    await book(host, event, { start_time: utcIso(dayFromToday(2), "12:00") });
    const [cut] = await receiver.waitFor("/termed", 1);
    // The server waits out its shutdown grace for the delivery, then aborts it and hands it back.
    expect(await current.stop("SIGTERM")).toBe(0);
    expect(current.logs()).toMatch(/"msg":"stopped"/);
    await serve();
    const [, again] = await receiver.waitFor("/termed", 2, 20_000);
    expect(again.id).toBe(cut.id);
  }, 150_000);
});

describe("the address check at delivery", () => {
  it("refuses a private address when it is time to send, not only when the webhook was created", async () => {
    // Created by a server that allows private addresses, delivered by one that does not (same database).
    const { host, event, hookId } = await hostWithHook("/strict");
    await servers[servers.length - 1].stop("SIGTERM");
    await serve(false);
    await book(host, event, { start_time: utcIso(dayFromToday(3), "10:00") });
    const deliveries: Json[] = await until("a delivery attempt listed", async () => (await rest("GET", `/webhooks/${hookId}/deliveries`, { key: host.key })).body.data, {
      timeoutMs: 10_000,
      everyMs: 100,
      accept: (d: Json[]) => d.length > 0,
    });
    // Oldest last: the first try, and every retry since, refused before anything was sent.
    expect(deliveries.at(-1)).toMatchObject({ event_type: "booking.created", attempt: 1 });
    for (const d of deliveries) expect(d).toMatchObject({ status_code: null, error: expect.stringMatching(/is a private or reserved address$/) });
    expect(receiver.received("/strict")).toHaveLength(0);
  }, 150_000);
});
