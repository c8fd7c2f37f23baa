// The host's lists stay right after writes made by another replica: snapshots refresh by what changed, one refresh at a time.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import mongoose from "mongoose";
import { bookingsOfEvent } from "../../src/features/bookings/snapshots.js";
import { systemClock } from "../../src/domain/clock.js";
import { ownEvent } from "../../src/features/events/own.js";
import type { UserDoc } from "../../src/db/models/user.js";
import { restAt, type Json } from "../helpers/api.js";
import { dayFromToday, utcIso as at } from "../helpers/bookings.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";

describe("booking snapshots across replicas", () => {
  let db: TestDatabase;
  let writer: RunningServer;
  let reader: RunningServer;
  let key: string;
  let user: Json;
  let event: Json;
  const day = dayFromToday(5);

  const call = (server: RunningServer, method: string, path: string, opts: Parameters<typeof restAt>[3] = {}) =>
    restAt(server.baseUrl, method, `/api/v1${path}`, opts);
  /** Every upcoming booking the reader replica lists, by id. */
  const listed = async (): Promise<Map<string, Json>> => {
    const res = await call(reader, "GET", `/events/${event.id}/bookings?category=upcoming&page[limit]=500&date_from=${day}&date_to=${day}`, { key });
    expect(res.status).toBe(200);
    return new Map((res.body.data.records as Json[]).map((b) => [b.id, b]));
  };
  const book = async (time: string): Promise<Json> => {
    const res = await call(writer, "POST", `/public/users/${user.url}/events/${event.url}/bookings`, {
      body: { booking: { attendee_name: "Ada Lovelace", attendee_email: `ada-${time.replace(":", "")}@example.com`, start_time: at(day, time) } },
    });
    expect(res.status).toBe(201);
    return res.body.data;
  };

  beforeAll(async () => {
    db = await startDatabase();
    [writer, reader] = await Promise.all([startServer({ MONGODB_URI: db.uri }), startServer({ MONGODB_URI: db.uri })]);
    const fixtures = fixturesAt(writer.baseUrl);
    const host = await fixtures.newHost({ full_name: "Snap Host", timezone: "UTC" });
    user = host.user;
    key = host.key;
    event = await fixtures.newEvent(host, { name: "Snap", url: "snap", slot_duration: "15_minutes" });
    // Imported history the reader loads whole once.
    const bookings = Array.from({ length: 40 }, (_, i) => ({
      event_id: event.id,
      start_time: at(day, `${String(Math.floor(i / 4)).padStart(2, "0")}:${String((i % 4) * 15).padStart(2, "0")}`),
      attendee_name: `Old ${i}`,
      attendee_email: `old${i}@example.com`,
    }));
    expect((await call(writer, "POST", "/admin/bookings/import", { admin: true, body: { bookings } })).status).toBe(201);
  });
  afterAll(async () => {
    await Promise.all([writer?.stop(), reader?.stop()]);
    await db?.kill();
  });

  it("a reader replica sees every kind of write of the other replica on its next read", async () => {
    expect((await listed()).size).toBe(40);

    const first = await book("12:00");
    let seen = await listed();
    expect(seen.size).toBe(41);
    expect(seen.get(first.id)?.attendee_name).toBe("Ada Lovelace");

    const patched = await call(writer, "PATCH", `/bookings/${first.id}`, { key, body: { booking: { internal_notes: "bring slides" } } });
    expect(patched.status).toBe(200);
    seen = await listed();
    expect(seen.get(first.id)?.internal_notes).toBe("bring slides");

    const moved = await call(writer, "POST", `/public/bookings/${first.private_key}/reschedule`, { body: { booking: { start_time: at(day, "13:00") } } });
    expect(moved.status).toBe(201);
    seen = await listed();
    expect(seen.has(first.id)).toBe(false);
    expect(seen.get(moved.body.data.id)?.start_time).toBe(at(day, "13:00"));

    const canceled = await call(writer, "POST", `/bookings/${moved.body.data.id}/cancel`, { key, body: { booking: { reason: "ill" } } });
    expect(canceled.status).toBe(200);
    seen = await listed();
    expect(seen.size).toBe(40);
    expect(seen.has(moved.body.data.id)).toBe(false);
  });

  it("ten concurrent readers right after a write all see it", async () => {
    const fresh = await book("15:00");
    const lists = await Promise.all(Array.from({ length: 10 }, () => listed()));
    for (const l of lists) expect(l.get(fresh.id)?.attendee_email).toBe("ada-1500@example.com");
    // Concurrent identical reads may share one computed page (src/features/bookings/service.ts, reusablePage): it must be
    // the page a read of its own computes once the reuse window (1 s) is over.
    await new Promise((r) => setTimeout(r, 1100));
    const alone = await listed();
    for (const l of lists) expect([...l.entries()]).toEqual([...alone.entries()]);
    // And the writer's own replica, whose snapshot was never loaded, agrees.
    const own = await call(writer, "GET", `/events/${event.id}/bookings_counts?date_from=${day}&date_to=${day}`, { key });
    expect(own.status).toBe(200);
    expect(own.body.data.upcoming).toBe(41);
  });

  it("readers of one event that ask in the same turn share one stamp read and one event read, and still see the writes before them", async () => {
    // This process reads the snapshots itself (as a third replica would) so the queries can be counted.
    await mongoose.connect(db.uri);
    const stampReads: string[] = [];
    const eventReads: string[] = [];
    mongoose.set("debug", (collection: string, operation: string) => {
      if (collection === "booking_versions") stampReads.push(operation);
      if (collection === "events") eventReads.push(operation);
    });
    try {
      const fresh = await book("16:00");
      const ofEvent = { _id: new mongoose.Types.ObjectId(event.id as string), user_id: new mongoose.Types.ObjectId(user.id as string) };
      const together = await Promise.all(Array.from({ length: 10 }, () => bookingsOfEvent(ofEvent, systemClock)));
      expect(stampReads).toEqual(["findOne"]);
      for (const b of together) expect(b).toBe(together[0]);
      expect(together[0].some((b) => b.id === fresh.id)).toBe(true);

      // A reader that asks after the shared read was sent gets a read of its own, which sees a write made since.
      const patched = await call(writer, "PATCH", `/bookings/${fresh.id}`, { key, body: { booking: { internal_notes: "shared?" } } });
      expect(patched.status).toBe(200);
      const after = await bookingsOfEvent(ofEvent, systemClock);
      expect(stampReads).toEqual(["findOne", "findOne"]);
      expect(after.find((b) => b.id === fresh.id)?.internalNotes).toBe("shared?");

      // The lists' event lookup is shared the same way, and the event as another replica has just renamed it.
      const host = { _id: new mongoose.Types.ObjectId(user.id as string) } as UserDoc;
      const renamed = await call(writer, "PATCH", `/events/${event.id}`, { key, body: { event: { name: "Snap renamed" } } });
      expect(renamed.status).toBe(200);
      const events = await Promise.all(Array.from({ length: 10 }, () => ownEvent(host, event.id as string, true)));
      expect(eventReads).toEqual(["findOne"]);
      for (const e of events) expect(e).toBe(events[0]);
      expect(events[0].name).toBe("Snap renamed");
      // Another account asking for the same event in the same turn is not given it.
      const stranger = { _id: new mongoose.Types.ObjectId() } as UserDoc;
      const [mine, theirs] = await Promise.allSettled([ownEvent(host, event.id as string, true), ownEvent(stranger, event.id as string, true)]);
      expect(mine.status).toBe("fulfilled");
      expect(theirs.status).toBe("rejected");
    } finally {
      mongoose.set("debug", false);
      await mongoose.disconnect();
    }
  });
});
