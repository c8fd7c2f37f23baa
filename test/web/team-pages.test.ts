// The team pages in a real browser (Debian's Chromium, teams.md): the team page lists its public events, a round robin booking shows its host, a collective event only the common times, the booker's page moves a team booking, unknown teams are 404 pages.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addDays } from "../../src/domain/timezones.js";
import { pageMessages } from "../../src/i18n/pages.js";
import { baseUrl, rest, type Json } from "../helpers/api.js";
import { dayFromToday, newHost, utcIso as at, type Host } from "../helpers/bookings.js";
import { ok } from "../helpers/calls.js";
import { launchBrowser, screenshot, seriousViolations } from "../helpers/browser.js";
import { teams, teamUrl } from "../helpers/teams.js";

const WEEK = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
/** Every day from `start` to `end` (UTC), no notice. */
const hours = (start: string, end: string) => ({ weekly_hours: Object.fromEntries(WEEK.map((d) => [d, [{ start, end }]])), date_overrides: [], minimum_notice_minutes: 0, booking_window_days: 60 });

let browser: Browser;
let a: Host;
let b: Host;
let team: Json;
let roundRobin: Json;
let collective: Json;
let hidden: Json;
// A day of this month when possible (the page opens on it), a few days ahead.
let day = dayFromToday(3);
while (Number(day.slice(8)) > 27) day = addDays(day, 1);

beforeAll(async () => {
  // A is free 09:00-12:00, B 11:00-14:00: together only 11:00-12:00.
  [browser, a, b] = await Promise.all([
    launchBrowser(),
    newHost({ full_name: "Ada Early", timezone: "UTC" }, hours("09:00", "12:00")),
    newHost({ full_name: "Bo Late", timezone: "UTC" }, hours("11:00", "14:00")),
  ]);
  team = await ok("rest", a.key, teams.create({ name: "Support Crew", url: teamUrl("pages"), timezone: "UTC" }), 201);
  const invited = await ok("rest", a.key, teams.invite(team.id, { email: b.user.email }), 201);
  await ok("rest", b.key, teams.accept(invited.id));
  const hosts = [{ user_id: a.user.id }, { user_id: b.user.id }];
  const event = (name: string, url: string, scheduling: string, more: Json = {}) =>
    ok("rest", a.key, teams.createEvent(team.id, { name, url, slot_duration: "30_minutes", scheduling, hosts, ...more }), 201);
  [roundRobin, collective, hidden] = await Promise.all([
    event("Any of us", "any", "round_robin", { description: "Whoever is free." }),
    event("All of us", "all", "collective"),
    event("Secret", "secret", "round_robin", { is_public: false }),
  ]);
});

afterAll(async () => {
  await browser?.close();
});

const visitor = (): Promise<BrowserContext> => browser.newContext({ timezoneId: "UTC", locale: "en-US", viewport: { width: 1200, height: 900 } });

/** Opens `day` in the page's picker and answers its free times (data-slot). */
async function timesOf(page: Page): Promise<string[]> {
  const month = day.slice(0, 7);
  await page.locator("#calendar [data-day]").first().waitFor();
  if ((await page.locator(`#calendar [data-day^="${month}"]`).count()) === 0) await page.locator(`#calendar button.nav[data-month="${month}"]`).click();
  await page.locator(`#calendar [data-day="${day}"]`).click();
  await page.locator("#times [data-slot]").first().waitFor();
  return page.locator("#times [data-slot]").evaluateAll((els) => els.map((e) => e.getAttribute("data-slot") ?? ""));
}

