// The pages in the host's colours and the booker's calendars: the event's colour, the account's brand colour (kept readable) and logo, add-to-Google / Outlook / Apple links.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseUrl, rest, type Json } from "../helpers/api.js";
import { ALWAYS_OPEN, newEvent, newHost, type Host } from "../helpers/fixtures.js";
import { laterSlot, launchBrowser, screenshot, seriousViolations } from "../helpers/browser.js";
import { brandPalette } from "../../src/domain/brand.js";
import sharp from "sharp";

let browser: Browser;
let branded: Host;
let plain: Host;
let event: Json;

beforeAll(async () => {
  // A brand colour too light to read on white: the pages must darken it.
  [browser, branded, plain] = await Promise.all([
    launchBrowser(),
    newHost({ full_name: "Bea Brand", timezone: "Berlin", brand_color: "#FFEB3B" }, ALWAYS_OPEN),
    newHost({ full_name: "Pia Plain", timezone: "Berlin" }, ALWAYS_OPEN),
  ]);
  event = await newEvent(branded, { name: "Colour chat", color: "tomato", location: { name: "in_person", details: "Alexanderplatz 1, Berlin" } });
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

/** The computed value of a CSS property of the first element matching `selector`. */
const styleOf = (page: Page, selector: string, property: string) =>
  page.locator(selector).first().evaluate((el, p) => getComputedStyle(el).getPropertyValue(p).trim(), property);

describe("brand colour of an account", () => {
  it("is set at creation and by PATCH /user, shown in the user and settings, checked, and cleared by \"\"", async () => {
    expect(branded.user.brand_color).toBe("#ffeb3b");
    expect((await rest("GET", "/user/settings", { key: branded.key })).body.data).toMatchObject({ brand_color: "#ffeb3b", enable_branding: true });
    const bad = await rest("PATCH", "/user", { key: plain.key, body: { user: { brand_color: "yellow" } } });
    expect([bad.status, bad.body.message]).toEqual([422, "brand_color must be a colour written #rrggbb (such as #1a73e8), or empty to clear it"]);
    const short = await rest("PATCH", "/user", { key: plain.key, body: { user: { brand_color: "#0A5" } } });
    expect(short.body.data.brand_color).toBe("#00aa55");
    const cleared = await rest("PATCH", "/user", { key: plain.key, body: { user: { brand_color: "" } } });
    expect(cleared.body.data.brand_color).toBeNull();
    expect((await rest("GET", "/user/settings", { key: plain.key })).body.data.enable_branding).toBe(false);
  });

  it("colours the pages, darkened until text on it reads at 4.5:1; a host without one keeps the service's colours", async () => {
    const context = await browser.newContext({ locale: "en-US", timezoneId: "Europe/Berlin" });
    const page = await context.newPage();
    const requested: string[] = [];
    page.on("request", (r) => requested.push(r.url()));
    await page.goto(`${baseUrl()}/${branded.user.url}/${event.url}`);
    await page.locator("#times [data-slot]").first().waitFor();
    const { accent, accentSoft } = brandPalette("#ffeb3b");
    expect(accent).not.toBe("#ffeb3b");
    expect(await styleOf(page, "html", "--accent")).toBe(accent);
    expect(await styleOf(page, "html", "--accent-soft")).toBe(accentSoft);
    expect(await styleOf(page, "button.day[aria-pressed=true]", "background-color")).toBe(rgb(accent));
    // The event's own colour (tomato) marks its panel.
    expect(await styleOf(page, ".event-info", "border-top-color")).toBe("rgb(213, 0, 0)");
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "event-branded");
    // Nothing but the service's own origin, the brand stylesheet included.
    expect(requested.filter((u) => !u.startsWith(`${baseUrl()}/`))).toEqual([]);

    await page.goto(`${baseUrl()}/${branded.user.url}`);
    expect(await styleOf(page, ".event-card.color-tomato", "border-inline-start-color")).toBe("rgb(213, 0, 0)");
    expect(await seriousViolations(page)).toEqual([]);

    await page.goto(`${baseUrl()}/${plain.user.url}`);
    expect(await styleOf(page, "html", "--accent")).toBe("#0b57d0");
    expect(await page.locator('link[href^="/assets/brand-"]').count()).toBe(0);
    await context.close();
  });

  it("the brand stylesheet is a file of the service's origin, kept for good; anything else under its name is 404", async () => {
    const css = await fetch(`${baseUrl()}/assets/brand-ffeb3b.css`);
    expect([css.status, css.headers.get("content-type"), css.headers.get("cache-control")]).toEqual([200, "text/css; charset=utf-8", "public, max-age=31536000, immutable"]);
    expect(await css.text()).toContain(`--accent:${brandPalette("#ffeb3b").accent}`);
    expect((await fetch(`${baseUrl()}/assets/brand-red.css`)).status).toBe(404);
  });
});

describe("brand logo of an account", () => {
  let logoPath: string;
  beforeAll(async () => {
    // A wide wordmark (600 x 150): the pages keep its shape.
    const logo = await sharp({ create: { width: 600, height: 150, channels: 3, background: "#263238" } }).png().toBuffer();
    const form = new FormData();
    form.append("user[brand_logo]", new Blob([new Uint8Array(logo)], { type: "image/png" }), "logo.png");
    const res = await rest("PUT", "/users/brand_logo", { key: branded.key, body: form });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    logoPath = new URL(res.body.data.brand_logo_url).pathname;
  });

  /** The page's logo: loaded, named for the host in the page's language, within 160 x 40 CSS pixels, its shape kept. */
  async function expectLogo(page: Page, alt: string): Promise<void> {
    const logo = page.locator("header.site img.brand-logo");
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    expect(await logo.getAttribute("alt")).toBe(alt);
    expect(await logo.getAttribute("src")).toBe(`${logoPath}/320.webp`);
    const box = (await logo.boundingBox())!;
    expect([Math.round(box.width), Math.round(box.height)]).toEqual([160, 40]);
  }

  it("heads the profile, the event page through its picker to the confirmation, and the booker's page, named for the host", async () => {
    const context = await browser.newContext({ locale: "en-US", timezoneId: "Europe/Berlin", deviceScaleFactor: 2 });
    const page = await context.newPage();
    const requested: string[] = [];
    page.on("request", (r) => requested.push(r.url()));
    // While the logo is still on its way its box is already 40 px high: its arrival moves nothing on the page.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route("**/pictures/**", async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${baseUrl()}/${branded.user.url}`, { waitUntil: "domcontentloaded" });
    const loading = page.locator("header.site img.brand-logo");
    expect(await loading.evaluate((img: HTMLImageElement) => [img.complete, getComputedStyle(img).height])).toEqual([false, "40px"]);
    // From here on the route lets every request through at once.
    release();
    await expectLogo(page, "Logo of Bea Brand");
    expect(await seriousViolations(page)).toEqual([]);

    await page.goto(`${baseUrl()}/${branded.user.url}/${event.url}`);
    await expectLogo(page, "Logo of Bea Brand");
    await (await laterSlot(page)).click();
    await page.fill("[name=attendee_name]", "Logo Looker");
    await page.fill("[name=attendee_email]", "logo@example.com");
    await page.locator("button[type=submit]").click();
    const confirmation = page.locator("#confirmation[data-private-key]");
    await confirmation.waitFor();
    await expectLogo(page, "Logo of Bea Brand");
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "confirmation-logo");
    const key = (await confirmation.getAttribute("data-private-key"))!;

    // The booker's page, in another language: the alt text speaks it.
    await page.goto(`${baseUrl()}/booking/${key}?locale=de`);
    await expectLogo(page, "Logo von Bea Brand");
    expect(await seriousViolations(page)).toEqual([]);
    // The logo is a file of the service's own origin.
    expect(requested.filter((u) => !u.startsWith(`${baseUrl()}/`))).toEqual([]);

    // A host without a logo has none.
    await page.goto(`${baseUrl()}/${plain.user.url}`);
    expect(await page.locator("img.brand-logo").count()).toBe(0);
    await context.close();
  });
});

