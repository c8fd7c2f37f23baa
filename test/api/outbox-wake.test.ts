// The outbox's wake (Deps.wake): a booking written by either booking service wakes this replica's worker, so its effects go out without waiting for the poll.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, useServer } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/fixtures.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";

let server: RunningServer;
let receiver: Receiver;
let host: Host;
const PATH = "/woken";
/** The poll: far longer than the test, so only a wake can make the worker look before it. */
const POLL_MS = 600_000;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startServer({ OUTBOUND_ALLOW_PRIVATE: "true", EFFECTS_POLL_MS: String(POLL_MS) });
  useServer(server.baseUrl);
  host = await newHost();
  const res = await rest("POST", "/webhooks", { key: host.key, body: { webhook: { url: receiver.url(PATH), events: ["booking.created", "booking.canceled"] } } });
  expect(res.status).toBe(201);
  receiver.secret(PATH, res.body.data.secret);
}, 180_000);

afterAll(async () => {
  useServer(undefined);
  await server?.stop();
  await receiver?.close();
});

describe("a booking write", () => {
  it("wakes the worker: the booker's booking and the host's cancel are sent long before the next poll", async () => {
    const event = await newEvent(host);
    const booking = await book(host, event, { start_time: utcIso(dayFromToday(3), "10:00") });
    const [created] = await receiver.waitFor(PATH, 1, 30_000);
    expect(created.message?.type).toBe("booking.created");
    const canceled = await rest("POST", `/bookings/${booking.id}/cancel`, { key: host.key, body: { booking: { reason: "no longer needed" } } });
    expect(canceled.status).toBe(200);
    const [, second] = await receiver.waitFor(PATH, 2, 30_000);
    expect(second.message?.type).toBe("booking.canceled");
  }, 90_000);
});
