// Rules of events: allowed lists, limits, url and location rules, form-question plans, display strings.
import { locationWords, type LocationWords } from "./bookingEvent.js";
import { blank, invalid, isOneOf, notInList, tooLong } from "./errors.js";
import { charLength, normaliseUrl, urlFormatProblem } from "./user.js";
import { eventUrlKeys, urlKey } from "./urlKey.js";
import { isHighlyRestrictiveIdentifier } from "./uts39.js";
import { checkDurations, checkSlotInterval, LENGTHS_TWICE } from "./lengths.js";

const EVENT_NAME_MAX = 80;
const EVENT_URL_MIN = 1;
const EVENT_URL_MAX = 80;
const EVENT_DESCRIPTION_MAX = 500;
const GUEST_EMAILS_LIMIT_MAX = 10;
/** Free-text location settings (address, phone numbers) are bounded like a description. */
const LOCATION_DETAILS_MAX = 500;
export const NO_CALENDAR_SELECTED = "no_calendar_selected";
const CLONE_PREFIX = "[CLONE] ";

/** Input tokens of create and update, and the minutes stored for them. */
export const SLOT_DURATIONS: Readonly<Record<string, number>> = Object.freeze({
  "15_minutes": 15,
  "30_minutes": 30,
  "45_minutes": 45,
  "1_hour": 60,
  "2_hours": 120,
});

export const PADDING_DURATIONS: Readonly<Record<string, number>> = Object.freeze({
  "0_minutes": 0,
  "5_minutes": 5,
  "10_minutes": 10,
  "15_minutes": 15,
  "30_minutes": 30,
  "45_minutes": 45,
  "1_hour": 60,
  "2_hours": 120,
});

/** The tokens of SLOT_DURATIONS and PADDING_DURATIONS, in order: what the 422s and the OpenAPI document list. */
export const SLOT_DURATION_NAMES: readonly string[] = Object.freeze(Object.keys(SLOT_DURATIONS));
export const PADDING_DURATION_NAMES: readonly string[] = Object.freeze(Object.keys(PADDING_DURATIONS));

export const EVENT_COLORS = [
  "lavender",
  "sage",
  "grape",
  "flamingo",
  "banana",
  "tangerine",
  "peacock",
  "graphite",
  "blueberry",
  "basil",
  "tomato",
] as const;

export const LOCATION_NAMES = ["no_location", "calendar_meet", "conference", "ask_invitee", "in_person", "phone_call"] as const;
type LocationName = (typeof LOCATION_NAMES)[number];
export const PHONE_CALL_OPTIONS = ["host_will_call_invitee", "invitee_will_call_host"] as const;

export const EVENT_DEFAULTS = {
  slot_minutes: 30,
  padding_minutes: 0,
  color: "lavender",
  description: null,
  location: { name: "no_location", details: null, selected_option: null, host_contact_number: null, invitee_contact_number: null },
  active: true,
  is_public: true,
  enable_guest_emails: false,
  guest_emails_limit: 0,
  connected_calendar_id: NO_CALENDAR_SELECTED,
} as const;

function tokenOf(table: Readonly<Record<string, number>>, minutes: number): string | undefined {
  return Object.entries(table).find(([, m]) => m === minutes)?.[0];
}

export function slotTokenForMinutes(minutes: number): string | undefined {
  return tokenOf(SLOT_DURATIONS, minutes);
}

export function paddingTokenForMinutes(minutes: number): string | undefined {
  return tokenOf(PADDING_DURATIONS, minutes);
}

function checkEventName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") blank("name");
  if (charLength(trimmed) > EVENT_NAME_MAX) tooLong("name", EVENT_NAME_MAX);
  return trimmed;
}

/** The url as stored (NFKC, see normaliseUrl), once it meets the rules. */
function checkEventUrl(input: string): string {
  if (input.trim() === "") blank("url");
  const url = normaliseUrl(input);
  const problem = urlFormatProblem("url", url, EVENT_URL_MIN, EVENT_URL_MAX);
  if (problem) throw invalid(problem);
  return url;
}

export interface EventLocationInput {
  name: string;
  details?: string;
  selectedOption?: string;
  hostContactNumber?: string;
  inviteeContactNumber?: string;
}

export interface StoredLocation {
  name: LocationName;
  details: string | null;
  selected_option: string | null;
  host_contact_number: string | null;
  invitee_contact_number: string | null;
}

// Loose on purpose: digits with the usual separators and an optional leading "+"; 5 to 20 digits.
const PHONE_CHARS = /^\+?[0-9 ()\-.]+$/;
export function isPhoneNumber(value: string): boolean {
  const digits = value.replace(/\D/g, "").length;
  return PHONE_CHARS.test(value.trim()) && digits >= 5 && digits <= 20;
}

