// Every kind of effect the outbox runs; the relay asks each of them to plan every booking change.
import type { EffectKind } from "../types.js";
import { calendarKind } from "./calendar.js";
import { emailKind } from "./email.js";
import { webhookKind } from "./webhook.js";

export const effectKinds: EffectKind[] = [calendarKind, emailKind, webhookKind];
