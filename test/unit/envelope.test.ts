// The envelope of frozen data is serialised once and reused: the text must be the one a fresh serialisation makes.
import { describe, expect, it } from "vitest";
import { deepFreeze } from "../../src/domain/frozen.js";
import { envelope, envelopeBody } from "../../src/platform/rest/envelope.js";

describe("envelopeBody", () => {
  const data = () => ({ page: { limit: 2, number: 1 }, records: [{ id: "a", name: "Ünïcødé ✓" }, { id: "b", name: null }] });

  it("gives frozen data the same text and byte count as a fresh serialisation, every time", () => {
    const frozen = deepFreeze(data());
    const fresh = JSON.stringify(envelope(200, "Bookings found", data()));
    const first = envelopeBody(200, "Bookings found", frozen);
    expect(first).toEqual({ text: fresh, bytes: Buffer.byteLength(fresh), shared: true });
    expect(envelopeBody(200, "Bookings found", frozen)).toBe(first);
    expect(envelopeBody(200, "other message", frozen).text).toBe(JSON.stringify(envelope(200, "other message", data())));
  });

  it("serialises data that is not frozen anew, so a change shows", () => {
    const open = data();
    const before = envelopeBody(200, "m", open).text;
    open.records[0].name = "changed";
    expect(envelopeBody(200, "m", open).text).not.toBe(before);
    expect(envelopeBody(200, "m", open).text).toContain("changed");
  });
});
