// How a page answers (its headers, its HTML with the bundled files' names) and what a page handler is: a row of the pages' table.
import type { Request, Response } from "express";
import type { Locale } from "../../i18n/index.js";
import type { RpcCall } from "../../platform/rest/table.js";
import { loadAssets, type Assets } from "./assets.js";

export interface PageHeaders {
  /** Shown inside another site's frame (?embed=true). */
  embed: boolean;
  /** The booker's own (the path holds the private key): never kept by a cache. */
  private: boolean;
  locale: Locale;
}

/**
 * Headers of every page: our files only, no framing unless embedded, nothing sniffed, no referrer to another origin
 * (manage links hold a key). `same-origin` rather than `no-referrer`: under `no-referrer` a browser sends a page's
 * own form posts (the reminder switch) with `Origin: null`, which the cross-origin write guard refuses.
 */
function pageHeaders(res: Response, opts: PageHeaders): void {
  const ancestors = opts.embed ? "*" : "'none'";
  res.setHeader(
    "Content-Security-Policy",
    `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors ${ancestors}`,
  );
  if (!opts.embed) res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "same-origin");
  // Free times change by the minute; a booking page with its key is the booker's alone.
  res.setHeader("Cache-Control", opts.private ? "private, no-store" : "no-cache");
  // The language follows the browser's Accept-Language: a cache must keep one copy per language.
  res.setHeader("Content-Language", opts.locale);
  res.vary("Accept-Language");
  res.type("html");
}

/** Sends a page: its HTML made with the bundled files' names, under the pages' headers. */
export async function sendPage(res: Response, status: number, html: (assets: Assets) => string, headers: PageHeaders): Promise<void> {
  const assets = await loadAssets();
  pageHeaders(res, headers);
  res.status(status).send(html(assets));
}

/** What a page handler is given besides its request. */
export interface PageTools {
  /** Calls a PublicBookingService RPC for this request, the way a REST row calls its RPC. */
  call: RpcCall;
  /** The public website address (APP_URL). */
  appUrl: string;
  /** The time of the request (`Deps.clock`). */
  now: Date;
}

/**
 * One page (or file, or form post): answers the request, or says "next" when the path is not one of ours. What it
 * throws becomes a page (router.ts `failed`): the not-found page for a 404, else a page saying what went wrong.
 */
export type PageHandler = (req: Request, res: Response, tools: PageTools) => Promise<void | "next">;

/** A row of the pages' table (router.ts): the method and Express path a handler answers. */
export interface PageRow {
  method: "get" | "post";
  path: string;
  handler: PageHandler;
}
