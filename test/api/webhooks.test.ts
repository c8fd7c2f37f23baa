// Webhooks against a real receiver on loopback: CRUD over every protocol, signed deliveries for every booking change, retries, 410, slow receivers, SSRF.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebhookService } from "../../gen/scheduling/v1/webhook_pb.js";
import { rest, restAt, sharedServer, useServer, type Json } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { allowedData, expectMissing, expectRefused, invoke, ok, PROTOCOLS, type Call, type Protocol } from "../helpers/calls.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";
import { until } from "../helpers/wait.js";

/** Outbox settings that make a test's retries and polls quick; the whole spec schedule (24 h) takes about 4 s. */
export const FAST_OUTBOX = { EFFECTS_POLL_MS: "100", EFFECTS_LEASE_MS: "2000", EFFECTS_RETRY_SCALE: "0.00005", EFFECTS_CONCURRENCY: "4" };
const ALL_EVENTS = ["booking.created", "booking.rescheduled", "booking.canceled", "booking.reminder"];

const calls = {
  create: (webhook: Json): Call => ({ service: WebhookService, rpc: "createWebhook", request: { webhook }, rest: { method: "POST", path: "/webhooks", body: { webhook } }, pick: "webhook" }),
  list: (): Call => ({ service: WebhookService, rpc: "listWebhooks", request: {}, rest: { method: "GET", path: "/webhooks" }, pick: "webhooks" }),
  get: (id: string): Call => ({ service: WebhookService, rpc: "getWebhook", request: { id }, rest: { method: "GET", path: `/webhooks/${id}` }, pick: "webhook" }),
  update: (id: string, webhook: Json): Call => ({
    service: WebhookService, rpc: "updateWebhook", request: { id, webhook }, rest: { method: "PATCH", path: `/webhooks/${id}`, body: { webhook } }, pick: "webhook",
  }),
  remove: (id: string): Call => ({ service: WebhookService, rpc: "deleteWebhook", request: { id }, rest: { method: "DELETE", path: `/webhooks/${id}` } }),
  deliveries: (id: string): Call => ({ service: WebhookService, rpc: "listWebhookDeliveries", request: { id }, rest: { method: "GET", path: `/webhooks/${id}/deliveries` }, pick: "deliveries" }),
  ping: (id: string): Call => ({ service: WebhookService, rpc: "pingWebhook", request: { id }, rest: { method: "POST", path: `/webhooks/${id}/ping` }, pick: "delivery" }),
};

let server: RunningServer;
let receiver: Receiver;
let pathSeq = 0;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startServer({ OUTBOUND_ALLOW_PRIVATE: "true", ...FAST_OUTBOX });
  useServer(server.baseUrl);
});

afterAll(async () => {
  useServer(undefined);
  const code = await server?.stop();
  await receiver?.close();
  // The server logs every message it sends; none may carry a secret.
  expect(server.logs()).not.toMatch(/whsec_/);
  expect(code).toBe(0);
});

/** A webhook of `host` on a fresh receiver path, its secret handed to the receiver. */
async function hookOn(host: Host, events = ALL_EVENTS): Promise<{ id: string; path: string; secret: string }> {
  const path = `/hook-${++pathSeq}`;
  const res = await rest("POST", "/webhooks", { key: host.key, body: { webhook: { url: receiver.url(path), events } } });
  expect(res.status).toBe(201);
  receiver.secret(path, res.body.data.secret);
  return { id: res.body.data.id, path, secret: res.body.data.secret };
}

async function deliveriesOf(host: Host, id: string): Promise<Json[]> {
  const res = await rest("GET", `/webhooks/${id}/deliveries`, { key: host.key });
  expect(res.body.message).toBe("deliveries found");
  return res.body.data;
}

