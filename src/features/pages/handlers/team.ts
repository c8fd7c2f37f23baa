// The team's page (GET /team/<team>, teams.md): the team and its public events, and the paths of a team's pages and public API.
import { PublicTeamBookingService } from "../../../../gen/scheduling/v1/public_team_pb.js";
import { avatarName } from "../../../domain/format.js";
import { ROOT_PATHS } from "../../../domain/rootPaths.js";
import { speechOf } from "../pages.js";
import { isEmbed, isPageSegment, keptQuery, pageLocale } from "../request.js";
import type { PageHandler } from "../respond.js";
import { locationText } from "../shared/view.js";
import { sendListing } from "./profile.js";

const enc = encodeURIComponent;

/** The team's page: /team/<team url>. */
export const teamPagePath = (team: string): string => `/${ROOT_PATHS.team}/${enc(team)}`;

/** The public API path of a team event, under which its script reads slots and books (`<base>/slots`, `<base>/bookings`). */
export const teamApiBase = (team: string, event: string): string => `/public/teams/${enc(team)}/events/${enc(event)}`;

export const teamPage: PageHandler = async (req, res, { call }) => {
  const url = String(req.params.team);
  if (!isPageSegment(url)) return "next";
  const embed = isEmbed(req);
  const { team } = await call(PublicTeamBookingService.method.getPublicTeam, { teamUrl: url });
  if (!team) throw new Error("GetPublicTeam answered without a team");
  // A team has no language or clock of its own: the visitor's (?locale=, Accept-Language), else English.
  const speech = speechOf(pageLocale(req, "en"), "24_hours");
  const suffix = keptQuery(req);
  const badge = { name: team.name, avatarName: avatarName(team.name), picture: undefined, href: `${teamPagePath(team.url)}${suffix}` };
  await sendListing(req, res, {
    speech,
    embed,
    host: badge,
    bio: undefined,
    events: team.events.map((e) => ({
      name: e.name,
      href: `${teamPagePath(team.url)}/${enc(e.url)}${suffix}`,
      duration: e.slotDuration,
      description: e.description,
      location: locationText(e.locationKind, undefined, team.name, speech),
      color: e.color,
    })),
  });
};
