// Outbox fairness through the public surface: one account's hanging or failing webhook receivers against another account's deliveries, per-destination backoff, stuck effects in /metrics.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, useServer, type Json } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";

let server: RunningServer;
let receiver: Receiver;
let release!: () => void;
/** What a hanging receiver waits on: released only when the file is done. */
const never = new Promise<void>((r) => (release = r));
let pathSeq = 0;
let minute = 0;

beforeAll(async () => {
  receiver = await startReceiver();
  // The default outbox (16 workers, the production retry waits): the reproduction of issue 25 used it.
  server = await startServer({ OUTBOUND_ALLOW_PRIVATE: "true", EFFECTS_POLL_MS: "200", ...CLOCK_CONTROL_ENV });
  useServer(server.baseUrl);
});

afterAll(async () => {
  useServer(undefined);
  release();
  await server?.stop();
  await receiver?.close();
});

/** A webhook of `host` on a fresh receiver path that answers as `answer` says. */
async function hookOn(host: Host, answer: "hang" | "fail" | "ok"): Promise<{ id: string; path: string }> {
  const path = `/fair-${++pathSeq}`;
  if (answer === "hang") receiver.answer(path, () => ({ status: 200, hold: never }));
  if (answer === "fail") receiver.answer(path, () => ({ status: 500 }));
  const res = await rest("POST", "/webhooks", { key: host.key, body: { webhook: { url: receiver.url(path), events: ["booking.created"] } } });
  expect(res.status).toBe(201);
  receiver.secret(path, res.body.data.secret);
  return { id: res.body.data.id, path };
}

/** Books the next free quarter hour of `event` (two days ahead). */
async function bookNext(host: Host, event: Json): Promise<Json> {
  const at = new Date(`${utcIso(dayFromToday(2), "00:00")}`).getTime() + ++minute * 30 * 60_000;
  return book(host, event, { start_time: new Date(at).toISOString(), attendee_email: `fair-${minute}@example.com` });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("outbox fairness between accounts", () => {
  it("another account's delivery arrives within 5 s while 19 webhooks of one account hang on 3 bookings (57 deliveries)", async () => {
    const greedy = await newHost();
    const greedyEvent = await newEvent(greedy);
    const hanging = [];
    for (let i = 0; i < 19; i++) hanging.push(await hookOn(greedy, "hang"));
    for (let i = 0; i < 3; i++) await bookNext(greedy, greedyEvent);
    // The greedy account's deliveries have started and hang (each would for the 15 s delivery timeout).
    await receiver.waitFor(hanging[0].path, 1);
    await sleep(500);

    const other = await newHost();
    const otherEvent = await newEvent(other);
    const hook = await hookOn(other, "ok");
    for (let i = 1; i <= 2; i++) {
      await bookNext(other, otherEvent);
      const booked = Date.now();
      const got = await receiver.waitFor(hook.path, i, 5000);
      expect(got[i - 1].verifyError).toBeUndefined();
      expect(got[i - 1].at - booked).toBeLessThan(5000);
    }
    // Each hanging receiver got one delivery at most (one at a time per destination), never all three at once.
    for (const h of hanging) expect(receiver.received(h.path).length).toBeLessThanOrEqual(1);
  });

  it("a destination that hangs or fails is tried one message at a time and rests, while the account's other destinations get every message", async () => {
    const host = await newHost();
    const event = await newEvent(host);
    const hangs = await hookOn(host, "hang");
    const fails = await hookOn(host, "fail");
    const works = await hookOn(host, "ok");
    for (let i = 0; i < 3; i++) await bookNext(host, event);
    // The healthy receiver gets all three at once.
    await receiver.waitFor(works.path, 3, 5000);
    await receiver.waitFor(fails.path, 1, 5000);
    // The failing one: its first message failed, the two untried ones rest (30 s after a first failure); the first
    // one's own retry comes 5 s after it. The hanging one: still on its first message, the others wait behind it.
    // Still so two and a half seconds of the service's clock on, five of its polls of them real.
    await advanceClock(server, 1500);
    await sleep(1000);
    expect(receiver.received(fails.path)).toHaveLength(1);
    expect(receiver.received(hangs.path)).toHaveLength(1);
    const deliveries = await rest("GET", `/webhooks/${fails.id}/deliveries`, { key: host.key });
    expect(deliveries.body.data).toMatchObject([{ status_code: 500, attempt: 1 }]);
  });

  it("/metrics counts stuck effects per account: a total, the top accounts by user id, accounts per range", async () => {
    const host = await newHost();
    const event = await newEvent(host);
    const fails = await hookOn(host, "fail");
    await bookNext(host, event);
    await receiver.waitFor(fails.path, 1, 5000);
    let text = "";
    for (let i = 0; i < 50 && !text.includes(`account="${host.user.id}"`); i++) {
      await sleep(100);
      text = await (await fetch(`${server.baseUrl}/metrics`)).text();
    }
    expect(text).toMatch(new RegExp(`^scheduling_effects_stuck_top\\{account="${host.user.id}"\\} 1$`, "m"));
    expect(text).toMatch(/^scheduling_effects_stuck [1-9]\d*$/m);
    const ranges = [...text.matchAll(/^scheduling_effects_stuck_accounts\{stuck="([^"]+)"\} (\d+)$/gm)].map((m) => m[1]);
    expect(ranges).toEqual(["1", "2-9", "10-99", "100-999", "1000+"]);
    // Never more than five accounts named.
    expect([...text.matchAll(/^scheduling_effects_stuck_top\{/gm)].length).toBeLessThanOrEqual(5);
  });
});
