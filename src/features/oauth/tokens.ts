// An OAuth grant's tokens as the features that keep them store them: sealed with SECRETS_KEY on their document, and a TokenStore over it.
import { sealWithKeyId, unsealWithKeyId, type Keyring } from "../../domain/secretBox.js";
import type { TokenSet, TokenStore } from "../../providers/index.js";

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
