// The booking pages' routes: a table of page handlers (handlers/), each a client of PublicBookingService called as REST rows call it.
import type { Clock } from "../../domain/clock.js";
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { LINK_ROOT, ROOT_PATHS } from "../../domain/rootPaths.js";
import { logger } from "../../platform/log.js";
import { errorAnswer } from "../../platform/rest/errors.js";
import { rpcCaller, type Implementations } from "../../platform/rest/table.js";
import { loadAssets, type Assets } from "./assets.js";
import { inviteFile } from "./handlers/invite.js";
import { eventPage, linkPage, teamEventPage } from "./handlers/event.js";
import { assetFile, favicon } from "./handlers/files.js";
import { managePage } from "./handlers/manage.js";
import { answerPage, answerPost } from "./handlers/answer.js";
import { profilePage } from "./handlers/profile.js";
import { teamPage } from "./handlers/team.js";
import { resubscribe, unsubscribe, unsubscribePage } from "./handlers/reminders.js";
import { documentHtml, messageBody, speechOf } from "./pages.js";
import { inLanguage, isBookersOwn, isPagePath, pageLocale } from "./request.js";
import { sendPage, type PageHandler, type PageRow } from "./respond.js";
import { say } from "./shared/view.js";

export interface WebOptions {
  impls: Implementations;
  /** The public website address (APP_URL): the host part names the calendar files' UIDs. */
  appUrl: () => string;
  /** The service's clock (`Deps.clock`): the month and day a page opens on. */
  clock: Clock;
}

const BOOKING = `/${ROOT_PATHS.booking}/:key`;

/**
 * Every page, in the order Express tries them: a booker's paths (their key under /booking/) before a host's, whose
 * handlers say "next" for a segment that is no url (a reserved root, a gRPC path's dots, a space): the router's
 * last step then answers the not-found page, or passes a path that is not a page on.
 */
const PAGES: readonly PageRow[] = [
  { method: "get", path: `${BOOKING}/invite.ics`, handler: inviteFile },
  { method: "post", path: `${BOOKING}/unsubscribe`, handler: unsubscribe },
  { method: "post", path: `${BOOKING}/resubscribe`, handler: resubscribe },
  { method: "get", path: `${BOOKING}/unsubscribe`, handler: unsubscribePage },
  { method: "get", path: `${BOOKING}/answer/:token`, handler: answerPage },
  { method: "post", path: `${BOOKING}/answer/:token`, handler: answerPost },
  { method: "get", path: BOOKING, handler: managePage },
  { method: "get", path: `/${LINK_ROOT}/:token`, handler: linkPage },
  { method: "get", path: `/${ROOT_PATHS.team}/:team`, handler: teamPage },
  { method: "get", path: `/${ROOT_PATHS.team}/:team/:event`, handler: teamEventPage },
  { method: "get", path: "/:user", handler: profilePage },
  { method: "get", path: "/:user/:event", handler: eventPage },
];

/** The POSTs the pages take: the booker's switch of reminder e-mails, and the host's answer to a request. */
const PAGE_POSTS = new RegExp(`^/${ROOT_PATHS.booking}/[^/]+/(unsubscribe|resubscribe|answer/[^/]+)$`);

/** The not-found page. Never framed, even asked with ?embed=true: only a profile, event or team page may be (booking-pages.md). */
async function notFound(req: Request, res: Response): Promise<void> {
  const speech = speechOf(pageLocale(req, "en"), "24_hours");
  const html = (a: Assets) =>
    documentHtml({
      speech,
      title: say(speech, "notFoundHeading"),
      description: say(speech, "notFoundText"),
      noindex: isBookersOwn(req),
      assets: a.names,
      embed: false,
      body: messageBody(say(speech, "notFoundHeading"), say(speech, "notFoundText")),
      languages: inLanguage(req),
    });
  await sendPage(res, 404, html, { embed: false, private: false, locale: speech.locale });
}

/** Any failure of a page: 404 as the not-found page, anything else a page saying so (never an envelope). */
async function failed(req: Request, res: Response, err: unknown): Promise<void> {
  const answer = errorAnswer(err);
  if (answer.httpStatus === 404) return notFound(req, res);
  if (answer.httpStatus >= 500 && answer.httpStatus !== 503) {
    // The route's pattern, never the path: a booker's path holds the private key.
    const route = (req.route as { path?: unknown } | undefined)?.path;
    logger.error({ msg: "page failed", route: typeof route === "string" ? route : "unmatched", error: String(err) });
  }
  const speech = speechOf(pageLocale(req, "en"), "24_hours");
  // 410: a single-use link used, revoked or expired (booking-kinds.md).
  const gone = answer.httpStatus === 410;
  const text = gone ? say(speech, "linkGoneHeading") : answer.httpStatus === 429 ? say(speech, "errorTooManyRequests") : say(speech, "errorGeneric");
  const more = gone ? say(speech, "linkGoneText") : "";
  res.set(answer.headers);
  const html = (a: Assets) => documentHtml({ speech, title: text, description: more || text, noindex: isBookersOwn(req), assets: a.names, embed: false, body: messageBody(text, more) });
  await sendPage(res, answer.httpStatus, html, { embed: false, private: false, locale: speech.locale });
}

export function webRouter(opts: WebOptions): Router {
  const router = express.Router();
  // Pages are only read, but for the booker's switch of reminder e-mails (a POST: the one-click unsubscribe of
  // RFC 8058, and the manage page's form) and the host's answer page's forms. Any other method leaves the router at once: else Express would answer
  // an OPTIONS to a path shaped like a page (OPTIONS /api/v1 fits "/:user/:event") itself, with "GET, HEAD" and no
  // envelope.
  router.use((req, _res, next) => next(req.method === "GET" || req.method === "HEAD" || (req.method === "POST" && PAGE_POSTS.test(req.path)) ? undefined : "router"));
  // Everything answered under /booking/ (pages, invite.ics, its 404s) is one booker's: never in search results.
  router.use(`/${ROOT_PATHS.booking}`, (_req, res, next) => {
    res.setHeader("X-Robots-Tag", "noindex");
    next();
  });
  // Bundled at start, so the first visitor does not wait for esbuild.
  void loadAssets().catch((err: unknown) => logger.error({ msg: "page assets could not be bundled", error: String(err) }));

  /** Runs a page's handler with its tools: anything it throws becomes a page, and a path that is not ours goes on. */
  const serve =
    (handler: PageHandler) =>
    (req: Request, res: Response, next: NextFunction): void => {
      handler(req, res, { call: rpcCaller(opts.impls, req, res), appUrl: opts.appUrl(), now: opts.clock.now() }).then(
        (r) => (r === "next" ? next() : undefined),
        (err: unknown) => failed(req, res, err).catch(next),
      );
    };

  router.get(`/${ROOT_PATHS.assets}/:file`, assetFile);
  router.get("/favicon.ico", favicon);
  for (const { method, path, handler } of PAGES) router[method](path, serve(handler));
  // A page-shaped path no row answered (/no.such, /<user>/<event>/extra, /booking): the not-found page. Paths of
  // the API, the other roots and RPCs go on to the JSON 404.
  router.use((req, res, next) => (req.method !== "POST" && isPagePath(req.path) ? notFound(req, res).catch(next) : next()));
  // A path whose percent-encoding does not decode (`/%ZZ`) names no page: Express's matcher throws a URIError
  // before any handler, which would otherwise reach Express's own error page with its stack trace.
  router.use((err: unknown, req: Request, res: Response, next: NextFunction) => (err instanceof URIError ? notFound(req, res).catch(next) : next(err)));
  return router;
}
