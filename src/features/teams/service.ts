// TeamService: teams, their members (invitations the invited account accepts; roles owner, admin, member) and their events (teams.md).
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import { TeamService, type MembershipSchema, type TeamSchema } from "../../../gen/scheduling/v1/team_pb.js";
import { objectIdOf } from "../../db/ids.js";
import { TeamModel, type MembershipDoc, type TeamDoc } from "../../db/models/team.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { ApiError, blank, invalid, notFound, notInList, requireFields, requireObject, tooLong } from "../../domain/errors.js";
import { charLength, checkUserUrl, normaliseEmail, normaliseUrl } from "../../domain/user.js";
import { userUrlKeys } from "../../domain/urlKey.js";
import { serviceZoneOf } from "../../domain/zoneNames.js";
import { accountsByKey, type Access } from "../accounts/index.js";
import { bookingById, hostFormats, presentBooking, teamBookingList, type EventSummary, type TeamReassign } from "../bookings/index.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { membershipOf, teamOfMember, teamOfRole } from "./members.js";
import { teamBookingHolders } from "../../domain/team.js";
import { deleteTeam, insertTeam, setMembers, updateTeam } from "./writes.js";
import { createTeamEventMethods, deleteTeamEvents, type TeamEventPorts } from "./events.js";

type TeamMessage = MessageInitShape<typeof TeamSchema>;
type MembershipMessage = MessageInitShape<typeof MembershipSchema>;

const NAME_MAX = 80;
const INVITE_ROLES = ["member", "admin"] as const;
/** Two changes of one team's members racing: the loser reads again; more tries than this means something else is wrong. */
const MEMBER_WRITE_ATTEMPTS = 10;

function presentTeam(appUrl: string, t: TeamDoc): TeamMessage {
  return { id: t._id.toHexString(), name: t.name, url: t.url, timezone: t.timezone, absoluteUrl: `${appUrl}/team/${encodeURIComponent(t.url)}`, createdAt: t.created_at.toISOString() };
}

async function presentMembers(team: TeamDoc, members: readonly MembershipDoc[]): Promise<MembershipMessage[]> {
  // _id index.
  const users = await UserModel.find({ _id: mongoose.trusted({ $in: members.map((m) => m.user_id) }) }, { full_name: 1, email: 1 }).lean<Pick<UserDoc, "_id" | "full_name" | "email">[]>();
  const byId = new Map(users.map((u) => [u._id.toHexString(), u]));
  return members.map((m) => {
    const user = byId.get(m.user_id.toHexString());
    return { id: m._id.toHexString(), teamId: team._id.toHexString(), userId: m.user_id.toHexString(), fullName: user?.full_name ?? "", email: user?.email ?? "", role: m.role, accepted: m.accepted };
  });
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") blank("name");
  if (charLength(trimmed) > NAME_MAX) tooLong("name", NAME_MAX);
  return trimmed;
}

function checkUrl(url: string): Pick<TeamDoc, "url" | "url_key" | "url_shape" | "url_looks"> {
  const stored = normaliseUrl(url.trim());
  checkUserUrl(stored);
  const { url_key, url_shape, url_looks } = userUrlKeys(stored);
  return { url: stored, url_key, url_shape, url_looks };
}

/**
 * Changes the team's memberships by `change` (given the team as just read; it throws to refuse), written only if
 * no other change came first, else read and decided again.
 */
async function changeMembers(teamId: mongoose.Types.ObjectId, now: Date, change: (team: TeamDoc) => MembershipDoc[]): Promise<{ team: TeamDoc; members: MembershipDoc[] }> {
  for (let attempt = 0; attempt < MEMBER_WRITE_ATTEMPTS; attempt++) {
    // _id index.
    const team = await TeamModel.findById(teamId).lean<TeamDoc>();
    if (!team) throw notFound("team not found");
    const members = change(team);
    if (await setMembers(team, members, now)) return { team: { ...team, members, version: team.version + 1 }, members };
  }
  throw invalid("the team's members were changed meanwhile; try again");
}

/** The team holding the invitation `membershipId` to the caller, and the invitation. */
async function invitationOf(caller: UserDoc, membershipId: string): Promise<{ team: TeamDoc; invitation: MembershipDoc }> {
  const _id = objectIdOf(membershipId);
  // members._id index.
  const team = _id === null ? null : await TeamModel.findOne({ "members._id": _id }).lean<TeamDoc>();
  const invitation = team?.members.find((m) => m._id.equals(_id as mongoose.Types.ObjectId) && m.user_id.equals(caller._id));
  if (!team || !invitation) throw notFound("invitation not found");
  return { team, invitation };
}

