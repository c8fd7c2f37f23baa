// What the event page costs a visitor on the wire (issue 41): every request Chromium makes to show it, headers and compressed bodies, at most 30 KB; a team event's page (teams.md) too.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseUrl, type Json } from "../helpers/api.js";
import { ALWAYS_OPEN, newEvent, newHost, type Host } from "../helpers/bookings.js";
import { launchBrowser } from "../helpers/browser.js";
import { ok } from "../helpers/calls.js";
import { rawRequest } from "../helpers/raw.js";
import { teams, teamUrl } from "../helpers/teams.js";

const BUDGET_BYTES = 30 * 1024;

let browser: Browser;
let host: Host;
let event: Json;
let seated: Json;
/** A round robin event of two hosts open all day: the team's page path. */
let teamPage: string;

beforeAll(async () => {
  [browser, host] = await Promise.all([launchBrowser(), newHost({ full_name: "Wire Weigher", timezone: "UTC" }, ALWAYS_OPEN)]);
  event = await newEvent(host, { name: "Intro call", description: "What we will talk about." });
  seated = await newEvent(host, { name: "Group call", description: "What we will talk about.", seats_per_slot: 1000 });
  const other = await newHost({ timezone: "UTC" }, ALWAYS_OPEN);
  const team = await ok("rest", host.key, teams.create({ name: "Wire Team", url: teamUrl("wire"), timezone: "UTC" }), 201);
  await ok("rest", other.key, teams.accept((await ok("rest", host.key, teams.invite(team.id, { email: other.user.email }), 201)).id));
  const teamEvent = await ok("rest", host.key, teams.createEvent(team.id, { name: "Intro call", url: "intro", description: "What we will talk about.", scheduling: "round_robin", hosts: [{ user_id: host.user.id }, { user_id: other.user.id }] }), 201);
  teamPage = `/team/${team.url}/${teamEvent.url}`;
});

afterAll(async () => {
  await browser?.close();
});

describe("the event page on the wire", () => {
  it.each([
    ["a host's", () => `/${host.user.url}/${event.url}`],
    ["a team's", () => teamPage],
    ["a seated event's (each time says its seats left)", () => `/${host.user.url}/${seated.url}`],
  ])("%s event page is at most 30 KB with every request it makes (HTML, script, style, icon, the slots of a host open all day), compressed as Chromium asks", async (_whose, path) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const answers: Array<Promise<{ url: string; bytes: number }>> = [];
    page.on("requestfinished", (request) => {
      answers.push(request.sizes().then((s) => ({ url: request.url(), bytes: s.responseHeadersSize + s.responseBodySize })));
    });
    await page.goto(`${baseUrl()}${path()}`, { waitUntil: "networkidle" });
    // The time picker has drawn the days that can be booked: the slots came too.
    await page.locator("button[data-day]").first().waitFor();
    // A browser with a window asks for the icon the page names too; headless Chromium does not, so it is weighed here.
    if (!(await Promise.all(answers)).some((a) => a.url.endsWith("/favicon.ico"))) {
      const icon = await rawRequest(baseUrl(), { method: "GET", path: "/favicon.ico", headers: { "Accept-Encoding": "gzip, deflate, br, zstd" } });
      const headerBytes = Object.entries(icon.headers).reduce((n, [k, v]) => n + k.length + String(v).length + 4, "HTTP/1.1 200 OK\r\n\r\n".length);
      answers.push(Promise.resolve({ url: `${baseUrl()}/favicon.ico`, bytes: headerBytes + icon.bytes.byteLength }));
    }
    const weighed = await Promise.all(answers);
    await context.close();
    const total = weighed.reduce((sum, a) => sum + a.bytes, 0);
    const list = weighed.map((a) => `${new URL(a.url).pathname.slice(0, 60)} ${a.bytes}`).join(", ");
    expect(weighed.some((a) => /\/assets\/booking\.[0-9a-f]+\.js$/.test(a.url)), list).toBe(true);
    expect(total, `${total} bytes: ${list}`).toBeLessThanOrEqual(BUDGET_BYTES);
  });
});
