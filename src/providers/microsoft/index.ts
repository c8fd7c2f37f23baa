// The Microsoft 365 provider (Outlook calendars, with Microsoft Teams meetings): connected through the Microsoft identity platform; calendars, busy times and bookings through Microsoft Graph.
import { sessionOf, type OAuthProfile } from "../shared/oauth.js";
import type { CalendarProvider } from "../shared/types.js";
import { deleteEvent, readAccount, readBusy, readCalendars, writeEvent } from "./calendar.js";
import { GraphClient } from "./graph.js";
import { microsoftSettings } from "./settings.js";

/**
 * The least delegated permissions the features need (providers.md): read and write the user's calendars (list them,
 * read busy times, write bookings with their Teams meetings), read the user's profile (whose account it is), and
 * offline_access (a refresh token, so the connection outlives the hour). No application permission, nothing of
 * other people's mailboxes, no OnlineMeetings permission: Outlook makes the Teams meeting of an event itself.
 */
const MICROSOFT_SCOPES = ["Calendars.ReadWrite", "User.Read", "offline_access"] as const;

export const microsoftOAuth: OAuthProfile = {
  provider: "microsoft",
  displayName: "Microsoft",
  purposes: ["calendar"],
  scopes: MICROSOFT_SCOPES,
  sendScope: true,
  // The account picker every time: a host with a work and a personal account chooses which one to connect.
  authorizationParams: { response_mode: "query", prompt: "select_account" },
  refreshParams: { scope: MICROSOFT_SCOPES.join(" ") },
  // Confidential web apps authenticate with the secret in the body, as Microsoft's examples do.
  tokenAuth: "client_secret_post",
  // The identity platform has no token revocation endpoint (a user or admin revokes in their account or Entra ID):
  // disconnecting forgets the tokens, which is all it can do.
  revocationAuth: "none",
  identify: (session, signal) => readAccount(new GraphClient(session, signal)),
  settings: microsoftSettings,
};

/** Why a calendar_meet booking of a calendar without Teams has no link (its `meeting_error`). */
const NO_TEAMS = "this Microsoft calendar offers no Teams meetings (a personal account, or Teams meetings not allowed in Outlook)";

export const microsoftProvider: CalendarProvider = {
  kind: "calendar",
  name: "microsoft",
  oauth: microsoftOAuth,
  makesMeetingLinks: true,
  // PATCH moves the event in place, keeping its id and its Teams meeting: a reschedule moves, never remakes.
  movesEvents: true,

  listCalendars: ({ access, signal }) => readCalendars(new GraphClient(sessionOf(access, "microsoft", "connection"), signal)),

  async readBusy({ access, calendar, range, busy, signal }) {
    // calendarView has no cheap change check the service could use: every read is a whole one.
    return { unchanged: false, version: null, periods: await readBusy(new GraphClient(sessionOf(access, "microsoft", "connection"), signal), calendar, range, busy) };
  },

  async writeEvent({ access, calendar, event, ref, signal }) {
    const written = await writeEvent(new GraphClient(sessionOf(access, "microsoft", "connection"), signal), calendar, event, { teamsMeeting: event.meeting !== undefined }, ref.id);
    if (event.meeting === undefined) return { id: written.id };
    if (written.noMeeting) return { id: written.id, meetingUrl: null, meetingError: NO_TEAMS };
    // No link yet but an online meeting: Outlook is still making it, and the next write reads it again.
    return { id: written.id, meetingUrl: written.joinUrl };
  },

  async deleteEvent({ access, ref, signal }) {
    await deleteEvent(new GraphClient(sessionOf(access, "microsoft", "connection"), signal), ref.id);
  },
};
