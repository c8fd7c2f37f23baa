// Every kind of effect the outbox runs; the relay asks each of them to plan every booking change.
import type { EffectKind } from "../outbox/types.js";
import { calendarKind } from "../features/calendars/effect.js";
import { emailKind } from "../features/email/effect.js";
import { webhookKind } from "../features/webhooks/effect.js";

export const effectKinds: EffectKind[] = [calendarKind, emailKind, webhookKind];
