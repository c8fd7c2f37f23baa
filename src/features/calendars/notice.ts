// Telling the host when a calendar connection or a meeting account needs them: a calendar.connection_changed webhook message on each change of its status or warnings, and an e-mail at most once a day per connection (or account) and kind of trouble.
import { randomUUID } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import mongoose from "mongoose";
import { CalendarConnectionModel } from "../../db/models/calendar.js";
import { WebhookModel } from "../../db/models/webhook.js";
import { HOST_NOTICE_KIND, NOTICE_INTERVAL_MS, type HostNotice, type NoticeAbout, type Trouble } from "../../domain/notice.js";
import { CONNECTION_CHANGED } from "../../domain/webhook.js";
import { scheduleEffects, type EffectOwner } from "../../outbox/schedule.js";
import type { OutboxWake } from "../../outbox/wake.js";
import { errorText, logEvent } from "../../platform/log.js";
import { ProviderError } from "../../providers/index.js";
import { connectionJson } from "./present.js";

/*
 * integrations.md "When a calendar or meeting account needs the host". Choices where it is silent:
 * - Every change of status (into `error` or `invalid`, and back to `ok`) and every change of warnings sends the
 *   webhook message: an integration that mirrors the connection also wants to hear that it recovered. Only
 *   trouble is e-mailed (turning `error` or `invalid`, warnings that are not empty), at most once a day per
 *   connection and per kind: a calendar that flaps between ok and error sends one e-mail a day, not one per read.
 * - A meeting account (Zoom, features/meetings) is told of the same way, by the same code (hostNeeded): its webhook
 *   message carries `data.meeting_account` (provider, account, status, last_error, connected_at: the fields GET
 *   /integrations shows of it) where a connection's carries `data.connection`.
 * - Whoever records the change (one conditional update: recordStatus, busy.ts keepWarnings) plans its notices, so
 *   two replicas that read the same broken calendar send one message, not two.
 * - The notices are planned after the change is stored: a crash in between loses that change's notices (the
 *   connection itself still shows the status; the next change notifies again).
 */

/** A calendar connection or a meeting account of a host: where its status is kept, and how the API shows it. */
export interface NoticeSubject {
  /** calendar_connections or meeting_accounts: the document's status, and its notified_at claims of today's e-mails. */
  collection: mongoose.Collection;
  id: mongoose.Types.ObjectId;
  about: NoticeAbout;
  /** The webhook message's data and the e-mail's facts as the API shows them now; undefined when it is gone. */
  shown(): Promise<{ data: JsonObject; account: string; provider: string | null; reason: string | null; warnings: string[] } | undefined>;
}

/** Claims this kind's e-mail for today: true for exactly one caller when none was sent about it in the last day. */
async function firstToday(subject: NoticeSubject, trouble: Trouble, now: Date): Promise<boolean> {
  const field = `notified_at.${trouble}`;
  // _id index.
  const claimed = await subject.collection.updateOne(
    { _id: subject.id, $or: [{ [field]: null }, { [field]: { $lte: new Date(now.getTime() - NOTICE_INTERVAL_MS) } }] },
    { $set: { [field]: now } },
  );
  return claimed.modifiedCount === 1;
}

/**
/**
 * Plans the notices of one recorded change: `trouble` is what it turned into (null: it is fine again, or its
 * warnings were cleared); `wake` tells the outbox they are planned. Never throws: a notice that cannot be planned is
 * logged, the caller goes on.
 */
export async function hostNeeded(wake: OutboxWake, subject: NoticeSubject, userId: mongoose.Types.ObjectId, trouble: Trouble | null): Promise<void> {
  try {
    const shown = await subject.shown();
    if (!shown) return;
    const now = new Date();
    const owner: EffectOwner = { userId: userId.toHexString(), bookingId: null };
    // One change, one seed: its messages' ids (webhook-id, Message-ID) come from it.
    const seed = `${subject.about}:${subject.id.toHexString()}:${randomUUID()}`;
    // (user_id, active) index; a handful of webhooks per account, filtered here.
    const hooks = (await WebhookModel.find({ user_id: userId, active: true }, { events: 1 }).lean()).filter((h) => h.events.includes(CONNECTION_CHANGED));
    const message = { type: CONNECTION_CHANGED, timestamp: now.toISOString(), data: shown.data };
    await scheduleEffects(
      "webhook",
      owner,
      seed,
      hooks.map((h) => ({ key: h._id.toHexString(), webhookId: h._id.toHexString(), destination: `webhook:${h._id.toHexString()}`, payload: message })),
    );
    if (trouble !== null && (await firstToday(subject, trouble, now))) {
      const notice: HostNotice = { trouble, about: subject.about, provider: shown.provider, account: shown.account, reason: shown.reason, warnings: shown.warnings };
      await scheduleEffects(HOST_NOTICE_KIND, owner, seed, [{ key: trouble, payload: { ...notice } }]);
    }
    wake.owed();
  } catch (err) {
    logEvent("warn", "host notice not planned", { about: subject.about, id: subject.id.toHexString(), error: errorText(err) });
  }
}

/** The status a provider's answer makes of a connection or account: `invalid` when refused (authorize again), `error` on any other failure. */
export function statusAfter(failure: ProviderError | null): { status: "ok" | "error" | "invalid"; last_error: string | null } {
  if (failure === null) return { status: "ok", last_error: null };
  return { status: failure.kind === "refused" ? "invalid" : "error", last_error: failure.message };
}

/**
 * Stores `set` (its status and whatever goes with it) and, when this write changed the status, tells the host.
 * The status before comes back from the same write, so of two replicas recording one change only one tells.
 */
export async function recordStatus(wake: OutboxWake, subject: NoticeSubject, set: { status: string } & Record<string, unknown>): Promise<void> {
  // _id index.
  const before = await subject.collection.findOneAndUpdate({ _id: subject.id }, { $set: set }, { returnDocument: "before", projection: { status: 1, user_id: 1 } });
  if (before && before.status !== set.status) await hostNeeded(wake, subject, before.user_id as mongoose.Types.ObjectId, set.status === "ok" ? null : (set.status as Trouble));
}

/** A calendar connection as a subject of notices. */
export function connectionSubject(connectionId: mongoose.Types.ObjectId): NoticeSubject {
  return {
    collection: CalendarConnectionModel.collection,
    id: connectionId,
    about: "calendar",
    async shown() {
      const connection = await connectionJson(connectionId);
      if (!connection) return undefined;
      return {
        data: { connection },
        account: String(connection.account),
        provider: null,
        reason: typeof connection.last_error === "string" ? connection.last_error : null,
        warnings: Array.isArray(connection.warnings) ? connection.warnings.map(String) : [],
      };
    },
  };
}

/** Plans the notices of one recorded change of a connection's warnings (see hostNeeded). */
export function connectionChanged(wake: OutboxWake, connectionId: mongoose.Types.ObjectId, userId: mongoose.Types.ObjectId, trouble: Trouble | null): Promise<void> {
  return hostNeeded(wake, connectionSubject(connectionId), userId, trouble);
}
