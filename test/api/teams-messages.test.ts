// What every host of a team booking gets (teams.md): the host's e-mail, their webhooks and their feed with the team in `data`, and the attendee's invitation listing every host; a reassign, or a round robin move to another host, tells both hosts and the attendee; the real service with SMTP, a webhook receiver and the feed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, useServer, type Json } from "../helpers/api.js";
import { dayFromToday, utcIso, type Host } from "../helpers/bookings.js";
import { ok } from "../helpers/calls.js";
import { fixturesAt } from "../helpers/fixtures.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { startSmtp, type ReceivedMail, type TestSmtp } from "../helpers/smtp.js";
import { bookTeam, teamOf, teams } from "../helpers/teams.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";
import { until } from "../helpers/wait.js";

const DAY = dayFromToday(6);
const at = (time: string) => utcIso(DAY, time);

let server: RunningServer;
let smtp: TestSmtp;
let receiver: Receiver;
let a: Host;
let b: Host;
let c: Host;
let team: Json;

/** A host whose webhook for every booking change goes to the receiver at a path of its own. */
async function hostWithHook(path: string): Promise<Host> {
  const host = await fixturesAt(server.baseUrl).newHost({ timezone: "UTC" });
  const res = await rest("POST", "/webhooks", { key: host.key, body: { webhook: { url: receiver.url(path), events: ["booking.created", "booking.rescheduled", "booking.canceled"] } } });
  expect(res.status).toBe(201);
  receiver.secret(path, res.body.data.secret);
  return host;
}

/** The mails about one team event (its name is unique), once `n` have arrived. */
const mailsOf = (event: Json, n: number, pick: (m: ReceivedMail) => boolean = () => true) => smtp.waitFor(n, (m) => (m.parsed.subject ?? "").includes(event.name) && pick(m), 30_000);
const onlyTo = (address: string) => (m: ReceivedMail) => m.envelope.to.length === 1 && m.envelope.to[0] === address;
/** The ATTENDEE and ORGANIZER addresses of a mail's invitation. */
function invitation(m: ReceivedMail): { organizer: string; attendees: string[] } {
  const ics = m.parsed.attachments.find((x) => x.contentType === "text/calendar")?.content.toString("utf8").replace(/\r?\n[ \t]/g, "") ?? "";
  const addresses = (name: string) => [...ics.matchAll(new RegExp(`^${name}[;:].*?mailto:(\\S+)$`, "gim"))].map((x) => x[1].toLowerCase());
  return { organizer: addresses("ORGANIZER")[0] ?? "", attendees: addresses("ATTENDEE").sort() };
}

beforeAll(async () => {
  [smtp, receiver] = await Promise.all([startSmtp(), startReceiver()]);
  server = await startServer({ APP_URL: "https://book.example.test", SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, OUTBOUND_ALLOW_PRIVATE: "true", EFFECTS_POLL_MS: "100", EFFECTS_RETRY_SCALE: "0.001" });
  useServer(server.baseUrl);
  a = await fixturesAt(server.baseUrl).newHost({ timezone: "UTC" });
  [b, c] = await Promise.all([hostWithHook("/b"), hostWithHook("/c")]);
  team = await teamOf(a, [b, c], "Messages");
});

afterAll(async () => {
  useServer(undefined);
  await server?.stop();
  await Promise.all([smtp?.stop(), receiver?.close()]);
});

describe("every host of a collective booking", () => {
  let event: Json;
  let booking: Json;
  beforeAll(async () => {
    event = await ok("rest", a.key, teams.createEvent(team.id, { name: `Panel ${process.pid}`, url: "panel", slot_duration: "30_minutes", scheduling: "collective", hosts: [{ user_id: b.user.id }, { user_id: c.user.id }] }), 201);
    const made = await bookTeam(team, event, at("09:00"));
    expect(made.status).toBe(201);
    booking = made.body.data;
  });

  it("each host gets the host's mail; the attendee's invitation lists every host", async () => {
    const mails = await mailsOf(event, 3);
    expect(mails.filter(onlyTo(b.user.email))).toHaveLength(1);
    expect(mails.filter(onlyTo(c.user.email))).toHaveLength(1);
    const booker = mails.find(onlyTo("ada@example.com")) as ReceivedMail;
    expect(booker).toBeTruthy();
    const invite = invitation(booker);
    expect(invite.organizer).toBe(b.user.email.toLowerCase());
    expect(invite.attendees).toEqual(["ada@example.com", c.user.email.toLowerCase()].sort());
    // C's own copy names C's fellow host.
    expect(invitation(mails.find(onlyTo(c.user.email)) as ReceivedMail).attendees).toContain(b.user.email.toLowerCase());
  });

  it("each host's webhook gets the message, with the team and every host in data", async () => {
    const teamData = { id: team.id, name: team.name, url: team.url };
    for (const path of ["/b", "/c"]) {
      const [got] = (await receiver.waitFor(path, 1)).filter((r) => r.message?.type === "booking.created");
      expect(got?.verifyError).toBeUndefined();
      expect(got?.message?.data).toMatchObject({ team: teamData, booking: { id: booking.id, team: teamData }, event: { url: `https://book.example.test/team/${team.url}/panel` } });
      expect(((got?.message?.data.booking as Json).hosts as Json[]).map((h) => h.user_id).sort()).toEqual([b.user.id, c.user.id].sort());
    }
  });

  it("each host's booking changes feed holds the change, with the team", async () => {
    for (const h of [b, c]) {
      const changes = await until(`the feed of ${h.user.email}`, async () => {
        const res = await rest("GET", "/booking_changes", { key: h.key });
        return (res.body.data.changes as Json[]).filter((x) => x.booking?.id === booking.id);
      });
      expect(changes[0]).toMatchObject({ type: "booking.created", team: { id: team.id, name: team.name, url: team.url }, booking: { event_name: event.name } });
    }
  });

  it("a cancel reaches every host too", async () => {
    const res = await rest("POST", `/public/bookings/${booking.private_key}/cancel`, { body: { booking: { reason: "sorry" } } });
    expect(res.status).toBe(200);
    for (const h of [b, c]) await mailsOf(event, 1, (m) => onlyTo(h.user.email)(m) && /cancel/i.test(m.parsed.subject ?? ""));
    for (const path of ["/b", "/c"]) await until(`${path} told of the cancel`, () => receiver.received(path).some((r) => r.message?.type === "booking.canceled"));
  });
});

