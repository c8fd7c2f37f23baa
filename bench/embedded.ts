// What a single write costs the embedded database (jongodb) as the bookings collection grows: the figures behind docs/operations.md's and the start-up warning's stated limits.
import mongoose from "mongoose";
import { startDatabase } from "../test/helpers/jongodb.js";

/*
 * Starts the embedded server alone, gives a `bookings` collection the service's indexes, and at each size in
 * BENCH_EMBEDDED_SIZES (default 1000,2000,5000,10000) times RUNS single inserts and RUNS single updates by _id
 * (median), the two writes a booking, a cancel or a reschedule make. Run with `npm run bench:embedded`.
 * The service's own deadline for one database operation (src/db/connection.ts) is the bar: a write slower than
 * it answers 503 instead of booking.
 */

const SIZES = (process.env.BENCH_EMBEDDED_SIZES ?? "1000,2000,5000,10000").split(",").map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const db = await startDatabase();
const conn = await mongoose.createConnection(db.uri).asPromise();
try {
  await import("../src/db/models/booking.js");
  const bookings = conn.collection("bookings");
  for (const [fields, options] of mongoose.model("Booking").schema.indexes()) await bookings.createIndex(fields as never, options as never);
  const event = new mongoose.Types.ObjectId();
  const doc = (i: number) => ({
    event_id: event,
    user_id: event,
    start_time: new Date(Date.now() + i * 60_000),
    end_time: new Date(Date.now() + i * 60_000 + 1_800_000),
    padding_minutes: 0,
    status: "confirmed",
    archived: false,
    attendee_name: `Attendee ${i}`,
    attendee_email: `attendee${i}@example.com`,
    timezone: null,
    answers: [],
    guest_emails: [],
    booked_at: new Date(),
    private_key: `key-${i}`,
    internal_notes: null,
    updated_at: new Date(),
  });
  const lines = ["| bookings in the collection | insertOne ms (median) | updateOne by _id ms (median) |", "|---:|---:|---:|"];
  let count = 0;
  for (const size of SIZES) {
    for (; count < size - RUNS; count += 1000) {
      const batch = Array.from({ length: Math.min(1000, size - RUNS - count) }, (_, i) => doc(count + i));
      await bookings.insertMany(batch);
    }
    count = size - RUNS;
    const inserts: number[] = [];
    const ids: mongoose.Types.ObjectId[] = [];
    for (let i = 0; i < RUNS; i++) {
      const d = { ...doc(count++), _id: new mongoose.Types.ObjectId() };
      const t0 = performance.now();
      await bookings.insertOne(d);
      inserts.push(performance.now() - t0);
      ids.push(d._id);
    }
    const updates: number[] = [];
    for (const id of ids) {
      const t0 = performance.now();
      await bookings.updateOne({ _id: id }, { $set: { internal_notes: "x", updated_at: new Date() } });
      updates.push(performance.now() - t0);
    }
    lines.push(`| ${size.toLocaleString("en-US")} | ${median(inserts).toFixed(0)} | ${median(updates).toFixed(0)} |`);
  }
  process.stdout.write(lines.join("\n") + "\n");
} finally {
  await conn.close();
  await db.kill();
}
