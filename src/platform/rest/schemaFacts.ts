// What the proto descriptors cannot say about the API's fields, for the REST reader and the OpenAPI document: the domain's allowed lists, the string formats and the REST names that are not the proto names.
import type { DescField } from "@bufbuild/protobuf";
import type { AllowedValue } from "../../domain/errors.js";
import { BOOKING_STATUSES, CANCELED_BY, CATEGORIES, IMPORT_STATUSES, MEETING_STATUSES } from "../../domain/booking.js";
import { RULE_RANGES } from "../../domain/eventRules.js";
import { EVENT_COLORS, LOCATION_NAMES, PADDING_DURATION_NAMES, PHONE_CALL_OPTIONS, SLOT_DURATION_NAMES } from "../../domain/event.js";
import { QUESTION_STATES, QUESTION_TYPES } from "../../domain/questions.js";
import { DATE_FORMATS, TIME_FORMATS } from "../../domain/format.js";
import { SERVICE_TIME_ZONES } from "../../domain/timezones.js";
import { ACCOUNT_TIME_ZONES, ANY_TIME_ZONES } from "../../domain/zoneNames.js";
import { CURRENCIES, DAYS_OF_WEEK, EVENTS_LAYOUTS } from "../../domain/user.js";
import { LOCALES } from "../../domain/locales.js";
import { WEBHOOK_EVENTS } from "../../domain/webhook.js";

/**
 * An enumerated list as the document shows it. The values are the very constants the validators check against
 * (and list in their 422s, extensions.md "Allowed values"), so the document cannot drift from them. A long list
 * has a name: it becomes one component schema that every field of it refers to.
 */
export interface AllowedList {
  readonly name?: string;
  readonly values: readonly AllowedValue[];
}

const list = (values: readonly AllowedValue[], name?: string): AllowedList => (name === undefined ? { values } : { name, values });

const SERVICE_ZONE = list(SERVICE_TIME_ZONES, "ServiceTimeZone");
// Input fields only: the canonical IANA names, then the service names, both read (src/domain/zoneNames.ts); the
// service also reads other spellings Intl knows.
const ANY_ZONE = list(ANY_TIME_ZONES, "TimeZone");
const CURRENCY = list(CURRENCIES, "Currency");

const USER_LISTS = {
  timezone: SERVICE_ZONE,
  time_format: list(TIME_FORMATS),
  date_format: list(DATE_FORMATS),
  locale: list(LOCALES),
  currency: CURRENCY,
};
const SETTINGS_LISTS = { ...USER_LISTS, start_day_of_week: list(DAYS_OF_WEEK), events_layout: list(EVENTS_LAYOUTS) };
const BOOKING_LISTS = { status: list(BOOKING_STATUSES), meeting_status: list(MEETING_STATUSES) };

