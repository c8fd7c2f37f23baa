// The time-zone control on a 360 px phone: the chosen zone's whole name shows (wrapping, never cut off), the control stays the page's one native select, and picking another zone shows its name.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseUrl } from "../helpers/api.js";
import { ALWAYS_OPEN, newEvent, newHost, type Host } from "../helpers/fixtures.js";
import { launchBrowser, screenshot, seriousViolations } from "../helpers/browser.js";
import { zoneLabel } from "../../src/features/pages/shared/view.js";

let browser: Browser;
let host: Host;
let event: { url: string };

beforeAll(async () => {
  [browser, host] = await Promise.all([launchBrowser(), newHost({ full_name: "Zoe Zone", timezone: "UTC" }, ALWAYS_OPEN)]);
  event = await newEvent(host, { name: "Zone check" });
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

/** A 360 px wide phone (the narrowest common Android width) in `zone`. */
async function phoneIn(zone: string, locale = "en-US"): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2, timezoneId: zone, locale });
  const page = await context.newPage();
  await page.goto(`${baseUrl()}/${host.user.url}/${event.url}`);
  await page.locator("#times [data-slot]").first().waitFor();
  return page;
}

/** What the visitor sees of the chosen zone: its text, whether any of it is cut off, and whether it lies on the screen. */
async function shownZone(page: Page): Promise<{ text: string; clipped: boolean; onScreen: boolean }> {
  return page.locator(".zone-choice .zone-shown").evaluate((el) => {
    const box = el.getBoundingClientRect();
    const choice = el.closest(".zone-choice")!.getBoundingClientRect();
    return {
      text: el.textContent ?? "",
      clipped: el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight || box.right > choice.right || box.bottom > choice.bottom,
      onScreen: box.left >= 0 && box.right <= window.innerWidth,
    };
  });
}

describe("the zone control on a 360 px screen", () => {
  // Long names: the longest of the common zones, and ids with three parts.
  it.each([
    ["America/Argentina/Buenos_Aires", "en-US"],
    ["Europe/Berlin", "en-US"],
    ["America/Indiana/Indianapolis", "en-US"],
    ["Asia/Kolkata", "hi-IN"],
  ])("%s (%s): the whole name shows, on the screen, and the select covers it", async (zone, locale) => {
    const page = await phoneIn(zone, locale);
    const lang = (await page.getAttribute("html", "lang")) as Parameters<typeof zoneLabel>[1];
    // The browser's zone (Chromium names some by their older ids: Asia/Calcutta).
    const chosen = await page.locator("select[name=timezone]").inputValue();
    expect(new Intl.DateTimeFormat("en", { timeZone: chosen }).resolvedOptions().timeZone).toBe(new Intl.DateTimeFormat("en", { timeZone: zone }).resolvedOptions().timeZone);
    const shown = await shownZone(page);
    expect(shown).toEqual({ text: zoneLabel(chosen, lang), clipped: false, onScreen: true });
    // A tap anywhere on the shown name opens the native select (the one control, named by its label).
    const center = await page.locator(".zone-shown").evaluate((el) => {
      const r = el.getBoundingClientRect();
      return [r.left + r.width / 2, r.top + r.height / 2];
    });
    expect(await page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.getAttribute("name"), center)).toBe("timezone");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await screenshot(page, `zone-360-${zone.replace(/\//g, "-")}`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  }, 90_000);

  it("picking another zone shows its name, and the keyboard focus ring is drawn around the control", async () => {
    const page = await phoneIn("Europe/Berlin");
    // As a visitor's tap does: the focus fills the list at once (picker.ts fillZones). Playwright's selectOption waits
    // for the option without focusing, and on a loaded machine the page's idle callbacks, which fill it otherwise,
    // did not come within 30 s once (a full run on Chromium's headless shell).
    await page.locator("select[name=timezone]").focus();
    await page.locator("select[name=timezone]").selectOption("Pacific/Port_Moresby");
    expect((await shownZone(page)).text).toBe(zoneLabel("Pacific/Port_Moresby", "en"));
    await page.locator("#times [data-slot]").first().waitFor();
    await page.locator("select[name=timezone]").focus();
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Tab");
    expect(await page.locator(".zone-choice").evaluate((el) => getComputedStyle(el).outlineStyle)).toBe("solid");
    await page.context().close();
  }, 90_000);
});
