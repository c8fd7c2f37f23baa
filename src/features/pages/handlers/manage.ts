// The booker's page (GET /booking/<key>): their booking, its links, and the picker to move it while it may change.
import { PublicBookingService, type PublicBooking } from "../../../../gen/scheduling/v1/public_booking_pb.js";
import { calendarEntryOf } from "../../../domain/calendarLinks.js";
import { avatarName } from "../../../domain/format.js";
import { utcToWallClock } from "../../../domain/timezones.js";
import { localeOf } from "../../../i18n/index.js";
import { bookerCopy, manageUrlOf } from "../ics.js";
import { documentHtml, MANAGE_DONE, manageBody, speechOf, type ManageView } from "../pages.js";
import { inLanguage, pageLocale, pickZone, samePath } from "../request.js";
import { sendPage, type PageHandler } from "../respond.js";
import type { PickerData } from "../shared/data.js";
import { teamApiBase, teamPagePath } from "./team.js";
import { locationText, say, type Speech } from "../shared/view.js";

export const managePage: PageHandler = async (req, res, { call, appUrl, now }) => {
  const { booking: b } = await call(PublicBookingService.method.getBooking, { privateKey: String(req.params.key) });
  if (!b) throw new Error("GetBooking answered without a booking");
  // Without ?locale= or Accept-Language, the language the booker booked in, else the host's.
  const speech = speechOf(pageLocale(req, localeOf(b.locale ?? b.hostLocale)), b.hostTimeFormat);
  const zone = pickZone(req, b.timezone ?? b.hostTimezone);
  const done = MANAGE_DONE.find((d) => d === req.query.done);
  // A team booking moves among its team event's times (teams.md), which the booking's key narrows to its host when the event keeps hosts.
  const team = b.team;
  const picker: PickerData | undefined = b.changeable
    ? {
        apiBase: team ? teamApiBase(team.url, b.eventUrl) : `/public/users/${encodeURIComponent(b.userUrl)}/events/${encodeURIComponent(b.eventUrl)}`,
        ...(team ? { privateKey: b.privateKey } : {}),
        zone,
        month: utcToWallClock(zone, now).date.slice(0, 7),
        today: utcToWallClock(zone, now).date,
        startDayOfWeek: b.hostStartDayOfWeek,
        startRuns: undefined,
        slotMs: 0,
        duration: b.durationMinutes,
      }
    : undefined;
  const body = manageBody({ speech, booking: managedBooking(b, speech, zone, appUrl, now), done });
  const host = team
    ? { name: team.name, avatarName: avatarName(team.name), picture: undefined, href: teamPagePath(team.url) }
    : {
        name: b.hostFullName,
        avatarName: avatarName(b.hostFullName),
        picture: samePath(b.hostPictureUrl),
        href: `/${encodeURIComponent(b.userUrl)}`,
        brandColor: b.hostBrandColor,
        logo: samePath(b.hostBrandLogoUrl),
      };
  const title = `${say(speech, "manageHeading")}: ${b.eventName}`;
  const data = { page: "manage" as const, speech, privateKey: b.privateKey, picker };
  await sendPage(
    res,
    200,
    (a) => documentHtml({ speech, title, description: say(speech, "descriptionManage"), noindex: true, assets: a.names, embed: false, host, body, data, languages: inLanguage(req) }),
    { embed: false, private: true, locale: speech.locale },
  );
};

/** The booker's booking as its page shows it, in `zone`. */
function managedBooking(b: PublicBooking, speech: Speech, zone: string, appUrl: string, now: Date): ManageView["booking"] {
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
    otherAttendees: b.otherAttendeeNames,
    cancelReason: b.cancelReason,
    changeable: b.changeable,
    changeableUntil: b.changeableUntil === undefined ? undefined : new Date(b.changeableUntil),
    started: start.getTime() <= now.getTime(),
    nextPrivateKey: b.nextPrivateKey,
    // The switch only where the event's reminders e-mail the booker.
    reminders: b.bookerReminders ? b.remindersEnabled : undefined,
    // The page's public address (APP_URL's): the calendar entry leads the booker back here.
    calendar: calendarEntryOf(bookerCopy(b, appUrl), b.meetingUrl, manageUrlOf(b, appUrl)),
  };
}
