// Answers on the wire (extensions.md): gzip or br for answers of 1 KB or more when the client takes it, read as raw HTTP: JSON, pages, scripts, /docs and the OpenAPI document.
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { baseUrl, rest, type Json } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { rawRequest, type RawAnswer } from "../helpers/raw.js";

/** GET `path` as raw HTTP with these request headers: the body's bytes as they came. */
const get = (path: string, headers: Record<string, string> = {}, method = "GET"): Promise<RawAnswer> => rawRequest(baseUrl(), { method, path, headers });

/** The body as the client reads it after undoing Content-Encoding. */
function decoded(a: RawAnswer): Buffer {
  const coding = a.headers["content-encoding"];
  if (coding === "gzip") return gunzipSync(a.bytes);
  if (coding === "br") return brotliDecompressSync(a.bytes);
  expect(coding).toBeUndefined();
  return a.bytes;
}

function varies(a: RawAnswer): string[] {
  return String(a.headers.vary ?? "").split(",").map((v) => v.trim().toLowerCase());
}

/** Asserts `path` answers the same bytes compressed with `coding` as without, and says so in its headers. */
async function expectCompressed(path: string, coding: "gzip" | "br", headers: Record<string, string> = {}, acceptEncoding: string = coding): Promise<Buffer> {
  const plain = await get(path, headers);
  const packed = await get(path, { ...headers, "Accept-Encoding": acceptEncoding });
  expect({ status: packed.status, encoding: packed.headers["content-encoding"] }, path).toEqual({ status: plain.status, encoding: coding });
  expect(plain.headers["content-encoding"]).toBeUndefined();
  expect(plain.bytes.byteLength).toBeGreaterThanOrEqual(1024);
  expect(varies(packed)).toContain("accept-encoding");
  expect(varies(plain)).toContain("accept-encoding");
  expect(Number(packed.headers["content-length"])).toBe(packed.bytes.byteLength);
  expect(packed.bytes.byteLength).toBeLessThan(plain.bytes.byteLength);
  expect(decoded(packed).equals(plain.bytes), `${path}: the decompressed bytes are the plain answer`).toBe(true);
  expect(packed.headers["content-type"]).toBe(plain.headers["content-type"]);
  return plain.bytes;
}

let host: Host;
let event: Json;

beforeAll(async () => {
  host = await newHost({ full_name: "Grace Hopper" });
  event = await newEvent(host, { name: "Consultation", description: "A long description. ".repeat(20) });
  // Enough events that the list is well over 1 KB.
  for (let i = 0; i < 6; i++) await newEvent(host, { name: `Meeting ${i}` });
  for (let i = 0; i < 6; i++) await book(host, event, { start_time: utcIso(dayFromToday(2), `${10 + i}:00`), attendee_email: `ada${i}@example.com` });
});

describe("JSON answers", () => {
  it("gzip, or br when the client prefers it by q-value", async () => {
    const key = { "X-API-KEY": host.key };
    await expectCompressed("/api/v1/events", "gzip", key);
    await expectCompressed("/api/v1/events", "br", key);
    await expectCompressed("/api/v1/events", "br", key, "gzip;q=0.5, br");
    await expectCompressed("/api/v1/events", "gzip", key, "gzip, deflate, br, zstd");
    await expectCompressed("/api/v1/events", "gzip", key, "br;q=0, gzip");
    await expectCompressed("/api/v1/events", "gzip", key, "*");
    for (const none of ["identity", "deflate", "gzip;q=0, br;q=0", "*;q=0"]) {
      const a = await get("/api/v1/events", { ...key, "Accept-Encoding": none });
      expect({ accept: none, status: a.status, encoding: a.headers["content-encoding"] }).toEqual({ accept: none, status: 200, encoding: undefined });
      expect(varies(a)).toContain("accept-encoding");
    }
  });

  it("the host's bookings list, a page shared by concurrent readers, compressed once and the same each time", async () => {
    const path = `/api/v1/events/${event.id}/bookings?date_from=${dayFromToday(2)}&date_to=${dayFromToday(2)}`;
    await expectCompressed(path, "gzip", { "X-API-KEY": host.key });
    const [a, b] = await Promise.all([get(path, { "X-API-KEY": host.key, "Accept-Encoding": "br" }), get(path, { "X-API-KEY": host.key, "Accept-Encoding": "br" })]);
    expect(JSON.parse(decoded(a).toString()).data.records).toHaveLength(6);
    expect(decoded(a).equals(decoded(b))).toBe(true);
  });

  it("leaves answers under 1 KB as they are, and keeps CORS's Vary", async () => {
    const small = await get("/api/v1/events/000000000000000000000000", { "X-API-KEY": host.key, "Accept-Encoding": "gzip, br", Origin: "https://example.com" });
    expect(small.status).toBe(404);
    expect(small.bytes.byteLength).toBeLessThan(1024);
    expect(small.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(small.text).message).toBe("event not found");
    expect(varies(small)).toContain("accept-encoding");
    const cors = await get("/api/v1/events", { "X-API-KEY": host.key, "Accept-Encoding": "gzip", Origin: "https://example.com" });
    expect(cors.headers["content-encoding"]).toBe("gzip");
    expect(varies(cors)).toContain("accept-encoding");
    // A server with CORS origins varies on Origin too (test/api/cors.test.ts); the shared one has none.
    if (cors.headers["access-control-allow-origin"] !== undefined && cors.headers["access-control-allow-origin"] !== "*") expect(varies(cors)).toContain("origin");
  });

  it("the OpenAPI document", async () => {
    const doc = await expectCompressed("/api/v1/openapi.json", "gzip");
    expect(JSON.parse(doc.toString()).openapi).toBe("3.1.0");
    await expectCompressed("/api/v1/openapi.json", "br");
  });

  it("a HEAD answer has no body to compress", async () => {
    const head = await get("/api/v1/openapi.json", { "Accept-Encoding": "gzip" }, "HEAD");
    expect({ status: head.status, bytes: head.bytes.byteLength }).toEqual({ status: 200, bytes: 0 });
  });
});

