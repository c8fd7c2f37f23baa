// REST rows of teams, their members, invitations and events (teams.md) onto TeamService, and of public team booking onto PublicTeamBookingService.
import { TeamService } from "../../../gen/scheduling/v1/team_pb.js";
import { PublicTeamBookingService } from "../../../gen/scheduling/v1/public_team_pb.js";
import type { JsonValue } from "@bufbuild/protobuf";
import { fromPath, responseField as field, type RestRoute } from "../../platform/rest/table.js";
import { bookedMessage, listQuery, wholeParam } from "../bookings/index.js";

const byId = fromPath({ id: "id" });
const byTeam = fromPath({ team_id: "id" });
const byTeamEvent = fromPath({ team_id: "id", id: "event_id" });
const byInvitation = fromPath({ membership_id: "membership_id" });

export const teamRoutes: RestRoute[] = [
  { kind: "rpc", method: "POST", path: "/teams", service: TeamService, rpc: "createTeam", status: 201, required: ["name", "url"], data: field("team"), message: "team created", summary: "Create a team; the caller becomes its owner" },
  { kind: "rpc", method: "GET", path: "/teams", service: TeamService, rpc: "listTeams", body: "none", data: field("teams"), message: "teams found", summary: "The teams the caller is an accepted member of" },
  { kind: "rpc", method: "GET", path: "/teams/:id", service: TeamService, rpc: "getTeam", body: "none", request: byId, data: field("team"), message: "team found", summary: "Get a team" },
  { kind: "rpc", method: "PATCH", path: "/teams/:id", service: TeamService, rpc: "updateTeam", request: fromPath({ id: "id" }, "team"), data: field("team"), message: "team updated", summary: "Rename a team or change its url (owner, admin)" },
  { kind: "rpc", method: "DELETE", path: "/teams/:id", service: TeamService, rpc: "deleteTeam", body: "none", request: byId, message: "team deleted", summary: "Delete a team and its events (owner); booked meetings stay booked" },
  {
    kind: "rpc", method: "POST", path: "/teams/:id/members", service: TeamService, rpc: "inviteMember", status: 201, request: fromPath({ team_id: "id" }, "member"), required: ["email"],
    data: field("member"), message: "member invited", summary: "Invite the account with this e-mail (owner, admin)",
  },
  { kind: "rpc", method: "GET", path: "/teams/:id/members", service: TeamService, rpc: "listMembers", body: "none", request: byTeam, data: field("members"), message: "members found", summary: "The team's members and open invitations" },
  {
    kind: "rpc", method: "DELETE", path: "/teams/:id/members/:membership_id", service: TeamService, rpc: "removeMember", body: "none", request: fromPath({ team_id: "id", membership_id: "membership_id" }),
    message: "member removed", summary: "Remove a member (owner, admin, or the member itself)",
  },
  {
    kind: "rpc", method: "POST", path: "/team_invitations/:membership_id/accept", service: TeamService, rpc: "acceptInvitation", body: "none", request: byInvitation,
    data: field("member"), message: "invitation accepted", summary: "Accept an invitation (the invited account)",
  },
  {
    kind: "rpc", method: "POST", path: "/team_invitations/:membership_id/decline", service: TeamService, rpc: "declineInvitation", body: "none", request: byInvitation,
    data: field("member"), message: "invitation declined", summary: "Decline an invitation (the invited account)",
  },
  {
    kind: "rpc", method: "POST", path: "/teams/:id/events", service: TeamService, rpc: "createTeamEvent", status: 201, request: fromPath({ team_id: "id" }, "event"), required: ["name", "url", "scheduling", "hosts"],
    data: field("event"), message: "event created", summary: "Create a team event (owner, admin)",
  },
  { kind: "rpc", method: "GET", path: "/teams/:id/events", service: TeamService, rpc: "listTeamEvents", body: "none", request: byTeam, data: field("events"), message: "events found", summary: "The team's events" },
  { kind: "rpc", method: "GET", path: "/teams/:id/events/:event_id", service: TeamService, rpc: "getTeamEvent", body: "none", request: byTeamEvent, data: field("event"), message: "event found", summary: "Get a team event" },
  {
    kind: "rpc", method: "PATCH", path: "/teams/:id/events/:event_id", service: TeamService, rpc: "updateTeamEvent", request: fromPath({ team_id: "id", id: "event_id" }, "event"),
    data: field("event"), message: "event updated", summary: "Change a team event (owner, admin)",
  },
  {
    kind: "rpc", method: "DELETE", path: "/teams/:id/events/:event_id", service: TeamService, rpc: "deleteTeamEvent", body: "none", request: byTeamEvent,
    message: "event deleted", summary: "Delete a team event (owner, admin)",
  },
  {
    kind: "rpc", method: "GET", path: "/teams/:id/bookings", service: TeamService, rpc: "listTeamBookings", body: "none",
    request: ({ params, query }) => JSON.parse(JSON.stringify({ team_id: params.id, ...listQuery(query) })) as JsonValue,
    query: [{ name: "category", description: "upcoming (default), recent, past, canceled or archived" }, { name: "date_from", description: "YYYY-MM-DD" }, { name: "date_to", description: "YYYY-MM-DD" }, { name: "page[number]", description: "page to return, default 1" }, { name: "page[limit]", description: "bookings per page, default 10, up to 500" }],
    message: "Bookings found", summary: "The team events' bookings, with their hosts (owner, admin)",
  },
  {
    kind: "rpc", method: "POST", path: "/bookings/:id/reassign", service: TeamService, rpc: "reassignBooking", request: fromPath({ id: "id" }, "booking"), bodyOptional: true,
    data: field("booking"), message: "booking reassigned", summary: "Give a round robin booking to another host (team owner, admin): the one named, else the next free one",
  },
];

