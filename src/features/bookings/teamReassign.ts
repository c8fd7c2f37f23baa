// Reassigning a round robin booking (teams.md "Host actions"): to the host named or, without one, to the next host the round robin rules pick who is free then; race-free through the hosts' reservation cells (writes.ts reassignBooking).
import { Code } from "@connectrpc/connect";
import type { AccountReads } from "../../db/accountVersions.js";
import type { BookingDoc } from "../../db/models/booking.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import type { TeamDoc } from "../../db/models/team.js";
import type { Clock } from "../../domain/clock.js";
import { ApiError, invalid, notFound, refusal, REASONS } from "../../domain/errors.js";
import { changeProblem } from "../../domain/booking.js";
import { hostsOf, roundRobinOrder } from "../../domain/team.js";
import type { OutboxWake } from "../../outbox/wake.js";
import { checkSlotFree, isTaken, type BookingPorts } from "./publicService.js";
import { PublicReads } from "./publicReads.js";
import { bookingHistory, candidatesOf, freeOrRefused, hostContext, teamContextOf } from "./teamPublic.js";
import { reassignBooking } from "./writes.js";

const MINUTE_MS = 60_000;

/** 409 `no host is free at that time`: no host of the event (or not the one named) is free for the booking's time. */
function noHostFree(): ApiError {
  return new ApiError(Code.AlreadyExists, "no host is free at that time", { httpStatus: 409, reason: REASONS.noHostFree });
}

/** Reassigns `booking` of `team` (the caller checked as its owner or admin) to `hostId`, or to the host the rules pick. */
export type TeamReassign = (booking: BookingDoc, team: TeamDoc, hostId: string | undefined) => Promise<BookingDoc>;

export function createTeamReassign(deps: { accountReads: AccountReads; wake: OutboxWake; clock: Clock }, ports: BookingPorts): TeamReassign {
  const reads = new PublicReads(deps.accountReads);
  return async (booking, team, hostId) => {
    // _id index; the team's own event (a deleted one's bookings are still the team's).
    const event = await EventModel.findOne({ _id: booking.event_id, user_id: team._id }).lean<EventDoc>();
    if (!event) throw notFound("booking not found");
    if (event.scheduling !== "round_robin") throw refusal(REASONS.notChangeable, "only a round robin booking can be reassigned");
    const now = deps.clock.now();
    const problem = changeProblem({ status: booking.status, start: booking.start_time, end: booking.end_time }, now);
    if (problem) throw refusal(REASONS.notChangeable, problem);
    const ctx = await teamContextOf(reads, team, event);
    const current = hostsOf(booking)[0];
    if (hostId !== undefined && current.toHexString() === hostId) throw invalid("host_id is the booking's host already", "host_id");
    const others = ctx.hosts.filter((h) => !h.user._id.equals(current) && (hostId === undefined || h.user._id.toHexString() === hostId));
    if (hostId !== undefined && others.length === 0) throw invalid("host_id must be a host of the event who is an accepted member of the team", "host_id");

    // Who is free then: each host's own check, as for a booking of the event.
    const minutes = Math.round((booking.end_time.getTime() - booking.start_time.getTime()) / MINUTE_MS);
    const checked = await Promise.all(others.map(async (h) => ((await freeOrRefused(checkSlotFree(ports, deps.accountReads, hostContext(h.user, event), booking.start_time, minutes, now))).free ? h : undefined)));
    const free = checked.filter((h) => h !== undefined);
    if (free.length === 0) throw noHostFree();
    const history = await bookingHistory(ctx, booking.start_time);
    const candidates = candidatesOf(free, history);
    const byId = new Map(free.map((h) => [h.user._id.toHexString(), h]));
    // The named host, or round robin's order; a host another booking takes meanwhile (its cells) gives way to the next.
    for (const pick of roundRobinOrder(candidates, { weights: ctx.weights, bookings: history.total })) {
      const to = byId.get(pick.userId)?.user._id;
      if (to === undefined) continue;
      try {
        return await reassignBooking({ wake: deps.wake, clock: deps.clock, booking, to, reason: hostId === undefined ? pick.reason : "reassigned by the team" });
      } catch (err) {
        if (!isTaken(err)) throw err;
      }
    }
    throw noHostFree();
  };
}