/** Enumerated fields by proto message (full name) and field; list fields are lists of such values. */
export const ALLOWED_VALUES: Readonly<Record<string, Readonly<Record<string, AllowedList>>>> = {
  "scheduling.v1.User": USER_LISTS,
  "scheduling.v1.UserSettings": SETTINGS_LISTS,
  "scheduling.v1.UserUpdate": SETTINGS_LISTS,
  // Taken in either vocabulary, stored as the service name.
  "scheduling.v1.AccountInput": { timezone: list(ACCOUNT_TIME_ZONES, "AccountTimeZone"), time_format: list(TIME_FORMATS), date_format: list(DATE_FORMATS), locale: list(LOCALES), currency: CURRENCY, start_day_of_week: list(DAYS_OF_WEEK), events_layout: list(EVENTS_LAYOUTS) },
  "scheduling.v1.Availability": { timezone: SERVICE_ZONE },
  "scheduling.v1.EventInput": {
    slot_duration: list(SLOT_DURATION_NAMES),
    padding_duration: list(PADDING_DURATION_NAMES),
    color: list(EVENT_COLORS),
    buffer_before: list(PADDING_DURATION_NAMES),
  },
  "scheduling.v1.Event": { color: list(EVENT_COLORS), buffer_before: list(PADDING_DURATION_NAMES) },
  "scheduling.v1.EventLocation": { name: list(LOCATION_NAMES), selected_option: list(PHONE_CALL_OPTIONS) },
  "scheduling.v1.QuestionInput": { question_type: list(QUESTION_TYPES), state: list(QUESTION_STATES) },
  "scheduling.v1.Question": { question_type: list(QUESTION_TYPES), state: list(QUESTION_STATES) },
  "scheduling.v1.PublicQuestion": { question_type: list(QUESTION_TYPES) },
  "scheduling.v1.BookingRecord": BOOKING_LISTS,
  "scheduling.v1.Booking": { ...BOOKING_LISTS, canceled_by: list(CANCELED_BY) },
  "scheduling.v1.PublicBooking": { status: list(BOOKING_STATUSES), host_locale: list(LOCALES), locale: list(LOCALES), host_time_format: list(TIME_FORMATS), meeting_status: list(MEETING_STATUSES) },
  // Each provider takes one of them (providers.md): google and microsoft calendar, zoom conference.
  "scheduling.v1.AuthorizationInput": { purpose: list(["calendar", "conference"]) },
  "scheduling.v1.PublicEvent": { host_locale: list(LOCALES), host_time_format: list(TIME_FORMATS) },
  "scheduling.v1.PublicProfile": { locale: list(LOCALES), time_format: list(TIME_FORMATS) },
  "scheduling.v1.BookingInput": { timezone: ANY_ZONE, locale: list(LOCALES) },
  "scheduling.v1.ListSlotsRequest": { timezone: ANY_ZONE },
  "scheduling.v1.ListBookingsRequest": { category: list(CATEGORIES) },
  "scheduling.v1.ImportedBooking": { status: list(IMPORT_STATUSES) },
  "scheduling.v1.WebhookInput": { events: list(WEBHOOK_EVENTS) },
  "scheduling.v1.Webhook": { events: list(WEBHOOK_EVENTS) },
};

export type StringFormat = "date-time" | "date" | "email" | "uri" | "uri-reference";

const DATE_RANGE = { date_from: "date", date_to: "date" } as const;
const TIMES = { start_time: "date-time", end_time: "date-time" } as const;

/**
 * Strings with a format (JSON Schema's `format`): ISO 8601 instants, calendar dates, e-mail addresses and absolute
 * URLs (or a path, uri-reference). Only fields that always hold one: display strings ("created_at" of events and questions), slugs ("url" of
 * users and events) and fields that may be empty ("profile_picture_url") have none.
 */
