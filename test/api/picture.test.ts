// Profile pictures: multipart upload with real image bytes, type sniffing, the 5 MB cap, serving, replacing, removing; REST and gRPC.
import http from "node:http";
import { randomBytes } from "node:crypto";
import mongoose from "mongoose";
import { createDeflate, deflateSync, crc32 } from "node:zlib";
import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import sharp from "sharp";
import { baseUrl, CONNECT_KINDS, connectClient, grpcUnary, newAccount, rest, rpcError, sharedServer, type Json } from "../helpers/api.js";

const FIELD = "user[profile_picture]";
const FIVE_MB = 5 * 1024 * 1024;

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A 1x1 RGB PNG; `padding` zero bytes after IEND keep it a valid image (decoders stop at IEND). */
function png(padding = 0): Buffer {
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]); // 1x1, 8-bit, truecolour
  const pixels = deflateSync(Buffer.from([0, 0xff, 0x80, 0x00])); // filter byte + one orange pixel
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", pixels),
    pngChunk("IEND", Buffer.alloc(0)),
    Buffer.alloc(padding),
  ]);
}

/** A 1x1 grey baseline JPEG (or one whose header says `width` x `height`: 270 bytes that announce 65000 x 65000). */
function jpeg(width = 1, height = 1, progressive = false): Buffer {
  const segment = (marker: number, body: number[]) => [0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff, ...body];
  const oneCodeTable = (tableClass: number) => [tableClass << 4, 1, ...new Array(15).fill(0), 0x00];
  return Buffer.from([
    0xff, 0xd8,
    ...segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]), // JFIF
    ...segment(0xdb, [0x00, ...new Array(64).fill(1)]), // quantisation table 0
    ...segment(progressive ? 0xc2 : 0xc0, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]), // baseline (or progressive), one component
    ...segment(0xc4, oneCodeTable(0)), // DC table 0: category 0
    ...segment(0xc4, oneCodeTable(1)), // AC table 0: end of block
    ...segment(0xda, [1, 1, 0x00, 0, 63, 0]),
    0x3f, // bits "00", padded with ones
    0xff, 0xd9,
  ]);
}

/**
 * A 1-bit greyscale PNG of width x height, all black: its zero rows deflate about a thousand to one, so 30000 x
 * 30000 (900 megapixels) is about 110 KB on the wire. `text` adds a tEXt chunk (an Author, a place) before the pixels.
 */
