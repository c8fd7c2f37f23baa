// Unknown page addresses over HTTP (booking-pages.md): every GET or HEAD of a page-shaped path no page answers is the HTML 404 page, never JSON and never framed; the API's, the other roots' and RPC paths keep their JSON 404.
import { beforeAll, describe, expect, it } from "vitest";
import { pageMessages } from "../../src/i18n/pages.js";
import { baseUrl } from "../helpers/api.js";
import { newEvent, newHost, type Host } from "../helpers/bookings.js";
import { rawRequest } from "../helpers/raw.js";

let host: Host;

beforeAll(async () => {
  host = await newHost({ full_name: "Nora Found", timezone: "UTC" });
  await newEvent(host, { name: "Intro", url: "intro" });
});

/** GET over a raw socket: the path exactly as written (fetch would resolve `..` and the like). */
async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: string; headers: Record<string, unknown> }> {
  const res = await rawRequest(baseUrl(), { method: "GET", path, headers });
  return { status: res.status, type: String(res.headers["content-type"] ?? ""), body: res.text, headers: res.headers };
}

describe("an unknown page address", () => {
  const pagePaths = () => [
    "/",
    `/${host.user.url}/no.such`,
    "/no.such",
    `/${host.user.url}/no%20such`,
    `/${host.user.url}/x~y`,
    `/${host.user.url}/%3Cscript%3E`,
    "/team/tm/no.such",
    "/team/no.such",
    `/${host.user.url}/intro/extra`,
    "/booking",
    "/booking/",
    "/booking/not-a-key/x",
    "/d/not-a-token/x",
    "/a/b/c/d",
  ];

  it("is the HTML not-found page, for GET and HEAD", async () => {
    for (const path of pagePaths()) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.type, path).toContain("text/html");
      expect(res.body, path).toContain(`<h1>${pageMessages.en.notFoundHeading}</h1>`);
      const head = await rawRequest(baseUrl(), { method: "HEAD", path });
      expect([head.status, String(head.headers["content-type"])], path).toEqual([404, expect.stringContaining("text/html")]);
    }
  });

  it("is never framed, even asked with ?embed=true", async () => {
    for (const path of [`/${host.user.url}/no-such-event?embed=true`, "/no-such-user-xyz?embed=true", `/${host.user.url}/no.such?embed=true`]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers["content-security-policy"], path).toContain("frame-ancestors 'none'");
      expect(res.headers["x-frame-options"], path).toBe("DENY");
    }
    // The pages that may be framed still are.
    const embedded = await get(`/${host.user.url}/intro?embed=true`);
    expect(embedded.status).toBe(200);
    expect(embedded.headers["content-security-policy"]).toContain("frame-ancestors *");
  });

  it("of the API, another root or an RPC keeps the JSON 404", async () => {
    for (const path of ["/api", "/api/v1/nope", "/API/v2/user", "/docs/nope", "/healthz/x", "/metrics/x", "/assets/nope.css", "/pictures/x/y/z", "/oauth/x", "/scheduling.v1.Nope/Get", "/grpc.health.v1.Health/Nope"]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.type, path).toContain("application/json");
      expect(JSON.parse(res.body), path).toMatchObject({ success: false, message: "endpoint does not exists" });
    }
    // Other methods on a page-shaped path too.
    const posted = await rawRequest(baseUrl(), { method: "POST", path: "/no.such", headers: { "content-type": "application/json" }, body: "{}" });
    expect([posted.status, String(posted.headers["content-type"])]).toEqual([404, expect.stringContaining("application/json")]);
  });
});
