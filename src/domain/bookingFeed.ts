// The booking-change feed's pure rules (callers.md "Booking changes"): what a booking write records for the feed, the feed's change types and its opaque tokens.
import { randomBytes } from "node:crypto";

/** The kinds of change the feed shows, as callers.md names them. */
export type FeedChangeType = "booking.created" | "booking.rescheduled" | "booking.canceled" | "booking.updated";
export const BOOKMARK = "bookmark";

/** One change a booking write recorded for the feed, on the booking document, until it is in the feed. */
export interface FeedOwed {
  /** Names the change (random, made by the write), so it enters the feed once, whatever writes raced. */
  id: string;
  /** 1, 2, ... per booking. */
  n: number;
  type: FeedChangeType;
  at: Date;
  previous_booking_id?: string;
  /**
   * The hosts the change took the booking from (a reassign): their feeds get the change too, though the booking no
   * longer names them, so a program keeping a copy of their bookings learns it left them (see feedFields).
   */
  previous_host_ids?: string[];
  /** The booking as the write left it (without what it records for the outbox and the feed): what the change shows. */
  booking: Record<string, unknown>;
}

/** The fields a booking write sets (in the same write as the booking's own) to record a change for the feed. */
export interface FeedFields {
  feed_owed: FeedOwed[];
  feed_n: number;
  /** True until the sweep has seen the booking's changes in the feed: what its (partial) index finds after a crash. */
  feed_pending: true;
}

/** What a booking already recorded for the feed, as read before the write (a new booking: nothing). */
export interface FeedState {
  feed_owed?: FeedOwed[] | null;
  feed_n?: number | null;
}

/** Changes older than this stay on a booking only until the sweep has made sure they are in the feed. */
const KEEP_OWED = 8;

/**
 * The fields that record `change` for the feed on a booking whose stored state was `before`: set whole (the embedded
 * server has no $push). The last few changes stay listed, whichever are already in the feed: entering the feed is
 * idempotent by (booking, n), so a copy set again by a write that read the booking earlier does no harm.
 *
 * `previousHostIds`: the hosts a reassign takes the booking from. callers.md has no kind for "no longer yours", and
 * a new kind would break readers that know only the four it lists; `booking.canceled` would be false (the booking
 * still stands, its attendee still comes, and a program relaying cancels would tell people so). So the old host's
 * feed gets the very change every other feed of the booking gets, `booking.updated`, with the booking as it is now:
 * its `hosts` no longer name the reader, which is how a reader learns the booking left them (docs/teams.md).
 */
export function feedFields(before: FeedState | undefined, change: { type: FeedChangeType; at: Date; previousBookingId?: string; previousHostIds?: string[] }, after: object): FeedFields {
  const n = (before?.feed_n ?? 0) + 1;
  const owed: FeedOwed = { id: randomBytes(12).toString("hex"), n, type: change.type, at: change.at, booking: bookingOfChange(after) };
  if (change.previousBookingId !== undefined) owed.previous_booking_id = change.previousBookingId;
  if (change.previousHostIds !== undefined && change.previousHostIds.length > 0) owed.previous_host_ids = change.previousHostIds;
  return { feed_owed: [...(before?.feed_owed ?? []), owed].slice(-KEEP_OWED), feed_n: n, feed_pending: true };
}

/** The fields of a booking document that record owed work, not the booking: left out of what a change shows. */
const RECORDS = new Set(["changes_owed", "owed_seq", "planned_seq", "changes_pending", "feed_owed", "feed_n", "feed_pending", "moving_to", "move_pending"]);

/** The booking as a change shows it: the stored document without what it records for the outbox and the feed. */
export function bookingOfChange(doc: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(doc).filter(([k]) => !RECORDS.has(k)));
}

/** A position in one account's feed: after its change number `seq` (0: before the first). */
export interface FeedPosition {
  accountId: string;
  seq: number;
}

const TOKEN_PREFIX = "bc1";

/** The opaque token of a position (base64url of the account and the number): at most 40 characters. */
export function tokenOf(p: FeedPosition): string {
  return Buffer.from(`${TOKEN_PREFIX}:${p.accountId}:${p.seq.toString(36)}`).toString("base64url");
}

/**
 * The position a token names, or undefined when it is not one of ours (malformed): only the very string tokenOf
 * writes for it, so a token with a character added (base64url's decoder drops a dangling one) or a number written
 * with a leading zero is unknown, as callers.md says a token the service never gave is.
 */
export function positionOf(token: string): FeedPosition | undefined {
  if (token.length === 0 || token.length > 128 || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
  const m = /^bc1:([0-9a-f]{24}):([0-9a-z]{1,11})$/.exec(Buffer.from(token, "base64url").toString("latin1"));
  if (!m) return undefined;
  const position = { accountId: m[1], seq: parseInt(m[2], 36) };
  return Number.isSafeInteger(position.seq) && tokenOf(position) === token ? position : undefined;
}

/** REST `limit` and the list RPC's: 1 to 500, default 100. */
export const LIST_LIMIT = { min: 1, max: 500, default: 100 } as const;
