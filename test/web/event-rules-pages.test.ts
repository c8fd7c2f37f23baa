// Event rules on the booking pages in a real browser (Debian's Chromium): a full day offers nothing, the buffer keeps its time, a day filled meanwhile is said so, and the manage page says until when a booking can change, in all eleven locales.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageMessages } from "../../src/i18n/pages.js";
import { fill } from "../../src/i18n/index.js";
import { LOCALES } from "../../src/domain/locales.js";
import { addDays } from "../../src/domain/timezones.js";
import { momentLine } from "../../src/features/pages/shared/view.js";
import { speechOf } from "../../src/features/pages/pages.js";
import { baseUrl, type Json } from "../helpers/api.js";
import { ALWAYS_OPEN, book, dayFromToday, newEvent, newHost, type Host, utcIso as at } from "../helpers/bookings.js";
import { launchBrowser, screenshot, seriousViolations } from "../helpers/browser.js";

let browser: Browser;
let host: Host;

beforeAll(async () => {
  browser = await launchBrowser();
  host = await newHost({ full_name: "Rules Host", timezone: "UTC" }, ALWAYS_OPEN);
});

afterAll(async () => {
  await browser?.close();
});

function visitor(): Promise<BrowserContext> {
  return browser.newContext({ timezoneId: "UTC", locale: "en-US", viewport: { width: 1200, height: 900 } });
}

/** Opens the event page and shows the month of `day` (YYYY-MM-DD) once its free days are drawn. */
async function openMonthOf(page: Page, event: Json, day: string): Promise<void> {
  await page.goto(`${baseUrl()}/${host.user.url}/${event.url}`);
  await page.locator("#calendar [data-day]").first().waitFor();
  const month = day.slice(0, 7);
  // The page opens on this month; the next one is a click on its "next month" button away.
  if ((await page.locator(`#calendar [data-day^="${month}"]`).count()) === 0) await page.locator(`#calendar button.nav[data-month="${month}"]`).click();
  await page.locator(`#calendar [data-day^="${month}"]`).first().waitFor();
}

/** The page's free times of `day` (as the picker writes them: the API's start_time). */
async function timesOn(page: Page, day: string): Promise<string[]> {
  await page.locator(`#calendar [data-day="${day}"]`).click();
  await page.locator("#times [data-slot]").first().waitFor();
  return page.locator("#times [data-slot]").evaluateAll((els) => els.map((e) => e.getAttribute("data-slot") ?? ""));
}

describe("the event page", () => {
  it("a day at its daily limit offers no time; the days around it do", async () => {
    const event = await newEvent(host, { name: "Limited", daily_limit: 1 });
    // Days in the middle of a month, so that the day before and after show in the same one.
    let day = dayFromToday(3);
    while (Number(day.slice(8)) < 3 || Number(day.slice(8)) > 26) day = addDays(day, 1);
    await book(host, event, { start_time: at(day, "10:00") });
    const context = await visitor();
    const page = await context.newPage();
    await openMonthOf(page, event, day);
    expect(await page.locator(`#calendar [data-day="${day}"]`).count()).toBe(0);
    expect(await page.locator(`#calendar [data-day="${addDays(day, 1)}"]`).count()).toBe(1);
    expect(await page.locator(`#calendar [data-day="${addDays(day, -1)}"]`).count()).toBe(1);
    await screenshot(page, "rules-full-day");
    await context.close();
  });

  it("the times around a booking leave its buffer and the event's own free", async () => {
    const event = await newEvent(host, { name: "Buffered", buffer_before: "30_minutes" });
    let day = dayFromToday(4);
    while (Number(day.slice(8)) > 27) day = addDays(day, 1);
    await book(host, event, { start_time: at(day, "10:00") });
    const context = await visitor();
    const page = await context.newPage();
    await openMonthOf(page, event, day);
    const times = await timesOn(page, day);
    expect(["09:00", "09:30", "10:00", "10:30", "11:00"].map((t) => times.includes(at(day, t)))).toEqual([true, false, false, false, true]);
    await context.close();
  });

  it("a day filled while the visitor fills the form: the page says the day is full and offers it no more", async () => {
    const event = await newEvent(host, { name: "Last place", daily_limit: 1 });
    let day = dayFromToday(5);
    while (Number(day.slice(8)) > 27) day = addDays(day, 1);
    const context = await visitor();
    const page = await context.newPage();
    await openMonthOf(page, event, day);
    const [first, second] = await timesOn(page, day);
    await page.locator(`#times [data-slot="${first}"]`).click();
    await page.locator("#form-section").waitFor();
    await book(host, event, { start_time: second, attendee_email: "quicker@example.com" });
    await page.fill("[name=attendee_name]", "Slow Visitor");
    await page.fill("[name=attendee_email]", "slow@example.com");
    await page.locator("button[type=submit]").click();
    await page.locator("#picker-alert:not([hidden])").waitFor();
    expect(await page.locator("#picker-alert").textContent()).toBe(pageMessages.en.errorDayFull);
    expect(await page.locator(`#calendar [data-day="${day}"]`).count()).toBe(0);
    await context.close();
  });
});

