// The booking pages in a real browser (Debian's Chromium): book, errors, cancel, reschedule, embed, zones, phone, keyboard, locales, axe.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageMessages } from "../../src/i18n/pages.js";
import { LOCALES } from "../../src/domain/locales.js";
import { ROOT_PATHS } from "../../src/domain/rootPaths.js";
import { baseUrl, newAccount, rest, type Json } from "../helpers/api.js";
import { fill } from "../../src/i18n/index.js";
import { addDays } from "../../src/domain/timezones.js";
import { ALWAYS_OPEN, dayFromToday, importBookings, newEvent, newHost, type Host } from "../helpers/bookings.js";
import { laterSlot, launchBrowser, screenshot, seriousViolations } from "../helpers/browser.js";
import sharp from "sharp";

const QUESTION_TYPES: [string, Json?][] = [
  ["one_line"],
  ["multi_line"],
  ["radio_button", { options: ["Morning", "Evening"] }],
  ["check_box", { options: ["Slides", "Demo"] }],
  ["drop_down", { options: ["Sales", "Support"] }],
  ["phone_number"],
  ["email"],
  ["number"],
  ["boolean"],
  ["url"],
  ["date"],
  ["hidden"],
  ["rating"],
  ["file_upload"],
  ["signature"],
];

/**
 * The two longest journeys (every question type; eleven locales, each page opened and its ~420 zones labelled) take
 * 15-25 s alone and 45-60 s at a load average of 50 on 2 cores: the suite's 30 s made them fail under load only.
 */
const LONG_JOURNEY_MS = 120_000;

let browser: Browser;
let host: Host;
let event: Json;
let questions: { id: string; type: string }[];
const base = () => baseUrl();

async function visitorContext(opts: { timezoneId?: string; phone?: boolean; locale?: string } = {}): Promise<BrowserContext> {
  return browser.newContext({
    timezoneId: opts.timezoneId ?? "America/New_York",
    // The browser's language is the page's when the service speaks it (extensions.md "Visitor language").
    locale: opts.locale ?? "en-US",
    viewport: opts.phone ? { width: 390, height: 844 } : { width: 1200, height: 900 },
    deviceScaleFactor: 1,
    isMobile: opts.phone ?? false,
    hasTouch: opts.phone ?? false,
  });
}

/** Opens the event page and waits for the picker in the browser's zone; returns ms to the first time list. */
async function openEvent(page: Page, path: string): Promise<number> {
  const t0 = Date.now();
  await page.goto(`${base()}${path}`);
  await page.locator("#times [data-slot]").first().waitFor();
  return Date.now() - t0;
}

async function pickFirstTime(page: Page): Promise<string> {
  const slot = await laterSlot(page);
  const start = (await slot.getAttribute("data-slot"))!;
  await slot.click();
  await page.locator("#form-section").waitFor();
  return start;
}

