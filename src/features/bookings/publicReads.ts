// What the public booking calls read of a host (the account by its url, an event, the confirmed bookings of a range), kept per process under the account's stamps (src/db/accountVersions.ts).
import mongoose from "mongoose";
import type { AccountReads } from "../../db/accountVersions.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { busyAround, type HostBooking } from "./writes.js";

const DAY_MS = 86_400_000;
/** Url keys remembered with their account; the map starts afresh when full (a hint only, checked on every use). */
const URL_HINTS_MAX = 10_000;

/** Each as fresh as the last write that has answered, on any replica; what they return is shared: never modify it. */
export class PublicReads {
  /** The account last found under a url key. The account read under its stamp must still hold the key to be used. */
  private readonly hostIds = new Map<string, mongoose.Types.ObjectId>();

  constructor(private readonly reads: AccountReads) {}

  /** The account whose url has this key (userUrlKey), or null. `since`: when the request began (performance.now()). */
  async hostByUrlKey(urlKey: string, since: number): Promise<UserDoc | null> {
    const hinted = this.hostIds.get(urlKey);
    if (hinted !== undefined) {
      // _id index.
      const host = await this.reads.read(hinted, "settings", "user", () => UserModel.findById(hinted).lean<UserDoc>(), { since });
      // url_key is unique: the account that holds it now is the one.
      if (host !== null && host.url_key === urlKey) return host;
    }
    // url_key unique index.
    const found = await UserModel.findOne({ url_key: urlKey }).lean<UserDoc>();
    if (found !== null) {
      if (this.hostIds.size >= URL_HINTS_MAX) this.hostIds.clear();
      this.hostIds.set(urlKey, found._id);
    }
    return found;
  }

  /** The host's undeleted event with this url key (eventUrlKey), or null. */
  eventByUrlKey(hostId: mongoose.Types.ObjectId, urlKey: string, since: number): Promise<EventDoc | null> {
    // (user_id, url_key) partial unique index over undeleted events.
    return this.reads.read(hostId, "settings", `event ${urlKey}`, () => EventModel.findOne({ user_id: hostId, url_key: urlKey, deleted: false }).lean<EventDoc>(), { since });
  }

  /**
   * The host's confirmed bookings that may block a slot starting in [from, to) (writes.ts busyAround). Read for the
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
