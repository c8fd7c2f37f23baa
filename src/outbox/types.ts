// The outbox's contract with the kinds of effect (calendar, e-mail, webhook): what a booking change is, what a kind plans and runs.
export type EffectKindName = "calendar" | "email" | "webhook";
export type BookingChangeType = "created" | "rescheduled" | "canceled";

/** One change a booking still owes the outside world, as the relay hands it to every kind's `plan`. */
export interface BookingChange {
  bookingId: string;
  userId: string;
  /** 1, 2, ... per booking: with the booking id it names the change, so planning it twice makes the same effect ids. */
  seq: number;
  type: BookingChangeType;
  at: Date;
  /** rescheduled: the booking this one replaced. */
  previousBookingId?: string;
  /** canceled: who canceled. */
  canceledBy?: "host" | "booker";
}

export interface PlannedEffect {
  /** Unique within (change, kind): "booker", "host", a webhook id, ... It goes into the effect's deterministic id. */
  key: string;
  /** Everything `run` needs that must not change between retries (frozen at planning time). */
  payload: Record<string, unknown>;
  webhookId?: string;
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

export type RunResult = { ok: true; statusCode?: number } | { ok: false; error: string; statusCode?: number; permanent?: boolean };

export interface EffectKind {
  name: EffectKindName;
  plan(change: BookingChange): Promise<PlannedEffect[]>;
  /** Must honour `signal` (aborted on shutdown and when the lease is lost) and never throw for an outside failure. */
  run(effect: EffectRecord, signal: AbortSignal): Promise<RunResult>;
  /** Delays between tries (the first entry is the wait after the first failure); default: the outbox's schedule. */
  retryDelaysMs?: readonly number[];
  /** Called once when the effect is given up: retries exhausted or a permanent failure. */
  giveUp?(effect: EffectRecord, lastError: string): Promise<void>;
}
