// The interfaces every outside calendar or meeting system sits behind (CalendarProvider, MeetingProvider), and their error type.
import type { IcsBooking } from "../../domain/ical/writer.js";
import type { BusyPeriod } from "../../domain/ical/busy.js";

/** How the service talks to providers: whether private addresses may be reached, and one exchange's deadline. */
export interface ProviderSettings {
  allowPrivate: boolean;
  timeoutMs: number;
}

/**
 * A connection's credentials as stored (sealed by the calendars feature): each provider reads its own fields.
 * The stored names stay what they were when written (`server_url`, `username`, `password`, `url`, ...).
 */
export type Credentials = Readonly<Record<string, string>>;

/** A calendar as the provider describes it. */
export interface ProviderCalendar {
  /** The provider's address of the calendar (CalDAV collection URL, Google calendar id); for a feed, null: its URL is a credential. */
  url: string | null;
  name: string;
  canWrite: boolean;
  email: string | null;
}

/** The fields of `POST /calendar_connections` a provider that connects from a request reads. */
interface ConnectionInput {
  serverUrl?: string;
  username?: string;
  password?: string;
  url?: string;
}

/** What connecting found: the account's name as shown, the credentials to keep, and the calendars. */
interface Connected {
  account: string;
  credentials: Credentials;
  calendars: ProviderCalendar[];
}

/** How busy times are read for one host. */
export interface BusyOptions {
  /** The host's IANA zone: all-day events block their dates there. */
  hostZone: string;
  /** The host's addresses: an event the host declined blocks nothing. */
  hostEmails: readonly string[];
  /** Whether an event is one this service wrote for a booking (its UID), which the booking itself already blocks. */
  ignoreUid(uid: string): boolean;
}

/** A calendar's busy periods in a range, with the token that says when they change (ctag, sync token, ETag). */
type BusyRead = { unchanged: true; version: string | null } | { unchanged: false; version: string | null; periods: BusyPeriod[] };

/** The event a booking puts on a calendar: the VEVENT's fields (src/domain/ical/writer.ts) plus the booking's id. */
interface CalendarEvent extends IcsBooking {
  /** The booking's id: stable for the booking's life, so a provider may name its object after it. */
  bookingId: string;
}

/** The booking's event at the provider: `id` as the provider answered when it was written (null before, or when not kept). */
interface EventRef {
  bookingId: string;
  id: string | null;
}

export interface CalendarProvider {
  readonly name: string;
  /**
   * Connects from the fields of a request (CalDAV, feeds): checks them (422 naming the field) and finds the
   * account's calendars. Rejects with CalendarSourceError when the provider cannot be used. Providers that
   * connect through OAuth have none.
   */
  connect?(input: ConnectionInput, settings: ProviderSettings, signal: AbortSignal): Promise<Connected>;
  /**
   * The busy periods of one calendar that touch [from, to). With `knownVersion` (from an earlier read), a cheap
   * check first: `unchanged` when the calendar has not changed since. Rejects with CalendarSourceError; honours `signal`.
   */
  readBusy(
    credentials: Credentials,
    calendar: { url: string | null },
    range: { from: Date; to: Date },
    knownVersion: string | null,
    busy: BusyOptions,
    settings: ProviderSettings,
    signal: AbortSignal,
  ): Promise<BusyRead>;
  /** Makes the calendar hold the booking's event, written anew or over the one `ref` names; answers its id. Absent: read-only. */
  writeEvent?(credentials: Credentials, calendar: { url: string | null }, event: CalendarEvent, ref: EventRef, settings: ProviderSettings, signal: AbortSignal): Promise<{ id: string }>;
  /** Removes the booking's event; one already gone counts as removed. */
  deleteEvent?(credentials: Credentials, calendar: { url: string | null }, ref: EventRef, settings: ProviderSettings, signal: AbortSignal): Promise<void>;
}

/** A video-meeting integration's stored settings (Jitsi: the server's address). */
interface MeetingConfig {
  baseUrl: string;
}

export interface MeetingProvider {
  readonly name: string;
  /** The settings to store from the request's `integration` object; 422 naming the field when they cannot be used. */
  configure(input: { baseUrl?: string }): MeetingConfig;
  /** A meeting for a new booking: its link. */
  createMeeting(config: MeetingConfig): Promise<{ url: string }>;
}

/**
 * Why a provider could not be used: `refused` (credentials turned down: the connection is `invalid`),
 * `unreachable` (network, deadline, 5xx), `bad_response` (not CalDAV / not iCalendar / broken XML),
 * `not_found` (no calendar there), `blocked` (not http(s), or a private address without OUTBOUND_ALLOW_PRIVATE).
 */
export class CalendarSourceError extends Error {
  constructor(
    readonly kind: "refused" | "unreachable" | "bad_response" | "not_found" | "blocked",
    message: string,
  ) {
    super(message);
  }
}
