// User urls stored before the look-alike rule (issue 25: `hostaı` beside `hostai`) are re-keyed at start, so their pages are found by the rule; a clash keeps the older key and is logged.
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt } from "../helpers/api.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";

let db: TestDatabase;
let server: RunningServer;
const call = (method: string, path: string, opts: Parameters<typeof restAt>[3] = {}) => restAt(server.baseUrl, method, `/api/v1${path}`, opts);
const users = () => mongoose.connection.db!.collection("users");

async function account(url: string): Promise<string> {
  const { key, user } = await fixturesAt(server.baseUrl).newAccount({ full_name: "Url Keeper" });
  expect((await call("PATCH", "/user", { key, body: { user: { url } } })).status).toBe(200);
  return user.id as string;
}

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

describe("user url keys stored under the old rule (NFKC and lowercase only)", () => {
  it("are brought to the look-alike rule at start: the page is found by the url as stored and by its look-alikes", async () => {
    const turkish = await account("Zeynepı");
    const clash = await account("Orhan-x");
    await account("Orhanı");
    // What the service stored before the rule: the keys as NFKC lowercase, look-alikes and all.
    await users().updateOne({ _id: new mongoose.Types.ObjectId(turkish) }, { $set: { url_key: "zeynepı" } });
    // An old look-alike of a url another account holds under the new rule.
    await users().updateOne({ _id: new mongoose.Types.ObjectId(clash) }, { $set: { url: "Orhanİ", url_key: "orhani̇" } });
    expect((await call("GET", `/public/users/${encodeURIComponent("Zeynepı")}`)).status).toBe(404);

    await server.stop();
    server = await startServer({ MONGODB_URI: db.uri });
    for (const url of ["Zeynepı", "zeynepi", "ZEYNEPİ"]) {
      const page = await call("GET", `/public/users/${encodeURIComponent(url)}`);
      expect([url, page.status, page.body.data?.url]).toEqual([url, 200, "Zeynepı"]);
    }
    expect((await users().findOne({ _id: new mongoose.Types.ObjectId(turkish) }))?.url_key).toBe("zeynepi");
    // The clash: the account that holds the key keeps its page; the old look-alike keeps its old key, and is named.
    expect((await call("GET", `/public/users/${encodeURIComponent("orhani")}`)).body.data?.url).toBe("Orhanı");
    expect((await users().findOne({ _id: new mongoose.Types.ObjectId(clash) }))?.url_key).toBe("orhani̇");
    expect(server.logs()).toContain(`the url of user ${clash} reads as another account's url now`);
  });
});
