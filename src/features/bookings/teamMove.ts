// Where a team booking may move (teams.md, docs/teams.md "Moving a team booking"): a collective booking only to a time every host it holds is free at; a round robin one stays with its host when that host is free then, else (unless the event keeps the host) goes to the free host round robin picks.
import type { AccountReads } from "../../db/accountVersions.js";
import { TeamModel, type TeamDoc } from "../../db/models/team.js";
import type { UserDoc } from "../../db/models/user.js";
import { refusal, REASONS } from "../../domain/errors.js";
import { slotNotAvailable } from "../../domain/eventRules.js";
import { hostsOf, roundRobinOrder } from "../../domain/team.js";
import { checkSlotFree, type BookingPorts, type MoveTarget, type TeamMove, type TeamMoves } from "./publicService.js";
import { PublicReads } from "./publicReads.js";
import { bookingHistory, candidatesOf, freeOrRefused, hostContext, presentTeamBooking, teamContextOf } from "./teamPublic.js";

/** Where a team booking may move (moveBooking: the booker's reschedule and the host's), each host by their own check (checkSlotFree). */
export function createTeamMoves(deps: { accountReads: AccountReads }, ports: BookingPorts): TeamMoves {
  const reads = new PublicReads(deps.accountReads);
  return async (old, event, start, minutes, now, slotCheck) => {
    // _id index; a team event is kept under its team's id.
    const team = await TeamModel.findById(event.user_id).lean<TeamDoc>();
    if (!team) throw refusal(REASONS.changedMeanwhile, "the event no longer takes bookings");
    const ctx = await teamContextOf(reads, team, event);
    const present: TeamMove["present"] = (b, appUrl, at) => presentTeamBooking(appUrl, at, b, ctx);
    // Each host's own check, as for a booking of the event, the booking itself set aside (and the rules, if the host overrides them).
    const check = (user: UserDoc) => freeOrRefused(checkSlotFree(ports, deps.accountReads, hostContext(user, event), start, minutes, now, slotCheck));
    const taken = () => slotNotAvailable("taken", { eventId: event._id.toHexString(), start });
    const held = hostsOf(old);

    if (event.scheduling === "collective") {
      // Every host the booking holds, also one no longer among the event's hosts (their cells move with it).
      const since = performance.now();
      const users = await Promise.all(held.map(async (id) => ctx.hosts.find((h) => h.user._id.equals(id))?.user ?? (await reads.hostById(id, since))));
      const checked = await Promise.all(users.flatMap((u) => (u ? [check(u)] : [])));
      // The first refusal in the booking's order of hosts answers, whichever check ended first.
      const refused = checked.find((c) => c.refusal)?.refusal;
      if (refused) throw refused;
      if (checked.length === 0 || !checked[0].free) throw taken();
      return { targets: [{ free: checked[0].free }], present };
    }

    // Round robin: the host keeps it when free then (nobody else's calendar changes), as the slots listed offer.
    const current = ctx.hosts.find((h) => h.user._id.equals(held[0]));
    const own = current ? await check(current.user) : undefined;
    if (own?.free) return { targets: [{ free: own.free }], present };
    if (event.reschedule_with_same_host) throw own?.refusal ?? taken();
    const others = await Promise.all(ctx.hosts.filter((h) => h !== current).map(async (h) => ({ host: h, ...(await check(h.user)) })));
    const free = others.flatMap((c) => (c.free ? [{ ...c, free: c.free }] : []));
    if (free.length === 0) throw own?.refusal ?? others.find((c) => c.refusal)?.refusal ?? taken();
    const history = await bookingHistory(ctx, start);
    const byId = new Map(free.map((c) => [c.host.user._id.toHexString(), c]));
    const targets = roundRobinOrder(candidatesOf(free.map((c) => c.host), history), { weights: ctx.weights, bookings: history.total }).flatMap((pick): MoveTarget[] => {
      const chosen = byId.get(pick.userId);
      return chosen ? [{ free: chosen.free, host: { id: chosen.host.user._id, reason: pick.reason } }] : [];
    });
    return { targets, present };
  };
}
