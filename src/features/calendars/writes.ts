// The one writer of calendar connections and calendars: every write ends in its follow-up duty (the account's stamp, which public slots read the calendars under; a change of status or warnings its host's notices and the outbox's wake), so no write path can forget one.
import mongoose from "mongoose";
import { accountChanged } from "../../db/accountVersions.js";
import { isDuplicateKey } from "../../db/errors.js";
import { CalendarConnectionModel, CalendarModel, type CalendarConnectionDoc, type CalendarDoc } from "../../db/models/calendar.js";
import type { Owing } from "../../outbox/wake.js";
import type { ProviderCalendar } from "../../providers/index.js";
import { releaseCalendars } from "../events/index.js";
import { recordChange, recordStatus, type NoticeSource, type NoticeSubject } from "../notices/index.js";
import { connectionJson } from "./present.js";

/** Longest calendar name stored: a provider may send any length. */
const NAME_MAX = 200;

/** A calendar of a connection as stored when it is first listed, whichever way the connection was made. */
export function calendarDoc(userId: mongoose.Types.ObjectId, connectionId: mongoose.Types.ObjectId, provider: string, c: ProviderCalendar, now: Date) {
  return {
    _id: new mongoose.Types.ObjectId(),
    user_id: userId,
    connection_id: connectionId,
    provider,
    name: c.name.slice(0, NAME_MAX) || "Calendar",
    email: c.email,
    can_write: c.canWrite,
    check_for_conflicts: true,
    url: c.url,
    warnings: c.warnings ?? [],
    created_at: now,
  };
}

/**
 * A new connection with its calendars (calendarDoc). False, with nothing of it left, when the account already holds
 * a connection to the same provider account (`identity_claimed`: another authorization landed first).
 */
export async function insertConnection(connection: Omit<CalendarConnectionDoc, "notified_at" | "notified_by" | "notice_seq" | "notice_trouble" | "notice_owed_at">, calendars: readonly ReturnType<typeof calendarDoc>[]): Promise<boolean> {
  // Calendars first: a connection is listed only once its calendars are all there.
  if (calendars.length > 0) await CalendarModel.insertMany(calendars);
  try {
    await CalendarConnectionModel.collection.insertOne(connection);
  } catch (err) {
    if (!isDuplicateKey(err, "provider_account_id")) throw err;
    // (user_id, connection_id) index. No connection names them: nothing reads them but this.
    await CalendarModel.deleteMany({ user_id: connection.user_id, connection_id: connection._id });
    return false;
  }
  await accountChanged([connection.user_id], "settings");
  return true;
}

/** Deletes the account's connection with its calendars (and so its credentials); events that wrote to them go back to no calendar first. */
export async function deleteConnection(userId: mongoose.Types.ObjectId, connectionId: mongoose.Types.ObjectId, calendarIds: readonly string[]): Promise<void> {
  // Events first, so no event is ever left pointing at a calendar that is gone.
  await releaseCalendars(userId, calendarIds);
  // (user_id, connection_id) index.
  await CalendarModel.deleteMany({ user_id: userId, connection_id: connectionId });
  // _id index. The credentials go with the document.
  await CalendarConnectionModel.deleteOne({ _id: connectionId, user_id: userId });
  await accountChanged([userId], "settings");
}

/** Whether the account's calendar's busy times block its slots. */
export async function setCheckForConflicts(userId: mongoose.Types.ObjectId, calendarId: mongoose.Types.ObjectId, checkForConflicts: boolean): Promise<void> {
  // _id index, owner checked.
  await CalendarModel.updateOne({ _id: calendarId, user_id: userId }, { $set: { check_for_conflicts: checkForConflicts } });
  await accountChanged([userId], "settings");
}

/**
 * Authorizing the same provider account again repairs its connection: same connection and calendar ids, the host's
 * check_for_conflicts choices kept, `tokens` (account, credentials_sealed) replacing the old ones, status ok. Calendars
 * new to the list are added; ones no longer in it are removed (and events that wrote to them let go). Answers the
 * ids of the calendars it held, whose busy times are to be read again.
 */
