// A booking's hosts and team as its messages read them (teams.md): every host it holds, read at once, and the team of a team booking.
import mongoose from "mongoose";
import type { BookingDoc } from "../../db/models/booking.js";
import { TeamModel, type TeamDoc } from "../../db/models/team.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { ROOT_PATHS } from "../../domain/rootPaths.js";
import { hostsOf, teamBookingHolders } from "../../domain/team.js";
import type { EventDoc } from "../../db/models/event.js";

/** What a team booking's messages show of its team. */
export interface BookingTeam {
  id: string;
  name: string;
  url: string;
}

/** What a team booking shows of each host it holds (teams.md `hosts`), to its hosts and to its attendee alike. */
export interface ShownHost {
  userId: string;
  fullName: string;
  email: string;
}

/** The booking's `hosts` field, from its hosts' accounts (hostUsersOf, or what the request already read). */
export function shownHosts(users: readonly Pick<UserDoc, "_id" | "full_name" | "email">[]): ShownHost[] {
  return users.map((h) => ({ userId: h._id.toHexString(), fullName: h.full_name, email: h.email }));
}

/** Every host the booking holds, first host first (hostsOf); an account deleted since is left out. */
export async function hostUsersOf(b: Pick<BookingDoc, "user_id" | "host_ids">): Promise<UserDoc[]> {
  const ids = hostsOf(b);
  // _id index.
  const users = await UserModel.find({ _id: mongoose.trusted({ $in: ids }) }).lean<UserDoc[]>();
  const byId = new Map(users.map((u) => [u._id.toHexString(), u]));
  return ids.flatMap((id) => byId.get(id.toHexString()) ?? []);
}

/**
 * The accounts an event's bookings are kept under, when not its own account's: a team event's (a booking is kept
 * under its first host) every member and host of the team (teamBookingHolders); undefined for a personal event.
 */
export async function eventBookingHolders(event: Pick<EventDoc, "team_id" | "hosts">): Promise<mongoose.Types.ObjectId[] | undefined> {
  if (!event.team_id) return undefined;
  // _id index.
  const team = await TeamModel.findById(event.team_id, { members: 1 }).lean<Pick<TeamDoc, "members">>();
  return teamBookingHolders(team?.members ?? [], [event]);
}

/** The team of a team booking, or null (a personal booking, or a team deleted since). */
export async function teamOfBooking(b: Pick<BookingDoc, "team_id">): Promise<BookingTeam | null> {
  if (!b.team_id) return null;
  // _id index.
  const team = await TeamModel.findById(b.team_id, { name: 1, url: 1 }).lean<Pick<TeamDoc, "_id" | "name" | "url">>();
  return team ? { id: team._id.toHexString(), name: team.name, url: team.url } : null;
}

/** The page of a team's event: `<APP_URL>/team/<team url>/<event url>` (teams.md). */
export function teamEventUrl(appUrl: string, team: Pick<BookingTeam, "url">, eventUrl: string): string {
  return `${appUrl}/${ROOT_PATHS.team}/${encodeURIComponent(team.url)}/${encodeURIComponent(eventUrl)}`;
}