/** GET /teams/<id>/bookings (owner, admin): the bookings of the team's events, by every host they may be kept under. */
function listTeamBookingsOf(access: Access): ServiceImpl<typeof TeamService>["listTeamBookings"] {
  return async (req, ctx) => {
    const caller = await access.authenticate(ctx);
    const { team } = await teamOfRole(caller, req.teamId, ["owner", "admin"]);
    // (user_id, created_at) index: deleted events' bookings are still the team's.
    const events = await EventModel.find({ user_id: team._id }, { name: 1, color: 1, location: 1, hosts: 1 }).lean<(EventSummary & Pick<EventDoc, "hosts">)[]>();
    return teamBookingList(events, teamBookingHolders(team.members, events), hostFormats({ ...caller, timezone: team.timezone }), req, access.clock.now());
  };
}

/**
 * A round robin booking of the team's events given to another host (teams.md "Host actions"): its team's owner or
 * admins only; a booking of no team, or of a team the caller is not in, is as unknown as a missing one.
 */
function reassignBookingOf(access: Access, reassign: TeamReassign): ServiceImpl<typeof TeamService>["reassignBooking"] {
  return async (req, ctx) => {
    const caller = await access.authenticate(ctx);
    const booking = await bookingById(req.id);
    if (!booking || !booking.team_id) throw notFound(BOOKING_NOT_FOUND);
    const { team } = await teamOfRole(caller, booking.team_id.toHexString(), ["owner", "admin"]).catch((err: unknown) => {
      throw err instanceof ApiError && err.code === Code.NotFound ? notFound(BOOKING_NOT_FOUND) : err;
    });
    const hostId = req.booking?.hostId;
    const done = await reassign(booking, team, hostId === undefined || hostId === "" ? undefined : hostId);
    // _id index; a deleted event still names its bookings.
    const event = (await EventModel.findById(done.event_id, { name: 1, color: 1, location: 1 }).lean<EventSummary>()) ?? { _id: done.event_id, name: "", color: "", location: { name: "no_location" } as EventSummary["location"] };
    return { booking: await presentBooking(done, event, hostFormats({ ...caller, timezone: team.timezone }), access.clock.now()) };
  };
}

const BOOKING_NOT_FOUND = "booking not found";

