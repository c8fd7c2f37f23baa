// The booking-change feed of an account with a long history (callers.md "Booking changes"): a change written on one replica reaches a stream open on another within 1 s however many changes the feed already holds.
import mongoose from "mongoose";
import { describe, expect, it } from "vitest";
import { restAt } from "../helpers/api.js";
import { watch } from "../helpers/changeFeed.js";
import { dayFromToday, fixturesAt, utcIso } from "../helpers/fixtures.js";
import { useReplicas } from "../helpers/replicas.js";
import { until } from "../helpers/wait.js";

const replicas = useReplicas(2, {});

/** The bucket size of src/db/models/bookingChange.ts: the feed's layout the history below is written in. */
const BUCKET = 50;
/** The history: 10 000 changes, the size of the benchmark. */
const BUCKETS = 200;

/**
 * Writes `BUCKETS` full buckets of changes as the account's feed, as appends would have left them. Straight into the
 * database: through the API, 10 000 changes take many minutes on the embedded server.
 */
async function writeHistory(userId: mongoose.Types.ObjectId, booking: Record<string, unknown>): Promise<void> {
  const at = new Date();
  const buckets = Array.from({ length: BUCKETS }, (_, block) => {
    const changes: Record<string, unknown> = {};
    const keys: Record<string, number> = {};
    for (let seq = block * BUCKET + 1; seq <= (block + 1) * BUCKET; seq++) {
      const key = `history-${seq}`;
      keys[key] = seq;
      changes[String(seq)] = {
        key,
        type: "booking.updated",
        at,
        // A stored booking, so each bucket weighs what a real one does.
        booking: { ...booking, _id: new mongoose.Types.ObjectId() },
      };
    }
    return { _id: new mongoose.Types.ObjectId(), user_id: userId, block, next: (block + 1) * BUCKET + 1, changes, keys, created_at: at, updated_at: at, expires_at: null };
  });
  // In place of the one bucket the booking's own change opened.
  await replicas.direct.collection("booking_changes").deleteMany({ user_id: userId });
  await replicas.direct.collection("booking_changes").insertMany(buckets);
}

describe("a long feed, two replicas of one database", () => {
  it("a stream on the other replica sees each edit within 1 s of its answer with 10 000 changes of history", { timeout: 180_000 }, async () => {
    const [a, b] = replicas.servers;
    const at = fixturesAt(a.baseUrl);
    const host = await at.newHost();
    const event = await at.newEvent(host);
    const booking = await at.book(host, event, { start_time: utcIso(dayFromToday(3), "10:00") });
    const stored = await replicas.direct.collection("bookings").findOne({ _id: new mongoose.Types.ObjectId(String(booking.id)) }, { projection: { feed_owed: 0, changes_owed: 0 } });
    await writeHistory(new mongoose.Types.ObjectId(String(host.user.id)), stored!);

    const w = watch("grpc", host.key, "", b.baseUrl);
    try {
      await until("the stream's first bookmark", () => w.got.length > 0);
      const lags: number[] = [];
      const answeredNotes: string[] = [];
      for (let i = 0; answeredNotes.length < 7; i++) {
        expect(i, "edits answered 503 again and again").toBeLessThan(20);
        const notes = `edit ${i}`;
        const res = await restAt(a.baseUrl, "PATCH", `/api/v1/bookings/${String(booking.id)}`, { key: host.key, body: { booking: { internal_notes: notes } } });
        // A loaded machine may run the database past its deadline (503, whether written or not): another edit.
        if (res.status === 503) continue;
        expect(res.status).toBe(200);
        answeredNotes.push(notes);
        const answered = performance.now();
        await until(`"${notes}" on the other replica's stream`, () => w.got.some((c) => c.booking?.internalNotes === notes), { everyMs: 10 });
        lags.push(performance.now() - answered);
      }
      // callers.md asks 1 s at p99 of a benchmark; seven edits on a machine the rest of the suite loads are held to it
      // at the median. A look that reads the whole feed misses it by far: past the database's deadline, a 503.
      lags.sort((x, y) => x - y);
      expect(lags[3], `lags ${lags.map((l) => l.toFixed(0)).join(", ")} ms`).toBeLessThan(1000);
      // Every edit once, in order, numbered after the history.
      const edits = w.got.filter((c) => c.type === "booking.updated" && answeredNotes.includes(String(c.booking?.internalNotes)));
      expect(edits.map((c) => c.booking?.internalNotes)).toEqual(answeredNotes);
    } finally {
      await w.stop();
    }
  });
});
