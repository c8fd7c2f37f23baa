// Busy times of a host's calendars for slots and bookings: a cache per calendar and range, cheap revalidation, a deadline, failure closed.
import { Code } from "@connectrpc/connect";
import mongoose from "mongoose";
import { CalendarConnectionModel, CalendarModel, type CalendarConnectionDoc, type CalendarDoc } from "../../db/models/calendar.js";
import type { UserDoc } from "../../db/models/user.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import type { AccountReads } from "../../db/accountVersions.js";
import { ApiError } from "../../domain/errors.js";
import type { Keyring } from "../../domain/secretBox.js";
import type { BusyBooking } from "../../domain/slots.js";
import { ianaForServiceZone } from "../../domain/timezones.js";
import { calendarProvider, ProviderError, RateLimitedError, withDeadline, type ProviderAccess, type ProviderSettings } from "../../providers/index.js";
import type { BusySpan } from "../../domain/ical/busy.js";
import { isOwnBookingUid } from "../../domain/ical/writer.js";
import { errorText, logEvent } from "../../platform/log.js";
import { connectionAccess } from "./tokens.js";
import { statusAfter } from "../notices/index.js";
import { recordCalendarWarnings, recordConnectionStatus } from "./writes.js";
import type { OutboxWake, Owing } from "../../outbox/wake.js";
import type { OAuthAccessSettings } from "../oauth/index.js";

/*
 * The rules (docs/spec/integrations.md "Busy times"), and how they are kept:
 *
 * - Listing slots may use busy times read at most CALENDAR_CACHE_SECONDS ago; older ones are revalidated with the
 *   provider's cheap change check (CalDAV ctag / sync token, a feed's ETag), and read again only when it changed.
 * - A booking or reschedule always asks the provider (the cheap check suffices when nothing changed).
 * - Every calendar of a request is read in parallel under its own deadline of CALENDAR_TIMEOUT_MS, enforced here
 *   with an abort signal and a timer whatever the server does (a socket that never answers, a trickle, 500s).
 * - A calendar that cannot be read: a listing uses what was last read from it when that is at most 15 minutes old,
 *   else answers 503 `calendar is unavailable` with Retry-After; a booking answers 503 and books nothing. Failing
 *   closed is the only way a calendar outage can never yield a double booking.
 *
 * The cache is per process (each replica revalidates for itself, which the ctag check keeps cheap) and holds, per
 * calendar, the version it was read under and the busy periods of a few ranges. A range is widened to whole UTC
 * days with a day of margin, so the listing of a week and a booking inside it share an entry.
 */

/** What a listing may fall back on while a calendar cannot be read (docs/spec/integrations.md). */
const STALE_LIMIT_MS = 15 * 60_000;
/**
 * After a failed read, listings answer from what was read before (or 503) for this long before they ask the
 * calendar again, doubling with each failure in a row up to CALENDAR_CACHE_SECONDS: a read that failed once (a
 * calendar server restarting, a slow first read) is tried again within seconds, a calendar that stays dead or
 * hostile costs one read per CALENDAR_CACHE_SECONDS.
 */
const FIRST_RETRY_MS = 2000;
const DAY_MS = 86_400_000;
/** Ranges kept per calendar; old ones go first. */
const RANGES_PER_CALENDAR = 8;

export interface CalendarSettings extends ProviderSettings, OAuthAccessSettings {
  cacheSeconds: number;
  /** The host's calendars that check for conflicts are read through it, under the account's stamp. */
  accountReads: AccountReads;
  secrets: Keyring;
  /** The host name of APP_URL: the UIDs of the events we write end in `@<it>`. */
  appHost(): string;
  /** Tells the outbox when a read planned the host's notices (a connection that changed). */
  wake: OutboxWake;
}

interface RangeEntry {
  from: number;
  to: number;
  periods: BusySpan[];
  /** When the provider last confirmed these periods (read or revalidated), as clock.nowMs(). */
  confirmedAt: number;
}

interface CalendarCache {
  version: string | null;
  /** The host's zone and addresses the periods were expanded with: all-day and declined events depend on them. */
  basis: string;
  entries: RangeEntry[];
}

export type ReadMode = "listing" | "booking";

/** The 503 of a calendar that cannot be read; Retry-After says when it will be asked again. */
function calendarUnavailable(retryAfterMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ApiError(Code.Unavailable, "calendar is unavailable", {
    data: { retry_after: seconds },
    headers: { "retry-after": String(seconds) },
  });
}

/**
 * What a read's outcome makes of the connection's status; a rate limit also says when the provider may be asked
 * again. A change of status plans the host's notices, and `owing.wake` tells the outbox.
 */
