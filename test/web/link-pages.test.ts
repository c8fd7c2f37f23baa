// A single-use link's page in a real browser (Debian's Chromium): it opens an event that is not public, books it once, and says the link is no longer valid after, with 410.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageMessages } from "../../src/i18n/pages.js";
import { addDays } from "../../src/domain/timezones.js";
import { baseUrl, rest } from "../helpers/api.js";
import { ALWAYS_OPEN, dayFromToday, newEvent, newHost, type Host } from "../helpers/bookings.js";
import { launchBrowser, screenshot } from "../helpers/browser.js";

let browser: Browser;
let host: Host;

beforeAll(async () => {
  browser = await launchBrowser();
  host = await newHost({ full_name: "Link Host", timezone: "UTC" }, ALWAYS_OPEN);
});

afterAll(async () => {
  await browser?.close();
});

describe("a single-use link's page", () => {
  it("books the event once through the link; the page then answers 410 saying the link is no longer valid", { timeout: 90_000 }, async () => {
    const event = await newEvent(host, { name: "By invitation", is_public: false });
    const made = await rest("POST", `/events/${event.id}/single_use_links`, { key: host.key });
    expect(made.status).toBe(201);
    const path = new URL(made.body.data.url).pathname;
    let day = dayFromToday(3);
    while (Number(day.slice(8)) > 27) day = addDays(day, 1);
    const context = await browser.newContext({ timezoneId: "UTC", locale: "en-US", viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const opened = await page.goto(`${baseUrl()}${path}`);
    expect(opened?.status()).toBe(200);
    expect(await page.locator("#event-name").textContent()).toBe("By invitation");
    expect(await page.getAttribute('meta[name="robots"]', "content")).toMatch(/noindex/);
    const month = day.slice(0, 7);
    await page.locator("#calendar [data-day]").first().waitFor();
    if ((await page.locator(`#calendar [data-day^="${month}"]`).count()) === 0) await page.locator(`#calendar button.nav[data-month="${month}"]`).click();
    await page.locator(`#calendar [data-day="${day}"]`).click();
    await page.locator("#times [data-slot]").first().waitFor();
    await page.locator("#times [data-slot]").nth(20).click();
    await page.locator("#form-section").waitFor();
    await page.fill("[name=attendee_name]", "Invited Visitor");
    await page.fill("[name=attendee_email]", "invited@example.com");
    await page.locator("button[type=submit]").click();
    await page.locator("#confirmed-heading").waitFor();
    await screenshot(page, "link-booked");

    const again = await page.goto(`${baseUrl()}${path}`);
    expect(again?.status()).toBe(410);
    expect(await page.locator("main").textContent()).toContain(pageMessages.en.linkGoneText);
    const list = await rest("GET", `/events/${event.id}/single_use_links`, { key: host.key });
    expect(list.body.data[0]).toMatchObject({ used: true });
    await context.close();
  });
});
