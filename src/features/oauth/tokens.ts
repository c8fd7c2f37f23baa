// An OAuth grant's tokens as the features that keep them store them: sealed with SECRETS_KEY on their document, a TokenStore over it, and their revocation.
import { sealWithKeyId, unsealWithKeyId, type Keyring } from "../../domain/secretBox.js";
import { errorText, logEvent } from "../../platform/log.js";
import { ProviderError, withDeadline, type OAuthClient, type TokenSet, type TokenStore } from "../../providers/index.js";

export function sealTokens(tokens: TokenSet, secrets: Keyring): string {
  return sealWithKeyId(JSON.stringify(tokens), secrets);
}

/** Tokens as sealed on a calendar connection or a meeting account: the JSON of a TokenSet. */
export function openTokens(sealed: string, secrets: Keyring): TokenSet {
  return JSON.parse(unsealWithKeyId(sealed, secrets)) as TokenSet;
}

/**
 * A TokenStore over one document's sealed credentials: refreshed (and rotated) tokens are sealed onto it before they
 * are used, since a provider that rotates ends the old refresh token at once. `read` answers null when the document
 * is gone.
 */
export function sealedTokenStore(secrets: Keyring, credentials: { write(sealed: string): Promise<unknown>; read(): Promise<string | null> }): TokenStore {
  return {
    async save(tokens) {
      await credentials.write(sealTokens(tokens, secrets));
    },
    async load() {
      const sealed = await credentials.read();
      return sealed === null ? null : openTokens(sealed, secrets);
    },
  };
}

/**
 * Revokes the grant whose tokens are sealed in `sealed` (by its refresh token, else its access token). The caller
 * forgets the tokens whatever happens (providers.md): a revocation that fails is logged, not thrown.
 */
export async function revokeSealedGrant(client: OAuthClient, sealed: string, secrets: Keyring, timeoutMs: number): Promise<void> {
  try {
    const tokens = openTokens(sealed, secrets);
    await withDeadline(timeoutMs, (signal) => client.revoke(tokens.refresh_token ?? tokens.access_token, signal));
  } catch (err) {
    logEvent("warn", "revocation failed; the tokens are forgotten anyway", { provider: client.provider, error: err instanceof ProviderError ? err.message : errorText(err) });
  }
}