async function blackPng(width: number, height: number, text?: [string, string]): Promise<Buffer> {
  const row = Buffer.alloc(1 + Math.ceil(width / 8));
  const deflate = createDeflate({ level: 9 });
  const chunks: Buffer[] = [];
  deflate.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise((resolve) => deflate.on("end", resolve));
  const rowsAtOnce = Buffer.concat(Array.from({ length: 256 }, () => row));
  for (let y = 0; y < height; y += 256) {
    const rows = Math.min(256, height - y);
    if (!deflate.write(rows === 256 ? rowsAtOnce : rowsAtOnce.subarray(0, rows * row.length))) await new Promise((r) => deflate.once("drain", r));
  }
  deflate.end();
  await done;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1; // bit depth 1, colour type 0 (grey), then compression, filter and interlace 0
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    ...(text ? [pngChunk("tEXt", Buffer.from(`${text[0]}\0${text[1]}`, "latin1"))] : []),
    pngChunk("IDAT", Buffer.concat(chunks)),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The 1x1 lossless WebP below, its header made to say `side` x `side`. */
function webpOfSide(side: number): Buffer {
  const out = Buffer.from(WEBP);
  // VP8L header after its 0x2f signature: width - 1 in 14 bits, height - 1 in the next 14, then alpha and version.
  const packed = (out.readUInt32LE(21) & ~0x0fffffff) | (side - 1) | ((side - 1) << 14);
  out.writeUInt32LE(packed >>> 0, 21);
  return out;
}

const GIF = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");
// 1x1 lossless WebP (VP8L).
const WEBP = Buffer.from("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==", "base64");

function upload(key: string, bytes: Buffer, declaredType: string, filename = "picture") {
  const form = new FormData();
  form.append(FIELD, new Blob([new Uint8Array(bytes)], { type: declaredType }), filename);
  return rest("PUT", "/users/profile_picture", { key, body: form });
}

async function pictureUrl(key: string): Promise<string> {
  return (await rest("GET", "/user/settings", { key })).body.data.profile_picture_url;
}

/** The picture address points at APP_URL (default http://localhost:<PORT>); fetch it on the server we know. */
function fetchPicture(url: string): Promise<Response> {
  return fetch(`${baseUrl()}${new URL(url).pathname}`);
}

function expectAnswer(res: { status: number; body: Json }, status: number, message: string, data: Json = {}): void {
  expect(res.status).toBe(status);
  const name = status === 400 ? "bad_request" : status === 422 ? "unprocessable_entity" : status;
  expect(res.body).toEqual({ success: status < 400, message, data, status: name });
}

const UNSUPPORTED = "unsupported image type. Use PNG, JPEG, GIF, or WEBP.";
const TOO_LARGE = "image must be at most 10000 pixels wide and high and 50 megapixels in all (8 for a progressive or interlaced image or a GIF)";
/** sharp's name of each image type's format. */
const FORMATS: Record<string, string> = { "image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp" };

describe("the test images", () => {
  it("are well-formed", () => {
    expect(png().subarray(12, 16).toString()).toBe("IHDR");
    expect(jpeg().subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    expect(GIF.subarray(0, 6).toString()).toBe("GIF89a");
    expect(WEBP.subarray(8, 16).toString()).toBe("WEBPVP8L");
    expect(WEBP.readUInt32LE(4)).toBe(WEBP.length - 8);
  });
});

describe("PUT /users/profile_picture", () => {
  let key: string;
  beforeAll(async () => {
    key = (await newAccount({ full_name: "Pic Ture" })).key;
  });

  const kinds: Array<[string, Buffer, string]> = [
    ["PNG", png(), "image/png"],
    ["JPEG", jpeg(), "image/jpeg"],
    ["GIF", GIF, "image/gif"],
    ["WEBP", WEBP, "image/webp"],
  ];
  for (const [name, bytes, type] of kinds) {
    it(`accepts ${name} and serves it written anew as ${type}`, async () => {
      const res = await upload(key, bytes, type, `p.${name.toLowerCase()}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.message).toBe("profile picture updated");
      expect(res.body.data.full_name).toBe("Pic Ture");
      // The plain user object never carries the picture address.
      expect(res.body.data).not.toHaveProperty("profile_picture_url");
      const url = await pictureUrl(key);
      expect(url).toMatch(new RegExp(`^http://localhost:${new URL(baseUrl()).port}/pictures/[0-9a-f]{32}$`));
      const served = await fetchPicture(url);
      expect(served.status).toBe(200);
      expect(served.headers.get("content-type")).toBe(type);
      expect(served.headers.get("x-content-type-options")).toBe("nosniff");
      const meta = await sharp(Buffer.from(await served.arrayBuffer())).metadata();
      expect(meta).toMatchObject({ format: FORMATS[type], width: 1, height: 1 });
    });
  }

  it("trusts the bytes, not the declared type: a PNG declared image/gif is served as image/png", async () => {
    const bytes = png();
    expect((await upload(key, bytes, "image/gif", "lies.gif")).status).toBe(200);
    const served = await fetchPicture(await pictureUrl(key));
    expect(served.headers.get("content-type")).toBe("image/png");
    expect((await sharp(Buffer.from(await served.arrayBuffer())).metadata()).format).toBe("png");
  });

  it.each([
    ["a text file declared image/png", Buffer.from("hello, I am not a picture\n"), "image/png"],
    ["an SVG declared image/png", Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), "image/png"],
    ["a PDF declared image/jpeg", Buffer.from("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n", "latin1"), "image/jpeg"],
    ["a BMP", Buffer.concat([Buffer.from("BM"), Buffer.alloc(60)]), "image/bmp"],
    ["an empty file", Buffer.alloc(0), "image/png"],
  ])("refuses %s", async (_label, bytes, type) => {
    expectAnswer(await upload(key, bytes, type), 422, UNSUPPORTED);
  });

  it("refuses the field sent as text", async () => {
    const form = new FormData();
    form.append(FIELD, "data:image/png;base64,iVBORw0KGgo=");
    expectAnswer(await rest("PUT", "/users/profile_picture", { key, body: form }), 422, "profile_picture must be an uploaded image file");
    // A JSON body can only carry text too.
    const json = await rest("PUT", "/users/profile_picture", { key, body: { user: { profile_picture: "iVBORw0KGgo=" } } });
    expectAnswer(json, 422, "profile_picture must be an uploaded image file");
  });

  it("answers 400 missing params when no picture field is sent", async () => {
    const form = new FormData();
    form.append("user[full_name]", "x");
    form.append("profile_picture", new Blob([new Uint8Array(png())], { type: "image/png" }), "p.png");
    expectAnswer(await rest("PUT", "/users/profile_picture", { key, body: form }), 400, "missing params", { user: ["profile_picture"] });
    expectAnswer(await rest("PUT", "/users/profile_picture", { key, body: new FormData() }), 400, "missing params", { user: ["profile_picture"] });
    expectAnswer(await rest("PUT", "/users/profile_picture", { key }), 400, "missing params", { user: ["profile_picture"] });
    expectAnswer(await rest("PUT", "/users/profile_picture", { key, body: {} }), 400, "missing params", { user: ["profile_picture"] });
  });

  it("checks the form's other fields as JSON fields are checked: a name the upload does not take is 422, nothing written", async () => {
    expect((await upload(key, GIF, "image/gif")).status).toBe(200);
    const before = await pictureUrl(key);
    const allowed = ["profile_picture"];
    const form = new FormData();
    form.append(FIELD, new Blob([new Uint8Array(png())], { type: "image/png" }), "p.png");
    form.append("user[is_admin]", "1");
    expectAnswer(await rest("PUT", "/users/profile_picture", { key, body: form }), 422, "unknown field is_admin", { unknown: ["is_admin"], allowed });
    // A second file under another name, a nested name, and a near miss with its hint.
    const more = new FormData();
    more.append("user[avatar]", new Blob([new Uint8Array(png())], { type: "image/png" }), "a.png");
    more.append(FIELD, new Blob([new Uint8Array(png())], { type: "image/png" }), "p.png");
    more.append("user[role][admin]", "true");
    expectAnswer(await rest("PUT", "/users/profile_picture", { key, body: more }), 422, "unknown field avatar", { unknown: ["avatar", "role"], allowed });
    const near = new FormData();
    near.append("user[profile_pictures]", new Blob([new Uint8Array(png())], { type: "image/png" }), "p.png");
    const hinted = await rest("PUT", "/users/profile_picture", { key, body: near });
    expect([hinted.status, hinted.body.message]).toEqual([422, "unknown field profile_pictures (did you mean profile_picture?)"]);
    // The same body as JSON: the same answer.
    const json = await rest("PUT", "/users/profile_picture", { key, body: { user: { profile_picture: "iVBORw0KGgo=", is_admin: 1 } } });
    expectAnswer(json, 422, "unknown field is_admin", { unknown: ["is_admin"], allowed });
    // Names the user object carries (full_name) are taken and ignored, as in JSON; the gateway's own are not taken.
    const own = new FormData();
    own.append(FIELD, new Blob([new Uint8Array(png())], { type: "image/png" }), "p.png");
    own.append("user[full_name]", "Someone Else");
    expect((await rest("PUT", "/users/profile_picture", { key, body: own })).status).toBe(200);
    const gateway = new FormData();
    gateway.append(FIELD, new Blob([new Uint8Array(png())], { type: "image/png" }), "p.png");
    gateway.append("user[profile_picture_text]", "x");
    expect((await rest("PUT", "/users/profile_picture", { key, body: gateway })).body.message).toBe("unknown field profile_picture_text");
    expect((await rest("GET", "/user", { key })).body.data.full_name).toBe("Pic Ture");
    expect(await pictureUrl(key)).not.toBe(before);
  });

  it("accepts exactly 5 MB and refuses one byte more", async () => {
    const exact = png(FIVE_MB - png().length);
    expect(exact.length).toBe(FIVE_MB);
    const ok = await upload(key, exact, "image/png");
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    // What is served is the picture written anew: the 5 MB of padding after its end are not kept.
    const served = Buffer.from(await (await fetchPicture(await pictureUrl(key))).arrayBuffer());
    expect(served.length).toBeLessThan(1000);
    expect(await sharp(served).metadata()).toMatchObject({ format: "png", width: 1, height: 1 });

    const before = await pictureUrl(key);
    expectAnswer(await upload(key, png(FIVE_MB - png().length + 1), "image/png"), 422, "image must be 5MB or smaller");
    expectAnswer(await upload(key, png(8 * 1024 * 1024), "image/png"), 422, "image must be 5MB or smaller");
    // A refused upload leaves the current picture in place.
    expect(await pictureUrl(key)).toBe(before);
  });

  it("a new upload gets a new address and the old one is gone", async () => {
    expect((await upload(key, GIF, "image/gif")).status).toBe(200);
    const first = await pictureUrl(key);
    expect((await upload(key, WEBP, "image/webp")).status).toBe(200);
    const second = await pictureUrl(key);
    expect(second).not.toBe(first);
    expect((await fetchPicture(first)).status).toBe(404);
    const served = await fetchPicture(second);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/webp");
  });

  it("another account's picture is unaffected", async () => {
    const other = await newAccount();
    expect((await upload(other.key, jpeg(), "image/jpeg")).status).toBe(200);
    const otherUrl = await pictureUrl(other.key);
    expect((await upload(key, png(), "image/png")).status).toBe(200);
    expect((await rest("DELETE", "/users/remove_profile_picture", { key })).status).toBe(200);
    expect((await fetchPicture(otherUrl)).status).toBe(200);
  });
});

describe("what a picture may be, and what is kept of it", () => {
  let key: string;
  beforeAll(async () => {
    key = (await newAccount()).key;
  });

  it("refuses at upload, with a 422, a picture whose header announces more pixels than the limits: nothing is kept or served", async () => {
    expect((await upload(key, png(), "image/png")).status).toBe(200);
    const before = await pictureUrl(key);
    const bomb = await blackPng(30000, 30000);
    const overWhole = sharp({ create: { width: 2829, height: 2829, channels: 3, background: "#336699" } });
    expect(bomb.length).toBeLessThan(150 * 1024);
    const cases: Array<[string, Buffer, string]> = [
      ["a 30000 x 30000 PNG", bomb, "image/png"],
      ["a 65000 x 65000 JPEG", jpeg(65000, 65000), "image/jpeg"],
      ["a 16383 x 16383 WebP", webpOfSide(16383), "image/webp"],
      ["a PNG one pixel wider than allowed", await blackPng(10_001, 1), "image/png"],
      ["a PNG over 50 megapixels", await blackPng(8000, 6300), "image/png"],
      // Decoded whole before they can be reduced: a lower limit, 8 megapixels (2829 x 2829 is 8 003 241 pixels).
      ["a progressive JPEG just over 8 megapixels", jpeg(2829, 2829, true), "image/jpeg"],
      ["an interlaced PNG just over 8 megapixels", await overWhole.clone().png({ progressive: true }).toBuffer(), "image/png"],
      ["a GIF just over 8 megapixels", await overWhole.clone().gif().toBuffer(), "image/gif"],
    ];
    for (const [label, bytes, type] of cases) {
      expect(bytes.length, label).toBeLessThan(1024 * 1024);
      const res = await upload(key, bytes, type);
      expect([res.status, res.body.message], label).toEqual([422, TOO_LARGE]);
    }
    expect(await pictureUrl(key)).toBe(before);
    // The same over gRPC.
    const err = await rpcError(() => grpcUnary(UserService, "uploadProfilePicture", { user: { profilePicture: jpeg(65000, 65000) } }, key));
    expect([err.code, err.rawMessage]).toEqual([Code.InvalidArgument, TOO_LARGE]);
    // At the limits: accepted, and served at most 1024 px on its longer side.
    expect((await upload(key, await blackPng(10_000, 5000), "image/png")).status).toBe(200);
    const served = Buffer.from(await (await fetchPicture(await pictureUrl(key))).arrayBuffer());
    expect(await sharp(served).metadata()).toMatchObject({ format: "png", width: 1024, height: 512 });
    const gifAtLimit = await sharp({ create: { width: 2828, height: 2828, channels: 3, background: "#336699" } }).gif().toBuffer();
    expect((await upload(key, gifAtLimit, "image/gif")).status).toBe(200);
  });

  it("serves nothing of a photo's metadata (GPS position, Artist, camera) at any of its addresses", async () => {
    const photo = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#3366cc" } })
      .withExif({
        IFD0: { Artist: "Ada Lovelace", Make: "SecretCam", ImageDescription: "at home" },
        IFD3: { GPSLatitudeRef: "N", GPSLatitude: "51/1 30/1 2616/100", GPSLongitudeRef: "W", GPSLongitude: "0/1 7/1 3966/100" },
      })
      .jpeg()
      .toBuffer();
    expect((await sharp(photo).metadata()).exif?.toString("latin1")).toContain("Ada Lovelace");
    const png = await blackPng(40, 30, ["Author", "Ada Lovelace, 51.5074 N 0.1278 W"]);
    for (const [bytes, type] of [[photo, "image/jpeg"], [png, "image/png"]] as const) {
      expect((await upload(key, bytes, type)).status).toBe(200);
      const path = new URL(await pictureUrl(key)).pathname;
      for (const at of [path, `${path}/128.webp`, `${path}/256.webp`]) {
        const served = Buffer.from(await (await fetch(`${baseUrl()}${at}`)).arrayBuffer());
        const text = served.toString("latin1");
        for (const secret of ["Ada Lovelace", "SecretCam", "at home", "51.5074"]) expect(text, `${type} ${at}`).not.toContain(secret);
        const meta = await sharp(served).metadata();
        expect(meta.exif, at).toBeUndefined();
        expect(meta.xmp, at).toBeUndefined();
        expect(meta.comments ?? [], at).toEqual([]);
      }
    }
  });

  it("a picture stored by an earlier version as uploaded is served written anew, never as it was", async () => {
    const acc = await newAccount();
    const photo = await sharp({ create: { width: 32, height: 32, channels: 3, background: "#00aa00" } }).withExif({ IFD0: { Artist: "Ada Lovelace" } }).jpeg().toBuffer();
    const conn = await mongoose.createConnection(sharedServer().databaseUri).asPromise();
    const publicId = randomBytes(16).toString("hex");
    try {
      await conn.collection("pictures").insertOne({ public_id: publicId, user_id: new mongoose.Types.ObjectId(acc.user.id as string), content_type: "image/jpeg", data: photo, created_at: new Date() });
    } finally {
      await conn.close();
    }
    for (const at of [`/pictures/${publicId}`, `/pictures/${publicId}/128.webp`, `/pictures/${publicId}`]) {
      const res = await fetch(`${baseUrl()}${at}`);
      expect(res.status, at).toBe(200);
      const served = Buffer.from(await res.arrayBuffer());
      expect(served.toString("latin1"), at).not.toContain("Ada Lovelace");
      expect((await sharp(served).metadata()).exif, at).toBeUndefined();
    }
  });
});

describe("concurrent picture changes", () => {
  it("uploads at once leave the account pointing at a picture that is served", async () => {
    const { key } = await newAccount();
    const images = [png(), jpeg(), GIF, WEBP, png(10), jpeg()];
    const answers = await Promise.all(images.map((bytes) => upload(key, bytes, "image/png")));
    for (const a of answers) expect(a.status).toBe(200);
    const served = await fetchPicture(await pictureUrl(key));
    expect(served.status).toBe(200);
  });

  it("sixteen uploads of nearly 5 MB at once are all taken: waiting for the decoder, they are on disk, not in the 64 MB of bodies in memory", async () => {
    const { key } = await newAccount();
    // A small picture made nearly 5 MB by a text chunk (which is not kept).
    const heavy = await blackPng(40, 30, ["Comment", "x".repeat(5 * 1024 * 1024 - 4096)]);
    expect(heavy.length).toBeGreaterThan(5 * 1024 * 1024 - 4096);
    const answers = await Promise.all(Array.from({ length: 16 }, () => upload(key, heavy, "image/png")));
    expect(answers.map((a) => a.status)).toEqual(new Array(16).fill(200));
    expect((await fetchPicture(await pictureUrl(key))).status).toBe(200);
  });

  it("an upload racing a removal leaves either no picture or one that is served", async () => {
    for (let round = 0; round < 4; round++) {
      const { key } = await newAccount();
      await upload(key, GIF, "image/gif");
      await Promise.all([upload(key, png(), "image/png"), rest("DELETE", "/users/remove_profile_picture", { key }), upload(key, WEBP, "image/webp")]);
      const url = await pictureUrl(key);
      if (url !== "") expect((await fetchPicture(url)).status, `round ${round}`).toBe(200);
    }
  });
});

describe("malformed multipart bodies", () => {
  it("without a boundary, or cut short, are 400 in the envelope", async () => {
    const { key } = await newAccount();
    const noBoundary = await fetch(`${baseUrl()}/api/v1/users/profile_picture`, {
      method: "PUT",
      headers: { "Content-Type": "multipart/form-data", "X-API-KEY": key },
      body: "whatever",
    });
    expect(noBoundary.status).toBe(400);
    const a = await noBoundary.json();
    expect(a).toEqual({ success: false, message: expect.stringMatching(/^malformed multipart body/), data: {}, status: "bad_request" });

    const cut = await fetch(`${baseUrl()}/api/v1/users/profile_picture`, {
      method: "PUT",
      headers: { "Content-Type": "multipart/form-data; boundary=xyz", "X-API-KEY": key },
      body: `--xyz\r\nContent-Disposition: form-data; name="${FIELD}"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n${png().toString("latin1")}`,
    });
    expect(cut.status).toBe(400);
    expect((await cut.json()).message).toMatch(/^malformed multipart body/);
    expect(await pictureUrl(key)).toBe("");
  });

  it("a client that goes away mid-upload harms nothing", async () => {
    const { key } = await newAccount();
    const url = new URL(baseUrl());
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: url.hostname,
        port: url.port,
        method: "PUT",
        path: "/api/v1/users/profile_picture",
        headers: { "Content-Type": "multipart/form-data; boundary=xyz", "Content-Length": 1_000_000, "X-API-KEY": key },
      });
      req.on("error", () => resolve());
      req.write(`--xyz\r\nContent-Disposition: form-data; name="${FIELD}"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`);
      req.write(png());
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 100);
    });
    expect((await rest("GET", "/user", { key })).status).toBe(200);
    expect(await pictureUrl(key)).toBe("");
  });
});

