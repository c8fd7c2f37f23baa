// The event's page (GET /<user>/<event>): the event, its first month of free times drawn without script, and the booking form.
import type { Request } from "express";
import { PublicBookingService, type PublicEvent, type Slot as PublicSlot } from "../../../../gen/scheduling/v1/public_booking_pb.js";
import { PublicTeamBookingService } from "../../../../gen/scheduling/v1/public_team_pb.js";
import { questionSettings } from "../../../domain/questions.js";
import { addDays, utcToWallClock } from "../../../domain/timezones.js";
import { localeOf } from "../../../i18n/index.js";
import { errorAnswer } from "../../../platform/rest/errors.js";
import { documentHtml, eventBody, speechOf, type QuestionView } from "../pages.js";
import { inLanguage, isBookersOwn, isEmbed, isPageSegment, keptQuery, pageLocale, pickZone, samePath } from "../request.js";
import { sendPage, type PageHandler } from "../respond.js";
import { teamApiBase, teamPagePath } from "./team.js";
import { seatsLeftOf, startRuns, type EventPageData, type PickerData } from "../shared/data.js";
import { addMonths, firstFreeDay, locationText, monthRange, say, slotsByDay, type PickerState, type Slot, type Speech } from "../shared/view.js";

/** Where an event page's event comes from: its urls (/<user>/<event>) or a single-use link's token (/d/<token>). */
interface EventSource {
  event: PublicEvent;
  /** The public API path the script reads slots under and books at (`<apiBase>/slots`, `<apiBase>/bookings`). */
  apiBase: string;
  /** The host's profile path, or undefined (a link's page does not lead to the profile). */
  profile: string | undefined;
  slots(asked: { dateFrom: string; dateTo: string; timezone: string; duration: number | undefined }): Promise<PublicSlot[]>;
}

export const eventPage: PageHandler = async (req, res, { call, now }) => {
  const user = String(req.params.user);
  const eventUrl = String(req.params.event);
  if (!isPageSegment(user, true) || !isPageSegment(eventUrl)) return "next";
  const { event } = await call(PublicBookingService.method.getPublicEvent, { userUrl: user, eventUrl });
  if (!event) throw new Error("GetPublicEvent answered without an event");
  await showEventPage(req, res, {
    event,
    apiBase: `/public/users/${encodeURIComponent(user)}/events/${encodeURIComponent(eventUrl)}`,
    profile: `/${encodeURIComponent(user)}${keptQuery(req)}`,
    slots: async (asked) => (await call(PublicBookingService.method.listSlots, { userUrl: user, eventUrl, ...asked })).slots,
  }, now);
};

/** A team event's page (GET /team/<team>/<event>, teams.md): the event's page, its slots and bookings the team's (any host or every host). */
export const teamEventPage: PageHandler = async (req, res, { call, now }) => {
  const team = String(req.params.team);
  const eventUrl = String(req.params.event);
  if (!isPageSegment(team) || !isPageSegment(eventUrl)) return "next";
  const { event } = await call(PublicTeamBookingService.method.getPublicTeamEvent, { teamUrl: team, eventUrl });
  if (!event) throw new Error("GetPublicTeamEvent answered without an event");
  await showEventPage(req, res, {
    event,
    apiBase: teamApiBase(team, eventUrl),
    profile: `${teamPagePath(team)}${keptQuery(req)}`,
    slots: async (asked) => (await call(PublicTeamBookingService.method.listTeamSlots, { teamUrl: team, eventUrl, ...asked })).slots,
  }, now);
};

/** A single-use link's page (GET /d/<token>): the event's page, booking through the link; 410 once it is used, revoked or expired. */
export const linkPage: PageHandler = async (req, res, { call, now }) => {
  const token = String(req.params.token);
  const { event } = await call(PublicBookingService.method.getLinkEvent, { token });
  if (!event) throw new Error("GetLinkEvent answered without an event");
  await showEventPage(req, res, {
    event,
    apiBase: `/public/links/${encodeURIComponent(token)}`,
    profile: undefined,
    slots: async (asked) => (await call(PublicBookingService.method.listLinkSlots, { token, ...asked })).slots,
  }, now);
};

