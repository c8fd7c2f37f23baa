// Who may do what in a team (teams.md): the caller's accepted membership finds the team (else 404), and the roles a change needs (else 403).
import mongoose from "mongoose";
import { objectIdOf } from "../../db/ids.js";
import { TeamModel, type MembershipDoc, type TeamDoc, type TeamRole } from "../../db/models/team.js";
import type { UserDoc } from "../../db/models/user.js";
import { forbidden, notFound } from "../../domain/errors.js";
import { acceptedMembership } from "../../domain/team.js";

const TEAM_NOT_FOUND = "team not found";

/** The caller's accepted membership of the team, if any. */
export function membershipOf(team: Pick<TeamDoc, "members">, userId: mongoose.Types.ObjectId): MembershipDoc | undefined {
  return acceptedMembership(team.members, userId);
}

/** The team `id` with the caller an accepted member of it; 404 otherwise (a stranger learns nothing of it). */
export async function teamOfMember(caller: Pick<UserDoc, "_id">, id: string): Promise<{ team: TeamDoc; me: MembershipDoc }> {
  const _id = objectIdOf(id);
  // _id index.
  const team = _id === null ? null : await TeamModel.findById(_id).lean<TeamDoc>();
  const me = team ? membershipOf(team, caller._id) : undefined;
  if (!team || !me) throw notFound(TEAM_NOT_FOUND);
  return { team, me };
}

/** 403 unless the member holds one of `roles`. */
function requireRole(me: MembershipDoc, roles: readonly TeamRole[]): void {
  if (!roles.includes(me.role)) throw forbidden(`only the team's ${roles.join(" or ")} may do this`);
}

/** The team `id` with the caller an accepted member holding one of `roles`: 404 for a stranger, 403 for a member without the role. */
export async function teamOfRole(caller: Pick<UserDoc, "_id">, id: string, roles: readonly TeamRole[]): Promise<{ team: TeamDoc; me: MembershipDoc }> {
  const found = await teamOfMember(caller, id);
  requireRole(found.me, roles);
  return found;
}

/** The user ids of the team's accepted members. */
export function acceptedMemberIds(team: Pick<TeamDoc, "members">): Set<string> {
  return new Set(team.members.filter((m) => m.accepted).map((m) => m.user_id.toHexString()));
}
