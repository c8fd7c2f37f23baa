// Telling the host when a calendar connection needs them: a calendar.connection_changed webhook message on each change of its status or warnings, and an e-mail at most once a day per connection and kind of trouble.
import { randomUUID } from "node:crypto";
import mongoose from "mongoose";
import { CalendarConnectionModel } from "../../db/models/calendar.js";
import { WebhookModel } from "../../db/models/webhook.js";
import { HOST_NOTICE_KIND, NOTICE_INTERVAL_MS, type HostNotice, type Trouble } from "../../domain/notice.js";
import { CONNECTION_CHANGED } from "../../domain/webhook.js";
import { scheduleEffects, type EffectOwner } from "../../outbox/schedule.js";
import type { OutboxWake } from "../../outbox/wake.js";
import { errorText, logEvent } from "../../platform/log.js";
import { connectionJson } from "./present.js";

/*
 * integrations.md "When a calendar or meeting account needs the host". Choices where it is silent:
 * - Every change of status (into `error` or `invalid`, and back to `ok`) and every change of warnings sends the
 *   webhook message: an integration that mirrors the connection also wants to hear that it recovered. Only
 *   trouble is e-mailed (turning `error` or `invalid`, warnings that are not empty), at most once a day per
 *   connection and per kind: a calendar that flaps between ok and error sends one e-mail a day, not one per read.
 * - Whoever records the change (one conditional update; see busy.ts markConnection) plans its notices, so two
 *   replicas that read the same broken calendar send one message, not two.
 * - The notices are planned after the change is stored: a crash in between loses that change's notices (the
 *   connection itself still shows the status; the next change notifies again).
 */

/** Claims this kind's e-mail for today: true for exactly one caller when none was sent about it in the last day. */
async function firstToday(connectionId: mongoose.Types.ObjectId, trouble: Trouble, now: Date): Promise<boolean> {
  const field = `notified_at.${trouble}`;
  // _id index.
  const claimed = await CalendarConnectionModel.updateOne(
    { _id: connectionId, $or: [{ [field]: null }, { [field]: mongoose.trusted({ $lte: new Date(now.getTime() - NOTICE_INTERVAL_MS) }) }] },
    { $set: { [field]: now } },
  );
  return claimed.modifiedCount === 1;
}

/**
 * Plans the notices of one recorded change of a connection: `trouble` is what it turned into (null: it is fine
 * again, or its warnings were cleared); `wake` tells the outbox they are planned. Never throws: a notice that cannot
 * be planned is logged, the read goes on.
 */
export async function connectionChanged(wake: OutboxWake, connectionId: mongoose.Types.ObjectId, userId: mongoose.Types.ObjectId, trouble: Trouble | null): Promise<void> {
  try {
    const connection = await connectionJson(connectionId);
    if (!connection) return;
    const now = new Date();
    const owner: EffectOwner = { userId: userId.toHexString(), bookingId: null };
    // One change, one seed: its messages' ids (webhook-id, Message-ID) come from it.
    const seed = `connection:${connectionId.toHexString()}:${randomUUID()}`;
    // (user_id, active) index; a handful of webhooks per account, filtered here.
    const hooks = (await WebhookModel.find({ user_id: userId, active: true }, { events: 1 }).lean()).filter((h) => h.events.includes(CONNECTION_CHANGED));
    const message = { type: CONNECTION_CHANGED, timestamp: now.toISOString(), data: { connection } };
    await scheduleEffects(
      "webhook",
      owner,
      seed,
      hooks.map((h) => ({ key: h._id.toHexString(), webhookId: h._id.toHexString(), destination: `webhook:${h._id.toHexString()}`, payload: message })),
    );
    if (trouble !== null && (await firstToday(connectionId, trouble, now))) {
      const notice: HostNotice = {
        trouble,
        account: String(connection.account),
        reason: typeof connection.last_error === "string" ? connection.last_error : null,
        warnings: Array.isArray(connection.warnings) ? connection.warnings.map(String) : [],
      };
      await scheduleEffects(HOST_NOTICE_KIND, owner, seed, [{ key: trouble, payload: { ...notice } }]);
    }
    wake.owed();
  } catch (err) {
    logEvent("warn", "calendar notice not planned", { connection_id: connectionId.toHexString(), error: errorText(err) });
  }
}
