// Host notices, recorded and planned: a change of a calendar connection's or meeting account's status or warnings records its notices as owed in the same write, then plans them (a calendar.connection_changed webhook message on each change, an e-mail at most once a day per connection or account and kind of trouble); a sweep plans those left owed.
import { randomUUID } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import mongoose from "mongoose";
import { noticeOwedFields } from "../../db/models/noticeOwed.js";
import { takeOnce } from "../../db/takeOnce.js";
import { WebhookModel } from "../../db/models/webhook.js";
import { HOST_NOTICE_KIND, NOTICE_INTERVAL_MS, type HostNotice, type NoticeAbout, type Trouble } from "../../domain/notice.js";
import { CONNECTION_CHANGED } from "../../domain/webhook.js";
import { scheduleEffects, type EffectOwner } from "../../outbox/schedule.js";
import type { Owing } from "../../outbox/wake.js";
import { errorText, logEvent } from "../../platform/log.js";
import { ProviderError } from "../../providers/index.js";

/*
 * integrations.md "When a calendar or meeting account needs the host". Choices where it is silent:
 * - Every change of status (into `error` or `invalid`, and back to `ok`) and every change of warnings sends the
 *   webhook message: an integration that mirrors the connection also wants to hear that it recovered. Only
 *   trouble is e-mailed (turning `error` or `invalid`, warnings that are not empty), at most once a day per
 *   connection and per kind: a calendar that flaps between ok and error sends one e-mail a day, not one per read.
 * - A meeting account (Zoom, features/meetings/status.ts) is told of the same way, by the same code: its webhook
 *   message carries `data.meeting_account` (provider, account, status, last_error, connected_at: the fields GET
 *   /integrations shows of it) where a connection's carries `data.connection`.
 * - Whoever records the change (one conditional update: recordStatus, recordChange) plans its notices, so two
 *   replicas that read the same broken calendar send one message, not two.
 * - The same write that records the change records its notices as owed (db/models/noticeOwed.ts), and planning
 *   them clears that. A replica that dies, or a database that stops answering, between the two leaves them owed;
 *   every replica's outbox sweeps them up a few seconds later (sweepOwedNotices). Planned twice, they are inserted
 *   once: their ids come from the change's own id. A newer change recorded before an older one's notices were
 *   planned takes its place: the host hears of the connection as it is now.
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

/** The document whose write recorded a change, which keeps that change's notices owed until they are planned. */
interface NoticeCarrier {
  collection: mongoose.Collection;
  id: mongoose.Types.ObjectId;
}

/** A recorded change's notices, owed until planned (db/models/noticeOwed.ts). */
interface OwedNotice {
  notice_seq: string;
  notice_trouble: Trouble | null;
  notice_owed_at: Date;
}

/** A write of a subject's carrier that may be a change its host hears of (recordChange). */
export interface NoticeChange {
  carrier: NoticeCarrier;
  /** The account the carrier belongs to: the notices' owner. */
  userId: mongoose.Types.ObjectId;
  /** What the document matches only while the change is not stored yet (its warnings not these already). */
  unless: Record<string, unknown>;
  set: Record<string, unknown>;
  /** What the change turns into: a kind of trouble, or null (fine again). */
  trouble: Trouble | null;
}

/** The owed-notice fields, as their model declares them. */
const OWED_FIELDS = Object.keys(noticeOwedFields);
/** Every owed-notice field cleared: what planning leaves. */
const NOTHING_OWED = Object.fromEntries(OWED_FIELDS.map((f) => [f, null]));

/** How long the planner of a change has before the sweep plans its notices instead. */
const SWEEP_AFTER_MS = 5_000;
/** Owed changes planned per collection and sweep; the rest wait for the next sweep. */
const SWEEP_BATCH = 20;

function owedNotice(trouble: Trouble | null, now: Date): OwedNotice {
  return { notice_seq: randomUUID(), notice_trouble: trouble, notice_owed_at: now };
}

/**
 * Claims this kind's e-mail for today: true for exactly one change when none was sent about it in the last day, and
 * again for that change if it is planned once more (its claim made, its e-mail not yet planned).
 */
async function firstToday(subject: NoticeSubject, trouble: Trouble, seq: string, now: Date): Promise<boolean> {
  const at = `notified_at.${trouble}`;
  const by = `notified_by.${trouble}`;
  // _id index.
  const claimed = await subject.collection.updateOne(
    { _id: subject.id, $or: [{ [at]: null }, { [at]: { $lte: new Date(now.getTime() - NOTICE_INTERVAL_MS) } }, { [by]: seq }] },
    { $set: { [at]: now, [by]: seq } },
  );
  return claimed.matchedCount === 1;
}

/** Plans the webhook messages and the e-mail one owed change comes to; throws when the database fails. */
async function planNotices(subject: NoticeSubject, userId: mongoose.Types.ObjectId, owed: OwedNotice, now: Date): Promise<void> {
  const shown = await subject.shown();
  if (!shown) return;
  const owner: EffectOwner = { userId: userId.toHexString(), bookingId: null };
  // One change, one seed: its messages' ids (webhook-id, Message-ID) come from it, however often it is planned.
  const seed = `${subject.about}:${subject.id.toHexString()}:${owed.notice_seq}`;
  // (user_id, active) index; a handful of webhooks per account, filtered here.
  const hooks = (await WebhookModel.find({ user_id: userId, active: true }, { events: 1 }).lean()).filter((h) => h.events.includes(CONNECTION_CHANGED));
  const message = { type: CONNECTION_CHANGED, timestamp: owed.notice_owed_at.toISOString(), data: shown.data };
  await scheduleEffects(
    "webhook",
    owner,
    seed,
    hooks.map((h) => ({ key: h._id.toHexString(), webhookId: h._id.toHexString(), destination: `webhook:${h._id.toHexString()}`, payload: message })),
    now,
  );
  const trouble = owed.notice_trouble;
  if (trouble !== null && (await firstToday(subject, trouble, owed.notice_seq, now))) {
    const notice: HostNotice = { trouble, about: subject.about, provider: shown.provider, account: shown.account, reason: shown.reason, warnings: shown.warnings };
    await scheduleEffects(HOST_NOTICE_KIND, owner, seed, [{ key: trouble, payload: { ...notice } }], now);
  }
}

