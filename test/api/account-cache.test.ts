// The account cache is a lease: two replicas on one database, each answering from the accounts it read, and every account write waits the lease out, so what a write answered is what every replica serves.
import { Code } from "@connectrpc/connect";
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { restAt } from "../helpers/api.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { grpcClientAt, unaryAt } from "../helpers/grpcAt.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";

/**
 * Long enough that a write which did not wait it out would be caught by the other replica's copy: the most
 * ACCOUNT_CACHE_MS allows, so a loaded machine (the full suite at load 20 took 635 ms for a refused PATCH) still
 * tells "waited the lease" from "did not".
 */
const LEASE_MS = 1000;

let db: TestDatabase;
let a: RunningServer;
let b: RunningServer;
let direct: mongoose.Connection;

async function account(name: string): Promise<{ key: string; id: string }> {
  const { key, user } = await fixturesAt(a.baseUrl).newAccount({ full_name: name });
  return { key, id: user.id };
}

beforeAll(async () => {
  db = await startDatabase();
  const env = { MONGODB_URI: db.uri, ACCOUNT_CACHE_MS: String(LEASE_MS) };
  [a, b] = await Promise.all([startServer(env), startServer(env)]);
  direct = await mongoose.createConnection(db.uri).asPromise();
});

afterAll(async () => {
  await direct?.close();
  await Promise.all([a?.stop(), b?.stop()]);
  await db?.kill();
});

