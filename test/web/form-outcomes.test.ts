// What the event page says once its form is sent, in Chromium: a request's confirmation (booking-kinds.md: no calendar entry yet), and each refusal of the API in the visitor's words, on the field it names.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageMessages } from "../../src/i18n/pages.js";
import { fill } from "../../src/i18n/index.js";
import { baseUrl, rest, type Json } from "../helpers/api.js";
import { ALWAYS_OPEN, newEvent, newHost, type Host } from "../helpers/bookings.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { laterSlot, launchBrowser, screenshot } from "../helpers/browser.js";
import { startServer, type RunningServer } from "../helpers/server.js";

const en = pageMessages.en;

let browser: Browser;
let host: Host;

beforeAll(async () => {
  [browser, host] = await Promise.all([launchBrowser(), newHost({ full_name: "Olive Outcome", timezone: "UTC" }, ALWAYS_OPEN)]);
});

afterAll(async () => {
  await browser?.close();
});

/** Opens an event page (at `base`), picks its `nth` free time and fills name and e-mail; the caller sends the form. */
async function filledForm(path: string, nth = 0, base = baseUrl()): Promise<{ page: Page; start: string; close: () => Promise<void> }> {
  const context = await browser.newContext({ timezoneId: "UTC", locale: "en-US", viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${base}${path}`);
  const slot = await laterSlot(page, nth);
  const start = (await slot.getAttribute("data-slot"))!;
  await slot.click();
  await page.locator("#form-section").waitFor();
  await page.fill("[name=attendee_name]", "Vera Visitor");
  await page.fill("[name=attendee_email]", "vera@example.com");
  return { page, start, close: () => context.close() };
}

/** Sends the form and waits for the form's message line. */
async function refusal(page: Page): Promise<string> {
  await page.locator("button[type=submit]").click();
  await page.locator("#form-alert:not([hidden])").waitFor();
  return (await page.locator("#form-alert").textContent()) ?? "";
}

describe("a request's confirmation", () => {
  it("says the request was sent and the host must confirm it; no add-to-calendar links, the manage link kept", async () => {
    const event = await newEvent(host, { name: "Needs a yes", requires_confirmation: true });
    const { page, close } = await filledForm(`/${host.user.url}/${event.url}`);
    const answered = page.waitForResponse((r) => r.request().method() === "POST" && r.url().endsWith("/bookings"));
    await page.locator("button[type=submit]").click();
    expect(((await (await answered).json()) as Json).data.status).toBe("pending");
    await page.locator("#confirmed-heading").waitFor();
    await screenshot(page, "request-sent");
    expect(await page.locator("#confirmed-heading").textContent()).toBe(en.requestedHeading);
    const text = (await page.locator("#confirmation").textContent())!;
    expect(text).toContain(fill(en.requestedText, { host: "Olive Outcome" }));
    expect(text).toContain(en.statusPending);
    expect(text).not.toContain(en.confirmedText.replace("{host}", "Olive Outcome"));
    expect(await page.locator("#confirmation [data-calendar], #confirmation a[href$='invite.ics']").count()).toBe(0);
    const key = (await page.locator("#confirmation").getAttribute("data-private-key"))!;
    expect(await page.locator(`#confirmation a[href="/booking/${encodeURIComponent(key)}"]`).textContent()).toBe(en.manageLink);
    await close();
  });

  it("a booking of an event without confirmation still offers its calendar entries", async () => {
    const event = await newEvent(host, { name: "Straight in" });
    const { page, close } = await filledForm(`/${host.user.url}/${event.url}`);
    await page.locator("button[type=submit]").click();
    await page.locator("#confirmed-heading").waitFor();
    expect(await page.locator("#confirmed-heading").textContent()).toBe(en.confirmedHeading);
    expect(await page.locator("#confirmation [data-calendar]").count()).toBe(3);
    await close();
  });
});

