// Unit test for the request ids the observer makes (src/platform/http/observe.ts newRequestId): version 4 UUIDs as crypto.randomUUID writes them, all different.
import { describe, expect, it } from "vitest";
import { newRequestId } from "../../src/platform/http/observe.js";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("newRequestId", () => {
  it("makes version 4 UUIDs, never the same twice, across refills of its random pool", () => {
    const ids = Array.from({ length: 2000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(UUID_V4);
    expect(new Set(ids).size).toBe(ids.length);
    expect(crypto.randomUUID()).toMatch(UUID_V4);
  });

  it("uses every hex digit in every free position", () => {
    const ids = Array.from({ length: 2000 }, () => newRequestId());
    for (let at = 0; at < 36; at++) {
      if ([8, 13, 14, 18, 23].includes(at)) continue;
      expect(new Set(ids.map((id) => id[at])).size, `position ${at}`).toBe(at === 19 ? 4 : 16);
    }
  });
});
