// A message sent while its try's record cannot be written (issue 29): a fault proxy between the service and its database refuses or silences that write, and the real receiver and SMTP server still get each message once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useServer, type Json } from "../helpers/api.js";
import { book, dayFromToday, utcIso, type Host } from "../helpers/bookings.js";
import { startDbProxy, type DbProxy } from "../helpers/dbProxy.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { hostWithHook, untilOutboxDrained } from "../helpers/outbox.js";
import { DEADLINE_DEFAULT_ENV, startServer, type RunningServer } from "../helpers/server.js";
import { startSmtp, type TestSmtp } from "../helpers/smtp.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";

/** Short, so that a try left to its lease is run again within the test (that was the copy). */
const LEASE_MS = 3000;

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
  server = await startServer({ MONGODB_URI: proxy.uri, ...DEADLINE_DEFAULT_ENV, SMTP_URL: smtp.url, OUTBOUND_ALLOW_PRIVATE: "true", EFFECTS_POLL_MS: "100", EFFECTS_LEASE_MS: String(LEASE_MS) });
  useServer(server.baseUrl);
});

afterAll(async () => {
  useServer(undefined);
  await server?.stop("SIGKILL");
  await proxy?.close();
  await receiver?.close();
  await smtp?.stop();
  await db?.kill();
});

const isAttemptRecord = (c: { name: string; collection: string | undefined }) => c.name === "insert" && c.collection === "effect_attempts";
/** What the database answers when it ran out of time before doing anything: the write was not applied. */
const TOO_SLOW = { code: 50, codeName: "MaxTimeMSExpired", errmsg: "operation exceeded time limit" };

/** Books, waits for the webhook message and the e-mails (`mails` in all so far), then for the outbox to have nothing left (three scrapes in a row). */
async function bookAndDrain(h: { host: Host; event: Json }, path: string, start: string, mails: number): Promise<void> {
  await book(h.host, h.event, { start_time: start });
  await receiver.waitFor(path, 1, 30_000);
  await smtp.waitFor(mails, () => true, 30_000);
  // A copy came when the lease ran out (LEASE_MS) and the effect was run again: the outbox is drained only after.
  await untilOutboxDrained(server.baseUrl);
}

/** Ids that came more than once, with how often. */
function repeated(ids: readonly string[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return Object.fromEntries([...counts].filter(([, n]) => n > 1));
}

function expectEachOnce(path: string, mails: number): void {
  const hooks = receiver.received(path).map((r) => r.id);
  const messageIds = smtp.received.map((m) => m.parsed.messageId ?? "");
  expect({ hooks: hooks.length, repeated: repeated(hooks) }).toEqual({ hooks: 1, repeated: {} });
  expect({ mails: messageIds.length, repeated: repeated(messageIds) }).toEqual({ mails, repeated: {} });
}

describe("a try whose message went out but whose record could not be written at once", () => {
  it("is recorded when the database takes the write again, and its message is not sent again", async () => {
    const h = await hostWithHook(receiver, "/refused");
    // The first try's record is refused (not applied): the message went out, its record is not stored.
    const refused = proxy.failNext(isAttemptRecord, TOO_SLOW);
    // Booker and host.
    await bookAndDrain(h, "/refused", utcIso(dayFromToday(2), "09:00"), 2);
    await refused;
    expectEachOnce("/refused", 2);
  }, 120_000);

  it("is recorded after the database stayed silent for a while, and its message is not sent again", async () => {
    const h = await hostWithHook(receiver, "/silent");
    const before = smtp.received.length;
    // The record is refused, then every answer is lost for 2 s (the writes reach the database): the record is
    // written again and again, until an answer comes.
    const refused = proxy.failNext(isAttemptRecord, TOO_SLOW).then(() => proxy.dropAnswerOf(() => true, 2000));
    await bookAndDrain(h, "/silent", utcIso(dayFromToday(2), "11:00"), before + 2);
    await refused;
    expectEachOnce("/silent", before + 2);
  }, 120_000);
});
