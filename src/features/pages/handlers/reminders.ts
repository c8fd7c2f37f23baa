// The booker's switch of reminder e-mails: POST /booking/<key>/unsubscribe and /resubscribe, and the page a GET of the unsubscribe URL shows.
import type { Request, Response } from "express";
import { PublicBookingService, type PublicBooking } from "../../../../gen/scheduling/v1/public_booking_pb.js";
import { ROOT_PATHS } from "../../../domain/rootPaths.js";
import { localeOf } from "../../../i18n/index.js";
import { documentHtml, speechOf, unsubscribeBody } from "../pages.js";
import { inLanguage, isLocale, pageLocale } from "../request.js";
import { sendPage, type PageHandler, type PageTools } from "../respond.js";
import { say } from "../shared/view.js";

/** The question (or, once `done`, the answer) of the unsubscribe page. */
async function sendUnsubscribePage(req: Request, res: Response, b: PublicBooking, done: boolean): Promise<void> {
  // The language of the booker's own page: ?locale=, the browser's, else the one they booked in, else the host's.
  const speech = speechOf(pageLocale(req, localeOf(b.locale ?? b.hostLocale)), b.hostTimeFormat);
  const title = say(speech, done ? "unsubscribedHeading" : "unsubscribeHeading");
  const body = unsubscribeBody({ speech, privateKey: b.privateKey, eventName: b.eventName, hostName: b.hostFullName, done });
  await sendPage(res, 200, (a) => documentHtml({ speech, title, description: title, noindex: true, assets: a.names, embed: false, body, languages: inLanguage(req) }), {
    embed: false,
    private: true,
    locale: speech.locale,
  });
}

/*
 * Nothing is read from the body (a mail client's one-click POST of RFC 8058 sends `List-Unsubscribe=One-Click`, the
 * forms nothing): the path's private key is the whole request. The manage page's form goes back to the page;
 * anything else gets a page saying it is done.
 */
async function switchReminders(req: Request, res: Response, { call }: PageTools, enabled: boolean): Promise<void> {
  const key = String(req.params.key);
  const { booking: b } = await call(PublicBookingService.method.setBookingReminders, { privateKey: key, reminders: { enabled } });
  if (!b) throw new Error("SetBookingReminders answered without a booking");
  if (req.query.from === "manage" || enabled) {
    res.setHeader("Cache-Control", "no-store");
    const locale = isLocale(req.query.locale) ? `&locale=${req.query.locale}` : "";
    res.redirect(303, `/${ROOT_PATHS.booking}/${encodeURIComponent(key)}?done=${enabled ? "reminders_on" : "reminders_off"}${locale}`);
    return;
  }
  await sendUnsubscribePage(req, res, b, true);
}

/** POST …/unsubscribe: the List-Unsubscribe URL of every reminder to the booker, and the manage page's form. */
export const unsubscribe: PageHandler = (req, res, tools) => switchReminders(req, res, tools, false);

/** POST …/resubscribe: the manage page's form to have reminders again. */
export const resubscribe: PageHandler = (req, res, tools) => switchReminders(req, res, tools, true);

/** GET …/unsubscribe: a question with its button; a GET changes nothing, so link scanners cannot unsubscribe anyone. */
export const unsubscribePage: PageHandler = async (req, res, { call }) => {
  const { booking: b } = await call(PublicBookingService.method.getBooking, { privateKey: String(req.params.key) });
  if (!b) throw new Error("GetBooking answered without a booking");
  await sendUnsubscribePage(req, res, b, false);
};
