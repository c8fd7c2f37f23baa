// A video-meeting account authorized through OAuth (Zoom): an OAuth session whose refreshed and rotated tokens are sealed back onto its meeting_accounts document.
import { MeetingAccountModel, type MeetingAccountDoc } from "../../db/models/integration.js";
import { sealWithKeyId, unsealWithKeyId, type Keyring } from "../../domain/secretBox.js";
import { CalendarSourceError, RateLimitedError, type OAuthClient, type ProviderAccess, type TokenSet, type TokenStore } from "../../providers/index.js";

export interface MeetingAccountSettings {
  secrets: Keyring;
  oauth: ReadonlyMap<string, OAuthClient>;
}

export function sealTokens(tokens: TokenSet, secrets: Keyring): string {
  return sealWithKeyId(JSON.stringify(tokens), secrets);
}

export function openTokens(sealed: string, secrets: Keyring): TokenSet {
  return JSON.parse(unsealWithKeyId(sealed, secrets)) as TokenSet;
}

function accountTokenStore(id: MeetingAccountDoc["_id"], secrets: Keyring): TokenStore {
  return {
    async save(tokens) {
      // _id index. Zoom ends the old refresh token at once: the new one is kept before it is used.
      await MeetingAccountModel.updateOne({ _id: id }, { $set: { credentials_sealed: sealTokens(tokens, secrets) } });
    },
    async load() {
      // _id index.
      const doc = await MeetingAccountModel.findById(id, { credentials_sealed: 1 }).lean<Pick<MeetingAccountDoc, "credentials_sealed">>();
      return doc ? openTokens(doc.credentials_sealed, secrets) : null;
    },
  };
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
