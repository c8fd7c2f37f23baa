// Event rules (extensions.md "Event rules"): the checks of buffer, notice, window, schedule, limits and cancel notice, and what they make of an event's hours and its bookings.
import {
  BOOKING_WINDOW_MAX_DAYS,
  BOOKING_WINDOW_MIN_DAYS,
  MINIMUM_NOTICE_MAX_MINUTES,
  type Availability,
  type Hours,
} from "./availability.js";
import { changeProblem, type BookingTimes } from "./booking.js";
import { ApiError, blank, invalid, notAllowed, notInList, REASONS, refusal, tooLong } from "./errors.js";
import { Code } from "@connectrpc/connect";
import { PADDING_DURATION_NAMES, PADDING_DURATIONS } from "./event.js";
import type { BookingLimits, RefusalReason } from "./slots.js";
import { charLength } from "./user.js";

/**
 * The whole numbers each nullable rule takes, as [min, max]: the checks below and the OpenAPI document read them.
 * Limits are bookings per day / week; the cancel notice runs up to 30 days, notice and window as in Availability.
 */
export const RULE_RANGES = {
  minimum_notice_minutes: [0, MINIMUM_NOTICE_MAX_MINUTES],
  booking_window_days: [BOOKING_WINDOW_MIN_DAYS, BOOKING_WINDOW_MAX_DAYS],
  daily_limit: [1, 1000],
  weekly_limit: [1, 1000],
  cancel_notice_minutes: [0, 43_200],
  seats_per_slot: [2, 1000],
} as const satisfies Record<string, readonly [number, number]>;

/** What a host may send of the rules (every one optional; null, where a field takes it, clears it). JSON values as sent. */
export interface EventRulesInput {
  bufferBefore?: string;
  minimumNoticeMinutes?: unknown;
  bookingWindowDays?: unknown;
  scheduleId?: unknown;
  dailyLimit?: unknown;
  weeklyLimit?: unknown;
  cancelNoticeMinutes?: unknown;
  seatsPerSlot?: unknown;
  showAttendeesToAttendees?: boolean;
  requiresConfirmation?: boolean;
  confirmationHours?: number;
}

/** The rules as the events collection stores them: null means the account's setting (notice, window, hours) or none. */
export interface StoredEventRules {
  buffer_before_minutes: number;
  minimum_notice_minutes: number | null;
  booking_window_days: number | null;
  schedule_id: string | null;
  daily_limit: number | null;
  weekly_limit: number | null;
  cancel_notice_minutes: number | null;
  /** Seats of a slot (booking-kinds.md "Seats"), or null: one booking takes the slot. */
  seats_per_slot: number | null;
  show_attendees_to_attendees: boolean;
  /** Bookings are requests until the host answers (booking-kinds.md "Bookings that wait for the host"). */
  requires_confirmation: boolean;
  /** An unanswered request expires this many hours after it was made (or at its start if sooner). */
  confirmation_hours: number;
}

/** The hours an unanswered request may wait, as [min, max]. */
const CONFIRMATION_HOURS = [1, 168] as const;

export const EVENT_RULE_DEFAULTS: Readonly<StoredEventRules> = Object.freeze({
  buffer_before_minutes: 0,
  minimum_notice_minutes: null,
  booking_window_days: null,
  schedule_id: null,
  daily_limit: null,
  weekly_limit: null,
  cancel_notice_minutes: null,
  seats_per_slot: null,
  show_attendees_to_attendees: false,
  requires_confirmation: false,
  confirmation_hours: 24,
});

/** The rules of a stored event; events written before the rules existed have none of the fields. */
export function storedRules(doc: { [K in keyof StoredEventRules]?: StoredEventRules[K] | null | undefined }): StoredEventRules {
  const rules: Record<string, unknown> = { ...EVENT_RULE_DEFAULTS };
  for (const k of Object.keys(rules) as (keyof StoredEventRules)[]) rules[k] = doc[k] ?? EVENT_RULE_DEFAULTS[k];
  return rules as unknown as StoredEventRules;
}

/** A whole number in the field's range (RULE_RANGES), or null; anything else is 422 naming the field and its range. */
function wholeOrNull(field: keyof typeof RULE_RANGES, value: unknown): number | null {
  const [min, max] = RULE_RANGES[field];
  if (value === null) return null;
  if (typeof value === "number" && Number.isInteger(value) && value >= min && value <= max) return value;
  throw invalid(`${field} must be a whole number from ${min} to ${max}, or null`);
}

/**
 * Checks the sent rules; `scheduleIds` are the account's schedules (asked for only when a schedule id is sent). A
 * schedule id that is not one of them is 422 listing them.
 */
