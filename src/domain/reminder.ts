// Reminder rules (pure): a reminder's fields and limits, its {{variables}} and how they are filled, when a delivery falls due and what becomes of it.
import { invalid, notAllowed, notInList, tooLong } from "./errors.js";
import { charLength } from "./user.js";

export const REMINDER_TIMINGS = ["before_start", "after_end"] as const;
export const REMINDER_RECIPIENTS = ["booker", "host", "both"] as const;
export const REMINDER_CHANNELS = ["email", "webhook"] as const;
type Timing = (typeof REMINDER_TIMINGS)[number];
export type Recipients = (typeof REMINDER_RECIPIENTS)[number];
export type Channel = (typeof REMINDER_CHANNELS)[number];
/** Who one message of a reminder is for. */
export type Recipient = "booker" | "host";

/** 30 days: the longest lead (or follow-up delay) Calendly and Cal.com offer. */
export const REMINDER_OFFSET_MAX = 43_200;
export const REMINDER_SUBJECT_MAX = 200;
export const REMINDER_BODY_MAX = 5000;
export const REMINDERS_PER_EVENT = 10;

/** The names a subject or body may use, written `{{name}}`. */
export const REMINDER_VARIABLES = [
  "attendee_name",
  "host_name",
  "event_name",
  "start_time",
  "end_time",
  "timezone",
  "location",
  "meeting_url",
  "manage_url",
  "answers",
] as const;
export type ReminderVariable = (typeof REMINDER_VARIABLES)[number];
export type VariableValues = Readonly<Record<ReminderVariable, string>>;

/** A reminder's own fields as stored; subject and body null: the host's localized default. */
export interface ReminderFields {
  timing: Timing;
  offset_minutes: number;
  recipients: Recipients;
  channel: Channel;
  subject: string | null;
  body: string | null;
  active: boolean;
}

/** What a create or update sends (the proto's ReminderInput, every field optional). */
export interface ReminderInput {
  timing?: string;
  offsetMinutes?: number;
  recipients?: string;
  channel?: string;
  subject?: string;
  body?: string;
  active?: boolean;
}

/** `{{ name }}`: two braces on each side, spaces inside allowed; anything else is plain text. */
const VARIABLE = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The variable names a template uses, in order of appearance, each once. */
export function templateVariables(template: string): string[] {
  return [...new Set([...template.matchAll(VARIABLE)].map((m) => m[1]))];
}

/** Throws 422 `unknown variable <name>` (data: field, allowed) for the first name that is not a variable. */
function checkTemplate(field: "subject" | "body", template: string): void {
  const unknown = templateVariables(template).find((name) => !(REMINDER_VARIABLES as readonly string[]).includes(name));
  if (unknown !== undefined) throw notAllowed(field, REMINDER_VARIABLES, `unknown variable ${unknown === "" ? '""' : unknown}`, unknown);
}

/**
 * The template with each variable replaced by its value, in one pass: a value is text and is never read for
 * variables itself (a booker named "{{manage_url}}" is called just that).
 */
export function fillTemplate(template: string, values: VariableValues): string {
  return template.replace(VARIABLE, (whole, name: string) => ((REMINDER_VARIABLES as readonly string[]).includes(name) ? values[name as ReminderVariable] : whole));
}

/** An empty subject or body means the localized default (stored as null). */
function textOrDefault(field: "subject" | "body", value: string, max: number): string | null {
  if (value.trim() === "") return null;
  if (charLength(value) > max) tooLong(field, max);
  checkTemplate(field, value);
  return value;
}

function oneOf<T extends string>(field: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) notInList(field, allowed, value);
  return value as T;
}

function checkOffset(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > REMINDER_OFFSET_MAX) throw invalid(`offset_minutes must be between 0 and ${REMINDER_OFFSET_MAX}`);
  return value;
}

/** The fields an update changes (only those it sends), checked. */
export function checkReminderUpdate(input: ReminderInput): Partial<ReminderFields> {
  const out: Partial<ReminderFields> = {};
  if (input.timing !== undefined) out.timing = oneOf("timing", input.timing, REMINDER_TIMINGS);
  if (input.offsetMinutes !== undefined) out.offset_minutes = checkOffset(input.offsetMinutes);
  if (input.recipients !== undefined) out.recipients = oneOf("recipients", input.recipients, REMINDER_RECIPIENTS);
  if (input.channel !== undefined) out.channel = oneOf("channel", input.channel, REMINDER_CHANNELS);
  if (input.subject !== undefined) out.subject = textOrDefault("subject", input.subject, REMINDER_SUBJECT_MAX);
  if (input.body !== undefined) out.body = textOrDefault("body", input.body, REMINDER_BODY_MAX);
  if (input.active !== undefined) out.active = input.active;
  return out;
}

