// The booking page when the host's calendar cannot be read (503 calendar is unavailable): a clear message, nothing booked.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageMessages } from "../../src/i18n/pages.js";
import { restAt } from "../helpers/api.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { launchBrowser, screenshot } from "../helpers/browser.js";
import { startServer, type RunningServer } from "../helpers/server.js";

describe("a host calendar that cannot be read", () => {
  let browser: Browser;
  let server: RunningServer;
  let feed: Server;
  let feedUp = true;

  beforeAll(async () => {
    // A feed that answers until the test takes it down.
    feed = createServer((_req, res) => {
      if (!feedUp) {
        res.writeHead(500).end();
        return;
      }
      res.writeHead(200, { "content-type": "text/calendar" });
      res.end("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//pages test//EN\r\nEND:VCALENDAR\r\n");
    });
    await new Promise<void>((resolve) => feed.listen(0, "127.0.0.1", resolve));
    // The service's own read deadline (3 s): the feed fails at once when down. With 500 ms, a loaded full run timed
    // out here (30 s), most likely a read of the feed while up that passed 500 ms and left the page no time to pick.
    [server, browser] = await Promise.all([startServer({ OUTBOUND_ALLOW_PRIVATE: "true", CALENDAR_CACHE_SECONDS: "1" }), launchBrowser()]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((resolve) => feed?.close(resolve));
  });

  it("booking says the calendar is unavailable and books nothing", async () => {
    const base = server.baseUrl;
    const fixtures = fixturesAt(base);
    const host = await fixtures.newHost({ full_name: "Olga Outage" });
    const { key } = host;
    const url = host.user.url;
    const connected = await restAt(base, "POST", "/api/v1/calendar_connections", { key, body: { connection: { provider: "ics", url: `http://127.0.0.1:${(feed.address() as AddressInfo).port}/busy.ics` } } });
    expect(connected.status, JSON.stringify(connected.body)).toBe(201);
    const event = await fixtures.newEvent(host, { name: "Check-in", url: "check-in", slot_duration: "30_minutes" });

    const context = await browser.newContext({ timezoneId: "Europe/Berlin" });
    const page = await context.newPage();
    await page.goto(`${base}/${url}/check-in`);
    // The first free day's last time: late in the evening today may have only one or two left.
    await page.locator("#times [data-slot]").last().click();
    await page.fill("[name=attendee_name]", "Vera Visitor");
    await page.fill("[name=attendee_email]", "vera@example.com");
    feedUp = false;
    // The feed's last good read is now older than CALENDAR_CACHE_SECONDS: a booking must read it again, and cannot.
    await new Promise((r) => setTimeout(r, 1100));
    await page.locator("button[type=submit]").click();
    await page.locator("#form-alert:not([hidden])").waitFor();
    expect(await page.textContent("#form-alert")).toBe(pageMessages.en.errorCalendar);
    expect(await page.locator("#confirmation[data-private-key]").count()).toBe(0);
    const booked = await restAt(base, "GET", `/api/v1/events/${event.id}/bookings`, { key });
    expect(booked.body.data.records).toHaveLength(0);
    await screenshot(page, "calendar-unavailable");

    // Next month was never read: the listing cannot fall back on a recent read, and the picker says so in words.
    await page.locator("#change-time").click();
    await page.locator("#calendar button.nav").last().click();
    await page.locator("#picker-alert:not([hidden])").waitFor();
    expect(await page.textContent("#picker-alert")).toBe(pageMessages.en.errorCalendar);
    expect(await page.locator("[data-slot]").count()).toBe(0);
    await context.close();
  });
});