/**
 * Plans the notices `carrier` owes for one recorded change, then clears them there (unless a newer change took
 * their place); `owing.wake` tells the outbox. Never throws: notices that cannot be planned now stay owed for the sweep.
 */
async function planOwedNotices(owing: Owing, subject: NoticeSubject, carrier: NoticeCarrier, userId: mongoose.Types.ObjectId, owed: OwedNotice): Promise<void> {
  try {
    await planNotices(subject, userId, owed, owing.clock.now());
    owing.wake.owed();
    // _id index.
    await carrier.collection.updateOne({ _id: carrier.id, notice_seq: owed.notice_seq }, { $set: NOTHING_OWED });
  } catch (err) {
    logEvent("warn", "host notice not planned yet; the outbox plans it later", { about: subject.about, id: subject.id.toHexString(), error: errorText(err) });
  }
}

/** The status a provider's answer makes of a connection or account: `invalid` when refused (authorize again), `error` on any other failure. */
export function statusAfter(failure: ProviderError | null): { status: "ok" | "error" | "invalid"; last_error: string | null } {
  if (failure === null) return { status: "ok", last_error: null };
  return { status: failure.kind === "refused" ? "invalid" : "error", last_error: failure.message };
}

/**
 * Stores `set` (its status and whatever goes with it) and, when this write changed the status, records the host's
 * notices as owed in the same write and plans them. Of two replicas recording one change only one changes it.
 */
export async function recordStatus(owing: Owing, subject: NoticeSubject, set: { status: string } & Record<string, unknown>): Promise<void> {
  // Again when the status changed between the two writes (another replica): each write is conditional on it.
  for (let round = 0; round < 3; round++) {
    // _id index. The status as it was: nothing to tell (the common case: a read that went as the last one did).
    const same = await subject.collection.updateOne({ _id: subject.id, status: set.status }, { $set: set });
    if (same.matchedCount === 1) return;
    const owed = owedNotice(set.status === "ok" ? null : (set.status as Trouble), owing.clock.now());
    // _id index. Of replicas recording the change at once, one takes it (src/db/takeOnce.ts), so one plans its notices.
    const before = await takeOnce<{ _id: mongoose.Types.ObjectId; user_id: unknown }>(subject.collection, { _id: subject.id, status: { $ne: set.status } }, { $set: { ...set, ...owed } }, { user_id: 1 });
    if (before) return planOwedNotices(owing, subject, subject, before.user_id as mongoose.Types.ObjectId, owed);
    // Neither matched: gone (deleted), or changed back in between.
    if ((await subject.collection.countDocuments({ _id: subject.id }, { limit: 1 })) === 0) return;
  }
}

/**
 * Stores `change.set` on its carrier unless already stored and, when this write stored it, records the notices about
 * `subject` as owed in the same write and plans them: of two replicas storing one change only one tells the host.
 */
export async function recordChange(owing: Owing, subject: NoticeSubject, change: NoticeChange): Promise<void> {
  const owed = owedNotice(change.trouble, owing.clock.now());
  // _id index. Nothing matched: another read (another replica) stored this change first, and told the host.
  const stored = await change.carrier.collection.updateOne({ _id: change.carrier.id, ...change.unless }, { $set: { ...change.set, ...owed } });
  if (stored.modifiedCount === 1) await planOwedNotices(owing, subject, change.carrier, change.userId, owed);
}

/** Where changes may owe notices: a collection and the subject each of its documents' notices are about. */
export interface NoticeSource {
  collection: mongoose.Collection;
  /** The subject of a document's notices; the document has _id, user_id and the fields named in `fields`. */
  subjectOf(doc: mongoose.mongo.Document): NoticeSubject;
  /** The document's fields subjectOf needs besides _id and user_id. */
  fields?: readonly string[];
}

/**
 * The outbox's sweep of notices left owed (a replica died, or the database stopped answering, before planning
 * them): plans those recorded more than a few seconds ago. Throws when the database fails (the outbox logs it).
 */
export function sweepOwedNotices(deps: Owing, sources: readonly NoticeSource[]): () => Promise<void> {
  return async () => {
    const cutoff = new Date(deps.clock.nowMs() - SWEEP_AFTER_MS);
    for (const source of sources) {
      const projection = Object.fromEntries(["user_id", ...OWED_FIELDS, ...(source.fields ?? [])].map((f) => [f, 1]));
      // notice_owed_at partial index.
      const owing = await source.collection.find({ notice_owed_at: { $lte: cutoff } }, { projection }).limit(SWEEP_BATCH).toArray();
      for (const doc of owing) {
        const owed = { notice_seq: String(doc.notice_seq), notice_trouble: (doc.notice_trouble ?? null) as Trouble | null, notice_owed_at: doc.notice_owed_at as Date };
        await planOwedNotices(deps, source.subjectOf(doc), { collection: source.collection, id: doc._id as mongoose.Types.ObjectId }, doc.user_id as mongoose.Types.ObjectId, owed);
      }
    }
  };
}
