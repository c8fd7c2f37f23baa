// The host's answer page of a request (GET /booking/<key>/answer/<token>, the link of the host's request e-mail) and its two forms' POST: confirm, or decline with a reason.
import { toJson } from "@bufbuild/protobuf";
import { ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
import { PublicBookingService, type RequestForHost } from "../../../../gen/scheduling/v1/public_booking_pb.js";
import { answerPath } from "../../../domain/answerLink.js";
import { answerProblem, NOT_PENDING } from "../../../domain/booking.js";
import { localeOf } from "../../../i18n/index.js";
import { errorAnswer } from "../../../platform/rest/errors.js";
import { readForm } from "../../../platform/rest/form.js";
import { ANSWER_DONE, answerBody, documentHtml, speechOf } from "../pages.js";
import { inLanguage, isLocale, pageLocale, pickZone } from "../request.js";
import { sendPage, type PageHandler } from "../respond.js";
import { locationText, say, type Speech } from "../shared/view.js";

/** The decline form: the answer and a reason of at most 500 characters, each up to 4 bytes and percent-encoded. */
const FORM_MAX_BYTES = 8192;

/** An answer's value as the page writes it: yes or no, a list's items, a number, the text. */
function answerText(value: Value | undefined, s: Speech): string {
  const json = value === undefined ? null : toJson(ValueSchema, value);
  if (typeof json === "boolean") return say(s, json ? "answerYes" : "answerNo");
  if (Array.isArray(json)) return json.map(String).join(", ");
  return json === null ? "" : typeof json === "object" ? JSON.stringify(json) : String(json);
}

/** GET: the request and, while it is pending, its two forms. A GET changes nothing: a mail's link scanner answers nothing. */
export const answerPage: PageHandler = async (req, res, { call, now }) => {
  const key = String(req.params.key);
  const token = String(req.params.token);
  const { request } = await call(PublicBookingService.method.getRequestForHost, { privateKey: key, token });
  if (!request?.booking) throw new Error("GetRequestForHost answered without a booking");
  const b = request.booking;
  // The host's page: ?locale=, the browser's language, else the host's own; times in the host's zone.
  const speech = speechOf(pageLocale(req, localeOf(b.hostLocale)), b.hostTimeFormat);
  const zone = pickZone(req, b.hostTimezone);
  const done = ANSWER_DONE.find((d) => d === req.query.done);
  const body = answerBody({ speech, request: answerView(request, speech, zone, now), action: `${answerPath(key, token)}?locale=${speech.locale}`, done });
  const title = `${say(speech, "answerHeading")}: ${b.eventName}`;
  await sendPage(
    res,
    200,
    (a) => documentHtml({ speech, title, description: say(speech, "descriptionAnswer"), noindex: true, assets: a.names, embed: false, body, languages: inLanguage(req) }),
    { embed: false, private: true, locale: speech.locale },
  );
};

function answerView(r: RequestForHost, speech: Speech, zone: string, now: Date) {
  const b = r.booking!;
  const answerBy = r.answerBy === undefined ? undefined : new Date(r.answerBy);
  return {
    status: b.status,
    eventName: b.eventName,
    attendeeName: b.attendeeName,
    attendeeEmail: b.attendeeEmail,
    start: new Date(b.startTime),
    end: new Date(b.endTime),
    zone,
    location: locationText(b.locationKind, b.locationDetails, b.hostFullName, speech),
    guests: b.guestEmails,
    answers: r.answers.map((a) => ({ question: a.question ?? "", text: answerText(a.value, speech) })).filter((a) => a.question !== "" && a.text !== ""),
    answerBy,
    cancelReason: b.cancelReason,
    // As the answer itself decides: a request past its time is answered no more, though its expiry may still be on its way.
    answerable: answerProblem({ status: b.status, expiresAt: answerBy }, now) === undefined,
  };
}

/**
 * POST: the host's answer, through PublicBookingService.AnswerRequest (the API's confirm and decline flow), then 303
 * back to the page, which says what was done. A request answered meanwhile (or expired) is no error
 * of the host's: the page says it is not pending and shows what became of it.
 */
export const answerPost: PageHandler = async (req, res, { call }) => {
  const key = String(req.params.key);
  const token = String(req.params.token);
  const form = await readForm(req, FORM_MAX_BYTES);
  const answer = form?.get("answer") ?? "";
  const reason = form?.get("reason") ?? "";
  let done: (typeof ANSWER_DONE)[number];
  try {
    await call(PublicBookingService.method.answerRequest, { privateKey: key, token, answer, reason: reason === "" ? undefined : reason });
    done = answer === "confirm" ? "confirmed" : "declined";
  } catch (err) {
    const refused = errorAnswer(err);
    if (refused.httpStatus !== 422 || refused.message !== NOT_PENDING) throw err;
    done = "not_pending";
  }
  const locale = isLocale(req.query.locale) ? `&locale=${req.query.locale}` : "";
  res.setHeader("Cache-Control", "no-store");
  res.redirect(303, `${answerPath(key, token)}?done=${done}${locale}`);
};
