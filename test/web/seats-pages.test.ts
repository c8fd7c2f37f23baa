// Seats on the booking page in a real browser (Debian's Chromium): each time of a seated event says how many seats it has left (booking-kinds.md "Seats"), drawn by the server and by the script, in the visitor's language.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addDays } from "../../src/domain/timezones.js";
import { baseUrl } from "../helpers/api.js";
import { ALWAYS_OPEN, book, dayFromToday, newEvent, newHost, type Host, utcIso as at } from "../helpers/bookings.js";
import { launchBrowser, screenshot, seriousViolations } from "../helpers/browser.js";

let browser: Browser;
let host: Host;

beforeAll(async () => {
  browser = await launchBrowser();
  host = await newHost({ full_name: "Seat Host", timezone: "UTC" }, ALWAYS_OPEN);
});

afterAll(async () => {
  await browser?.close();
});

/** Shows `day` in the picker (going to its month first when the page opened on another). */
async function openDay(page: Page, day: string): Promise<void> {
  await page.locator("#calendar [data-day]").first().waitFor();
  if ((await page.locator(`#calendar [data-day^="${day.slice(0, 7)}"]`).count()) === 0) await page.locator(`#calendar button.nav[data-month="${day.slice(0, 7)}"]`).click();
  await page.locator(`#calendar [data-day="${day}"]`).click();
  await page.locator("#times [data-slot]").first().waitFor();
}

const seatsOf = (page: Page, start: string) => page.locator(`#times [data-slot="${start}"] small`).textContent();

describe("the event page of a seated event", () => {
  it("each time says its seats left, the server's first draw and the script's alike; taken seats count down; in every language", { timeout: 120_000 }, async () => {
    const event = await newEvent(host, { name: "Small class", seats_per_slot: 3 });
    // Two days of this month (the page's own data) when there are, and one of the next (read by the script).
    let day = dayFromToday(2);
    while (Number(day.slice(8)) > 26) day = addDays(day, 1);
    const next = addDays(`${day.slice(0, 7)}-01`, 40);
    for (const [start, n] of [[at(day, "10:00"), 1], [at(day, "10:00"), 2], [at(day, "11:00"), 3], [at(next, "10:00"), 4]] as const) {
      await book(host, event, { start_time: start, attendee_name: `Seat ${n}`, attendee_email: `seat${n}@example.com` });
    }
    const context = await browser.newContext({ timezoneId: "UTC", locale: "en-US", viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/${host.user.url}/${event.url}`);
    await openDay(page, day);
    expect(await seatsOf(page, at(day, "09:30"))).toBe("3 seats left");
    expect(await seatsOf(page, at(day, "10:00"))).toBe("1 seat left");
    expect(await seatsOf(page, at(day, "11:00"))).toBe("2 seats left");
    expect(await page.locator(`#times [data-slot="${at(day, "10:00")}"] small`).getAttribute("data-seats-left")).toBe("1");
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "seats-left");
    // The next month's times, read by the script.
    await page.locator(`#calendar button.nav[data-month="${next.slice(0, 7)}"]`).click();
    await page.locator(`#calendar [data-day="${next}"]`).click();
    await page.locator(`#times [data-slot="${at(next, "10:00")}"]`).waitFor();
    expect(await seatsOf(page, at(next, "10:00"))).toBe("2 seats left");

    // A full time is not offered; the others still count.
    await book(host, event, { start_time: at(day, "10:00"), attendee_name: "Seat 5", attendee_email: "seat5@example.com" });
    await page.goto(`${baseUrl()}/${host.user.url}/${event.url}?locale=de`);
    await openDay(page, day);
    expect(await page.locator(`#times [data-slot="${at(day, "10:00")}"]`).count()).toBe(0);
    expect(await seatsOf(page, at(day, "11:00"))).toBe("Noch 2 Plätze frei");
    expect(await seatsOf(page, at(day, "09:30"))).toBe("Noch 3 Plätze frei");
    await context.close();
  });

  it("an event without seats draws its times as before, without a count", { timeout: 60_000 }, async () => {
    const event = await newEvent(host, { name: "One to one" });
    const context = await browser.newContext({ timezoneId: "UTC", locale: "en-US" });
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/${host.user.url}/${event.url}`);
    await page.locator("#times [data-slot]").first().waitFor();
    expect(await page.locator("#times small").count()).toBe(0);
    await context.close();
  });
});
