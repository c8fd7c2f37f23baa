// Outbox test helpers: a host whose webhook goes to a test receiver, and waiting until the outbox has nothing left.
import { expect } from "vitest";
import { rest, type Json } from "./api.js";
import { newEvent, newHost, type Host } from "./bookings.js";
import { until } from "./wait.js";
import type { Receiver } from "./webhookReceiver.js";

/** A new host with an event and a webhook for `events` on `receiver` at `path` (its secret registered there). */
export async function hostWithHook(receiver: Receiver, path: string, events: readonly string[] = ["booking.created"]): Promise<{ host: Host; event: Json }> {
  const host = await newHost();
  const event = await newEvent(host);
  const res = await rest("POST", "/webhooks", { key: host.key, body: { webhook: { url: receiver.url(path), events } } });
  expect(res.status).toBe(201);
  receiver.secret(path, res.body.data.secret);
  return { host, event };
}

/** Until the service's outbox has no effect pending, three scrapes of /metrics in a row (every record and delete written). */
export async function untilOutboxDrained(baseUrl: string): Promise<void> {
  let idle = 0;
  await until("the outbox drained", async () => {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    idle = /^scheduling_effects_pending 0$/m.test(text) ? idle + 1 : 0;
    return idle >= 3;
  }, { everyMs: 300, timeoutMs: 60_000 });
}
