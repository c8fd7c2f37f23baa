// Calendar connections made through OAuth (purpose `calendar`): made on the first authorization, repaired in place on the next, and revoked on disconnect unless another account holds the same provider account.
import mongoose from "mongoose";
import { CalendarConnectionModel, type CalendarConnectionDoc } from "../../db/models/calendar.js";
import { unavailable } from "../../domain/errors.js";
import { calendarProvider, ProviderError } from "../../providers/index.js";
import type { AuthorizedAccount, Purpose } from "../oauth/index.js";
import type { CalendarReader } from "./busy.js";
import { revokeSealedGrant, sealTokens } from "../oauth/index.js";
import { calendarDoc, insertConnection, repairConnection } from "./writes.js";

/** The `calendar` purpose of an authorization: makes the account's connection to the provider account (once the person confirmed), or repairs it. */
export function calendarPurpose(reader: CalendarReader): Purpose {
  return { connect: connectAuthorizedCalendar(reader), grantHeld: async (provider, providerAccountId) => (await CalendarConnectionModel.exists({ provider_account_id: providerAccountId, provider })) !== null };
}

function connectAuthorizedCalendar(reader: CalendarReader): (account: AuthorizedAccount) => Promise<void> {
  return async (account) => {
    const provider = calendarProvider(account.client.provider);
    if (!provider?.listCalendars) throw new ProviderError("not_found", `${account.client.provider} has no calendars`);
    const found = await provider.listCalendars({ access: { credentials: {}, oauth: account.session }, settings: reader.settings, signal: account.signal });
    const now = reader.settings.clock.now();
    const tokens = { account: account.identity.email, credentials_sealed: sealTokens(account.session.current(), reader.settings.secrets) };
    // (user_id, created_at) index by its prefix: a host has few connections.
    const existing = () => CalendarConnectionModel.findOne({ user_id: account.userId, provider: provider.name, provider_account_id: account.identity.id }).lean<CalendarConnectionDoc>();
    const repair = async (held: CalendarConnectionDoc) => reader.forget(await repairConnection(reader.settings, held, tokens, found, now));
    // An insert refused means another authorization of the same provider account landed a moment ago and made the
    // connection: this one's tokens repair it, as a later authorization would. (A disconnect between the two reads
    // sends it round again.)
    for (let attempt = 0; attempt < 3; attempt++) {
      const held = await existing();
      if (held) return repair(held);
      const connection = {
        _id: new mongoose.Types.ObjectId(),
        user_id: account.userId,
        provider: provider.name,
        ...tokens,
        provider_account_id: account.identity.id,
        identity_claimed: true,
        blocked_until: null,
        status: "ok",
        last_error: null,
        last_synced_at: now,
        created_at: now,
      };
      if (await insertConnection(connection, found.map((c) => calendarDoc(account.userId, connection._id, provider.name, c, now)))) return;
    }
    throw unavailable("the calendar connection changed while it was being made; try again");
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
