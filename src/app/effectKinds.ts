// Every kind of effect the outbox runs; the relay asks each of them to plan every booking change.
import type { EffectKind } from "../outbox/types.js";
import { createCalendarKind } from "../features/calendars/effect.js";
import { createEmailKind } from "../features/email/effect.js";
import { createHostNoticeKind } from "../features/notices/index.js";
import { createWebhookKind } from "../features/webhooks/effect.js";
import { createMeetingKind } from "../features/meetings/index.js";
import { createReminderKinds } from "../features/reminders/index.js";
import { createRequestExpiryKind } from "../features/bookings/index.js";
import type { Deps } from "./deps.js";

export function effectKindsOf(deps: Deps): EffectKind[] {
  return [
    createMeetingKind({ secrets: deps.secrets, oauth: deps.oauth, wake: deps.wake, clock: deps.clock }),
    createCalendarKind({ reader: deps.calendars, meetingWaitMs: deps.meetingWaitMs, appUrl: deps.appUrl }),
    createEmailKind(deps),
    createWebhookKind(deps),
    ...createReminderKinds(deps),
    createHostNoticeKind(deps),
    createRequestExpiryKind({ wake: deps.wake, clock: deps.clock }),
  ];
}
