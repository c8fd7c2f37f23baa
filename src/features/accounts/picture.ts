// GET /pictures/<id> and /pictures/<id>/<width>.webp: a profile picture's bytes, and square WebP copies for small slots, at addresses that change with every upload so they can be cached for good.
import type { Request, Response } from "express";
import { PictureModel } from "../../db/models/picture.js";
import { logger } from "../../platform/log.js";

/** The widths of the resized copies: the pages' 64 px slot on screens of 2 and 3-4 device pixels per CSS pixel. */
export const PICTURE_WIDTHS = [128, 256] as const;
export type PictureWidth = (typeof PICTURE_WIDTHS)[number];

/**
 * A 5 MB PNG may decode to hundreds of megapixels; a profile picture never needs more than this to make a 256 px
 * copy. A larger one is served as it is (its copies are the original).
 */
const RESIZE_MAX_PIXELS = 40_000_000;

interface Variant {
  width: number;
  content_type: string;
  data: Buffer;
}

/** The copies of one picture, made once: the first request makes them, later ones (and other processes) read them stored. */
const making = new Map<string, Promise<Variant[]>>();

async function resized(original: Buffer): Promise<Variant[]> {
  // Loaded on first use: starting the service does not pay for libvips.
  const { default: sharp } = await import("sharp");
  return Promise.all(
    PICTURE_WIDTHS.map(async (width) => ({
      width,
      content_type: "image/webp",
      // Turned as its EXIF says (phone photos), cropped to the square the round avatar shows, never enlarged;
      // metadata (location!) is left out, as sharp does unless asked.
      data: await sharp(original, { limitInputPixels: RESIZE_MAX_PIXELS, failOn: "error" })
        .autoOrient()
        .resize(width, width, { fit: "cover", withoutEnlargement: true })
        .webp({ quality: 80 })
        .toBuffer(),
    })),
  );
}

async function variantsOf(publicId: string): Promise<Variant[] | undefined> {
  // public_id unique index; the original's bytes are read only when the copies are still to be made.
  const stored = await PictureModel.findOne({ public_id: publicId }, { variants: 1 }).lean();
  if (!stored) return undefined;
  if (stored.variants) return stored.variants.map((v) => ({ ...v, data: Buffer.from(v.data.buffer) }));
  let pending = making.get(publicId);
  if (!pending) {
    pending = (async () => {
      const pic = await PictureModel.findOne({ public_id: publicId }, { data: 1 }).lean();
      if (!pic) return [];
      let variants: Variant[];
      try {
        variants = await resized(Buffer.from(pic.data.buffer));
      } catch (err) {
        // Sniffed as an image on upload but not readable here (damaged, or too large): remembered as no copies,
        // so the original is served without trying again on every request.
        logger.warn({ msg: "profile picture could not be resized; its original is served", error: String(err) });
        variants = [];
      }
      await PictureModel.updateOne({ public_id: publicId }, { $set: { variants } });
      return variants;
    })().finally(() => making.delete(publicId));
    making.set(publicId, pending);
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
  const variant = req.params.variant === undefined ? undefined : /^(\d+)\.webp$/.exec(String(req.params.variant));
  if (req.params.variant !== undefined) {
    const width = variant ? Number(variant[1]) : NaN;
    if (!(PICTURE_WIDTHS as readonly number[]).includes(width)) return notFound(res);
    const variants = await variantsOf(id);
    if (!variants) return notFound(res);
    const copy = variants.find((v) => v.width === width);
    if (copy) return send(res, copy.content_type, copy.data);
    // No copies could be made: the original stands in.
  }
  const pic = await PictureModel.findOne({ public_id: id }, { content_type: 1, data: 1 }).lean();
  if (!pic) return notFound(res);
  send(res, pic.content_type, Buffer.from(pic.data.buffer));
}