export async function markConnection(owing: Owing, connectionId: mongoose.Types.ObjectId, failure: ProviderError | null): Promise<void> {
  const set = {
    ...statusAfter(failure),
    ...(failure === null ? { last_synced_at: owing.clock.now() } : {}),
    ...(failure instanceof RateLimitedError ? { blocked_until: new Date(owing.clock.nowMs() + failure.retryAfterMs) } : {}),
  };
  try {
    await recordConnectionStatus(owing, connectionId, set);
  } catch (err) {
    logEvent("warn", "calendar connection status not saved", { error: errorText(err) });
  }
}

/** Stores what could not be read of a calendar (events left out) when it changed; the connection shows it in `warnings`. */
async function keepWarnings(owing: Owing, calendar: CalendarDoc, warnings: readonly string[]): Promise<void> {
  if (JSON.stringify(calendar.warnings ?? []) === JSON.stringify(warnings)) return;
  try {
    await recordCalendarWarnings(owing, calendar, warnings);
  } catch (err) {
    logEvent("warn", "calendar warnings not saved", { error: errorText(err) });
  }
}

/** Bookings start within this much of a range they touch: no booking is longer than a day (and its padding). */
const OWN_EVENT_MARGIN_MS = 2 * DAY_MS;

/**
 * The host's bookings that may lie in the range (any status: a canceled booking's event may still be in a calendar
 * until its removal is written): their own, and the team bookings that hold them (teams.md: each host's copy, its id
 * under `host_events`). Read once per look at a host's calendars, and only when one of them is read (ownOf).
 */
async function hostBookingsNear(userId: mongoose.Types.ObjectId, range: { from: number; to: number }) {
  const start_time = mongoose.trusted({ $gte: new Date(range.from - OWN_EVENT_MARGIN_MS), $lt: new Date(range.to) });
  const [own, held] = await Promise.all([
    // (user_id, status, start_time) index by its user_id prefix.
    BookingModel.find({ user_id: userId, start_time }, { calendar_id: 1, calendar_event_id: 1, provider_key: 1, seated_slot: 1, start_time: 1, end_time: 1 }).lean<
      Pick<BookingDoc, "_id" | "calendar_id" | "calendar_event_id" | "provider_key" | "seated_slot" | "start_time" | "end_time">[]
    >(),
    // (host_ids, start_time, _id) index; only team bookings name their hosts.
    BookingModel.find({ host_ids: userId, start_time }, { host_events: 1, provider_key: 1, seated_slot: 1, start_time: 1, end_time: 1 }).lean<
      Pick<BookingDoc, "_id" | "host_events" | "provider_key" | "seated_slot" | "start_time" | "end_time">[]
    >(),
  ]);
  return { own, held };
}

type HostBookingsNear = Awaited<ReturnType<typeof hostBookingsNear>>;

/**
 * The events this service wrote (or is writing) for the host's bookings near the range. `ids`: what the UIDs of
 * their events name, in whichever of the host's calendars they show: each booking's id, the key a moved event keeps
 * (`provider_key`: Google keeps an event's first UID) and a seated slot's id (one event per slot, named after it:
 * calendars/effect.ts runSlot); `events`: those written to `calendarId`, by the provider's event id where it is
 * stored. A host's copy goes to one of their calendars (the calendar effect picks it), so for another of them it
 * only costs a look at the events where freeBusy shows that booking's time busy.
 */
function ownOf({ own, held }: HostBookingsNear, userId: mongoose.Types.ObjectId, calendarId: string): { ids: string[]; events: { id: string; start: Date; end: Date }[] } {
  // A booking whose event id is not stored yet still counts: its event is then told apart by its UID.
  return {
    ids: [...new Set([...own, ...held].flatMap((b) => [b._id.toHexString(), b.provider_key ?? "", b.seated_slot?.toHexString() ?? ""]).filter((id) => id !== ""))],
    events: [
      ...own.filter((b) => b.calendar_id === calendarId).map((b) => ({ id: b.calendar_event_id ?? "", start: b.start_time, end: b.end_time })),
      ...held.map((b) => ({ id: b.host_events?.[userId.toHexString()] ?? "", start: b.start_time, end: b.end_time })),
    ],
  };
}

/** The busy times of hosts' calendars, with their cache: one per process, made at start from the settings. */
export class CalendarReader {
  /** Whether any calendar of the host checks for conflicts (then its busy times can change without a write of ours). */
  readonly checksConflicts = async (host: UserDoc, since?: number): Promise<boolean> => (await this.conflictCalendars(host, since)).length > 0;

