// The webhooks collection: an account's URLs for signed booking messages, with the signing secret sealed.
import mongoose, { Schema } from "mongoose";

export interface WebhookDoc {
  _id: mongoose.Types.ObjectId;
  user_id: mongoose.Types.ObjectId;
  url: string;
  /** Subset of booking.created, booking.rescheduled, booking.canceled, booking.reminder. */
  events: string[];
  active: boolean;
  /** The whsec_ secret sealed with SECRETS_KEY (src/domain/secretBox.ts sealWithKeyId); never stored in the clear. */
  secret_sealed: string;
  /**
   * Its place among the account's (0 to WEBHOOKS_PER_ACCOUNT - 1): the unique (user_id, place) index holds the cap
   * under racing creates. Absent on webhooks an earlier version made; each of those shortens the range new ones
   * take a place in by one (src/features/webhooks/service.ts), so the account still holds at most the cap.
   */
  place?: number;
  /** Why it was switched off by the service (410, retries exhausted); null while active or switched off by the host. */
  deactivated_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

const webhookSchema = new Schema<WebhookDoc>(
  {
    user_id: { type: Schema.Types.ObjectId, required: true },
    url: { type: String, required: true },
    events: { type: [String], required: true },
    active: { type: Boolean, required: true },
    secret_sealed: { type: String, required: true },
    place: { type: Number },
    deactivated_reason: { type: String, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: "webhooks", versionKey: false },
);

// Indexes and the queries they serve:
//   (user_id, created_at desc): the account's webhooks, newest first; the places they hold (a create)
//   (user_id, active): planning a booking change - the owner's active webhooks (events filtered on the few found)
//   (user_id, place) unique where a place is set: creating a webhook takes a free place (read by the first index)
//   _id: one webhook, with user_id checked on the document (another account's is a 404); delivery by id
webhookSchema.index({ user_id: 1, created_at: -1 });
webhookSchema.index({ user_id: 1, active: 1 });
webhookSchema.index({ user_id: 1, place: 1 }, { unique: true, partialFilterExpression: { place: { $type: "number" } } });

export const WebhookModel = mongoose.model<WebhookDoc>("Webhook", webhookSchema);