describe("DELETE /users/remove_profile_picture", () => {
  it("removes the picture: id and avatar_name back, address gone, settings empty", async () => {
    const acc = await newAccount({ full_name: "Remove Me" });
    expect((await upload(acc.key, png(), "image/png")).status).toBe(200);
    const url = await pictureUrl(acc.key);
    const res = await rest("DELETE", "/users/remove_profile_picture", { key: acc.key });
    expectAnswer(res, 200, "profile picture removed", { id: acc.user.id, avatar_name: "RM" });
    expect(await pictureUrl(acc.key)).toBe("");
    expect((await fetchPicture(url)).status).toBe(404);
  });

  it("succeeds when there is no picture", async () => {
    const acc = await newAccount({ full_name: "No Picture" });
    expectAnswer(await rest("DELETE", "/users/remove_profile_picture", { key: acc.key }), 200, "profile picture removed", {
      id: acc.user.id,
      avatar_name: "NP",
    });
    expectAnswer(await rest("DELETE", "/users/remove_profile_picture", { key: acc.key }), 200, "profile picture removed", {
      id: acc.user.id,
      avatar_name: "NP",
    });
  });
});

describe("pictures over gRPC and Connect", () => {
  it("grpc-js: UploadProfilePicture with each type, then RemoveProfilePicture", async () => {
    const acc = await newAccount({ full_name: "Grpc Pic" });
    for (const [bytes, type] of [[png(), "image/png"], [jpeg(), "image/jpeg"], [GIF, "image/gif"], [WEBP, "image/webp"]] as const) {
      const res = await grpcUnary(UserService, "uploadProfilePicture", { user: { profilePicture: bytes, filename: "p" } }, acc.key);
      expect(res.user?.id).toBe(acc.user.id);
      const served = await fetchPicture(await pictureUrl(acc.key));
      expect(served.headers.get("content-type")).toBe(type);
      expect((await sharp(Buffer.from(await served.arrayBuffer())).metadata()).format).toBe(FORMATS[type]);
    }
    const removed = await grpcUnary(UserService, "removeProfilePicture", {}, acc.key);
    expect(removed).toMatchObject({ id: acc.user.id, avatarName: "GP" });
    expect(await pictureUrl(acc.key)).toBe("");
  });

  it("grpc-js: the same refusals, as INVALID_ARGUMENT", async () => {
    const { key } = await newAccount();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ profilePicture: Buffer.from("plain text") }, UNSUPPORTED],
      [{ profilePictureText: "not a file" }, "profile_picture must be an uploaded image file"],
      [{}, "missing params: user.profile_picture"],
      [{ profilePicture: png(FIVE_MB - png().length + 1) }, "image must be 5MB or smaller"],
    ];
    for (const [user, message] of cases) {
      const err = await rpcError(() => grpcUnary(UserService, "uploadProfilePicture", { user }, key));
      expect(err.code, message).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toBe(message);
    }
    const exact = await grpcUnary(UserService, "uploadProfilePicture", { user: { profilePicture: png(FIVE_MB - png().length) } }, key);
    expect(exact.user?.id).toBeTruthy();
  });

  it("Connect JSON: a picture of exactly 5 MB goes in base64 (4/3 of it), one byte more is the 5 MB refusal, not 'too large'", async () => {
    const { key } = await newAccount();
    const upload = (bytes: Buffer) =>
      fetch(`${baseUrl()}/scheduling.v1.UserService/UploadProfilePicture`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({ user: { profilePicture: bytes.toString("base64") } }),
      });
    const exact = await upload(png(FIVE_MB - png().length));
    expect(exact.status).toBe(200);
    const over = await upload(png(FIVE_MB - png().length + 1));
    expect({ status: over.status, body: await over.json() }).toMatchObject({ status: 400, body: { code: "invalid_argument", message: "image must be 5MB or smaller" } });
  });

  for (const kind of CONNECT_KINDS) {
    it(`${kind}: UploadProfilePicture and RemoveProfilePicture`, async () => {
      const acc = await newAccount({ full_name: "Conn Pic" });
      const client = connectClient(UserService, kind, acc.key);
      await client.uploadProfilePicture({ user: { profilePicture: GIF } });
      expect((await client.getUserSettings({})).settings?.profilePictureUrl).toMatch(/\/pictures\/[0-9a-f]{32}$/);
      const err = await rpcError(() => client.uploadProfilePicture({ user: { profilePicture: Buffer.from("nope") } }));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toBe(UNSUPPORTED);
      expect(await client.removeProfilePicture({})).toMatchObject({ id: acc.user.id, avatarName: "CP" });
    });
  }
});

