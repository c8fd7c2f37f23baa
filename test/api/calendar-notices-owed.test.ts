// A calendar's change of status owes the host's notices in the same write (issue 29): when planning them fails (the database stops answering) or the replica dies right after, the webhook message and the e-mail still come, once each.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restAt } from "../helpers/api.js";
import { advanceClock, clockAtLeast, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { dayFromToday } from "../helpers/bookings.js";
import { eventAt, hostAt, slotsAt } from "../helpers/calendars.js";
import { startDbProxy, type DbProxy, type SeenCommand } from "../helpers/dbProxy.js";
import { startDatabase, type TestDatabase } from "../helpers/jongodb.js";
import { HOST_NOTICE_KIND } from "../../src/domain/notice.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { startSmtp, type ReceivedMail, type TestSmtp } from "../helpers/smtp.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";
import { icalDate, icalEvent, icalendar, startFeeds, type Feeds } from "../helpers/feeds.js";

let db: TestDatabase;
let proxy: DbProxy;
let server: RunningServer;
let smtp: TestSmtp;
let receiver: Receiver;
let feeds: Feeds;

const day = dayFromToday(9);
const busy = icalEvent("standup", "SUMMARY:Standup", `DTSTART:${icalDate(day)}T090000Z`, `DTEND:${icalDate(day)}T100000Z`);
const good = icalendar(busy);
const broken = icalendar(busy.replace("BEGIN:VEVENT", "END:VEVENT"));
const timedOut = { code: 50, codeName: "MaxTimeMSExpired", errmsg: "operation exceeded time limit" };
/** The insert of an outbox message of `kind` ("webhook", "host_notice"): picked by kind, not by count or order. */
const insertOfKind = (kind: string) => (c: SeenCommand) => c.name === "insert" && c.collection === "effects" && c.items.some((d) => d.kind === kind);

const serverEnv = () => ({ MONGODB_URI: proxy.uri, OUTBOUND_ALLOW_PRIVATE: "true", CALENDAR_CACHE_SECONDS: "1", SMTP_URL: smtp.url, EFFECTS_POLL_MS: "100", ...CLOCK_CONTROL_ENV });

beforeAll(async () => {
  feeds = await startFeeds();
  db = await startDatabase();
  [proxy, smtp, receiver] = await Promise.all([startDbProxy(db.uri), startSmtp(), startReceiver()]);
  server = await startServer(serverEnv());
});

afterAll(async () => {
  await server?.stop("SIGKILL");
  await smtp?.stop();
  await receiver?.close();
  await feeds?.close();
  await proxy?.close();
  await db?.kill();
});

/** A host with a calendar.connection_changed webhook at `path` and a feed at `/<path>.ics`, read once while good. */
async function hostWithFeed(path: string) {
  feeds.bodies.set(`${path}.ics`, good);
  const base = server.baseUrl;
  const host = await hostAt(base);
  const hook = await restAt(base, "POST", "/api/v1/webhooks", { key: host.key, body: { webhook: { url: receiver.url(path), events: ["calendar.connection_changed"] } } });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  receiver.secret(path, hook.body.data.secret);
  const made = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "ics", url: `${feeds.base}${path}.ics` } } });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const event = await eventAt(base, host.key);
  expect((await slotsAt(base, host.user, event, day)).status).toBe(200);
  const toHost = (m: ReceivedMail) => m.envelope.to.includes(host.user.email);
  /** Breaks the feed and lists slots after the last read rested (1 s of the service's clock), which reads it and turns the connection `error`. */
  const breakIt = async () => {
    feeds.bodies.set(`${path}.ics`, broken);
    await advanceClock(server, 1100);
    await slotsAt(server.baseUrl, host.user, event, day);
  };
  return { host, toHost, breakIt, connectionId: String(made.body.data.id) };
}

/** Notices left owed are swept up once they are this old (src/features/notices/record.ts SWEEP_AFTER_MS) and a poll more. */
const SWEPT_AFTER_MS = 6000;

/**
 * Moves the service past another sweep of what is still owed, then gives its outbox (polling every 100 ms) a second
 * of real time to send anything: a copy sent late (a second planning, a second sweep) would be counted too.
 */
const settle = async () => {
  await advanceClock(server, SWEPT_AFTER_MS);
  await new Promise((r) => setTimeout(r, 1000));
};

describe("notices owed by a change of status", () => {
  it("come once when planning them failed: the database refused the webhook message's insert", async () => {
    const { toHost, breakIt, connectionId } = await hostWithFeed("/refused");
    const refused = proxy.failNext(insertOfKind("webhook"), timedOut);
    await breakIt();
    await refused;
    // The status was stored by the same write that owes the notices; their planning failed and is swept up (at
    // once, the clock moved past the sweep's wait).
    await advanceClock(server, SWEPT_AFTER_MS);
    const [message] = await receiver.waitFor("/refused", 1, 30_000);
    expect(message!.verifyError).toBeUndefined();
    expect(message!.message).toMatchObject({ type: "calendar.connection_changed", data: { connection: { id: connectionId, status: "error" } } });
    await smtp.waitFor(1, toHost, 30_000);
    await settle();
    expect(receiver.received("/refused")).toHaveLength(1);
    expect(smtp.received.filter(toHost)).toHaveLength(1);
  }, 90_000);

  it("come once when the replica died while planning them: after the day's e-mail was claimed, before it was planned", async () => {
    const { toHost, breakIt, connectionId } = await hostWithFeed("/killed");
    // The webhook message's insert goes through; the e-mail's does not, and the replica is killed before its sweep.
    // Another replica on the same database plans what is still owed.
    const refused = proxy.failNext(insertOfKind(HOST_NOTICE_KIND), timedOut);
    await breakIt();
    await refused;
    const [diedAt] = await advanceClock(server, 0);
    await server.stop("SIGKILL");
    server = await startServer(serverEnv());
    // The new replica's clock starts where the system's is, behind the dead one's (moved by the tests before), whose
    // outbox leases would hold it for that long in real time: it starts where the dead one left off. Past the
    // sweep's wait, it plans what is owed at once.
    await clockAtLeast(server, diedAt);
    await advanceClock(server, SWEPT_AFTER_MS);
    await smtp.waitFor(1, toHost, 30_000);
    const [message] = await receiver.waitFor("/killed", 1, 30_000);
    expect(message!.message).toMatchObject({ type: "calendar.connection_changed", data: { connection: { id: connectionId, status: "error" } } });
    await settle();
    // Planned twice (the webhook message by both replicas), inserted and sent once.
    expect(receiver.received("/killed")).toHaveLength(1);
    expect(smtp.received.filter(toHost)).toHaveLength(1);
  }, 120_000);
});