/** A new reminder: timing and offset_minutes are required (the caller has said so as `missing params`), the rest defaults. */
export function checkNewReminder(input: ReminderInput & { timing: string; offsetMinutes: number }): ReminderFields {
  return { recipients: "booker", channel: "email", subject: null, body: null, active: true, ...checkReminderUpdate(input) } as ReminderFields;
}

/** Whether a reminder (or its delivery) e-mails the booker: what the booker's switch turns off. */
export function remindsBooker(r: { channel: Channel; recipients: Recipients }): boolean {
  return r.channel === "email" && r.recipients !== "host";
}

/** The recipients of a reminder's e-mails. */
export function recipientsOf(recipients: Recipients): Recipient[] {
  return recipients === "both" ? ["booker", "host"] : [recipients];
}

const MINUTE = 60_000;

/** When a reminder falls due for a booking: `offset` before its start, or after its end. */
export function deliveryDueAt(r: Pick<ReminderFields, "timing" | "offset_minutes">, booking: { start: Date; end: Date }): Date {
  return r.timing === "before_start" ? new Date(booking.start.getTime() - r.offset_minutes * MINUTE) : new Date(booking.end.getTime() + r.offset_minutes * MINUTE);
}

/*
 * A delivery's life. scheduled: waiting for its time. sending: its time came and its messages are on their way
 * (shown as scheduled). Then sent (at least one message went out), failed (none could be sent), skipped (already
 * due when planned, too late when the service got to it, or nobody to send to), canceled (the booking was
 * canceled or moved, or the reminder switched off or deleted), unsubscribed (the booker turned reminders off and
 * nobody else was to get it). What was sent stays sent.
 */
export type DeliveryStatus = "scheduled" | "sending" | "sent" | "failed" | "skipped" | "canceled" | "unsubscribed";

/** What a change of the reminder or of the booking may still plan again; the others are settled. */
const REPLANNABLE: readonly DeliveryStatus[] = ["scheduled", "skipped", "canceled"];

export function isReplannable(status: DeliveryStatus): boolean {
  return REPLANNABLE.includes(status);
}

/** The plan for one booking and one reminder. */
export interface PlannedDelivery {
  status: "scheduled" | "skipped" | "canceled";
  dueAt: Date;
}

/**
 * What a delivery should be, planned at `plannedAt` (when the booking was made, or the reminder changed): none for a
 * booking that is no longer confirmed or a reminder switched off (canceled); skipped when it was already due then
 * (a 24-hour reminder for a meeting booked 2 hours ahead, a follow-up of a meeting that ended before the reminder
 * existed); else scheduled.
 */
export function planDelivery(
  r: Pick<ReminderFields, "timing" | "offset_minutes" | "active"> & { deleted?: boolean },
  booking: { status: string; start: Date; end: Date },
  plannedAt: Date,
): PlannedDelivery {
  const dueAt = deliveryDueAt(r, booking);
  if (!r.active || r.deleted === true || booking.status !== "confirmed") return { status: "canceled", dueAt };
  return { status: dueAt.getTime() <= plannedAt.getTime() ? "skipped" : "scheduled", dueAt };
}

/** More than `lateLimitMinutes` past due when the service gets to it (after downtime): skipped rather than sent late. */
export function isTooLate(dueAt: Date, now: Date, lateLimitMinutes: number): boolean {
  return now.getTime() - dueAt.getTime() > lateLimitMinutes * MINUTE;
}

/** The status the API shows (`reminders` of a booking): sending reads as scheduled; a pending delivery reads as what will become of it. */
export function shownStatus(
  d: { status: DeliveryStatus; recipients: Recipients; channel: Channel },
  booking: { status: string; remindersUnsubscribed: boolean },
): Exclude<DeliveryStatus, "sending"> {
  if (d.status === "sending") return "scheduled";
  if (d.status !== "scheduled") return d.status;
  if (booking.status !== "confirmed") return "canceled";
  if (booking.remindersUnsubscribed && d.channel === "email" && d.recipients === "booker") return "unsubscribed";
  return "scheduled";
}

/**
 * Text a booker typed (their name, their answers), made inert for mail clients that turn anything looking like an
 * address into a link: an invisible zero-width space after each dot, at sign, colon and slash breaks every such
 * pattern and changes nothing a reader sees. Markup is the HTML escape's business.
 */
export function inertText(value: string): string {
  return value.replace(/([.@:/])/g, "$1\u200B");
}
