// Sealing stored secrets: AES-256-GCM under a key id, readable after a rotation, refused when altered or the key is unknown.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { keyringOf, sealWithKeyId, unsealWithKeyId } from "../../src/domain/secretBox.js";

describe("sealWithKeyId", () => {
  const oldKey = randomBytes(32);
  const newKey = Buffer.from("a passphrase of sixteen or more characters");

  it("round-trips, with a fresh IV each time, and never shows the plain text", () => {
    const ring = keyringOf(newKey);
    const a = sealWithKeyId('{"password":"hunter2"}', ring);
    const b = sealWithKeyId('{"password":"hunter2"}', ring);
    expect(a).not.toBe(b);
    expect(a).not.toContain("hunter2");
    expect(a.startsWith(`${ring.currentId}:`)).toBe(true);
    expect(unsealWithKeyId(a, ring)).toBe('{"password":"hunter2"}');
  });

  it("reads what an older key sealed once it is listed as previous; new seals use the new key", () => {
    const sealedBefore = sealWithKeyId("secret", keyringOf(oldKey));
    const rotated = keyringOf(newKey, [oldKey]);
    expect(unsealWithKeyId(sealedBefore, rotated)).toBe("secret");
    expect(sealWithKeyId("secret", rotated).split(":")[0]).toBe(keyringOf(newKey).currentId);
    expect(() => unsealWithKeyId(sealedBefore, keyringOf(newKey))).toThrow(/not configured/);
  });

  it("refuses an altered ciphertext", () => {
    const ring = keyringOf(oldKey);
    const sealed = sealWithKeyId("secret", ring);
    const last = sealed.at(-1) === "A" ? "B" : "A";
    expect(() => unsealWithKeyId(sealed.slice(0, -1) + last, ring)).toThrow();
  });
});
