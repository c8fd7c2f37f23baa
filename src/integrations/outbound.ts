// Outbound HTTP (contract 1; stand-in on branch outbox until branch ical's version is merged): URL and address checks against SSRF, one exchange with a deadline.
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";

export class OutboundError extends Error {
  constructor(
    readonly code: "blocked_address" | "bad_url" | "timeout" | "network" | "too_large",
    message: string,
  ) {
    super(message);
  }
}

const blocked = new net.BlockList();
for (const [a, p] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.88.99.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["198.51.100.0", 24],
  ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) blocked.addSubnet(a, p, "ipv4");
for (const [a, p] of [
  ["::", 128], ["::1", 128], ["64:ff9b::", 96], ["100::", 64], ["2001:db8::", 32], ["2002::", 16], ["fc00::", 7], ["fe80::", 10], ["fec0::", 10], ["ff00::", 8],
] as const) blocked.addSubnet(a, p, "ipv6");

/** Whether an address is loopback, private, link-local, CGNAT, multicast or reserved (IPv4-mapped IPv6 as IPv4). */
export function isBlockedAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1], "ipv4");
  const family = net.isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? "ipv4" : "ipv6");
}

function parse(url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new OutboundError("bad_url", "not a valid URL");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new OutboundError("bad_url", "only http and https URLs are allowed");
  return u;
}

function hostOf(u: URL): string {
  return u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname;
}

export async function checkOutboundUrl(url: string, opts: { allowPrivate: boolean }): Promise<URL> {
  const u = parse(url);
  const host = hostOf(u);
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await dns.promises.lookup(host, { all: true })).map((a) => a.address);
    } catch {
      throw new OutboundError("network", `cannot resolve ${host}`);
    }
  }
  if (!opts.allowPrivate && addresses.some(isBlockedAddress)) throw new OutboundError("blocked_address", `${host} resolves to a private or reserved address`);
  return u;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A lookup for the socket that refuses blocked addresses: the check is made on what is actually connected to. */
function guardedLookup(allowPrivate: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 0);
      const list = addresses as dns.LookupAddress[];
      const usable = allowPrivate ? list : list.filter((a) => !isBlockedAddress(a.address));
      if (usable.length === 0) return callback(new OutboundError("blocked_address", `${hostname} resolves to a private or reserved address`), "", 0);
      if ((options as dns.LookupAllOptions).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, usable);
      callback(null, usable[0].address, usable[0].family);
    });
  };
}

export async function outboundRequest(
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: string; timeoutMs: number; maxBytes?: number; allowPrivate: boolean; signal?: AbortSignal },
): Promise<OutboundResponse> {
  const u = parse(url);
  const host = hostOf(u);
  if (net.isIP(host) && !init.allowPrivate && isBlockedAddress(host)) throw new OutboundError("blocked_address", `${host} is a private or reserved address`);
  const maxBytes = init.maxBytes ?? 1024 * 1024;
  const client = u.protocol === "https:" ? https : http;
  return new Promise<OutboundResponse>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, value?: OutboundResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      init.signal?.removeEventListener("abort", onAbort);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(value as OutboundResponse);
    };
    const onAbort = () => finish(new OutboundError("network", "aborted"));
    const req = client.request(u, { method: init.method, headers: init.headers, lookup: guardedLookup(init.allowPrivate), agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) return finish(new OutboundError("too_large", `answer larger than ${maxBytes} bytes`));
        chunks.push(c);
      });
      res.on("end", () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v;
        finish(undefined, { status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString("utf8") });
      });
      res.on("error", (e) => finish(new OutboundError("network", e.message)));
    });
    const timer = setTimeout(() => finish(new OutboundError("timeout", `no complete answer within ${init.timeoutMs} ms`)), init.timeoutMs);
    req.on("error", (e) => finish(e instanceof OutboundError ? e : new OutboundError("network", e.message)));
    if (init.signal?.aborted) return onAbort();
    init.signal?.addEventListener("abort", onAbort, { once: true });
    req.end(init.body);
  });
}
