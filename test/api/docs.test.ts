// The human docs page at /docs (Swagger UI served from this server only, reading our OpenAPI document, under a strict policy) and no-store on answers with a secret.
import { describe, expect, it } from "vitest";
import { baseUrl, newAccount, rest } from "../helpers/api.js";
import { launchBrowser } from "../helpers/browser.js";

describe("GET /docs", () => {
  it("is an HTML page whose every asset is local and loads", async () => {
    const res = await fetch(`${baseUrl()}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).not.toMatch(/https?:|\/\/[a-z]/i);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets).toEqual([
      "/docs/assets/swagger-ui.css",
      "/docs/assets/favicon-32x32.png",
      "/docs/assets/favicon-16x16.png",
      "/docs/assets/swagger-ui-bundle.js",
      "/docs/init.js",
    ]);
    const types: Record<string, RegExp> = { css: /^text\/css/, png: /^image\/png/, js: /^text\/javascript/ };
    for (const asset of assets) {
      const a = await fetch(`${baseUrl()}${asset}`);
      expect(a.status, asset).toBe(200);
      expect(a.headers.get("content-type"), asset).toMatch(types[asset.split(".").pop()!]);
      expect((await a.arrayBuffer()).byteLength, asset).toBeGreaterThan(100);
    }
  });

  it("points Swagger UI at /api/v1/openapi.json and never at the online validator", async () => {
    const init = await (await fetch(`${baseUrl()}/docs/init.js`)).text();
    expect(init).toContain('url: "/api/v1/openapi.json"');
    expect(init).toContain("validatorUrl: null");
    expect(init).not.toMatch(/https?:/);
  });

  it("serves only the listed files of swagger-ui-dist", async () => {
    for (const name of ["index.html", "swagger-initializer.js", "package.json", "..%2Fpackage.json", "constructor"]) {
      const res = await fetch(`${baseUrl()}/docs/assets/${name}`);
      expect(res.status, name).toBe(404);
    }
  });
});

describe("headers of /docs and of answers with a secret", () => {
  it("/docs is sent with a strict policy: own scripts and styles only, no framing, no sniffing, no referrer", async () => {
    const res = await fetch(`${baseUrl()}/docs`);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(await res.text()).not.toMatch(/<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>|<style|style="/);
    for (const asset of ["/docs/init.js", "/docs/assets/swagger-ui-bundle.js", "/api/v1/openapi.json"]) {
      expect((await fetch(`${baseUrl()}${asset}`)).headers.get("x-content-type-options"), asset).toBe("nosniff");
    }
  });

  it("Swagger UI does not keep a pasted key in the browser", async () => {
    const init = await (await fetch(`${baseUrl()}/docs/init.js`)).text();
    expect(init).not.toContain("persistAuthorization");
  });

  it("renders in a real browser under that policy without a single violation", { timeout: 60_000 }, async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error" || /Content Security Policy/i.test(m.text())) problems.push(m.text());
      });
      page.on("pageerror", (e) => problems.push(e.message));
      await page.goto(`${baseUrl()}/docs`);
      await page.waitForSelector(".opblock", { timeout: 30_000 });
      await page.locator(".opblock-summary").first().click();
      await page.waitForSelector(".opblock-body", { timeout: 10_000 });
      expect(await page.locator(".opblock").count()).toBeGreaterThan(10);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it("every answer that carries api_key is no-store, over REST and RPC; others are not marked", async () => {
    const { key } = await newAccount();
    for (const [method, path] of [["GET", "/user"], ["GET", "/user/settings"], ["PATCH", "/user"]] as const) {
      const res = await rest(method, path, { key, body: method === "PATCH" ? { user: { bio: "hi" } } : undefined });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("cache-control"), path).toBe("no-store");
    }
    const created = await rest("POST", "/admin/accounts", { admin: true, body: { account: { email: `nostore-${Date.now()}@example.com`, full_name: "No Store" } } });
    expect(created.headers.get("cache-control")).toBe("no-store");
    const regenerated = await rest("PUT", "/users/regenerate_api_key", { key });
    expect(regenerated.headers.get("cache-control")).toBe("no-store");
    const events = await rest("GET", "/events", { key: regenerated.body.data.api_key });
    expect(events.headers.get("cache-control")).toBeNull();
    for (const headers of [{}, { "connect-timeout-ms": "5000" }] as Record<string, string>[]) {
      const rpc = await fetch(`${baseUrl()}/scheduling.v1.UserService/GetUser`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": regenerated.body.data.api_key, ...headers }, body: "{}" });
      expect(rpc.status).toBe(200);
      expect(rpc.headers.get("cache-control"), JSON.stringify(headers)).toBe("no-store");
    }
  });
});
