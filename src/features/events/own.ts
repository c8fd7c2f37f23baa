// The caller's own event by id, and what the caller manages (their own, or a team's for its owner and admins): read by the event service, its single-use links and the booking and reminder services.
import mongoose from "mongoose";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { TeamModel, type TeamDoc, type TeamRole } from "../../db/models/team.js";
import type { UserDoc } from "../../db/models/user.js";
import { objectIdOf } from "../../db/ids.js";
import { readOncePerTurn } from "../../db/sharedRead.js";
import { forbidden, notFound } from "../../domain/errors.js";
import { acceptedMembership, TEAM_MANAGERS } from "../../domain/team.js";

type ObjectId = mongoose.Types.ObjectId;

/** The caller's undeleted event `_id`, or null; `shared` as ownEvent says. */
async function readOwnEvent(host: Pick<UserDoc, "_id">, _id: ObjectId, shared: boolean): Promise<EventDoc | null> {
  const filter = { _id, user_id: host._id, deleted: false as const };
  // _id index; owner and deleted flag make another account's or a deleted event as unknown as a missing one.
  const read = () => EventModel.findOne(filter).lean<EventDoc>();
  return shared ? readOncePerTurn(`events ${_id.toHexString()} ${host._id.toHexString()}`, read) : read();
}

/**
 * The caller's undeleted event with this id, or NOT_FOUND; shared by the event and booking services. `shared`:
 * concurrent callers asking within one turn get one read and one object (src/db/sharedRead.ts), for the host's
 * read-only booking lists, which many tabs or clients read at once; such a caller must not modify the event.
 */
export async function ownEvent(host: UserDoc, id: string, shared = false): Promise<EventDoc> {
  const _id = objectIdOf(id);
  const event = _id === null ? null : await readOwnEvent(host, _id, shared);
  if (!event) throw notFound("event not found");
  return event;
}

/** The teams the caller is an accepted member of, with the caller's role in each, by team id. */
async function rolesInTeams(host: Pick<UserDoc, "_id">): Promise<Map<string, TeamRole>> {
  // members.user_id index (to every shard: a team is found by its members, docs/operations.md).
  const teams = await TeamModel.find({ "members.user_id": host._id }, { members: 1 }).lean<Pick<TeamDoc, "_id" | "members">[]>();
  const roles = new Map<string, TeamRole>();
  for (const t of teams) {
    const me = acceptedMembership(t.members, host._id);
    if (me) roles.set(t._id.toHexString(), me.role);
  }
  return roles;
}

/**
 * A document of the caller's, else of a team the caller is an accepted member of (a team's documents are kept under
 * the team's id, as its events are): `findAmong(owners)` reads it among those accounts. A team's is for its owner
 * and admins (teams.md); a member gets 403, anyone else 404 `missing`, as for another account's.
 */
export async function ownOrManaged<T extends { user_id: ObjectId }>(host: Pick<UserDoc, "_id">, own: () => Promise<T | null>, findAmong: (teams: ObjectId[]) => Promise<T | null>, missing: string): Promise<T> {
  const mine = await own();
  if (mine) return mine;
  const roles = await rolesInTeams(host);
  const found = roles.size === 0 ? null : await findAmong([...roles.keys()].map((id) => new mongoose.Types.ObjectId(id)));
  const role = found ? roles.get(found.user_id.toHexString()) : undefined;
  if (!found || role === undefined) throw notFound(missing);
  if (!(TEAM_MANAGERS as readonly TeamRole[]).includes(role)) throw forbidden(`only the team's ${TEAM_MANAGERS.join(" or ")} may do this`);
  return found;
}

/**
 * The caller's undeleted event, or a team's whose owner or admin the caller is (its reminders, single-use links
 * and bookings are theirs to manage; the event itself changes on the team's routes). `shared` as ownEvent says.
 */
export async function managedEvent(host: Pick<UserDoc, "_id">, id: string, shared = false): Promise<EventDoc> {
  const _id = objectIdOf(id);
  if (_id === null) throw notFound("event not found");
  return ownOrManaged(
    host,
    () => readOwnEvent(host, _id, shared),
    // _id index; the caller's teams' only (each team's shard).
    (teams) => EventModel.findOne({ _id, user_id: mongoose.trusted({ $in: teams }), deleted: false }).lean<EventDoc>(),
    "event not found",
  );
}
