// Exactly one delivery per message while nothing crashes (issue 29): a burst of bookings and cancels over several hosts, every e-mail and webhook message counted by its id at a real SMTP server and receiver.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, useServer, type Json } from "../helpers/api.js";
import { dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { startSmtp, type TestSmtp } from "../helpers/smtp.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";
import { until } from "../helpers/wait.js";

let server: RunningServer;
let smtp: TestSmtp;
let receiver: Receiver;

beforeAll(async () => {
  smtp = await startSmtp();
  receiver = await startReceiver();
  // The outbox's default settings: the duplicates showed with them.
  server = await startServer({ SMTP_URL: smtp.url, OUTBOUND_ALLOW_PRIVATE: "true" });
  useServer(server.baseUrl);
});

afterAll(async () => {
  useServer(undefined);
  await server?.stop();
  await receiver?.close();
  await smtp?.stop();
});

/** Ids that came more than once, with how often. */
function repeated(ids: readonly string[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return Object.fromEntries([...counts].filter(([, n]) => n > 1));
}

async function hostWithHook(path: string): Promise<{ host: Host; event: Json }> {
  const host = await newHost();
  const event = await newEvent(host);
  const res = await rest("POST", "/webhooks", { key: host.key, body: { webhook: { url: receiver.url(path), events: ["booking.created", "booking.canceled"] } } });
  expect(res.status).toBe(201);
  receiver.secret(path, res.body.data.secret);
  return { host, event };
}

/** The host's confirmed booking at `start` by `email`, as the host's list shows it (with the booker's private key). */
async function bookingAt(h: { host: Host; event: Json }, start: string, email: string): Promise<Json | undefined> {
  const list = await rest("GET", `/events/${h.event.id}/bookings`, { key: h.host.key });
  return (list.body.data?.records as Json[] | undefined)?.find((r) => Date.parse(r.start_time) === Date.parse(start) && r.attendee_email === email && r.status === "confirmed");
}

describe("a burst of bookings and cancels on one replica", () => {
  it("sends every e-mail and every webhook message once", async () => {
    const HOSTS = 6;
    const PER_HOST = 10;
    const hosts = await Promise.all(Array.from({ length: HOSTS }, (_, i) => hostWithHook(`/once-${i}`)));
    // Each booking is canceled the moment it is confirmed, by its booker, as in the burst. A 503 (the
    // loaded test machine's database answering late) is tried again under the same Idempotency-Key, as a client would.
    const write = async (path: string, body: Json, key: string) => {
      for (let tries = 1; ; tries++) {
        const res = await rest("POST", path, { body, headers: { "Idempotency-Key": key } });
        if (res.status !== 503 || tries === 3) return res;
      }
    };
    const bookAndCancel = async (h: { host: Host; event: Json }, n: number) => {
      const start = utcIso(dayFromToday(2 + Math.floor(n / 24)), `${String(n % 24).padStart(2, "0")}:00`);
      const res = await write(`/public/users/${h.host.user.url}/events/${h.event.url}/bookings`, { booking: { start_time: start, attendee_name: "Ada", attendee_email: `ada-${n}@example.com` } }, `book-${n}-${randomUUID()}`);
      // A 503 may hide a booking that was made (its cells stay, docs/guarantees.md), and the retry then finds the time
      // taken by that booking: as a client would, the test looks in the host's list before calling it lost.
      const made = res.status === 201 ? res.body.data : await bookingAt(h, start, `ada-${n}@example.com`);
      expect({ status: made ? 201 : res.status, body: made ? undefined : res.body }).toEqual({ status: 201, body: undefined });
      const cancel = await write(`/public/bookings/${made.private_key}/cancel`, { booking: { cancel_reason: "burst" } }, `cancel-${n}-${randomUUID()}`);
      expect({ status: cancel.status, body: cancel.status === 200 ? undefined : cancel.body }).toEqual({ status: 200, body: undefined });
    };
    await Promise.all(hosts.map(async (h) => {
      for (let n = 0; n < PER_HOST; n++) await bookAndCancel(h, n);
    }));

    // Booker and host, for the booking and for its cancel; one webhook message for each.
    const mails = HOSTS * PER_HOST * 4;
    const hooks = HOSTS * PER_HOST * 2;
    // How fast they come is bench/outbox.ts's figure; here only how often. At load average 40 they took over 60 s.
    await smtp.waitFor(mails, () => true, 180_000);
    await until("every webhook message", () => hosts.reduce((n, _, i) => n + receiver.received(`/once-${i}`).length, 0) >= hooks, { timeoutMs: 180_000 });
    // A second copy comes a few hundred milliseconds after the first: wait for the outbox to have nothing left, twice.
    let idle = 0;
    await until("the outbox drained", async () => {
      const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
      idle = /^scheduling_effects_pending 0$/m.test(text) ? idle + 1 : 0;
      return idle >= 3;
    }, { everyMs: 300, timeoutMs: 60_000 });

    const messageIds = smtp.received.map((m) => m.parsed.messageId ?? "");
    const webhookIds = hosts.flatMap((_, i) => receiver.received(`/once-${i}`).map((r) => r.id));
    expect({ mails: messageIds.length, repeated: repeated(messageIds) }).toEqual({ mails, repeated: {} });
    expect({ hooks: webhookIds.length, repeated: repeated(webhookIds) }).toEqual({ hooks, repeated: {} });
  }, 480_000);
});
