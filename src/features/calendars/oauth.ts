// Calendar connections made through OAuth (purpose `calendar`): made on the first authorization, repaired in place on the next, and revoked on disconnect unless another account holds the same provider account.
import mongoose from "mongoose";
import { accountChanged } from "../../db/accountVersions.js";
import { CalendarConnectionModel, CalendarModel, type CalendarConnectionDoc, type CalendarDoc } from "../../db/models/calendar.js";
import { EventModel } from "../../db/models/event.js";
import { NO_CALENDAR_SELECTED } from "../../domain/event.js";
import { calendarProvider, ProviderError, type ProviderCalendar } from "../../providers/index.js";
import type { AuthorizedAccount, Purpose } from "../oauth/index.js";
import type { CalendarReader } from "./busy.js";
import { revokeSealedGrant, sealTokens } from "../oauth/index.js";
import { connectionSubject, recordStatus, statusAfter } from "./notice.js";

/** Longest calendar name stored: a provider may send any length. */
const NAME_MAX = 200;

/** Events that wrote to these calendars go back to no calendar, so none points at a calendar that is gone. */
export async function releaseCalendars(userId: mongoose.Types.ObjectId, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  // (user_id, created_at) index by its prefix.
  await EventModel.updateMany({ user_id: userId, connected_calendar_id: mongoose.trusted({ $in: ids }) }, { $set: { connected_calendar_id: NO_CALENDAR_SELECTED } });
}

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
 * Authorizing the same provider account again repairs its connection: same connection and calendar ids, the host's
 * check_for_conflicts choices kept, new tokens, status ok. Calendars new to the list are added; ones no longer in
 * it are removed (and events that wrote to them let go).
 */
async function repair(reader: CalendarReader, existing: CalendarConnectionDoc, account: AuthorizedAccount, found: ProviderCalendar[], now: Date): Promise<void> {
  // connection_id index.
  const held = await CalendarModel.find({ connection_id: existing._id }).lean<CalendarDoc[]>();
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
  await recordStatus(reader.settings.wake, connectionSubject(existing._id), {
    account: account.identity.email,
    credentials_sealed: sealTokens(account.session.current(), reader.settings.secrets),
    ...statusAfter(null),
    last_synced_at: now,
    blocked_until: null,
  });
  await accountChanged([existing.user_id], "settings");
  reader.forget(held.map((c) => c._id.toHexString()));
}

/** The `calendar` purpose of an authorization: makes the account's connection to the provider account (once the person confirmed), or repairs it. */
export function calendarPurpose(reader: CalendarReader): Purpose {
  return { connect: connectAuthorizedCalendar(reader), grantHeld: async (provider, providerAccountId) => (await CalendarConnectionModel.exists({ provider_account_id: providerAccountId, provider })) !== null };
}

function connectAuthorizedCalendar(reader: CalendarReader): (account: AuthorizedAccount) => Promise<void> {
  return async (account) => {
    const provider = calendarProvider(account.client.provider);
    if (!provider?.listCalendars) throw new ProviderError("not_found", `${account.client.provider} has no calendars`);
    const found = await provider.listCalendars({ access: { credentials: {}, oauth: account.session }, settings: reader.settings, signal: account.signal });
    const now = new Date();
    // (user_id, created_at) index by its prefix: a host has few connections.
    const existing = await CalendarConnectionModel.findOne({ user_id: account.userId, provider: provider.name, provider_account_id: account.identity.id }).lean<CalendarConnectionDoc>();
    if (existing) return repair(reader, existing, account, found, now);
    const connection = {
      _id: new mongoose.Types.ObjectId(),
      user_id: account.userId,
      provider: provider.name,
      account: account.identity.email,
      credentials_sealed: sealTokens(account.session.current(), reader.settings.secrets),
      provider_account_id: account.identity.id,
      blocked_until: null,
      status: "ok",
      last_error: null,
      last_synced_at: now,
      created_at: now,
    };
    // Calendars first: a connection is listed only once its calendars are all there.
    await CalendarModel.insertMany(found.map((c) => calendarDoc(account.userId, connection._id, provider.name, c, now)));
    await CalendarConnectionModel.collection.insertOne(connection);
    await accountChanged([account.userId], "settings");
  };
}

/** Revocation gets the same time as a read: disconnecting never waits long on a provider. */
export async function revokeUnlessShared(reader: CalendarReader, connection: CalendarConnectionDoc): Promise<void> {
  const client = reader.settings.oauth.get(connection.provider);
  if (!client || connection.provider_account_id === null) return;
  // provider_account_id index. Another account of ours on the same provider account would lose its grant too.
  const shared = await CalendarConnectionModel.exists({ provider_account_id: connection.provider_account_id, provider: connection.provider, user_id: mongoose.trusted({ $ne: connection.user_id }) });
  if (!shared) await revokeSealedGrant(client, connection.credentials_sealed, reader.settings.secrets, reader.settings.timeoutMs);
}
