// The event's page (GET /<user>/<event>): the event, its first month of free times drawn without script, and the booking form.
import type { Request } from "express";
import { PublicBookingService, type PublicEvent } from "../../../../gen/scheduling/v1/public_booking_pb.js";
import { questionSettings } from "../../../domain/questions.js";
import { addDays, utcToWallClock } from "../../../domain/timezones.js";
import { localeOf } from "../../../i18n/index.js";
import { errorAnswer } from "../../../platform/rest/errors.js";
import type { RpcCall } from "../../../platform/rest/table.js";
import { documentHtml, eventBody, speechOf, type QuestionView } from "../pages.js";
import { inLanguage, isEmbed, isPageSegment, keptQuery, pageLocale, pickZone, samePath } from "../request.js";
import { sendPage, type PageHandler } from "../respond.js";
import type { EventPageData, PickerData } from "../shared/data.js";
import { addMonths, firstFreeDay, locationText, monthRange, say, slotsByDay, type PickerState, type Slot, type Speech } from "../shared/view.js";

export const eventPage: PageHandler = async (req, res, { call }) => {
  const user = String(req.params.user);
  const eventUrl = String(req.params.event);
  if (!isPageSegment(user, true) || !isPageSegment(eventUrl)) return "next";
  const embed = isEmbed(req);
  const { event } = await call(PublicBookingService.method.getPublicEvent, { userUrl: user, eventUrl });
  if (!event) throw new Error("GetPublicEvent answered without an event");
  const speech = speechOf(pageLocale(req, localeOf(event.hostLocale)), event.hostTimeFormat);
  const zone = pickZone(req, event.hostTimezone);
  const { picker, alert } = await firstMonth(call, speech, { userUrl: user, eventUrl, zone, startDayOfWeek: event.hostStartDayOfWeek });
  const location = locationText(event.locationKind, event.locationDetails, event.hostFullName, speech);
  const questions = questionViews(event.questions, req);
  const guests = { enabled: event.enableGuestEmails, limit: event.guestEmailsLimit };
  const data: EventPageData = {
    page: "event",
    speech,
    embed,
    picker: pickerData(picker, { userUrl: user, eventUrl, startDayOfWeek: event.hostStartDayOfWeek }),
    hostName: event.hostFullName,
    location,
    guests,
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
    guests,
  });
  const description = say(speech, "descriptionEvent", { event: event.name, host: event.hostFullName });
  await sendPage(res, 200, (a) => documentHtml({ speech, title: `${event.name} · ${event.hostFullName}`, description, assets: a.names, embed, host, body, data, languages: inLanguage(req) }), {
    embed,
    private: false,
    locale: speech.locale,
  });
};

/** What the script's picker starts from: the month drawn, its free times, and the length of a time. */
function pickerData(picker: PickerState, where: { userUrl: string; eventUrl: string; startDayOfWeek: number }): PickerData {
  const first = firstSlot(picker);
  return {
    userUrl: where.userUrl,
    eventUrl: where.eventUrl,
    zone: picker.zone,
    month: picker.month,
    today: picker.today,
    startDayOfWeek: where.startDayOfWeek,
    starts: picker.days ? [...picker.days.values()].flat().map((x) => x.start_time) : undefined,
    slotMs: new Date(first?.end_time ?? 0).getTime() - new Date(first?.start_time ?? 0).getTime(),
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

/**
 * The month the event page opens on: this month, or the next when this one has no free time left; its first free
 * day picked, so the page shows times without any script. A calendar that cannot be read gives a message instead.
 */
async function firstMonth(
  call: RpcCall,
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
