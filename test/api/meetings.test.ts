// Meeting links made by providers (providers.md "Video meetings"): meeting_status on every view, Google Meet for calendar_meet and Zoom for conference reaching the e-mail, the webhook and the pages; waiting for a pending link.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GOOGLE_ROUTES } from "../fakes/google.js";
import { ZOOM_ROUTES } from "../fakes/zoom.js";
import { restAt, type Json } from "../helpers/api.js";
import { dayFromToday } from "../helpers/bookings.js";
import { bookAt, eventAt, hostAt } from "../helpers/calendars.js";
import { authorize, connectThroughOAuth, hostWithGoogle, recordOf, startProviderWorld, visit, type ProviderWorld } from "../helpers/providers.js";
import { until } from "../helpers/wait.js";
import { startSmtp, type TestSmtp } from "../helpers/smtp.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";

const WAIT_SECONDS = 3;
let w: ProviderWorld;
let smtp: TestSmtp;
let receiver: Receiver;

beforeAll(async () => {
  smtp = await startSmtp();
  receiver = await startReceiver();
  w = await startProviderWorld({ SMTP_URL: smtp.url, MEETING_WAIT_SECONDS: String(WAIT_SECONDS) });
});

afterAll(async () => {
  await w?.stop();
  await smtp?.stop();
  await receiver?.close();
});

let n = 0;
const at = (day: string, time: string) => `${day}T${time}:00.000Z`;

/** A host with Google connected, a calendar_meet event on its primary calendar, and a webhook on a fresh path. */
async function meetHost(world = w): Promise<{ host: Json; event: Json; email: string; path: string }> {
  const email = `meet${++n}-${Date.now().toString(36)}@gmail.test`;
  const host = await hostWithGoogle(world, email);
  const primary = (host.connection.calendars as Json[]).find((c) => c.email === email);
  const event = await eventAt(world.base, host.key, { name: "Sync", location: { name: "calendar_meet" }, connected_calendar_id: primary.id });
  const path = `/hook-${n}`;
  const hook = await restAt(world.base, "POST", "/api/v1/webhooks", { key: host.key, body: { webhook: { url: receiver.url(path), events: ["booking.created", "booking.rescheduled", "booking.canceled"] } } });
  expect(hook.status).toBe(201);
  receiver.secret(path, hook.body.data.secret);
  return { host, event, email, path };
}

const mailTo = (address: string, subject?: RegExp) => (m: { envelope: { to: string[] }; parsed: { subject?: string } }) =>
  m.envelope.to.includes(address) && (subject === undefined || subject.test(m.parsed.subject ?? ""));