export const STRING_FORMATS: Readonly<Record<string, Readonly<Record<string, StringFormat>>>> = {
  "scheduling.v1.User": { email: "email", created_at: "date-time", brand_logo_url: "uri" },
  "scheduling.v1.UserSettings": { email: "email", created_at: "date-time", profile_embed_url: "uri", brand_logo_url: "uri" },
  "scheduling.v1.AccountInput": { email: "email" },
  "scheduling.v1.AuthorizationInput": { return_url: "uri" },
  "scheduling.v1.Authorization": { authorization_url: "uri", expires_at: "date-time" },
  "scheduling.v1.DateOverride": { date: "date" },
  // absolute_url is the booking page's path on this service ("/<user url>/<event url>").
  "scheduling.v1.Event": { absolute_url: "uri-reference", connected_calendar_email: "email" },
  "scheduling.v1.BookingRecord": { ...TIMES, booked_at: "date-time", attendee_email: "email", meeting_url: "uri" },
  "scheduling.v1.Booking": { ...TIMES, booked_at: "date-time", canceled_at: "date-time", attendee_email: "email", guest_emails: "email", meeting_url: "uri" },
  "scheduling.v1.Attendee": { email: "email", first_appeared_at: "date-time", last_appeared_at: "date-time", logo: "uri" },
  "scheduling.v1.ListBookingsRequest": DATE_RANGE,
  "scheduling.v1.CountBookingsRequest": DATE_RANGE,
  "scheduling.v1.ListSlotsRequest": DATE_RANGE,
  "scheduling.v1.Slot": TIMES,
  "scheduling.v1.PublicEvent": { host_picture_url: "uri", host_brand_logo_url: "uri" },
  "scheduling.v1.PublicProfile": { picture_url: "uri", brand_logo_url: "uri" },
  "scheduling.v1.BookingInput": { start_time: "date-time", attendee_email: "email", guest_emails: "email" },
  "scheduling.v1.RescheduleInput": { start_time: "date-time" },
  "scheduling.v1.PublicBooking": { ...TIMES, attendee_email: "email", guest_emails: "email", host_email: "email", meeting_url: "uri", host_brand_logo_url: "uri" },
  "scheduling.v1.ImportedBooking": { start_time: "date-time", booked_at: "date-time", attendee_email: "email" },
  "scheduling.v1.Webhook": { url: "uri", created_at: "date-time" },
  "scheduling.v1.WebhookInput": { url: "uri" },
  "scheduling.v1.WebhookDelivery": { attempted_at: "date-time" },
  "scheduling.v1.Calendar": { email: "email" },
  "scheduling.v1.CalendarConnection": { last_synced_at: "date-time" },
  "scheduling.v1.CalendarConnectionInput": { server_url: "uri", url: "uri" },
  "scheduling.v1.Integration": { base_url: "uri", connected_at: "date-time" },
  "scheduling.v1.ConferenceInput": { base_url: "uri" },
};

/** A JSON schema, as the OpenAPI document writes one. */
type JsonSchema = { [key: string]: string | number | readonly string[] };

const wholeOrNull = ([minimum, maximum]: readonly [number, number]): JsonSchema => ({ type: ["integer", "null"], minimum, maximum });

/**
 * Fields carried as google.protobuf.Value so that null can clear them (an event's rules): what JSON they take,
 * where the descriptor says only "any JSON value".
 */
export const JSON_VALUES: Readonly<Record<string, Readonly<Record<string, JsonSchema>>>> = {
  "scheduling.v1.EventInput": {
    ...Object.fromEntries(Object.entries(RULE_RANGES).map(([field, range]) => [field, wholeOrNull(range)])),
    schedule_id: { type: ["string", "null"], description: "a schedule's id (GET /schedules), or null for the account's availability" },
  },
};

/**
 * Fields whose REST name (scheduling-api.md) is not their proto name, by proto message (full name) and field. The
 * proto's JSON names stay protobuf's defaults, which every runtime loads; REST reads these names (and the proto
 * and lowerCamelCase ones, as for every field), writes them, checks them and documents them.
 */
export const REST_NAMES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  // The Rails-style flag of nested attributes. As a json_name it clashed with `_destroy`, the synthetic oneof of
  // the optional field, and Python's protobuf refused the whole file.
  "scheduling.v1.EventQuestionAttributes": { destroy: "_destroy" },
};

/**
 * Optional fields that REST answers leave out when unset, instead of writing null, by proto message (full name):
 * a slot shows `seats_left` only for a seated event (booking-kinds.md "Seats"); a webhook its `secret` only on
 * create and GET by id, and the list is "without secrets" (integrations.md), not with a null one.
 */
export const ABSENT_WHEN_UNSET: Readonly<Record<string, readonly string[]>> = {
  "scheduling.v1.Slot": ["seats_left"],
  "scheduling.v1.Webhook": ["secret"],
};

/** A field's name in REST bodies and answers. */
export function restNameOf(field: DescField): string {
  return REST_NAMES[field.parent.typeName]?.[field.name] ?? field.name;
}