export function createTeamService(access: Access, appUrl: () => string, ports: TeamEventPorts, reassign: TeamReassign): ServiceImpl<typeof TeamService> {
  return {
    async createTeam(req, ctx) {
      const caller = await access.authenticate(ctx);
      requireFields("team", { name: req.team?.name, url: req.team?.url });
      const input = req.team as NonNullable<typeof req.team>;
      const now = access.clock.now();
      const team: TeamDoc = {
        _id: new mongoose.Types.ObjectId(),
        name: checkName(input.name ?? ""),
        ...checkUrl(input.url ?? ""),
        timezone: input.timezone === undefined || input.timezone === "" ? caller.timezone : serviceZoneOf("timezone", input.timezone),
        members: [{ _id: new mongoose.Types.ObjectId(), user_id: caller._id, role: "owner", accepted: true, invited_at: now }],
        version: 0,
        created_at: now,
        updated_at: now,
      };
      await insertTeam(team);
      return { team: presentTeam(appUrl(), team) };
    },

    async listTeams(_req, ctx) {
      const caller = await access.authenticate(ctx);
      // members.user_id index.
      const teams = await TeamModel.find({ "members.user_id": caller._id }).lean<TeamDoc[]>();
      // Oldest first; an account belongs to few teams.
      teams.sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a._id.toHexString().localeCompare(b._id.toHexString()));
      return { teams: teams.filter((t) => membershipOf(t, caller._id)).map((t) => presentTeam(appUrl(), t)) };
    },

    async getTeam(req, ctx) {
      const caller = await access.authenticate(ctx);
      return { team: presentTeam(appUrl(), (await teamOfMember(caller, req.id)).team) };
    },

    async updateTeam(req, ctx) {
      const caller = await access.authenticate(ctx);
      requireObject("team", req.team);
      const { team } = await teamOfRole(caller, req.id, ["owner", "admin"]);
      const set: Partial<Pick<TeamDoc, "name" | "url" | "url_key" | "url_shape" | "url_looks">> = {};
      if (req.team.name !== undefined) set.name = checkName(req.team.name);
      if (req.team.url !== undefined) Object.assign(set, checkUrl(req.team.url));
      if (Object.keys(set).length > 0 && !(await updateTeam(team, set, access.clock.now()))) throw notFound("team not found");
      return { team: presentTeam(appUrl(), { ...team, ...set }) };
    },

    async deleteTeam(req, ctx) {
      const caller = await access.authenticate(ctx);
      const { team } = await teamOfRole(caller, req.id, ["owner"]);
      // Its events go with it; the meetings booked stay booked (their bookings are the hosts').
      await deleteTeamEvents(team._id, access.clock.now());
      await deleteTeam(team);
      return {};
    },

    async inviteMember(req, ctx) {
      const caller = await access.authenticate(ctx);
      requireObject("member", req.member);
      requireFields("member", { email: req.member.email });
      const role = req.member.role ?? "member";
      if (!(INVITE_ROLES as readonly string[]).includes(role)) notInList("role", INVITE_ROLES, role);
      const { team } = await teamOfRole(caller, req.teamId, ["owner", "admin"]);
      const invited = (await accountsByKey("email", [normaliseEmail(req.member.email ?? "")])).values().next().value as UserDoc | undefined;
      if (!invited) throw notFound("account not found");
      const membership: MembershipDoc = { _id: new mongoose.Types.ObjectId(), user_id: invited._id, role: role as MembershipDoc["role"], accepted: false, invited_at: access.clock.now() };
      const { team: changed } = await changeMembers(team._id, access.clock.now(), (t) => {
        const me = membershipOf(t, caller._id);
        if (!me || me.role === "member") throw notFound("team not found");
        if (t.members.some((m) => m.user_id.equals(invited._id))) throw invalid("member has already been invited", "email");
        return [...t.members, membership];
      });
      return { member: (await presentMembers(changed, [membership]))[0] };
    },

    async listMembers(req, ctx) {
      const caller = await access.authenticate(ctx);
      const { team } = await teamOfMember(caller, req.teamId);
      return { members: await presentMembers(team, team.members) };
    },

    async acceptInvitation(req, ctx) {
      const caller = await access.authenticate(ctx);
      const { team } = await invitationOf(caller, req.membershipId);
      const id = objectIdOf(req.membershipId) as mongoose.Types.ObjectId;
      const { team: changed, members } = await changeMembers(team._id, access.clock.now(), (t) => {
        if (!t.members.some((m) => m._id.equals(id))) throw notFound("invitation not found");
        return t.members.map((m) => (m._id.equals(id) ? { ...m, accepted: true } : m));
      });
      return { member: (await presentMembers(changed, members.filter((m) => m._id.equals(id))))[0] };
    },

    async declineInvitation(req, ctx) {
      const caller = await access.authenticate(ctx);
      const { team, invitation } = await invitationOf(caller, req.membershipId);
      // An accepted membership is left by removing it; declining is for an invitation still open.
      if (invitation.accepted) throw invalid("invitation has already been accepted");
      const { team: changed } = await changeMembers(team._id, access.clock.now(), (t) => t.members.filter((m) => !m._id.equals(invitation._id)));
      return { member: (await presentMembers(changed, [invitation]))[0] };
    },

    async removeMember(req, ctx) {
      const caller = await access.authenticate(ctx);
      const { team, me } = await teamOfMember(caller, req.teamId);
      const id = objectIdOf(req.membershipId);
      const target = id === null ? undefined : team.members.find((m) => m._id.equals(id));
      if (!target) throw notFound("member not found");
      if (!target.user_id.equals(caller._id) && me.role === "member") await teamOfRole(caller, req.teamId, ["owner", "admin"]);
      if (target.role === "owner") throw invalid("the team's owner cannot be removed; delete the team instead");
      // The member's future team bookings stay theirs; round robin picks only accepted members, so no longer them.
      await changeMembers(team._id, access.clock.now(), (t) => t.members.filter((m) => !m._id.equals(target._id)));
      return {};
    },

    ...createTeamEventMethods(access, ports),
    listTeamBookings: listTeamBookingsOf(access),
    reassignBooking: reassignBookingOf(access, reassign),
  };
}
