// The outbox's collections: effects (what booking changes owe the outside world, claimed with leases) and effect_attempts (every try).
import mongoose, { Schema } from "mongoose";
import { outboxConnection } from "../outboxConnection.js";

/** pending: waiting or leased (due_at is then the lease's end); failed: given up. A done effect is deleted. */
type EffectState = "pending" | "failed";

/** An effect as stored; written whole by the relay (insertMany), so it is declared rather than inferred. */
export interface EffectDoc {
  /** Deterministic (src/domain/owed.ts effectId): the message id every retry keeps. */
  _id: string;
  kind: string;
  user_id: mongoose.Types.ObjectId;
  booking_id: mongoose.Types.ObjectId | null;
  webhook_id: mongoose.Types.ObjectId | null;
  /** Where it goes (a webhook, a calendar), as its kind named it; null: no destination of its own (e-mail). */
  destination: string | null;
  /** Frozen at planning time: a retry sends what the first try sent. */
  payload: Record<string, unknown>;
  state: EffectState;
  /**
   * When a worker may take it next. A claim moves it to the end of the lease, so an effect whose worker died
   * becomes due again by itself once the lease runs out; no separate expiry scan is needed.
   */
  due_at: Date;
  /** The replica holding the lease (null when none); renewals and the result are written only by the holder. */
  lease_owner: string | null;
  lease_until: Date | null;
  /** Tries started so far (counted at claim, so a try cut short by a crash counts too). */
  attempts: number;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  /** Set when the effect is given up: the TTL index removes it 30 days later. */
  expires_at: Date | null;
}

const effectSchema = new Schema<EffectDoc>(
  {
    _id: { type: String, required: true },
    kind: { type: String, required: true },
    user_id: { type: Schema.Types.ObjectId, required: true },
    booking_id: { type: Schema.Types.ObjectId, default: null },
    webhook_id: { type: Schema.Types.ObjectId, default: null },
    destination: { type: String, default: null },
    payload: { type: Schema.Types.Mixed, required: true },
    state: { type: String, required: true },
    due_at: { type: Date, required: true },
    lease_owner: { type: String, default: null },
    lease_until: { type: Date, default: null },
    attempts: { type: Number, required: true },
    last_error: { type: String, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
    expires_at: { type: Date, default: null },
  },
  { collection: "effects", versionKey: false, minimize: false },
);

// Indexes and the queries they serve:
//   _id: the deterministic id refuses a second insert of one planned effect while it is owed; lease renewal,
//       results and the delete when done, by id
//   (state, due_at): claiming the next due effect (state pending, due_at <= now, oldest due first)
//   (state, created_at): the metrics - pending count, the oldest pending effect's age, stuck effects per account
//   (destination, state): a destination that failed - its untried effects wait (per-destination backoff)
//   expires_at: TTL, given-up effects leave after 30 days (the embedded server keeps them: memory only anyway)
effectSchema.index({ state: 1, due_at: 1 });
effectSchema.index({ state: 1, created_at: 1 });
effectSchema.index({ destination: 1, state: 1 });
effectSchema.index({ expires_at: 1 }, { expireAfterSeconds: 0 });

/** One try of one effect: what the webhook deliveries API lists, and what an operator reads when an effect fails. */
export interface EffectAttemptDoc {
  _id: mongoose.Types.ObjectId;
  effect_id: string;
  kind: string;
  user_id: mongoose.Types.ObjectId;
  webhook_id: mongoose.Types.ObjectId | null;
  /** The message's type (booking.created, ping, ...) or the booking change's. */
  event_type: string;
  /** 1-based number of the try. */
  attempt: number;
  ok: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: Date;
  /** TTL: attempts leave after 30 days. */
  expires_at: Date;
}

const effectAttemptSchema = new Schema<EffectAttemptDoc>(
  {
    effect_id: { type: String, required: true },
    kind: { type: String, required: true },
    user_id: { type: Schema.Types.ObjectId, required: true },
    webhook_id: { type: Schema.Types.ObjectId, default: null },
    event_type: { type: String, required: true },
    attempt: { type: Number, required: true },
    ok: { type: Boolean, required: true },
    status_code: { type: Number, default: null },
    error: { type: String, default: null },
    duration_ms: { type: Number, required: true },
    attempted_at: { type: Date, required: true },
    expires_at: { type: Date, required: true },
  },
  { collection: "effect_attempts", versionKey: false },
);

// Indexes and the queries they serve:
//   (user_id, webhook_id, attempted_at desc): a webhook's last 100 deliveries, newest first, on its account's shard
//   (effect_id, attempted_at): the tries of one effect
//   expires_at: TTL
effectAttemptSchema.index({ user_id: 1, webhook_id: 1, attempted_at: -1 });
effectAttemptSchema.index({ effect_id: 1, attempted_at: 1 });
effectAttemptSchema.index({ expires_at: 1 }, { expireAfterSeconds: 0 });

// On the outbox's own pool (src/db/outboxConnection.ts).
export const EffectModel = outboxConnection.model<EffectDoc>("Effect", effectSchema);
export const EffectAttemptModel = outboxConnection.model<EffectAttemptDoc>("EffectAttempt", effectAttemptSchema);

/** How long finished effects and attempts are kept. */
export const EFFECT_RETENTION_MS = 30 * 24 * 60 * 60_000;