  private readonly cache = new Map<string, CalendarCache>();
  private readonly inFlight = new Map<string, Promise<BusySpan[]>>();
  /**
   * When each calendar last failed to be read (clock.nowMs()) and how many reads in a row failed; gone once a read
   * succeeds. `until`: the provider asked to wait until then (a rate limit's Retry-After).
   */
  private readonly failures = new Map<string, { at: number; count: number; until?: number }>();

  constructor(readonly settings: CalendarSettings) {}

  /** Forgets what was read from these calendars (disconnect, conflict checking switched). */
  forget(ids: readonly string[]): void {
    for (const id of ids) {
      this.cache.delete(id);
      this.failures.delete(id);
    }
  }

  /**
   * How a provider reaches the connection: its opened credentials, and for OAuth a session that refreshes and keeps
   * tokens. Rejects with ProviderError where no call may be made: an OAuth connection that is `invalid` until
   * the host authorizes again, one whose provider asked us to wait (failure closed meanwhile), a provider no longer configured.
   */
  accessOf(connection: CalendarConnectionDoc): ProviderAccess {
    return connectionAccess(connection, this.settings);
  }

  /**
   * How long after its last failure listings leave a calendar alone (FIRST_RETRY_MS, doubling, at most
   * CALENDAR_CACHE_SECONDS; a rate limit: until the provider's Retry-After is up, which is also what a 503 tells the
   * caller to wait); 0 when it did not fail.
   */
  private restingFor(id: string, now: number): number {
    const failed = this.failures.get(id);
    if (failed === undefined) return 0;
    if (failed.until !== undefined) return Math.max(0, failed.until - now);
    const rest = Math.min(this.settings.cacheSeconds * 1000, FIRST_RETRY_MS * 2 ** Math.min(failed.count - 1, 16));
    return Math.max(0, failed.at + rest - now);
  }

  /** The host's calendars that check for conflicts, kept under the account's stamp; `since`: when the request began. */
  private conflictCalendars(host: UserDoc, since?: number): Promise<CalendarDoc[]> {
    return this.settings.accountReads.read(
      host._id,
      "settings",
      "conflict calendars",
      // (user_id, check_for_conflicts) index.
      () => CalendarModel.find({ user_id: host._id, check_for_conflicts: true }).lean<CalendarDoc[]>(),
      { since, weigh: (list) => list.length },
    );
  }

  /** What a listing may use of a calendar that cannot be read (at most STALE_LIMIT_MS old), else 503. */
  private fallback(id: string, basis: string, range: { from: number; to: number }, mode: ReadMode): BusySpan[] {
    const latest = this.cache.get(id);
    const held = latest?.basis === basis ? latest.entries.find((e) => e.from <= range.from && e.to >= range.to) : undefined;
    if (mode === "listing" && held && this.settings.clock.nowMs() - held.confirmedAt <= STALE_LIMIT_MS) return held.periods;
    throw calendarUnavailable(this.restingFor(id, this.settings.clock.nowMs()));
  }

