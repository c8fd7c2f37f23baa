// Reservation cells of past bookings leave by themselves: every cell carries expires_at under a TTL index (read from the database itself).
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, sharedServer, type Json } from "../helpers/api.js";
import { dayFromToday, newEvent, newHost, utcIso as at } from "../helpers/fixtures.js";
import { reservationCells } from "../../src/domain/reservation.js";

const DAY_MS = 24 * 60 * 60_000;
const PADDING_MS = 15 * 60_000;

interface Cell {
  key: string;
  booking_id: mongoose.Types.ObjectId;
  expires_at?: Date;
}

describe("booking_cells expiry", () => {
  // The worker's shared server, and a connection of the test's own to its database to read the cells it stored.
  let conn: mongoose.Connection;
  let user: Json;
  let event: Json;
  const day = dayFromToday(10);

  const call = (method: string, path: string, opts: Parameters<typeof rest>[2] = {}) => rest(method, path, opts);
  const cellsOf = async (bookingId: string): Promise<Cell[]> =>
    (await conn.collection<Cell>("booking_cells").find({ booking_id: new mongoose.Types.ObjectId(bookingId) }).toArray()) as Cell[];
  const book = async (time: string): Promise<Json> => {
    const res = await call("POST", `/public/users/${user.url}/events/${event.url}/bookings`, {
      body: { booking: { attendee_name: "Ada Lovelace", attendee_email: "ada@example.com", start_time: at(day, time) } },
    });
    expect(res.status).toBe(201);
    return res.body.data;
  };

  beforeAll(async () => {
    conn = await mongoose.createConnection(sharedServer().databaseUri).asPromise();
    const host = await newHost({ full_name: "Cell Host", timezone: "UTC" });
    user = host.user;
    event = await newEvent(host, { name: "Cells", url: "cells", slot_duration: "1_hour", padding_duration: "15_minutes" });
  });
  afterAll(async () => {
    await conn?.close();
  });

  it("has a TTL index on expires_at", async () => {
    const indexes = await conn.collection("booking_cells").indexes();
    expect(indexes.find((i) => i.key.expires_at === 1)).toMatchObject({ expireAfterSeconds: 0 });
  });

  it("gives every cell of a booking the end of its blocked range plus a day", async () => {
    const b = await book("10:00");
    const cells = await cellsOf(b.id);
    expect(cells.length).toBeGreaterThan(0);
    const blockedEnd = Date.parse(b.end_time) + PADDING_MS;
    for (const c of cells) expect(c.expires_at?.toISOString()).toBe(new Date(blockedEnd + DAY_MS).toISOString());
  });

  it("after a reschedule, cells handed over keep the old booking's expiry and new cells get the new one's", async () => {
    const b = await book("14:00");
    // 15:00 blocks 15:00–16:15, 14:00 blocked 14:00–15:15: the keys of 15:00–15:15 pass from the old booking to the
    // new one in place, keeping their expiry (the old range holds their keys too, so it is late enough for them).
    const moved = await call("POST", `/public/bookings/${b.private_key}/reschedule`, { body: { booking: { start_time: at(day, "15:00") } } });
    expect(moved.status).toBe(201);
    const cells = await cellsOf(moved.body.data.id);
    expect(cells.some((c) => c.key.startsWith("R:"))).toBe(true);
    const oldExpiry = new Date(Date.parse(b.end_time) + PADDING_MS + DAY_MS).toISOString();
    const newExpiry = new Date(Date.parse(moved.body.data.end_time) + PADDING_MS + DAY_MS).toISOString();
    const expiries = cells.map((c) => c.expires_at?.toISOString());
    expect(new Set(expiries)).toEqual(new Set([oldExpiry, newExpiry]));
    expect(await cellsOf(b.id)).toEqual([]);
  });
  it("cells claimed under the earlier rule (padding before too) refuse no booking the present rule allows", async () => {
    const b = await book("18:00");
    // What a booking made before padding moved behind the meeting holds: the keys of 17:45-19:15, unprefixed.
    const old = reservationCells(new Date(Date.parse(b.start_time) - PADDING_MS), new Date(Date.parse(b.end_time) + PADDING_MS));
    const now = new Date();
    await conn.collection("booking_cells").insertMany(
      old.map((key) => ({ user_id: new mongoose.Types.ObjectId(user.id as string), key, booking_id: new mongoose.Types.ObjectId(b.id as string), created_at: now })),
    );
    const short = await call("POST", "/events", { key: user.api_key, body: { event: { name: "Short", url: "short", slot_duration: "30_minutes" } } });
    expect(short.status).toBe(201);
    // 17:30-18:00 ends as the 18:00 booking starts: free now, though inside the old claim.
    const res = await call("POST", `/public/users/${user.url}/events/short/bookings`, {
      body: { booking: { attendee_name: "Early", attendee_email: "early@example.com", start_time: at(day, "17:30") } },
    });
    expect({ status: res.status, message: res.body.message }).toEqual({ status: 201, message: "booking confirmed" });
    // And the booking itself still holds its time.
    const clash = await call("POST", `/public/users/${user.url}/events/short/bookings`, {
      body: { booking: { attendee_name: "Clash", attendee_email: "clash@example.com", start_time: at(day, "18:30") } },
    });
    expect(clash.status).toBe(409);
  });
});