export function checkEventRules(input: EventRulesInput, scheduleIds: readonly string[] = []): Partial<StoredEventRules> {
  const out: Partial<StoredEventRules> = {};
  if (input.bufferBefore !== undefined) {
    if (!Object.hasOwn(PADDING_DURATIONS, input.bufferBefore)) notInList("buffer_before", PADDING_DURATION_NAMES, input.bufferBefore);
    out.buffer_before_minutes = PADDING_DURATIONS[input.bufferBefore];
  }
  if (input.minimumNoticeMinutes !== undefined) out.minimum_notice_minutes = wholeOrNull("minimum_notice_minutes", input.minimumNoticeMinutes);
  if (input.bookingWindowDays !== undefined) out.booking_window_days = wholeOrNull("booking_window_days", input.bookingWindowDays);
  if (input.dailyLimit !== undefined) out.daily_limit = wholeOrNull("daily_limit", input.dailyLimit);
  if (input.weeklyLimit !== undefined) out.weekly_limit = wholeOrNull("weekly_limit", input.weeklyLimit);
  if (input.cancelNoticeMinutes !== undefined) out.cancel_notice_minutes = wholeOrNull("cancel_notice_minutes", input.cancelNoticeMinutes);
  if (input.seatsPerSlot !== undefined) out.seats_per_slot = wholeOrNull("seats_per_slot", input.seatsPerSlot);
  if (input.showAttendeesToAttendees !== undefined) out.show_attendees_to_attendees = input.showAttendeesToAttendees;
  if (input.requiresConfirmation !== undefined) out.requires_confirmation = input.requiresConfirmation;
  if (input.confirmationHours !== undefined) {
    const [min, max] = CONFIRMATION_HOURS;
    const hours = input.confirmationHours;
    if (!Number.isInteger(hours) || hours < min || hours > max) throw invalid(`confirmation_hours must be a whole number from ${min} to ${max}`);
    out.confirmation_hours = hours;
  }
  if (input.scheduleId !== undefined) {
    const id = input.scheduleId;
    if (id !== null && (typeof id !== "string" || !scheduleIds.includes(id))) {
      throw notAllowed("schedule_id", scheduleIds, "schedule_id is not a schedule of this account (or null for the account's availability)", id);
    }
    out.schedule_id = id;
  }
  return out;
}


/**
 * The availability an event is booked by: its schedule's hours (or the account's when it has none, or the
 * schedule is gone), and its own notice and window where it sets them, else the account's.
 */
export function eventAvailability(
  account: Availability,
  schedule: Hours | undefined,
  rules: Pick<StoredEventRules, "minimum_notice_minutes" | "booking_window_days">,
): Availability {
  const notice = rules.minimum_notice_minutes ?? account.minimumNoticeMinutes;
  const window = rules.booking_window_days ?? account.bookingWindowDays;
  if (!schedule && notice === account.minimumNoticeMinutes && window === account.bookingWindowDays) return account;
  const hours = schedule ?? account;
  return { weeklyHours: hours.weeklyHours, dateOverrides: hours.dateOverrides, minimumNoticeMinutes: notice, bookingWindowDays: window };
}

/** The limits of the event for slot computation, or undefined when it has none (then nothing is counted). */
export function limitsOf(
  rules: Pick<StoredEventRules, "daily_limit" | "weekly_limit">,
  weekStartsOn: number,
  booked: BookingLimits["booked"],
): BookingLimits | undefined {
  if (rules.daily_limit === null && rules.weekly_limit === null) return undefined;
  return { daily: rules.daily_limit, weekly: rules.weekly_limit, weekStartsOn, booked };
}

const NOT_CHANGEABLE = "booking can no longer be changed";

/** Until when the booker may cancel or reschedule: the start, or cancel_notice_minutes before it. */
export function changeableUntil(start: Date, cancelNoticeMinutes: number | null): Date {
  return cancelNoticeMinutes === null || cancelNoticeMinutes === 0 ? start : new Date(start.getTime() - cancelNoticeMinutes * 60_000);
}

/**
 * What keeps the booker (never the host) from cancelling or moving the booking now: the host's rules
 * (`changeProblem`), then the event's cancel notice (422 `booking can no longer be changed`, data saying until when).
 */
export function bookerChangeRefusal(b: BookingTimes, now: Date, cancelNoticeMinutes: number | null): ApiError | undefined {
  const problem = changeProblem(b, now);
  if (problem) return refusal(REASONS.notChangeable, problem);
  const until = changeableUntil(b.start, cancelNoticeMinutes);
  if (now.getTime() < until.getTime()) return undefined;
  return refusal(REASONS.notChangeable, NOT_CHANGEABLE, {
    data: { changeable_until: until.toISOString(), cancel_notice_minutes: cancelNoticeMinutes },
  });
}

/**
 * 409 `slot is not available` saying why (extensions.md "Why a time is refused"): `data.reason` over REST, the word
 * in the RPC message and in capitals as its reason (callers.md "Errors programs can read"). Over RPC a time someone
 * else holds is ALREADY_EXISTS; every other reason is a rule of the event or the host's calendar, FAILED_PRECONDITION.
 */
export function slotNotAvailable(reason: RefusalReason, at?: { eventId: string; start: Date }): ApiError {
  return new ApiError(reason === "taken" ? Code.AlreadyExists : Code.FailedPrecondition, `slot is not available: ${reason}`, {
    restMessage: "slot is not available",
    data: { reason },
    httpStatus: 409,
    reason: reason.toUpperCase(),
    // What the refusal names, for the ErrorInfo's metadata: the event and the time asked for.
    info: at === undefined ? {} : { event_id: at.eventId, start_time: at.start.toISOString() },
  });
}

// ---- Schedules ---------------------------------------------------------------------------------------------

/** An account holds at most this many schedules (extensions.md "Event rules"). */
export const SCHEDULES_PER_ACCOUNT = 20;
const SCHEDULE_NAME_MAX = 80;

export function checkScheduleName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") blank("name");
  if (charLength(trimmed) > SCHEDULE_NAME_MAX) tooLong("name", SCHEDULE_NAME_MAX);
  return trimmed;
}

/** 422 for a schedule that events still use, naming them, so the host knows what to change first. */
export function scheduleInUse(events: readonly { id: string; name: string }[]): ApiError {
  const names = events.map((e) => `"${e.name}"`).join(", ");
  return refusal(REASONS.inUse, `schedule is used by ${events.length === 1 ? "the event" : "the events"} ${names}; give them another schedule_id (or null) first`, {
    data: { events: events.map((e) => ({ id: e.id, name: e.name })) },
  });
}