describe("GET /pictures/<id>", () => {
  it("answers 404 for unknown and malformed ids", async () => {
    for (const id of ["0".repeat(32), "not-an-id", "A".repeat(32), `${"0".repeat(31)}g`]) {
      expect((await fetch(`${baseUrl()}/pictures/${id}`)).status).toBe(404);
    }
  });
});

describe("GET /pictures/<id>/<width>.webp: the resized copies", () => {
  const copy = async (path: string) => {
    const res = await fetch(`${baseUrl()}${path}`);
    return { res, bytes: Buffer.from(await res.arrayBuffer()) };
  };

  it("answers square WebP copies of 128 and 256 px, turned as the photo's EXIF says, without its metadata", async () => {
    const { key } = await newAccount();
    // 600 x 300 as stored, EXIF orientation 6 (turn 90° clockwise): the photo is 300 wide and 600 high, its top
    // half red. A centred square of it is red above, blue below.
    const photo = await sharp({ create: { width: 600, height: 300, channels: 3, background: "#0000ff" } })
      .composite([{ input: { create: { width: 300, height: 300, channels: 3, background: "#ff0000" } }, left: 0, top: 0 }])
      .withMetadata({ orientation: 6 })
      .jpeg()
      .toBuffer();
    expect((await upload(key, photo, "image/jpeg")).status).toBe(200);
    const url: string = (await rest("GET", "/user/settings", { key })).body.data.profile_picture_url;
    const path = new URL(url).pathname;
    expect(path).toMatch(/^\/pictures\/[0-9a-f]{32}$/);
    for (const width of [128, 256]) {
      const { res, bytes } = await copy(`${path}/${width}.webp`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/webp");
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      const meta = await sharp(bytes).metadata();
      expect(meta).toMatchObject({ format: "webp", width, height: width });
      expect(meta.exif).toBeUndefined();
      const { data } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
      const pixel = (x: number, y: number) => [...data.subarray((y * width + x) * 3, (y * width + x) * 3 + 3)];
      expect(pixel(width - 4, 4)[0]).toBeGreaterThan(200); // red on top, right to the edge
      expect(pixel(4, width - 4)[2]).toBeGreaterThan(200); // blue below, left to the edge
    }
    // The picture itself is written anew too: turned, no EXIF; never the bytes as uploaded. Other widths and names are not served.
    const whole = await copy(path);
    expect(whole.bytes.equals(photo)).toBe(false);
    const wholeMeta = await sharp(whole.bytes).metadata();
    expect(wholeMeta).toMatchObject({ format: "jpeg", width: 300, height: 600 });
    expect(wholeMeta.exif).toBeUndefined();
    expect(wholeMeta.orientation).toBeUndefined();
    for (const other of ["64.webp", "128.png", "128", "x.webp"]) expect((await fetch(`${baseUrl()}${path}/${other}`)).status, other).toBe(404);
    expect((await fetch(`${baseUrl()}/pictures/${"0".repeat(32)}/128.webp`)).status).toBe(404);
    // A replaced picture's copies go with it.
    expect((await upload(key, png(), "image/png")).status).toBe(200);
    expect((await fetch(`${baseUrl()}${path}/128.webp`)).status).toBe(404);
  });

  it("never enlarges a small picture, and refuses at upload one it cannot read", async () => {
    const { key } = await newAccount();
    expect((await upload(key, png(), "image/png")).status).toBe(200);
    const small = new URL((await rest("GET", "/user/settings", { key })).body.data.profile_picture_url).pathname;
    expect(await sharp((await copy(`${small}/256.webp`)).bytes).metadata()).toMatchObject({ format: "webp", width: 1, height: 1 });
    // A PNG signature before bytes that are no image: nothing could ever be shown of it.
    const broken = Buffer.concat([png().subarray(0, 33), Buffer.from("not the rest of a png")]);
    expectAnswer(await upload(key, broken, "image/png"), 422, UNSUPPORTED);
    expect(new URL((await rest("GET", "/user/settings", { key })).body.data.profile_picture_url).pathname).toBe(small);
  });
});