function checkPhoneNumber(field: string, value: string | undefined, required: boolean): string | null {
  if (value === undefined || value.trim() === "") {
    if (required) blank(`location.${field}`);
    return null;
  }
  if (!isPhoneNumber(value)) throw invalid(`location.${field} is not a valid phone number`);
  return value.trim();
}

/** What the account has connected, which decides some values of an event: read by the service before checking. */
export interface EventInputContext {
  /** A video-meeting provider is connected (the conference location). */
  conferenceConnected: boolean;
  /** Ids of the account's calendars that can be written to (connected_calendar_id). */
  writableCalendarIds: ReadonlySet<string>;
}

export const NOTHING_CONNECTED: EventInputContext = Object.freeze({ conferenceConnected: false, writableCalendarIds: new Set<string>() });

/** providers.md: a calendar_meet event needs a Google (or Microsoft) calendar with can_write as its connected calendar. */
export const CALENDAR_MEET_NEEDS = "calendar_meet needs a Google or Microsoft calendar selected for the event";

/**
 * `calendar_meet` on the event as it will be (location and connected_calendar_id, whichever of them the request
 * changes): the calendar must be one whose provider makes meeting links (CalDAV and feeds make none).
 */
export function checkCalendarMeet(location: string, calendarId: string, meetingCalendarIds: ReadonlySet<string>): void {
  if (location === "calendar_meet" && !meetingCalendarIds.has(calendarId)) throw invalid(CALENDAR_MEET_NEEDS);
}

/**
 * Checks a location and keeps only the settings of its type. `conference` needs the video-meeting provider
 * connected; `calendar_meet` is checked with the event's calendar (checkCalendarMeet).
 */
export function checkLocation(input: EventLocationInput, context: EventInputContext = NOTHING_CONNECTED): StoredLocation {
  const name = input.name;
  if (name.trim() === "") blank("location.name");
  if (!isOneOf(LOCATION_NAMES, name)) notInList("location.name", LOCATION_NAMES, name);
  const stored: StoredLocation = { name, details: null, selected_option: null, host_contact_number: null, invitee_contact_number: null };
  switch (name) {
    case "no_location":
    case "ask_invitee":
      return stored;
    case "calendar_meet":
      // Whether the event's calendar makes links depends on both fields: checkCalendarMeet, on the event as it will be.
      return stored;
    case "conference":
      if (!context.conferenceConnected) throw invalid("location.name conference needs the video-meeting provider connected under integrations; none is connected", "location.name");
      return stored;
    case "in_person": {
      const details = (input.details ?? "").trim();
      if (details === "") blank("location.details");
      if (charLength(details) > LOCATION_DETAILS_MAX) tooLong("location.details", LOCATION_DETAILS_MAX);
      return { ...stored, details };
    }
    case "phone_call": {
      const option = input.selectedOption ?? "";
      if (option.trim() === "") blank("location.selected_option");
      if (!isOneOf(PHONE_CALL_OPTIONS, option)) notInList("location.selected_option", PHONE_CALL_OPTIONS, option);
      // Whoever places the call needs the other side's number; the invitee's may also be asked at booking.
      if (option === "invitee_will_call_host") {
        return { ...stored, selected_option: option, host_contact_number: checkPhoneNumber("host_contact_number", input.hostContactNumber, true) };
      }
      return { ...stored, selected_option: option, invitee_contact_number: checkPhoneNumber("invitee_contact_number", input.inviteeContactNumber, false) };
    }
  }
}

/** The API's `location_name`: short English words for display, the same for every booking of the event. */
const DISPLAY_WORDS: LocationWords = {
  locationConference: "Video conference",
  locationCalendarMeet: "Calendar meeting",
  locationAskInvitee: "Ask invitee",
  locationPhoneHostCalls: "Phone call",
  locationPhoneInviteeCalls: "Phone call",
  locationNone: "No location",
};

/** An in-person meeting is named by its address (the API's `location_name` is what a host typed there). */
export function locationDisplayName(location: { name: string; details?: string | null; selected_option?: string | null }): string {
  const place = { kind: location.name, details: location.name === "in_person" ? location.details : undefined };
  return locationWords(place, null, { host: "", attendee: "" }, DISPLAY_WORDS) ?? "In person";
}

/**
 * What a visitor needs to find the meeting: the location's token and the one detail meant for them (the address
 * of an in-person meeting, or the host's number when the invitee calls). The invitee's own number stays private.
 */
