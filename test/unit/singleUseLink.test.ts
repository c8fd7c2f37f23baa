// Which booking may take a single-use link (src/domain/singleUseLink.ts linkOpenTo): an active link, or the one booking that took it already, while the link is neither revoked nor expired.
import { describe, expect, it } from "vitest";
import { linkOpenTo, linkStatus } from "../../src/domain/singleUseLink.js";

const now = new Date("2026-12-04T12:00:00Z");
const later = new Date("2026-12-05T12:00:00Z");
const earlier = new Date("2026-12-03T12:00:00Z");
const active = { used_at: null, revoked_at: null, expires_at: later, booking_id: null };
const takenBy = (id: string) => ({ ...active, used_at: earlier, booking_id: { toString: () => id } });

describe("linkOpenTo", () => {
  it("is open to any booking while the link is active", () => {
    expect(linkStatus(active, now)).toBe("active");
    expect(linkOpenTo(active, "b1", now)).toBe(true);
  });

  it("is open to the booking that took it (its keyed retry) and to no other", () => {
    expect(linkStatus(takenBy("b1"), now)).toBe("used");
    expect(linkOpenTo(takenBy("b1"), "b1", now)).toBe(true);
    expect(linkOpenTo(takenBy("b1"), "b2", now)).toBe(false);
  });

  it("is closed to that booking too once the link is revoked or has expired", () => {
    expect(linkOpenTo({ ...takenBy("b1"), revoked_at: earlier }, "b1", now)).toBe(false);
    expect(linkOpenTo({ ...takenBy("b1"), expires_at: now }, "b1", now)).toBe(false);
    expect(linkOpenTo({ ...active, expires_at: earlier }, "b1", now)).toBe(false);
  });
});
