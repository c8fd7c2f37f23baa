// The host's answer page of a request in Chromium (booking-kinds.md "Bookings that wait for the host"): opened from the link of the host's request e-mail (a real SMTP server), it confirms or declines without an API key; a GET answers nothing, a wrong token is the 404 page, an answered request shows its status and no buttons.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageMessages } from "../../src/i18n/pages.js";
import { fill } from "../../src/i18n/index.js";
import { rest, type Json } from "../helpers/api.js";
import { dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { launchBrowser, screenshot, seriousViolations } from "../helpers/browser.js";
import { useMailServer } from "../helpers/mailServer.js";
import type { ReceivedMail } from "../helpers/smtp.js";

const en = pageMessages.en;

const site = useMailServer();
let browser: Browser;
let host: Host;
let event: Json;
let question: Json;
let slotSeq = 0;

beforeAll(async () => {
  browser = await launchBrowser();
  host = await newHost({ timezone: "Tokyo", time_format: "24_hours" });
  question = (await rest("POST", "/questions", { key: host.key, body: { question: { title: "What about?", question_type: "one_line" } } })).body.data;
  event = await newEvent(host, {
    name: "Intro call",
    requires_confirmation: true,
    enable_guest_emails: true,
    guest_emails_limit: 2,
    event_questions_attributes: [{ question_id: question.id, required: false, order_number: 1 }],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

/** A request of its own half hour, three days ahead; the host's request e-mail's answer link. */
async function requested(email: string): Promise<{ id: string; privateKey: string; link: string; hostMail: ReceivedMail; start: string }> {
  const start = utcIso(dayFromToday(3), `${String(2 + slotSeq++).padStart(2, "0")}:00`);
  const made = await rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, {
    body: { booking: { start_time: start, attendee_name: "Grace Hopper", attendee_email: email, guest_emails: ["guest@example.com"], answers: [{ question_id: question.id, value: "Compilers" }] } },
  });
  expect(made.status).toBe(201);
  expect(made.body.data.status).toBe("pending");
  const { id, private_key: privateKey } = made.body.data;
  const [hostMail] = await site.smtp().waitFor(1, (m) => m.envelope.to.includes(host.user.email) && (m.parsed.text ?? "").includes(privateKey));
  const link = /(https?:\/\/\S+\/booking\/\S+\/answer\/[A-Za-z0-9_-]+)/.exec(hostMail.parsed.text ?? "")?.[1];
  if (!link) throw new Error(`no answer link in the host's mail:\n${hostMail.parsed.text}`);
  return { id, privateKey, link, hostMail, start };
}

const statusOf = async (id: string): Promise<Json> => (await rest("GET", `/bookings/${id}`, { key: host.key })).body.data;

async function withPage<T>(run: (page: Page) => Promise<T>): Promise<T> {
  const context = await browser.newContext({ locale: "en-US" });
  try {
    return await run(await context.newPage());
  } finally {
    await context.close();
  }
}

/** The link on this test's server: the mail writes APP_URL's host (localhost), which Chromium resolves as the server's address may not. */
const onServer = (link: string): string => `${site.server().baseUrl}${new URL(link).pathname}`;

describe("the host's answer page", () => {
  it("is the one answer link of the host's request e-mail (no API call), which the booker's mails and page never carry", async () => {
    const { id, privateKey, link, hostMail } = await requested("mail-links@example.com");
    expect(new URL(link).pathname).toMatch(new RegExp(`^/booking/${privateKey}/answer/[A-Za-z0-9_-]{32}$`));
    expect(hostMail.parsed.text).toContain(`Answer the request: ${link}`);
    expect(hostMail.parsed.html).toContain(`href="${link}"`);
    expect(hostMail.parsed.text).not.toContain("/api/v1/bookings/");
    const token = new URL(link).pathname.split("/").pop()!;
    const [booker] = await site.smtp().waitFor(1, (m) => m.envelope.to.includes("mail-links@example.com"));
    expect(booker.raw).not.toContain(token);
    const page = await fetch(`${site.server().baseUrl}/booking/${privateKey}`);
    expect(page.status).toBe(200);
    expect(await page.text()).not.toContain(token);
    expect(JSON.stringify((await rest("GET", `/public/bookings/${privateKey}`)).body)).not.toContain(token);
    expect((await statusOf(id)).status).toBe("pending");
  });

  it("shows the request; a GET answers nothing; Confirm confirms it (as the API's confirm), and the page then shows it without buttons", async () => {
    const { id, link, start } = await requested("confirm-me@example.com");
    await withPage(async (page) => {
      const opened = await page.goto(onServer(link));
      expect(opened?.status()).toBe(200);
      expect(opened?.headers()["cache-control"]).toBe("private, no-store");
      expect(opened?.headers()["content-security-policy"]).toContain("form-action 'self'");
      expect(await page.locator("h1").textContent()).toBe(en.answerHeading);
      const facts = (await page.locator("dl.facts").textContent()) ?? "";
      for (const shown of ["Intro call", "Grace Hopper", "confirm-me@example.com", "guest@example.com", "What about?", "Compilers", en.statusPending, en.labelAnswerBy]) expect(facts).toContain(shown);
      // The time in the host's zone (Tokyo, UTC+9, no summer time) and clock (24 hours).
      expect(facts).toContain(`${String((new Date(start).getUTCHours() + 9) % 24).padStart(2, "0")}:00`);
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, "answer-page");
      // Opened (twice, as a link scanner would): nothing answered.
      await page.reload();
      expect((await statusOf(id)).status).toBe("pending");

      await page.locator('button[data-action="confirm-request"]').click();
      await page.waitForURL(/done=confirmed/);
      expect(await page.locator('.notice[data-done="confirmed"]').textContent()).toBe(fill(en.answerConfirmedDone, { attendee: "Grace Hopper" }));
      expect(await page.locator("[data-request-status]").getAttribute("data-request-status")).toBe("confirmed");
      expect(await page.locator("button").count()).toBe(0);
    });
    expect((await statusOf(id)).status).toBe("confirmed");
    // What a confirmed booking gets: the booker's confirmation with its invitation.
    const [mail] = await site.smtp().waitFor(1, (m) => m.envelope.to.includes("confirm-me@example.com") && /^Confirmed/.test(m.parsed.subject ?? ""));
    expect(mail.parsed.attachments.some((a) => a.contentType.startsWith("text/calendar"))).toBe(true);
  }, 120_000);

  it("declines with a reason, which the booker's decline e-mail carries; a page left open then says booking is not pending", async () => {
    const { id, link } = await requested("decline-me@example.com");
    await withPage(async (page) => {
      const stale = await page.context().newPage();
      await stale.goto(onServer(link));
      await page.goto(onServer(link));
      await page.locator("textarea[name=reason]").fill("Fully booked that week");
      await page.locator('button[data-action="decline-request"]').click();
      await page.waitForURL(/done=declined/);
      expect(await page.locator('.notice[data-done="declined"]').textContent()).toBe(fill(en.answerDeclinedDone, { attendee: "Grace Hopper" }));
      expect(await page.locator("dl.facts").textContent()).toContain("Fully booked that week");
      expect(await page.locator("button").count()).toBe(0);

      // The page opened before the answer still has its buttons: its Confirm is refused, never a 500.
      await stale.locator('button[data-action="confirm-request"]').click();
      await stale.waitForURL(/done=not_pending/);
      expect(await stale.locator('.notice[data-done="not_pending"]').textContent()).toContain("booking is not pending");
      expect(await stale.locator("[data-request-status]").getAttribute("data-request-status")).toBe("declined");
      expect(await stale.locator("button").count()).toBe(0);
    });
    expect(await statusOf(id)).toMatchObject({ status: "declined", cancel_reason: "Fully booked that week" });
    const [mail] = await site.smtp().waitFor(1, (m) => m.envelope.to.includes("decline-me@example.com") && /^Declined/.test(m.parsed.subject ?? ""));
    expect(mail.parsed.text).toContain("Fully booked that week");
  }, 120_000);

  it("a wrong token is the HTML 404 page, for a GET and for a POST, and answers nothing", async () => {
    const { id, privateKey, link } = await requested("wrong-token@example.com");
    const token = new URL(link).pathname.split("/").pop()!;
    const wrong = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
    await withPage(async (page) => {
      for (const path of [`/booking/${privateKey}/answer/${wrong}`, `/booking/${privateKey}/answer/short`, `/booking/${"A".repeat(43)}/answer/${token}`]) {
        const res = await page.goto(`${site.server().baseUrl}${path}`);
        expect(res?.status(), path).toBe(404);
        expect(await page.locator("h1").textContent(), path).toBe(en.notFoundHeading);
      }
    });
    for (const path of [`/booking/${privateKey}/answer/${wrong}`, `/booking/${"A".repeat(43)}/answer/${token}`]) {
      const res = await fetch(`${site.server().baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "answer=confirm", redirect: "manual" });
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    }
    // The right token answers (a plain form post, no script), as the page's form does.
    const right = await fetch(onServer(link), { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "answer=decline&reason=", redirect: "manual" });
    expect(right.status).toBe(303);
    expect(right.headers.get("location")).toBe(`${new URL(link).pathname}?done=declined`);
    expect(await statusOf(id)).toMatchObject({ status: "declined", cancel_reason: null });
  }, 120_000);

  it("speaks the host's language and the browser's, right to left for Arabic", async () => {
    const { link } = await requested("languages@example.com");
    await withPage(async (page) => {
      await page.goto(`${onServer(link)}?locale=ar`);
      expect(await page.getAttribute("html", "dir")).toBe("rtl");
      await screenshot(page, "answer-page-ar");
      expect(await page.locator("h1").textContent()).toBe(pageMessages.ar.answerHeading);
      expect(await page.locator('button[data-action="decline-request"]').textContent()).toBe(pageMessages.ar.answerDecline);
      // The language goes along with the answer: the page after it speaks Arabic too.
      await page.locator('button[data-action="confirm-request"]').click();
      await page.waitForURL(/done=confirmed/);
      expect(await page.getAttribute("html", "lang")).toBe("ar");
    });
  }, 120_000);
});
