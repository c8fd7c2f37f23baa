// Webhook rules (pure): the event types, what a webhook's events and URL may be, the retry schedule of the spec.
import { invalid, notAllowed } from "./errors.js";
import type { BookingChangeType } from "./owed.js";

/** The message of a calendar connection whose status or warnings changed (features/notices/record.ts). */
export const CONNECTION_CHANGED = "calendar.connection_changed";

/**
 * The booking events, a calendar connection's changes, and booking.reminder: a reminder of the event with the webhook
 * channel fell due (src/domain/reminder.ts).
 */
export const WEBHOOK_EVENTS = ["booking.created", "booking.rescheduled", "booking.canceled", CONNECTION_CHANGED, "booking.reminder", "booking.requested", "booking.declined", "booking.no_show"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A limit the spec does not set: enough for any integration setup, small enough that one booking cannot fan out without bound. */
export const WEBHOOKS_PER_ACCOUNT = 20;
const URL_MAX_LENGTH = 2048;

export function eventTypeOf(change: BookingChangeType): `booking.${BookingChangeType}` {
  return `booking.${change}`;
}

/** A non-empty subset of WEBHOOK_EVENTS, each once, in the order given. */
export function checkWebhookEvents(values: readonly unknown[]): WebhookEvent[] {
  const events: WebhookEvent[] = [];
  for (const v of values) {
    if (typeof v !== "string" || !(WEBHOOK_EVENTS as readonly string[]).includes(v)) {
      throw notAllowed("events", WEBHOOK_EVENTS, `events must be a non-empty list of ${WEBHOOK_EVENTS.join(", ")}`, v);
    }
    if (!events.includes(v as WebhookEvent)) events.push(v as WebhookEvent);
  }
  if (events.length === 0) throw notAllowed("events", WEBHOOK_EVENTS, `events must be a non-empty list of ${WEBHOOK_EVENTS.join(", ")}`);
  return events;
}

/** The form of a webhook URL before its address is checked: trimmed, http(s), not too long, no credentials in it. */
export function checkWebhookUrlForm(raw: string): string {
  const url = raw.trim();
  if (url.length > URL_MAX_LENGTH) throw invalid(`url must be at most ${URL_MAX_LENGTH} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid("url must be an http or https URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw invalid("url must be an http or https URL");
  // user:pass@ would be sent as Basic auth by some clients and shown back in every list: refuse it.
  if (parsed.username !== "" || parsed.password !== "") throw invalid("url must not contain a user name or password");
  return url;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Spec: retries at least 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 24 h after the first try. */
export const WEBHOOK_RETRY_OFFSETS_MS: readonly number[] = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 24 * HOUR];

/**
 * The same schedule as waits between tries (what the outbox takes): each retry waits the difference to the next
 * offset. Waits only grow by jitter and by the time each try takes, so every retry is at least its offset after the first.
 */
export const WEBHOOK_RETRY_DELAYS_MS: readonly number[] = WEBHOOK_RETRY_OFFSETS_MS.map((t, i) => t - (i === 0 ? 0 : WEBHOOK_RETRY_OFFSETS_MS[i - 1]));