describe("team pages", () => {
  it("the team page lists the team's public events, each linking to its page", { timeout: 60_000 }, async () => {
    const context = await visitor();
    const page = await context.newPage();
    const res = await page.goto(`${baseUrl()}/team/${team.url}`);
    expect(res!.status()).toBe(200);
    expect(await page.locator("h1").textContent()).toBe("Support Crew");
    const names = await page.locator(".event-list .event-name").allTextContents();
    expect(names.sort()).toEqual(["All of us", "Any of us"]);
    expect(await page.locator(".event-list a").evaluateAll((els) => els.map((e) => e.getAttribute("href")).sort())).toEqual([`/team/${team.url}/all`, `/team/${team.url}/any`]);
    expect(await seriousViolations(page)).toEqual([]);
    // A non-public event is left off the list but opens by its link.
    expect((await page.goto(`${baseUrl()}/team/${team.url}/${hidden.url}`))!.status()).toBe(200);
    await context.close();
  });

  it("books a round robin time from the event page: the confirmation names the host chosen; the booker's page moves it", { timeout: 90_000 }, async () => {
    const context = await visitor();
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/team/${team.url}/${roundRobin.url}`);
    expect(await page.locator("#event-name").textContent()).toBe("Any of us");
    expect(await page.locator(".host-name").textContent()).toBe("Support Crew");
    expect(await page.locator("footer.site a").getAttribute("href")).toBe(`/team/${team.url}`);
    // Round robin: any host's time, 09:00 to 14:00.
    const times = await timesOf(page);
    expect(times[0]).toBe(at(day, "09:00"));
    expect(times.at(-1)).toBe(at(day, "13:30"));
    expect(await seriousViolations(page)).toEqual([]);

    await page.locator(`#times [data-slot="${at(day, "11:00")}"]`).click();
    await page.locator("#form-section").waitFor();
    await page.fill("[name=attendee_name]", "Vic Visitor");
    await page.fill("[name=attendee_email]", "vic@example.com");
    await page.locator("button[type=submit]").click();
    await page.locator("#confirmed-heading").waitFor();
    const key = (await page.locator("#confirmation").getAttribute("data-private-key"))!;
    const made = (await rest("GET", `/public/bookings/${key}`)).body.data;
    expect(made.start_time).toBe(at(day, "11:00"));
    expect(made.team).toMatchObject({ url: team.url, name: "Support Crew" });
    // Whoever the rules chose is named on the confirmation (both were free at 11:00).
    const chosen = made.host_full_name;
    expect(["Ada Early", "Bo Late"]).toContain(chosen);
    const hostRow = page.locator("#confirmation .facts div", { hasText: pageMessages.en.labelHost });
    expect(await hostRow.locator("dd").textContent()).toBe(chosen);
    expect(await page.locator("#confirmation").textContent()).toContain(pageMessages.en.confirmedText.replace("{host}", chosen));
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, "team-round-robin-confirmed");

    // The booker's page: the team in its header; a reschedule picks among the team event's times.
    await page.goto(`${baseUrl()}/booking/${key}`);
    expect(await page.locator("header.site a.host-link").getAttribute("href")).toBe(`/team/${team.url}`);
    await page.locator('[data-action="reschedule"]').click();
    const to = at(day, chosen === "Ada Early" ? "09:30" : "13:00");
    const slot = page.locator(`#reschedule-picker [data-slot="${to}"]`);
    const month = day.slice(0, 7);
    await page.locator("#reschedule-picker [data-day]").first().waitFor();
    if ((await page.locator(`#reschedule-picker [data-day^="${month}"]`).count()) === 0) await page.locator(`#reschedule-picker button.nav[data-month="${month}"]`).click();
    await page.locator(`#reschedule-picker [data-day="${day}"]`).click();
    await slot.click();
    await page.locator('[data-action="confirm-reschedule"]').click();
    await page.waitForURL(/done=rescheduled/);
    const newKey = await page.locator("[data-private-key]").getAttribute("data-private-key");
    expect((await rest("GET", `/public/bookings/${newKey}`)).body.data.start_time).toBe(to);
    await context.close();
  });

  it("a collective event offers only the times every host is free, and its booking names every host", { timeout: 90_000 }, async () => {
    const context = await visitor();
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/team/${team.url}/${collective.url}`);
    const times = await timesOf(page);
    expect(times).toEqual([at(day, "11:00"), at(day, "11:30")]);
    await page.locator(`#times [data-slot="${at(day, "11:30")}"]`).click();
    await page.fill("[name=attendee_name]", "Cy Common");
    await page.fill("[name=attendee_email]", "cy@example.com");
    await page.locator("button[type=submit]").click();
    await page.locator("#confirmed-heading").waitFor();
    const hostRow = page.locator("#confirmation .facts div", { hasText: pageMessages.en.labelHost });
    expect((await hostRow.locator("dd").textContent())?.split(", ").sort()).toEqual(["Ada Early", "Bo Late"]);
    await context.close();
  });

  it("an unknown team, or an unknown event of a team, is the HTML 404 page", async () => {
    const context = await visitor();
    const page = await context.newPage();
    for (const path of [`/team/no-such-team-${process.pid}`, `/team/${team.url}/no-such-event`]) {
      const r = await page.goto(`${baseUrl()}${path}`);
      expect(r!.status(), path).toBe(404);
      expect(r!.headers()["content-type"], path).toContain("text/html");
      expect(await page.locator("h1").textContent(), path).toBe(pageMessages.en.notFoundHeading);
    }
    await context.close();
  });
});
