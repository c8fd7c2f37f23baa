// A booking's private key: 43 url-safe characters that carry the host's account (so a lookup by key goes to that account's shard) and 160 random bits (so no one can guess one).
import { randomBytes } from "node:crypto";

const ACCOUNT_BYTES = 12;
const RANDOM_BYTES = 20;

/**
 * A new private key of the account `accountId` (24 hex digits): base64url of the account's 12 bytes and 20 random
 * ones, 43 characters as before. Unique by construction (the random part), and found by (user_id, private_key).
 */
export function newPrivateKey(accountId: string): string {
  return Buffer.concat([Buffer.from(accountId, "hex"), randomBytes(RANDOM_BYTES)]).toString("base64url");
}

/**
 * The account a key names (24 hex digits), or null when it cannot be a key. Keys made before they carried the
 * account (32 random bytes) read as some account too; the lookup by (user_id, private_key) then finds nothing,
 * and such keys are found through booking_keys.
 */
export function accountOfPrivateKey(key: string): string | null {
  if (!/^[A-Za-z0-9_-]{43}$/.test(key)) return null;
  return Buffer.from(key, "base64url").subarray(0, ACCOUNT_BYTES).toString("hex");
}

/** Whether the key was made by newPrivateKey for this account (else it is an older, fully random one). */
export function keyNamesAccount(key: string, accountId: string): boolean {
  return accountOfPrivateKey(key) === accountId;
}

