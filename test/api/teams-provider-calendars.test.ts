// A team booking in every host's calendar (teams.md) when the hosts' calendars are at Google and at Microsoft, side by side in one team, against the local Google Calendar and Microsoft Graph servers: a collective booking written to both (each naming the other host and the booker) with a host's e-mail to each, moved on reschedule, removed on cancel; a round robin booking reassigned from the Google host to the Microsoft host and back leaves the old host's calendar and is written to the new host's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, useServer, type Json } from "../helpers/api.js";
import { dayFromToday, utcIso, type Host } from "../helpers/bookings.js";
import { ok } from "../helpers/calls.js";
import { hostAt } from "../helpers/calendars.js";
import { hostWithGoogle, hostWithMicrosoft, startProviderWorld, type ProviderWorld } from "../helpers/providers.js";
import { startSmtp, type ReceivedMail, type TestSmtp } from "../helpers/smtp.js";
import { bookTeam, teamOf, teams } from "../helpers/teams.js";
import { until } from "../helpers/wait.js";

const DAY = dayFromToday(5);
const at = (time: string) => utcIso(DAY, time);

let w: ProviderWorld;
let smtp: TestSmtp;
let owner: Host;
/** The host whose calendar is at Google, and that Google account's address (its primary calendar's id). */
let g: Host;
let googleAccount: string;
/** The host whose calendar is at Microsoft, and that Microsoft user's id. */
let m: Host;
let microsoftUser: string;
let team: Json;

const stamp = `${process.pid}-${Date.now().toString(36)}`;

beforeAll(async () => {
  smtp = await startSmtp();
  w = await startProviderWorld({ SMTP_URL: smtp.url, CALENDAR_CACHE_SECONDS: "0" });
  useServer(w.base);
  googleAccount = `team-${stamp}@gmail.test`;
  microsoftUser = w.microsoft.addUser({ displayName: "Team Outlook", mail: `team-${stamp}@contoso.test` }).id;
  [owner, g, m] = await Promise.all([hostAt(w.base), hostWithGoogle(w, googleAccount), hostWithMicrosoft(w, microsoftUser)]);
  team = await teamOf(owner, [g, m], "Providers");
}, 60_000);

afterAll(async () => {
  useServer(undefined);
  await w?.stop();
  await smtp?.stop();
});

/** The booking's live event in the Google host's calendar (the one whose iCalUID is the booking's chain's), or undefined. */
const atGoogle = (uidBookingId: string) => w.google.events(googleAccount).find((e) => e.iCalUID === `${uidBookingId}@127.0.0.1`);
/** The booking's event in the Microsoft host's calendar (written with the booking's UID as its transactionId), or undefined. */
const atMicrosoft = (uidBookingId: string) => w.microsoft.writtenEvents().find((e) => e.userId === microsoftUser && !e.isCancelled && (e.transactionId ?? "").startsWith(`${uidBookingId}@127.0.0.1`));
const goneFromGoogle = (id: string) => until("the event gone from the Google calendar", () => atGoogle(id) === undefined, { describe: () => atGoogle(id) });
const goneFromMicrosoft = (id: string) => until("the event gone from the Microsoft calendar", () => atMicrosoft(id) === undefined, { describe: () => atMicrosoft(id) });
const emailOf = (h: Host) => String(h.user.email).toLowerCase();

/** The mails about one team event (its name is unique), once `n` have arrived. */
const mailsOf = (event: Json, n: number, pick: (m: ReceivedMail) => boolean = () => true) => smtp.waitFor(n, (x) => (x.parsed.subject ?? "").includes(event.name) && pick(x), 30_000);
const onlyTo = (address: string) => (x: ReceivedMail) => x.envelope.to.length === 1 && x.envelope.to[0].toLowerCase() === address;
/** The ATTENDEE addresses of a mail's invitation. */
function invitees(x: ReceivedMail): string[] {
  const ics = x.parsed.attachments.find((a) => a.contentType === "text/calendar")?.content.toString("utf8").replace(/\r?\n[ \t]/g, "") ?? "";
  return [...ics.matchAll(/^ATTENDEE[;:].*?mailto:(\S+)$/gim)].map((a) => a[1].toLowerCase()).sort();
}

