// A calendar connection's credentials as a provider uses them: opened CalDAV/feed fields, or an OAuth session whose refreshed tokens are sealed back onto the connection.
import { CalendarConnectionModel, type CalendarConnectionDoc } from "../../db/models/calendar.js";
import { unsealWithKeyId, type Keyring } from "../../domain/secretBox.js";
import { calendarProvider, CalendarSourceError, type Credentials, type OAuthClient, type ProviderAccess, type TokenStore } from "../../providers/index.js";
import { openTokens, sealedTokenStore } from "../oauth/index.js";

/** No call was made: the connection is invalid until authorized again, or waits out a rate limit. Fails closed like any failure. */
export class HeldBack extends CalendarSourceError {}

interface AccessSettings {
  secrets: Keyring;
  oauth(provider: string): OAuthClient | undefined;
}

/** Where a connection's tokens are kept: refreshed (and rotated) ones are sealed onto it before they are used. */
function connectionTokenStore(connectionId: CalendarConnectionDoc["_id"], secrets: Keyring): TokenStore {
  return sealedTokenStore(secrets, {
    // _id index.
    write: (sealed) => CalendarConnectionModel.updateOne({ _id: connectionId }, { $set: { credentials_sealed: sealed } }),
    // _id index.
    read: async () => (await CalendarConnectionModel.findById(connectionId, { credentials_sealed: 1 }).lean<Pick<CalendarConnectionDoc, "credentials_sealed">>())?.credentials_sealed ?? null,
  });
}

/** See CalendarReader.accessOf. */
export function connectionAccess(connection: CalendarConnectionDoc, settings: AccessSettings): ProviderAccess {
  const profile = calendarProvider(connection.provider)?.oauth;
  if (!profile) return { credentials: JSON.parse(unsealWithKeyId(connection.credentials_sealed, settings.secrets)) as Credentials, oauth: null };
  if (connection.status === "invalid") throw new HeldBack("refused", connection.last_error ?? `authorize ${connection.provider} again`);
  const blockedUntil = connection.blocked_until?.getTime() ?? 0;
  if (blockedUntil > Date.now()) {
    throw new HeldBack("rate_limited", `${connection.provider} asked to slow down; no call before ${new Date(blockedUntil).toISOString()}`);
  }
  const client = settings.oauth(connection.provider);
  if (!client) throw new HeldBack("unreachable", `${connection.provider} is not configured`);
  const tokens = openTokens(connection.credentials_sealed, settings.secrets);
  return { credentials: {}, oauth: client.session(connection._id.toHexString(), tokens, connectionTokenStore(connection._id, settings.secrets)) };
}