  /** Reads one calendar for [from, to) through the cache, as `mode` allows; rejects with ProviderError. */
  private async periodsOf(
    calendar: CalendarDoc,
    connection: CalendarConnectionDoc,
    range: { from: number; to: number },
    mode: ReadMode,
    host: UserDoc,
    emails: readonly string[],
    bookingsNear: () => Promise<HostBookingsNear>,
  ): Promise<BusySpan[]> {
    const id = calendar._id.toHexString();
    const now = this.settings.clock.nowMs();
    // A host who changed zone or address: what was expanded before no longer holds, even if the calendar did not change.
    const basis = `${host.timezone}\n${[host.email, ...emails].join("\n")}`;
    const stored = this.cache.get(id);
    const held = stored?.basis === basis ? stored : undefined;
    const covering = held?.entries.find((e) => e.from <= range.from && e.to >= range.to);
    if (mode === "listing" && covering && now - covering.confirmedAt <= this.settings.cacheSeconds * 1000) return covering.periods;
    // A calendar that just failed rests from listings a while (FIRST_RETRY_MS): a hostile or dead one would otherwise
    // cost a download, a reader thread or a deadline per listing (bookings still ask).
    if (mode === "listing" && this.restingFor(id, now) > 0) return this.fallback(id, basis, range, mode);

    const flightKey = `${id}|${range.from}|${range.to}|${mode}`;
    const running = this.inFlight.get(flightKey);
    if (running) return running;
    const read = (async () => {
      try {
        const provider = calendarProvider(connection.provider);
        if (!provider) throw new ProviderError("not_found", `provider ${connection.provider} is not available`);
        const access = this.accessOf(connection);
        const span = { from: new Date(range.from), to: new Date(range.to) };
        const own = ownOf(await bookingsNear(), host._id, id);
        const ownIds = new Set(own.ids);
        const busy = {
          hostZone: ianaForServiceZone(host.timezone),
          hostEmails: [host.email, ...emails],
          ignoreUid: (uid: string) => isOwnBookingUid(uid, this.settings.appHost(), ownIds),
          ...(access.oauth ? { ownEvents: own.events } : {}),
          appHost: this.settings.appHost(),
          ownBookingIds: own.ids,
          owner: host._id.toHexString(),
        };
        const knownVersion = covering ? held!.version : null;
        const result = await withDeadline(this.settings.timeoutMs, (signal) =>
          provider.readBusy({ access, calendar: { url: calendar.url ?? null }, range: span, knownVersion, busy, settings: this.settings, signal }),
        );
        const confirmedAt = this.settings.clock.nowMs();
        let periods: BusySpan[];
        if (result.unchanged && covering) {
          // The same version vouches for every range read under it.
          for (const e of held!.entries) e.confirmedAt = confirmedAt;
          periods = covering.periods;
        } else if (result.unchanged) {
          throw new ProviderError("bad_response", "the calendar answered 'unchanged' to a first read");
        } else {
          periods = result.periods;
          await keepWarnings(this.settings, calendar, result.warnings ?? []);
          const keep = held && held.version === result.version ? held.entries.filter((e) => e !== covering) : [];
          this.cache.set(id, { version: result.version, basis, entries: [{ ...range, periods, confirmedAt }, ...keep].slice(0, RANGES_PER_CALENDAR) });
        }
        this.failures.delete(id);
        await markConnection(this.settings, connection._id, null);
        return periods;
      } catch (err) {
        if (!(err instanceof ProviderError)) logEvent("error", "calendar read failed", { calendar_id: id, error: errorText(err) });
        const failure = err instanceof ProviderError ? err : new ProviderError("bad_response", "the calendar could not be read because of an error in the service");
        const at = this.settings.clock.nowMs();
        this.failures.set(id, { at, count: (this.failures.get(id)?.count ?? 0) + 1, ...(failure instanceof RateLimitedError ? { until: at + failure.retryAfterMs } : {}) });
        // A connection already invalid, or waiting out a rate limit, stays as it was marked.
        if (!failure.noCall) await markConnection(this.settings, connection._id, failure);
        logEvent("warn", "calendar could not be read", { calendar_id: id, reason: failure.kind });
        return this.fallback(id, basis, range, mode);
      }
    })();
    this.inFlight.set(flightKey, read);
    try {
      return await read;
    } finally {
      this.inFlight.delete(flightKey);
    }
  }

  /**
   * The busy times of every calendar of the host with check_for_conflicts that may reach into [from, to), as
   * bookings without padding for src/domain/slots.ts. 503 `calendar is unavailable` when one cannot be read and
   * `mode` allows no fallback. `since`: when the request began (src/db/accountVersions.ts), default now.
   */
  readonly busyOf = async (host: UserDoc, from: Date, to: Date, mode: ReadMode, since?: number): Promise<BusyBooking[]> => {
    const calendars = await this.conflictCalendars(host, since);
    if (calendars.length === 0) return [];
    const connectionIds = [...new Set(calendars.map((c) => c.connection_id.toHexString()))].map((id) => new mongoose.Types.ObjectId(id));
    // _id index.
    const connections = await CalendarConnectionModel.find({ _id: mongoose.trusted({ $in: connectionIds }), user_id: host._id }).lean<CalendarConnectionDoc[]>();
    const byId = new Map(connections.map((c) => [c._id.toHexString(), c]));
    const emails = calendars.map((c) => c.email).filter((e): e is string => typeof e === "string");
    // Whole UTC days with a day of margin: padding, slot length and all-day events of other zones stay inside.
    const range = { from: Math.floor(from.getTime() / DAY_MS) * DAY_MS - DAY_MS, to: Math.ceil(to.getTime() / DAY_MS) * DAY_MS + DAY_MS };
    // Read for the first calendar that is read (not for those answered from the cache), then shared by the others.
    let near: Promise<HostBookingsNear> | undefined;
    const bookingsNear = () => (near ??= hostBookingsNear(host._id, range));
    const lists = await Promise.all(
      calendars.map((c) => {
        const connection = byId.get(c.connection_id.toHexString());
        return connection ? this.periodsOf(c, connection, range, mode, host, emails, bookingsNear) : Promise.resolve([]);
      }),
    );
    return lists.flat().map((p) => ({ start: p.start, end: p.end, paddingMinutes: 0 }));
  };
}
