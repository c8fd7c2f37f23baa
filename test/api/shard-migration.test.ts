// Data kept by a version before the shard keys (docs/operations.md "Sharding"): at start the values naming an account are claimed in account_keys, older private keys copied to booking_keys, and the replaced unique indexes dropped; everything is found as before, and webhooks kept without a place still count toward the cap.
import { randomBytes } from "node:crypto";
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt } from "../helpers/api.js";
import { dayFromToday, fixturesAt, utcIso } from "../helpers/fixtures.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";

let db: TestDatabase;
let server: RunningServer;
const call = (method: string, path: string, opts: Parameters<typeof restAt>[3] = {}) => restAt(server.baseUrl, method, `/api/v1${path}`, opts);
const collection = (name: string) => mongoose.connection.db!.collection(name);

beforeAll(async () => {
  db = await startDatabase();
  server = await startServer({ MONGODB_URI: db.uri });
  await mongoose.connect(db.uri);
});

afterAll(async () => {
  await mongoose.disconnect();
  await server?.stop();
  await db?.kill();
});

describe("data of a version before the shard keys", () => {
  it("is found as before after a start: the account by its key, e-mail and url, a booking by its older private key", async () => {
    const fixtures = fixturesAt(() => server.baseUrl);
    const host = await fixtures.newHost({ url: "keeper-before" });
    const event = await fixtures.newEvent(host);
    const booking = await fixtures.book(host, event, { start_time: utcIso(dayFromToday(3), "10:00") });
    // What an earlier version stored: no claims, a fully random private key. (Its unique indexes of users and bookings
    // are dropped at start by a MongoDB; the embedded server these tests run on has no dropIndexes.)
    const older = randomBytes(32).toString("base64url");
    await collection("account_keys").deleteMany({ user_id: new mongoose.Types.ObjectId(host.user.id as string) });
    await collection("bookings").updateOne({ _id: new mongoose.Types.ObjectId(booking.id as string) }, { $set: { private_key: older } });

    await server.stop();
    server = await startServer({ MONGODB_URI: db.uri });

    expect((await call("GET", "/user", { key: host.key })).status).toBe(200);
    expect((await call("GET", "/public/users/keeper-before")).body.data?.url).toBe("keeper-before");
    const found = await call("GET", `/public/bookings/${older}`);
    expect([found.status, found.body.data?.id]).toEqual([200, booking.id]);
    // A key that names no booking, of either form.
    expect((await call("GET", `/public/bookings/${randomBytes(32).toString("base64url")}`)).status).toBe(404);
    const taken = await call("POST", "/admin/accounts", { admin: true, body: { account: { email: host.user.email, full_name: "Someone Else" } } });
    expect([taken.status, taken.body.message]).toEqual([422, "email has already been taken"]);
    const taken2 = await call("PATCH", "/user", { key: (await fixtures.newAccount()).key, body: { user: { url: "Keeper-Before" } } });
    expect([taken2.status, taken2.body.message]).toEqual([422, "url has already been taken"]);
    const names = async (c: string) => (await collection(c).listIndexes().toArray()).map((ix) => ix.name as string);
    expect(await names("bookings")).toContain("user_id_1_private_key_1");
  });

  it("a new booking's private key carries its host's account and is found by it", async () => {
    const fixtures = fixturesAt(() => server.baseUrl);
    const host = await fixtures.newHost();
    const event = await fixtures.newEvent(host);
    const booking = await fixtures.book(host, event, { start_time: utcIso(dayFromToday(4), "11:00") });
    const key = booking.private_key as string;
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(key, "base64url").subarray(0, 12).toString("hex")).toBe(host.user.id);
    expect((await call("GET", `/public/bookings/${key}`)).body.data?.id).toBe(booking.id);
    expect(await collection("booking_keys").countDocuments({ _id: key as never })).toBe(0);
  });

  it("webhooks an earlier version kept without a place count toward the 20 an account may have", async () => {
    const host = await fixturesAt(() => server.baseUrl).newAccount();
    const create = (i: number) => call("POST", "/webhooks", { key: host.key, body: { webhook: { url: `https://93.184.215.14/hook-${i}`, events: ["booking.created"] } } });
    for (let i = 0; i < 5; i++) expect((await create(i)).status).toBe(201);
    // What an earlier version stored: no place (the unique index skips them, so several of one account coexist).
    const mine = { user_id: new mongoose.Types.ObjectId(host.user.id as string) };
    const older = (await collection("webhooks").find(mine).toArray()).map((w) => w._id);
    await collection("webhooks").updateMany(mine, { $unset: { place: "" } });
    let made = 5;
    while ((await create(made)).status === 201) made++;
    expect(made).toBe(20);
    expect((await create(99)).body.message).toBe("an account may have at most 20 webhooks");
    expect(await collection("webhooks").countDocuments({ ...mine, place: { $exists: false } })).toBe(5);
    // Deleting one of them frees a place for a new one.
    expect((await call("DELETE", `/webhooks/${older[0].toHexString()}`, { key: host.key })).status).toBe(200);
    expect((await create(100)).status).toBe(201);
    expect((await create(101)).status).toBe(422);
  });
});
