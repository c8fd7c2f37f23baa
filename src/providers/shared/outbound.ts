// Outbound HTTP to addresses users give us (CalDAV servers, feeds): SSRF guard, one deadline for the whole exchange, a size cap, no redirects.
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { invalid } from "../../domain/errors.js";
import { failureInWords } from "../../domain/failure.js";

export class OutboundError extends Error {
  constructor(
    readonly code: "blocked_address" | "bad_url" | "timeout" | "network" | "too_large",
    message: string,
  ) {
    super(message);
  }
}

const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12], ["192.0.0.0", 24],
  ["192.0.2.0", 24], ["192.88.99.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["198.51.100.0", 24], ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) blocked.addSubnet(prefix, bits, "ipv4");
for (const [prefix, bits] of [
  // ::/96 holds ::, ::1 and the deprecated IPv4-compatible form (::7f00:1); NAT64 (both prefixes) and 6to4 carry an
  // IPv4 address that may be a private one; fec0::/10 is the deprecated site-local range.
  ["::", 96], ["64:ff9b::", 96], ["64:ff9b:1::", 48], ["100::", 64], ["2001::", 23], ["2001:db8::", 32], ["2002::", 16], ["fc00::", 7], ["fe80::", 10], ["fec0::", 10], ["ff00::", 8],
] as const) blocked.addSubnet(prefix, bits, "ipv6");

/** The 16 bytes of an IPv6 address in any notation (`::` shorthand, a dotted IPv4 tail, a zone), or undefined. */
function ipv6Bytes(address: string): number[] | undefined {
  const bare = address.replace(/%.*$/, "");
  if (net.isIP(bare) !== 6) return undefined;
  let text = bare;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const groups = (part: string | undefined) => (part === undefined || part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const front = groups(head);
  const back = groups(tail);
  const words = tail === undefined ? front : [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
  if (words.length !== 8 || words.some((w) => !Number.isInteger(w) || w < 0 || w > 0xffff)) return undefined;
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}

const zeros = (bytes: readonly number[]) => bytes.every((b) => b === 0);

/**
 * The IPv4 address an IPv6 one stands for or carries to the IPv4 network, when it is of such a form: mapped
 * (`::ffff:a.b.c.d`), translated (`::ffff:0:a.b.c.d`, RFC 2765), compatible (`::a.b.c.d`) or an ISATAP interface
 * (`…:0:5efe:a.b.c.d`, `…:200:5efe:a.b.c.d`, RFC 5214). NAT64, 6to4 and Teredo are refused by their prefixes.
 */
function embeddedIpv4(bytes: readonly number[]): string | undefined {
  const v4 = bytes.slice(12).join(".");
  const word = (i: number) => (bytes[i] << 8) | bytes[i + 1];
  if (zeros(bytes.slice(0, 10)) && word(10) === 0xffff) return v4;
  if (zeros(bytes.slice(0, 8)) && word(8) === 0xffff && word(10) === 0) return v4;
  if (zeros(bytes.slice(0, 12))) return v4;
  if ((word(8) === 0 || word(8) === 0x0200) && word(10) === 0x5efe) return v4;
  return undefined;
}

/**
 * Loopback, private, link-local, CGNAT, multicast or reserved: IPv4, IPv6, and every IPv6 form that carries an
 * IPv4 address (mapped, translated, compatible, ISATAP) judged by that IPv4 address as well.
 */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address.replace(/%.*$/, ""));
  if (family === 4) return blocked.check(address, "ipv4");
  if (family !== 6) return true;
  const bytes = ipv6Bytes(address);
  if (!bytes) return true;
  const v4 = embeddedIpv4(bytes);
  if (v4 !== undefined && blocked.check(v4, "ipv4")) return true;
  // The canonical text of the same bytes: BlockList reads every notation, a zone it does not.
  const canonical = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i] << 8) | bytes[2 * i + 1]).toString(16)).join(":");
  return blocked.check(canonical, "ipv6");
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError("bad_url", "the address is not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new OutboundError("bad_url", "the address must be http or https");
  if (url.hostname === "") throw new OutboundError("bad_url", "the address has no host");
  return url;
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "");
}

/** Create-time check of a URL: http(s), resolves, and no address of it is private unless allowed. */
export async function checkOutboundUrl(raw: string, opts: { allowPrivate: boolean }): Promise<URL> {
  const url = parseUrl(raw);
  const host = hostOf(url);
  let addresses: string[];
  try {
    addresses = net.isIP(host) ? [host] : (await dns.promises.lookup(host, { all: true })).map((a) => a.address);
  } catch {
    throw new OutboundError("network", `the host ${host} does not resolve`);
  }
  if (!opts.allowPrivate && addresses.some(isPrivateAddress)) {
    throw new OutboundError("blocked_address", `the host ${host} is a private or reserved address`);
  }
  return url;
}