describe("the manage page and the cancel notice", () => {
  let event: Json;
  beforeAll(async () => {
    event = await newEvent(host, { name: "Firm", cancel_notice_minutes: 1440 });
  });

  /** The first half hour at least three hours from now, plus `n` half hours: inside the notice. */
  const soon = (n: number) => new Date((Math.ceil((Date.now() + 3 * 3_600_000) / 1_800_000) + n) * 1_800_000).toISOString();

  it("says until when a booking can change, then that it no longer can (without its buttons), in every locale", async () => {
    const far = await book(host, event, { start_time: at(dayFromToday(10), "10:00"), attendee_email: "far@example.com" });
    const near = await book(host, event, { start_time: soon(0), attendee_email: "near@example.com" });
    const context = await visitor();
    const page = await context.newPage();
    for (const locale of LOCALES) {
      const s = speechOf(locale, host.user.time_format);

      await page.goto(`${baseUrl()}/booking/${far.private_key}?locale=${locale}`);
      const until = new Date(Date.parse(far.start_time) - 1440 * 60_000);
      const open = page.locator("[data-changeable-until]");
      expect(await open.getAttribute("data-changeable-until")).toBe(until.toISOString());
      expect(await open.textContent(), locale).toBe(fill(pageMessages[locale].changeUntil, { when: momentLine(until, "UTC", s), host: "Rules Host" }));
      expect(await page.locator('[data-action="cancel"]').count()).toBe(1);

      await page.goto(`${baseUrl()}/booking/${near.private_key}?locale=${locale}`);
      const closedAt = new Date(Date.parse(near.start_time) - 1440 * 60_000);
      const closed = page.locator("[data-changeable-until]");
      expect(await closed.textContent(), locale).toBe(fill(pageMessages[locale].changeClosed, { when: momentLine(closedAt, "UTC", s), host: "Rules Host" }));
      expect(await page.locator('[data-action="cancel"], [data-action="reschedule"]').count()).toBe(0);
      expect(await page.innerText("main"), locale).not.toMatch(/\{\w+\}|undefined|NaN/);
      if (locale === "ar") await screenshot(page, "rules-manage-closed-ar");
    }
    expect(await seriousViolations(page)).toEqual([]);
    await context.close();
  }, 150_000);

  it("the confirmation after booking says until when the booking can change", async () => {
    const context = await visitor();
    const page = await context.newPage();
    let day = dayFromToday(12);
    while (Number(day.slice(8)) > 27) day = addDays(day, 1);
    await openMonthOf(page, event, day);
    const [start] = await timesOn(page, day);
    await page.locator(`#times [data-slot="${start}"]`).click();
    await page.locator("#form-section").waitFor();
    await page.fill("[name=attendee_name]", "Early Visitor");
    await page.fill("[name=attendee_email]", "early@example.com");
    await page.locator("button[type=submit]").click();
    const hint = page.locator("#confirmation [data-changeable-until]");
    await hint.waitFor();
    const until = new Date(Date.parse(start) - 1440 * 60_000);
    expect(await hint.textContent()).toBe(fill(pageMessages.en.changeUntil, { when: momentLine(until, "UTC", speechOf("en", host.user.time_format)) }));
    await context.close();
  });
});