describe("a refusal of the API, in words", () => {
  it("a single-use link used meanwhile (410): the link is no longer valid", async () => {
    const event = await newEvent(host, { name: "By link", is_public: false });
    const made = await rest("POST", `/events/${event.id}/single_use_links`, { key: host.key });
    expect(made.status).toBe(201);
    const token = new URL(made.body.data.url).pathname.split("/").pop()!;
    const { page, start, close } = await filledForm(`/d/${token}`, 3);
    const other = new Date(Date.parse(start) + 3_600_000).toISOString();
    const used = await rest("POST", `/public/links/${token}/bookings`, { body: { booking: { start_time: other, attendee_name: "First", attendee_email: "first@example.com" } } });
    expect(used.status).toBe(201);
    expect(await refusal(page)).toBe(en.linkGoneText);
    await close();
  });

  it("an event switched off meanwhile (404): the event is no longer open for booking", async () => {
    const event = await newEvent(host, { name: "Soon off" });
    const { page, close } = await filledForm(`/${host.user.url}/${event.url}`);
    expect((await rest("PATCH", `/events/${event.id}`, { key: host.key, body: { event: { active: false } } })).status).toBe(200);
    expect(await refusal(page)).toBe(en.errorNotAvailable);
    await close();
  });

  it("a name longer than the API takes: the field takes at most 80 characters, and the API's 422 says too long on the name", async () => {
    const event = await newEvent(host, { name: "Long names" });
    const { page, close } = await filledForm(`/${host.user.url}/${event.url}`);
    expect(await page.getAttribute("[name=attendee_name]", "maxlength")).toBe("80");
    // A value set by script passes the maxlength, as a browser without it would send it.
    await page.locator("[name=attendee_name]").evaluate((el) => ((el as HTMLInputElement).value = "N".repeat(100)));
    const tooLong = fill(en.errorTooLong, { limit: "80" });
    expect(await refusal(page)).toBe(tooLong);
    expect(await page.locator("#err-attendee_name").textContent()).toBe(tooLong);
    expect(await page.getAttribute("[name=attendee_name]", "aria-invalid")).toBe("true");
    await close();
  });

  it("an answer longer than the API takes: too long, on that question's field", async () => {
    const ids: string[] = [];
    for (const [title, type] of [["Topic", "one_line"], ["Details", "multi_line"]]) {
      const q = await rest("POST", "/questions", { key: host.key, body: { question: { title, question_type: type } } });
      expect(q.status).toBe(201);
      ids.push(q.body.data.id);
    }
    const event = await newEvent(host, { name: "Long answers", event_questions_attributes: ids.map((id, i) => ({ question_id: id, required: false, order_number: i + 1 })) });
    const { page, close } = await filledForm(`/${host.user.url}/${event.url}`);
    await page.fill(`[name=question_${ids[0]}]`, "Budgets");
    await page.locator(`[name=question_${ids[1]}]`).evaluate((el) => ((el as HTMLTextAreaElement).value = "o".repeat(6000)));
    const tooLong = fill(en.errorTooLong, { limit: "5000" });
    expect(await refusal(page)).toBe(tooLong);
    expect(await page.locator(`#err-question_${ids[1]}`).textContent()).toBe(tooLong);
    expect(await page.locator(`#err-question_${ids[0]}`).isHidden()).toBe(true);
    await close();
  });
});

describe("too many attempts (429, on a server of its own with a small limit of public calls)", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT_PUBLIC_PER_IP: "20", RATE_LIMIT_WINDOW_SECONDS: "3600" });
  });
  afterAll(async () => {
    expect(await server?.stop()).toBe(0);
  });

  it("says so without promising a wait of a minute whatever Retry-After says (an hour's window here)", async () => {
    const fixtures = fixturesAt(server.baseUrl);
    const busy = await fixtures.newHost({ full_name: "Busy Host", timezone: "UTC" }, ALWAYS_OPEN);
    const event = await fixtures.newEvent(busy, { name: "Popular" });
    const { page, close } = await filledForm(`/${busy.user.url}/${event.url}`, 0, server.baseUrl);
    // The rest of the window's public calls, spent by the same address.
    let retryAfter = 0;
    for (let i = 0; i < 40 && retryAfter === 0; i++) {
      const res = await fetch(`${server.baseUrl}/api/v1/public/users/${busy.user.url}`);
      if (res.status === 429) retryAfter = Number(res.headers.get("retry-after"));
    }
    // Windows are fixed (an hour here, from the epoch), so the wait is what is left of this one: seconds near the top
    // of the hour (a run at 07:59 UTC saw under 60), most often many minutes. The text names no length either way.
    expect(retryAfter).toBeGreaterThan(0);
    const text = await refusal(page);
    expect(text).toBe(en.errorTooManyRequests);
    expect(text).not.toMatch(/minute/);
    await close();
  });
});