export function publicLocation(location: { name: string; details?: string | null; selected_option?: string | null; host_contact_number?: string | null }): {
  kind: string;
  details: string | undefined;
} {
  if (location.name === "in_person") return { kind: location.name, details: location.details ?? undefined };
  if (location.name === "phone_call" && location.selected_option === "invitee_will_call_host") {
    return { kind: location.name, details: location.host_contact_number ?? undefined };
  }
  return { kind: location.name, details: undefined };
}

/** Line breaks of any platform become `<br>`, as the booking page shows them. */
export function descriptionForDisplay(description: string | null | undefined): string | undefined {
  if (description === null || description === undefined) return undefined;
  return description.replace(/\r\n|\r|\n/g, "<br>");
}

/** Fields accepted on create and update (the proto EventInput without the form questions). */
export interface EventInput {
  name?: string;
  url?: string;
  slotDuration?: string;
  paddingDuration?: string;
  color?: string;
  description?: string;
  location?: EventLocationInput;
  active?: boolean;
  isPublic?: boolean;
  enableGuestEmails?: boolean;
  guestEmailsLimit?: number;
  connectedCalendarId?: string;
  /** JSON values as sent (booking-kinds.md): a list of minutes; minutes or null. */
  durations?: unknown;
  slotIntervalMinutes?: unknown;
}

/** The stored form of the sent fields, after every check. */
export interface EventPatch {
  name?: string;
  url?: string;
  url_key?: string;
  url_rule?: number;
  slot_minutes?: number;
  padding_minutes?: number;
  color?: string;
  description?: string | null;
  location?: StoredLocation;
  active?: boolean;
  is_public?: boolean;
  enable_guest_emails?: boolean;
  guest_emails_limit?: number;
  connected_calendar_id?: string;
  /** The lengths a booker may choose; slot_minutes is always the first. */
  durations?: number[];
  slot_interval_minutes?: number | null;
}

/** Checks every sent field of create or update; the first broken rule answers (422 naming the field). */
export function checkEventInput(input: EventInput, context: EventInputContext = NOTHING_CONNECTED): EventPatch {
  const out: EventPatch = {};
  if (input.name !== undefined) out.name = checkEventName(input.name);
  if (input.url !== undefined) {
    out.url = checkEventUrl(input.url);
    Object.assign(out, eventUrlKeys(out.url));
  }
  if (input.slotDuration !== undefined) {
    if (!Object.hasOwn(SLOT_DURATIONS, input.slotDuration)) notInList("slot_duration", SLOT_DURATION_NAMES, input.slotDuration);
    if (input.durations !== undefined) throw invalid(LENGTHS_TWICE, "durations");
    out.slot_minutes = SLOT_DURATIONS[input.slotDuration];
    out.durations = [out.slot_minutes];
  }
  if (input.durations !== undefined) {
    out.durations = checkDurations(input.durations);
    out.slot_minutes = out.durations[0];
  }
  if (input.slotIntervalMinutes !== undefined) out.slot_interval_minutes = checkSlotInterval(input.slotIntervalMinutes);
  if (input.paddingDuration !== undefined) {
    if (!Object.hasOwn(PADDING_DURATIONS, input.paddingDuration)) notInList("padding_duration", PADDING_DURATION_NAMES, input.paddingDuration);
    out.padding_minutes = PADDING_DURATIONS[input.paddingDuration];
  }
  if (input.color !== undefined) {
    if (!isOneOf(EVENT_COLORS, input.color)) notInList("color", EVENT_COLORS, input.color);
    out.color = input.color;
  }
  if (input.description !== undefined) {
    if (charLength(input.description) > EVENT_DESCRIPTION_MAX) tooLong("description", EVENT_DESCRIPTION_MAX);
    out.description = input.description.trim() === "" ? null : input.description;
  }
  if (input.location !== undefined) out.location = checkLocation(input.location, context);
  if (input.active !== undefined) out.active = input.active;
  if (input.isPublic !== undefined) out.is_public = input.isPublic;
  if (input.enableGuestEmails !== undefined) out.enable_guest_emails = input.enableGuestEmails;
  if (input.guestEmailsLimit !== undefined) {
    const n = input.guestEmailsLimit;
    if (!Number.isInteger(n) || n < 0 || n > GUEST_EMAILS_LIMIT_MAX) throw invalid(`guest_emails_limit must be between 0 and ${GUEST_EMAILS_LIMIT_MAX}`);
    out.guest_emails_limit = n;
  }
  if (input.connectedCalendarId !== undefined) {
    // Another account's calendar is as unknown as a missing one: the same 422, telling nothing about it.
    if (input.connectedCalendarId !== NO_CALENDAR_SELECTED && !context.writableCalendarIds.has(input.connectedCalendarId)) {
      throw invalid(`connected_calendar_id is not a writable calendar of this account; use one of GET /calendars with can_write, or ${NO_CALENDAR_SELECTED}`);
    }
    out.connected_calendar_id = input.connectedCalendarId;
  }
  return out;
}