describe("calendar_meet with Google", () => {
  it("needs a writable Google calendar as the event's calendar", async () => {
    const email = `ro${++n}@gmail.test`;
    w.google.addUser(email);
    const shared = w.google.addCalendar(email, { summary: "Read only", accessRole: "reader" });
    const host = await hostWithGoogle(w, email);
    const readOnly = (host.connection.calendars as Json[]).find((c) => c.name === "Read only");
    expect(shared).toBeTruthy();
    const none = await restAt(w.base, "POST", "/api/v1/events", { key: host.key, body: { event: { name: "x", url: `x-${n}`, location: { name: "calendar_meet" } } } });
    expect([none.status, none.body.message]).toEqual([422, "calendar_meet needs a Google or Microsoft calendar selected for the event"]);
    const ro = await restAt(w.base, "POST", "/api/v1/events", { key: host.key, body: { event: { name: "x", url: `y-${n}`, location: { name: "calendar_meet" }, connected_calendar_id: readOnly.id } } });
    expect(ro.status).toBe(422);
    const primary = (host.connection.calendars as Json[]).find((c) => c.email === email);
    const ok = await eventAt(w.base, host.key, { location: { name: "calendar_meet" }, connected_calendar_id: primary.id });
    // Taking the calendar away from a calendar_meet event is refused the same way.
    const away = await restAt(w.base, "PATCH", `/api/v1/events/${ok.id}`, { key: host.key, body: { event: { connected_calendar_id: "no_calendar_selected" } } });
    expect([away.status, away.body.message]).toEqual([422, "calendar_meet needs a Google or Microsoft calendar selected for the event"]);
  });

  it("the booking answers at once with the link pending; the Meet link then reaches the e-mail, the webhook and every view", async () => {
    const { host, event, email, path } = await meetHost();
    const booked = await bookAt(w.base, host.user, event, at(dayFromToday(3), "10:00"));
    expect(booked.status).toBe(201);
    expect(booked.body.data).toMatchObject({ meeting_url: null, meeting_status: "pending" });
    const b = booked.body.data;

    const [mail] = await smtp.waitFor(1, mailTo("ada@example.com"));
    const link = /https:\/\/meet\.google\.com\/[a-z]{3}-[a-z]{4}-[a-z]{3}/.exec(mail.parsed.text ?? "")?.[0];
    expect(link).toBeDefined();
    const [message] = await receiver.waitFor(path, 1);
    expect(message.message?.data.booking).toMatchObject({ meeting_url: link, meeting_status: "ready", meeting_error: null });

    const view = await restAt(w.base, "GET", `/api/v1/public/bookings/${b.private_key}`);
    expect(view.body.data).toMatchObject({ meeting_url: link, meeting_status: "ready" });
    expect(await recordOf(w.base, host.key, event.id, b.id)).toMatchObject({ meeting_url: link, meeting_status: "ready", calendar_event_status: "synced" });
    const page = await (await fetch(`${w.base}/booking/${b.private_key}`)).text();
    expect(page).toContain(`href="${link}"`);

    // Written with a Meet request whose id is stable for the booking.
    const [ev] = w.google.events(email);
    expect(ev.conferenceData?.entryPoints?.find((p) => p.entryPointType === "video")?.uri).toBe(link);
    expect(ev.conferenceData?.createRequest?.requestId).toBe(b.id);
    expect(ev.location).toBeUndefined();
  });

  it("a reschedule keeps the same Meet link (the event is moved); a cancel deletes the event and with it the meeting", async () => {
    const { host, event, email } = await meetHost();
    const day = dayFromToday(4);
    const b = (await bookAt(w.base, host.user, event, at(day, "09:00"))).body.data;
    const ready = await until("ready", async () => {
      const v = (await restAt(w.base, "GET", `/api/v1/public/bookings/${b.private_key}`)).body.data;
      return v.meeting_status === "ready" ? v : undefined;
    });
    const moved = await restAt(w.base, "POST", `/api/v1/public/bookings/${b.private_key}/reschedule`, { body: { booking: { start_time: at(day, "11:00") } } });
    expect(moved.status).toBe(201);
    expect(moved.body.data).toMatchObject({ meeting_url: ready.meeting_url, meeting_status: "ready" });
    await until("moved", async () => (w.google.events(email).some((e) => new Date(e.start.dateTime!).toISOString() === at(day, "11:00")) ? true : undefined));
    const events = w.google.events(email);
    expect(events).toHaveLength(1);
    expect(events[0].hangoutLink).toBe(ready.meeting_url);
    await smtp.waitFor(1, (m) => m.envelope.to.includes("ada@example.com") && (m.parsed.text ?? "").includes(ready.meeting_url) && /11:00/.test(m.parsed.text ?? ""));
    await restAt(w.base, "POST", `/api/v1/public/bookings/${moved.body.data.private_key}/cancel`, { body: { booking: {} } });
    await until("deleted", async () => (w.google.events(email).length === 0 ? true : undefined));
  });

  it("a link still pending after MEETING_WAIT_SECONDS: the e-mail and webhook go without it, saying the host will send it; the pages say it follows", async () => {
    const { host, event, path } = await meetHost();
    w.google.http.fault(GOOGLE_ROUTES.eventsInsert, { hang: true, times: 1 });
    const t0 = Date.now();
    const b = (await bookAt(w.base, host.user, event, at(dayFromToday(5), "10:00"))).body.data;
    const page = await (await fetch(`${w.base}/booking/${b.private_key}`)).text();
    expect(page).toContain("The meeting link will follow by e-mail.");
    const [mail] = await smtp.waitFor(1, (m) => m.envelope.to.includes("ada@example.com") && (m.parsed.text ?? "").includes(host.user.full_name) && (m.parsed.text ?? "").includes("will send you the meeting link"));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(WAIT_SECONDS * 1000 - 200);
    expect(mail.parsed.text).not.toMatch(/meet\.google\.com/);
    const [message] = await receiver.waitFor(path, 1);
    expect(message.message?.data.booking).toMatchObject({ meeting_url: null, meeting_status: "pending" });
  });
});

