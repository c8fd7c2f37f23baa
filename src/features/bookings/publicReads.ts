// What the public booking calls read of a host (the account by its url, an event, the confirmed bookings of a range), kept per process under the account's stamps (src/db/accountVersions.ts).
import mongoose from "mongoose";
import type { AccountReads } from "../../db/accountVersions.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import type { BusyBooking } from "../../domain/slots.js";
import { busyAround } from "./writes.js";

const DAY_MS = 86_400_000;
/** Url keys remembered with their account; the map starts afresh when full (a hint only, checked on every use). */
const URL_HINTS_MAX = 10_000;

/** Each as fresh as the last write that has answered, on any replica; what they return is shared: never modify it. */
export class PublicReads {
  /** The account last found under a url key. The account read under its stamp must still hold the key to be used. */
  private readonly hostIds = new Map<string, mongoose.Types.ObjectId>();

  constructor(private readonly reads: AccountReads) {}

  /** The account whose url has this key (userUrlKey), or null. */
  async hostByUrlKey(urlKey: string): Promise<UserDoc | null> {
    const hinted = this.hostIds.get(urlKey);
    if (hinted !== undefined) {
      // _id index.
      const host = await this.reads.read(hinted, "settings", "user", () => UserModel.findById(hinted).lean<UserDoc>());
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
  eventByUrlKey(hostId: mongoose.Types.ObjectId, urlKey: string): Promise<EventDoc | null> {
    // (user_id, url_key) partial unique index over undeleted events.
    return this.reads.read(hostId, "settings", `event ${urlKey}`, () => EventModel.findOne({ user_id: hostId, url_key: urlKey, deleted: false }).lean<EventDoc>());
  }

  /**
   * The host's confirmed bookings that may block a slot starting in [from, to) (writes.ts busyAround). Read for the
   * range widened to whole UTC days and a day more each side, so the listings of a page's days, whatever the
   * viewer's zone, share one read; bookings outside the range block nothing in it.
   */
  busyBetween(hostId: mongoose.Types.ObjectId, from: Date, to: Date): Promise<BusyBooking[]> {
    const start = Math.floor(from.getTime() / DAY_MS) * DAY_MS - DAY_MS;
    const end = Math.ceil(to.getTime() / DAY_MS) * DAY_MS + DAY_MS;
    return this.reads.read(hostId, "bookings", `busy ${start} ${end}`, () => busyAround(hostId, new Date(start), new Date(end)), (list) => list.length);
  }
}
