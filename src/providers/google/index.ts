// The Google Calendar provider (with Google Meet): connected through OAuth; calendars from the calendar list, busy times from freeBusy, bookings written as events.
import { sessionOf, type OAuthProfile } from "../shared/oauth.js";
import { ProviderError, type CalendarProvider } from "../shared/types.js";
import { googleBusy } from "./busy.js";
import { googleSettings } from "./settings.js";
import { googleCalendars, googleIdentity } from "./calendars.js";
import { deleteGoogleEvent, writeGoogleEvent } from "./events.js";

/**
 * The least scopes the features need (providers.md): the calendar list (read), free/busy, and events (write the
 * bookings, read the events of a range where our own ones must be told apart). No scope that reads settings,
 * ACLs or other people's calendars.
 */
const GOOGLE_SCOPES = [
  "https://www.googleapis.com/auth/calendar.calendarlist.readonly",
  "https://www.googleapis.com/auth/calendar.freebusy",
  "https://www.googleapis.com/auth/calendar.events",
] as const;

const googleOAuth: OAuthProfile = {
  provider: "google",
  displayName: "Google",
  purposes: ["calendar"],
  scopes: GOOGLE_SCOPES,
  sendScope: true,
  // offline: a refresh token; consent: Google sends one only on a consent it showed, so re-authorizing gets one too.
  authorizationParams: { access_type: "offline", prompt: "consent", include_granted_scopes: "true" },
  tokenAuth: "client_secret_post",
  revocationAuth: "none",
  identify: googleIdentity,
  settings: googleSettings,
};

function calendarIdOf(calendar: { url: string | null }): string {
  if (calendar.url === null) throw new ProviderError("not_found", "calendar has no id");
  return calendar.url;
}

export const googleProvider: CalendarProvider = {
  kind: "calendar",
  name: "google",
  oauth: googleOAuth,
  makesMeetingLinks: true,
  movesEvents: true,

  listCalendars: ({ access, signal }) => googleCalendars(sessionOf(access, "google", "connection"), signal),

  async readBusy({ access, calendar, range, busy, signal }) {
    // freeBusy has no cheap change check: every read is a whole one.
    return { unchanged: false, version: null, periods: await googleBusy(sessionOf(access, "google", "connection"), calendarIdOf(calendar), range, busy, signal) };
  },

  writeEvent: ({ access, calendar, event, ref, signal }) => writeGoogleEvent(sessionOf(access, "google", "connection"), calendarIdOf(calendar), event, ref, signal),

  deleteEvent: ({ access, calendar, ref, signal }) => deleteGoogleEvent(sessionOf(access, "google", "connection"), calendarIdOf(calendar), ref, signal),
};
