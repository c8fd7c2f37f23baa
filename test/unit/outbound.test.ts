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

  it("refuses every IPv6 form of a private IPv4 address: translated (RFC 2765), mapped and compatible in any notation, ISATAP", () => {
    for (const a of [
      // IPv4-translated ::ffff:0:a.b.c.d (issue 25: accepted as a webhook URL), hex and dotted, with leading zeros.
      "::ffff:0:7f00:1", "::ffff:0:127.0.0.1", "0:0:0:0:ffff:0:7f00:1", "::ffff:0:a00:1", "::ffff:0:c0a8:101", "::FFFF:0:A9FE:A9FE",
      // Mapped and compatible, written out in full or with upper case.
      "0:0:0:0:0:ffff:7f00:1", "0000:0000:0000:0000:0000:FFFF:0A00:0001", "::FFFF:192.168.0.1",
      // ISATAP interface identifiers carrying a private IPv4 address behind a public-looking prefix.
      "2600::5efe:7f00:1", "2600::200:5efe:a00:1", "2600:1:2:3:0:5efe:192.168.1.1",
      // A zone does not hide it.
      "fe80::1%eth0",
    ]) {
      expect([a, isPrivateAddress(a)]).toEqual([a, true]);
    }
    // The same forms carrying a public IPv4 address, and ordinary public IPv6 addresses, stay allowed.
    for (const a of ["::ffff:0:808:808", "::ffff:0:8.8.8.8", "2600::5efe:808:808", "2600::200:5efe:101:101", "2a00:1450:4001:82b::200e"]) {
      expect([a, isPrivateAddress(a)]).toEqual([a, false]);
    }
  });

  it("refuses the translated form as a URL host too", async () => {
    await expect(checkOutboundUrl("http://[::ffff:0:7f00:1]/hook", { allowPrivate: false })).rejects.toMatchObject({ code: "blocked_address" });
    await expect(outboundRequest("http://[::ffff:0:7f00:1]:9/x", { method: "GET", timeoutMs: 1000, allowPrivate: false })).rejects.toMatchObject({ code: "blocked_address" });
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