describe("a Meet link Google marks pending", () => {
  let pendingWorld: ProviderWorld;
  beforeAll(async () => {
    pendingWorld = await startProviderWorld({}, { googleConference: "pending" });
  }, 60_000);
  afterAll(async () => {
    await pendingWorld?.stop();
  });

  it("is read again until Google has made it", async () => {
    const { host, event } = await meetHost(pendingWorld);
    const b = (await bookAt(pendingWorld.base, host.user, event, at(dayFromToday(3), "10:00"))).body.data;
    const ready = await until("ready", async () => {
      const v = (await restAt(pendingWorld.base, "GET", `/api/v1/public/bookings/${b.private_key}`)).body.data;
      return v.meeting_status === "ready" ? v : undefined;
    });
    expect(ready.meeting_url).toMatch(/^https:\/\/meet\.google\.com\//);
    expect(pendingWorld.google.http.calls(GOOGLE_ROUTES.eventsGet)).toBeGreaterThanOrEqual(1);
  });
});

describe("Zoom for the conference location", () => {
  /** A host with Zoom authorized as its conference integration, a conference event, and a webhook on a fresh path. */
  async function zoomHost(): Promise<{ host: Json; event: Json; email: string; path: string }> {
    const email = `zoom${++n}-${Date.now().toString(36)}@example.test`;
    w.zoom.addUser(email, { firstName: "Zed" });
    const host = await hostAt(w.base);
    await connectThroughOAuth(w, host.key, "zoom", email);
    const event = await eventAt(w.base, host.key, { name: "Call", location: { name: "conference" } });
    const path = `/zoom-hook-${n}`;
    const hook = await restAt(w.base, "POST", "/api/v1/webhooks", { key: host.key, body: { webhook: { url: receiver.url(path), events: ["booking.created"] } } });
    receiver.secret(path, hook.body.data.secret);
    return { host, event, email, path };
  }

  it("PUT zoom answers `authorize zoom first` until Zoom is authorized, which makes it the conference integration", async () => {
    const host = await hostAt(w.base);
    const put = await restAt(w.base, "PUT", "/api/v1/integrations/conference", { key: host.key, body: { integration: { provider: "zoom" } } });
    expect([put.status, put.body.message]).toEqual([422, "authorize zoom first"]);
    const calendar = await authorize(w.base, host.key, "zoom", { purpose: "calendar" });
    expect([calendar.status, calendar.body.message]).toEqual([422, "purpose is not included in the list"]);
    const email = `zara${++n}@example.test`;
    w.zoom.addUser(email);
    const started = await authorize(w.base, host.key, "zoom", { purpose: "conference" });
    expect(new URL(started.body.data.authorization_url).searchParams.get("code_challenge_method")).toBe("S256");
    // A Zoom state is Zoom's: at Google's callback it is unknown.
    const cb = new URL(w.zoom.approve(started.body.data.authorization_url, { user: email }));
    expect((await visit(`${w.base}/oauth/google/callback${cb.search}`)).status).toBe(400);
    await connectThroughOAuth(w, host.key, "zoom", email);
    const list = await restAt(w.base, "GET", "/api/v1/integrations", { key: host.key });
    expect(list.body.data).toEqual([expect.objectContaining({ name: "conference", provider: "zoom", account: email, status: "ok" })]);
    // The operator's Zoom API endpoint (ZOOM_API_URL, here the fake on loopback) is a setting, never shown to a host.
    expect(list.body.data[0].base_url).toBe("https://zoom.us");
    expect(JSON.stringify(list.body.data)).not.toContain("127.0.0.1");
    // Switching to Jitsi and back needs no new authorization.
    expect((await restAt(w.base, "PUT", "/api/v1/integrations/conference", { key: host.key, body: { integration: { provider: "jitsi" } } })).status).toBe(200);
    const back = await restAt(w.base, "PUT", "/api/v1/integrations/conference", { key: host.key, body: { integration: { provider: "zoom" } } });
    expect(back.body.data).toMatchObject({ provider: "zoom", account: email, base_url: "https://zoom.us" });
  });

  it("a booking's Zoom meeting is made by the outbox and its join_url reaches the e-mail, the webhook and the views; moved with PATCH, deleted on cancel", async () => {
    const { host, event, email, path } = await zoomHost();
    const day = dayFromToday(6);
    const booked = await bookAt(w.base, host.user, event, at(day, "14:00"));
    expect(booked.status).toBe(201);
    expect(booked.body.data).toMatchObject({ meeting_url: null, meeting_status: "pending" });
    const b = booked.body.data;
    const [mail] = await smtp.waitFor(1, (m) => m.envelope.to.includes("ada@example.com") && /Call/.test(m.parsed.subject ?? "") && (m.parsed.text ?? "").includes("zoom.us/j/"));
    const joinUrl = /https:\/\/us05web\.zoom\.us\/j\/\d+\?pwd=[\w-]+/.exec(mail.parsed.text ?? "")![0];
    const [message] = await receiver.waitFor(path, 1);
    expect(message.message?.data.booking).toMatchObject({ meeting_url: joinUrl, meeting_status: "ready" });
    expect((await restAt(w.base, "GET", `/api/v1/public/bookings/${b.private_key}`)).body.data).toMatchObject({ meeting_url: joinUrl, meeting_status: "ready" });
    expect(await recordOf(w.base, host.key, event.id, b.id)).toMatchObject({ meeting_url: joinUrl, meeting_status: "ready" });
    expect(await (await fetch(`${w.base}/booking/${b.private_key}`)).text()).toContain(joinUrl.replace(/&/g, "&amp;"));
    const mine = w.zoom.meetings().filter((m) => m.host_email === email);
    expect(mine).toHaveLength(1);
    const create = w.zoom.writes.find((x) => x.kind === "create" && x.meetingId === mine[0].id)!;
    expect(create.body).toEqual({ topic: "Call with Ada Lovelace", type: 2, start_time: `${day}T14:00:00Z`, duration: 30, timezone: expect.any(String) });

    const moved = await restAt(w.base, "POST", `/api/v1/public/bookings/${b.private_key}/reschedule`, { body: { booking: { start_time: at(day, "15:00") } } });
    expect(moved.body.data).toMatchObject({ meeting_url: joinUrl, meeting_status: "ready" });
    await until("moved at Zoom", async () => (w.zoom.meeting(mine[0].id)?.start_time === `${day}T15:00:00Z` ? true : undefined));
    expect(w.zoom.meeting(mine[0].id)!.join_url).toBe(joinUrl);
    expect(w.zoom.meetings().filter((m) => m.host_email === email)).toHaveLength(1);
    await restAt(w.base, "POST", `/api/v1/public/bookings/${moved.body.data.private_key}/cancel`, { body: { booking: {} } });
    await until("deleted at Zoom", async () => (w.zoom.meeting(mine[0].id)?.deleted ? true : undefined));
    expect(w.zoom.writes.filter((x) => x.meetingId === mine[0].id).map((x) => x.kind)).toEqual(["create", "update", "delete"]);
  });

  it("rotated refresh tokens are stored before they are used again (Zoom refuses the old one at once)", async () => {
    const { host, event, email } = await zoomHost();
    const day = dayFromToday(8);
    for (const time of ["09:00", "10:00", "11:00"]) {
      w.zoom.expireAccessToken();
      const b = (await bookAt(w.base, host.user, event, at(day, time))).body.data;
      const v = await until(`ready ${time}`, async () => {
        const r = (await restAt(w.base, "GET", `/api/v1/public/bookings/${b.private_key}`)).body.data;
        return r.meeting_status !== "pending" ? r : undefined;
      });
      expect(v.meeting_status).toBe("ready");
    }
    const grant = w.zoom.grants({ live: true }).find((g) => g.user.email === email)!;
    expect(grant.liveRefreshTokens).toHaveLength(1);
    expect((await restAt(w.base, "GET", "/api/v1/integrations", { key: host.key })).body.data[0]).toMatchObject({ status: "ok" });
  });

  it("429 with Retry-After: the meeting waits without calling Zoom, then is made", async () => {
    const { host, event } = await zoomHost();
    w.zoom.rateLimit(ZOOM_ROUTES.create, { retryAfter: 2 });
    const before = w.zoom.http.calls(ZOOM_ROUTES.create);
    const t0 = Date.now();
    const b = (await bookAt(w.base, host.user, event, at(dayFromToday(9), "09:00"))).body.data;
    const v = await until("ready", async () => {
      const r = (await restAt(w.base, "GET", `/api/v1/public/bookings/${b.private_key}`)).body.data;
      return r.meeting_status === "ready" ? r : undefined;
    });
    expect(v.meeting_url).toMatch(/zoom\.us\/j\//);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
    expect(w.zoom.http.calls(ZOOM_ROUTES.create)).toBe(before + 2);
  });

  it("a booking canceled while Zoom is still making its meeting: the run that made it deletes it, none is left at Zoom", async () => {
    const { host, event, email } = await zoomHost();
    w.zoom.http.fault(ZOOM_ROUTES.create, { delayMs: 2500 });
    const before = w.zoom.http.calls(ZOOM_ROUTES.create);
    const b = (await bookAt(w.base, host.user, event, at(dayFromToday(10), "09:00"))).body.data;
    await until("the meeting asked of Zoom", async () => (w.zoom.http.calls(ZOOM_ROUTES.create) > before ? true : undefined));
    // The cancel's own meeting run reads the booking before the meeting is recorded on it: it finds none to delete.
    const canceled = await restAt(w.base, "POST", `/api/v1/public/bookings/${b.private_key}/cancel`, { body: { booking: {} } });
    expect(canceled.status).toBe(200);
    await until("the meeting made", async () => (w.zoom.meetings({ includeDeleted: true }).some((m) => m.host_email === email) ? true : undefined));
    await until("no meeting left at Zoom", async () => (w.zoom.meetings().some((m) => m.host_email === email) ? undefined : true), { timeoutMs: 10_000 });
  });

  it("disconnecting revokes the Zoom grant and forgets the tokens", async () => {
    const { host, event, email } = await zoomHost();
    await restAt(w.base, "PATCH", `/api/v1/events/${event.id}`, { key: host.key, body: { event: { location: { name: "no_location" } } } });
    const revokes = w.zoom.http.calls(ZOOM_ROUTES.revoke);
    expect((await restAt(w.base, "DELETE", "/api/v1/integrations/conference", { key: host.key })).status).toBe(200);
    expect(w.zoom.http.calls(ZOOM_ROUTES.revoke)).toBe(revokes + 1);
    const revoke = w.zoom.http.requests.filter((r) => r.route === ZOOM_ROUTES.revoke).at(-1)!;
    expect(revoke.headers.authorization).toMatch(/^Basic /);
    expect(w.zoom.grants({ live: true }).some((g) => g.user.email === email)).toBe(false);
    expect(await w.mongo.collection("meeting_accounts").countDocuments({ account: email })).toBe(0);
    expect((await restAt(w.base, "GET", "/api/v1/integrations", { key: host.key })).body.data).toEqual([]);
  });

  it("an account that needs the host tells them like a calendar connection (error, invalid: a webhook and one e-mail each in the host's locale); authorizing again: a webhook that it is ok", async () => {
    const { host, event, email } = await zoomHost();
    expect((await restAt(w.base, "PATCH", "/api/v1/user", { key: host.key, body: { user: { locale: "de" } } })).status).toBe(200);
    const path = `/zoom-notices-${n}`;
    const hook = await restAt(w.base, "POST", "/api/v1/webhooks", { key: host.key, body: { webhook: { url: receiver.url(path), events: ["calendar.connection_changed"] } } });
    expect(hook.status).toBe(201);
    receiver.secret(path, hook.body.data.secret);
    // The host's notices about the Zoom account, which name it (the bookings below also e-mail the host, in any order).
    const toHost = (m: { envelope: { to: string[] }; parsed: { subject?: string } }) => m.envelope.to.includes(host.user.email) && (m.parsed.subject ?? "").includes(email);
    const day = dayFromToday(10);
    const shown = async () => (await restAt(w.base, "GET", "/api/v1/integrations", { key: host.key })).body.data[0];

    // Zoom fails once (HTTP 500): the account turns error; the outbox's retry makes the meeting, and it is ok again.
    w.zoom.http.fault(ZOOM_ROUTES.create, { status: 500, body: { code: 500, message: "internal error" } });
    await bookAt(w.base, host.user, event, at(day, "09:00"));
    const [failed, recovered] = await receiver.waitFor(path, 2);
    expect(failed.verifyError).toBeUndefined();
    expect(failed.message).toMatchObject({
      type: "calendar.connection_changed",
      data: { meeting_account: { provider: "zoom", account: email, status: "error", last_error: "zoom answered HTTP 500 to making the meeting" } },
    });
    expect(recovered.message!.data).toMatchObject({ meeting_account: { account: email, status: "ok", last_error: null } });
    const [mail] = await smtp.waitFor(1, toHost);
    expect(mail.parsed.subject).toBe(`Ihr Zoom-Konto ${email} kann keine Meetings anlegen`);
    expect(mail.parsed.text).toContain(`Ihr Zoom-Konto ${email} konnte kein Meeting anlegen: zoom answered HTTP 500 to making the meeting`);

    // The grant is revoked at Zoom: the account turns invalid (authorize again), an e-mail of its own kind.
    const grant = w.zoom.grants({ live: true }).find((g) => g.user.email === email)!;
    w.zoom.revokeGrant(grant.id);
    await bookAt(w.base, host.user, event, at(day, "10:00"));
    const [, , refused] = await receiver.waitFor(path, 3);
    expect(refused.message!.data).toMatchObject({ meeting_account: { account: email, status: "invalid" } });
    expect(await shown()).toMatchObject({ status: "invalid" });
    const [, again] = await smtp.waitFor(2, toHost);
    expect(again.parsed.subject).toBe(`Verbinden Sie Ihr Zoom-Konto ${email} erneut`);
    expect(again.parsed.text).toContain("Autorisieren Sie Zoom in Ihren Integrationen erneut.");

    // Authorized again: ok, and a webhook says so; nothing is e-mailed about recovering. (In English: the helper
    // reads the callback page's English words.)
    expect((await restAt(w.base, "PATCH", "/api/v1/user", { key: host.key, body: { user: { locale: "en" } } })).status).toBe(200);
    await connectThroughOAuth(w, host.key, "zoom", email);
    const [, , , reconnected] = await receiver.waitFor(path, 4);
    expect(reconnected.message!.data).toMatchObject({ meeting_account: { account: email, status: "ok", last_error: null } });
    expect(await shown()).toMatchObject({ status: "ok" });
    expect(smtp.received.filter(toHost).map((m) => m.parsed.subject)).toEqual([mail.parsed.subject, again.parsed.subject]);
  });

  it("no Zoom token in the server's logs", () => {
    const tokens = w.zoom.grants().flatMap((g) => [...g.liveAccessTokens, ...g.liveRefreshTokens]);
    expect(tokens.length).toBeGreaterThan(0);
    const logs = w.server.logs();
    for (const t of tokens) expect(logs).not.toContain(t);
    expect(logs).not.toContain("eyJzdiI6IjAwMDAw");
    expect(logs).not.toContain("fake-zoom-secret");
  });
});
