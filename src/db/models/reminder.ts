// The reminders collection (messages timed to each booking of an event) and reminder_deliveries (one per booking and reminder, with its status).
import mongoose, { Schema } from "mongoose";
import type { Channel, DeliveryStatus, Recipient, ReminderFields } from "../../domain/reminder.js";

/** A reminder as stored; written whole on create (insertOne), so it is declared rather than inferred. */
export interface ReminderDoc extends ReminderFields {
  _id: mongoose.Types.ObjectId;
  user_id: mongoose.Types.ObjectId;
  event_id: mongoose.Types.ObjectId;
  /**
   * 1 on create, +1 on every change (and on delete): deliveries are planned for one version, so a delivery of an
   * older one never goes out, and re-planning knows what it is catching up with.
   */
  version: number;
  /** Deleted reminders stay (their deliveries name them) but are gone for the API. */
  deleted: boolean;
  /**
   * Which of the event's REMINDERS_PER_EVENT places it holds (0-9) while not deleted: a unique index over the
   * undeleted ones makes the limit hold however many creates come at once.
   */
  place: number;
  created_at: Date;
  updated_at: Date;
}

const reminderSchema = new Schema<ReminderDoc>(
  {
    user_id: { type: Schema.Types.ObjectId, required: true },
    event_id: { type: Schema.Types.ObjectId, required: true },
    timing: { type: String, required: true },
    offset_minutes: { type: Number, required: true },
    recipients: { type: String, required: true },
    channel: { type: String, required: true },
    subject: { type: String, default: null },
    body: { type: String, default: null },
    active: { type: Boolean, required: true },
    version: { type: Number, required: true },
    deleted: { type: Boolean, required: true },
    place: { type: Number, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: "reminders", versionKey: false, minimize: false },
);

// Indexes and the queries they serve:
//   (user_id, event_id, deleted, created_at): an event's reminders oldest first, their count (at most 10), the ones a
//       booking's deliveries are planned from, on the account's shard
//   (user_id, event_id, place) unique among undeleted: at most REMINDERS_PER_EVENT per event, also under concurrent
//       creates; led by the shard key (docs/operations.md)
//   (user_id, deleted): whether an account has any reminder at all (a booking change of an account without one
//       plans nothing for reminders)
//   _id: one reminder, with user_id checked on the document (another account's is a 404)
reminderSchema.index({ user_id: 1, event_id: 1, deleted: 1, created_at: 1 });
reminderSchema.index({ user_id: 1, deleted: 1 });
reminderSchema.index({ user_id: 1, event_id: 1, place: 1 }, { unique: true, partialFilterExpression: { deleted: false } });

/** One reminder's delivery for one booking; written whole on first planning (insertOne), then by conditional updates. */
export interface ReminderDeliveryDoc {
  _id: mongoose.Types.ObjectId;
  user_id: mongoose.Types.ObjectId;
  event_id: mongoose.Types.ObjectId;
  booking_id: mongoose.Types.ObjectId;
  reminder_id: mongoose.Types.ObjectId;
  /** The reminder's version this delivery was planned for. */
  version: number;
  /** +1 on every write: planning writes only over the state it read (optimistic concurrency). */
  rev: number;
  /** The reminder's, when planned: what the API shows as `unsubscribed` depends on them. */
  recipients: ReminderFields["recipients"];
  channel: Channel;
  due_at: Date;
  status: DeliveryStatus;
  sent_at: Date | null;
  /** The outbox effect that fires the delivery at due_at (none unless scheduled). */
  effect_ids: string[];
  /** Why it was skipped or failed, in plain words. */
  reason: string | null;
  /** The booker's message was counted against the booker limits (once, whatever the retries). */
  booker_counted: boolean;
  /**
   * When each reader's e-mail was handed to the mail server: a run of the same e-mail again (its replica lost the
   * lease after sending, or died before the outbox deleted the effect) finds it here and sends nothing. By reader
   * (`booker`, `host`), a team booking's other hosts as `host:<user id>`.
   */
  mailed?: Partial<Record<Recipient | `${Recipient}:${string}`, Date>>;
  created_at: Date;
  updated_at: Date;
}

const deliverySchema = new Schema<ReminderDeliveryDoc>(
  {
    user_id: { type: Schema.Types.ObjectId, required: true },
    event_id: { type: Schema.Types.ObjectId, required: true },
    booking_id: { type: Schema.Types.ObjectId, required: true },
    reminder_id: { type: Schema.Types.ObjectId, required: true },
    version: { type: Number, required: true },
    rev: { type: Number, required: true },
    recipients: { type: String, required: true },
    channel: { type: String, required: true },
    due_at: { type: Date, required: true },
    status: { type: String, required: true },
    sent_at: { type: Date, default: null },
    effect_ids: { type: [String], default: [] },
    reason: { type: String, default: null },
    booker_counted: { type: Boolean, default: false },
    mailed: { type: Schema.Types.Mixed, default: undefined },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: "reminder_deliveries", versionKey: false, minimize: false },
);

// Indexes and the queries they serve:
//   (user_id, booking_id, reminder_id) unique: one delivery per booking and reminder, whoever plans it; led by the
//       shard key (docs/operations.md); by its prefix a booking's deliveries (GET /bookings/<id>, planning a booking
//       change); the delivery an effect is about
//   (user_id, reminder_id, status): re-planning a changed reminder - its deliveries still scheduled (also of bookings
//       that have ended, for follow-ups)
deliverySchema.index({ user_id: 1, booking_id: 1, reminder_id: 1 }, { unique: true });
deliverySchema.index({ user_id: 1, reminder_id: 1, status: 1 });

export const ReminderModel = mongoose.model<ReminderDoc>("Reminder", reminderSchema);
export const ReminderDeliveryModel = mongoose.model<ReminderDeliveryDoc>("ReminderDelivery", deliverySchema);
