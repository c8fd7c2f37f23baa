// Words a host typed that are wider than a phone (a German compound as an event's name, a long name, a long question) in Chromium at 360 px: they wrap, and no page grows wider than the screen.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseUrl, rest, type Json } from "../helpers/api.js";
import { ALWAYS_OPEN, newEvent, newHost, type Host } from "../helpers/bookings.js";
import { laterSlot, launchBrowser, screenshot } from "../helpers/browser.js";

const WORD = "Rechtsschutzversicherungsgesellschaftsberatung";
const PHONE = 360;

let browser: Browser;
let host: Host;
let event: Json;

beforeAll(async () => {
  [browser, host] = await Promise.all([launchBrowser(), newHost({ full_name: `Maximiliane ${WORD}`, timezone: "Europe/Berlin" }, ALWAYS_OPEN)]);
  const question = await rest("POST", "/questions", {
    key: host.key,
    body: { question: { title: `Ihre ${WORD}?`, question_type: "radio_button", question_details: { options: [WORD, "Nein"] } } },
  });
  expect(question.status).toBe(201);
  event = await newEvent(host, {
    name: WORD,
    description: `${WORD}${WORD}`,
    event_questions_attributes: [{ question_id: question.body.data.id, required: false, order_number: 1 }],
  });
  await rest("PATCH", "/user", { key: host.key, body: { user: { bio: `${WORD}${WORD}` } } });
});

afterAll(async () => {
  await browser?.close();
});

describe("a host's long words on a phone", () => {
  it("the profile, the event page, its form, the confirmation and the booker's page stay as wide as the screen", async () => {
    const context = await browser.newContext({ timezoneId: "Europe/Berlin", locale: "de-DE", viewport: { width: PHONE, height: 700 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const width = () => page.evaluate(() => document.documentElement.scrollWidth);
    await page.goto(`${baseUrl()}/${host.user.url}`);
    expect(await width(), "profile").toBeLessThanOrEqual(PHONE);
    await page.goto(`${baseUrl()}/${host.user.url}/${event.url}`);
    expect(await page.locator("h1").textContent()).toBe(WORD);
    expect(await width(), "event page").toBeLessThanOrEqual(PHONE);
    await (await laterSlot(page)).click();
    await page.locator("#form-section").waitFor();
    await screenshot(page, "long-words-form");
    expect(await width(), "form").toBeLessThanOrEqual(PHONE);
    await page.fill("[name=attendee_name]", WORD);
    await page.fill("[name=attendee_email]", "lang@example.com");
    await page.locator("button[type=submit]").click();
    await page.locator("#confirmed-heading").waitFor();
    expect(await width(), "confirmation").toBeLessThanOrEqual(PHONE);
    await page.goto(`${baseUrl()}/booking/${encodeURIComponent((await page.locator("#confirmation").getAttribute("data-private-key"))!)}`);
    expect(await width(), "the booker's page").toBeLessThanOrEqual(PHONE);
    await context.close();
  });
});
