// The outbox writes in batches (issue 29, "the outbox keeps up"): a fault proxy between the service and its database counts the outbox's write commands while many messages go out; each message once, in far fewer writes than one lease, one record and one delete per message.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../helpers/api.js";
import { book, dayFromToday, utcIso } from "../helpers/bookings.js";
import { startDbProxy, type DbProxy } from "../helpers/dbProxy.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { hostWithHook, untilOutboxDrained } from "../helpers/outbox.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { startSmtp, type TestSmtp } from "../helpers/smtp.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";

let db: TestDatabase;
let proxy: DbProxy;
let server: RunningServer;
let smtp: TestSmtp;
let receiver: Receiver;

beforeAll(async () => {
  db = await startDatabase();
  proxy = await startDbProxy(db.uri);
  smtp = await startSmtp();
  receiver = await startReceiver();
  // The outbox's default settings.
  server = await startServer({ MONGODB_URI: proxy.uri, SMTP_URL: smtp.url, OUTBOUND_ALLOW_PRIVATE: "true" });
  useServer(server.baseUrl);
});

afterAll(async () => {
  useServer(undefined);
  await server?.stop();
  await proxy?.close();
  await receiver?.close();
  await smtp?.stop();
  await db?.kill();
});

describe("many messages at once", () => {
  it("go out once each, leased, recorded and deleted in batches", async () => {
    const HOSTS = 4;
    const PER_HOST = 3;
    const hosts = await Promise.all(Array.from({ length: HOSTS }, (_, i) => hostWithHook(receiver, `/batched-${i}`)));
    const from = proxy.commands().length;
    await Promise.all(hosts.flatMap((h) => Array.from({ length: PER_HOST }, (_, n) => book(h.host, h.event, { start_time: utcIso(dayFromToday(2), `${String(9 + n).padStart(2, "0")}:00`) }))));
    // A webhook message, and the booker's and the host's e-mail, per booking.
    const messages = HOSTS * PER_HOST * 3;
    for (let i = 0; i < HOSTS; i++) await receiver.waitFor(`/batched-${i}`, PER_HOST, 30_000);
    await smtp.waitFor(HOSTS * PER_HOST * 2, () => true, 30_000);
    // Every effect done (its record and its delete written).
    await untilOutboxDrained(server.baseUrl);

    const ids = [...Array.from({ length: HOSTS }, (_, i) => receiver.received(`/batched-${i}`).map((r) => r.id)).flat(), ...smtp.received.map((m) => m.parsed.messageId ?? "")];
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(messages);
    const writes = proxy.commands().slice(from).filter((c) => ["effects", "effect_attempts"].includes(c.collection ?? "") && ["insert", "update", "delete", "findAndModify"].includes(c.name));
    const count = (name: string, collection: string) => writes.filter((c) => c.name === name && c.collection === collection).length;
    // One lease per message (findAndModify), one record and one delete each made at least three writes a message.
    expect({ leasesOneByOne: count("findAndModify", "effects"), fewerRecordsThanMessages: count("insert", "effect_attempts") < messages, fewerDeletesThanMessages: count("delete", "effects") < messages }).toEqual({
      leasesOneByOne: 0,
      fewerRecordsThanMessages: true,
      fewerDeletesThanMessages: true,
    });
    expect(writes.length).toBeLessThan(2 * messages);
  }, 120_000);
});
