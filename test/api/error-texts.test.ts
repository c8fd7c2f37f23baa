// What hosts read of an outside system's failure (a webhook delivery's error, a feed's last_error, a connect 422): one line, a reason in words, no file path, no address or port of ours.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt, type Json } from "../helpers/api.js";
import { dayFromToday, fixturesAt } from "../helpers/fixtures.js";
import { freePort } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

let server: RunningServer;
let plain: http.Server;
/** A plain-HTTP server (an https:// address pointed at it speaks TLS to HTTP: OpenSSL's "wrong version number"). */
let plainPort: number;
/** A port nothing listens on (ECONNREFUSED). */
let closedPort: number;
let feedUp = true;

const FEED = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", "END:VCALENDAR", ""].join("\r\n");

/** No text a host reads may hold these. */
function expectPlain(text: string, what: string): void {
  expect(text, what).not.toMatch(/[\r\n]/);
  expect(text, what).not.toContain("127.0.0.1");
  expect(text, what).not.toMatch(new RegExp(`\\b(${plainPort}|${closedPort}|${server.port})\\b`));
  expect(text, what).not.toMatch(/\.c:\d|deps\/|openssl\/|node_modules|\.js:\d/);
  expect(text, what).not.toMatch(/^\w+Error|ECONNREFUSED|ERR_SSL/);
}

const api = (method: string, path: string, key: string, body?: unknown) => restAt(server.baseUrl, method, `/api/v1${path}`, { key, body });

beforeAll(async () => {
  plain = http.createServer((req, res) => {
    if (req.url === "/feed.ics" && feedUp) return void res.writeHead(200, { "content-type": "text/calendar" }).end(FEED);
    res.writeHead(200).end("ok");
  });
  await new Promise<void>((r) => plain.listen(0, "127.0.0.1", r));
  plainPort = (plain.address() as AddressInfo).port;
  closedPort = await freePort();
  // Reads are not cached, so a feed that stops answering is read (and fails) on the next listing.
  server = await startServer({ OUTBOUND_ALLOW_PRIVATE: "true", CALENDAR_CACHE_SECONDS: "0" });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  plain?.closeAllConnections();
  await new Promise((r) => plain?.close(r));
});

describe("webhook deliveries", () => {
  it.each([
    ["nothing listens on the port", () => `http://127.0.0.1:${closedPort}/hook`, "the server refused the connection (nothing listens at that address and port)"],
    ["an https address on a plain-HTTP port", () => `https://127.0.0.1:${plainPort}/hook`, "a secure connection could not be made: the server does not speak HTTPS on that port"],
  ])("%s: the delivery's error says why in words", async (_label, url, words) => {
    const host = await fixturesAt(server.baseUrl).newAccount();
    const hook = await api("POST", "/webhooks", host.key, { webhook: { url: url(), events: ["booking.created"] } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const ping = await api("POST", `/webhooks/${hook.body.data.id}/ping`, host.key);
    expect(ping.status).toBe(200);
    expect(ping.body.data).toMatchObject({ error: words });
    const deliveries = await api("GET", `/webhooks/${hook.body.data.id}/deliveries`, host.key);
    for (const d of deliveries.body.data as Json[]) expectPlain(String(d.error), "delivery error");
  });
});

describe("calendar feeds", () => {
  it("a connect refused for the server's answer is a 422 in words", async () => {
    const host = await fixturesAt(server.baseUrl).newAccount();
    const tls = await api("POST", "/calendar_connections", host.key, { connection: { provider: "ics", url: `https://127.0.0.1:${plainPort}/feed.ics` } });
    expect(tls.status).toBe(422);
    expect(tls.body.message).toMatch(/a secure connection could not be made: the server does not speak HTTPS on that port/);
    expectPlain(tls.body.message, "connect 422");
    const closed = await api("POST", "/calendar_connections", host.key, { connection: { provider: "ics", url: `http://127.0.0.1:${closedPort}/feed.ics` } });
    expect(closed.status).toBe(422);
    expect(closed.body.message).toMatch(/the server refused the connection/);
    expectPlain(closed.body.message, "connect 422");
  });

  it("a feed that stops answering: its last_error says why in words", async () => {
    const host = await fixturesAt(server.baseUrl).newHost();
    const feed = await api("POST", "/calendar_connections", host.key, { connection: { provider: "ics", url: `http://127.0.0.1:${plainPort}/feed.ics` } });
    expect(feed.status, JSON.stringify(feed.body)).toBe(201);
    const event = await fixturesAt(server.baseUrl).newEvent(host);
    // The feed's server goes: every later read is refused.
    feedUp = false;
    plain.closeAllConnections();
    await new Promise((r) => plain.close(r));
    const day = dayFromToday(2);
    const connection = await until(
      "the feed's failure recorded",
      async () => {
        await restAt(server.baseUrl, "GET", `/api/v1/public/users/${host.user.url}/events/${event.url}/slots?date_from=${day}&date_to=${day}`);
        return ((await api("GET", "/calendar_connections", host.key)).body.data as Json[])[0];
      },
      { timeoutMs: 15_000, accept: (c) => c.last_error !== undefined && c.last_error !== null },
    );
    expect(connection.status).toBe("error");
    expect(connection.last_error).toMatch(/the server refused the connection/);
    expectPlain(connection.last_error, "last_error");
  });
});
