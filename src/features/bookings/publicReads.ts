// What the public booking calls read of a host (the account by its url, an event, the confirmed bookings of a range) or a team (by its url), kept per process under the account's stamps (src/db/accountVersions.ts).
import mongoose from "mongoose";
import type { AccountReads } from "../../db/accountVersions.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { TeamKeyModel, TeamModel, type TeamDoc } from "../../db/models/team.js";
import { BookingModel } from "../../db/models/booking.js";
import { BUSY_MARGIN_MS, HOLDING_STATUSES } from "../../domain/booking.js";
import type { BusyBooking } from "../../domain/slots.js";
import { hostsOf } from "../../domain/team.js";
import { accountByUrlKey } from "../accounts/index.js";

type ObjectId = mongoose.Types.ObjectId;

const DAY_MS = 86_400_000;
/** Url keys remembered with their account; the map starts afresh when full (a hint only, checked on every use). */
const URL_HINTS_MAX = 10_000;

/** Each as fresh as the last write that has answered, on any replica; what they return is shared: never modify it. */
export class PublicReads {
  /** The account last found under a url key. The account read under its stamp must still hold the key to be used. */
  private readonly hostIds = new Map<string, mongoose.Types.ObjectId>();
  /** The team last found under a url key, as hostIds. */
  private readonly teamIds = new Map<string, ObjectId>();

  constructor(private readonly reads: AccountReads) {}

  /** The account whose url has this key (urlKey of src/domain/urlKey.ts), or null. `since`: when the request began (performance.now()). */
  async hostByUrlKey(urlKey: string, since: number): Promise<UserDoc | null> {
    const hinted = this.hostIds.get(urlKey);
    if (hinted !== undefined) {
      const host = await this.hostById(hinted, since);
      // url_key is unique: the account that holds it now is the one.
      if (host !== null && host.url_key === urlKey) return host;
    }
    const found = await accountByUrlKey(urlKey);
    if (found !== null) {
      if (this.hostIds.size >= URL_HINTS_MAX) this.hostIds.clear();
      this.hostIds.set(urlKey, found._id);
    }
    return found;
  }

  /**
   * The team whose url has this key, or null (teams.md): kept under the team's stamps, which every write of the
   * team marks (src/features/teams/writes.ts), as an account under its own; found through its url's claim.
   */
  /** The team by its id (a single-use link's event's account), as teamByUrlKey keeps it. */
  async teamById(id: ObjectId, since: number): Promise<TeamDoc | null> {
    // _id index.
    return this.reads.read(id, "settings", "team", () => TeamModel.findById(id).lean<TeamDoc>(), { since });
  }

  async teamByUrlKey(urlKey: string, since: number): Promise<TeamDoc | null> {
    const hinted = this.teamIds.get(urlKey);
    if (hinted !== undefined) {
      // _id index.
      const team = await this.reads.read(hinted, "settings", "team", () => TeamModel.findById(hinted).lean<TeamDoc>(), { since });
      if (team !== null && team.url_key === urlKey) return team;
    }
    // _id indexes: the claim, then the team, which must still hold the key.
    const claim = await TeamKeyModel.findById(`url:${urlKey}`, { team_id: 1 }).lean<{ team_id: ObjectId }>();
    const team = claim ? await TeamModel.findById(claim.team_id).lean<TeamDoc>() : null;
    if (team === null || team.url_key !== urlKey) return null;
    if (this.teamIds.size >= URL_HINTS_MAX) this.teamIds.clear();
    this.teamIds.set(urlKey, team._id);
    return team;
  }

  /** Asks for the stamps of these accounts (a team's hosts) in one query, for the reads of them that follow. */
  readStamps(ids: readonly ObjectId[], since: number): Promise<void> {
    return this.reads.readStamps(ids, since);
  }

  /** The account by its id (a single-use link names it), or null. */
  hostById(id: ObjectId, since: number): Promise<UserDoc | null> {
    // _id index.
    return this.reads.read(id, "settings", "user", () => UserModel.findById(id).lean<UserDoc>(), { since });
  }

  /** The host's undeleted event with this url key (urlKey), or null. */
  eventByUrlKey(hostId: mongoose.Types.ObjectId, urlKey: string, since: number): Promise<EventDoc | null> {
    // (user_id, url_key) partial unique index over undeleted events.
    return this.reads.read(hostId, "settings", `event ${urlKey}`, () => EventModel.findOne({ user_id: hostId, url_key: urlKey, deleted: false }).lean<EventDoc>(), { since });
  }