describe("webhook CRUD", () => {
  let host: Host;
  let other: Host;
  beforeAll(async () => {
    host = await newHost();
    other = await newHost();
  });

  it.each(PROTOCOLS)("creates, lists, gets, updates, pings and deletes over %s", async (protocol: Protocol) => {
    const path = `/crud-${protocol}`;
    const created = await ok(protocol, host.key, calls.create({ url: receiver.url(path), events: ["booking.created", "booking.created", "booking.canceled"] }), 201, "webhook created");
    expect(created).toMatchObject({ url: receiver.url(path), events: ["booking.created", "booking.canceled"], active: true });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), "base64")).toHaveLength(32);
    expect(new Date(created.created_at).toISOString()).toBe(created.created_at);
    receiver.secret(path, created.secret);

    const listed = (await ok(protocol, host.key, calls.list(), 200, "webhooks found")) as Json[];
    const entry = listed.find((w) => w.id === created.id);
    expect(entry).toMatchObject({ url: receiver.url(path), active: true });
    expect(entry).not.toHaveProperty("secret");
    // Newest first.
    expect(listed[0].id).toBe(created.id);

    expect(await ok(protocol, host.key, calls.get(created.id), 200, "webhook found")).toMatchObject({ id: created.id, secret: created.secret });

    const updated = await ok(protocol, host.key, calls.update(created.id, { events: ["booking.rescheduled"], active: false }), 200, "webhook updated");
    expect(updated).toMatchObject({ id: created.id, events: ["booking.rescheduled"], active: false, url: receiver.url(path) });
    expect(updated.secret ?? null).toBeNull();
    // Leaving events out leaves them as they are.
    expect(await ok(protocol, host.key, calls.update(created.id, { active: true }), 200, "webhook updated")).toMatchObject({ events: ["booking.rescheduled"], active: true });

    const ping = await ok(protocol, host.key, calls.ping(created.id), 200, "ping sent");
    expect(ping).toMatchObject({ event_type: "ping", attempt: 1, status_code: 200 });
    expect(ping.error ?? null).toBeNull();
    expect(ping.message_id).toMatch(/^msg_/);
    const [got] = await receiver.waitFor(path, 1);
    expect(got.verifyError).toBeUndefined();
    expect(got.id).toBe(ping.message_id);
    expect(got.message).toMatchObject({ type: "ping", data: { webhook_id: created.id } });
    const deliveries = (await ok(protocol, host.key, calls.deliveries(created.id), 200, "deliveries found")) as Json[];
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ id: ping.id, message_id: ping.message_id, event_type: "ping", attempt: 1, status_code: 200 });
    expect(typeof deliveries[0].duration_ms).toBe("number");

    await ok(protocol, host.key, calls.remove(created.id), 200, "webhook deleted");
    expectRefused(protocol, await invoke(protocol, host.key, calls.get(created.id)), 404, "webhook not found");
  });

  it.each(PROTOCOLS)("is 404 for another account's webhook and for ids that name nothing over %s", async (protocol: Protocol) => {
    const theirs = await hookOn(other);
    for (const call of [calls.get(theirs.id), calls.update(theirs.id, { active: false }), calls.remove(theirs.id), calls.deliveries(theirs.id), calls.ping(theirs.id), calls.get("nope")]) {
      expectRefused(protocol, await invoke(protocol, host.key, call), 404, "webhook not found");
    }
    expect((await ok(protocol, host.key, calls.list())) as Json[]).not.toContainEqual(expect.objectContaining({ id: theirs.id }));
    // Untouched by the attempts above.
    expect(await ok(protocol, other.key, calls.get(theirs.id))).toMatchObject({ active: true });
  });

  it.each(PROTOCOLS)("validates url and events over %s", async (protocol: Protocol) => {
    expectMissing(protocol, await invoke(protocol, host.key, calls.create({ events: ALL_EVENTS })), { webhook: ["url"] });
    expectMissing(protocol, await invoke(protocol, host.key, calls.create({ url: receiver.url("/x") })), { webhook: ["events"] });
    const eventsRule = "events must be a non-empty list of booking.created, booking.rescheduled, booking.canceled, calendar.connection_changed, booking.reminder, booking.requested, booking.declined, booking.no_show";
    const eventsAllowed = allowedData("events", ["booking.created", "booking.rescheduled", "booking.canceled", "calendar.connection_changed", "booking.reminder", "booking.requested", "booking.declined", "booking.no_show"]);
    expectRefused(protocol, await invoke(protocol, host.key, calls.create({ url: receiver.url("/x"), events: [] })), 422, eventsRule, eventsAllowed);
    expectRefused(protocol, await invoke(protocol, host.key, calls.create({ url: receiver.url("/x"), events: ["booking.deleted"] })), 422, eventsRule, eventsAllowed);
    expectRefused(protocol, await invoke(protocol, host.key, calls.create({ url: "ftp://example.com/x", events: ALL_EVENTS })), 422, "url must be an http or https URL");
    expectRefused(protocol, await invoke(protocol, host.key, calls.create({ url: "not a url", events: ALL_EVENTS })), 422, "url must be an http or https URL");
    const mine = await hookOn(host);
    expectRefused(protocol, await invoke(protocol, host.key, calls.update(mine.id, { events: [] })), 422, eventsRule, eventsAllowed);
    expectRefused(protocol, await invoke(protocol, host.key, calls.update(mine.id, { url: "javascript:alert(1)" })), 422, "url must be an http or https URL");
  });

  it("marks answers that carry the secret no-store, and needs an API key", async () => {
    const mine = await hookOn(host);
    const got = await rest("GET", `/webhooks/${mine.id}`, { key: host.key });
    expect(got.headers.get("cache-control")).toBe("no-store");
    const created = await rest("POST", "/webhooks", { key: host.key, body: { webhook: { url: receiver.url("/ns"), events: ALL_EVENTS } } });
    expect(created.headers.get("cache-control")).toBe("no-store");
    expect((await rest("GET", "/webhooks")).status).toBe(401);
  });

  it("racing creates never make more than 20; then the 21st is refused, and a delete frees a place", async () => {
    const racer = await newHost();
    const TOO_MANY = "an account may have at most 20 webhooks";
    const create = (i: number) => calls.create({ url: receiver.url(`/race-${i}`), events: ALL_EVENTS });
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => invoke(i % 2 === 0 ? "rest" : "grpc", racer.key, create(i))));
    const made = answers.filter((a) => a.ok).length;
    expect(made).toBeLessThanOrEqual(20);
    // A 503 (the database past its deadline on a loaded machine) says nothing of the insert; the list holds the
    // created ones and at most those.
    const unavailable = answers.filter((x) => !x.ok && x.message !== TOO_MANY);
    for (const a of unavailable) expect(["service unavailable", "database unavailable"]).toContain(a.message);
    const listed = ((await ok("rest", racer.key, calls.list())) as Json[]).length;
    expect(listed).toBeGreaterThanOrEqual(made);
    expect(listed).toBeLessThanOrEqual(Math.min(20, made + unavailable.length));
    for (let n = listed; n < 20; n++) await ok("rest", racer.key, create(100 + n), 201);
    for (const protocol of PROTOCOLS) expectRefused(protocol, await invoke(protocol, racer.key, create(200)), 422, TOO_MANY);
    const all = (await ok("rest", racer.key, calls.list())) as Json[];
    expect(all).toHaveLength(20);
    await ok("rest", racer.key, calls.remove(all[5].id));
    await ok("grpc", racer.key, create(300), 201);
    expectRefused("rest", await invoke("rest", racer.key, create(301)), 422, TOO_MANY);
  });
});