/**
 * A URL a request hands the service to reach later (a CalDAV server, a feed, a webhook): checked as
 * `checkOutboundUrl` does, and refused with a 422 naming the request's field.
 */
export async function checkRequestUrl(field: string, raw: string, opts: { allowPrivate: boolean }): Promise<URL> {
  try {
    return await checkOutboundUrl(raw, opts);
  } catch (err) {
    if (!(err instanceof OutboundError)) throw err;
    if (err.code === "bad_url") throw invalid(`${field} must be an http or https URL`, field);
    // Named so the person who runs the service on their own machine (a CalDAV server on 127.0.0.1) finds the switch.
    if (err.code === "blocked_address") throw invalid(`${field} resolves to a private or reserved address; the service reaches such addresses only with OUTBOUND_ALLOW_PRIVATE=true`, field);
    throw invalid(`${field} host could not be resolved`, field);
  }
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string>;
  /** The body as UTF-8 text; "" when asked for `binary`. */
  body: string;
  /** The body's bytes (always there). */
  bytes: Buffer;
}

/** Looks names up like the OS does, then refuses private answers: the check holds for the address actually connected to. */
function guardedLookup(allowPrivate: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 0);
      const list = addresses as dns.LookupAddress[];
      const bad = !allowPrivate && list.find((a) => isPrivateAddress(a.address));
      if (bad) return callback(new OutboundError("blocked_address", `the host ${hostname} is a private or reserved address`), "", 0);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;

/** One HTTP exchange within `timeoutMs` from start to the last body byte; 3xx are returned as they are. */
export function outboundRequest(
  raw: string,
  init: { method: string; headers?: Record<string, string>; body?: string; timeoutMs: number; maxBytes?: number; allowPrivate: boolean; signal?: AbortSignal; binary?: boolean },
): Promise<OutboundResponse> {
  return new Promise((resolve, reject) => {
    let url: URL;
    try {
      url = parseUrl(raw);
    } catch (err) {
      return reject(err);
    }
    const host = hostOf(url);
    if (net.isIP(host) && !init.allowPrivate && isPrivateAddress(host)) {
      return reject(new OutboundError("blocked_address", `the host ${host} is a private or reserved address`));
    }
    const maxBytes = init.maxBytes ?? DEFAULT_MAX_BYTES;
    const lib = url.protocol === "https:" ? https : http;
    let settled = false;
    const finish = (err: Error | null, value?: OutboundResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      init.signal?.removeEventListener("abort", onAbort);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(value as OutboundResponse);
    };
    // The caller's deadline (the only thing that aborts): as late as this request's own timeout would have said it.
    const late = () => new OutboundError("timeout", `the server did not answer within ${Math.round(init.timeoutMs / 100) / 10} s`);
    const onAbort = () => finish(late());
    const timer = setTimeout(() => finish(late()), init.timeoutMs);
    const headers: Record<string, string> = { ...init.headers };
    if (init.body !== undefined) headers["content-length"] = String(Buffer.byteLength(init.body));
    const req = lib.request(url, { method: init.method, headers, lookup: guardedLookup(init.allowPrivate), agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) return finish(new OutboundError("too_large", `the answer is larger than ${maxBytes} bytes`));
        chunks.push(c);
      });
      res.on("error", (err) => finish(new OutboundError("network", failureInWords(err))));
      res.on("end", () => {
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
        const bytes = Buffer.concat(chunks);
        finish(null, { status: res.statusCode ?? 0, headers: out, body: init.binary ? "" : bytes.toString("utf8"), bytes });
      });
    });
    // Node's text names our own address and port, or OpenSSL's source file: the host is told the reason in words.
    req.on("error", (err) => finish(err instanceof OutboundError ? err : new OutboundError("network", failureInWords(err))));
    if (init.signal?.aborted) return onAbort();
    init.signal?.addEventListener("abort", onAbort, { once: true });
    req.end(init.body);
  });
}

const NULL_BODY = new Set([101, 204, 205, 304]);

/** fetch over outboundRequest, for libraries that take a fetch (tsdav). */
export function outboundFetch(opts: { timeoutMs: number; allowPrivate: boolean; signal?: AbortSignal }): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => (headers[k] = v));
    const body = init?.body === undefined || init.body === null ? undefined : typeof init.body === "string" ? init.body : String(init.body);
    const res = await outboundRequest(url, { method: init?.method ?? "GET", headers, body, timeoutMs: opts.timeoutMs, allowPrivate: opts.allowPrivate, signal: opts.signal });
    const response = new Response(NULL_BODY.has(res.status) || res.status < 200 ? null : res.body, {
      status: res.status < 200 || res.status > 599 ? 502 : res.status,
      headers: Object.entries(res.headers).filter(([k]) => k !== "content-encoding" && k !== "transfer-encoding"),
    });
    Object.defineProperty(response, "url", { value: url });
    return response;
  }) as typeof fetch;
}
