// AES-256-GCM for everything stored encrypted (API key copies, calendar credentials), with key ids so keys can rotate.
import { createCipheriv, createDecipheriv, createHash, hash, randomBytes } from "node:crypto";

/** Normalises a configured secret (raw 32 bytes or a passphrase) to an AES-256 key. */
export function encryptionKey(secret: Buffer): Buffer {
  return secret.length === 32 ? secret : createHash("sha256").update(secret).digest();
}

/** AES-256-GCM with a fresh 96-bit IV; the stored form is iv.tag.ciphertext in base64url. */
export function seal(plain: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url")).join(".");
}

/** The inverse of `seal`; throws when the text was not sealed with `key` or was altered. */
export function unseal(stored: string, key: Buffer): string {
  const [iv, tag, body] = stored.split(".").map((p) => Buffer.from(p, "base64url"));
  const decipher = createDecipheriv("aes-256-gcm", key, iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
}

/** The key that seals, and every key that may still open what older keys sealed. */
export interface Keyring {
  currentId: string;
  keys: ReadonlyMap<string, Buffer>;
}

/**
 * A key's id: 8 hex characters of a digest of it (not of the key alone, so the id tells nothing usable about
 * the key). Stored beside each ciphertext, so after a rotation the old key can still be found to read it.
 */
function keyId(key: Buffer): string {
  return hash("sha256", Buffer.concat([Buffer.from("scheduling-key-id:"), key]), "hex").slice(0, 8);
}

/** `current` seals; `previous` (older keys of a rotation) only open. */
export function keyringOf(current: Buffer, previous: readonly Buffer[] = []): Keyring {
  const keys = new Map<string, Buffer>();
  for (const k of [current, ...previous].map(encryptionKey)) if (!keys.has(keyId(k))) keys.set(keyId(k), k);
  return { currentId: keyId(encryptionKey(current)), keys };
}

/** `<key id>:<iv.tag.ciphertext>` under the ring's current key. */
export function sealWithKeyId(plain: string, ring: Keyring): string {
  return `${ring.currentId}:${seal(plain, ring.keys.get(ring.currentId) as Buffer)}`;
}

/** Opens a `sealWithKeyId` text with whichever key of the ring sealed it; throws when that key is not configured. */
export function unsealWithKeyId(stored: string, ring: Keyring): string {
  const colon = stored.indexOf(":");
  const key = colon < 0 ? undefined : ring.keys.get(stored.slice(0, colon));
  if (key === undefined) throw new Error("stored secret was sealed with a key that is not configured (SECRETS_KEY / SECRETS_KEY_PREVIOUS)");
  return unseal(stored.slice(colon + 1), key);
}