  /**
   * The host's confirmed bookings that may block a slot starting in [from, to) (busyAround). Read for the
   * range widened to whole UTC days and a day more each side, so the listings of a page's days, whatever the
   * viewer's zone, share one read; bookings outside the range block nothing in it.
   */
  busyBetween(hostId: mongoose.Types.ObjectId, from: Date, to: Date, since: number): Promise<HostBooking[]> {
    const start = Math.floor(from.getTime() / DAY_MS) * DAY_MS - DAY_MS;
    const end = Math.ceil(to.getTime() / DAY_MS) * DAY_MS + DAY_MS;
    return this.reads.read(hostId, "bookings", `busy ${start} ${end}`, () => busyAround(hostId, new Date(start), new Date(end)), { since, weigh: (list) => list.length });
  }
}

/**
 * What kept answers may hold at most, counted as their slots (about 0.4 KB each with their JSON) plus the busy
 * bookings they keep alive (about 0.1 KB each, maybe no longer read): least recently used answers go first.
 */
const REPLY_WEIGHT_MAX = 100_000;

interface KeptReply<R> {
  /** What the answer was computed from, as read: a new read (a change) is a new object. */
  from: readonly object[];
  validUntil: number;
  reply: R;
  weight: number;
}

/**
 * Answers of slot listings, handed out again while what they were computed from is unchanged (the same objects read
 * under the same stamps, PublicReads) and the clock has not moved past what they hold (slotsUnchangedUntil). An
 * answer is frozen (src/domain/frozen.ts), so the transports encode it once too. Only for hosts without calendars
 * that check for conflicts: their busy times change without a stamp.
 */
export class SlotReplies<R> {
  private readonly kept = new Map<string, KeptReply<R>>();
  private weight = 0;

  /** The answer kept for `key` when it was computed from these very objects and is still good at `now`. */
  get(key: string, from: readonly object[], now: number): R | undefined {
    const hit = this.kept.get(key);
    if (hit === undefined || now >= hit.validUntil || hit.from.length !== from.length || hit.from.some((o, i) => o !== from[i])) return undefined;
    this.kept.delete(key);
    this.kept.set(key, hit);
    return hit.reply;
  }

  /** Keeps `reply` for `key` until `validUntil` (epoch ms); `weight` as REPLY_WEIGHT_MAX counts. */
  keep(key: string, from: readonly object[], validUntil: number, reply: R, weight: number): void {
    const old = this.kept.get(key);
    if (old !== undefined) {
      this.weight -= old.weight;
      this.kept.delete(key);
    }
    if (weight > REPLY_WEIGHT_MAX / 4) return;
    this.kept.set(key, { from, validUntil, reply, weight });
    this.weight += weight;
    for (const [oldest, entry] of this.kept) {
      if (this.weight <= REPLY_WEIGHT_MAX) break;
      this.weight -= entry.weight;
      this.kept.delete(oldest);
    }
  }
}

/** A confirmed booking of the host as slot computation and the limits want it: its times, gaps, id and event. */
export interface HostBooking extends BusyBooking {
  id: ObjectId;
  eventId: ObjectId;
}

/**
 * Bookings of the host that hold their time (confirmed, and requests waiting for the host) that may reach into [from, to) with their buffer and padding, as slot computation
 * wants them: those the host holds (hostsOf), whether kept under their account or another's (a collective booking is
 * kept under its first host's and blocks every host's time; a reassigned one stays under the account it was made
 * for: teams.md).
 */
export async function busyAround(userId: ObjectId, from: Date, to: Date, except?: ObjectId): Promise<HostBooking[]> {
  const start_time = mongoose.trusted({ $gte: new Date(from.getTime() - BUSY_MARGIN_MS), $lt: new Date(to.getTime() + BUSY_MARGIN_MS) });
  const holding = mongoose.trusted({ $in: [...HOLDING_STATUSES] });
  const fields = { start_time: 1, end_time: 1, padding_minutes: 1, buffer_before_minutes: 1, event_id: 1, user_id: 1, host_ids: 1 };
  const [own, held] = await Promise.all([
    // (user_id, status, start_time) index.
    BookingModel.find({ user_id: userId, status: holding, start_time }, fields).lean(),
    // (host_ids, status, start_time) index; those of the host's own are in the first list already.
    BookingModel.find({ host_ids: userId, status: holding, start_time, user_id: mongoose.trusted({ $ne: userId }) }, fields).lean(),
  ]);
  return [...own, ...held]
    // A booking kept under the host's account that another host holds now (reassigned) is not theirs to block.
    .filter((b) => (except === undefined || !b._id.equals(except)) && hostsOf(b).some((h) => h.equals(userId)))
    .map((b) => ({ start: b.start_time, end: b.end_time, paddingMinutes: b.padding_minutes, bufferBeforeMinutes: b.buffer_before_minutes ?? 0, id: b._id, eventId: b.event_id }));
}
