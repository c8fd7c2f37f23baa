// The interfaces every outside calendar or meeting system sits behind (CalendarProvider, MeetingProvider), and their error type.
import type { IcsBooking } from "../../domain/ical/writer.js";
import type { BusySpan } from "../../domain/ical/busy.js";
import type { OAuthProfile, OAuthSession } from "./oauth.js";

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

/**
 * How a provider reaches one connection: its stored fields (CalDAV, feeds), or for providers that connect through
 * OAuth a session that calls the API with a fresh token and keeps refreshed ones.
 */
export interface ProviderAccess {
  credentials: Credentials;
  oauth: OAuthSession | null;
}

/** A calendar as the provider describes it. */
export interface ProviderCalendar {
  /** The provider's address of the calendar (CalDAV collection URL, Google calendar id); for a feed, null: its URL is a credential. */
  url: string | null;
  name: string;
  canWrite: boolean;
  email: string | null;
  /** What could not be read of it when connecting (events left out), in plain words. */
  warnings?: string[];
}

/** The fields of `POST /calendar_connections` a provider that connects from a request reads. */
interface ConnectionInput {
  serverUrl?: string;
  username?: string;
  password?: string;
  url?: string;
  /** Who connects (the account's id): reading the calendar to check it shares out the calendar readers by it. */
  owner: string;
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
  /**
   * The events this service wrote to this calendar that may lie in the range, by the id the provider gave them:
   * for providers whose busy answer names no event (Google's freeBusy), so they know when to look closer.
   */
  ownEvents?: readonly { id: string; start: Date; end: Date }[];
  /**
   * The host name of APP_URL and what the events of the host's bookings near the range are named after (booking,
   * moved-event and seated-slot ids), for ignoreUid's rule where
   * a function cannot go (the iCalendar providers' reader threads apply writer.ts isOwnBookingUid with them). The
   * calendars feature always sets them; absent, they leave no event out.
   */
  appHost?: string;
  ownBookingIds?: readonly string[];
  /** Whose calendars these are (the host's id): one host's reads take at most all but one reader thread at once. */
  owner?: string;
}

/**
 * A calendar's busy periods in a range (the iCalendar providers give them merged: sorted, disjoint stretches),
 * with the token that says when they change (ctag, sync token, ETag) and what could not be read of the calendar
 * (events left out), in plain words (providers that read events through an API have nothing to say there).
 */
type BusyRead = { unchanged: true; version: string | null } | { unchanged: false; version: string | null; periods: BusySpan[]; warnings?: string[] };

/** Where a calendar is at its provider: what ProviderCalendar.url said when it was listed. */
interface CalendarAddress {
  url: string | null;
}

/** What every call to a provider about one connection carries: how to reach it, how to talk, and the deadline. */
interface ConnectionCall {
  access: ProviderAccess;
  settings: ProviderSettings;
  /** Aborts at the call's deadline (or when the caller gives up): a provider stops there. */
  signal: AbortSignal;
}

/** Connecting from the fields of a request (`connect`). */
interface ConnectCall {
  input: ConnectionInput;
  settings: ProviderSettings;
  /** The time now (`Deps.clock`): a feed is checked by reading the day from it. */
  now: Date;
  signal: AbortSignal;
}

/** Reading one calendar's busy periods (`readBusy`). */
interface ReadBusyCall extends ConnectionCall {
  calendar: CalendarAddress;
  range: { from: Date; to: Date };
  /** The version an earlier read answered (ctag, sync token, ETag): a cheap check first, `unchanged` when it still holds. */
  knownVersion: string | null;
  busy: BusyOptions;
}

/** Writing a booking's event (`writeEvent`). */
interface WriteEventCall extends ConnectionCall {
  calendar: CalendarAddress;
  event: CalendarEvent;
  ref: EventRef;
}

/** Removing a booking's event (`deleteEvent`). */
interface DeleteEventCall extends ConnectionCall {
  calendar: CalendarAddress;
  ref: EventRef;
}

/** The event a booking puts on a calendar: the VEVENT's fields (src/domain/ical/writer.ts) plus the booking's id. */
export interface CalendarEvent extends IcsBooking {
  /** The booking's id: stable for the booking's life, so a provider may name its object after it. */
  bookingId: string;
  /** The event's colour (scheduling-api.md's names, lavender … tomato), for providers that colour events. */
  color?: string;
  /** Make a meeting link with the event (`calendar_meet`); `requestId` is stable for the booking and its reschedules. */
  meeting?: { requestId: string };
}

