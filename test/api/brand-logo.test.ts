// The account's brand logo: multipart upload and removal over REST, the same over gRPC and Connect, re-encoded without metadata, its shape kept, served at a public address the public API hands out.
import { Code } from "@connectrpc/connect";
import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { baseUrl, CONNECT_KINDS, connectClient, grpcUnary, newAccount, rest, rpcError, type Json } from "../helpers/api.js";
import { newEvent } from "../helpers/fixtures.js";

const FIELD = "user[brand_logo]";
const FIVE_MB = 5 * 1024 * 1024;
const UNSUPPORTED = "unsupported image type. Use PNG, JPEG, GIF, or WEBP.";

/** A wide wordmark-like JPEG (800 x 200) carrying a photo's metadata: an Artist, a camera, a GPS position. */
function wideJpeg(): Promise<Buffer> {
  return sharp({ create: { width: 800, height: 200, channels: 3, background: "#1a73e8" } })
    .withExif({
      IFD0: { Artist: "Ada Lovelace", Make: "SecretCam" },
      IFD3: { GPSLatitudeRef: "N", GPSLatitude: "51/1 30/1 2616/100", GPSLongitudeRef: "W", GPSLongitude: "0/1 7/1 3966/100" },
    })
    .jpeg()
    .toBuffer();
}

const squarePng = (side: number) => sharp({ create: { width: side, height: side, channels: 4, background: "#ff000080" } }).png().toBuffer();

function upload(key: string, bytes: Buffer | string, type = "image/png", field = FIELD) {
  const form = new FormData();
  if (typeof bytes === "string") form.append(field, bytes);
  else form.append(field, new Blob([new Uint8Array(bytes)], { type }), "logo");
  return rest("PUT", "/users/brand_logo", { key, body: form });
}

/** The logo address points at APP_URL; fetch its path on the server we know. */
async function fetchAt(url: string, suffix = ""): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const res = await fetch(`${baseUrl()}${new URL(url).pathname}${suffix}`);
  return { status: res.status, type: res.headers.get("content-type"), bytes: Buffer.from(await res.arrayBuffer()) };
}

function expectRefused(res: { status: number; body: Json }, status: number, message: string, data: Json = {}): void {
  expect(res.body).toEqual({ success: false, message, data, status: status === 400 ? "bad_request" : "unprocessable_entity" });
  expect(res.status).toBe(status);
}