async function showEventPage(req: Request, res: Parameters<PageHandler>[1], source: EventSource, now: Date): Promise<void> {
  const { event } = source;
  const embed = isEmbed(req);
  const speech = speechOf(pageLocale(req, localeOf(event.hostLocale)), event.hostTimeFormat);
  const zone = pickZone(req, event.hostTimezone);
  const duration = chosenLength(req, event.durations);
  const { picker, alert } = await firstMonth(source, speech, { zone, startDayOfWeek: event.hostStartDayOfWeek, duration }, now);
  const location = locationText(event.locationKind, event.locationDetails, event.hostFullName, speech);
  const questions = questionViews(event.questions, req);
  const guests = { enabled: event.enableGuestEmails, limit: event.guestEmailsLimit };
  const data: EventPageData = {
    page: "event",
    speech,
    embed,
    picker: pickerData(picker, { apiBase: source.apiBase, startDayOfWeek: event.hostStartDayOfWeek, duration }),
    hostName: event.hostFullName,
    location,
    guests,
    questions: questions.map((q) => ({ id: q.id, type: q.type, required: q.required })),
  };
  const host = {
    name: event.hostFullName,
    avatarName: event.hostAvatarName,
    picture: samePath(event.hostPictureUrl),
    href: source.profile,
    brandColor: event.hostBrandColor,
    logo: samePath(event.hostBrandLogoUrl),
  };
  const body = eventBody({
    speech,
    event: { name: event.name, description: event.description, duration: event.slotDuration, location, hostName: event.hostFullName, color: event.color },
    lengths: event.durations.length > 1 ? event.durations.map((minutes) => ({ minutes, href: lengthHref(req, minutes), chosen: minutes === (duration ?? event.durations[0]) })) : undefined,
    host,
    picker,
    alert,
    questions,
    guests,
  });
  const description = say(speech, "descriptionEvent", { event: event.name, host: event.hostFullName });
  await sendPage(res, 200, (a) => documentHtml({ speech, title: `${event.name} · ${event.hostFullName}`, description, noindex: isBookersOwn(req), assets: a.names, embed, host, body, data, languages: inLanguage(req) }), {
    embed,
    // A link's page is its holder's, and changes once the link is used.
    private: isBookersOwn(req),
    locale: speech.locale,
  });
}

/** The length the visitor chose by link (?duration=<minutes>) when it is one of the event's, else none (the first). */
function chosenLength(req: Request, durations: readonly number[]): number | undefined {
  const asked = Number(typeof req.query.duration === "string" ? req.query.duration : NaN);
  return durations.length > 1 && durations.includes(asked) ? asked : undefined;
}

/** This page for another length, keeping what the visitor's link says besides (embedding, language, zone). */
function lengthHref(req: Request, minutes: number): string {
  const query = new URLSearchParams(keptQuery(req));
  const zone = req.query.timezone;
  if (typeof zone === "string" && zone !== "") query.set("timezone", zone);
  query.set("duration", String(minutes));
  return `?${query}`;
}

/** What the script's picker starts from: the month drawn, its free times, the length of a time and the length chosen. */
function pickerData(picker: PickerState, where: { apiBase: string; startDayOfWeek: number; duration: number | undefined }): PickerData {
  const first = firstSlot(picker);
  const seats = picker.days ? seatsLeftOf([...picker.days.values()].flat()) : undefined;
  return {
    apiBase: where.apiBase,
    zone: picker.zone,
    month: picker.month,
    today: picker.today,
    startDayOfWeek: where.startDayOfWeek,
    startRuns: picker.days ? startRuns([...picker.days.values()].flat().map((x) => x.start_time)) : undefined,
    slotMs: new Date(first?.end_time ?? 0).getTime() - new Date(first?.start_time ?? 0).getTime(),
    ...(where.duration === undefined ? {} : { duration: where.duration }),
    ...(seats ? { seats } : {}),
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
  source: EventSource,
  speech: Speech,
  where: { zone: string; startDayOfWeek: number; duration: number | undefined },
  now: Date,
): Promise<{ picker: PickerState; alert: string | undefined }> {
  const today = utcToWallClock(where.zone, now).date;
  const month = today.slice(0, 7);
  const picker: PickerState = { month, today, zone: where.zone, days: undefined, day: undefined, startDayOfWeek: where.startDayOfWeek };
  try {
    for (const m of [month, addMonths(month, 1)]) {
      const range = monthRange(m, today) ?? { from: today, to: addDays(today, 1) };
      const slots = await source.slots({ dateFrom: range.from, dateTo: range.to, timezone: where.zone, duration: where.duration });
      const days = slotsByDay(
        slots.map((s): Slot => ({ start_time: s.startTime, end_time: s.endTime, ...(s.seatsLeft === undefined ? {} : { seats_left: s.seatsLeft }) })),
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