describe("a collective booking of a Google host and a Microsoft host", () => {
  let event: Json;
  let booking: Json;
  beforeAll(async () => {
    event = await ok("rest", owner.key, teams.createEvent(team.id, { name: `Panel ${stamp}`, url: "panel", slot_duration: "30_minutes", padding_duration: "30_minutes", scheduling: "collective", hosts: [{ user_id: g.user.id }, { user_id: m.user.id }] }), 201);
    const made = await bookTeam(team, event, at("10:00"));
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    booking = made.body.data;
  });

  it("is written to both calendars, each naming the booker and the other host; each host gets the host's e-mail", async () => {
    const google = await until("the event in the Google calendar", () => atGoogle(booking.id));
    expect(new Date(google.start.dateTime!).toISOString()).toBe(at("10:00"));
    expect(((google.attendees ?? []) as { email: string }[]).map((a) => a.email.toLowerCase()).sort()).toEqual(["ada@example.com", emailOf(m)].sort());
    expect(google.summary).toContain(String(g.user.full_name));

    const outlook = await until("the event in the Microsoft calendar", () => atMicrosoft(booking.id));
    expect(outlook.startMs).toBe(Date.parse(at("10:00")));
    expect(outlook.subject).toContain(String(m.user.full_name));
    expect(outlook.attendees).toEqual([]);
    // Graph writes no attendees (the service mails everyone itself): the body names the booker, and the other host as a host.
    const [booked, others] = outlook.body.content.split("\n");
    expect(booked).toBe("Booked by: Ada <ada@example.com>");
    expect(others).toBe(`Other hosts: ${g.user.full_name} <${g.user.email}>`);

    const mails = await mailsOf(event, 3);
    const [toG, toM] = [mails.filter(onlyTo(emailOf(g))), mails.filter(onlyTo(emailOf(m)))];
    expect(toG).toHaveLength(1);
    expect(toM).toHaveLength(1);
    expect(invitees(toG[0])).toContain(emailOf(m));
    expect(invitees(toM[0])).toContain(emailOf(g));
  });

  it("a reschedule moves both hosts' events in place, even onto the time their own copies hold; a cancel removes both", async () => {
    const google = await until("the event in the Google calendar", () => atGoogle(booking.id));
    const outlook = await until("the event in the Microsoft calendar", () => atMicrosoft(booking.id));
    // 09:30 with the 30 minutes' padding after it meets 10:00-10:30, where each host's calendar holds the booking's own
    // event: the service's own events are never busy against it (providers.md), whoever the booking is stored under.
    const moved = await rest("POST", `/public/bookings/${booking.private_key}/reschedule`, { body: { booking: { start_time: at("09:30") } } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(201);
    // A moved event keeps the UID of the booking it was first written for.
    await until("the Google event at the new time", () => atGoogle(booking.id)?.start.dateTime !== undefined && new Date(atGoogle(booking.id)!.start.dateTime!).toISOString() === at("09:30"), { describe: () => atGoogle(booking.id) });
    await until("the Microsoft event at the new time", () => atMicrosoft(booking.id)?.startMs === Date.parse(at("09:30")), { describe: () => atMicrosoft(booking.id) });
    expect(atGoogle(booking.id)?.id).toBe(google.id);
    expect(atMicrosoft(booking.id)?.id).toBe(outlook.id);
    expect(w.google.events(googleAccount).filter((e) => e.summary?.startsWith(event.name))).toHaveLength(1);
    expect(w.microsoft.writtenEvents().filter((e) => e.userId === microsoftUser && e.subject.startsWith(event.name))).toHaveLength(1);

    const canceled = await rest("POST", `/public/bookings/${moved.body.data.private_key}/cancel`, { body: { booking: { reason: "sorry" } } });
    expect(canceled.status).toBe(200);
    await Promise.all([goneFromGoogle(booking.id), goneFromMicrosoft(booking.id)]);
  });
});

describe("a round robin booking reassigned between a Google host and a Microsoft host", () => {
  it("leaves the old host's calendar and is written to the new host's, each way", async () => {
    const event = await ok("rest", owner.key, teams.createEvent(team.id, { name: `Demo ${stamp}`, url: "demo", slot_duration: "30_minutes", scheduling: "round_robin", hosts: [{ user_id: g.user.id, priority: 4 }, { user_id: m.user.id }] }), 201);
    const made = await bookTeam(team, event, at("14:00"), "eve@example.com");
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.data.hosts[0].user_id).toBe(g.user.id);
    const id = made.body.data.id;
    await until("the event in the Google calendar", () => atGoogle(id));

    const toM = await rest("POST", `/bookings/${id}/reassign`, { key: owner.key, body: { booking: { host_id: m.user.id } } });
    expect(toM.status, JSON.stringify(toM.body)).toBe(200);
    const outlook = await until("the event in the Microsoft calendar", () => atMicrosoft(id));
    expect(outlook.subject).toBe(`${event.name} (${m.user.full_name}, Ada)`);
    expect(outlook.startMs).toBe(Date.parse(at("14:00")));
    await goneFromGoogle(id);

    const back = await rest("POST", `/bookings/${id}/reassign`, { key: owner.key, body: { booking: { host_id: g.user.id } } });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    const google = await until("the event back in the Google calendar", () => atGoogle(id));
    expect(google.summary).toBe(`${event.name} (${g.user.full_name}, Ada)`);
    expect(new Date(google.start.dateTime!).toISOString()).toBe(at("14:00"));
    await goneFromMicrosoft(id);
    // One event each way: nothing left behind in either calendar.
    expect(w.google.events(googleAccount).filter((e) => e.summary?.startsWith(event.name))).toHaveLength(1);
    expect(w.microsoft.writtenEvents().filter((e) => e.userId === microsoftUser && e.subject.startsWith(event.name))).toHaveLength(0);
  });
});
