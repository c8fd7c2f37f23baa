// Profile pictures and brand logos: re-encoded at upload (metadata gone, dimensions checked, memory bounded), and served at GET /pictures/<id> and /pictures/<id>/<width>.webp.
import type { Request, Response } from "express";
import type { Sharp, SharpOptions } from "sharp";
import { PictureModel } from "../../db/models/picture.js";
import { invalid } from "../../domain/errors.js";
import { PICTURE_MAX_PIXELS, PICTURE_TOO_LARGE, pictureDimensionsAllowed, type PictureHeader } from "../../domain/user.js";
import { logger } from "../../platform/log.js";
import { turns } from "../../platform/transport/turns.js";

/** The widths of the resized copies: the pages' 64 px slot on screens of 2 and 3-4 device pixels per CSS pixel. */
export const PICTURE_WIDTHS = [128, 256] as const;
export type PictureWidth = (typeof PICTURE_WIDTHS)[number];

/**
 * The brand logo's copies, named by the width of the box they fit in: the pages show a logo within 160 x 40 CSS
 * pixels (style.css .brand-logo), so 320 x 80 serves screens of 2 device pixels per CSS pixel and 480 x 120 those
 * of 3. A logo keeps its shape (a wide wordmark stays wide), unlike the square crop of an avatar.
 */
export const LOGO_WIDTHS = [320, 480] as const;
export type LogoWidth = (typeof LOGO_WIDTHS)[number];
const LOGO_ASPECT = 4;

/** What an upload is for: the round avatar (square copies) or the brand logo (copies that keep its shape). */
export type PictureUse = "avatar" | "logo";

const COPY_WIDTHS: ReadonlySet<number> = new Set([...PICTURE_WIDTHS, ...LOGO_WIDTHS]);

/** The picture at profile_picture_url is at most this many pixels on its longer side: far more than any avatar shows. */
const SERVED_MAX_SIDE = 1024;

export const UNSUPPORTED_PICTURE = "unsupported image type. Use PNG, JPEG, GIF, or WEBP.";

interface Variant {
  width: number;
  content_type: string;
  data: Buffer;
}

/** What is kept of an upload: never its bytes as sent. */
export interface PreparedPicture {
  content_type: string;
  data: Buffer;
  variants: Variant[];
}

/**
 * Pictures decoded at once, in the whole process. Decoding holds a picture's pixels (up to about 50 MB for the
 * largest accepted PNG, before it is reduced line by line), so sixteen uploads at once made the service hold more
 * than half a gigabyte; one at a time keeps it within its budget (bench/pictures.ts, bench/RESULTS.md). The others
 * wait their turn, a few hundred milliseconds each.
 */
const PICTURES_AT_ONCE = 1;
const pictureTurn = turns(PICTURES_AT_ONCE);

async function oneAtATime<T>(work: () => Promise<T>): Promise<T> {
  const done = await pictureTurn();
  try {
    return await work();
  } finally {
    done();
  }
}

let sharpModule: Promise<typeof import("sharp").default> | undefined;

/** Loaded on first use (starting the service does not pay for libvips), without libvips's cache of decoded images. */
function loadSharp(): Promise<typeof import("sharp").default> {
  sharpModule ??= import("sharp").then(({ default: sharp }) => {
    sharp.cache(false);
    return sharp;
  });
  return sharpModule;
}

/** The same kind of image as uploaded, so a client that asked for a PNG gets a PNG; GIFs lose their animation. */
function encode(image: Sharp, contentType: string): Promise<Buffer> {
  switch (contentType) {
    case "image/jpeg":
      return image.jpeg({ quality: 85 }).toBuffer();
    case "image/png":
      return image.png().toBuffer();
    case "image/gif":
      return image.gif().toBuffer();
    default:
      return image.webp({ quality: 85 }).toBuffer();
  }
}

/**
 * The picture as it may be kept and shown: decoded once, turned as its EXIF says, reduced to SERVED_MAX_SIDE, and
 * written anew with no metadata (sharp writes none unless asked: no GPS position, no Artist, no camera), plus
 * its square WebP copies. Its dimensions are read from the header first: one over the limits is a 422 before any
 * pixel is decoded. Bytes that do not decode are refused as no image at all.
 */
