// Visitor language on the booking pages (extensions.md "Visitor language"): ?locale= or Accept-Language, else the host's; the page names its language and offers the others; the booker's e-mails speak the language they booked in.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCALES } from "../../src/domain/locales.js";
import { pageMessages } from "../../src/i18n/pages.js";
import { restAt, type Json } from "../helpers/api.js";
import { fixturesAt, pageOf, type Host } from "../helpers/fixtures.js";
import { laterSlot, launchBrowser, seriousViolations } from "../helpers/browser.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { startSmtp, type TestSmtp } from "../helpers/smtp.js";

let server: RunningServer;
let smtp: TestSmtp;
let browser: Browser;
let host: Host;
let event: Json;
let eventPath: string;

beforeAll(async () => {
  smtp = await startSmtp();
  [server, browser] = await Promise.all([startServer({ SMTP_URL: smtp.url, EFFECTS_POLL_MS: "100" }, 120_000), launchBrowser()]);
  const fixtures = fixturesAt(server.baseUrl);
  // An English-speaking host: the visitor's language, not the host's, is what the pages below must follow.
  host = await fixtures.newHost({ full_name: "Lena Lang", timezone: "Berlin", locale: "en" });
  event = await fixtures.newEvent(host, { name: "Sprechstunde" });
  const { user, event: url } = pageOf(host, event);
  eventPath = `/${user}/${url}`;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await smtp?.stop();
});

/** The page's language and its language menu as a visitor's browser sees them. */
async function languageOf(path: string, acceptLanguage: string | undefined): Promise<{ lang: string | null; current: string | null; offered: string[]; heading: string }> {
  const context = await browser.newContext(acceptLanguage === undefined ? {} : { locale: acceptLanguage });
  try {
    const page = await context.newPage();
    await page.goto(`${server.baseUrl}${path}`);
    return {
      lang: await page.getAttribute("html", "lang"),
      current: await page.getAttribute("nav.languages [aria-current]", "lang"),
      offered: await page.locator("nav.languages a[hreflang]").evaluateAll((links) => links.map((a) => a.getAttribute("hreflang") ?? "")),
      heading: (await page.locator("#pick-heading").textContent()) ?? "",
    };
  } finally {
    await context.close();
  }
}

describe("the language a booking page speaks", () => {
  it("follows the browser's Accept-Language, names the language it is in and offers the other ten", async () => {
    const seen = await languageOf(eventPath, "de-DE");
    expect(seen.lang).toBe("de");
    expect(seen.current).toBe("de");
    expect(seen.heading).toBe(pageMessages.de.pickDay);
    expect(seen.offered.sort()).toEqual(LOCALES.filter((l) => l !== "de").sort());
  });

  it("?locale= wins over Accept-Language; a language the service does not speak falls back to the host's", async () => {
    expect((await languageOf(`${eventPath}?locale=ja`, "de-DE")).lang).toBe("ja");
    expect((await languageOf(eventPath, "sv-SE")).lang).toBe("en");
    // By q-value, not by order: Swedish first (not spoken), then French over Spanish.
    const res = await fetch(`${server.baseUrl}${eventPath}`, { headers: { "Accept-Language": "sv;q=1, es;q=0.5, fr;q=0.8" } });
    expect(await res.text()).toMatch(/<html lang="fr"/);
    // One copy per language in a cache.
    expect(res.headers.get("vary")).toMatch(/Accept-Language/i);
    expect(res.headers.get("content-language")).toBe("fr");
  });

  it("the menu's links keep the page and its other settings, and carry the language on to the host's profile", async () => {
    const context = await browser.newContext({ locale: "en-US" });
    const page = await context.newPage();
    await page.goto(`${server.baseUrl}${eventPath}?timezone=Asia/Tokyo`);
    await page.locator('nav.languages a[hreflang="fr"]').click();
    await page.waitForURL(/locale=fr/);
    const url = new URL(page.url());
    expect([url.pathname, url.searchParams.get("timezone"), url.searchParams.get("locale")]).toEqual([eventPath, "Asia/Tokyo", "fr"]);
    expect(await page.getAttribute("html", "lang")).toBe("fr");
    expect(await page.getAttribute("header.site a.host-link", "href")).toBe(`/${host.user.url}?locale=fr`);
    expect(await seriousViolations(page)).toEqual([]);
    await context.close();
  });

  it("a booking made in German: the booker's e-mail and page speak German, the host's e-mail the host's language", async () => {
    const context = await browser.newContext({ locale: "de-DE", timezoneId: "Europe/Berlin" });
    const page = await context.newPage();
    await page.goto(`${server.baseUrl}${eventPath}`);
    await (await laterSlot(page)).click();
    await page.fill('[name="attendee_name"]', "Dora Deutsch");
    await page.fill('[name="attendee_email"]', "dora@example.com");
    await page.locator('button[type="submit"]').click();
    const confirmation = page.locator("#confirmation[data-private-key]");
    await confirmation.waitFor();
    expect(await page.locator("#confirmed-heading").textContent()).toBe(pageMessages.de.confirmedHeading);
    const key = (await confirmation.getAttribute("data-private-key"))!;
    await context.close();

    const mails = await smtp.waitFor(2, (m) => m.parsed.subject?.includes("Dora Deutsch") === true || m.envelope.to.includes("dora@example.com"));
    const toBooker = mails.find((m) => m.envelope.to.includes("dora@example.com"))!;
    const toHost = mails.find((m) => m.envelope.to.includes(host.user.email))!;
    expect(toBooker.parsed.headers.get("content-language")).toBe("de");
    expect(toBooker.parsed.text).toContain("Dora Deutsch");
    expect(toHost.parsed.headers.get("content-language")).toBe("en");

    // The booker's page opens in the language they booked in, whatever (or without any) Accept-Language.
    const manage = await fetch(`${server.baseUrl}/booking/${key}`);
    expect(await manage.text()).toMatch(/<html lang="de"/);
    const booked = await restAt(server.baseUrl, "GET", `/api/v1/public/bookings/${key}`);
    expect(booked.body.data.locale).toBe("de");
  });

  it("the API refuses a language outside the eleven, listing them", async () => {
    const slots = await restAt(server.baseUrl, "GET", `/api/v1/public/users/${host.user.url}/events/${event.url}/slots`);
    const res = await restAt(server.baseUrl, "POST", `/api/v1/public/users/${host.user.url}/events/${event.url}/bookings`, {
      body: { booking: { start_time: slots.body.data.slots[0].start_time, attendee_name: "X", attendee_email: "x@example.com", locale: "sv" } },
    });
    expect([res.status, res.body.message, res.body.data]).toEqual([422, "locale is not included in the list", { field: "locale", allowed: [...LOCALES] }]);
  });
});
