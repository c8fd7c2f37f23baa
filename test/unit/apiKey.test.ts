// Unit tests for API keys: format, uniqueness, digest, and the encrypted copy (round trip, tamper detection).
import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { API_KEY_LENGTH, apiKeyDigest, decryptApiKey, encryptApiKey, encryptionKey, generateApiKey, sameSecret } from "../../src/domain/apiKey.js";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

describe("generateApiKey", () => {
  it("is 73 characters of letters and digits", () => {
    expect(API_KEY_LENGTH).toBe(73);
    for (let i = 0; i < 1000; i++) expect(generateApiKey()).toMatch(/^[A-Za-z0-9]{73}$/);
  });

  it("never repeats over many keys", () => {
    const keys = new Set<string>();
    for (let i = 0; i < 20_000; i++) keys.add(generateApiKey());
    expect(keys.size).toBe(20_000);
  });

  it("uses the whole alphabet about evenly at every position", () => {
    const n = 4000;
    const counts = new Map<string, number>();
    const firstCounts = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const key = generateApiKey();
      firstCounts.set(key[0], (firstCounts.get(key[0]) ?? 0) + 1);
      for (const c of key) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    expect([...counts.keys()].sort().join("")).toBe([...ALPHABET].sort().join(""));
    // Expected 73*4000/62 ≈ 4710 per character; a modulo bias would push some far past ±15%.
    const expected = (API_KEY_LENGTH * n) / 62;
    for (const c of ALPHABET) {
      expect(counts.get(c)).toBeGreaterThan(expected * 0.85);
      expect(counts.get(c)).toBeLessThan(expected * 1.15);
    }
    // The first character is as random as the rest (about 65 each).
    for (const c of ALPHABET) expect(firstCounts.get(c) ?? 0).toBeLessThan(150);
  });
});

describe("apiKeyDigest", () => {
  it("is the SHA-256 hex of the key, stable, and differs for another key", () => {
    const key = generateApiKey();
    const digest = apiKeyDigest(key);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(digest).toBe(createHash("sha256").update(key).digest("hex"));
    expect(apiKeyDigest(key)).toBe(digest);
    expect(apiKeyDigest(key.slice(0, -1) + (key.endsWith("A") ? "B" : "A"))).not.toBe(digest);
  });

  it("hashes a key with characters beyond ASCII as UTF-8, as stored digests were made", () => {
    const key = "clé-ключ-🔑";
    expect(apiKeyDigest(key)).toBe(createHash("sha256").update(key, "utf8").digest("hex"));
  });

  it("is case-sensitive, as the key must match exactly", () => {
    expect(apiKeyDigest("abcDEF")).not.toBe(apiKeyDigest("ABCdef"));
  });
});

describe("sameSecret", () => {
  it("is true only for the same non-empty secret", () => {
    expect(sameSecret("s3cret-token-value", "s3cret-token-value")).toBe(true);
    expect(sameSecret("s3cret-token-valuE", "s3cret-token-value")).toBe(false);
    expect(sameSecret("s3cret-token-valu", "s3cret-token-value")).toBe(false);
    expect(sameSecret("s3cret-token-value-and-more", "s3cret-token-value")).toBe(false);
    expect(sameSecret("", "s3cret-token-value")).toBe(false);
    expect(sameSecret("", "")).toBe(false);
  });
});

describe("encrypted key copy", () => {
  const secret = encryptionKey(randomBytes(32));

  it("round-trips", () => {
    for (let i = 0; i < 50; i++) {
      const key = generateApiKey();
      expect(decryptApiKey(encryptApiKey(key, secret), secret)).toBe(key);
    }
  });

  it("never stores the key in clear and uses a fresh IV each time", () => {
    const key = generateApiKey();
    const a = encryptApiKey(key, secret);
    const b = encryptApiKey(key, secret);
    expect(a).not.toBe(b);
    expect(a).not.toContain(key);
    expect(a.split(".")).toHaveLength(3);
  });

  it("detects tampering with the ciphertext, the tag or the IV", () => {
    const stored = encryptApiKey(generateApiKey(), secret);
    const parts = stored.split(".");
    for (let p = 0; p < 3; p++) {
      const bytes = Buffer.from(parts[p], "base64url");
      bytes[0] ^= 0x01;
      const tampered = parts.map((x, i) => (i === p ? bytes.toString("base64url") : x)).join(".");
      expect(() => decryptApiKey(tampered, secret)).toThrow();
    }
  });

  it("cannot be read with another secret", () => {
    const stored = encryptApiKey(generateApiKey(), secret);
    expect(() => decryptApiKey(stored, encryptionKey(randomBytes(32)))).toThrow();
  });

  it("takes a 32-byte secret as the key itself and stretches any other", () => {
    const raw = randomBytes(32);
    expect(encryptionKey(raw).equals(raw)).toBe(true);
    const pass = Buffer.from("a long enough passphrase");
    expect(encryptionKey(pass).equals(createHash("sha256").update(pass).digest())).toBe(true);
    expect(encryptionKey(pass)).toHaveLength(32);
  });
});