/** `[CLONE] <name>`, refused when the copy's name would pass the name limit. */
export function cloneName(name: string): string {
  const copy = CLONE_PREFIX + name;
  if (charLength(copy) > EVENT_NAME_MAX) {
    throw invalid(`name is too long for a clone (maximum is ${EVENT_NAME_MAX} characters including the "${CLONE_PREFIX.trim()}" prefix)`);
  }
  return copy;
}

/**
 * The first of `<url>-copy`, `<url>-copy-2`, ... whose key is not taken, shortened to fit the url limit. A url of
 * another script than Latin gets `-2`, `-3`, ... instead, since `-copy` would make it a url of two scripts.
 */
export function cloneUrl(url: string, takenKeys: ReadonlySet<string>): string {
  const chars = Array.from(url);
  const word = isHighlyRestrictiveIdentifier(`${url}-copy`);
  for (let n = 1; ; n++) {
    const suffix = word ? (n === 1 ? "-copy" : `-copy-${n}`) : `-${n + 1}`;
    const candidate = chars.slice(0, EVENT_URL_MAX - suffix.length).join("") + suffix;
    if (!takenKeys.has(urlKey(candidate))) return candidate;
  }
}

/** An entry of event_questions_attributes. */
export interface EventQuestionAttributes {
  id?: string;
  questionId?: string;
  required?: boolean;
  orderNumber?: number;
  destroy?: boolean;
}

/** A question already on the event (the link's own id and the question it points at). */
export interface ExistingEventQuestion {
  id: string;
  questionId: string;
  orderNumber: number;
}

export interface EventQuestionPlan {
  add: { questionId: string; required: boolean; orderNumber: number }[];
  change: { id: string; required?: boolean; orderNumber?: number }[];
  remove: string[];
}

function checkOrderNumber(n: number | undefined): void {
  if (n !== undefined && (!Number.isInteger(n) || n < 0)) throw invalid("event_questions_attributes.order_number must be 0 or greater");
}

/**
 * Turns event_questions_attributes into link writes. Entry ids not on this event and questions that are not
 * the caller's are ignored (the rest still applies); adding a question that is already on the event changes
 * that link instead, so a question is on an event at most once. Unnumbered additions go after the last entry.
 */
export function planEventQuestions(
  existing: readonly ExistingEventQuestion[],
  entries: readonly EventQuestionAttributes[],
  ownQuestionIds: ReadonlySet<string>,
): EventQuestionPlan {
  for (const e of entries) checkOrderNumber(e.orderNumber);
  const byId = new Map(existing.map((l) => [l.id, l]));
  const removed = new Set<string>();
  const changes = new Map<string, { id: string; required?: boolean; orderNumber?: number }>();
  const adds = new Map<string, { questionId: string; required: boolean; orderNumber: number }>();
  let nextOrder = existing.reduce((max, l) => Math.max(max, l.orderNumber + 1), 0);

  const change = (id: string, e: EventQuestionAttributes): void => {
    const c = changes.get(id) ?? { id };
    if (e.required !== undefined) c.required = e.required;
    if (e.orderNumber !== undefined) c.orderNumber = e.orderNumber;
    changes.set(id, c);
  };

  for (const e of entries) {
    if (e.id !== undefined && e.id !== "") {
      if (!byId.has(e.id)) continue;
      if (e.destroy === true) {
        removed.add(e.id);
        changes.delete(e.id);
      } else if (!removed.has(e.id)) change(e.id, e);
      continue;
    }
    if (e.questionId === undefined || e.destroy === true || !ownQuestionIds.has(e.questionId)) continue;
    const pending = adds.get(e.questionId);
    if (pending) {
      if (e.required !== undefined) pending.required = e.required;
      if (e.orderNumber !== undefined) pending.orderNumber = e.orderNumber;
      continue;
    }
    const onEvent = existing.find((l) => l.questionId === e.questionId && !removed.has(l.id));
    if (onEvent) {
      change(onEvent.id, e);
      continue;
    }
    adds.set(e.questionId, { questionId: e.questionId, required: e.required ?? false, orderNumber: e.orderNumber ?? nextOrder++ });
  }
  return { add: [...adds.values()], change: [...changes.values()], remove: [...removed] };
}