beforeAll(async () => {
  browser = await launchBrowser();
  host = await newHost({ full_name: "Hana Tanaka", timezone: "Tokyo" }, ALWAYS_OPEN);
  await rest("PATCH", "/user", { key: host.key, body: { user: { time_format: "24_hours", bio: "Product designer. Happy to talk." } } });
  questions = [];
  for (const [type, details] of QUESTION_TYPES) {
    const res = await rest("POST", "/questions", { key: host.key, body: { question: { title: `Q ${type}`, question_type: type, question_details: details ?? {} } } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    questions.push({ id: res.body.data.id, type });
  }
  event = await newEvent(host, {
    name: "Design review",
    description: "We look at your design together.\nBring a link.",
    location: { name: "in_person", details: "Shibuya 1-2-3, Tokyo" },
    enable_guest_emails: true,
    guest_emails_limit: 2,
    event_questions_attributes: questions.map((q, i) => ({ question_id: q.id, required: q.type === "one_line" || q.type === "radio_button", order_number: i + 1 })),
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe("booking pages", () => {
  it("profile lists the public events; unknown links are HTML 404s; reserved roots are not shadowed", async () => {
    const context = await visitorContext();
    const page = await context.newPage();
    const res = await page.goto(`${base()}/${host.user.url}`);
    expect(res!.status()).toBe(200);
    expect(res!.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(res!.headers()["content-security-policy"]).not.toContain("unsafe-inline");
    expect(res!.headers()["x-content-type-options"]).toBe("nosniff");
    await expect(page.locator("h1").textContent()).resolves.toBe("Hana Tanaka");
    await page.locator(`a[href="/${host.user.url}/${event.url}"]`).waitFor();
    await screenshot(page, "profile");
    expect(await seriousViolations(page)).toEqual([]);
    // Search engines may list a profile: a description in the host's language, nothing that says noindex.
    expect(await page.getAttribute('meta[name="description"]', "content")).toBe(pageMessages.en.descriptionProfile.replace("{host}", "Hana Tanaka"));
    expect(res!.headers()["x-robots-tag"]).toBeUndefined();
    expect(await page.locator('meta[name="robots"]').count()).toBe(0);

    // The icon every browser asks for: a real .ico (PNG images inside), linked from the page.
    expect(await page.getAttribute('link[rel="icon"]', "href")).toBe("/favicon.ico");
    const icon = await fetch(`${base()}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/x-icon");
    const ico = Buffer.from(await icon.arrayBuffer());
    expect([ico.readUInt16LE(0), ico.readUInt16LE(2)]).toEqual([0, 1]);
    const icoSizes = Array.from({ length: ico.readUInt16LE(4) }, (_, i) => ico.readUInt8(6 + 16 * i));
    expect(icoSizes).toContain(32);
    expect((await sharp(ico.subarray(ico.readUInt32LE(6 + 12))).metadata()).width).toBe(icoSizes[0]);

    // A profile picture is shown from this origin, whatever APP_URL calls it, as a small WebP copy in its 64 px
    // slot: never the upload itself (a photo of several hundred kilobytes).
    const upload = await sharp({ create: { width: 900, height: 600, channels: 3, background: "#c8793c" } })
      .composite([{ input: Buffer.from('<svg width="900" height="600"><circle cx="450" cy="260" r="160" fill="#345"/></svg>') }])
      .png()
      .toBuffer();
    const form = new FormData();
    form.append("user[profile_picture]", new Blob([new Uint8Array(upload)], { type: "image/png" }), "me.png");
    expect((await rest("PUT", "/users/profile_picture", { key: host.key, body: form })).status).toBe(200);
    // The API's address is the original's, as before.
    const pictureUrl: string = (await rest("GET", "/user/settings", { key: host.key })).body.data.profile_picture_url;
    const picturePath = new URL(pictureUrl).pathname;
    expect(picturePath).toMatch(/^\/pictures\/[0-9a-f]{32}$/);
    await page.reload();
    const img = page.locator(".profile img.avatar");
    expect(await img.getAttribute("src")).toBe(`${picturePath}/128.webp`);
    expect(await img.getAttribute("srcset")).toBe(`${picturePath}/128.webp 128w, ${picturePath}/256.webp 256w`);
    expect(await img.getAttribute("sizes")).toBe("64px");
    // The copy the browser took (naturalWidth is in CSS pixels: 128 image pixels at density 2 fill the 64 px slot).
    await img.evaluate((el) => (el as HTMLImageElement).decode());
    expect(await img.evaluate((el) => [(el as HTMLImageElement).naturalWidth, new URL((el as HTMLImageElement).currentSrc).pathname])).toEqual([64, `${picturePath}/128.webp`]);
    for (const width of [128, 256]) {
      const copy = await fetch(`${base()}${picturePath}/${width}.webp`);
      expect(copy.headers.get("content-type")).toBe("image/webp");
      expect(copy.headers.get("cache-control")).toContain("immutable");
      const bytes = Buffer.from(await copy.arrayBuffer());
      expect(await sharp(bytes).metadata()).toMatchObject({ format: "webp", width, height: width });
      expect(bytes.length).toBeLessThan(upload.length / 4);
    }
    expect((await fetch(`${base()}${pictureUrl.replace(/^https?:\/\/[^/]+/, "")}`)).headers.get("content-type")).toBe("image/png");
    expect((await fetch(`${base()}${picturePath}/100.webp`)).status).toBe(404);
    // A screen of 3 device pixels per CSS pixel takes the larger copy.
    const sharpScreen = await browser.newContext({ deviceScaleFactor: 3 });
    const dense = await sharpScreen.newPage();
    await dense.goto(`${base()}/${host.user.url}`);
    await dense.locator(".profile img.avatar").evaluate((el) => (el as HTMLImageElement).decode());
    expect(await dense.locator(".profile img.avatar").evaluate((el) => new URL((el as HTMLImageElement).currentSrc).pathname)).toBe(`${picturePath}/256.webp`);
    await sharpScreen.close();

    // Assets: content-hashed names, kept for good.
    const css = await page.locator("link[rel=stylesheet]").getAttribute("href");
    const asset = await fetch(`${base()}${css}`);
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(asset.headers.get("content-type")).toContain("text/css");

    for (const path of ["/no-such-user-xyz", `/${host.user.url}/no-such-event`, "/booking/not-a-key"]) {
      const r = await page.goto(`${base()}${path}`);
      expect(r!.status(), path).toBe(404);
      expect(r!.headers()["content-type"], path).toContain("text/html");
      await expect(page.locator("h1").textContent()).resolves.toBe(pageMessages.en.notFoundHeading);
      expect(await page.getAttribute('meta[name="description"]', "content")).toBe(pageMessages.en.notFoundText);
      expect(await page.locator('link[rel="icon"]').count()).toBe(1);
      // Under /booking/ nothing is indexed, not even a wrong key's page.
      expect(r!.headers()["x-robots-tag"], path).toBe(path.startsWith("/booking/") ? "noindex" : undefined);
    }
    const api = await fetch(`${base()}/api`);
    expect(api.headers.get("content-type")).toContain("application/json");
    expect((await fetch(`${base()}/healthz`)).status).toBe(200);
    await context.close();
  });

  it("GET /public/users/<url>: the profile with its public active events only; a secret event still opens by its link", async () => {
    const secret = await newEvent(host, { name: "Secret", is_public: false });
    const inactive = await newEvent(host, { name: "Paused", active: false });
    const res = await rest("GET", `/public/users/${host.user.url.toUpperCase()}`);
    expect(res.status).toBe(200);
    expect(res.body.message).toBe("profile found");
    expect(res.body.data).toMatchObject({ full_name: "Hana Tanaka", url: host.user.url, avatar_name: "HT", locale: "en", time_format: "24_hours" });
    expect(res.body.data).not.toHaveProperty("email");
    const urls = res.body.data.events.map((e: Json) => e.url);
    expect(urls).toContain(event.url);
    expect(urls).not.toContain(secret.url);
    expect(urls).not.toContain(inactive.url);
    expect((await rest("GET", "/public/users/nobody-here-xyz")).status).toBe(404);
    expect((await fetch(`${base()}/${host.user.url}/${secret.url}`)).status).toBe(200);
    expect((await fetch(`${base()}/${host.user.url}/${inactive.url}`)).status).toBe(404);
  });

  it("reserved user urls are refused on create and on PATCH /user", async () => {
    for (const url of Object.values(ROOT_PATHS)) {
      const created = await rest("POST", "/admin/accounts", { admin: true, body: { account: { email: `r-${url}-${Date.now()}@example.com`, full_name: "R", url } } });
      expect(created.status, url).toBe(422);
      expect(created.body.message).toBe("url is reserved");
      const patched = await rest("PATCH", "/user", { key: host.key, body: { user: { url: url.toUpperCase() } } });
      expect(patched.status, url).toBe(422);
      expect(patched.body.message).toBe("url is reserved");
    }
    const derived = await newAccount({ full_name: "Docs" });
    expect(derived.user.url).not.toBe("docs");
  });

  it("a visitor in another zone books with every question type and guests, gets the confirmation and the calendar file", async () => {
    const context = await visitorContext({ timezoneId: "America/New_York" });
    const page = await context.newPage();
    const requested: string[] = [];
    page.on("request", (r) => requested.push(r.url()));
    const ms = await openEvent(page, `/${host.user.url}/${event.url}?question_${questions.find((q) => q.type === "hidden")!.id}=newsletter`);
    console.log(`time to first slot list (desktop, another zone): ${ms} ms`);
    expect(await page.locator("select[name=timezone]").inputValue()).toBe("America/New_York");
    expect(await page.getAttribute('meta[name="description"]', "content")).toBe(fill(pageMessages.en.descriptionEvent, { event: "Design review", host: "Hana Tanaka" }));
    // The zone control lists every zone by its name, as the server names the one it draws, not by bare ids.
    await page.locator("select[name=timezone]").focus();
    const zones = await page.locator("select[name=timezone] option").evaluateAll((options) => options.map((o) => [(o as HTMLOptionElement).value, o.textContent ?? ""]));
    expect(zones.length).toBeGreaterThan(300);
    expect(Object.fromEntries(zones)["America/New_York"]).toBe("Eastern Time (America/New York)");
    expect(Object.fromEntries(zones)["Asia/Tokyo"]).toBe("Japan Standard Time (Asia/Tokyo)");
    expect(zones.filter(([id, text]) => text === id || text === id.replace(/_/g, " "))).toEqual([]);
    expect(await page.locator("select[name=timezone]").inputValue()).toBe("America/New_York");
    // The days are the visitor's: the slot of a picked day starts on that date in New York.
    const day = await page.locator("[data-day][aria-pressed=true]").getAttribute("data-day");
    const start = await page.locator("#times [data-slot]").first().getAttribute("data-slot");
    expect(new Date(start!).toLocaleDateString("en-CA", { timeZone: "America/New_York" })).toBe(day);
    await screenshot(page, "event");
    expect(await seriousViolations(page)).toEqual([]);

    const picked = await pickFirstTime(page);
    // The picked time names its zone once, by name: "…, 09:00 – 09:30 (Eastern Standard Time)".
    const chosen = (await page.textContent("#chosen-time"))!;
    const zoneWords = new Intl.DateTimeFormat("en", { timeZone: "America/New_York", timeZoneName: "long" }).formatToParts(new Date(picked)).find((p) => p.type === "timeZoneName")!.value;
    expect(chosen.endsWith(` (${zoneWords})`), chosen).toBe(true);
    expect(chosen.match(/[()]/g)).toHaveLength(2);
    // Errors a visitor meets, in words: nothing filled, a bad e-mail, too many guests.
    await page.locator("button[type=submit]").click();
    await expect(page.locator("#err-attendee_name").textContent()).resolves.toBe(pageMessages.en.errorName);
    // A fixed field's message goes as it is fixed, not at the next submit; the summary with the last one.
    await page.fill("[name=attendee_name]", "M");
    expect(await page.locator("#err-attendee_name").isHidden()).toBe(true);
    expect(await page.getAttribute("[name=attendee_name]", "aria-invalid")).toBeNull();
    await page.fill("[name=attendee_email]", "max@");
    expect(await page.locator("#err-attendee_email").textContent()).toBe(pageMessages.en.errorEmail);
    await page.fill("[name=attendee_email]", "max@example.com");
    expect(await page.locator("#err-attendee_email").isHidden()).toBe(true);
    const requiredRadio = questions.find((q) => q.type === "radio_button")!;
    expect(await page.locator(`#err-question_${requiredRadio.id}`).isHidden()).toBe(false);
    await page.check(`[name=question_${requiredRadio.id}][value=Morning]`);
    expect(await page.locator(`#err-question_${requiredRadio.id}`).isHidden()).toBe(true);
    expect(await page.locator("#form-alert").isHidden()).toBe(false);
    await page.fill(`[name=question_${questions.find((q) => q.type === "one_line")!.id}]`, "x");
    expect(await page.locator("#form-alert").isHidden()).toBe(true);
    await page.fill(`[name=question_${questions.find((q) => q.type === "one_line")!.id}]`, "");
    await page.fill("[name=attendee_name]", "Max Visitor");
    await page.fill("[name=attendee_email]", "not-an-email");
    await page.fill("[name=guest_emails]", "a@example.com, b@example.com, c@example.com");
    await page.locator("button[type=submit]").click();
    await expect(page.locator("#err-attendee_email").textContent()).resolves.toBe(pageMessages.en.errorEmail);
    await expect(page.locator("#err-guest_emails").textContent()).resolves.toBe(pageMessages.en.errorTooManyGuests.replace("{limit}", "2"));
    const required = questions.find((q) => q.type === "one_line")!;
    await expect(page.locator(`#err-question_${required.id}`).textContent()).resolves.toBe(pageMessages.en.errorRequired);
    await screenshot(page, "form-errors");
    expect(await seriousViolations(page)).toEqual([]);

    await page.fill("[name=attendee_email]", "max@example.com");
    await page.fill("[name=guest_emails]", "a@example.com, b@example.com");
    const q = (type: string) => `question_${questions.find((x) => x.type === type)!.id}`;
    await page.fill(`[name=${q("one_line")}]`, "Hello");
    await page.fill(`[name=${q("multi_line")}]`, "Line one\nLine two");
    await page.check(`[name=${q("radio_button")}][value=Evening]`);
    await page.check(`[name=${q("check_box")}][value=Slides]`);
    await page.check(`[name=${q("check_box")}][value=Demo]`);
    await page.selectOption(`[name=${q("drop_down")}]`, "Support");
    await page.fill(`[name=${q("phone_number")}]`, "+1 555 0100");
    await page.fill(`[name=${q("email")}]`, "work@example.com");
    await page.fill(`[name=${q("number")}]`, "42");
    await page.check(`[name=${q("boolean")}][value=true]`);
    await page.fill(`[name=${q("url")}]`, "https://example.com/brief");
    await page.fill(`[name=${q("date")}]`, "2027-01-15");
    await page.check(`[name=${q("rating")}][value="4"]`);
    await page.fill(`[name=${q("file_upload")}]`, "https://example.com/file.pdf");
    await page.fill(`[name=${q("signature")}]`, "Max Visitor");
    await page.locator("button[type=submit]").click();

    const confirmation = page.locator("#confirmation[data-private-key]");
    await confirmation.waitFor();
    const key = (await confirmation.getAttribute("data-private-key"))!;
    const text = (await confirmation.textContent())!;
    // 24-hour clock of the host, in the visitor's zone.
    const nyClock = new Intl.DateTimeFormat("en-u-nu-latn", { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: "America/New_York" }).format(new Date(picked));
    expect(text).toContain(nyClock);
    expect(text).toContain("America/New_York");
    expect(text).toContain("Shibuya 1-2-3, Tokyo");
    await screenshot(page, "confirmation");
    expect(await seriousViolations(page)).toEqual([]);

    // Everything the pages loaded came from the service's own origin.
    expect(requested.filter((u) => !u.startsWith(`${base()}/`))).toEqual([]);
    const booking = (await rest("GET", `/public/bookings/${key}`)).body.data;
    expect(booking.start_time).toBe(picked);
    expect(booking.timezone).toBe("America/New_York");
    expect(booking.guest_emails).toEqual(["a@example.com", "b@example.com"]);
    const answers = Object.fromEntries(booking.answers.map((a: Json) => [a.question_id, a.value]));
    expect(answers[questions.find((x) => x.type === "check_box")!.id]).toEqual(["Slides", "Demo"]);
    expect(answers[questions.find((x) => x.type === "number")!.id]).toBe(42);
    expect(answers[questions.find((x) => x.type === "boolean")!.id]).toBe(true);
    expect(answers[questions.find((x) => x.type === "rating")!.id]).toBe(4);
    expect(answers[questions.find((x) => x.type === "hidden")!.id]).toBe("newsletter");

    const ics = await fetch(`${base()}/booking/${key}/invite.ics`);
    expect(ics.status).toBe(200);
    expect(ics.headers.get("content-type")).toContain("text/calendar");
    const body = await ics.text();
    expect(body).toContain("METHOD:REQUEST");
    expect(body).toContain(`DTSTART:${picked.replace(/[-:]/g, "").replace(/\.\d{3}/, "")}`);
    await context.close();
  }, LONG_JOURNEY_MS);

  it("a browser in a zone the API does not take (EST5EDT): the page's own zone, its times, no error", async () => {
    const context = await visitorContext({ timezoneId: "EST5EDT" });
    const page = await context.newPage();
    const plain = await newEvent(host, { name: "Legacy zone" });
    await openEvent(page, `/${host.user.url}/${plain.url}`);
    expect(await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone)).toBe("EST5EDT");
    const picked = await pickFirstTime(page);
    expect(picked).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(await page.locator("#picker-alert").isHidden()).toBe(true);
    expect(await page.locator("#timezone").inputValue()).not.toBe("EST5EDT");
    await context.close();
  });

  it("a time taken meanwhile: the page says so and shows the day's times again", async () => {
    const context = await visitorContext({ timezoneId: "Europe/Paris" });
    const page = await context.newPage();
    const plain = await newEvent(host, { name: "Quick chat" });
    await openEvent(page, `/${host.user.url}/${plain.url}`);
    const picked = await pickFirstTime(page);
    const taken = await rest("POST", `/public/users/${host.user.url}/events/${plain.url}/bookings`, {
      body: { booking: { start_time: picked, attendee_name: "Someone Else", attendee_email: "else@example.com" } },
    });
    expect(taken.status).toBe(201);
    await page.fill("[name=attendee_name]", "Late Visitor");
    await page.fill("[name=attendee_email]", "late@example.com");
    await page.locator("button[type=submit]").click();
    await page.locator("#picker-alert:not([hidden])").waitFor();
    await expect(page.locator("#picker-alert").textContent()).resolves.toBe(pageMessages.en.errorSlotTaken);
    // The alert comes after the day was read again; the day may have had that one time left (late on a month's
    // last day, none is left in the month), so no other time is required here.
    expect(await page.locator("#times-status").textContent()).not.toBe(pageMessages.en.loading);
    expect(await page.locator(`#times [data-slot="${picked}"]`).count()).toBe(0);
    expect(await page.locator("#form-section").isHidden()).toBe(true);
    await context.close();
  });

  it("keyboard only, on a phone-width screen: pick a day and a time, fill the form, book", async () => {
    const context = await visitorContext({ phone: true, timezoneId: "Asia/Kolkata" });
    const page = await context.newPage();
    const ms = await openEvent(page, `/${host.user.url}/${event.url}`);
    console.log(`time to first slot list (phone): ${ms} ms`);
    await screenshot(page, "event-phone");
    // No sideways scrolling on a phone.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    // Tab until a day button has focus, pick it with the keyboard, then Tab to the first time.
    const focusedAttr = (name: string) => page.evaluate((n) => document.activeElement?.getAttribute(n) ?? null, name);
    // On a month's last day the month shows one free day: the arrow step below needs two, so go on to the next
    // month, by the keyboard too.
    if ((await page.locator("#calendar [data-day]").count()) < 2) {
      const next = await page.locator("#calendar button.nav").last().getAttribute("data-month");
      for (let i = 0; i < 30 && (await focusedAttr("data-month")) !== next; i++) await page.keyboard.press("Tab");
      await page.keyboard.press("Enter");
      await page.locator(`#calendar [data-day^="${next}"]`).first().waitFor();
    }
    for (let i = 0; i < 30 && (await focusedAttr("data-day")) === null; i++) await page.keyboard.press("Tab");
    const firstDay = await focusedAttr("data-day");
    expect(firstDay).not.toBeNull();
    // The arrow keys walk the free days.
    await page.keyboard.press("ArrowRight");
    const nextDay = await focusedAttr("data-day");
    expect(nextDay! > firstDay!).toBe(true);
    await page.keyboard.press("Enter");
    expect(await page.locator("[data-day][aria-pressed=true]").getAttribute("data-day")).toBe(nextDay);
    for (let i = 0; i < 60 && (await focusedAttr("data-slot")) === null; i++) await page.keyboard.press("Tab");
    const slot = await focusedAttr("data-slot");
    expect(slot).not.toBeNull();
    await page.keyboard.press("Enter");
    // Focus moved to the form's heading; the fields follow in order.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("form-heading");
    await page.keyboard.press("Tab"); // "choose another time"
    await page.keyboard.press("Tab");
    await page.keyboard.type("Kiran Keys");
    await page.keyboard.press("Tab");
    await page.keyboard.type("kiran@example.com");
    await page.keyboard.press("Tab"); // guests
    await page.keyboard.press("Tab"); // first question: one_line (required)
    await page.keyboard.type("Typed");
    // The radio group (required): Tab into it and choose with the arrow key.
    await page.keyboard.press("Tab"); // multi_line
    await page.keyboard.press("Tab");
    await page.keyboard.press("Space");
    for (let i = 0; i < 60 && (await focusedAttr("type")) !== "submit"; i++) await page.keyboard.press("Tab");
    await page.keyboard.press("Enter"); // submits the form
    const confirmation = page.locator("#confirmation[data-private-key]");
    await confirmation.waitFor();
    const key = (await confirmation.getAttribute("data-private-key"))!;
    expect((await rest("GET", `/public/bookings/${key}`)).body.data.start_time).toBe(slot);
    await screenshot(page, "confirmation-phone");
    await context.close();
  });

  it("the booker cancels with a reason; a moved and a past booking show no actions", async () => {
    const context = await visitorContext();
    const page = await context.newPage();
    const made = await rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, {
      body: { booking: { start_time: await freeSlot(4), attendee_name: "Cara Cancel", attendee_email: "cara@example.com", timezone: "America/New_York", answers: requiredAnswers() } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const key = made.body.data.private_key;
    const res = await page.goto(`${base()}/booking/${key}`);
    expect(res!.headers()["cache-control"]).toContain("no-store");
    expect(await page.locator(`[data-private-key="${key}"]`).count()).toBe(1);
    // One booker's page: never in a search engine, told both ways; still described, with the site's icon.
    expect(res!.headers()["x-robots-tag"]).toBe("noindex");
    expect(await page.getAttribute('meta[name="robots"]', "content")).toBe("noindex");
    expect(await page.getAttribute('meta[name="description"]', "content")).toBe(pageMessages.en.descriptionManage);
    expect(await page.locator('link[rel="icon"]').count()).toBe(1);
    expect((await fetch(`${base()}/booking/${key}/invite.ics`)).headers.get("x-robots-tag")).toBe("noindex");
    // The host's photo (uploaded by the first test), not the initials.
    const photo = page.locator("header.site img.avatar");
    expect(await photo.getAttribute("src")).toMatch(/^\/pictures\/[0-9a-f]{32}\/128\.webp$/);
    expect(await photo.evaluate((el) => (el as HTMLImageElement).decode().then(() => (el as HTMLImageElement).naturalWidth))).toBe(32);
    expect(await page.locator("header.site .avatar:not(img)").count()).toBe(0);
    await screenshot(page, "manage");
    expect(await seriousViolations(page)).toEqual([]);
    await page.locator('[data-action="cancel"]').click();
    await page.fill("[name=reason]", "Something came up");
    await page.locator('[data-action="confirm-cancel"]').click();
    await page.waitForURL(/done=canceled/);
    await expect(page.locator("[data-status]").getAttribute("data-status")).resolves.toBe("canceled");
    expect(await page.locator('[data-action="cancel"], [data-action="reschedule"]').count()).toBe(0);
    expect(await page.textContent("main")).toContain("Something came up");
    expect((await rest("GET", `/public/bookings/${key}`)).body.data.status).toBe("canceled");
    const ics = await (await fetch(`${base()}/booking/${key}/invite.ics`)).text();
    expect(ics).toContain("METHOD:CANCEL");

    const [pastId] = await importBookings([{ event_id: event.id, start_time: new Date(Date.now() - 86_400_000).toISOString(), attendee_name: "Old", attendee_email: "old@example.com" }]);
    const past = await rest("GET", `/events/${event.id}/bookings?category=past`, { key: host.key });
    const pastKey = past.body.data.records.find((r: Json) => r.id === pastId).private_key;
    await page.goto(`${base()}/booking/${pastKey}`);
    expect(await page.textContent("main")).toContain(pageMessages.en.pastNotice);
    expect(await page.locator('[data-action="cancel"]').count()).toBe(0);
    await context.close();
  });

  it("the booker reschedules to another free time", async () => {
    const context = await visitorContext({ timezoneId: "Asia/Tokyo" });
    const page = await context.newPage();
    const made = await rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, {
      body: { booking: { start_time: await freeSlot(8), attendee_name: "Rae Move", attendee_email: "rae@example.com", timezone: "Asia/Tokyo", answers: requiredAnswers() } },
    });
    const key = made.body.data.private_key;
    await page.goto(`${base()}/booking/${key}`);
    await page.locator('[data-action="reschedule"]').click();
    // The day's last time: the first free day may be today, with few times left, so no fixed position is safe.
    const slot = page.locator("#reschedule-picker [data-slot]").last();
    await slot.waitFor();
    const to = (await slot.getAttribute("data-slot"))!;
    await slot.click();
    await page.locator('[data-action="confirm-reschedule"]').click();
    await page.waitForURL(/done=rescheduled/);
    const newKey = await page.locator("[data-private-key]").getAttribute("data-private-key");
    expect(newKey).not.toBe(key);
    const moved = (await rest("GET", `/public/bookings/${newKey}`)).body.data;
    expect(moved.start_time).toBe(to);
    expect((await rest("GET", `/public/bookings/${key}`)).body.data.status).toBe("rescheduled");
    // The old booking's page leads to the new one.
    await page.goto(`${base()}/booking/${key}`);
    expect(await page.textContent("main")).toContain(pageMessages.en.movedNotice);
    const next = page.locator("main a[data-next-booking]");
    expect(await next.textContent()).toBe(pageMessages.en.newBookingLink);
    expect(await next.getAttribute("href")).toBe(`/booking/${newKey}`);
    expect((await rest("GET", `/public/bookings/${key}`)).body.data.next_private_key).toBe(newKey);
    expect((await rest("GET", `/public/bookings/${newKey}`)).body.data.next_private_key).toBeNull();
    await next.click();
    await page.waitForURL(`${base()}/booking/${newKey}`);
    expect(await page.locator("[data-private-key]").getAttribute("data-private-key")).toBe(newKey);
    await context.close();
  });

  it("a month with no free time left opens on the next one: the event page in another zone and the reschedule picker", async () => {
    // Every day left of this month (as Tokyo reads it, from yesterday for any zone behind) is off: what a visitor
    // meets late on a month's last day, made true on any day.
    const today = dayFromToday(0, "Asia/Tokyo");
    const off: Json[] = [];
    for (let d = dayFromToday(-1, "Asia/Tokyo"); d.slice(0, 7) <= today.slice(0, 7); d = addDays(d, 1)) off.push({ date: d, intervals: [] });
    const full = await newHost({ full_name: "Mona Month", timezone: "Tokyo" }, { ...ALWAYS_OPEN, date_overrides: off });
    const plain = await newEvent(full, { name: "Next month" });
    // From the next month's first day: on a month's first day in Tokyo, today..+30 holds only off days.
    const nextFirst = addDays(off[off.length - 1].date, 1);
    const first = (await rest("GET", `/public/users/${full.user.url}/events/${plain.url}/slots?timezone=Asia/Tokyo&date_from=${nextFirst}&date_to=${addDays(nextFirst, 6)}`)).body.data.slots;
    const made = await rest("POST", `/public/users/${full.user.url}/events/${plain.url}/bookings`, {
      body: { booking: { start_time: first[0].start_time, attendee_name: "Nina Next", attendee_email: "nina@example.com", timezone: "Asia/Tokyo" } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);

    const context = await visitorContext({ timezoneId: "Asia/Tokyo" });
    const page = await context.newPage();
    await page.goto(`${base()}/booking/${made.body.data.private_key}`);
    await page.locator('[data-action="reschedule"]').click();
    const slot = page.locator("#reschedule-picker [data-slot]").first();
    await slot.waitFor({ timeout: 10_000 });
    expect(Date.parse((await slot.getAttribute("data-slot"))!)).toBeGreaterThan(Date.now());
    await context.close();

    const visitor = await visitorContext({ timezoneId: "America/Los_Angeles" });
    const eventPage = await visitor.newPage();
    await openEvent(eventPage, `/${full.user.url}/${plain.url}`);
    expect(await eventPage.locator("select[name=timezone]").inputValue()).toBe("America/Los_Angeles");
    await visitor.close();
  });

  it("the times list does not move the page as the script reads it again in the visitor's zone (no layout shift)", async () => {
    // Two hours a day, in Tokyo; the visitor in Seoul (the same clock, another zone): the script reads the times
    // again for the visitor's zone, and the list is as long as the one the server drew.
    const days = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
    const short = await newHost({ full_name: "Seo Short", timezone: "Tokyo" }, { ...ALWAYS_OPEN, weekly_hours: Object.fromEntries(days.map((d) => [d, [{ start: "00:00", end: "02:00" }, { start: "21:00", end: "23:00" }]])) });
    const plain = await newEvent(short, { name: "Short list" });
    for (const phone of [false, true]) {
      const context = await visitorContext({ timezoneId: "Asia/Seoul", phone });
      const page = await context.newPage();
      await page.addInitScript(() => {
        const shifts: number[] = [];
        (window as unknown as { shifts: number[] }).shifts = shifts;
        new PerformanceObserver((list) => {
          for (const e of list.getEntries() as unknown as { value: number; hadRecentInput: boolean }[]) if (!e.hadRecentInput) shifts.push(e.value);
        }).observe({ type: "layout-shift", buffered: true });
      });
      await openEvent(page, `/${short.user.url}/${plain.url}`);
      expect(await page.locator("select[name=timezone]").inputValue()).toBe("Asia/Seoul");
      await expect.poll(() => page.textContent("#times-status")).not.toBe(pageMessages.en.loading);
      await page.waitForTimeout(300);
      expect(await page.evaluate(() => (window as unknown as { shifts: number[] }).shifts), phone ? "phone" : "desktop").toEqual([]);
      await context.close();
    }
  });

  it("embeds in an iframe of another origin with ?embed=true only, and books inside it", async () => {
    const target = `${base()}/${host.user.url}/${event.url}`;
    const outer: Server = createServer((req, res) => {
      const src = req.url === "/plain" ? target : `${target}?embed=true`;
      res.writeHead(200, { "content-type": "text/html" });
      // The partner's page as docs/pages.md tells an integrator to write it, plus a log of the frame's messages
      // (on /late without embed.js, which the test adds once the frame has reported).
      const listener = req.url === "/late" ? "" : `<script src="${base()}/assets/embed.js" async></script>`;
      res.end(`<!doctype html><title>Partner site</title><h1>Partner</h1><iframe src="${src}" title="Booking" width="900" height="1400" style="border:0;display:block"></iframe>
${listener}
<script>window.heights = []; addEventListener("message", (e) => { if (e.data && e.data.type === "scheduling:height") window.heights.push(e.data.height); });</script>`);
    });
    await new Promise<void>((resolve) => outer.listen(0, "127.0.0.1", resolve));
    const outerUrl = `http://localhost:${(outer.address() as AddressInfo).port}`;
    try {
      const embedded = await fetch(`${target}?embed=true`);
      expect(embedded.headers.get("content-security-policy")).toContain("frame-ancestors *");
      expect(embedded.headers.get("x-frame-options")).toBeNull();
      const context = await visitorContext();
      const page = await context.newPage();
      await page.goto(`${outerUrl}/`);
      const frame = page.frameLocator("iframe");
      await frame.locator("#times [data-slot]").first().waitFor();
      expect(await frame.locator("header.site").count()).toBe(0);
      // The frame says how tall its page is and embed.js fits the iframe to it: no blank area, no inner scrollbar.
      const fits = async () => {
        const inner = await frame.locator("body").evaluate((b) => Math.ceil(b.getBoundingClientRect().height));
        const outer = await page.locator("iframe").evaluate((f) => f.getBoundingClientRect().height);
        const heights = await page.evaluate(() => (window as unknown as { heights: number[] }).heights);
        return { inner, outer, last: heights[heights.length - 1] };
      };
      await expect.poll(async () => { const f = await fits(); return f.outer === f.inner && f.last === f.inner; }, { timeout: 5000 }).toBe(true);
      const pickerHeight = (await fits()).outer;
      expect(pickerHeight).toBeLessThan(1400);
      await frame.locator("#times [data-slot]").first().click();
      await frame.locator("[name=attendee_name]").fill("Frame Visitor");
      await frame.locator("[name=attendee_email]").fill("frame@example.com");
      const fq = (type: string) => `[name=question_${questions.find((x) => x.type === type)!.id}]`;
      await frame.locator(fq("one_line")).fill("From the partner site");
      await frame.locator(`${fq("radio_button")}[value=Morning]`).check();
      await frame.locator("button[type=submit]").click();
      await frame.locator("#confirmation[data-private-key]").waitFor();
      expect(await frame.locator("#confirmation a[target=_blank]").count()).toBeGreaterThan(0);
      // After booking the page is shorter than the form was, and the frame follows it.
      await expect.poll(async () => { const f = await fits(); return f.outer === f.inner && f.last === f.inner; }, { timeout: 5000 }).toBe(true);
      expect((await fits()).outer).toBeLessThan(pickerHeight + 1);
      await screenshot(page, "embed");

      // embed.js is async: run after the frame's last report, it asks the frame again and still fits it.
      await page.goto(`${outerUrl}/late`);
      await frame.locator("#times [data-slot]").first().waitFor();
      await expect.poll(() => page.evaluate(() => (window as unknown as { heights: number[] }).heights.length)).toBeGreaterThan(0);
      expect(await page.locator("iframe").evaluate((f) => f.getBoundingClientRect().height)).toBe(1400);
      await page.addScriptTag({ url: `${base()}/assets/embed.js` });
      await expect.poll(async () => { const f = await fits(); return f.outer === f.inner && f.last === f.inner; }, { timeout: 5000 }).toBe(true);

      // Without embed=true the page refuses to be framed: nothing of it renders in the frame.
      await page.goto(`${outerUrl}/plain`);
      await page.waitForTimeout(500);
      expect(await page.frameLocator("iframe").locator("[data-day]").count()).toBe(0);
      await context.close();
    } finally {
      await new Promise((resolve) => outer.close(resolve));
    }
  });

  it("every locale renders with all its words, Arabic right to left", async () => {
    // A browser asking for a language the service does not speak: the pages speak the host's.
    const context = await visitorContext({ timezoneId: "Asia/Tokyo", locale: "sv-SE" });
    const page = await context.newPage();
    for (const locale of LOCALES) {
      await rest("PATCH", "/user", { key: host.key, body: { user: { locale } } });
      await openEvent(page, `/${host.user.url}/${event.url}`);
      expect(await page.getAttribute("html", "lang")).toBe(locale);
      expect(await page.getAttribute("html", "dir")).toBe(locale === "ar" ? "rtl" : "ltr");
      expect(await page.textContent("#pick-heading")).toBe(pageMessages[locale].pickDay);
      expect(await page.textContent("label[for=timezone]")).toBe(pageMessages[locale].labelTimeZone);
      expect(await page.getAttribute('meta[name="description"]', "content")).toBe(fill(pageMessages[locale].descriptionEvent, { event: "Design review", host: "Hana Tanaka" }));
      // The zone control keeps human names in every language once the script has listed every zone.
      await page.locator("select[name=timezone]").focus();
      const tokyo = (await page.locator('select[name=timezone] option[value="Asia/Tokyo"]').textContent())!;
      expect(tokyo, locale).toMatch(/^\D+ \(Asia\/Tokyo\)$/);
      const text = await page.innerText("main");
      expect(text, locale).not.toMatch(/\{\w+\}|undefined|NaN/);
      if (locale === "ar" || locale === "ja") await screenshot(page, `event-${locale}`);
    }
    await rest("PATCH", "/user", { key: host.key, body: { user: { locale: "en" } } });
    await context.close();
  }, LONG_JOURNEY_MS);
});

/** A free slot of the test event, by the API (tests take different ones so their order does not matter). */
async function freeSlot(index: number): Promise<string> {
  const res = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots`);
  return res.body.data.slots[index].start_time;
}

function requiredAnswers(): Json[] {
  return [
    { question_id: questions.find((q) => q.type === "one_line")!.id, value: "x" },
    { question_id: questions.find((q) => q.type === "radio_button")!.id, value: "Morning" },
  ];
}