describe("deliveries of booking changes", () => {
  let host: Host;
  let event: Json;
  beforeAll(async () => {
    host = await newHost({ full_name: "Grace Hopper" });
    event = await newEvent(host, { name: "Consultation", enable_guest_emails: true, guest_emails_limit: 2 });
  });

  it("sends booking.created, booking.rescheduled and booking.canceled (by booker and by host) with the spec's payload", async () => {
    const hook = await hookOn(host);
    const onlyCanceled = await hookOn(host, ["booking.canceled"]);
    const day = dayFromToday(3);
    const first = await book(host, event, { start_time: utcIso(day, "10:00"), guest_emails: ["bob@example.com"], timezone: "Europe/Paris" });
    const [created] = await receiver.waitFor(hook.path, 1);
    expect(created.verifyError).toBeUndefined();
    expect(created.message).toMatchObject({
      type: "booking.created",
      data: {
        booking: {
          id: first.id,
          status: "confirmed",
          event_name: "Consultation",
          attendee_name: "Ada Lovelace",
          attendee_email: "ada@example.com",
          event_id: event.id,
          start_time: utcIso(day, "10:00"),
          end_time: utcIso(day, "10:30"),
          guest_emails: ["bob@example.com"],
          answers: [],
          meeting_url: null,
          cancel_reason: null,
          canceled_by: null,
          // The host's whole booking, as GET /bookings/<id> answers it, its unset fields as null.
          timezone: "Europe/Paris",
          meeting_status: "none",
          next_booking_id: null,
          internal_notes: null,
        },
        event: { id: event.id, name: "Consultation" },
      },
    });
    expect(created.message!.data.event).toMatchObject({ url: expect.stringMatching(new RegExp(`/${host.user.url}/${event.url}$`)) });
    expect(new Date(created.message!.timestamp).toISOString()).toBe(created.message!.timestamp);

    const moved = await rest("POST", `/public/bookings/${first.private_key}/reschedule`, { body: { booking: { start_time: utcIso(day, "12:00") } } });
    expect(moved.status).toBe(201);
    const [, rescheduled] = await receiver.waitFor(hook.path, 2);
    expect(rescheduled.message).toMatchObject({
      type: "booking.rescheduled",
      data: { previous_booking_id: first.id, booking: { id: moved.body.data.id, start_time: utcIso(day, "12:00"), status: "confirmed" } },
    });

    const canceled = await rest("POST", `/public/bookings/${moved.body.data.private_key}/cancel`, { body: { booking: { reason: "ill" } } });
    expect(canceled.status).toBe(200);
    const [, , byBooker] = await receiver.waitFor(hook.path, 3);
    expect(byBooker.message).toMatchObject({ type: "booking.canceled", data: { booking: { id: moved.body.data.id, status: "canceled", cancel_reason: "ill", canceled_by: "booker" } } });

    const second = await book(host, event, { start_time: utcIso(day, "15:00") });
    await receiver.waitFor(hook.path, 4);
    expect((await rest("PATCH", `/bookings/${second.id}`, { key: host.key, body: { booking: { internal_notes: "call first" } } })).status).toBe(200);
    const listed = await rest("GET", `/events/${event.id}/bookings?date_from=${day}&date_to=${day}`, { key: host.key });
    const record = (listed.body.data.records as Json[]).find((r) => r.id === second.id);
    expect(record.internal_notes).toBe("call first");
    const byHostRes = await rest("POST", `/bookings/${second.id}/cancel`, { key: host.key, body: { booking: { reason: "away" } } });
    expect(byHostRes.status).toBe(200);
    const list = await receiver.waitFor(hook.path, 5);
    expect(list[4].message).toMatchObject({ type: "booking.canceled", data: { booking: { id: second.id, cancel_reason: "away", canceled_by: "host", internal_notes: "call first" } } });
    // Every field of the host's record is in data.booking (issue 25: internal_notes was missing).
    const sent = list[4].message!.data.booking as Json;
    for (const field of Object.keys(record)) expect(Object.keys(sent), field).toContain(field);

    // Every message its own id; the canceled-only webhook got exactly the two cancels.
    expect(new Set(list.map((r) => r.id)).size).toBe(5);
    const cancels = await receiver.waitFor(onlyCanceled.path, 2);
    expect(cancels.map((r) => r.message?.type)).toEqual(["booking.canceled", "booking.canceled"]);
    const deliveries = await until("5 deliveries listed", () => deliveriesOf(host, hook.id), { accept: (d) => d.length === 5 });
    expect(deliveries.map((d: Json) => d.event_type)).toEqual(["booking.canceled", "booking.created", "booking.canceled", "booking.rescheduled", "booking.created"]);
    expect(deliveries.every((d: Json) => d.status_code === 200 && d.attempt === 1)).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received(hook.path)).toHaveLength(5);
  });

  it("a video meeting's booking carries its meeting_url, the same after a reschedule", async () => {
    const videoHost = await newHost();
    expect((await rest("PUT", "/integrations/conference", { key: videoHost.key, body: { integration: { provider: "jitsi", base_url: "https://meet.example.org" } } })).status).toBe(200);
    const videoEvent = await newEvent(videoHost, { location: { name: "conference" } });
    const hook = await hookOn(videoHost, ["booking.created", "booking.rescheduled"]);
    const day = dayFromToday(4);
    const made = await book(videoHost, videoEvent, { start_time: utcIso(day, "10:00") });
    expect(made.meeting_url).toMatch(/^https:\/\/meet\.example\.org\/[0-9a-f]{32,}$/);
    const moved = await rest("POST", `/public/bookings/${made.private_key}/reschedule`, { body: { booking: { start_time: utcIso(day, "11:00") } } });
    expect(moved.status).toBe(201);
    const [created, rescheduled] = await receiver.waitFor(hook.path, 2);
    expect(created.message).toMatchObject({ type: "booking.created", data: { booking: { id: made.id, meeting_url: made.meeting_url } } });
    expect(rescheduled.message).toMatchObject({ type: "booking.rescheduled", data: { booking: { id: moved.body.data.id, meeting_url: made.meeting_url } } });
  });

  it("retries a 500 with the same webhook-id, and a webhook switched off gets nothing", async () => {
    const flaky = await hookOn(host);
    receiver.answer(flaky.path, (n) => ({ status: n === 0 ? 500 : 204 }));
    const off = await hookOn(host);
    await rest("PATCH", `/webhooks/${off.id}`, { key: host.key, body: { webhook: { active: false } } });
    await book(host, event, { start_time: utcIso(dayFromToday(4), "09:00") });
    const [a, b] = await receiver.waitFor(flaky.path, 2);
    expect(a.id).toBe(b.id);
    expect(b.verifyError).toBeUndefined();
    const deliveries = await until("2 deliveries listed", () => deliveriesOf(host, flaky.id), { accept: (d) => d.length === 2 });
    expect(deliveries.map((d: Json) => [d.attempt, d.status_code, d.message_id])).toEqual([[2, 204, a.id], [1, 500, a.id]]);
    expect(deliveries[1].error).toMatch(/500/);
    expect(receiver.received(off.path)).toHaveLength(0);
  });

  it("switches a webhook off on 410 at once, and after the last failed retry", async () => {
    const gone = await hookOn(host);
    receiver.answer(gone.path, () => ({ status: 410 }));
    const broken = await hookOn(host);
    receiver.answer(broken.path, () => ({ status: 503 }));
    await book(host, event, { start_time: utcIso(dayFromToday(5), "09:00") });
    await receiver.waitFor(gone.path, 1);
    const goneHook = await until("the webhook answered 410 switched off", () => rest("GET", `/webhooks/${gone.id}`, { key: host.key }), { accept: (r) => r.body.data.active === false });
    expect(goneHook.body.data.active).toBe(false);
    // A ping answered 410 switches it off too.
    const pinged = await hookOn(host);
    receiver.answer(pinged.path, () => ({ status: 410 }));
    const pong = await rest("POST", `/webhooks/${pinged.id}/ping`, { key: host.key });
    expect([pong.status, pong.body.data.status_code]).toEqual([200, 410]);
    expect((await rest("GET", `/webhooks/${pinged.id}`, { key: host.key })).body.data.active).toBe(false);
    // One try plus the spec's seven retries, all with one id.
    const tries = await receiver.waitFor(broken.path, 8, 30_000);
    expect(new Set(tries.map((t) => t.id)).size).toBe(1);
    const brokenHook = await until("the webhook that kept failing switched off", () => rest("GET", `/webhooks/${broken.id}`, { key: host.key }), { accept: (r) => r.body.data.active === false });
    expect(brokenHook.body.data.active).toBe(false);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received(gone.path)).toHaveLength(1);
    expect(receiver.received(broken.path)).toHaveLength(8);
  });

  it("a slow receiver does not hold up another webhook's delivery", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const slow = await hookOn(host);
    receiver.answer(slow.path, () => ({ status: 200, hold: held }));
    const quick = await hookOn(host);
    await book(host, event, { start_time: utcIso(dayFromToday(6), "09:00") });
    await receiver.waitFor(slow.path, 1);
    // The slow one is still waiting for its answer while the quick one is delivered.
    await receiver.waitFor(quick.path, 1);
    expect((await deliveriesOf(host, slow.id)).length).toBe(0);
    release();
    await until("the slow delivery listed", () => deliveriesOf(host, slow.id), { accept: (d) => d.length === 1 });
  });
});

