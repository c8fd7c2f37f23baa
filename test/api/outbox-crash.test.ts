// The outbox across process deaths: a server killed mid-delivery, or stopped with SIGTERM, loses no webhook message; the next one sends it with the same id, before its destination's later ones.
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
    // The retry's record is written after its answer came: waited for, not raced.
    const deliveries: Json[] = await until("both tries recorded", async () => (await rest("GET", `/webhooks/${hookId}/deliveries`, { key: host.key })).body.data, {
      timeoutMs: 10_000,
      everyMs: 100,
      accept: (d: Json[]) => d.length >= 2,
    });
    // Newest first: the retry, and the cut try, recorded by the replica that took it over.
    expect(deliveries.map((d: Json) => [d.attempt, d.status_code, d.message_id])).toEqual([
      [2, 200, cut.id],
      [1, null, cut.id],
    ]);
    expect(deliveries[1].error).toBe("interrupted: the service running it stopped before it finished");
    expect(Date.parse(deliveries[1].attempted_at)).toBeLessThanOrEqual(cut.at + 50);
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

describe("a destination's queued messages at shutdown", () => {
  it("SIGTERM cuts a delivery with more queued behind it: the next server sends the cut one first, then the others in order, each once and on its first try", async () => {
    const current = servers[servers.length - 1];
    const { host, event, hookId } = await hostWithHook("/termed-queue");
    receiver.answer("/termed-queue", (n) => (n === 0 ? { status: 200, hold: new Promise<void>(() => undefined) } : { status: 204 }));
    const booked = [await book(host, event, { start_time: utcIso(dayFromToday(4), "08:00") })];
    await receiver.waitFor("/termed-queue", 1);
    for (let n = 1; n <= 3; n++) {
      booked.push(await book(host, event, { start_time: utcIso(dayFromToday(4), `${String(8 + n).padStart(2, "0")}:00`) }));
      // Planned (owed now: the first one running, the others due) before the next booking: each is due after the one before.
      await until("the message planned", async () => (await (await fetch(`${current.baseUrl}/metrics`)).text()).match(/^scheduling_effects_pending (\d+)$/m)?.[1], {
        timeoutMs: 20_000,
        everyMs: 50,
        accept: (pending) => pending === String(n + 1),
      });
    }
    expect(await current.stop("SIGTERM")).toBe(0);
    await serve();
    const got = await receiver.waitFor("/termed-queue", 5, 20_000);
    // The first one again (its outcome was unknown), then the ones that waited, in order and once each.
    const bookingIdOf = (r: (typeof got)[number]) => (r.message?.data.booking as { id?: string } | undefined)?.id;
    expect(got.map(bookingIdOf)).toEqual([booked[0].id, ...booked.map((b) => b.id)]);
    expect(got[1].id).toBe(got[0].id);
    const deliveries: Json[] = await until("every delivery recorded", async () => (await rest("GET", `/webhooks/${hookId}/deliveries`, { key: host.key })).body.data, {
      timeoutMs: 10_000,
      everyMs: 100,
      accept: (d: Json[]) => d.length >= 4,
    });
    // One try each: none of those given back counts one (the cut one was never answered, so it is not one either).
    expect(deliveries.map((d) => [d.message_id, d.attempt]).reverse()).toEqual(got.slice(1).map((r) => [r.id, 1]));
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