const teamEvent = fromPath({ team_url: "team_url", event_url: "event_url" });
const text = (query: Record<string, unknown>, key: string): string | undefined => (typeof query[key] === "string" ? (query[key] as string) : undefined);

export const publicTeamRoutes: RestRoute[] = [
  { kind: "rpc", method: "GET", path: "/public/teams/:team_url", service: PublicTeamBookingService, rpc: "getPublicTeam", body: "none", request: fromPath({ team_url: "team_url" }), data: field("team"), message: "team found", summary: "A team's public page: its public events" },
  { kind: "rpc", method: "GET", path: "/public/teams/:team_url/events/:event_url", service: PublicTeamBookingService, rpc: "getPublicTeamEvent", body: "none", request: teamEvent, data: field("event"), message: "event found", summary: "A team event's public page" },
  {
    kind: "rpc", method: "GET", path: "/public/teams/:team_url/events/:event_url/slots", service: PublicTeamBookingService, rpc: "listTeamSlots", body: "none",
    request: ({ params, query }) => ({
      team_url: params.team_url,
      event_url: params.event_url,
      ...Object.fromEntries(["date_from", "date_to", "timezone", "private_key"].flatMap((k) => (text(query, k) === undefined ? [] : [[k, text(query, k) as string]]))),
      ...(query.duration === undefined ? {} : { duration: wholeParam(query, "duration") as number }),
    }),
    query: [{ name: "date_from" }, { name: "date_to" }, { name: "timezone" }, { name: "private_key" }, { name: "duration", description: "the length in minutes the slots are for, one of the event's durations; default the first", schema: { type: "integer" as const } }],
    message: "slots found", summary: "Free times of a team event: any host free (round robin), every host free (collective)",
  },
  {
    kind: "rpc", method: "POST", path: "/public/teams/:team_url/events/:event_url/bookings", service: PublicTeamBookingService, rpc: "createTeamBooking", status: 201,
    request: fromPath({ team_url: "team_url", event_url: "event_url" }, "booking"), required: ["start_time", "attendee_name", "attendee_email"],
    data: field("booking"), message: "booking confirmed", messageOf: bookedMessage, summary: "Book a team event",
  },
];
