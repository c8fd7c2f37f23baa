// The feed's pure rules (src/domain/bookingFeed.ts): what a write records, and tokens that round-trip and refuse what is not one.
import { describe, expect, it } from "vitest";
import { bookingOfChange, feedFields, positionOf, tokenOf } from "../../src/domain/bookingFeed.js";

const account = "0123456789abcdef01234567";

describe("feedFields", () => {
  it("numbers a booking's changes from 1, each with an id of its own and the booking as written, keeps the last eight, and marks the booking for the sweep", () => {
    const at = new Date("2030-01-01T00:00:00Z");
    const booking = { _id: "b1", status: "confirmed", changes_owed: [], feed_n: 3, feed_owed: [] };
    let state = feedFields(undefined, { type: "booking.created", at }, booking);
    expect(state).toEqual({ feed_owed: [{ id: state.feed_owed[0].id, n: 1, type: "booking.created", at, booking: { _id: "b1", status: "confirmed" } }], feed_n: 1, feed_pending: true });
    expect(state.feed_owed[0].id).toMatch(/^[0-9a-f]{24}$/);
    for (let i = 0; i < 9; i++) state = feedFields(state, { type: "booking.updated", at }, booking);
    expect(state.feed_n).toBe(10);
    expect(state.feed_owed.map((o) => o.n)).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
    expect(new Set(state.feed_owed.map((o) => o.id)).size).toBe(8);
    expect(feedFields(undefined, { type: "booking.rescheduled", at, previousBookingId: "b" }, booking).feed_owed[0].previous_booking_id).toBe("b");
    expect(bookingOfChange({ a: 1, owed_seq: 2, planned_seq: 1, changes_pending: true, feed_pending: true })).toEqual({ a: 1 });
  });

  it("names the hosts a reassign took the booking from, whose feeds get the change too; none named when it left no one", () => {
    const at = new Date("2030-01-01T00:00:00Z");
    expect(feedFields(undefined, { type: "booking.updated", at, previousHostIds: [account] }, {}).feed_owed[0].previous_host_ids).toEqual([account]);
    expect(feedFields(undefined, { type: "booking.updated", at, previousHostIds: [] }, {}).feed_owed[0]).not.toHaveProperty("previous_host_ids");
  });
});

describe("tokens", () => {
  it("round-trip, stay short and opaque", () => {
    for (const seq of [0, 1, 49, 50, 123_456_789]) {
      const token = tokenOf({ accountId: account, seq });
      expect(token.length).toBeLessThanOrEqual(128);
      expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(positionOf(token)).toEqual({ accountId: account, seq });
    }
  });

  it("refuse what is not a token", () => {
    for (const bad of ["", "nonsense", "x".repeat(200), "bc1:zz:1", Buffer.from(`bc1:${account}:-1`).toString("base64url"), Buffer.from(`bc2:${account}:1`).toString("base64url"), "a b", `${tokenOf({ accountId: account, seq: 7 })}A`, Buffer.from(`bc1:${account}:07`).toString("base64url")]) {
      expect(positionOf(bad), bad).toBeUndefined();
    }
  });
});
