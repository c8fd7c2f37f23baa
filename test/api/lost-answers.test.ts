// A write whose answer is lost keeps its reservation cells (issue 29): a fault proxy between the service and its database applies the write and drops the answer, and the booking written all the same still holds its time.
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, useServer, type Json } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { startDbProxy, type DbProxy } from "../helpers/dbProxy.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

let db: TestDatabase;
let proxy: DbProxy;
let server: RunningServer;
/** The database seen directly, not through the proxy: what the service stored. */
let direct: mongoose.Connection;
let host: Host;
let event: Json;

beforeAll(async () => {
  db = await startDatabase();
  proxy = await startDbProxy(db.uri);
  server = await startServer({ MONGODB_URI: proxy.uri });
  useServer(server.baseUrl);
  direct = await mongoose.createConnection(db.uri).asPromise();
  host = await newHost();
  event = await newEvent(host);
});

afterAll(async () => {
  useServer(undefined);
  await server?.stop("SIGKILL");
  await direct?.close();
  await proxy?.close();
  await db?.kill();
});

const bookingsAt = (start: string) => direct.collection("bookings").find({ start_time: new Date(start) }).toArray();
const cellsOf = (bookingId: unknown) => direct.collection("booking_cells").countDocuments({ booking_id: bookingId, key: { $not: /^R:/ } });

const isBookingInsert = (c: { name: string; collection: string | undefined }) => c.name === "insert" && c.collection === "bookings";

/** Books through the public API, without expecting success. */
const tryBook = (start: string, email: string) =>
  rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, { body: { booking: { start_time: start, attendee_name: "Ada", attendee_email: email } } });

/** Waits until the service answers through the proxy again. */
const answering = () => until("the service answers again", async () => (await rest("GET", "/user", { key: host.key })).status === 200, { timeoutMs: 20_000, everyMs: 200 });

describe("a booking whose insert was applied but whose answer was lost", () => {
  it("is found right after and stands, with its cells", async () => {
    const start = utcIso(dayFromToday(3), "09:00");
    const dropped = proxy.dropAnswerOf(isBookingInsert);
    const res = await tryBook(start, "lost-1@example.com");
    await dropped;
    expect(res.status).toBe(201);
    const [stored] = await bookingsAt(start);
    expect(stored).toMatchObject({ status: "confirmed" });
    expect(stored._id.toHexString()).toBe(res.body.data.id);
    // 30 minutes: four reservation keys (src/domain/reservation.ts).
    expect(await cellsOf(stored._id)).toBe(4);
  });

  it("keeps its cells when the database stays silent after it (503), so the time is not offered again", async () => {
    const start = utcIso(dayFromToday(3), "11:00");
    const dropped = proxy.dropAnswerOf(isBookingInsert, 3000);
    const res = await tryBook(start, "lost-2@example.com");
    await dropped;
    expect(res.status).toBe(503);
    await answering();
    const stored = await bookingsAt(start);
    expect(stored.map((b) => b.status)).toEqual(["confirmed"]);
    expect(await cellsOf(stored[0]._id)).toBe(4);
  });
});

describe("a reschedule whose commit was applied but answered as timed out (outcome unknown)", () => {
  it("leaves the new booking its cells when the check whether it exists fails too", async () => {
    const first = await book(host, event, { start_time: utcIso(dayFromToday(4), "09:00"), attendee_email: "moving@example.com" });
    const to = utcIso(dayFromToday(4), "13:00");
    // The commit is applied, but the database answers that it ran out of time (the outcome the driver calls
    // unknown); then the check whether the new booking exists runs out of time too. The writes after it go through.
    const timedOut = { code: 50, codeName: "MaxTimeMSExpired", errmsg: "operation exceeded time limit" };
    const committed = proxy.failNext((c) => c.name === "commitTransaction", timedOut, { applied: true });
    void committed.then(() => proxy.failNext((c) => c.name === "find" && c.collection === "bookings", timedOut));
    const res = await rest("POST", `/public/bookings/${first.private_key}/reschedule`, { body: { booking: { start_time: to } } });
    await committed;
    expect(res.status).toBe(503);
    await answering();
    const [moved] = await bookingsAt(to);
    expect(moved).toMatchObject({ status: "confirmed" });
    expect(moved.rescheduled_from.toHexString()).toBe(first.id);
    expect(await cellsOf(moved._id)).toBe(4);
  });
});
