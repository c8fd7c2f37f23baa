// The pages' files: the bundled script, style and icon (/assets/<name>, /favicon.ico) and a brand colour's stylesheet.
import type { NextFunction, Request, Response } from "express";
import { brandPalette } from "../../../domain/brand.js";
import { loadAssets } from "../assets.js";

/** One bundled file; `name` as asked for (`/favicon.ico` is one of them, at the root where browsers look). */
async function sendAsset(name: string, res: Response, next: NextFunction): Promise<void> {
  try {
    const asset = (await loadAssets()).get(name);
    if (!asset) return next();
    res.setHeader("Content-Type", asset.contentType);
    res.setHeader("X-Content-Type-Options", "nosniff");
    // A hashed name changes with its content, so that file may be kept for good; the fixed names (the favicon,
    // embed.js that integrators link to) are checked again daily.
    res.setHeader("Cache-Control", asset.hashed ? "public, max-age=31536000, immutable" : "public, max-age=86400");
    res.send(asset.body);
  } catch (err) {
    next(err);
  }
}

/**
 * A brand colour's stylesheet: the pages' accent colours from it (domain/brand.ts, darkened where too light to read).
 * A file of our origin rather than a style attribute, which the pages' CSP (style-src 'self') would refuse; its name
 * is its colour, so it may be kept for good.
 */
function sendBrandStylesheet(color: string, res: Response): void {
  const { accent, accentSoft } = brandPalette(color);
  res.setHeader("Content-Type", "text/css; charset=utf-8");
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
  res.send(`:root{--accent:${accent};--accent-soft:${accentSoft}}\n`);
}

/** GET /assets/<file>: a bundled file, or `brand-<rrggbb>.css`. */
export function assetFile(req: Request, res: Response, next: NextFunction): void | Promise<void> {
  const brand = /^brand-([0-9a-f]{6})\.css$/.exec(String(req.params.file));
  if (brand) return sendBrandStylesheet(`#${brand[1]}`, res);
  return sendAsset(String(req.params.file), res, next);
}

/** GET /favicon.ico. */
export function favicon(_req: Request, res: Response, next: NextFunction): Promise<void> {
  return sendAsset("favicon.ico", res, next);
}
