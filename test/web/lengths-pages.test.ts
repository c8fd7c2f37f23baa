// Several lengths on the event page in a real browser (Debian's Chromium): the visitor chooses a length, sees the times for it, and books it.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addDays } from "../../src/domain/timezones.js";
import { baseUrl, rest } from "../helpers/api.js";
import { ALWAYS_OPEN, dayFromToday, newEvent, newHost, type Host, utcIso as at } from "../helpers/bookings.js";
import { launchBrowser, screenshot, seriousViolations } from "../helpers/browser.js";

let browser: Browser;
let host: Host;

beforeAll(async () => {
  browser = await launchBrowser();
  host = await newHost({ full_name: "Length Host", timezone: "UTC" }, ALWAYS_OPEN);
});

afterAll(async () => {
  await browser?.close();
});

describe("the event page of an event with several lengths", () => {
  it("lists the lengths, draws the times of the one chosen on the interval, and books that length", { timeout: 90_000 }, async () => {
    const event = await newEvent(host, { name: "Pick a length", slot_duration: undefined, durations: [20, 90], slot_interval_minutes: 30 });
    let day = dayFromToday(3);
    while (Number(day.slice(8)) > 27) day = addDays(day, 1);
    const context = await browser.newContext({ timezoneId: "UTC", locale: "en-US", viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/${host.user.url}/${event.url}`);
    const lengths = page.locator(".lengths a");
    expect(await lengths.allTextContents()).toEqual(["20 minutes", "90 minutes"]);
    expect(await page.locator(".lengths a[aria-current=true]").textContent()).toBe("20 minutes");
    await page.locator('.lengths a[data-duration="90"]').click();
    await page.waitForURL(/duration=90/);
    expect(await page.locator(".lengths a[aria-current=true]").textContent()).toBe("90 minutes");
    expect(await seriousViolations(page)).toEqual([]);

    const month = day.slice(0, 7);
    await page.locator("#calendar [data-day]").first().waitFor();
    if ((await page.locator(`#calendar [data-day^="${month}"]`).count()) === 0) await page.locator(`#calendar button.nav[data-month="${month}"]`).click();
    await page.locator(`#calendar [data-day="${day}"]`).click();
    await page.locator("#times [data-slot]").first().waitFor();
    const times = await page.locator("#times [data-slot]").evaluateAll((els) => els.map((e) => e.getAttribute("data-slot") ?? ""));
    // 90 minutes on a 30-minute grid: 00:00, 00:30, ..., the last at 22:30.
    expect(times.slice(0, 3)).toEqual([at(day, "00:00"), at(day, "00:30"), at(day, "01:00")]);
    expect(times.at(-1)).toBe(at(day, "22:30"));
    await screenshot(page, "lengths-90");

    await page.locator(`#times [data-slot="${at(day, "01:00")}"]`).click();
    await page.locator("#form-section").waitFor();
    await page.fill("[name=attendee_name]", "Long Visitor");
    await page.fill("[name=attendee_email]", "long@example.com");
    await page.locator("button[type=submit]").click();
    await page.locator("#confirmed-heading").waitFor();
    const key = await page.locator("#confirmation").getAttribute("data-private-key");
    const made = await rest("GET", `/public/bookings/${key}`);
    expect({ start: made.body.data.start_time, end: made.body.data.end_time }).toEqual({ start: at(day, "01:00"), end: at(day, "02:30") });
    await context.close();
  });

  it("an event of one length shows it as before, without a choice", async () => {
    const event = await newEvent(host, { name: "One length" });
    const context = await browser.newContext({ timezoneId: "UTC", locale: "en-US" });
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/${host.user.url}/${event.url}?duration=45`);
    expect(await page.locator(".lengths").count()).toBe(0);
    expect(await page.locator(".facts dd").first().textContent()).toBe("30 minutes");
    await context.close();
  });
});
