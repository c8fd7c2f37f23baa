// The one writer of teams and their url claims (team_keys): a team url is claimed before a team takes it and let go after, and the memberships change as one conditional write, so no two requests can both win a last place or lose each other's change.
import { systemClock } from "../../domain/clock.js";
import mongoose from "mongoose";
import { accountChanged } from "../../db/accountVersions.js";
import { isDuplicateKeyError } from "../../db/errors.js";
import { TeamKeyModel, TeamModel, type MembershipDoc, type TeamDoc } from "../../db/models/team.js";
import { invalid } from "../../domain/errors.js";

type ObjectId = mongoose.Types.ObjectId;

const URL_TAKEN = "url has already been taken";
/** A claim whose team does not hold its value is taken back only once it is this old (a write still in flight). */
const CLAIM_GRACE_MS = 60_000;

type UrlKeys = Pick<TeamDoc, "url_key" | "url_shape" | "url_looks">;

/** The claims of a team url: its key, its shape and each of its looks (src/domain/urlKey.ts; a team of before rule 4 has none). */
const claimIds = (t: UrlKeys): string[] => [...new Set([`url:${t.url_key}`, `shape:${t.url_shape}`, ...(t.url_looks ?? []).map((look) => `look:${look}`)])];

/** Whether the claim `id` is held by a team that no longer holds its value, long enough ago to be taken back. */
async function staleClaim(id: string, now: Date): Promise<boolean> {
  // _id indexes.
  const claim = await TeamKeyModel.findById(id).lean<{ team_id: ObjectId; at: Date }>();
  if (!claim) return true;
  const team = await TeamModel.findById(claim.team_id, { url_key: 1, url_shape: 1, url_looks: 1 }).lean<UrlKeys>();
  if (team && claimIds(team).includes(id)) return false;
  return now.getTime() - claim.at.getTime() > CLAIM_GRACE_MS;
}

/** Claims the url's keys for `teamId`; 422 `url has already been taken` when another team holds one. */
async function claimUrl(teamId: ObjectId, keys: UrlKeys): Promise<void> {
  // The system's clock: a claim's age tells a write that crashed from one under way (CLAIM_GRACE_MS), as for
  // accounts' keys (src/features/accounts/writes.ts); nothing a test moves.
  const now = systemClock.now();
  for (const id of claimIds(keys)) {
    for (let attempt = 0; ; attempt++) {
      try {
        // _id index: the claim is the uniqueness.
        await TeamKeyModel.collection.insertOne({ _id: id, team_id: teamId, at: now } as never);
        break;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        const mine = await TeamKeyModel.findById(id, { team_id: 1 }).lean<{ team_id: ObjectId }>();
        if (mine?.team_id.equals(teamId)) break;
        if (attempt > 0 || !(await staleClaim(id, now))) {
          await letGo(teamId, claimIds(keys).filter((k) => k !== id));
          throw invalid(URL_TAKEN, "url");
        }
        await TeamKeyModel.deleteOne({ _id: id, team_id: mine?.team_id });
      }
    }
  }
}

async function letGo(teamId: ObjectId, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  // _id index; only the team's own claims.
  await TeamKeyModel.deleteMany({ _id: mongoose.trusted({ $in: [...ids] }), team_id: teamId });
}

/** A new team with its owner's membership; 422 when its url is another team's. */
export async function insertTeam(team: TeamDoc): Promise<void> {
  await claimUrl(team._id, team);
  try {
    await TeamModel.collection.insertOne(team as never);
  } catch (err) {
    await letGo(team._id, claimIds(team));
    throw err;
  }
}

/** Changes the team's name or url; false when it is gone. */
export async function updateTeam(team: TeamDoc, set: Partial<Pick<TeamDoc, "name" | "url" | "url_key" | "url_shape" | "url_looks">>, now: Date): Promise<boolean> {
  const keys = set.url_key === undefined ? team : { url_key: set.url_key, url_shape: set.url_shape ?? team.url_shape, url_looks: set.url_looks };
  const newUrl = set.url_key !== undefined && claimIds(keys).some((k) => !claimIds(team).includes(k));
  if (newUrl) await claimUrl(team._id, keys);
  // _id index.
  const r = await TeamModel.updateOne({ _id: team._id }, { $set: { ...set, updated_at: now } });
  if (r.matchedCount === 0) {
    if (newUrl) await letGo(team._id, claimIds(keys).filter((k) => !claimIds(team).includes(k)));
    return false;
  }
  if (newUrl) await letGo(team._id, claimIds(team).filter((k) => !claimIds(keys).includes(k)));
  await teamChanged(team._id);
  return true;
}

/** The public pages' reads keep a team under its stamps (src/features/bookings/publicReads.ts): every change marks them. */
const teamChanged = (teamId: ObjectId): Promise<void> => accountChanged([teamId], "settings");

/**
 * Replaces the memberships, if the team is still at `version` (what the caller's checks read); false when another
 * change came first (the caller reads again and decides again).
 */
export async function setMembers(team: Pick<TeamDoc, "_id" | "version">, members: readonly MembershipDoc[], now: Date): Promise<boolean> {
  // _id index, conditional on the version read.
  const r = await TeamModel.updateOne({ _id: team._id, version: team.version }, { $set: { members: [...members], version: team.version + 1, updated_at: now } });
  if (r.matchedCount === 1) await teamChanged(team._id);
  return r.matchedCount === 1;
}

/** Deletes the team and lets go of its url. */
export async function deleteTeam(team: TeamDoc): Promise<void> {
  // _id index.
  await TeamModel.deleteOne({ _id: team._id });
  await teamChanged(team._id);
  await letGo(team._id, claimIds(team));
}