describe("metrics", () => {
  it("show the outbox: pending effects, the oldest one's age, attempts by kind and outcome", async () => {
    const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(text).toMatch(/^scheduling_effects_pending \d+$/m);
    expect(text).toMatch(/^scheduling_effects_oldest_pending_age_seconds [\d.e+-]+$/m);
    // The tests above made successful tries, retries and given-up ones.
    for (const outcome of ["ok", "retry", "failed"]) expect(text).toMatch(new RegExp(`^scheduling_effect_attempts_total\\{kind="webhook",outcome="${outcome}"\\} [1-9]\\d*$`, "m"));
  });
});

describe("SSRF (the shared server runs without OUTBOUND_ALLOW_PRIVATE)", () => {
  it.each(["http://127.0.0.1:9/x", "http://localhost/x", "http://10.1.2.3/x", "http://169.254.169.254/latest/meta-data", "http://[::1]/x", "http://[::ffff:127.0.0.1]/x", "http://100.64.0.1/x", "http://[fe80::1]/x"])(
    "refuses %s at create",
    async (url) => {
      const shared = sharedServer().baseUrl;
      const { key } = await fixturesAt(shared).newAccount({ full_name: "S" });
      const res = await restAt(shared, "POST", "/api/v1/webhooks", { key, body: { webhook: { url, events: ALL_EVENTS } } });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe("url resolves to a private or reserved address; the service reaches such addresses only with OUTBOUND_ALLOW_PRIVATE=true");
    },
  );
});
