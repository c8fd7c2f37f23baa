// The index proof's own rules (which filter fields a query has, when a declared index serves it) and the booking snapshot's pure parts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import mongoose from "mongoose";
import { filterFields } from "../../src/db/queryShapes.js";
import { mergeChanged, snapshotOf, type SnapshotBooking } from "../../src/features/bookings/snapshots.js";
import { declaredIndexes, isServed } from "../helpers/queryShapes.js";

describe("filterFields", () => {
  it("reads plain fields, flattens $and, multiplies $or branches, ignores operator values", () => {
    expect(filterFields({ user_id: 1, start_time: { $gte: new Date() } })).toEqual([["start_time", "user_id"]]);
    expect(filterFields({ _id: new mongoose.Types.ObjectId() })).toEqual([["_id"]]);
    expect(filterFields({ $and: [{ a: 1 }, { b: 2 }] })).toEqual([["a", "b"]]);
    expect(filterFields({ user_id: 1, $or: [{ a: 1 }, { b: 2 }] })).toEqual([["a", "user_id"], ["b", "user_id"]]);
    expect(filterFields({})).toEqual([[]]);
  });
});

describe("isServed", () => {
  const indexes = [["_id"], ["user_id", "status", "start_time"], ["private_key"]];
  it("takes a query whose filter holds an index's leading field", () => {
    expect(isServed({ collection: "c", operation: "find", filters: [["start_time", "status", "user_id"]], sort: [] }, indexes)).toBe(true);
    expect(isServed({ collection: "c", operation: "find", filters: [["private_key"]], sort: [] }, indexes)).toBe(true);
  });
  it("refuses a filter on fields no index leads with, an unfiltered unsorted scan, and an $or with one bad branch", () => {
    expect(isServed({ collection: "c", operation: "find", filters: [["start_time", "status"]], sort: [] }, indexes)).toBe(false);
    expect(isServed({ collection: "c", operation: "find", filters: [[]], sort: [] }, indexes)).toBe(false);
    expect(isServed({ collection: "c", operation: "find", filters: [["user_id"], ["attendee_email"]], sort: [] }, indexes)).toBe(false);
  });
  it("takes a filtered, sorted query only when the index that narrows it also gives the order", () => {
    const sorted = (filters: string[], sort: string[]) => isServed({ collection: "c", operation: "find", filters: [filters], sort }, indexes);
    expect(sorted(["user_id", "status"], ["start_time"])).toBe(true);
    expect(sorted(["user_id"], ["status"])).toBe(true);
    expect(sorted(["private_key"], ["_id"])).toBe(false);
    // start_time follows status in the index, which this query does not filter on: the order is not the index's.
    expect(sorted(["user_id"], ["start_time"])).toBe(false);
    expect(sorted(["user_id"], ["created_at"])).toBe(false);
  });
  it("takes an unfiltered query sorted by an index's leading field", () => {
    expect(isServed({ collection: "c", operation: "find", filters: [[]], sort: ["user_id"] }, indexes)).toBe(true);
  });
  it("reads the models' declared indexes", async () => {
    const declared = await declaredIndexes();
    expect(declared.get("bookings")).toContainEqual(["user_id", "event_id", "updated_at"]);
    expect(declared.get("booking_cells")).toContainEqual(["user_id", "key"]);
  });
});

describe("mergeChanged", () => {
  const booking = (id: string, notes: string | null): SnapshotBooking => ({
    id,
    status: "confirmed",
    archived: false,
    start: new Date(0),
    end: new Date(1),
    bookedAt: new Date(0),
    attendeeName: id,
    attendeeEmail: `${id}@example.com`,
    internalNotes: notes,
    privateKey: id,
    meetingUrl: null,
    meetingStatus: "none",
    meetingError: null,
    calendarEventStatus: "none",
    calendarEventError: null,
    noShow: null,
  });
  it("replaces changed bookings by id, appends new ones, leaves the rest and the base untouched", () => {
    const base = [booking("a", null), booking("b", null)];
    const merged = mergeChanged(base, [booking("b", "x"), booking("c", null)]);
    expect(merged.map((b) => [b.id, b.internalNotes])).toEqual([["a", null], ["b", "x"], ["c", null]]);
    expect(base.map((b) => b.internalNotes)).toEqual([null, null]);
  });
});

describe("snapshotOf", () => {
  it("gives every ObjectId the id toHexString gives (the snapshot builds it from the bytes, as one flat string)", () => {
    const row = (_id: mongoose.Types.ObjectId) => {
      const at = new Date(0);
      return { _id, status: "confirmed", archived: false, start_time: at, end_time: at, booked_at: at, attendee_name: "a", attendee_email: "a@example.com", internal_notes: null, private_key: "k", meeting_url: null, calendar_event_status: "none", calendar_event_error: null } as Parameters<typeof snapshotOf>[0];
    };
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 12, maxLength: 12 }), (bytes) => {
        const id = new mongoose.Types.ObjectId(bytes);
        expect(snapshotOf(row(id)).id).toBe(id.toHexString());
      }),
    );
    for (const hex of ["000000000000000000000000", "ffffffffffffffffffffffff", "0123456789abcdef01234567"]) {
      expect(snapshotOf(row(new mongoose.Types.ObjectId(hex))).id).toBe(hex);
    }
  });
});