describe("a reassigned booking", () => {
  it("tells the old host, the new host and the attendee; the attendee's invitation has the new host", async () => {
    const event = await ok("rest", a.key, teams.createEvent(team.id, { name: `Demo ${process.pid}`, url: "demo", slot_duration: "30_minutes", scheduling: "round_robin", hosts: [{ user_id: b.user.id, priority: 4 }, { user_id: c.user.id }] }), 201);
    const made = await bookTeam(team, event, at("11:00"), "eve@example.com");
    expect(made.body.data.hosts[0].user_id).toBe(b.user.id);
    await mailsOf(event, 2);
    const moved = await rest("POST", `/bookings/${made.body.data.id}/reassign`, { key: a.key, body: { booking: {} } });
    expect(moved.status).toBe(200);
    const subjectOf = async (pick: (m: ReceivedMail) => boolean) => (await mailsOf(event, 1, pick))[0].parsed.subject ?? "";
    expect(await subjectOf((m) => onlyTo(b.user.email)(m) && /Reassigned/.test(m.parsed.subject ?? ""))).toMatch(/^Reassigned: /);
    expect(await subjectOf(onlyTo(c.user.email))).toMatch(/^New booking: /);
    const booker = (await mailsOf(event, 1, (m) => onlyTo("eve@example.com")(m) && /New host/.test(m.parsed.subject ?? "")))[0];
    expect(booker.parsed.subject).toContain(c.user.full_name);
    expect(invitation(booker).organizer).toBe(c.user.email.toLowerCase());
    expect(booker.parsed.text).toContain(`Your booking is now with ${c.user.full_name}.`);
  });
});

describe("a round robin booking moved to a time only another host is free at", () => {
  it("tells the old host it went to another host (a CANCEL of their time), the new host of a new booking, the attendee of the move; both hosts' webhooks", async () => {
    const event = await ok("rest", a.key, teams.createEvent(team.id, { name: `Move ${process.pid}`, url: "move", slot_duration: "30_minutes", scheduling: "round_robin", hosts: [{ user_id: b.user.id, priority: 4 }, { user_id: c.user.id }] }), 201);
    const made = await bookTeam(team, event, at("12:00"), "fay@example.com");
    expect(made.body.data.hosts[0].user_id).toBe(b.user.id);
    await mailsOf(event, 2);
    const own = await fixturesAt(server.baseUrl).newEvent(b);
    expect((await rest("POST", `/public/users/${b.user.url}/events/${own.url}/bookings`, { body: { booking: { start_time: at("13:00"), attendee_name: "Bo", attendee_email: "bo@example.com" } } })).status).toBe(201);
    const moved = await rest("POST", `/public/bookings/${made.body.data.private_key}/reschedule`, { body: { booking: { start_time: at("13:00") } } });
    expect(moved.status).toBe(201);
    expect(moved.body.data.hosts.map((h: Json) => h.user_id)).toEqual([c.user.id]);
    const away = (await mailsOf(event, 1, (m) => onlyTo(b.user.email)(m) && /Reassigned/.test(m.parsed.subject ?? "")))[0];
    expect(away.parsed.subject).toMatch(/^Reassigned: /);
    const ics = away.parsed.attachments.find((x) => x.contentType === "text/calendar")?.content.toString("utf8") ?? "";
    expect(ics).toContain("METHOD:CANCEL");
    expect(ics).toContain(`UID:${made.body.data.id}@`);
    expect((await mailsOf(event, 1, (m) => onlyTo(c.user.email)(m)))[0].parsed.subject).toMatch(/^New booking: /);
    const booker = (await mailsOf(event, 1, (m) => onlyTo("fay@example.com")(m) && /^Rescheduled: /.test(m.parsed.subject ?? "")))[0];
    expect(booker.parsed.subject).toContain(`with ${c.user.full_name}`);
    expect(invitation(booker).organizer).toBe(c.user.email.toLowerCase());
    // Both hosts' webhooks learn of the move: the new booking replaces the old one, held by C.
    for (const path of ["/b", "/c"]) {
      const message = await until(`${path} told of the move`, () => receiver.received(path).find((r) => r.message?.type === "booking.rescheduled" && r.message.data?.previous_booking_id === made.body.data.id)?.message);
      const booking = message.data.booking as Json;
      expect(booking.id).toBe(moved.body.data.id);
      expect(booking.hosts.map((h: Json) => h.user_id)).toEqual([c.user.id]);
    }
  });
});
