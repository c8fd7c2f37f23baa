// What a page reads from its request: the language, the zone, the embedding, the links it keeps, the paths that are ours.
import type { Request } from "express";
import { isIanaTimeZone } from "../../domain/timezones.js";
import { urlFormatProblem, URL_MAX } from "../../domain/user.js";
import { LINK_ROOT, ROOT_PATHS } from "../../domain/rootPaths.js";
import { LOCALES, type Locale } from "../../i18n/index.js";

export function isLocale(value: unknown): value is Locale {
  return typeof value === "string" && (LOCALES as readonly string[]).includes(value);
}

/**
 * The language a page speaks (extensions.md "Visitor language"): `?locale=` when it is one of the eleven, else the
 * first language of the browser's Accept-Language we speak (by its q-values, then its order; `de-AT` is `de`),
 * else `fallback`: the host's locale (or, on the booker's page, the language they booked in).
 */
export function pageLocale(req: Request, fallback: Locale): Locale {
  if (isLocale(req.query.locale)) return req.query.locale;
  const wanted = (req.headers["accept-language"] ?? "")
    .split(",")
    .map((part, order) => {
      const [tag, ...params] = part.trim().split(";");
      const q = Number(/^\s*q=([\d.]+)\s*$/.exec(params.find((p) => /^\s*q=/.test(p)) ?? "")?.[1] ?? 1);
      return { language: tag.trim().toLowerCase().split("-")[0], q: Number.isFinite(q) ? q : 0, order };
    })
    .filter((w) => w.q > 0 && isLocale(w.language))
    .sort((a, b) => b.q - a.q || a.order - b.order);
  return (wanted[0]?.language as Locale | undefined) ?? fallback;
}

/** The page's address in another language: the same path and query, `locale` set (the language menu's links). */
export function inLanguage(req: Request): (locale: Locale) => string {
  return (locale) => {
    const url = new URL(req.originalUrl, "http://page.invalid");
    url.searchParams.set("locale", locale);
    return `${url.pathname}${url.search}`;
  };
}

const RESERVED: ReadonlySet<string> = new Set(Object.values(ROOT_PATHS));

/**
 * A path segment that can be a user or event url: anything else (dots of gRPC paths; as the `first` segment, a
 * reserved root such as `api`) is not a page, and the request goes on past the pages.
 */
export function isPageSegment(segment: string, first = false): boolean {
  if (first && RESERVED.has(segment.toLowerCase())) return false;
  return urlFormatProblem("url", segment, 1, URL_MAX) === undefined;
}

/** The roots of the service's own pages (the booker's, a team's, a single-use link's): all else in ROOT_PATHS is not a page. */
const PAGE_ROOTS: ReadonlySet<string> = new Set([ROOT_PATHS.booking, ROOT_PATHS.team, LINK_ROOT]);

/** A gRPC, gRPC-Web or Connect path: `/<package>.<Service>/<Method>`. */
const RPC_PATH = /^\/[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\/[A-Za-z_]\w*$/;

/**
 * A path a visitor may have typed or followed to a page (booking-pages.md: an unknown one is the HTML 404 page,
 * never JSON): any path but one under a root the service answers otherwise (`/api`, `/docs`, `/healthz`, ...: in
 * any case, as Express matches them) and an RPC's.
 */
export function isPagePath(path: string): boolean {
  if (RPC_PATH.test(path)) return false;
  const root = path.split("/")[1].toLowerCase();
  return PAGE_ROOTS.has(root) || !RESERVED.has(root);
}

/** The picture's path on this origin: the API writes it under APP_URL, which a visitor may reach by another name. */
export function samePath(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).pathname;
  } catch {
    return undefined;
  }
}

export function isEmbed(req: Request): boolean {
  return req.query.embed === "true";
}

/** What links from one page to another carry along: the embedding, and a language the visitor chose by link. */
export function keptQuery(req: Request): string {
  const kept = new URLSearchParams();
  if (isEmbed(req)) kept.set("embed", "true");
  if (isLocale(req.query.locale)) kept.set("locale", req.query.locale);
  const text = kept.toString();
  return text === "" ? "" : `?${text}`;
}

/** A booker's page or file: the path holds the private key, so search engines are told to keep it out. */
export function isBookersOwn(req: Request): boolean {
  // A single-use link's path holds its token, a secret as much as a private key.
  return [ROOT_PATHS.booking, LINK_ROOT].some((root) => req.path === `/${root}` || req.path.startsWith(`/${root}/`));
}

/** The zone the server draws times in: ?timezone= when it is a real zone, else the default (the script then switches to the browser's). */
export function pickZone(req: Request, fallback: string): string {
  const asked = req.query.timezone;
  return typeof asked === "string" && isIanaTimeZone(asked) ? asked : fallback;
}
