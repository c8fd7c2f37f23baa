// How a provider reaches an account authorized through OAuth, whoever keeps its grant (a calendar connection, a video-meeting account): one path, one refusal when no call may be made.
import { ProviderError, RateLimitedError, type OAuthClient, type ProviderAccess } from "../../providers/index.js";
import type { Clock } from "../../domain/clock.js";
import type { Keyring } from "../../domain/secretBox.js";
import { openTokens, sealedTokenStore } from "./tokens.js";

/** What the features that keep grants hand over: the keyring their tokens are sealed with, and the operator's OAuth clients. */
export interface OAuthAccessSettings {
  secrets: Keyring;
  /** By provider name; a provider that connects through OAuth but is missing here is not configured. */
  oauth: ReadonlyMap<string, OAuthClient>;
  /** What a provider's "wait until" is read against (`Deps.clock`); calendars read their cache's ages by it too. */
  clock: Clock;
}

/** The fields of a document that keeps a grant (calendar_connections, meeting_accounts) this path reads. */
export interface GrantHolder {
  _id: { toHexString(): string };
  provider: string;
  status: string;
  last_error?: string | null;
  blocked_until?: Date | null;
  credentials_sealed: string;
}

/** Where the holder's sealed tokens are read and written (its own document): refreshed ones are sealed there before use. */
export interface SealedCredentials {
  write(sealed: string): Promise<unknown>;
  read(): Promise<string | null>;
}

/**
 * A session over the holder's tokens that refreshes them (storing rotated ones first). No call is made, and the
 * ProviderError says so (`noCall`), where the grant is known to be gone (`invalid`: authorize again), the provider
 * asked us to wait and the time is not up (RateLimitedError), or the operator no longer configures the provider.
 */
export function grantAccess(holder: GrantHolder, credentials: SealedCredentials, settings: OAuthAccessSettings): ProviderAccess {
  const provider = holder.provider;
  if (holder.status === "invalid") throw new ProviderError("refused", holder.last_error ?? `authorize ${provider} again`, { noCall: true });
  const blockedFor = (holder.blocked_until?.getTime() ?? 0) - settings.clock.nowMs();
  if (blockedFor > 0) throw new RateLimitedError(provider, blockedFor, { noCall: true });
  const client = settings.oauth.get(provider);
  if (!client) throw new ProviderError("unreachable", `${provider} is not configured`, { noCall: true });
  const tokens = openTokens(holder.credentials_sealed, settings.secrets);
  return { credentials: {}, oauth: client.session(holder._id.toHexString(), tokens, sealedTokenStore(settings.secrets, credentials)) };
}