describe("add to calendar", () => {
  it("the confirmation and the booker's page link the booking to Google Calendar, Outlook and Apple Calendar (.ics)", async () => {
    const context = await browser.newContext({ locale: "en-US", timezoneId: "America/New_York" });
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/${branded.user.url}/${event.url}`);
    await (await laterSlot(page)).click();
    await page.fill("[name=attendee_name]", "Cal Links");
    await page.fill("[name=attendee_email]", "cal@example.com");
    await page.locator("button[type=submit]").click();
    const confirmation = page.locator("#confirmation[data-private-key]");
    await confirmation.waitFor();
    const key = (await confirmation.getAttribute("data-private-key"))!;
    const booking = (await rest("GET", `/public/bookings/${key}`)).body.data;
    await expectCalendarLinks(page, booking, key);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "confirmation-calendars");

    await page.goto(`${baseUrl()}/booking/${key}`);
    await expectCalendarLinks(page, booking, key);
    // A canceled booking offers none.
    await rest("POST", `/public/bookings/${key}/cancel`, { body: { booking: { reason: "x" } } });
    await page.goto(`${baseUrl()}/booking/${key}`);
    expect(await page.locator("[data-calendar]").count()).toBe(0);
    await context.close();
  });
});

async function expectCalendarLinks(page: Page, booking: Json, key: string): Promise<void> {
  const compact = (iso: string) => iso.replace(/[-:]/g, "").replace(/\.\d{3}/, "");
  const google = new URL((await page.getAttribute('[data-calendar="google"]', "href"))!);
  expect(google.origin + google.pathname).toBe("https://calendar.google.com/calendar/render");
  // The booking event's title (domain/bookingEvent.ts eventTitle), as the .ics and the invitations have it.
  expect(google.searchParams.get("text")).toBe(`Colour chat (Bea Brand, ${booking.attendee_name})`);
  expect(google.searchParams.get("dates")).toBe(`${compact(booking.start_time)}/${compact(booking.end_time)}`);
  expect(google.searchParams.get("location")).toBe("Alexanderplatz 1, Berlin");
  expect(google.searchParams.get("details")).toContain(`/booking/${key}`);
  const outlook = new URL((await page.getAttribute('[data-calendar="outlook"]', "href"))!);
  expect(outlook.origin + outlook.pathname).toBe("https://outlook.live.com/calendar/0/deeplink/compose");
  expect([outlook.searchParams.get("startdt"), outlook.searchParams.get("enddt")]).toEqual([booking.start_time, booking.end_time].map((t) => new Date(t).toISOString()));
  expect(outlook.searchParams.get("subject")).toBe(`Colour chat (Bea Brand, ${booking.attendee_name})`);
  // The web calendars open in a new tab, without handing them this page.
  expect(await page.getAttribute('[data-calendar="google"]', "rel")).toBe("noopener noreferrer");
  const apple = await page.getAttribute('[data-calendar="apple"]', "href");
  expect(apple).toBe(`/booking/${key}/invite.ics`);
  expect((await fetch(`${baseUrl()}${apple}`)).headers.get("content-type")).toContain("text/calendar");
}

function rgb(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return `rgb(${r}, ${g}, ${b})`;
}