describe("PUT /users/brand_logo and DELETE /users/brand_logo", () => {
  let key: string;
  let user: Json;
  beforeAll(async () => {
    ({ key, user } = await newAccount({ full_name: "Logo Host" }));
  });

  it("keeps the logo written anew without its metadata, its shape kept in its copies, at an address every view of the account gives", async () => {
    const res = await upload(key, await wideJpeg(), "image/jpeg");
    expect([res.status, res.body.message], JSON.stringify(res.body)).toEqual([200, "brand logo updated"]);
    const url: string = res.body.data.brand_logo_url;
    expect(url).toMatch(new RegExp(`^http://localhost:${new URL(baseUrl()).port}/pictures/[0-9a-f]{32}$`));
    expect((await rest("GET", "/user", { key })).body.data.brand_logo_url).toBe(url);
    const settings = (await rest("GET", "/user/settings", { key })).body.data;
    // The logo is not the profile picture; branding is on once the account has a logo.
    expect(settings).toMatchObject({ brand_logo_url: url, profile_picture_url: "", enable_branding: true });
    const event = await newEvent({ key }, { name: "Logo chat" });
    expect((await rest("GET", `/public/users/${user.url}/events/${event.url}`)).body.data.host_brand_logo_url).toBe(url);
    expect((await rest("GET", `/public/users/${user.url}`)).body.data.brand_logo_url).toBe(url);

    const expected = [["", "jpeg", 800, 200], ["/320.webp", "webp", 320, 80], ["/480.webp", "webp", 480, 120]] as const;
    for (const [suffix, format, width, height] of expected) {
      const served = await fetchAt(url, suffix);
      expect(served.status, suffix).toBe(200);
      const meta = await sharp(served.bytes).metadata();
      expect(meta, suffix).toMatchObject({ format, width, height });
      expect(meta.exif, suffix).toBeUndefined();
      for (const secret of ["Ada Lovelace", "SecretCam"]) expect(served.bytes.toString("latin1"), suffix).not.toContain(secret);
    }
    // A logo has no square avatar copies.
    expect((await fetchAt(url, "/128.webp")).status).toBe(404);
  });

  it("never enlarges a small logo; a new upload gets a new address and the old one is gone", async () => {
    const before: string = (await rest("GET", "/user", { key })).body.data.brand_logo_url;
    const res = await upload(key, await squarePng(60));
    expect(res.status).toBe(200);
    const url: string = res.body.data.brand_logo_url;
    expect(url).not.toBe(before);
    expect((await fetchAt(before)).status).toBe(404);
    const copy = await fetchAt(url, "/320.webp");
    expect(await sharp(copy.bytes).metadata()).toMatchObject({ width: 60, height: 60, hasAlpha: true });
    expect((await fetchAt(url)).type).toBe("image/png");
  });

  it("refuses what is not an image, a text field, a missing file, more than 5 MB and names it does not take, keeping the logo", async () => {
    const { key: other } = await newAccount();
    const logo: string = (await upload(other, await squarePng(10))).body.data.brand_logo_url;
    expectRefused(await upload(other, Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), "image/svg+xml"), 422, UNSUPPORTED);
    expectRefused(await upload(other, "data:image/png;base64,iVBORw0KGgo="), 422, "brand_logo must be an uploaded image file");
    expectRefused(await rest("PUT", "/users/brand_logo", { key: other, body: { user: { brand_logo: "iVBORw0KGgo=" } } }), 422, "brand_logo must be an uploaded image file");
    expectRefused(await rest("PUT", "/users/brand_logo", { key: other, body: new FormData() }), 400, "missing params", { user: ["brand_logo"] });
    const tooLarge = Buffer.concat([await squarePng(10), Buffer.alloc(FIVE_MB)]);
    expectRefused(await upload(other, tooLarge), 422, "image must be 5MB or smaller");
    // The profile picture's field is not this upload's.
    const wrong = await upload(other, await squarePng(10), "image/png", "user[profile_picture]");
    expectRefused(wrong, 422, "unknown field profile_picture", { unknown: ["profile_picture"], allowed: ["brand_logo"] });
    expect((await rest("GET", "/user/settings", { key: other })).body.data).toMatchObject({ brand_logo_url: logo, profile_picture_url: "" });
    expect((await fetchAt(logo)).status).toBe(200);
  });

  it("DELETE removes it: the account shows none, its address is gone, and a second removal also succeeds", async () => {
    const { key: other } = await newAccount();
    const logo: string = (await upload(other, await squarePng(20))).body.data.brand_logo_url;
    const removed = await rest("DELETE", "/users/brand_logo", { key: other });
    expect([removed.status, removed.body.message, removed.body.data.brand_logo_url]).toEqual([200, "brand logo removed", null]);
    expect((await fetchAt(logo)).status).toBe(404);
    expect((await rest("GET", "/user/settings", { key: other })).body.data).toMatchObject({ brand_logo_url: null, enable_branding: false });
    expect((await rest("DELETE", "/users/brand_logo", { key: other })).status).toBe(200);
  });
});

describe("the brand logo over gRPC and Connect", () => {
  it("grpc-js: UploadBrandLogo answers the account with its logo; the refusals are INVALID_ARGUMENT; RemoveBrandLogo", async () => {
    const { key } = await newAccount();
    const res = await grpcUnary(UserService, "uploadBrandLogo", { user: { brandLogo: await wideJpeg(), filename: "logo.jpg" } }, key);
    const url = res.user?.brandLogoUrl ?? "";
    expect(url).toMatch(/\/pictures\/[0-9a-f]{32}$/);
    expect(await sharp((await fetchAt(url, "/320.webp")).bytes).metadata()).toMatchObject({ width: 320, height: 80 });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ brandLogo: Buffer.from("plain text") }, UNSUPPORTED],
      [{ brandLogoText: "not a file" }, "brand_logo must be an uploaded image file"],
      [{}, "missing params: user.brand_logo"],
    ];
    for (const [user, message] of cases) {
      const err = await rpcError(() => grpcUnary(UserService, "uploadBrandLogo", { user }, key));
      expect([err.code, err.rawMessage], message).toEqual([Code.InvalidArgument, message]);
    }
    const removed = await grpcUnary(UserService, "removeBrandLogo", {}, key);
    expect(removed.user?.brandLogoUrl).toBeUndefined();
    expect((await fetchAt(url)).status).toBe(404);
  });

  for (const kind of CONNECT_KINDS) {
    it(`${kind}: UploadBrandLogo and RemoveBrandLogo`, async () => {
      const acc = await newAccount();
      const client = connectClient(UserService, kind, acc.key);
      const { user } = await client.uploadBrandLogo({ user: { brandLogo: await squarePng(16) } });
      expect((await client.getUserSettings({})).settings?.brandLogoUrl).toBe(user?.brandLogoUrl);
      expect((await client.removeBrandLogo({})).user?.brandLogoUrl).toBeUndefined();
      expect((await client.getUserSettings({})).settings?.brandLogoUrl).toBeUndefined();
    });
  }
});
