// User and event urls stored before the look-alike rules (issue 25: `hostaı` beside `hostai`; issue 29: the confusable skeleton; issue 39: Unicode's own confusables, event urls too) are re-keyed at start, so their pages are found by the rule; a clash keeps the older key and is logged.
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { URL_RULE } from "../../src/domain/urlKey.js";
import { restAt } from "../helpers/api.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { startServer, type RunningServer } from "../helpers/server.js";

let db: TestDatabase;
let server: RunningServer;
const call = (method: string, path: string, opts: Parameters<typeof restAt>[3] = {}) => restAt(server.baseUrl, method, `/api/v1${path}`, opts);
const users = () => mongoose.connection.db!.collection("users");
const events = () => mongoose.connection.db!.collection("events");
/** What the service stored before the skeleton rule: a key only, no shape, no rule mark; and no claims of its values in account_keys (made at start since). */
async function storedBefore(id: string, set: Record<string, string>): Promise<void> {
  const _id = new mongoose.Types.ObjectId(id);
  await users().updateOne({ _id }, { $set: set, $unset: { url_shape: "", url_looks: "", url_rule: "" } });
  await mongoose.connection.db!.collection("account_keys").deleteMany({ user_id: _id });
}

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

describe("user url keys stored under an old rule (NFKC and lowercase only; the look-alike table)", () => {
  it("are brought to the look-alike rule at start: the page is found by the url as stored and by its look-alikes", async () => {
    const turkish = await account("Zeynepı");
    const clash = await account("Orhan-x");
    const holder = await account("Orhanı");
    // Under the table rule ASCII was never folded: `bob1` and `bobl` were two urls. The one that holds the key keeps it.
    const one = await account("bob1-old");
    const ell = await account("bob-x");
    // A url no new account may take any more (Latin with Cyrillic о), made before that rule.
    const mixed = await account("hostai-y");
    // What the service stored before the rule: the keys as NFKC lowercase, look-alikes and all.
    await storedBefore(turkish, { url_key: "zeynepı" });
    // An old look-alike of a url another account holds under the new rule.
    await storedBefore(clash, { url: "Orhanİ", url_key: "orhani̇" });
    await storedBefore(holder, { url_key: "orhani" });
    await storedBefore(one, { url_key: "bob1-old" });
    await storedBefore(ell, { url: "bobl-old", url_key: "bobl-old" });
    await storedBefore(mixed, { url: "hоstai-x", url_key: "hоstai-x" });
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
    // The skeleton: a look-alike with a Cyrillic letter is found by its Latin reading; of bob1 and bobl, bobl held the key.
    expect((await call("GET", "/public/users/hostai-x")).body.data?.url).toBe("hоstai-x");
    for (const url of ["bobl-old", "bob1-old", "BOB1-OLD"]) expect((await call("GET", `/public/users/${url}`)).body.data?.url).toBe("bobl-old");
    expect(server.logs()).toContain(`the url of user ${one} reads as another account's url now`);
    expect(await users().findOne({ _id: new mongoose.Types.ObjectId(ell) })).toMatchObject({ url_key: "bobl-old", url_shape: "bobl-old", url_looks: ["bobl-old", "BOBL-OLD"], url_rule: URL_RULE });
    // Its readings with their case are claimed (rule 4), so another account cannot take them.
    const looks = await mongoose.connection.db!.collection("account_keys").find({ user_id: new mongoose.Types.ObjectId(ell), _id: { $in: ["look:bobl-old", "look:BOBL-OLD"] } as never }).toArray();
    expect(looks.map((k) => k._id).sort()).toEqual(["look:BOBL-OLD", "look:bobl-old"]);
  });
});

describe("event urls stored under the old rule (NFKC and lowercase only)", () => {
  it("are brought to the look-alike rule at start: the booking page is found by the url's look-alikes; a clash keeps the older key and is named", async () => {
    const host = await fixturesAt(server.baseUrl).newHost();
    const cafe = await fixturesAt(server.baseUrl).newEvent(host, { url: "cafe-talk", name: "Cafe talk" });
    const one = await fixturesAt(server.baseUrl).newEvent(host, { url: "meet-one", name: "Meet one" });
    const ell = await fixturesAt(server.baseUrl).newEvent(host, { url: "meet-two", name: "Meet two" });
    const small = await fixturesAt(server.baseUrl).newEvent(host, { url: "alice-x", name: "Alice" });
    const capital = await fixturesAt(server.baseUrl).newEvent(host, { url: "meet-three", name: "Meet three" });
    const before = (id: string, set: Record<string, string>) => events().updateOne({ _id: new mongoose.Types.ObjectId(id) }, { $set: set, $unset: { url_rule: "", url_shape: "", url_looks: "" } });
    await before(cafe.id as string, { url: "Café-Talk", url_key: "café-talk" });
    // Under the old rule `bob-1x` and `bob-lx` were two urls; the newer holds the key the rule makes of both.
    await before(one.id as string, { url: "bob-1x", url_key: "bob-1x" });
    await before(ell.id as string, { url: "bob-lx", url_key: "bob-lx" });
    // Before rule 4 events had no shape: `aIice-x` (a capital I) beside `alice-x` were two urls.
    await before(small.id as string, {});
    await before(capital.id as string, { url: "aIice-x", url_key: "aiice-x" });
    const page = (url: string) => call("GET", `/public/users/${host.user.url}/events/${encodeURIComponent(url)}`);
    expect((await page("cafe-talk")).status).toBe(404);

    await server.stop();
    server = await startServer({ MONGODB_URI: db.uri });
    for (const url of ["Café-Talk", "cafe-talk", "CAFE-TALK"]) expect([url, (await page(url)).body.data?.name]).toEqual([url, "Cafe talk"]);
    expect(await events().findOne({ _id: new mongoose.Types.ObjectId(cafe.id as string) })).toMatchObject({ url_key: "cafe-talk", url_rule: URL_RULE });
    for (const url of ["bob-lx", "bob-1x", "BOB-LX"]) expect([url, (await page(url)).body.data?.name]).toEqual([url, "Meet two"]);
    expect(await events().findOne({ _id: new mongoose.Types.ObjectId(one.id as string) })).toMatchObject({ url_key: "bob-1x" });
    expect(server.logs()).toContain(`the url of event ${one.id as string} reads as another event's url of its account now`);
    // The older keeps its url and gets its shape and looks; the newer look-alike keeps its old keys and is named.
    expect(await events().findOne({ _id: new mongoose.Types.ObjectId(small.id as string) })).toMatchObject({ url_shape: "alice-x", url_looks: ["alice-x", "ALlCE-X"], url_rule: URL_RULE });
    expect(await events().findOne({ _id: new mongoose.Types.ObjectId(capital.id as string) })).toMatchObject({ url_key: "aiice-x" });
    expect(server.logs()).toContain(`the url of event ${capital.id as string} reads as another event's url of its account now`);
    // Once re-keyed, a look-alike is taken like any other.
    const taken = await call("POST", "/events", { key: host.key, body: { event: { name: "Cafe", url: "cafe-talk" } } });
    expect({ status: taken.status, message: taken.body.message }).toEqual({ status: 422, message: "url has already been taken" });
  });
});
