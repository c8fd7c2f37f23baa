// What each purpose of an OAuth authorization makes once the person confirmed (providers.md): `calendar` a calendar connection; `conference` the video-meeting integration.
import { calendarPurpose } from "../features/calendars/index.js";
import { conferencePurpose } from "../features/meetings/index.js";
import type { PurposeHandlers } from "../features/oauth/index.js";
import type { Deps } from "./deps.js";

export function purposeHandlers(deps: Deps): PurposeHandlers {
  return { calendar: calendarPurpose(deps.calendars), conference: conferencePurpose({ secrets: deps.secrets, oauth: deps.oauth, wake: deps.wake, clock: deps.clock }) };
}
