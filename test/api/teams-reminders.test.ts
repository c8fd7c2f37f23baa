// Reminders of team events (teams.md, reminders.md): the team's owner and admins add them (a member 403, a stranger 404), and a team booking's reminder reaches its booker once and every host of it (their mail, their webhooks); the clock is moved to the due time, the mails read from smtp-server, the webhook messages from a receiver.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, useServer, type Json } from "../helpers/api.js";
import { Code } from "@connectrpc/connect";
import { ReminderService } from "../../gen/scheduling/v1/reminder_pb.js";
import { invoke, ok, PROTOCOLS, type Call, type Protocol } from "../helpers/calls.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import { fixturesAt, type Host } from "../helpers/fixtures.js";
import { startServer, type RunningServer } from "../helpers/server.js";
import { startSmtp, type ReceivedMail, type TestSmtp } from "../helpers/smtp.js";
import { bookTeam, teamOf, teams } from "../helpers/teams.js";
import { until } from "../helpers/wait.js";
import { startReceiver, type Receiver } from "../helpers/webhookReceiver.js";

const HOUR = 3_600_000;

let server: RunningServer;
let smtp: TestSmtp;
let receiver: Receiver;
let owner: Host;
let admin: Host;
let b: Host;
let c: Host;
let stranger: Host;
let team: Json;
let roundRobin: Json;
let collective: Json;

const reminders = (key: string, eventId: string, reminder?: Json) =>
  reminder === undefined ? rest("GET", `/events/${eventId}/reminders`, { key }) : rest("POST", `/events/${eventId}/reminders`, { key, body: { reminder } });
const createCall = (eventId: string, reminder: Json): Call => ({
  service: ReminderService,
  rpc: "createReminder",
  request: { event_id: eventId, reminder },
  rest: { method: "POST", path: `/events/${eventId}/reminders`, body: { reminder } },
  pick: "reminder",
});
const onlyTo = (address: string) => (m: ReceivedMail) => m.envelope.to.length === 1 && m.envelope.to[0].toLowerCase() === address.toLowerCase();
const isReminderOf = (event: Json) => (m: ReceivedMail) => (m.parsed.subject ?? "").startsWith(`Team reminder ${event.name}`);

beforeAll(async () => {
  [smtp, receiver] = await Promise.all([startSmtp(), startReceiver()]);
  server = await startServer({ APP_URL: "https://book.example.test", SMTP_URL: smtp.url, OUTBOUND_ALLOW_PRIVATE: "true", EFFECTS_POLL_MS: "200", ...CLOCK_CONTROL_ENV });
  useServer(server.baseUrl);
  const fixtures = fixturesAt(server.baseUrl);
  [owner, admin, b, c, stranger] = await Promise.all([0, 1, 2, 3, 4].map(() => fixtures.newHost({ timezone: "UTC" })));
  team = await teamOf(owner, [b, c], "Reminders");
  const invited = await ok("rest", owner.key, teams.invite(team.id, { email: admin.user.email, role: "admin" }), 201);
  await ok("rest", admin.key, teams.accept(invited.id));
  const hosts = [{ user_id: b.user.id }, { user_id: c.user.id }];
  roundRobin = await ok("rest", owner.key, teams.createEvent(team.id, { name: `Intro ${process.pid}`, url: "intro", slot_duration: "30_minutes", scheduling: "round_robin", hosts }), 201);
  collective = await ok("rest", owner.key, teams.createEvent(team.id, { name: `Panel ${process.pid}`, url: "panel", slot_duration: "30_minutes", scheduling: "collective", hosts }), 201);
});

afterAll(async () => {
  useServer(undefined);
  await server?.stop();
  await Promise.all([smtp?.stop(), receiver?.close()]);
});

