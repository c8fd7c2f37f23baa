// The human docs page at /docs: Swagger UI served from this server only, reading our OpenAPI document.
import { describe, expect, it } from "vitest";
import { baseUrl } from "../helpers/api.js";

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
