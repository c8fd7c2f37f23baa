// The outbox's pure parts: retry waits (schedule, jitter, giving up), a failing destination's rest, deterministic effect ids, owed-change records.
import { describe, expect, it } from "vitest";
import { changesOf, effectId, recordBookingChange } from "../../src/domain/owed.js";
import { DEFAULT_RETRY_DELAYS_MS, destinationPauseMs, JITTER, maxAttempts, retryDelayMs } from "../../src/outbox/retry.js";

const HOUR = 3_600_000;

describe("a failing destination's rest", () => {
  it("doubles from 30 s per failure in a row, up to 30 min, and scales with the retry factor", () => {
    expect([1, 2, 3, 4, 6, 7, 50].map((n) => destinationPauseMs(n))).toEqual([30_000, 60_000, 120_000, 240_000, 960_000, 1_800_000, 1_800_000]);
    expect(destinationPauseMs(0)).toBe(30_000);
    expect(destinationPauseMs(2, 0.001)).toBe(60);
  });
});

describe("retry schedule", () => {
  it("retries the first failure within 30 s, then further apart, for at least 24 h", () => {
    const waits = DEFAULT_RETRY_DELAYS_MS.map((_, i) => retryDelayMs(DEFAULT_RETRY_DELAYS_MS, i + 1, 1) as number);
    expect(waits[0]).toBeLessThanOrEqual(30_000);
    for (let i = 1; i < waits.length; i++) expect(waits[i]).toBeGreaterThanOrEqual(waits[i - 1]);
    expect(DEFAULT_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(24 * HOUR);
  });

  it("jitter only lengthens a wait, by at most JITTER", () => {
    const schedule = [10_000, 60_000];
    expect(retryDelayMs(schedule, 1, 0)).toBe(10_000);
    expect(retryDelayMs(schedule, 1, 1)).toBe(Math.round(10_000 * (1 + JITTER)));
    for (const r of [0, 0.25, 0.5, 0.99, 1, -3, 7]) {
      const d = retryDelayMs(schedule, 2, r) as number;
      expect(d).toBeGreaterThanOrEqual(60_000);
      expect(d).toBeLessThanOrEqual(60_000 * (1 + JITTER));
    }
  });

  it("gives up after the last wait: one try plus one per wait", () => {
    const schedule = [1, 2, 3];
    expect(maxAttempts(schedule)).toBe(4);
    expect(retryDelayMs(schedule, 3, 0)).toBe(3);
    expect(retryDelayMs(schedule, 4, 0)).toBeUndefined();
    expect(retryDelayMs(schedule, 0, 0)).toBeUndefined();
  });

  it("scales every wait (tests)", () => {
    expect(retryDelayMs([5000], 1, 0, 0.001)).toBe(5);
  });
});

describe("effect ids", () => {
  const booking = "65a1b2c3d4e5f60718293a4b";
  it("are the same for the same change, kind and key", () => {
    expect(effectId(booking, 1, "webhook", "w1")).toBe(effectId(booking, 1, "webhook", "w1"));
    expect(effectId(booking, 1, "webhook", "w1")).toMatch(/^msg_[A-Za-z0-9_-]{24}$/);
  });
  it("differ when any part differs", () => {
    const ids = new Set([
      effectId(booking, 1, "webhook", "w1"),
      effectId(booking, 2, "webhook", "w1"),
      effectId(booking, 1, "email", "w1"),
      effectId(booking, 1, "webhook", "w2"),
      effectId("65a1b2c3d4e5f60718293a4c", 1, "webhook", "w1"),
    ]);
    expect(ids.size).toBe(5);
  });
});

describe("owed changes", () => {
  it("a new booking owes seq 1; a later change appends with the next seq and keeps what is still owed", () => {
    const at = new Date("2030-01-01T00:00:00Z");
    const created = recordBookingChange(undefined, { type: "created", at });
    expect(created).toEqual({ changes_owed: [{ seq: 1, type: "created", at }], owed_seq: 1, changes_pending: true });
    const canceled = recordBookingChange(created, { type: "canceled", at, canceledBy: "host" });
    expect(canceled.owed_seq).toBe(2);
    expect(canceled.changes_owed.map((c) => [c.seq, c.type, c.canceled_by])).toEqual([[1, "created", undefined], [2, "canceled", "host"]]);
    // After the relay cleared the array, the seq keeps counting.
    expect(recordBookingChange({ changes_owed: [], owed_seq: 2 }, { type: "canceled", at }).changes_owed).toEqual([{ seq: 3, type: "canceled", at }]);
  });
  it("are handed to kinds with the booking's ids", () => {
    const id = { toHexString: () => "b1" };
    const user = { toHexString: () => "u1" };
    const at = new Date(0);
    expect(changesOf({ _id: id, user_id: user, changes_owed: [{ seq: 1, type: "rescheduled", at, previous_booking_id: "b0" }] })).toEqual([
      { bookingId: "b1", userId: "u1", seq: 1, type: "rescheduled", at, previousBookingId: "b0" },
    ]);
  });
  it("a change the relay planned already is not handed out again, when a write that read the booking earlier sets it back", () => {
    const at = new Date(0);
    const booking = { _id: { toHexString: () => "b1" }, user_id: { toHexString: () => "u1" } };
    // The cancel read [created] before the relay planned and cleared it, and writes [created, canceled].
    const stale = recordBookingChange(recordBookingChange(undefined, { type: "created", at }), { type: "canceled", at, canceledBy: "booker" });
    expect(changesOf({ ...booking, ...stale, planned_seq: 1 }).map((c) => [c.seq, c.type])).toEqual([[2, "canceled"]]);
    expect(changesOf({ ...booking, ...stale, planned_seq: 2 })).toEqual([]);
    expect(changesOf({ ...booking, ...stale }).map((c) => c.seq)).toEqual([1, 2]);
  });
  it("a reschedule carries who moved it and the host's reason to the kinds; no reason, no field", () => {
    const at = new Date(0);
    const booking = { _id: { toHexString: () => "b1" }, user_id: { toHexString: () => "u1" } };
    const byHost = recordBookingChange(undefined, { type: "rescheduled", at, previousBookingId: "b0", movedBy: "host", reason: "Flight moved" });
    expect(byHost.changes_owed).toEqual([{ seq: 1, type: "rescheduled", at, previous_booking_id: "b0", moved_by: "host", reason: "Flight moved" }]);
    expect(changesOf({ ...booking, ...byHost })).toEqual([{ bookingId: "b1", userId: "u1", seq: 1, type: "rescheduled", at, previousBookingId: "b0", movedBy: "host", reason: "Flight moved" }]);
    const byBooker = recordBookingChange(undefined, { type: "rescheduled", at, previousBookingId: "b0", movedBy: "booker", reason: null });
    expect(byBooker.changes_owed).toEqual([{ seq: 1, type: "rescheduled", at, previous_booking_id: "b0", moved_by: "booker" }]);
  });
  it("carry whom the booker limits withheld the change's mail from, and nothing when everyone is mailed", () => {
    const at = new Date(0);
    const quiet = recordBookingChange(undefined, { type: "canceled", at, notify: { booker: false, guests: false } });
    expect(quiet.changes_owed).toEqual([{ seq: 1, type: "canceled", at, withheld: ["booker", "guests"] }]);
    expect(recordBookingChange(undefined, { type: "created", at, notify: { booker: true, guests: true } }).changes_owed).toEqual([{ seq: 1, type: "created", at }]);
    const [change] = changesOf({ _id: { toHexString: () => "b1" }, user_id: { toHexString: () => "u1" }, changes_owed: [{ seq: 1, type: "created", at, withheld: ["guests"] }] });
    expect(change.withheld).toEqual(["guests"]);
  });
});