describe("pages and their files", () => {
  it("the event page, its script and its style", async () => {
    const page = await expectCompressed(`/${host.user.url}/${event.url}`, "gzip");
    await expectCompressed(`/${host.user.url}/${event.url}`, "br");
    const html = page.toString();
    const files = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]);
    expect(files.some((f) => f.endsWith(".js"))).toBe(true);
    expect(files.some((f) => f.endsWith(".css"))).toBe(true);
    for (const file of files) {
      await expectCompressed(file, "gzip");
      await expectCompressed(file, "br");
    }
  });

  it("the profile page, and the not-found page in the same way", async () => {
    await expectCompressed(`/${host.user.url}`, "gzip");
    const missing = await get(`/${host.user.url}/no-such-event-here`, { "Accept-Encoding": "gzip" });
    expect(missing.status).toBe(404);
    expect(decoded(missing).toString()).toMatch(/^<!doctype html>/i);
  });

  it("/docs's Swagger UI files, about 1.4 MB less over the wire", async () => {
    let saved = 0;
    for (const file of ["swagger-ui-bundle.js", "swagger-ui.css"]) {
      const plain = await expectCompressed(`/docs/assets/${file}`, "gzip");
      const packed = await get(`/docs/assets/${file}`, { "Accept-Encoding": "gzip, br" });
      saved += plain.byteLength - packed.bytes.byteLength;
      await expectCompressed(`/docs/assets/${file}`, "br");
    }
    expect(saved).toBeGreaterThan(1_300_000);
    // Images are not worth it.
    const icon = await get("/docs/assets/favicon-32x32.png", { "Accept-Encoding": "gzip" });
    expect({ status: icon.status, encoding: icon.headers["content-encoding"] }).toEqual({ status: 200, encoding: undefined });
  });
});

describe("what is not compressed here", () => {
  it("RPCs: Connect's own protocol answers as before, with nothing of ours added", async () => {
    const plain = await rawRequest(baseUrl(), {
      method: "POST",
      path: "/scheduling.v1.EventService/ListEvents",
      headers: { "Content-Type": "application/json", "X-API-KEY": host.key },
      body: "{}",
    });
    const asked = await rawRequest(baseUrl(), {
      method: "POST",
      path: "/scheduling.v1.EventService/ListEvents",
      headers: { "Content-Type": "application/json", "X-API-KEY": host.key, "Accept-Encoding": "gzip, br" },
      body: "{}",
    });
    expect(plain.status).toBe(200);
    expect(plain.bytes.byteLength).toBeGreaterThan(1024);
    expect(asked.status).toBe(200);
    // The fast path answers unary RPCs before Express: no Vary of ours, no encoding but what Connect itself negotiates.
    expect(varies(asked)).not.toContain("accept-encoding");
    expect(["gzip", undefined]).toContain(asked.headers["content-encoding"]);
    expect(JSON.parse(decoded(asked).toString())).toEqual(JSON.parse(plain.text));
  });

  it("a picture upload's answer, and REST writes under 1 KB", async () => {
    const res = await rest("PATCH", "/user", { key: host.key, body: { user: { bio: "short" } } });
    expect(res.status).toBe(200);
    const raw = await rawRequest(baseUrl(), {
      method: "PATCH",
      path: "/api/v1/questions/000000000000000000000000",
      headers: { "Content-Type": "application/json", "X-API-KEY": host.key, "Accept-Encoding": "gzip" },
      body: JSON.stringify({ question: { title: "x" } }),
    });
    expect({ status: raw.status, encoding: raw.headers["content-encoding"] }).toEqual({ status: 404, encoding: undefined });
  });
});
