// Calls of TeamService for tests, one per RPC with its REST row, and a fresh team url (teams.md).
import { TeamService } from "../../gen/scheduling/v1/team_pb.js";
import { rest, type Json } from "./api.js";
import { ok, withObject, type Call } from "./calls.js";
import { newHost, type Host } from "./fixtures.js";

const enc = encodeURIComponent;
export const teams = {
  create: (team?: Json): Call => ({ service: TeamService, rpc: "createTeam", request: withObject("team", team), rest: { method: "POST", path: "/teams", body: withObject("team", team) }, pick: "team" }),
  list: (): Call => ({ service: TeamService, rpc: "listTeams", request: {}, rest: { method: "GET", path: "/teams" }, pick: "teams" }),
  get: (id: string): Call => ({ service: TeamService, rpc: "getTeam", request: { id }, rest: { method: "GET", path: `/teams/${enc(id)}` }, pick: "team" }),
  update: (id: string, team: Json): Call => ({ service: TeamService, rpc: "updateTeam", request: { id, team }, rest: { method: "PATCH", path: `/teams/${enc(id)}`, body: { team } }, pick: "team" }),
  remove: (id: string): Call => ({ service: TeamService, rpc: "deleteTeam", request: { id }, rest: { method: "DELETE", path: `/teams/${enc(id)}` } }),
  invite: (id: string, member: Json): Call => ({ service: TeamService, rpc: "inviteMember", request: { team_id: id, member }, rest: { method: "POST", path: `/teams/${enc(id)}/members`, body: { member } }, pick: "member" }),
  members: (id: string): Call => ({ service: TeamService, rpc: "listMembers", request: { team_id: id }, rest: { method: "GET", path: `/teams/${enc(id)}/members` }, pick: "members" }),
  accept: (membershipId: string): Call => ({ service: TeamService, rpc: "acceptInvitation", request: { membership_id: membershipId }, rest: { method: "POST", path: `/team_invitations/${enc(membershipId)}/accept` }, pick: "member" }),
  decline: (membershipId: string): Call => ({ service: TeamService, rpc: "declineInvitation", request: { membership_id: membershipId }, rest: { method: "POST", path: `/team_invitations/${enc(membershipId)}/decline` }, pick: "member" }),
  removeMember: (id: string, membershipId: string): Call => ({ service: TeamService, rpc: "removeMember", request: { team_id: id, membership_id: membershipId }, rest: { method: "DELETE", path: `/teams/${enc(id)}/members/${enc(membershipId)}` } }),
  createEvent: (id: string, event: Json): Call => ({ service: TeamService, rpc: "createTeamEvent", request: { team_id: id, event }, rest: { method: "POST", path: `/teams/${enc(id)}/events`, body: { event } }, pick: "event" }),
  listEvents: (id: string): Call => ({ service: TeamService, rpc: "listTeamEvents", request: { team_id: id }, rest: { method: "GET", path: `/teams/${enc(id)}/events` }, pick: "events" }),
  getEvent: (id: string, eventId: string): Call => ({ service: TeamService, rpc: "getTeamEvent", request: { team_id: id, id: eventId }, rest: { method: "GET", path: `/teams/${enc(id)}/events/${enc(eventId)}` }, pick: "event" }),
  updateEvent: (id: string, eventId: string, event: Json): Call => ({ service: TeamService, rpc: "updateTeamEvent", request: { team_id: id, id: eventId, event }, rest: { method: "PATCH", path: `/teams/${enc(id)}/events/${enc(eventId)}`, body: { event } }, pick: "event" }),
  reassign: (bookingId: string, booking?: Json): Call => ({ service: TeamService, rpc: "reassignBooking", request: { id: bookingId, booking: booking ?? {} }, rest: { method: "POST", path: `/bookings/${enc(bookingId)}/reassign`, body: booking === undefined ? undefined : { booking } }, pick: "booking" }),
  deleteEvent: (id: string, eventId: string): Call => ({ service: TeamService, rpc: "deleteTeamEvent", request: { team_id: id, id: eventId }, rest: { method: "DELETE", path: `/teams/${enc(id)}/events/${enc(eventId)}` } }),
};

let seq = 0;
/** A team url unique in the run. */
export const teamUrl = (tag: string): string => `team-${tag}-${process.pid}-${Date.now().toString(36)}-${++seq}`;

/** A team of `owner` (zone UTC) whose `others` have accepted their invitations. */
export async function teamOf(owner: Host, others: readonly Host[], name = "Sales"): Promise<Json> {
  const team = await ok("rest", owner.key, teams.create({ name, url: teamUrl(name.toLowerCase()), timezone: "UTC" }), 201);
  for (const h of others) {
    const invited = await ok("rest", owner.key, teams.invite(team.id, { email: h.user.email }), 201);
    await ok("rest", h.key, teams.accept(invited.id));
  }
  return team;
}

/** Books the team event at `start` on its public path (no key). */
export const bookTeam = (team: Json, event: Json, start: string, email = "ada@example.com") =>
  rest("POST", `/public/teams/${team.url}/events/${event.url}/bookings`, { body: { booking: { start_time: start, attendee_name: "Ada", attendee_email: email } } });

/** Books the host's personal event at `start` on its public path (no key). */
export const bookPersonal = (h: Host, event: Json, start: string, email = "bo@example.com") =>
  rest("POST", `/public/users/${h.user.url}/events/${event.url}/bookings`, { body: { booking: { start_time: start, attendee_name: "Bo", attendee_email: email } } });

/** Three new hosts (zone UTC, always open); `a` owns their team `name`, whose collective event `panel` `b` and `c` host. */
export async function collectiveTeam(name: string): Promise<{ a: Host; b: Host; c: Host; team: Json; collective: Json }> {
  const [a, b, c] = await Promise.all([newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" }), newHost({ timezone: "UTC" })]);
  const team = await teamOf(a, [b, c], name);
  const collective = await ok("rest", a.key, teams.createEvent(team.id, { name: "Panel", url: "panel", slot_duration: "30_minutes", scheduling: "collective", hosts: [{ user_id: b.user.id }, { user_id: c.user.id }] }), 201);
  return { a, b, c, team, collective };
}