export async function preparePicture(bytes: Uint8Array, contentType: string, use: PictureUse = "avatar"): Promise<PreparedPicture> {
  const sharp = await loadSharp();
  // The first frame of an animation only, and a decode that stops at the first error.
  const options: SharpOptions = { limitInputPixels: PICTURE_MAX_PIXELS, failOn: "error", sequentialRead: true, pages: 1 };
  return oneAtATime(async () => {
    let header: PictureHeader;
    try {
      const meta = await sharp(bytes, { ...options, limitInputPixels: false }).metadata();
      header = { width: meta.width ?? 0, height: meta.height ?? 0, format: meta.format ?? "", progressive: meta.isProgressive === true };
    } catch {
      throw invalid(UNSUPPORTED_PICTURE);
    }
    if (header.width === 0 || header.height === 0) throw invalid(UNSUPPORTED_PICTURE);
    if (!pictureDimensionsAllowed(header)) throw invalid(PICTURE_TOO_LARGE);
    let data: Buffer;
    try {
      data = await encode(sharp(bytes, options).autoOrient().resize(SERVED_MAX_SIDE, SERVED_MAX_SIDE, { fit: "inside", withoutEnlargement: true }), contentType);
    } catch {
      throw invalid(UNSUPPORTED_PICTURE);
    }
    // The copies are made from the picture just written (at most 1024 px, cheap to decode again), not from its
    // pixels handed to JavaScript: a 1024 px picture's pixels are 3-4 MB an upload, which the process held until
    // its next full garbage collection, some 50 MB under 16 uploads at once (bench/RESULTS.md).
    // An avatar: cropped to the square the round avatar shows. A logo: whole, within its box. Never enlarged.
    const copies = use === "avatar" ? PICTURE_WIDTHS.map((w) => ({ w, h: w, fit: "cover" as const })) : LOGO_WIDTHS.map((w) => ({ w, h: w / LOGO_ASPECT, fit: "inside" as const }));
    const variants = await Promise.all(
      copies.map(async ({ w, h, fit }) => ({
        width: w,
        content_type: "image/webp",
        data: await sharp(data, options).resize(w, h, { fit, withoutEnlargement: true }).webp({ quality: 80 }).toBuffer(),
      })),
    );
    return { content_type: contentType, data, variants };
  });
}

/** Bytes as the driver reads them (a BSON Binary, whose `buffer` holds them) or as just made. */
type Bytes = Buffer | { buffer: Uint8Array };

interface StoredPicture {
  content_type: string;
  data: Bytes;
  variants?: Array<{ width: number; content_type: string; data: Bytes }>;
  prepared?: boolean;
}

const bytesOf = (b: Bytes): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer));

/** Pictures stored before uploads were re-encoded, being prepared now: one run per picture, whoever asks. */
const preparing = new Map<string, Promise<PreparedPicture | undefined>>();

/**
 * A picture stored as uploaded, by a version that kept the bytes as sent (metadata and all), is prepared on its
 * first request and replaced by what it makes; one that cannot be prepared (too large, unreadable) is never
 * served again. Nothing serves the bytes as sent.
 */
function prepareStored(publicId: string, stored: StoredPicture): Promise<PreparedPicture | undefined> {
  let pending = preparing.get(publicId);
  if (!pending) {
    pending = (async () => {
      let prepared: PreparedPicture | undefined;
      try {
        prepared = await preparePicture(bytesOf(stored.data), stored.content_type);
      } catch (err) {
        logger.warn({ msg: "a stored profile picture could not be re-encoded; it is no longer served", picture: publicId, error: String(err) });
      }
      // public_id unique index.
      if (prepared) await PictureModel.updateOne({ public_id: publicId }, { $set: { ...prepared, prepared: true } });
      else await PictureModel.deleteOne({ public_id: publicId });
      return prepared;
    })().finally(() => preparing.delete(publicId));
    preparing.set(publicId, pending);
  }
  return pending;
}

function send(res: Response, contentType: string, body: Buffer): void {
  res.setHeader("Content-Type", contentType);
  res.setHeader("X-Content-Type-Options", "nosniff");
  // A new upload gets a new address, so a picture at one address never changes.
  res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
  res.send(body);
}

function notFound(res: Response): void {
  res.status(404).type("text/plain").send("not found");
}

export async function servePicture(req: Request, res: Response): Promise<void> {
  const id = String(req.params.id);
  if (!/^[0-9a-f]{32}$/.test(id)) return notFound(res);
  let width: number | undefined;
  if (req.params.variant !== undefined) {
    const variant = /^(\d+)\.webp$/.exec(String(req.params.variant));
    width = variant ? Number(variant[1]) : NaN;
    if (!COPY_WIDTHS.has(width)) return notFound(res);
  }
  // public_id unique index.
  const stored = await PictureModel.findOne({ public_id: id }).lean<StoredPicture>();
  if (!stored) return notFound(res);
  const picture = stored.prepared ? stored : await prepareStored(id, stored);
  if (!picture) return notFound(res);
  const shown = width === undefined ? picture : picture.variants?.find((v) => v.width === width);
  if (!shown) return notFound(res);
  send(res, shown.content_type, bytesOf(shown.data));
}
