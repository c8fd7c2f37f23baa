// Several lengths per event and slot starts apart from the length (booking-kinds.md "Several lengths"): the checks of `durations` and `slot_interval_minutes`, the length a booker chose, and how the first length is shown.
import { invalid } from "./errors.js";
import { formatDurationMinutes } from "./format.js";

const DURATIONS_MAX_COUNT = 6;
const LENGTH_MIN_MINUTES = 5;
const LENGTH_MAX_MINUTES = 720;
/** Lengths and intervals are whole multiples of this many minutes. */
const LENGTH_STEP_MINUTES = 5;

const DURATION_NOT_OFFERED = "duration is not one of the event's durations";
const DURATIONS_RULE = `durations must be 1 to ${DURATIONS_MAX_COUNT} distinct whole numbers of minutes, each from ${LENGTH_MIN_MINUTES} to ${LENGTH_MAX_MINUTES} and a multiple of ${LENGTH_STEP_MINUTES}`;
const INTERVAL_RULE = `slot_interval_minutes must be a whole number from ${LENGTH_MIN_MINUTES} to ${LENGTH_MAX_MINUTES} and a multiple of ${LENGTH_STEP_MINUTES}, or null`;
export const LENGTHS_TWICE = "durations and slot_duration cannot both be sent: durations sets the lengths, its first one is the slot_duration";

function isLength(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= LENGTH_MIN_MINUTES && value <= LENGTH_MAX_MINUTES && value % LENGTH_STEP_MINUTES === 0;
}

/** The lengths as sent (a JSON array of minutes), in the host's order; anything else is 422 naming the rule. */
export function checkDurations(value: unknown): number[] {
  if (!Array.isArray(value) || value.length < 1 || value.length > DURATIONS_MAX_COUNT) throw invalid(DURATIONS_RULE);
  if (!value.every(isLength) || new Set(value).size !== value.length) throw invalid(DURATIONS_RULE);
  return [...value];
}

/** The interval as sent: minutes, or null (slots start the chosen length apart). */
export function checkSlotInterval(value: unknown): number | null {
  if (value === null) return null;
  if (!isLength(value)) throw invalid(INTERVAL_RULE);
  return value;
}

/** What an event stores of its lengths; events written before them have only `slot_minutes`. */
export interface StoredLengths {
  slot_minutes: number;
  durations?: readonly number[] | null;
  slot_interval_minutes?: number | null;
}

/** The lengths a booker may choose, the first being the default: the stored list, or the one slot length of older events. */
export function eventDurations(event: StoredLengths): number[] {
  return event.durations && event.durations.length > 0 ? [...event.durations] : [event.slot_minutes];
}

/**
 * The length a slot listing or a booking is for: `requested` when it is one of the event's durations, the first
 * when none is asked for, else 422 naming `field`.
 */
export function chosenDuration(event: StoredLengths, requested: number | undefined, field: string): number {
  const durations = eventDurations(event);
  if (requested === undefined) return durations[0];
  if (!durations.includes(requested)) throw invalid(DURATION_NOT_OFFERED, field);
  return requested;
}

/** How far apart slots start for a chosen length: the event's interval, or the length itself. */
export function slotStep(event: StoredLengths, minutes: number): number {
  return event.slot_interval_minutes ?? minutes;
}

/** The seed's tokens and their display forms: the lengths the seed offered keep the form it answered with. */
const SEED_LENGTHS = new Set([15, 30, 45, 60, 120]);

/**
 * An event's `slot_duration` in answers: its first length, as the seed wrote it ("30 minutes") for the lengths
 * the seed had, and `<n>_minutes` (e.g. `20_minutes`) for the others.
 */
export function slotDurationShown(event: StoredLengths): string {
  const first = eventDurations(event)[0];
  return SEED_LENGTHS.has(first) ? formatDurationMinutes(first) : `${first}_minutes`;
}
