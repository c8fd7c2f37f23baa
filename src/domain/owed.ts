// What a booking still owes (pure): the `changes_owed` array a booking write sets whole, and the deterministic ids of planned effects.
import { hash } from "node:crypto";

/**
 * What a booking change owes the outside: `requested` a request waits for the host, `created` also when the host
 * confirms one, `declined` the host declined it or it expired, `no_show` the host recorded who did not come
 * (booking-kinds.md), `reassigned` a team booking given to another host (teams.md).
 */
export type BookingChangeType = "created" | "rescheduled" | "canceled" | "requested" | "declined" | "no_show" | "reassigned";

/**
 * Whether a change leaves the booking's calendar event, meeting and reminders alone: a request (made, declined or
 * expired) has none, and a no-show changes none; a confirmed request owes `created` like any booking.
 */
export function leavesCalendarsAlone(type: BookingChangeType): boolean {
  return type === "requested" || type === "declined" || type === "no_show";
}

/**
 * Whom a public booking change may mail besides the host, as the booker limits decided when the change was made
 * (src/features/accounts/context.ts): recorded with the change, so a retry or a crash cannot decide otherwise.
 */
export interface Notify {
  booker: boolean;
  guests: boolean;
}
export const NOTIFY_EVERYONE: Notify = Object.freeze({ booker: true, guests: true });
/** Who a change must not mail (the limits said no). */
type Withheld = "booker" | "guests";

function withheldOf(notify: Notify): Withheld[] {
  return [...(notify.booker ? [] : (["booker"] as const)), ...(notify.guests ? [] : (["guests"] as const))];
}

/** One change a booking still owes the outside world, as the relay hands it to every kind's `plan`. */
export interface BookingChange {
  bookingId: string;
  userId: string;
  /** A team booking's team (teams.md; the booking is kept under its first host, `userId`). */
  teamId?: string;
  /** 1, 2, ... per booking: with the booking id it names the change, so planning it twice makes the same effect ids. */
  seq: number;
  type: BookingChangeType;
  at: Date;
  /** rescheduled: the booking this one replaced. */
  previousBookingId?: string;
  /** canceled: who canceled. */
  canceledBy?: "host" | "booker";
  /** rescheduled: who moved it (absent on changes recorded before it was kept: the booker, the only one who could). */
  movedBy?: "host" | "booker";
  /** rescheduled by the host: the reason they gave, if any (booking-kinds.md "The host's desk"). */
  reason?: string;
  /** reassigned: the host the booking was taken from (teams.md). */
  previousHostId?: string;
  /** Who this change must not mail: the booker limits said no (absent: everyone is mailed). */
  withheld?: Withheld[];
}

/** One owed change as stored on the booking document (snake_case like the rest of it). */
export interface OwedChange {
  seq: number;
  type: BookingChangeType;
  at: Date;
  previous_booking_id?: string;
  canceled_by?: "host" | "booker";
  moved_by?: "host" | "booker";
  reason?: string;
  previous_host_id?: string;
  withheld?: Withheld[];
}

/** The fields a booking write sets (whole, with $set or in the inserted document) to record a change. */
export interface OwedFields {
  changes_owed: OwedChange[];
  /** The highest seq ever recorded on the booking: the relay clears only if no change came after what it read. */
  owed_seq: number;
  /** True while changes_owed is not empty: what the relay's (partial) index finds. */
  changes_pending: true;
}

/** What a booking already owes, as read before the write (a new booking owes nothing). */
export interface OwedState {
  changes_owed?: OwedChange[] | null;
  owed_seq?: number | null;
}

/**
 * The fields that record `change` on a booking whose stored state was `before`. The array is set whole
 * (the embedded server has no $push), so a change the relay planned and cleared after `before` was read is set
 * again here. That copy is never planned twice: the relay records on the booking how far it has planned
 * (`planned_seq`, which no booking write sets) and `changesOf` leaves out every change up to there. Without that
 * mark a cancel right after a booking sent the booking's messages a second time, once the first had been
 * delivered and deleted (issue 29: 96 of 412 e-mails twice, without any crash).
 */
export function recordBookingChange(
  before: OwedState | undefined,
  change: {
    type: BookingChangeType;
    at: Date;
    previousBookingId?: string;
    canceledBy?: "host" | "booker";
    movedBy?: "host" | "booker";
    reason?: string | null;
    previousHostId?: string;
    notify?: Notify;
  },
): OwedFields {
  const seq = (before?.owed_seq ?? 0) + 1;
  const owed: OwedChange = { seq, type: change.type, at: change.at };
  if (change.previousBookingId !== undefined) owed.previous_booking_id = change.previousBookingId;
  if (change.previousHostId !== undefined) owed.previous_host_id = change.previousHostId;
  if (change.canceledBy !== undefined) owed.canceled_by = change.canceledBy;
  if (change.movedBy !== undefined) owed.moved_by = change.movedBy;
  if (change.reason !== undefined && change.reason !== null) owed.reason = change.reason;
  const withheld = withheldOf(change.notify ?? NOTIFY_EVERYONE);
  if (withheld.length > 0) owed.withheld = withheld;
  return { changes_owed: [...(before?.changes_owed ?? []), owed], owed_seq: seq, changes_pending: true };
}

/**
 * The owed changes of a booking still to be planned, as the kinds see them: those after `planned_seq`, the last
 * change the relay planned (see recordBookingChange).
 */
export function changesOf(booking: {
  _id: { toHexString(): string };
  user_id: { toHexString(): string };
  team_id?: { toHexString(): string } | null;
  changes_owed?: OwedChange[] | null;
  planned_seq?: number | null;
}): BookingChange[] {
  const planned = booking.planned_seq ?? 0;
  return (booking.changes_owed ?? []).filter((c) => c.seq > planned).map((c) => ({
    bookingId: booking._id.toHexString(),
    userId: booking.user_id.toHexString(),
    ...(booking.team_id ? { teamId: booking.team_id.toHexString() } : {}),
    seq: c.seq,
    type: c.type,
    at: c.at,
    ...(c.previous_booking_id !== undefined ? { previousBookingId: c.previous_booking_id } : {}),
    ...(c.canceled_by !== undefined ? { canceledBy: c.canceled_by } : {}),
    ...(c.moved_by !== undefined ? { movedBy: c.moved_by } : {}),
    ...(c.reason !== undefined ? { reason: c.reason } : {}),
    ...(c.previous_host_id !== undefined ? { previousHostId: c.previous_host_id } : {}),
    ...(c.withheld !== undefined && c.withheld.length > 0 ? { withheld: [...c.withheld] } : {}),
  }));
}

/** `msg_` + 144 bits of SHA-256 in base64url: the form Standard Webhooks ids take; it doubles as webhook-id and Message-ID. */
function messageIdOf(parts: readonly string[]): string {
  return `msg_${hash("sha256", parts.join("\n"), "base64url").slice(0, 24)}`;
}

/**
 * The id of the effect `kind` planned under `key` for one change: the same every time the change is planned, so
 * planning twice (two replicas, a crash before the booking was cleared) inserts one effect.
 */
export function effectId(bookingId: string, seq: number, kind: string, key: string): string {
  return messageIdOf([bookingId, String(seq), kind, key]);
}

/**
 * The id of an effect planned outside a booking change (src/outbox/schedule.ts), from the planner's `seed`: the
 * "seed:" mark keeps it apart from every id of a change.
 */
export function scheduledEffectId(seed: string, kind: string, key: string): string {
  return messageIdOf([`seed:${seed}`, kind, key]);
}