describe("two replicas, each with its own account cache", () => {
  it("a key regenerated on one replica fails on the other as soon as the regeneration has answered", async () => {
    const { key } = await account("Old Key");
    // Replica b now holds the account under the old key.
    expect((await restAt(b.baseUrl, "GET", "/api/v1/user", { key })).status).toBe(200);
    const regen = await restAt(a.baseUrl, "PUT", "/api/v1/users/regenerate_api_key", { key });
    expect(regen.status).toBe(200);
    expect(regen.ms).toBeGreaterThanOrEqual(LEASE_MS);
    const fresh = regen.body.data.api_key as string;

    const old = await restAt(b.baseUrl, "GET", "/api/v1/user", { key });
    expect(old.status).toBe(401);
    expect(old.body).toEqual({ success: false, message: "Invalid api_key", data: {}, status: "unauthorized" });
    const grpc = grpcClientAt(b.baseUrl);
    try {
      await expect(unaryAt(grpc, UserService.method.getUser, {}, { "x-api-key": key })).rejects.toMatchObject({ code: Code.Unauthenticated });
      expect((await unaryAt(grpc, UserService.method.getUser, {}, { "x-api-key": fresh })).user?.fullName).toBe("Old Key");
    } finally {
      grpc.close();
    }
    expect((await restAt(a.baseUrl, "GET", "/api/v1/user", { key })).status).toBe(401);
  });

  it("a profile change on one replica is what the other serves once the change has answered", async () => {
    const { key } = await account("Before Change");
    expect((await restAt(b.baseUrl, "GET", "/api/v1/user", { key })).body.data.full_name).toBe("Before Change");
    const patch = await restAt(a.baseUrl, "PATCH", "/api/v1/user", { key, body: { user: { full_name: "After Change", timezone: "Berlin" } } });
    expect(patch.status).toBe(200);
    expect(patch.ms).toBeGreaterThanOrEqual(LEASE_MS);
    const seen = await restAt(b.baseUrl, "GET", "/api/v1/user", { key });
    expect(seen.body.data.full_name).toBe("After Change");
    expect(seen.body.data.timezone).toBe("Berlin");
  });

  it("new availability on one replica is what the other serves once it has answered", async () => {
    const { key } = await account("Busy Host");
    expect((await restAt(b.baseUrl, "GET", "/api/v1/user/availability", { key })).body.data.minimum_notice_minutes).toBe(240);
    const availability = { weekly_hours: { monday: [{ start: "10:00", end: "12:00" }] }, date_overrides: [], minimum_notice_minutes: 30, booking_window_days: 14 };
    const put = await restAt(a.baseUrl, "PUT", "/api/v1/user/availability", { key, body: { availability } });
    expect(put.status).toBe(200);
    const seen = await restAt(b.baseUrl, "GET", "/api/v1/user/availability", { key });
    expect(seen.body.data.minimum_notice_minutes).toBe(30);
    expect(seen.body.data.weekly_hours.monday).toEqual([{ start: "10:00", end: "12:00" }]);
  });

  it("the replica that made a change serves it at once, and a change that failed does not wait", async () => {
    const { key } = await account("Same Door");
    const other = await account("Other Door");
    const taken = (await restAt(a.baseUrl, "GET", "/api/v1/user", { key: other.key })).body.data.url as string;
    const refused = await restAt(a.baseUrl, "PATCH", "/api/v1/user", { key, body: { user: { url: taken } } });
    expect(refused.status).toBe(422);
    expect(refused.ms).toBeLessThan(LEASE_MS);
    await restAt(a.baseUrl, "PATCH", "/api/v1/user", { key, body: { user: { bio: "changed here" } } });
    expect((await restAt(a.baseUrl, "GET", "/api/v1/user", { key })).body.data.bio).toBe("changed here");
  });

  it("answers from its copy for at most the lease: a writer that bypasses the service is seen within it", async () => {
    const { key, id } = await account("Outside Writer");
    const leaseFrom = performance.now();
    expect((await restAt(b.baseUrl, "GET", "/api/v1/user", { key })).body.data.full_name).toBe("Outside Writer");
    await direct.collection("users").updateOne({ _id: new mongoose.Types.ObjectId(id) }, { $set: { full_name: "Written Outside" } });
    // The copy is still served (this is the cache at work), when the answer came within the lease (a loaded
    // machine may take longer than the lease between the two reads; then either name is right) ...
    const cached = await restAt(b.baseUrl, "GET", "/api/v1/user", { key });
    if (performance.now() - leaseFrom < LEASE_MS) expect(cached.body.data.full_name).toBe("Outside Writer");
    // ... and no longer once the lease that began before the outside write has run out.
    await new Promise((r) => setTimeout(r, LEASE_MS + 50));
    expect((await restAt(b.baseUrl, "GET", "/api/v1/user", { key })).body.data.full_name).toBe("Written Outside");
  });

  it("never remembers an unknown key: a new account's key works at once on every replica", async () => {
    expect((await restAt(b.baseUrl, "GET", "/api/v1/user", { key: "nobody-has-this-key" })).status).toBe(401);
    const { key } = await account("Brand New");
    expect((await restAt(b.baseUrl, "GET", "/api/v1/user", { key })).status).toBe(200);
  });
});

describe("ACCOUNT_CACHE_MS", () => {
  it("0 turns the cache off: an outside write is seen at once and writes do not wait", async () => {
    const server = await startServer({ MONGODB_URI: db.uri, ACCOUNT_CACHE_MS: "0" });
    try {
      const { key, user } = await fixturesAt(server.baseUrl).newAccount({ full_name: "No Cache" });
      expect((await restAt(server.baseUrl, "GET", "/api/v1/user", { key })).body.data.full_name).toBe("No Cache");
      await direct.collection("users").updateOne({ _id: new mongoose.Types.ObjectId(user.id as string) }, { $set: { full_name: "Seen At Once" } });
      expect((await restAt(server.baseUrl, "GET", "/api/v1/user", { key })).body.data.full_name).toBe("Seen At Once");
      const patch = await restAt(server.baseUrl, "PATCH", "/api/v1/user", { key, body: { user: { bio: "quick" } } });
      expect(patch.status).toBe(200);
      expect(patch.ms).toBeLessThan(LEASE_MS);
    } finally {
      await server.stop();
    }
  });

  it("above 1000 stops the start with a clear message", async () => {
    await expect(startServer({ ACCOUNT_CACHE_MS: "5000" })).rejects.toThrow(/ACCOUNT_CACHE_MS must be at most 1000, got \\"5000\\"/);
  });
});
