// The outbox's contract with the kinds of effect (calendar, e-mail, webhook): what a kind plans and runs for a booking change.
import type { BookingDoc } from "../db/models/booking.js";
import type { BookingChange } from "../domain/owed.js";
export type { BookingChange };

/**
 * What the kinds planning one booking's changes read alike, read once for all of them: each kind read the booking
 * itself before, three or four reads of one document per change (`npm run bench:writes`).
 */
export interface PlanReads {
  /** The booking as stored (lean), read when the first kind asks; null for an id that is not one, or a booking that is gone. */
  booking(id: string | undefined): Promise<BookingDoc | null>;
}

/** A kind's name ("calendar", "email", ...): the kinds are registered by src/app, the engine knows none of them. */
type EffectKindName = string;

export interface PlannedEffect {
  /** Unique within (change, kind): "booker", "host", a webhook id, ... It goes into the effect's deterministic id. */
  key: string;
  /** Everything `run` needs that must not change between retries (frozen at planning time). */
  payload: Record<string, unknown>;
  webhookId?: string;
  /**
   * The account the effect is for, when not the booking's (a team booking's other host: their webhook, teams.md):
   * its share of the outbox, and whose webhook it reaches.
   */
  userId?: string;
  /**
   * Where the effect goes, as the kind names it ("webhook:<id>", "calendar:<id>"): effects of one destination run
   * one at a time per replica, and when one fails the untried others wait (per-destination backoff). Opaque to the
   * outbox; none: only the account's share limits the effect.
   */
  destination?: string;
  /** Not before this time (default: at once). */
  dueAt?: Date;
}

export interface EffectRecord {
  /** Stable across retries: use it as Message-ID / webhook-id. */
  id: string;
  kind: EffectKindName;
  userId: string;
  bookingId: string | null;
  webhookId: string | null;
  payload: Record<string, unknown>;
  /** This attempt's number: 1 on the first run, 2 on the first retry, ... */
  attempts: number;
  createdAt: Date;
}

/**
 * What a run came to: done; failed (retried on the kind's schedule, or given up when `permanent`); not yet: the
 * effect waits for something else (a meeting link still being made, a provider's Retry-After) and runs again at
 * `until` without the wait counting as a failed try; or moot: it is no longer owed (what it was for was canceled
 * or planned anew) and goes without being recorded as a try.
 */
export type RunResult =
  | { ok: true; statusCode?: number }
  | { ok: false; error: string; statusCode?: number; permanent?: boolean }
  | { ok: "later"; until: Date; reason: string }
  | { ok: "moot"; reason: string };

/** A run that was a try (done or failed): what is recorded as an attempt. */
export type TryResult = Exclude<RunResult, { ok: "later" } | { ok: "moot" }>;

export interface EffectKind {
  name: EffectKindName;
  plan(change: BookingChange, reads: PlanReads): Promise<PlannedEffect[]>;
  /** Must honour `signal` (aborted on shutdown and when the lease is lost) and never throw for an outside failure. */
  run(effect: EffectRecord, signal: AbortSignal): Promise<RunResult>;
  /** Delays between tries (the first entry is the wait after the first failure); default: the outbox's schedule. */
  retryDelaysMs?: readonly number[];
  /** Called once when the effect is given up: retries exhausted or a permanent failure. */
  giveUp?(effect: EffectRecord, lastError: string): Promise<void>;
}
