// The booker's switch of reminder e-mails in Chromium (reminders.md): the manage page shows it in every locale and turns reminders off and on; the unsubscribe link's page asks first, then stops them, in the booker's language.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCALES } from "../../src/domain/locales.js";
import { pageMessages } from "../../src/i18n/pages.js";
import { baseUrl, rest, type Json } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { launchBrowser, seriousViolations } from "../helpers/browser.js";
import { until } from "../helpers/wait.js";

let browser: Browser;
let host: Host;
let event: Json;

beforeAll(async () => {
  browser = await launchBrowser();
  host = await newHost();
  event = await newEvent(host);
  const created = await rest("POST", `/events/${event.id}/reminders`, { key: host.key, body: { reminder: { timing: "before_start", offset_minutes: 60 } } });
  expect(created.status).toBe(201);
});

afterAll(async () => {
  await browser?.close();
});

/** A booking of the event whose reminder delivery is planned (the manage page shows the switch from then on). */
async function planned(time: string): Promise<Json> {
  const b = await book(host, event, { start_time: utcIso(dayFromToday(4), time) });
  await until("the booking's reminder planned", async () => (await rest("GET", `/bookings/${b.id}`, { key: host.key })).body.data?.reminders, { accept: (r: Json[]) => r?.length === 1, timeoutMs: 60_000 });
  return b;
}

const statusOf = async (id: string): Promise<string> => (await rest("GET", `/bookings/${id}`, { key: host.key })).body.data.reminders[0].status;

async function withPage<T>(browserLocale: string, run: (page: Page) => Promise<T>): Promise<T> {
  const context = await browser.newContext({ locale: browserLocale });
  try {
    return await run(await context.newPage());
  } finally {
    await context.close();
  }
}

describe("the booker's reminder switch", () => {
  it("is on the manage page in every locale, and turns this booking's reminders off and on again", async () => {
    const b = await planned("10:00");
    await withPage("en-US", async (page) => {
      for (const locale of LOCALES) {
        await page.goto(`${baseUrl()}/booking/${b.private_key}?locale=${locale}`);
        const words = pageMessages[locale];
        expect(await page.locator("form.reminders [data-reminders]").textContent(), locale).toBe(words.remindersOn);
        expect(await page.locator('form.reminders button[data-action="reminders-off"]').textContent(), locale).toBe(words.remindersTurnOff);
      }
      // Clicked in Japanese: the page after the switch still speaks it and says what was done.
      await page.goto(`${baseUrl()}/booking/${b.private_key}?locale=ja`);
      await page.locator('button[data-action="reminders-off"]').click();
      await page.waitForURL(/done=reminders_off/);
      expect(await page.getAttribute("html", "lang")).toBe("ja");
      expect(await page.locator(".notice.success").textContent()).toBe(pageMessages.ja.remindersOffDone);
      expect(await page.locator("form.reminders [data-reminders]").textContent()).toBe(pageMessages.ja.remindersOff);
      expect(await seriousViolations(page)).toEqual([]);
      expect((await rest("GET", `/public/bookings/${b.private_key}`)).body.data.reminders_enabled).toBe(false);
      expect(await statusOf(b.id)).toBe("unsubscribed");

      await page.locator('button[data-action="reminders-on"]').click();
      await page.waitForURL(/done=reminders_on/);
      expect(await page.locator(".notice.success").textContent()).toBe(pageMessages.ja.remindersOnDone);
      expect(await page.locator("form.reminders [data-reminders]").textContent()).toBe(pageMessages.ja.remindersOn);
      expect(await statusOf(b.id)).toBe("scheduled");
    });
  }, 180_000);

  it("behind the unsubscribe link asks first (a GET changes nothing), then stops reminders, in the browser's language", async () => {
    const b = await planned("12:00");
    await withPage("de-DE", async (page) => {
      await page.goto(`${baseUrl()}/booking/${b.private_key}/unsubscribe`);
      expect(await page.getAttribute("html", "lang")).toBe("de");
      expect(await page.locator("h1").textContent()).toBe(pageMessages.de.unsubscribeHeading);
      expect(await seriousViolations(page)).toEqual([]);
      // Opening the link (as a mail scanner does) turned nothing off.
      expect(await statusOf(b.id)).toBe("scheduled");
      await page.locator('button[data-action="unsubscribe"]').click();
      await page.locator("[data-unsubscribed]").waitFor();
      expect(await page.locator("h1").textContent()).toBe(pageMessages.de.unsubscribedHeading);
      expect(await statusOf(b.id)).toBe("unsubscribed");
      // Back to the booking: the switch says off, in German.
      await page.locator(`a[href^="/booking/${b.private_key}?"]`).click();
      await page.waitForURL(new RegExp(`/booking/${b.private_key}\\?locale=de$`));
      expect(await page.locator("form.reminders [data-reminders]").textContent()).toBe(pageMessages.de.remindersOff);
    });
  }, 120_000);
});
