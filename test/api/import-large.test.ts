// The admin import at 10 000 bookings on the embedded server (issue 25): 1 000 entries are all written (201) or none is (503 with Retry-After), never a 500.
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt } from "../helpers/api.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";

let db: TestDatabase;
let server: RunningServer;
const call = (method: string, path: string, opts: Parameters<typeof restAt>[3] = {}) => restAt(server.baseUrl, method, `/api/v1${path}`, opts);
const bookings = () => mongoose.connection.db!.collection("bookings");

beforeAll(async () => {
  db = await startDatabase();
  server = await startServer({ MONGODB_URI: db.uri });
  // This process writes the seed straight into the service's database: through the API it would take minutes.
  await mongoose.connect(db.uri);
});

afterAll(async () => {
  await mongoose.disconnect();
  await server?.stop();
  await db?.kill();
});

describe("admin import into a large bookings collection (embedded server)", () => {
  it("1 000 entries at 10 000 bookings: all of them (201) or none (503 with Retry-After), never a 500", { timeout: 180_000 }, async () => {
    const fixtures = fixturesAt(server.baseUrl);
    const host = await fixtures.newHost({ full_name: "Large Host" });
    const userId = new mongoose.Types.ObjectId(host.user.id as string);
    const history = await fixtures.newEvent(host, { name: "History", url: "history" });
    const target = await fixtures.newEvent(host, { name: "Target", url: "target" });

    // 10 000 bookings in one insert (the embedded server's cost is per write, so one is quickest).
    const base = Date.parse("2031-01-01T00:00:00Z");
    const seed = Array.from({ length: 10_000 }, (_, n) => {
      const start = new Date(base + n * 3_600_000);
      return {
        _id: new mongoose.Types.ObjectId(),
        event_id: new mongoose.Types.ObjectId(history.id as string),
        user_id: userId,
        start_time: start,
        end_time: new Date(start.getTime() + 1_800_000),
        padding_minutes: 0,
        status: "confirmed",
        archived: false,
        attendee_name: "Seeded",
        attendee_email: `seed${n}@example.com`,
        timezone: null,
        answers: [],
        guest_emails: [],
        booked_at: start,
        private_key: `seed-${n}-${new mongoose.Types.ObjectId().toHexString()}`,
        internal_notes: null,
        cancel_reason: null,
        canceled_at: null,
        rescheduled_from: null,
        rescheduled_to: null,
        imported: true,
        updated_at: start,
      };
    });
    await bookings().insertMany(seed);
    expect(await bookings().countDocuments()).toBe(10_000);

    const entries = Array.from({ length: 1000 }, (_, i) => ({
      event_id: target.id,
      start_time: new Date(Date.parse("2032-01-01T00:00:00Z") + i * 3_600_000).toISOString(),
      attendee_name: "Imported",
      attendee_email: `imported${i}@example.com`,
    }));
    const res = await call("POST", "/admin/bookings/import", { admin: true, body: { bookings: entries }, timeoutMs: 120_000 });
    expect([201, 503], JSON.stringify(res.body)).toContain(res.status);
    const imported = () => bookings().countDocuments({ event_id: new mongoose.Types.ObjectId(target.id as string) });
    if (res.status === 201) {
      expect(res.body.data.imported).toBe(1000);
      expect(await imported()).toBe(1000);
    } else {
      expect(res.body).toEqual({ success: false, message: "service unavailable", data: {}, status: "service_unavailable" });
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      // Nothing of it, now or later (an abandoned transaction never commits): counted again once the service has
      // stopped, after its drain, when nothing of it can commit any more.
      expect(await imported()).toBe(0);
      await server.stop("SIGTERM");
      expect(await imported()).toBe(0);
    }
    expect(server.logs()).not.toMatch(/"status":500|internal server error/);
  });
});
