// The bookings of a team's events for its owner and admins (teams.md "Host actions"): the list shape of an event's bookings, each record with its hosts.
import type { MessageInitShape } from "@bufbuild/protobuf";
import mongoose from "mongoose";
import type { BookingHostSchema } from "../../../gen/scheduling/v1/booking_pb.js";
import type { ListTeamBookingsResponseSchema } from "../../../gen/scheduling/v1/team_pb.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { categoryRule, listingRange, paginationOf, readCategory, readPage, selectCategory, type HostFormats, type PageRequestInput } from "../../domain/booking.js";
import { hostsOf } from "../../domain/team.js";
import { presentRecord, type EventSummary } from "./present.js";
import { SNAPSHOT_FIELDS, snapshotOf, type SnapshotFields } from "./snapshots.js";

type ObjectId = mongoose.Types.ObjectId;
type HostMessage = MessageInitShape<typeof BookingHostSchema>;

/** The hosts of bookings, by user id: `user_id`, `full_name`, `email`. */
async function hostsById(ids: readonly ObjectId[]): Promise<Map<string, HostMessage>> {
  if (ids.length === 0) return new Map();
  // _id index.
  const users = await UserModel.find({ _id: mongoose.trusted({ $in: [...ids] }) }, { full_name: 1, email: 1 }).lean<Pick<UserDoc, "_id" | "full_name" | "email">[]>();
  return new Map(users.map((u) => [u._id.toHexString(), { userId: u._id.toHexString(), fullName: u.full_name, email: u.email }]));
}

/**
 * One page of the team events' bookings in `category`, each with its hosts. `hostIds`: every account that may hold
 * one (the bookings are kept under their host's account).
 */
export async function teamBookingList(
  events: readonly EventSummary[],
  hostIds: readonly ObjectId[],
  formats: HostFormats,
  req: { category?: string; dateFrom?: string; dateTo?: string; page?: PageRequestInput },
  now: Date,
): Promise<MessageInitShape<typeof ListTeamBookingsResponseSchema>> {
  const category = readCategory(req.category);
  const rule = categoryRule(category, listingRange(category, req.dateFrom, req.dateTo, formats.zone, now), now);
  const page = readPage(req.page);
  if (events.length === 0 || hostIds.length === 0) return { page: paginationOf(page, 0), records: [] };
  // (user_id, event_id, start_time) index: on the hosts' shards.
  const rows = await BookingModel.find(
    { user_id: mongoose.trusted({ $in: [...hostIds] }), event_id: mongoose.trusted({ $in: events.map((e) => e._id) }) },
    { ...SNAPSHOT_FIELDS, event_id: 1, user_id: 1, host_ids: 1, assignment_reason: 1 },
  ).lean<(SnapshotFields & Pick<BookingDoc, "event_id" | "user_id" | "host_ids" | "assignment_reason">)[]>();
  const byId = new Map(rows.map((r) => [r._id.toHexString(), r]));
  const all = selectCategory(rows.map(snapshotOf), rule);
  const selected = all.slice(page.skip, page.skip + page.limit);
  const shown = selected.map((b) => byId.get(b.id) as (typeof rows)[number]);
  const hosts = await hostsById([...new Map(shown.flatMap((b) => hostsOf(b)).map((id) => [id.toHexString(), id])).values()]);
  const eventById = new Map(events.map((e) => [e._id.toHexString(), e]));
  return {
    page: paginationOf(page, all.length),
    records: selected.map((b, i) => ({
      ...presentRecord(b, eventById.get(shown[i].event_id.toHexString()) as EventSummary, formats, now),
      hosts: hostsOf(shown[i]).flatMap((id) => hosts.get(id.toHexString()) ?? []),
      assignmentReason: shown[i].assignment_reason ?? undefined,
    })),
  };
}
