// What each purpose of an OAuth authorization makes (providers.md): `calendar` a calendar connection; `conference` the video-meeting integration.
import { connectAuthorizedCalendar } from "../features/calendars/index.js";
import { connectAuthorizedConference } from "../features/meetings/index.js";
import type { PurposeHandlers } from "../features/oauth/index.js";
import type { Deps } from "./deps.js";

export function purposeHandlers(deps: Deps): PurposeHandlers {
  return { calendar: connectAuthorizedCalendar(deps.calendars), conference: connectAuthorizedConference({ secrets: deps.secrets, oauth: deps.oauth }) };
}