/** The booking's event at the provider: `id` as the provider answered when it was written (null before, or when not kept). */
export interface EventRef {
  bookingId: string;
  id: string | null;
  /** Stable across the booking's reschedules (the first booking's id): what a provider that moves events names them by. */
  key: string;
}

/** What writing an event gave: its id, and the meeting link when one was asked for (null while the provider still makes it). */
export interface WrittenEvent {
  id: string;
  meetingUrl?: string | null;
  /**
   * The event was written but the provider will not make its meeting link, in plain words (a Microsoft calendar
   * that offers no Teams meetings): the meeting is `failed` at once, the event itself is written.
   */
  meetingError?: string;
}

export interface CalendarProvider {
  readonly kind: "calendar";
  /** As stored on a connection and given as `provider` (`caldav`, `google`): the registry's key. */
  readonly name: string;
  /** Providers that connect through OAuth: how (src/providers/shared/oauth.ts). They have no `connect`. */
  readonly oauth?: OAuthProfile;
  /** Whether writing an event can also make its meeting link (the `calendar_meet` location). */
  readonly makesMeetingLinks?: boolean;
  /**
   * Whether a reschedule moves the booking's event in place (the new booking writes over the event the old one
   * wrote, whose id it keeps) rather than deleting it and writing a new one (CalDAV).
   */
  readonly movesEvents?: boolean;
  /** An OAuth connection's calendars, read when it is made or authorized again. */
  listCalendars?(call: ConnectionCall): Promise<ProviderCalendar[]>;
  /**
   * Connects from the fields of a request (CalDAV, feeds): checks them (422 naming the field) and finds the
   * account's calendars. Rejects with ProviderError when the provider cannot be used. Providers that
   * connect through OAuth have none.
   */
  connect?(call: ConnectCall): Promise<Connected>;
  /**
   * The busy periods of one calendar that touch [from, to). With `knownVersion` (from an earlier read), a cheap
   * check first: `unchanged` when the calendar has not changed since. Rejects with ProviderError; honours `signal`.
   */
  readBusy(call: ReadBusyCall): Promise<BusyRead>;
  /** Makes the calendar hold the booking's event, written anew or over the one `ref` names; answers its id. Absent: read-only. */
  writeEvent?(call: WriteEventCall): Promise<WrittenEvent>;
  /** Removes the booking's event; one already gone counts as removed. */
  deleteEvent?(call: DeleteEventCall): Promise<void>;
}

/** A video-meeting integration's stored settings (Jitsi: the server's address). */
interface MeetingConfig {
  baseUrl: string;
}

/** A booking's meeting as a provider that keeps meetings (Zoom) is asked to hold it. */
export interface MeetingRequest {
  topic: string;
  start: Date;
  durationMinutes: number;
  /** IANA zone the meeting is shown in (the host's). */
  timezone: string;
}

/** Making or moving a booking's meeting at a provider that keeps meetings (`scheduleMeeting`): `id` null makes one. */
interface ScheduleMeetingCall {
  access: ProviderAccess;
  id: string | null;
  meeting: MeetingRequest;
  signal: AbortSignal;
}

/** Deleting a booking's meeting (`deleteMeeting`). */
interface DeleteMeetingCall {
  access: ProviderAccess;
  id: string;
  signal: AbortSignal;
}

export interface MeetingProvider {
  readonly kind: "meeting";
  readonly name: string;
  /** Providers that connect through OAuth (Zoom): how. Their meetings are made by the outbox (`scheduleMeeting`). */
  readonly oauth?: OAuthProfile;
  /** The settings to store from the request's `integration` object; 422 naming the field when they cannot be used. */
  configure(input: { baseUrl?: string }): MeetingConfig;
  /** A meeting for a new booking, made at once with no call (Jitsi): its link. Absent: see scheduleMeeting. */
  createMeeting?(config: MeetingConfig): Promise<{ url: string }>;
  /** Makes the meeting (id null) or moves the one of `id` to the request's time; `url` null: the link it had stays. */
  scheduleMeeting?(call: ScheduleMeetingCall): Promise<{ id: string; url: string | null }>;
  /** Deletes the meeting; one already gone counts as deleted. */
  deleteMeeting?(call: DeleteMeetingCall): Promise<void>;
}

export { ProviderError } from "./errors.js";
