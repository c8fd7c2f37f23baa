// The one small interface every calendar provider (CalDAV, iCalendar feed) sits behind, and its error type.

/** A calendar as the provider describes it. */
export interface SourceCalendar {
  /** The collection's URL (CalDAV); for a feed, null: the feed URL is a credential and lives sealed. */
  url: string | null;
  name: string;
  canWrite: boolean;
  email: string | null;
}

/** The calendar's iCalendar objects in a range, with the token that says when they change (ctag, sync token, ETag). */
export type ReadResult = { unchanged: true; version: string | null } | { unchanged: false; version: string | null; objects: string[] };

export interface CalendarSource {
  /**
   * The objects with VEVENTs that touch [from, to). With `knownVersion` (from an earlier read), a cheap check
   * first: `unchanged` when the calendar has not changed since. Rejects with CalendarSourceError; honours `signal`.
   */
  read(calendarUrl: string | null, range: { from: Date; to: Date }, knownVersion: string | null, signal: AbortSignal): Promise<ReadResult>;
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

/** The caller's connection settings for talking to providers. */
export interface SourceOptions {
  allowPrivate: boolean;
  timeoutMs: number;
}