export async function repairConnection(
  owing: Owing,
  existing: Pick<CalendarConnectionDoc, "_id" | "user_id" | "provider">,
  tokens: Pick<CalendarConnectionDoc, "account" | "credentials_sealed">,
  found: readonly ProviderCalendar[],
  now: Date,
): Promise<string[]> {
  // (user_id, connection_id) index.
  const held = await CalendarModel.find({ user_id: existing.user_id, connection_id: existing._id }).lean<CalendarDoc[]>();
  const byUrl = new Map(held.map((c) => [c.url ?? "", c]));
  const fresh: ReturnType<typeof calendarDoc>[] = [];
  for (const c of found) {
    const same = byUrl.get(c.url ?? "");
    if (!same) fresh.push(calendarDoc(existing.user_id, existing._id, existing.provider, c, now));
    else {
      byUrl.delete(c.url ?? "");
      // _id index.
      await CalendarModel.updateOne({ _id: same._id }, { $set: { name: c.name.slice(0, NAME_MAX) || "Calendar", email: c.email, can_write: c.canWrite } });
    }
  }
  const gone = [...byUrl.values()].map((c) => c._id);
  await releaseCalendars(existing.user_id, gone.map((id) => id.toHexString()));
  if (gone.length > 0) await CalendarModel.deleteMany({ _id: mongoose.trusted({ $in: gone }) });
  if (fresh.length > 0) await CalendarModel.insertMany(fresh);
  // The tokens of this authorization replace the old ones; the rest of the connection stays. A connection that
  // was invalid or error is ok now, a change of status the host's webhooks hear like any other (recordStatus).
  await recordStatus(owing, connectionSubject(existing._id), { ...tokens, status: "ok", last_error: null, last_synced_at: now, blocked_until: null });
  await accountChanged([existing.user_id], "settings");
  return held.map((c) => c._id.toHexString());
}

/** The connection's OAuth tokens, refreshed (sealed). Slots do not read them: no stamp. */
export async function storeCredentials(connectionId: mongoose.Types.ObjectId, sealed: string): Promise<void> {
  // _id index.
  await CalendarConnectionModel.updateOne({ _id: connectionId }, { $set: { credentials_sealed: sealed } });
}

/**
 * Stores `set` (the connection's status and whatever goes with it: last_error, last_synced_at, blocked_until);
 * a change of status owes the host's notices, recorded in the same write and planned (recordStatus).
 */
export async function recordConnectionStatus(owing: Owing, connectionId: mongoose.Types.ObjectId, set: { status: string } & Record<string, unknown>): Promise<void> {
  await recordStatus(owing, connectionSubject(connectionId), set);
}

/**
 * Stores a calendar's new warnings and, when this write changed them (another replica may have stored them first),
 * records the connection's notices as owed in the same write and plans them. The calendar as slots keep it holds
 * the old warnings, which would be written again on every read: the stamp.
 */
export async function recordCalendarWarnings(owing: Owing, calendar: Pick<CalendarDoc, "_id" | "connection_id" | "user_id">, warnings: readonly string[]): Promise<void> {
  await recordChange(owing, connectionSubject(calendar.connection_id), {
    carrier: { collection: CalendarModel.collection, id: calendar._id },
    userId: calendar.user_id,
    unless: { warnings: { $ne: [...warnings] } },
    set: { warnings: [...warnings] },
    trouble: warnings.length > 0 ? "warnings" : null,
  });
  await accountChanged([calendar.user_id], "settings");
}

/** A calendar connection as a subject of notices: its status fields are written by the notices' recordStatus, through this writer's collection. */
function connectionSubject(connectionId: mongoose.Types.ObjectId): NoticeSubject {
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

/** The notices of connections' status and calendars' warnings, for the outbox's sweep of those left owed. */
export const calendarNoticeSources: readonly NoticeSource[] = [
  { collection: CalendarConnectionModel.collection, subjectOf: (doc) => connectionSubject(doc._id as mongoose.Types.ObjectId) },
  { collection: CalendarModel.collection, subjectOf: (doc) => connectionSubject(doc.connection_id as mongoose.Types.ObjectId), fields: ["connection_id"] },
];
