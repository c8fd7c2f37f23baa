// Connecting through OAuth (providers.md "Connecting"): the authorization URL, the callback's answers, states, reconnecting, two accounts, revocation, consent in Chromium, no token anywhere.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GOOGLE_ROUTES } from "../fakes/google.js";
import { newAccount, rest, restAt, type Json } from "../helpers/api.js";
import { launchBrowser } from "../helpers/browser.js";
import { hostAt } from "../helpers/calendars.js";
import { answer, authorize, connectThroughOAuth, finish, hostWithGoogle, startProviderWorld, visit, type ProviderWorld } from "../helpers/providers.js";
import { createHash } from "node:crypto";
import mongoose from "mongoose";

let w: ProviderWorld;

beforeAll(async () => {
  w = await startProviderWorld({ CORS_ORIGINS: "https://app.example.org" });
});

afterAll(async () => {
  await w?.stop();
});

async function connections(key: string): Promise<Json[]> {
  return (await restAt(w.base, "GET", "/api/v1/calendar_connections", { key })).body.data;
}

describe("POST /oauth/<provider>/authorize", () => {
  it("answers 422 `google is not configured` on a server without the Google client", async () => {
    const { key } = await newAccount();
    const res = await rest("POST", "/oauth/google/authorize", { key, body: { authorization: { purpose: "calendar" } } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe("google is not configured");
  });

  it("refuses another purpose, a foreign return_url and a missing purpose", async () => {
    const { key } = await hostAt(w.base);
    const wrong = await authorize(w.base, key, "google", { purpose: "conference" });
    expect([wrong.status, wrong.body.message]).toEqual([422, "purpose is not included in the list"]);
    const foreign = await authorize(w.base, key, "google", { purpose: "calendar", return_url: "https://evil.example.com/done" });
    expect([foreign.status, foreign.body.message]).toEqual([422, "return_url is not allowed"]);
    const missing = await authorize(w.base, key, "google", {});
    expect([missing.status, missing.body.message]).toEqual([400, "missing params"]);
    const noKey = await restAt(w.base, "POST", "/api/v1/oauth/google/authorize", { body: { authorization: { purpose: "calendar" } } });
    expect(noKey.status).toBe(401);
    for (const ok of [`${w.base}/settings`, "https://app.example.org/back"]) {
      expect((await authorize(w.base, key, "google", { purpose: "calendar", return_url: ok })).status).toBe(200);
    }
  });

  it("gives the provider's URL with PKCE S256, a state of 256 bits, the least scopes, offline access and consent", async () => {
    const { key } = await hostAt(w.base);
    const before = Date.now();
    const res = await authorize(w.base, key, "google", { purpose: "calendar" });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe("authorization started");
    const { authorization_url: link, expires_at } = res.body.data;
    expect(new Date(expires_at).getTime() - before).toBeGreaterThan(9 * 60_000);
    expect(new Date(expires_at).getTime() - before).toBeLessThanOrEqual(10 * 60_000 + 5000);
    const url = new URL(link);
    expect(`${url.origin}${url.pathname}`).toBe(w.google.authUrl);
    const q = Object.fromEntries(url.searchParams);
    expect(q).toMatchObject({ response_type: "code", client_id: w.google.clientId, redirect_uri: `${w.base}/oauth/google/callback`, code_challenge_method: "S256", access_type: "offline", prompt: "consent" });
    expect(q.scope.split(" ").sort()).toEqual([
      "https://www.googleapis.com/auth/calendar.calendarlist.readonly",
      "https://www.googleapis.com/auth/calendar.events",
      "https://www.googleapis.com/auth/calendar.freebusy",
    ]);
    expect(Buffer.from(q.state, "base64url").length).toBeGreaterThanOrEqual(16);
    expect(q.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The state is stored only as its hash, bound to the account.
    const stored = await w.mongo.collection("oauth_states").findOne({ _id: createHash("sha256").update(q.state).digest("hex") as never });
    expect(stored).not.toBeNull();
    expect(JSON.stringify(stored)).not.toContain(q.state);
  });
});

describe("GET /oauth/<provider>/callback", () => {
  it("makes the connection, lists its calendars, sends the browser back; the same state a second time is refused", async () => {
    w.google.addUser("ann@gmail.test", { name: "Ann" });
    const team = w.google.addCalendar("ann@gmail.test", { summary: "Team", accessRole: "writer" });
    w.google.addCalendar("ann@gmail.test", { summary: "Holidays", accessRole: "reader", id: "en.usa#holiday@group.v.calendar.google.com" });
    const { key } = await hostAt(w.base);
    const started = await authorize(w.base, key, "google", { purpose: "calendar", return_url: `${w.base}/settings?tab=calendars` });
    const callback = w.google.approve(started.body.data.authorization_url, { user: "ann@gmail.test" });
    const asked = await visit(callback);
    expect(asked.status).toBe(200);
    expect(await connections(key)).toHaveLength(0);
    const landed = await answer(callback, asked, "confirm");
    expect(landed.status).toBe(303);
    expect(landed.location).toBe(`${w.base}/settings?tab=calendars&connected=google`);
    const [conn] = await connections(key);
    expect(conn).toMatchObject({ provider: "google", account: "ann@gmail.test", status: "ok", last_error: null });
    const byName = Object.fromEntries((conn.calendars as Json[]).map((c) => [c.name, c]));
    expect(byName["ann@gmail.test"]).toMatchObject({ provider: "google", can_write: true, email: "ann@gmail.test", check_for_conflicts: true });
    expect(byName.Team).toMatchObject({ can_write: true, email: null });
    expect(byName.Holidays).toMatchObject({ can_write: false, email: null });
    expect(team).toMatch(/@group\.calendar\.google\.com$/);
    // The token request sent the verifier and the same redirect_uri (the fake refuses otherwise); tokens are sealed.
    const stored = await w.mongo.collection("calendar_connections").findOne({ account: "ann@gmail.test" });
    const grant = w.google.grants({ live: true }).find((g) => g.user.email === "ann@gmail.test")!;
    expect(stored!.credentials_sealed).not.toContain(grant.liveRefreshTokens[0]);
    expect(JSON.stringify(stored)).not.toContain(grant.liveAccessTokens[0]);

    const again = await visit(callback);
    expect(again.status).toBe(400);
    expect(again.text).toContain("already used");
    // The same answer a second time finds nothing to take.
    const twice = await answer(callback, asked, "confirm");
    expect(twice.status).toBe(400);
    expect(await connections(key)).toHaveLength(1);
  });

  it("callbacks racing with one state: one takes it, every other is told it was used; answers racing: one connects", async () => {
    w.google.addUser("rita@gmail.test", { name: "Rita" });
    const { key } = await hostAt(w.base);
    const link = (await authorize(w.base, key, "google", { purpose: "calendar", return_url: `${w.base}/settings` })).body.data.authorization_url as string;
    const callback = w.google.approve(link, { user: "rita@gmail.test" });
    const visits = await Promise.all(Array.from({ length: 8 }, () => visit(callback)));
    const asked = visits.filter((v) => v.status === 200);
    expect(asked).toHaveLength(1);
    for (const other of visits.filter((v) => v.status !== 200)) expect({ status: other.status, used: other.text.includes("already used") }).toEqual({ status: 400, used: true });
    const answers = await Promise.all(Array.from({ length: 8 }, () => answer(callback, asked[0], "confirm")));
    expect(answers.map((a) => a.status).sort()).toEqual([303, ...Array(7).fill(400)]);
    expect(await connections(key)).toHaveLength(1);
  });

  it("answers 400 pages in the account's locale: denied, unknown state, expired state, a refused code", async () => {
    w.google.addUser("dora@gmail.test");
    const { key } = await hostAt(w.base);
    await restAt(w.base, "PATCH", "/api/v1/user", { key, body: { user: { locale: "de" } } });
    const start = async () => (await authorize(w.base, key, "google", { purpose: "calendar" })).body.data.authorization_url as string;

    const denied = await visit(w.google.approve(await start(), { user: "dora@gmail.test", deny: true }));
    expect(denied.status).toBe(400);
    expect(denied.text).toContain('lang="de"');
    expect(denied.text).toContain("weil der Zugriff nicht erlaubt wurde");

    const unknown = await visit(`${w.base}/oauth/google/callback?code=4/abc&state=${"x".repeat(43)}`);
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain("unknown, has expired or was already used");

    const link = await start();
    const state = new URL(link).searchParams.get("state")!;
    await w.mongo.collection("oauth_states").updateOne({ _id: createHash("sha256").update(state).digest("hex") as never }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    const expired = await visit(w.google.approve(link, { user: "dora@gmail.test" }));
    expect(expired.status).toBe(400);
    expect(expired.text).toContain("abgelaufen");

    const good = new URL(w.google.approve(await start(), { user: "dora@gmail.test" }));
    good.searchParams.set("code", "4/not-a-code-google-gave");
    const refused = await finish(good.href);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain("hat die Autorisierung nicht angenommen");
    expect(await connections(key)).toHaveLength(0);
  });
});

describe("the callback asks the person who approved before anything is stored", () => {
  it("a host sends the authorization link to someone else: the page names both accounts; declined, nothing is connected and the grant is revoked", async () => {
    w.google.addUser("zoe@gmail.test", { name: "Zoe" });
    const host = await hostAt(w.base);
    await restAt(w.base, "PATCH", "/api/v1/user", { key: host.key, body: { user: { full_name: "Mallory Host" } } });
    const link = (await authorize(w.base, host.key, "google", { purpose: "calendar", return_url: `${w.base}/settings` })).body.data.authorization_url as string;
    // Zoe approves at Google with her own account.
    const callback = w.google.approve(link, { user: "zoe@gmail.test" });
    const asked = await visit(callback);
    expect(asked.status).toBe(200);
    expect(asked.text).toContain("Connect the Google account zoe@gmail.test to the scheduling account of Mallory Host (");
    expect(asked.text).toContain(`${host.user.email})?`);
    expect(asked.text).toContain("If someone else sent you this link");
    // Nothing stored yet: no connection, no calendar, and her tokens nowhere in the answer.
    expect(await connections(host.key)).toHaveLength(0);
    const grant = w.google.grants({ live: true }).find((g) => g.user.email === "zoe@gmail.test")!;
    for (const token of [...grant.liveAccessTokens, ...grant.liveRefreshTokens]) expect(asked.text).not.toContain(token);
    // Whoever started it knows the state from the link, but not the page's confirmation: that is refused.
    const state = new URL(link).searchParams.get("state")!;
    const forged = await fetch(`${w.base}/oauth/google/callback`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ state, confirmation: "x".repeat(43), decision: "confirm" }),
    });
    expect(forged.status).toBe(400);
    expect(await connections(host.key)).toHaveLength(0);
    const revokes = w.google.http.calls(GOOGLE_ROUTES.revoke);
    const declined = await answer(callback, asked, "decline");
    expect(declined.status).toBe(200);
    expect(declined.location).toBeNull();
    expect(declined.text).toContain("Google was not connected, and the access you just gave was withdrawn.");
    expect(w.google.http.calls(GOOGLE_ROUTES.revoke)).toBe(revokes + 1);
    expect(w.google.grants({ live: true }).some((g) => g.user.email === "zoe@gmail.test")).toBe(false);
    expect(await connections(host.key)).toHaveLength(0);
    expect(JSON.stringify(await w.mongo.collection("oauth_states").find({ user_id: new mongoose.Types.ObjectId(host.user.id as string) }).toArray())).not.toContain(grant.liveRefreshTokens[0] ?? "none");
    // Declined is final: confirming afterwards finds nothing.
    expect((await answer(callback, asked, "confirm")).status).toBe(400);
    expect(await connections(host.key)).toHaveLength(0);
  });

  it("the page is in the account's language; a decline does not revoke a grant another account of ours holds", async () => {
    w.google.addUser("yan@gmail.test");
    const owner = await hostWithGoogle(w, "yan@gmail.test");
    const other = await hostAt(w.base);
    await restAt(w.base, "PATCH", "/api/v1/user", { key: other.key, body: { user: { locale: "de", full_name: "Otto" } } });
    const callback = w.google.approve((await authorize(w.base, other.key, "google", { purpose: "calendar" })).body.data.authorization_url, { user: "yan@gmail.test" });
    const asked = await visit(callback);
    expect(asked.text).toContain('lang="de"');
    expect(asked.text).toContain("Das Google-Konto yan@gmail.test mit dem Terminkonto von Otto (");
    const revokes = w.google.http.calls(GOOGLE_ROUTES.revoke);
    expect((await answer(callback, asked, "decline")).status).toBe(200);
    expect(w.google.http.calls(GOOGLE_ROUTES.revoke)).toBe(revokes);
    expect(await connections(other.key)).toHaveLength(0);
    expect((await connections(owner.key))[0]).toMatchObject({ status: "ok", account: "yan@gmail.test" });
  });
});

describe("the same provider account again, and by two accounts", () => {
  it("reconnecting repairs the connection: same ids, same choices, one connection", async () => {
    w.google.addUser("finn@gmail.test");
    w.google.addCalendar("finn@gmail.test", { summary: "Side", accessRole: "owner" });
    const host = await hostWithGoogle(w, "finn@gmail.test");
    const side = (host.connection.calendars as Json[]).find((c) => c.name === "Side");
    await restAt(w.base, "PATCH", `/api/v1/calendars/${side.id}`, { key: host.key, body: { calendar: { check_for_conflicts: false } } });
    w.google.addCalendar("finn@gmail.test", { summary: "New one", accessRole: "writer" });
    await connectThroughOAuth(w, host.key, "google", "finn@gmail.test");
    const list = await connections(host.key);
    expect(list).toHaveLength(1);
    expect(list[0].id).toBe(host.connection.id);
    const again = Object.fromEntries((list[0].calendars as Json[]).map((c) => [c.name, c]));
    expect(again.Side).toMatchObject({ id: side.id, check_for_conflicts: false });
    expect(again["New one"]).toBeDefined();
  });

  it("two accounts of ours hold their own tokens; disconnecting revokes only when the last one goes", async () => {
    w.google.addUser("gus@gmail.test");
    const a = await hostWithGoogle(w, "gus@gmail.test");
    const b = await hostWithGoogle(w, "gus@gmail.test");
    expect(a.connection.id).not.toBe(b.connection.id);
    expect(w.google.grants({ live: true }).filter((g) => g.user.email === "gus@gmail.test").length).toBe(2);
    const revokesBefore = w.google.http.calls(GOOGLE_ROUTES.revoke);
    expect((await restAt(w.base, "DELETE", `/api/v1/calendar_connections/${a.connection.id}`, { key: a.key })).status).toBe(200);
    expect(w.google.http.calls(GOOGLE_ROUTES.revoke)).toBe(revokesBefore);
    expect(w.google.grants({ live: true }).some((g) => g.user.email === "gus@gmail.test")).toBe(true);
    expect((await restAt(w.base, "DELETE", `/api/v1/calendar_connections/${b.connection.id}`, { key: b.key })).status).toBe(200);
    expect(w.google.http.calls(GOOGLE_ROUTES.revoke)).toBe(revokesBefore + 1);
    expect(w.google.grants({ live: true }).some((g) => g.user.email === "gus@gmail.test")).toBe(false);
    expect(await w.mongo.collection("calendar_connections").countDocuments({ provider_account_id: "gus@gmail.test" })).toBe(0);
  });

  it("a failed revocation still forgets the tokens", async () => {
    w.google.addUser("hal@gmail.test");
    const h = await hostWithGoogle(w, "hal@gmail.test");
    w.google.serverError(GOOGLE_ROUTES.revoke, { status: 503 });
    expect((await restAt(w.base, "DELETE", `/api/v1/calendar_connections/${h.connection.id}`, { key: h.key })).status).toBe(200);
    expect(await connections(h.key)).toHaveLength(0);
  });
});

describe("consent in a browser", () => {
  it("Chromium follows the authorization URL, clicks Allow, confirms on our page, and lands back on the return page; a second link, declined, connects nothing", async () => {
    w.google.addUser("ivy@gmail.test");
    const { key } = await hostAt(w.base);
    const link = (await authorize(w.base, key, "google", { purpose: "calendar", return_url: `${w.base}/healthz` })).body.data.authorization_url as string;
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(link);
      await page.selectOption("#user", { label: `ivy <ivy@gmail.test>` });
      await Promise.all([page.waitForURL(/\/oauth\/google\/callback/), page.click("button[value=allow]")]);
      // Our page names both accounts and asks; nothing is connected until the person says so.
      expect(await page.textContent("#outcome")).toMatch(/^Connect the Google account ivy@gmail\.test to the scheduling account of .+ \(.+@.+\)\?$/);
      expect(await connections(key)).toHaveLength(0);
      await Promise.all([page.waitForURL(/connected=google/), page.click("#confirm")]);
      expect(page.url()).toBe(`${w.base}/healthz?connected=google`);
      expect(await page.textContent("body")).toContain("ok");
      // The next link reaches someone else, who sees whose account it is and declines.
      w.google.addUser("jay@gmail.test");
      const next = (await authorize(w.base, key, "google", { purpose: "calendar", return_url: `${w.base}/healthz` })).body.data.authorization_url as string;
      await page.goto(next);
      await page.selectOption("#user", { label: `jay <jay@gmail.test>` });
      await Promise.all([page.waitForURL(/\/oauth\/google\/callback/), page.click("button[value=allow]")]);
      expect(await page.textContent("#outcome")).toContain("Connect the Google account jay@gmail.test");
      await Promise.all([page.waitForLoadState("load"), page.click("#decline")]);
      expect(await page.textContent("#outcome")).toBe("Google was not connected, and the access you just gave was withdrawn.");
      expect(w.google.grants({ live: true }).some((g) => g.user.email === "jay@gmail.test")).toBe(false);
    } finally {
      await browser.close();
    }
    const list = await connections(key);
    expect(list.map((c) => c.account)).toEqual(["ivy@gmail.test"]);
  }, 90_000);
});

describe("secrets", () => {
  it("no token, code or verifier in any answer or log line", async () => {
    const grants = w.google.grants();
    const secrets = grants.flatMap((g) => [...g.liveAccessTokens, ...g.liveRefreshTokens]);
    expect(secrets.length).toBeGreaterThan(0);
    const logs = w.server.logs();
    for (const s of secrets) expect(logs).not.toContain(s);
    expect(logs).not.toMatch(/ya29\.|1\/\/|4\/[A-Za-z0-9_-]{20}/);
    expect(logs).not.toContain("fake-google-secret");
  });
});
