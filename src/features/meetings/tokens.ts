// A video-meeting account authorized through OAuth (Zoom): an OAuth session whose refreshed and rotated tokens are sealed back onto its meeting_accounts document.
import { MeetingAccountModel, type MeetingAccountDoc } from "../../db/models/integration.js";
import type { Keyring } from "../../domain/secretBox.js";
import { CalendarSourceError, RateLimitedError, type OAuthClient, type ProviderAccess, type TokenStore } from "../../providers/index.js";
import { openTokens, sealedTokenStore } from "../oauth/index.js";

export interface MeetingAccountSettings {
  secrets: Keyring;
  oauth: ReadonlyMap<string, OAuthClient>;
}

function accountTokenStore(id: MeetingAccountDoc["_id"], secrets: Keyring): TokenStore {
  return sealedTokenStore(secrets, {
    // _id index.
    write: (sealed) => MeetingAccountModel.updateOne({ _id: id }, { $set: { credentials_sealed: sealed } }),
    // _id index.
    read: async () => (await MeetingAccountModel.findById(id, { credentials_sealed: 1 }).lean<Pick<MeetingAccountDoc, "credentials_sealed">>())?.credentials_sealed ?? null,
  });
}

/** How the meeting provider reaches the account; no call where it is invalid, waits out a rate limit, or is no longer configured. */
export function meetingAccountAccess(account: MeetingAccountDoc, settings: MeetingAccountSettings): ProviderAccess {
  if (account.status === "invalid") throw new CalendarSourceError("refused", account.last_error ?? `authorize ${account.provider} again`);
  const blockedUntil = account.blocked_until?.getTime() ?? 0;
  if (blockedUntil > Date.now()) throw new RateLimitedError(account.provider, blockedUntil - Date.now());
  const client = settings.oauth.get(account.provider);
  if (!client) throw new CalendarSourceError("unreachable", `${account.provider} is not configured`);
  const tokens = openTokens(account.credentials_sealed, settings.secrets);
  return { credentials: {}, oauth: client.session(account._id.toHexString(), tokens, accountTokenStore(account._id, settings.secrets)) };
}
