// The booking pages' routes (GET /<user>, /<user>/<event>, /booking/<key>, invite.ics, /assets): a client of PublicBookingService in-process.
import { create, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import type { DescMethodUnary } from "@bufbuild/protobuf";
import express, { type Request, type Response, type Router } from "express";
import { PublicBookingService, type PublicBooking, type PublicEvent } from "../../../gen/scheduling/v1/public_booking_pb.js";
import { avatarName } from "../../domain/format.js";
import { questionSettings } from "../../domain/questions.js";
import { addDays, isIanaTimeZone, utcToWallClock } from "../../domain/timezones.js";
import { ROOT_PATHS, urlFormatProblem, URL_MAX } from "../../domain/user.js";
import { LOCALES, localeOf, type Locale } from "../../i18n/index.js";
import { logger } from "../../platform/log.js";
import { errorAnswer } from "../../platform/rest/errors.js";
import { contextFor, type Implementations } from "../../platform/rest/table.js";
import { loadAssets, type Assets } from "./assets.js";
import { bookerCopy, icsOfBooking, manageUrlOf } from "./ics.js";
import { calendarEntryOf } from "../../domain/calendarLinks.js";
import { brandPalette } from "../../domain/brand.js";
import { documentHtml, eventBody, MANAGE_DONE, manageBody, messageBody, profileBody, speechOf, unsubscribeBody, type ManageView, type QuestionView } from "./pages.js";
import type { PickerData } from "./shared/data.js";
import { firstFreeDay, locationText, monthRange, say, slotsByDay, addMonths, type PickerState, type Slot, type Speech } from "./shared/view.js";

export interface WebOptions {
  impls: Implementations;
  /** The public website address (APP_URL): the host part names the calendar files' UIDs. */
  appUrl: () => string;
}

type Call = <I extends DescMessage, O extends DescMessage>(method: DescMethodUnary<I, O>, input: MessageInitShape<I>) => Promise<MessageShape<O>>;

/**
 * Headers of every page: our files only, no framing unless embedded, nothing sniffed, no referrer to another origin
 * (manage links hold a key). `same-origin` rather than `no-referrer`: under `no-referrer` a browser sends a page's
 * own form posts (the reminder switch) with `Origin: null`, which the cross-origin write guard refuses.
 */
function pageHeaders(res: Response, opts: { embed: boolean; private: boolean; locale: Locale }): void {
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

function isLocale(value: unknown): value is Locale {
  return typeof value === "string" && (LOCALES as readonly string[]).includes(value);
}

/**
 * The language a page speaks (extensions.md "Visitor language"): `?locale=` when it is one of the eleven, else the
 * first language of the browser's Accept-Language we speak (by its q-values, then its order; `de-AT` is `de`),
 * else `fallback`: the host's locale (or, on the booker's page, the language they booked in).
 */
function pageLocale(req: Request, fallback: Locale): Locale {
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
function inLanguage(req: Request): (locale: Locale) => string {
  return (locale) => {
    const url = new URL(req.originalUrl, "http://page.invalid");
    url.searchParams.set("locale", locale);
    return `${url.pathname}${url.search}`;
  };
}

/** A path segment that can be a user or event url: anything else (dots of gRPC paths, reserved roots) is not ours. */
function isPageSegment(segment: string): boolean {
  return urlFormatProblem("url", segment, 1, URL_MAX) === undefined;
}

/** The picture's path on this origin: the API writes it under APP_URL, which a visitor may reach by another name. */
function samePath(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).pathname;
  } catch {
    return undefined;
  }
}

function isEmbed(req: Request): boolean {
  return req.query.embed === "true";
}

/** What links from one page to another carry along: the embedding, and a language the visitor chose by link. */
function keptQuery(req: Request): string {
  const kept = new URLSearchParams();
  if (isEmbed(req)) kept.set("embed", "true");
  if (isLocale(req.query.locale)) kept.set("locale", req.query.locale);
  const text = kept.toString();
  return text === "" ? "" : `?${text}`;
}

/** A booker's page or file: the path holds the private key, so search engines are told to keep it out. */
function isBookersOwn(req: Request): boolean {
  return req.path === `/${ROOT_PATHS.booking}` || req.path.startsWith(`/${ROOT_PATHS.booking}/`);
}

/** The booker's switch of reminder e-mails: the unsubscribe URL of every reminder to the booker, and back on. */
const REMINDER_SWITCH = new RegExp(`^/${ROOT_PATHS.booking}/[^/]+/(unsubscribe|resubscribe)$`);

export function webRouter(opts: WebOptions): Router {
  const router = express.Router();
  // Pages are only read, but for the booker's switch of reminder e-mails (a POST: the one-click unsubscribe of
  // RFC 8058, and the manage page's form). Any other method leaves the router at once: else Express would answer
  // an OPTIONS to a path shaped like a page (OPTIONS /api/v1 fits "/:user/:event") itself, with "GET, HEAD" and no
  // envelope.
  router.use((req, _res, next) => next(req.method === "GET" || req.method === "HEAD" || (req.method === "POST" && REMINDER_SWITCH.test(req.path)) ? undefined : "router"));
  const reserved: ReadonlySet<string> = new Set(Object.values(ROOT_PATHS));
  // Everything answered under /booking/ (pages, invite.ics, its 404s) is one booker's: never in search results.
  router.use(`/${ROOT_PATHS.booking}`, (_req, res, next) => {
    res.setHeader("X-Robots-Tag", "noindex");
    next();
  });
  // Bundled at start, so the first visitor does not wait for esbuild.
  void loadAssets().catch((err: unknown) => logger.error({ msg: "page assets could not be bundled", error: String(err) }));

  function caller(req: Request, res: Response): Call {
    const impl = opts.impls.get(PublicBookingService);
    return async (method, input) => {
      const fn = impl?.[method.localName];
      if (!fn) throw new Error(`PublicBookingService.${method.name} is not implemented`);
      const ctx = contextFor(req, res, PublicBookingService, method);
      return (await fn.call(impl, create(method.input, input), ctx)) as never;
    };
  }

  async function sendPage(res: Response, status: number, html: (assets: Assets) => string, o: { embed: boolean; private: boolean; locale: Locale }): Promise<void> {
    const assets = await loadAssets();
    pageHeaders(res, o);
    res.status(status).send(html(assets));
  }

  async function notFound(req: Request, res: Response): Promise<void> {
    const speech = speechOf(pageLocale(req, "en"), "24_hours");
    const html = (a: Assets) =>
      documentHtml({
        speech,
        title: say(speech, "notFoundHeading"),
        description: say(speech, "notFoundText"),
        noindex: isBookersOwn(req),
        assets: a.names,
        embed: isEmbed(req),
        body: messageBody(say(speech, "notFoundHeading"), say(speech, "notFoundText")),
        languages: inLanguage(req),
      });
    await sendPage(res, 404, html, {
      embed: isEmbed(req),
      private: false,
      locale: speech.locale,
    });
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
    const text = answer.httpStatus === 429 ? say(speech, "errorTooManyRequests") : say(speech, "errorGeneric");
    res.set(answer.headers);
    const html = (a: Assets) => documentHtml({ speech, title: text, description: text, noindex: isBookersOwn(req), assets: a.names, embed: false, body: messageBody(text, "") });
    await sendPage(res, answer.httpStatus, html, { embed: false, private: false, locale: speech.locale });
  }

  /** Wraps a page handler: anything it throws becomes a page, and a path that is not ours goes on. */
  const page =
    (handler: (req: Request, res: Response) => Promise<void | "next">) =>
    (req: Request, res: Response, next: express.NextFunction): void => {
      handler(req, res).then(
        (r) => (r === "next" ? next() : undefined),
        (err: unknown) => failed(req, res, err).catch(next),
      );
    };

  /** One bundled file; `name` as asked for (`/favicon.ico` is one of them, at the root where browsers look). */
  async function sendAsset(name: string, res: Response, next: express.NextFunction): Promise<void> {
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

  router.get(`/${ROOT_PATHS.assets}/:file`, (req, res, next) => {
    const brand = /^brand-([0-9a-f]{6})\.css$/.exec(String(req.params.file));
    if (brand) return sendBrandStylesheet(`#${brand[1]}`, res);
    return sendAsset(String(req.params.file), res, next);
  });
  router.get("/favicon.ico", (_req, res, next) => sendAsset("favicon.ico", res, next));

  router.get(
    `/${ROOT_PATHS.booking}/:key/invite.ics`,
    page(async (req, res) => {
      const { booking } = await caller(req, res)(PublicBookingService.method.getBooking, { privateKey: String(req.params.key) });
      if (!booking) throw new Error("GetBooking answered without a booking");
      res.setHeader("Content-Type", "text/calendar; charset=utf-8");
      res.setHeader("Content-Disposition", 'attachment; filename="invite.ics"');
      res.setHeader("X-Content-Type-Options", "nosniff");
      res.setHeader("Cache-Control", "private, no-store");
      res.setHeader("Referrer-Policy", "no-referrer");
      res.send(icsOfBooking(booking, opts.appUrl()));
    }),
  );

  reminderSwitch(router, { caller, page, sendPage });

  router.get(
    `/${ROOT_PATHS.booking}/:key`,
    page(async (req, res) => {
      const call = caller(req, res);
      const { booking: b } = await call(PublicBookingService.method.getBooking, { privateKey: String(req.params.key) });
      if (!b) throw new Error("GetBooking answered without a booking");
      // Without ?locale= or Accept-Language, the language the booker booked in, else the host's.
      const speech = speechOf(pageLocale(req, localeOf(b.locale ?? b.hostLocale)), b.hostTimeFormat);
      const zone = pickZone(req, b.timezone ?? b.hostTimezone);
      const done = MANAGE_DONE.find((d) => d === req.query.done);
      const picker: PickerData | undefined = b.changeable
        ? { userUrl: b.userUrl, eventUrl: b.eventUrl, zone, month: utcToWallClock(zone, new Date()).date.slice(0, 7), today: utcToWallClock(zone, new Date()).date, startDayOfWeek: b.hostStartDayOfWeek, starts: undefined, slotMs: 0 }
        : undefined;
      const body = manageBody({ speech, booking: managedBooking(b, speech, zone, opts.appUrl()), done });
      await sendPage(
        res,
        200,
        (a) =>
          documentHtml({
            speech,
            title: `${say(speech, "manageHeading")}: ${b.eventName}`,
            description: say(speech, "descriptionManage"),
            noindex: true,
            assets: a.names,
            embed: false,
            host: {
              name: b.hostFullName,
              avatarName: avatarName(b.hostFullName),
              picture: samePath(b.hostPictureUrl),
              href: `/${encodeURIComponent(b.userUrl)}`,
              brandColor: b.hostBrandColor,
              logo: samePath(b.hostBrandLogoUrl),
            },
            body,
            data: { page: "manage", speech, privateKey: b.privateKey, picker },
            languages: inLanguage(req),
          }),
        { embed: false, private: true, locale: speech.locale },
      );
    }),
  );

  router.get(
    "/:user",
    page(async (req, res) => {
      const user = String(req.params.user);
      if (reserved.has(user.toLowerCase()) || !isPageSegment(user)) return "next";
      const embed = isEmbed(req);
      const { profile } = await caller(req, res)(PublicBookingService.method.getPublicProfile, { userUrl: user });
      if (!profile) throw new Error("GetPublicProfile answered without a profile");
      const speech = speechOf(pageLocale(req, localeOf(profile.locale)), profile.timeFormat);
      const suffix = keptQuery(req);
      const host = {
        name: profile.fullName,
        avatarName: profile.avatarName,
        picture: samePath(profile.pictureUrl),
        href: `/${encodeURIComponent(profile.url)}${suffix}`,
        brandColor: profile.brandColor,
        logo: samePath(profile.brandLogoUrl),
      };
      const body = profileBody({
        speech,
        embed,
        host,
        bio: profile.bio,
        events: profile.events.map((e) => ({
          name: e.name,
          href: `/${encodeURIComponent(profile.url)}/${encodeURIComponent(e.url)}${suffix}`,
          duration: e.slotDuration,
          description: e.description,
          location: locationText(e.locationKind, undefined, profile.fullName, speech),
          color: e.color,
        })),
      });
      const title = say(speech, "profileHeading", { host: profile.fullName });
      const description = say(speech, "descriptionProfile", { host: profile.fullName });
      await sendPage(res, 200, (a) => documentHtml({ speech, title, description, assets: a.names, embed, host: { ...host, href: undefined }, body, languages: inLanguage(req) }), {
        embed,
        private: false,
        locale: speech.locale,
      });
    }),
  );

  router.get(
    "/:user/:event",
    page(async (req, res) => {
      const user = String(req.params.user);
      const eventUrl = String(req.params.event);
      if (reserved.has(user.toLowerCase()) || !isPageSegment(user) || !isPageSegment(eventUrl)) return "next";
      const embed = isEmbed(req);
      const call = caller(req, res);
      const { event } = await call(PublicBookingService.method.getPublicEvent, { userUrl: user, eventUrl });
      if (!event) throw new Error("GetPublicEvent answered without an event");
      const speech = speechOf(pageLocale(req, localeOf(event.hostLocale)), event.hostTimeFormat);
      const zone = pickZone(req, event.hostTimezone);
      const { picker, alert } = await firstMonth(call, speech, { userUrl: user, eventUrl, zone, startDayOfWeek: event.hostStartDayOfWeek });
      const location = locationText(event.locationKind, event.locationDetails, event.hostFullName, speech);
      const questions = questionViews(event.questions, req);
      const pickerData: PickerData = {
        userUrl: user,
        eventUrl,
        zone,
        month: picker.month,
        today: picker.today,
        startDayOfWeek: event.hostStartDayOfWeek,
        starts: picker.days ? [...picker.days.values()].flat().map((x) => x.start_time) : undefined,
        slotMs: new Date(firstSlot(picker)?.end_time ?? 0).getTime() - new Date(firstSlot(picker)?.start_time ?? 0).getTime(),
      };
      const data = {
        page: "event" as const,
        speech,
        embed,
        picker: pickerData,
        hostName: event.hostFullName,
        location,
        guests: { enabled: event.enableGuestEmails, limit: event.guestEmailsLimit },
        questions: questions.map((q) => ({ id: q.id, type: q.type, required: q.required })),
      };
      const host = {
        name: event.hostFullName,
        avatarName: event.hostAvatarName,
        picture: samePath(event.hostPictureUrl),
        href: `/${encodeURIComponent(user)}${keptQuery(req)}`,
        brandColor: event.hostBrandColor,
        logo: samePath(event.hostBrandLogoUrl),
      };
      const body = eventBody({
        speech,
        event: { name: event.name, description: event.description, duration: event.slotDuration, location, hostName: event.hostFullName, color: event.color },
        host,
        picker,
        alert,
        questions,
        guests: { enabled: event.enableGuestEmails, limit: event.guestEmailsLimit },
      });
      const description = say(speech, "descriptionEvent", { event: event.name, host: event.hostFullName });
      await sendPage(res, 200, (a) => documentHtml({ speech, title: `${event.name} · ${event.hostFullName}`, description, assets: a.names, embed, host, body, data, languages: inLanguage(req) }), {
        embed,
        private: false,
        locale: speech.locale,
      });
    }),
  );

  return router;
}

type Handler = (req: Request, res: Response) => Promise<void | "next">;

/**
 * The booker's switch of reminder e-mails: POST …/unsubscribe (the List-Unsubscribe URL of every reminder to the
 * booker, RFC 8058 one-click, and the manage page's form) and …/resubscribe, and the page a GET of the unsubscribe
 * URL shows (a question with its button: a GET changes nothing, so link scanners cannot unsubscribe anyone).
 */
function reminderSwitch(
  router: Router,
  h: {
    caller: (req: Request, res: Response) => Call;
    page: (handler: Handler) => express.RequestHandler;
    sendPage: (res: Response, status: number, html: (assets: Assets) => string, o: { embed: boolean; private: boolean; locale: Locale }) => Promise<void>;
  },
): void {
  type Shown = { privateKey: string; eventName: string; hostFullName: string; hostLocale: string; hostTimeFormat: string; locale?: string };
  const sendUnsubscribePage = async (req: Request, res: Response, b: Shown, done: boolean) => {
    // The language of the booker's own page: ?locale=, the browser's, else the one they booked in, else the host's.
    const speech = speechOf(pageLocale(req, localeOf(b.locale ?? b.hostLocale)), b.hostTimeFormat);
    const title = say(speech, done ? "unsubscribedHeading" : "unsubscribeHeading");
    const body = unsubscribeBody({ speech, privateKey: b.privateKey, eventName: b.eventName, hostName: b.hostFullName, done });
    await h.sendPage(res, 200, (a) => documentHtml({ speech, title, description: title, noindex: true, assets: a.names, embed: false, body, languages: inLanguage(req) }), { embed: false, private: true, locale: speech.locale });
  };
  /*
   * Nothing is read from the body (a mail client's one-click POST sends `List-Unsubscribe=One-Click`, the forms
   * nothing): the path's private key is the whole request. The manage page's form goes back to the page; anything
   * else gets a page saying it is done.
   */
  const switchReminders = async (req: Request, res: Response, enabled: boolean) => {
    const key = String(req.params.key);
    const { booking: b } = await h.caller(req, res)(PublicBookingService.method.setBookingReminders, { privateKey: key, reminders: { enabled } });
    if (!b) throw new Error("SetBookingReminders answered without a booking");
    if (req.query.from === "manage" || enabled) {
      res.setHeader("Cache-Control", "no-store");
      const locale = isLocale(req.query.locale) ? `&locale=${req.query.locale}` : "";
      res.redirect(303, `/${ROOT_PATHS.booking}/${encodeURIComponent(key)}?done=${enabled ? "reminders_on" : "reminders_off"}${locale}`);
      return;
    }
    await sendUnsubscribePage(req, res, b, true);
  };
  router.post(`/${ROOT_PATHS.booking}/:key/unsubscribe`, h.page((req, res) => switchReminders(req, res, false)));
  router.post(`/${ROOT_PATHS.booking}/:key/resubscribe`, h.page((req, res) => switchReminders(req, res, true)));
  router.get(
    `/${ROOT_PATHS.booking}/:key/unsubscribe`,
    h.page(async (req, res) => {
      const { booking: b } = await h.caller(req, res)(PublicBookingService.method.getBooking, { privateKey: String(req.params.key) });
      if (!b) throw new Error("GetBooking answered without a booking");
      await sendUnsubscribePage(req, res, b, false);
    }),
  );
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

/** The booker's booking as its page shows it, in `zone`. */
function managedBooking(b: PublicBooking, speech: Speech, zone: string, appUrl: string): ManageView["booking"] {
  const start = new Date(b.startTime);
  const end = new Date(b.endTime);
  return {
    privateKey: b.privateKey,
    status: b.status,
    eventName: b.eventName,
    hostName: b.hostFullName,
    start,
    end,
    zone,
    location: locationText(b.locationKind, b.locationDetails, b.hostFullName, speech),
    meetingUrl: b.meetingUrl,
    meetingStatus: b.meetingStatus,
    guests: b.guestEmails,
    cancelReason: b.cancelReason,
    changeable: b.changeable,
    changeableUntil: b.changeableUntil === undefined ? undefined : new Date(b.changeableUntil),
    started: start.getTime() <= Date.now(),
    nextPrivateKey: b.nextPrivateKey,
    // The switch only where the event's reminders e-mail the booker.
    reminders: b.bookerReminders ? b.remindersEnabled : undefined,
    // The page's public address (APP_URL's): the calendar entry leads the booker back here.
    calendar: calendarEntryOf(bookerCopy(b, appUrl), b.meetingUrl, manageUrlOf(b, appUrl)),
  };
}

/** The event's questions as the form draws them. */
function questionViews(questions: PublicEvent["questions"], req: Request): QuestionView[] {
  return questions.map((q) => {
    const { options, ratingMax, preset } = questionSettings(q.questionType, q.questionDetails);
    // A hidden question carries what the link says (?question_<id>=...), else its preset value: how a host tags where visitors come from.
    const fromLink = req.query[`question_${q.id}`];
    return { id: q.id, title: q.title, type: q.questionType, required: q.required, options: options ?? [], max: ratingMax, value: typeof fromLink === "string" ? fromLink : (preset ?? "") };
  });
}

/** The first slot drawn, if any. */
function firstSlot(p: PickerState): Slot | undefined {
  return p.days ? [...p.days.values()][0]?.[0] : undefined;
}

/** The zone the server draws times in: ?timezone= when it is a real zone, else the default (the script then switches to the browser's). */
function pickZone(req: Request, fallback: string): string {
  const asked = req.query.timezone;
  return typeof asked === "string" && isIanaTimeZone(asked) ? asked : fallback;
}

/**
 * The month the event page opens on: this month, or the next when this one has no free time left; its first free
 * day picked, so the page shows times without any script. A calendar that cannot be read gives a message instead.
 */
async function firstMonth(
  call: Call,
  speech: Speech,
  where: { userUrl: string; eventUrl: string; zone: string; startDayOfWeek: number },
): Promise<{ picker: PickerState; alert: string | undefined }> {
  const today = utcToWallClock(where.zone, new Date()).date;
  const month = today.slice(0, 7);
  const picker: PickerState = { month, today, zone: where.zone, days: undefined, day: undefined, startDayOfWeek: where.startDayOfWeek };
  try {
    for (const m of [month, addMonths(month, 1)]) {
      const range = monthRange(m, today) ?? { from: today, to: addDays(today, 1) };
      const { slots } = await call(PublicBookingService.method.listSlots, { userUrl: where.userUrl, eventUrl: where.eventUrl, dateFrom: range.from, dateTo: range.to, timezone: where.zone });
      const days = slotsByDay(
        slots.map((s): Slot => ({ start_time: s.startTime, end_time: s.endTime })),
        where.zone,
      );
      picker.month = m;
      picker.days = days;
      picker.day = firstFreeDay(days);
      if (days.size > 0) break;
    }
    return { picker, alert: undefined };
  } catch (err) {
    const status = errorAnswer(err).httpStatus;
    if (status !== 503 && status !== 429) throw err;
    picker.days = new Map();
    return { picker, alert: say(speech, status === 503 ? "errorCalendar" : "errorTooManyRequests") };
  }
}
