// The outbound HTTP guard (src/providers/shared/outbound.ts): which addresses are private, URL checks, the deadline and the size cap against loopback servers.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkOutboundUrl, isPrivateAddress, OutboundError, outboundFetch, outboundRequest } from "../../src/providers/shared/outbound.js";

describe("isPrivateAddress", () => {
  it("refuses loopback, private, link-local, CGNAT, multicast, reserved and IPv4-mapped forms; allows public ones", () => {
    for (const a of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fc00::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:7f00:1", "::7f00:1", "::127.0.0.1", "64:ff9b::a00:1", "64:ff9b:1::a00:1", "2002:7f00:1::1", "fec0::1"]) {
      expect([a, isPrivateAddress(a)]).toEqual([a, true]);
    }
    for (const a of ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) expect([a, isPrivateAddress(a)]).toEqual([a, false]);
  });
});

describe("checkOutboundUrl", () => {
  it("wants http(s) and refuses private hosts unless allowed", async () => {
    await expect(checkOutboundUrl("ftp://example.com/x", { allowPrivate: true })).rejects.toMatchObject({ code: "bad_url" });
    await expect(checkOutboundUrl("not a url", { allowPrivate: true })).rejects.toBeInstanceOf(OutboundError);
    await expect(checkOutboundUrl("http://127.0.0.1:1/", { allowPrivate: false })).rejects.toMatchObject({ code: "blocked_address" });
    await expect(checkOutboundUrl("http://localhost:1/", { allowPrivate: false })).rejects.toMatchObject({ code: "blocked_address" });
    expect((await checkOutboundUrl("http://127.0.0.1:1/", { allowPrivate: true })).hostname).toBe("127.0.0.1");
  });
});

describe("outboundRequest against loopback servers", () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === "/trickle") {
        res.writeHead(200);
        const t = setInterval(() => res.write("x"), 50);
        res.on("close", () => clearInterval(t));
      } else if (req.url === "/big") res.end("y".repeat(10_000));
      else if (req.url === "/redirect") res.writeHead(302, { location: "http://example.com/" }).end();
      else res.end(`${req.method} ok`);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("answers, and refuses loopback unless allowed", async () => {
    expect(await outboundRequest(`${base}/`, { method: "GET", timeoutMs: 2000, allowPrivate: true })).toMatchObject({ status: 200, body: "GET ok" });
    await expect(outboundRequest(`${base}/`, { method: "GET", timeoutMs: 2000, allowPrivate: false })).rejects.toMatchObject({ code: "blocked_address" });
  });

  it("ends a trickling answer at the deadline and a large one at the cap; redirects come back as they are", async () => {
    const t0 = Date.now();
    await expect(outboundRequest(`${base}/trickle`, { method: "GET", timeoutMs: 300, allowPrivate: true })).rejects.toMatchObject({ code: "timeout" });
    expect(Date.now() - t0).toBeLessThan(5000);
    await expect(outboundRequest(`${base}/big`, { method: "GET", timeoutMs: 2000, maxBytes: 1000, allowPrivate: true })).rejects.toMatchObject({ code: "too_large" });
    expect(await outboundRequest(`${base}/redirect`, { method: "GET", timeoutMs: 2000, allowPrivate: true })).toMatchObject({ status: 302 });
  });

  it("outboundFetch carries methods and bodies the way tsdav uses them", async () => {
    const f = outboundFetch({ timeoutMs: 2000, allowPrivate: true });
    const res = await f(`${base}/`, { method: "PROPFIND", headers: { depth: "0" }, body: "<x/>" });
    expect([res.status, await res.text()]).toEqual([200, "PROPFIND ok"]);
  });
});