describe("reminders of team events", () => {
  it("the team's owner and admins add and read them; a member gets 403, a stranger 404", async () => {
    const made = await reminders(admin.key, roundRobin.id, { timing: "before_start", offset_minutes: 30 });
    expect([made.status, made.body.message]).toEqual([201, "reminder created"]);
    expect(made.body.data.event_id).toBe(roundRobin.id);
    const listed = await reminders(owner.key, roundRobin.id);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((r: Json) => r.id)).toContain(made.body.data.id);
    expect((await rest("GET", `/reminders/${made.body.data.id}`, { key: owner.key })).status).toBe(200);
    const changed = await rest("PATCH", `/reminders/${made.body.data.id}`, { key: admin.key, body: { reminder: { offset_minutes: 45 } } });
    expect([changed.status, changed.body.data.offset_minutes]).toEqual([200, 45]);

    for (const [who, status] of [[b, 403], [stranger, 404]] as const) {
      expect((await reminders(who.key, roundRobin.id, { timing: "before_start", offset_minutes: 30 })).status).toBe(status);
      expect((await reminders(who.key, roundRobin.id)).status).toBe(status);
      expect((await rest("GET", `/reminders/${made.body.data.id}`, { key: who.key })).status).toBe(status);
      expect((await rest("PATCH", `/reminders/${made.body.data.id}`, { key: who.key, body: { reminder: { active: false } } })).status).toBe(status);
      expect((await rest("DELETE", `/reminders/${made.body.data.id}`, { key: who.key })).status).toBe(status);
    }
    // The personal event routes stay the owner's own: the team event is changed on the team's routes.
    expect((await rest("PATCH", `/events/${roundRobin.id}`, { key: owner.key, body: { event: { name: "Renamed" } } })).status).toBe(404);
    expect((await rest("DELETE", `/reminders/${made.body.data.id}`, { key: owner.key })).status).toBe(200);
  });

  it.each(PROTOCOLS)("over %s: an admin adds one, a member is refused PERMISSION_DENIED, a stranger NOT_FOUND", async (protocol: Protocol) => {
    const made = await ok(protocol, admin.key, createCall(collective.id, { timing: "after_end", offset_minutes: 10 }), 201, "reminder created");
    expect(made).toMatchObject({ event_id: collective.id, timing: "after_end", offset_minutes: 10 });
    const refused = await invoke(protocol, b.key, createCall(collective.id, { timing: "after_end", offset_minutes: 10 }));
    const unknown = await invoke(protocol, stranger.key, createCall(collective.id, { timing: "after_end", offset_minutes: 10 }));
    if (protocol === "rest") expect([refused.http, unknown.http]).toEqual([403, 404]);
    else expect([refused.code, unknown.code]).toEqual([Code.PermissionDenied, Code.NotFound]);
    expect((await rest("DELETE", `/reminders/${made.id}`, { key: admin.key })).status).toBe(200);
  });

  it("a team booking's reminder reaches its booker once and every host of it", async () => {
    // Both reminders fall due at `due`: the panel at `start`, the intro an hour later (its hosts are held by the panel at `start`).
    const start = Math.ceil((Date.now() + 26 * HOUR) / HOUR) * HOUR;
    const due = start - HOUR;
    const subject = "Team reminder {{event_name}}";
    const made: Json[] = [];
    for (const [event, offset] of [[collective, 60], [roundRobin, 120]] as const) {
      const res = await reminders(admin.key, event.id, { timing: "before_start", offset_minutes: offset, recipients: "both", subject });
      expect(res.status).toBe(201);
      made.push(res.body.data);
    }
    // The panel's hosts' webhooks each get its webhook reminder.
    const hooks = new Map<Host, string>();
    for (const host of [b, c]) {
      const path = `/${host.user.id}`;
      const hook = await rest("POST", "/webhooks", { key: host.key, body: { webhook: { url: receiver.url(path), events: ["booking.reminder"] } } });
      expect(hook.status).toBe(201);
      receiver.secret(path, hook.body.data.secret);
      hooks.set(host, hook.body.data.id);
    }
    const viaHook = await reminders(owner.key, collective.id, { timing: "before_start", offset_minutes: 60, channel: "webhook", recipients: "host" });
    expect(viaHook.status).toBe(201);
    const panelBooker = `panel-${process.pid}@example.com`;
    const introBooker = `intro-${process.pid}@example.com`;
    const panel = await bookTeam(team, collective, new Date(start).toISOString(), panelBooker);
    const intro = await bookTeam(team, roundRobin, new Date(start + HOUR).toISOString(), introBooker);
    expect([panel.status, intro.status]).toEqual([201, 201]);
    const introHost = intro.body.data.hosts[0].user_id === b.user.id ? b : c;
    const otherHost = introHost === b ? c : b;
    // Planned before the clock moves: each booking shows its deliveries scheduled.
    for (const [booking, host, n] of [[panel.body.data, b, 2], [intro.body.data, introHost, 1]] as const) {
      await until(`the reminders of ${booking.id} planned`, async () => (await rest("GET", `/bookings/${booking.id}`, { key: host.key })).body.data.reminders as Json[], {
        accept: (r: Json[]) => r.length === n && r.every((x) => x.status === "scheduled"),
        timeoutMs: 20_000,
      });
    }
    expect(smtp.received.filter((m) => isReminderOf(collective)(m) || isReminderOf(roundRobin)(m))).toEqual([]);
    // The preview of a team booking, for its owner: the host's copy names the booking's event.
    const preview = await rest("POST", `/reminders/${made[0].id}/preview`, { key: owner.key, body: { booking_id: panel.body.data.id, recipient: "host" } });
    expect([preview.status, preview.body.data.subject]).toEqual([200, `Team reminder ${collective.name}`]);
    expect((await rest("POST", `/reminders/${made[0].id}/preview`, { key: owner.key, body: { booking_id: intro.body.data.id } })).status).toBe(422);
    // A change of the reminder re-plans the team's bookings (kept under their hosts' accounts): the new words go out.
    const changed = await rest("PATCH", `/reminders/${made[0].id}`, { key: owner.key, body: { reminder: { subject: `${subject} (changed)` } } });
    expect(changed.status).toBe(200);

    await advanceClock(server, due - Date.now());
    const panelMails = await smtp.waitFor(3, isReminderOf(collective), 60_000);
    const introMails = await smtp.waitFor(2, isReminderOf(roundRobin), 60_000);
    // Anything sent twice or to someone else would have arrived by now with the rest.
    await until("the deliveries sent", async () => (await rest("GET", `/bookings/${intro.body.data.id}`, { key: introHost.key })).body.data.reminders as Json[], {
      accept: (r: Json[]) => r[0]?.status === "sent",
      timeoutMs: 20_000,
    });
    const all = smtp.received.filter(isReminderOf(collective));
    expect(all).toHaveLength(3);
    for (const m of all) expect(m.parsed.subject).toMatch(/\(changed\)$/);
    for (const address of [panelBooker, b.user.email, c.user.email]) expect(panelMails.filter(onlyTo(address)), address).toHaveLength(1);
    expect(smtp.received.filter(isReminderOf(roundRobin))).toHaveLength(2);
    for (const address of [introBooker, introHost.user.email]) expect(introMails.filter(onlyTo(address)), address).toHaveLength(1);
    expect(introMails.filter(onlyTo(otherHost.user.email))).toHaveLength(0);
    // Each host's webhook got the reminder of the panel, signed with its own secret.
    for (const host of [b, c]) {
      const [message] = await receiver.waitFor(`/${host.user.id}`, 1, 30_000);
      expect(message.verifyError).toBeUndefined();
      expect(message.message).toMatchObject({ type: "booking.reminder", data: { booking: { id: panel.body.data.id }, reminder: { id: viaHook.body.data.id }, due_at: new Date(due).toISOString() } });
      // Listed among that host's own webhook's deliveries.
      const deliveries = await until(`the deliveries of ${host.user.id}'s webhook`, async () => (await rest("GET", `/webhooks/${hooks.get(host)}/deliveries`, { key: host.key })).body.data as Json[], {
        accept: (d: Json[]) => d.length > 0,
      });
      expect(deliveries).toMatchObject([{ event_type: "booking.reminder", status_code: 200, message_id: message.id }]);
    }
    // The host's copy is the host's (no manage link of the booker's), the booker's carries the unsubscribe.
    const cMail = panelMails.find(onlyTo(c.user.email)) as ReceivedMail;
    expect(panel.body.data.private_key).toBeTruthy();
    expect(cMail.raw).not.toContain(panel.body.data.private_key);
    expect(cMail.raw).not.toMatch(/^List-Unsubscribe:/im);
    expect((panelMails.find(onlyTo(panelBooker)) as ReceivedMail).raw).toMatch(/^List-Unsubscribe:/im);
  }, 180_000);
});
