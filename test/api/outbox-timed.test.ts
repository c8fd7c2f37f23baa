// Timed deliveries (the outbox side of reminders): effects planned outside a booking change (src/outbox/schedule.ts) are sent by the real service within a poll of their due time, once, and never when dropped first; messages counted at a real webhook receiver.
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outboxConnection } from "../../src/db/outboxConnection.js";
import { dropPendingEffects, scheduleEffects } from "../../src/outbox/schedule.js";
import { rest, useServer } from "../helpers/api.js";
import { newHost, type Host } from "../helpers/bookings.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";
import { until } from "../helpers/wait.js";

let db: TestDatabase;
let server: RunningServer;
let receiver: Receiver;
let host: Host;
let hookId: string;
const PATH = "/timed";

beforeAll(async () => {
  db = await startDatabase();
  receiver = await startReceiver();
  // The default poll (1 s): timed effects are claimed by it, nothing wakes the worker for them.
  server = await startServer({ MONGODB_URI: db.uri, OUTBOUND_ALLOW_PRIVATE: "true" });
  useServer(server.baseUrl);
  // The planner (here the test, later the reminders feature) writes to the service's database.
  await mongoose.connect(db.uri);
  // The effects are on the outbox's own connection (src/db/outboxConnection.ts); mongoose.disconnect closes it too.
  await outboxConnection.openUri(db.uri);
  host = await newHost();
  const res = await rest("POST", "/webhooks", { key: host.key, body: { webhook: { url: receiver.url(PATH), events: ["booking.created"] } } });
  expect(res.status).toBe(201);
  hookId = res.body.data.id;
  receiver.secret(PATH, res.body.data.secret);
});

afterAll(async () => {
  useServer(undefined);
  await mongoose.disconnect();
  await server?.stop();
  await receiver?.close();
  await db?.kill();
});

/** One webhook message to the host's webhook, due at `dueAt`, as a kind would plan it. */
const message = (key: string, dueAt: Date) => ({
  key,
  webhookId: hookId,
  destination: `webhook:${hookId}`,
  dueAt,
  payload: { type: "booking.created", timestamp: new Date().toISOString(), data: { note: key } },
});

const notes = () => receiver.received(PATH).map((r) => (r.message?.data as { note?: string } | undefined)?.note);

describe("effects planned for later", () => {
  it("are sent within a poll of their due time, not before, and once however often they are planned", async () => {
    const dueAt = new Date(Date.now() + 3000);
    const owner = { userId: host.user.id, bookingId: null };
    const [id] = await scheduleEffects("webhook", owner, "test:reminder-1", [message("r1", dueAt)], new Date());
    // Planned again (a retry, another replica): the same id, nothing new.
    expect(await scheduleEffects("webhook", owner, "test:reminder-1", [message("r1", dueAt)], new Date())).toEqual([id]);
    const [got] = await receiver.waitFor(PATH, 1, 20_000);
    expect(got.id).toBe(id);
    expect(got.message?.data).toEqual({ note: "r1" });
    expect(got.at).toBeGreaterThanOrEqual(dueAt.getTime());
    // EFFECTS_POLL_MS is 1 s; the rest is slack for a loaded machine.
    expect(got.at - dueAt.getTime()).toBeLessThan(5000);
    // The service records the delivery after the receiver's answer came back, so the list may lag the message a moment.
    const listed = async () => (await rest("GET", `/webhooks/${hookId}/deliveries`, { key: host.key })).body.data.map((d: { message_id: string; attempt: number; status_code: number }) => [d.message_id, d.attempt, d.status_code]);
    expect(await until("the delivery listed", listed, { accept: (rows) => rows.length > 0, timeoutMs: 10_000 })).toEqual([[id, 1, 200]]);
  });

  it("dropped before their time are never sent; the others of the same time are", async () => {
    const dueAt = new Date(Date.now() + 2000);
    const owner = { userId: host.user.id, bookingId: null };
    const [dropped] = await scheduleEffects("webhook", owner, "test:reminder-2", [message("dropped", dueAt)], new Date());
    await scheduleEffects("webhook", owner, "test:reminder-3", [message("kept", dueAt)], new Date());
    await dropPendingEffects([dropped]);
    await receiver.waitFor(PATH, 2, 20_000);
    // Both were due together: had the dropped one been sent, it would have come with the kept one. A poll and a
    // half more shows nothing else comes.
    await new Promise((r) => setTimeout(r, 1500));
    expect(notes()).toEqual(["r1", "kept"]);
    const deliveries = await rest("GET", `/webhooks/${hookId}/deliveries`, { key: host.key });
    expect(deliveries.body.data.map((d: { message_id: string }) => d.message_id)).not.toContain(dropped);
  });

  it("count in the backlog metrics only once due: a message due in days is not owed now, a running one is", async () => {
    const owner = { userId: host.user.id, bookingId: null };
    const [later] = await scheduleEffects("webhook", owner, "test:backlog-later", [message("later", new Date(Date.now() + 2 * 24 * 3600_000))], new Date());
    // The next message is held by the receiver: it stays running (leased) until released.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const sent = receiver.received(PATH).length;
    receiver.answer(PATH, (n) => (n === sent ? { status: 200, hold: held } : { status: 200 }));
    await scheduleEffects("webhook", owner, "test:backlog-now", [message("now", new Date())], new Date());
    await receiver.waitFor(PATH, sent + 1, 20_000);
    const backlog = async () => {
      const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
      const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]);
      return { pending: read("scheduling_effects_pending"), age: read("scheduling_effects_oldest_pending_age_seconds") };
    };
    const running = await backlog();
    expect(running.pending).toBe(1);
    // Owed since it was planned, moments ago (the one due in days does not count, nor its age).
    expect(running.age).toBeLessThan(60);
    release();
    await until("the running one done", async () => (await backlog()).pending === 0, { timeoutMs: 20_000, everyMs: 200 });
    expect(await backlog()).toEqual({ pending: 0, age: 0 });
    await dropPendingEffects([later]);
  });
});
