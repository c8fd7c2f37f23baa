// PublicTeamBookingService (teams.md): a team's page, a team event, its slots (any host free for round robin, every host for collective, each host's by the single-host code) and booking it — round robin by priority, weighted share of the month and least recently booked, race-free through each host's reservation cells.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import { ListTeamSlotsResponseSchema, PublicTeamBookingService, type ListTeamSlotsResponse } from "../../../gen/scheduling/v1/public_team_pb.js";
import type { BookingInput, PublicBookingSchema } from "../../../gen/scheduling/v1/public_booking_pb.js";
import type { AccountReads } from "../../db/accountVersions.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import type { TeamDoc } from "../../db/models/team.js";
import type { UserDoc } from "../../db/models/user.js";
import { slotDays } from "../../domain/booking.js";
import { ApiError, notFound } from "../../domain/errors.js";
import { slotNotAvailable, storedRules } from "../../domain/eventRules.js";
import { computeSlots, slotsUnchangedUntil, type Slot } from "../../domain/slots.js";
import { deepFreeze } from "../../domain/frozen.js";
import { hostsOf, roundRobinOrder, type Candidate } from "../../domain/team.js";
import { addDays, ianaForServiceZone, wallClockToUtc } from "../../domain/timezones.js";
import { urlKey } from "../../domain/urlKey.js";
import { ianaZoneOf } from "../../domain/zoneNames.js";
import type { ServiceDeps } from "../accounts/index.js";
import type { OutboxWake } from "../../outbox/wake.js";
import { keyedWriteOf } from "../../platform/transport/idempotency.js";
import { bookingByPrivateKey } from "./keys.js";
import { seatedSlotId } from "./cells.js";
import {
  bookingIdFor,
  bookOrRequest,
  isTaken,
  checkedBooking,
  checkSlotFree,
  eventSummary,
  newBookingFields,
  presentPublic,
  publicEventOf,
  slotQuery,
  notifyOfHost,
  remindedAs,
  type BookingFieldsInput,
  type BookingPorts,
  type HostBooks,
  type PageHost,
  type PublicEventContext,
  type PublicEventMessage,
  type TeamLinks,
} from "./publicService.js";
import { USER_DEFAULTS } from "../../domain/user.js";
import { PublicReads, SlotReplies } from "./publicReads.js";
import { chosenDuration } from "../../domain/lengths.js";
import { confirmBooking, writtenBefore, type BookWrite } from "./writes.js";
import { claimLink, releaseLink } from "../events/index.js";
import { linkGone, linkOpenTo } from "../../domain/singleUseLink.js";
import type { SingleUseLinkDoc } from "../../db/models/singleUseLink.js";

type ObjectId = mongoose.Types.ObjectId;
type PublicBookingMessage = MessageInitShape<typeof PublicBookingSchema>;

/** What a listing of a team event's slots asks: the days, zone and length, and a booking being rescheduled (its key). */
interface TeamSlotsAsked {
  dateFrom?: string;
  dateTo?: string;
  timezone?: string;
  duration?: number;
  privateKey?: string;
}

export interface TeamEventContext {
  team: TeamDoc;
  event: EventDoc;
  /** The event's hosts who can be booked now: accepted members whose account exists, in the event's order. */
  hosts: { user: UserDoc; priority: number; weight: number }[];
  /** The sum of the weights of all the event's hosts (the weighted share's denominator). */
  weights: number;
}

/** The team's active event at `eventUrl` with its bookable hosts, or 404 `event not found`. */
async function teamEventOf(reads: PublicReads, teamUrl: string, eventUrl: string, since = performance.now()): Promise<TeamEventContext> {
  const team = teamUrl === "" ? null : await reads.teamByUrlKey(urlKey(teamUrl), since);
  const event = team === null || eventUrl === "" ? null : await reads.eventByUrlKey(team._id, urlKey(eventUrl), since);
  if (!team || !event || !event.active || !event.team_id) throw notFound("event not found");
  return teamContextOf(reads, team, event, since);
}

/** The team event with the hosts who can be booked now (teams.md): accepted members whose account exists. */
export async function teamContextOf(reads: PublicReads, team: TeamDoc, event: EventDoc, since = performance.now()): Promise<TeamEventContext> {
  const accepted = new Set(team.members.filter((m) => m.accepted).map((m) => m.user_id.toHexString()));
  const listed = (event.hosts ?? []).filter((h) => accepted.has(h.user_id.toHexString()));
  // Each host as the public reads keep it (the same object while the account is unchanged, so what is computed
  // from it can be kept too); a deleted account is no host.
  await reads.readStamps(listed.map((h) => h.user_id), since);
  const users = await Promise.all(listed.map((h) => reads.hostById(h.user_id, since)));
  const hosts = listed.flatMap((h, i) => {
    const user = users[i];
    return user ? [{ user, priority: h.priority, weight: h.weight }] : [];
  });
  return { team, event, hosts, weights: (event.hosts ?? []).reduce((n, h) => n + h.weight, 0) };
}

export const hostContext = (user: UserDoc, event: EventDoc): PublicEventContext => ({ host: user, event, zone: ianaForServiceZone(user.timezone) });

/**
 * Round robin: slots any host has; collective: slots every host has. One event's slots are one length: a start names
 * a slot. A seated round robin slot belongs to the host of its first seat (docs/teams.md "Seats"): where a host
 * holds seats of it, only that host's slot (with its seats left) is offered, and none once it is full. A seated
 * collective slot's seats are held with every host, so each host counts the same seats left; the fewest of them is
 * offered all the same, should a host's count differ (a host added to the event after its first seat).
 */
function combine(perHost: readonly HostSlots[], scheduling: string): Slot[] {
  if (perHost.length === 0) return [];
  if (scheduling === "collective") {
    const counts = new Map<number, number>();
    const fewest = new Map<number, number>();
    for (const h of perHost) {
      for (const s of h.slots) {
        const t = s.start.getTime();
        counts.set(t, (counts.get(t) ?? 0) + 1);
        if (s.seatsLeft !== undefined) fewest.set(t, Math.min(fewest.get(t) ?? Infinity, s.seatsLeft));
      }
    }
    return perHost[0].slots
      .filter((s) => counts.get(s.start.getTime()) === perHost.length)
      .map((s) => (s.seatsLeft === undefined || fewest.get(s.start.getTime()) === s.seatsLeft ? s : { ...s, seatsLeft: fewest.get(s.start.getTime()) }));
  }
  const held = new Map<number, Slot | undefined>();
  for (const h of perHost) for (const t of h.seated) held.set(t, h.slots.find((s) => s.start.getTime() === t));
  const all = new Map<number, Slot>();
  for (const h of perHost) for (const s of h.slots) if (!held.has(s.start.getTime()) && !all.has(s.start.getTime())) all.set(s.start.getTime(), s);
  for (const [t, s] of held) if (s) all.set(t, s);
  return [...all.values()].sort((a, b) => a.start.getTime() - b.start.getTime());
}

/** One host's free slots of a team event as computed, until when the clock leaves them as they are, and the starts of the seated slots of the event the host holds seats of. */
interface HostSlots {
  slots: Slot[];
  validUntil: number;
  seated: number[];
}

/** The UTC calendar month of `at`. */
function monthOf(at: Date): { from: Date; to: Date } {
  return { from: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)), to: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)) };
}

/**
 * What round robin weighs of each host: their confirmed bookings of the event in the month of `start`, and when their
 * last one was made; and the event's confirmed bookings of that month (`total`, teams.md's "those bookings"), of
 * every account that may hold some: the event's hosts and the team's members, whether they can be booked now or not
 * (a host who left the team, or was taken off the event, still holds the bookings the others' shares are of).
 */
export async function bookingHistory(ctx: Pick<TeamEventContext, "team" | "event">, start: Date): Promise<{ month: Map<string, number>; last: Map<string, number>; total: number }> {
  const ids = [...new Map([...(ctx.event.hosts ?? []), ...ctx.team.members].map((m) => [m.user_id.toHexString(), m.user_id])).values()];
  // (user_id, event_id, start_time) index: each account's bookings of this event.
  const rows = await BookingModel.find({ user_id: mongoose.trusted({ $in: ids }), event_id: ctx.event._id }, { user_id: 1, host_ids: 1, status: 1, start_time: 1, booked_at: 1 }).lean<
    Pick<BookingDoc, "user_id" | "host_ids" | "status" | "start_time" | "booked_at">[]
  >();
  const { from, to } = monthOf(start);
  const month = new Map<string, number>();
  const last = new Map<string, number>();
  let total = 0;
  for (const r of rows) {
    // Its host now: a reassigned booking stays kept under the account it was made for.
    const id = hostsOf(r)[0].toHexString();
    last.set(id, Math.max(last.get(id) ?? -Infinity, r.booked_at.getTime()));
    if (r.status === "confirmed" && r.start_time >= from && r.start_time < to) {
      month.set(id, (month.get(id) ?? 0) + 1);
      total++;
    }
  }
  return { month, last, total };
}

/** The host whose seated slot of the event starts at `start` (the host of its first seat still held), or undefined. */
async function seatedSlotHolder(ctx: Pick<TeamEventContext, "event" | "hosts">, start: Date): Promise<ObjectId | undefined> {
  // (user_id, event_id, start_time) index: the hosts' seats of this slot.
  const seat = await BookingModel.findOne(
    { user_id: mongoose.trusted({ $in: ctx.hosts.map((h) => h.user._id) }), event_id: ctx.event._id, start_time: start, seated_slot: seatedSlotId(ctx.event._id, start), status: mongoose.trusted({ $in: ["confirmed", "pending"] }) },
    { user_id: 1, host_ids: 1 },
  ).lean<Pick<BookingDoc, "user_id" | "host_ids">>();
  return seat ? hostsOf(seat)[0] : undefined;
}

/** One host's check of a time (checkSlotFree) as an outcome: free, or refused with why; anything but a refusal still throws. */
export function freeOrRefused<T>(check: Promise<T>): Promise<{ free: T; refusal?: undefined } | { free?: undefined; refusal: ApiError }> {
  return check.then(
    (free) => ({ free }),
    (refusal: unknown) => {
      if (!(refusal instanceof ApiError)) throw refusal;
      return { refusal };
    },
  );
}

/** What round robin weighs of each free host (roundRobinOrder), from the event's booking history. */
export function candidatesOf(free: readonly TeamEventContext["hosts"][number][], history: Awaited<ReturnType<typeof bookingHistory>>): Candidate[] {
  return free.map((h) => {
    const key = h.user._id.toHexString();
    return { userId: key, priority: h.priority, weight: h.weight, monthBookings: history.month.get(key) ?? 0, lastBookedAt: history.last.get(key) ?? -Infinity };
  });
}

/**
 * The booker's view of a team booking (presentPublic), from the event, team and hosts the request read: a host the
 * booking holds who is no longer among the event's bookable hosts (left the team since) makes presentPublic read
 * the hosts itself.
 */
export async function presentTeamBooking(appUrl: string, now: Date, b: BookingDoc, ctx: TeamEventContext): Promise<PublicBookingMessage> {
  const held = hostsOf(b).map((id) => ctx.hosts.find((h) => h.user._id.equals(id))?.user);
  const first = held[0];
  const hosts = held.every((u): u is UserDoc => u !== undefined) ? held : undefined;
  return presentPublic(appUrl, now, b, first ? { event: ctx.event, host: first, team: ctx.team, hosts } : undefined);
}

/** The event as its page shows it: the team names the page; the first host's language, clock and week speak for it. */
function teamPageEvent(appUrl: string, ctx: TeamEventContext): Promise<PublicEventMessage> {
  const first = ctx.hosts[0]?.user;
  const host: PageHost = {
    full_name: ctx.team.name,
    locale: first?.locale ?? USER_DEFAULTS.locale,
    time_format: first?.time_format ?? USER_DEFAULTS.time_format,
    start_day_of_week: first?.start_day_of_week ?? USER_DEFAULTS.start_day_of_week,
    picture_id: null,
    brand_color: null,
    logo_id: null,
  };
  return publicEventOf(appUrl, { host, event: ctx.event, zone: ianaForServiceZone(ctx.team.timezone) });
}

/** What team slots are computed with: the service's reads and the slot answers it keeps (one per service). */
interface TeamSlotsEnv {
  deps: { accountReads: AccountReads; clock: Pick<ServiceDeps["clock"], "now"> };
  ports: BookingPorts;
  reads: PublicReads;
  hostSlots: SlotReplies<HostSlots>;
  replies: SlotReplies<ListTeamSlotsResponse>;
}

/** The slots offered (any host free for round robin, every host for collective) for the days, zone and length asked. */
async function teamSlots(env: TeamSlotsEnv, ctx: TeamEventContext, req: TeamSlotsAsked, since: number): Promise<ListTeamSlotsResponse> {
  const { deps, ports, reads, hostSlots, replies } = env;
  const viewerZone = req.timezone === undefined || req.timezone === "" ? ianaForServiceZone(ctx.team.timezone) : ianaZoneOf("timezone", req.timezone);
  const now = deps.clock.now();
  const days = slotDays(req.dateFrom, req.dateTo, viewerZone, now);
  const from = wallClockToUtc(viewerZone, days.dateFrom, "00:00");
  const to = wallClockToUtc(viewerZone, addDays(days.dateTo, 1), "00:00");
  const minutes = chosenDuration(ctx.event, req.duration, "duration");
  let hosts = ctx.hosts;
  // A reschedule that keeps its host lists that host's times alone.
  if (req.privateKey !== undefined && req.privateKey !== "" && ctx.event.reschedule_with_same_host && ctx.event.scheduling === "round_robin") {
    const booking = await bookingByPrivateKey(req.privateKey);
    hosts = booking ? hosts.filter((h) => h.user._id.equals(hostsOf(booking)[0])) : [];
  }
  const range = `${minutes} ${viewerZone} ${days.dateFrom} ${days.dateTo}`;
  // Each host's slots as the single-host listing computes them, kept as its answers are (publicReads.ts
  // SlotReplies): while the host, the event, the bookings and the schedule read are the same objects.
  const perHost = await Promise.all(
    hosts.map(async (h): Promise<HostSlots> => {
      const { query, booked, checksConflicts, settings } = await slotQuery(deps.accountReads, reads, ports, hostContext(h.user, ctx.event), { viewerZone, days, from, to, minutes, since, now });
      const key = `${ctx.event._id.toHexString()} ${h.user._id.toHexString()} ${range}`;
      const inputs = [h.user, ctx.event, booked, settings.schedule];
      const kept = checksConflicts ? undefined : hostSlots.get(key, inputs, now.getTime());
      if (kept !== undefined) return kept;
      const slots = computeSlots(query);
      const computed = { slots, validUntil: slotsUnchangedUntil(query, slots), seated: (query.seats?.taken ?? []).map((t) => t.start.getTime()) };
      if (!checksConflicts) hostSlots.keep(key, inputs, computed.validUntil, computed, slots.length + booked.length);
      return computed;
    }),
  );
  // The answer, kept while every host's slots are the very ones it was merged from.
  const key = `${ctx.event._id.toHexString()} ${ctx.event.scheduling ?? "round_robin"} ${range} ${hosts.map((h) => h.user._id.toHexString()).join(",")}`;
  const kept = replies.get(key, perHost, now.getTime());
  if (kept !== undefined) return kept;
  const scheduling = ctx.event.scheduling ?? "round_robin";
  const slots = combine(perHost, scheduling);
  const reply = deepFreeze(create(ListTeamSlotsResponseSchema, { timezone: viewerZone, slots: slots.map((s) => ({ startTime: s.start.toISOString(), endTime: s.end.toISOString(), seatsLeft: s.seatsLeft })) }));
  replies.keep(key, perHost, Math.min(...perHost.map((h) => h.validUntil)), reply, slots.length);
  return reply;
}

/** A host of a team event with their own check of a time: free (with what the time holds), or the refusal. */
type HostCheck = { host: TeamEventContext["hosts"][number] } & ({ free: Awaited<ReturnType<typeof checkSlotFree>>; refusal?: undefined } | { free?: undefined; refusal: ApiError });

/**
 * Who may take a team booking at `start`, from each host's own check: the free hosts (every host, for a collective
 * event, or its first refusal is the answer), and for a seated event the host of the slot's first seat. Seats
 * (docs/teams.md "Seats"): a seated round robin slot is its first seat's host's, later seats join it there (`full`
 * when that host is not free); a collective one is every host's, its seats all naming the first host of its first
 * seat first, the account they are kept under, which the slot's one calendar event and meeting are read from. Throws
 * the refusal the booker hears when nobody may.
 */
async function candidatesAt(ctx: TeamEventContext, checked: readonly HostCheck[], start: Date): Promise<{ collective: boolean; seats: number | null; holder: ObjectId | undefined; free: HostCheck[] }> {
  const eventId = ctx.event._id.toHexString();
  const collective = ctx.event.scheduling === "collective";
  const firstRefusal = checked.find((c) => c.refusal)?.refusal;
  if (collective && firstRefusal) throw firstRefusal;
  const seats = storedRules(ctx.event).seats_per_slot;
  const holder = seats === null ? undefined : await seatedSlotHolder(ctx, start);
  const seated = holder === undefined || collective ? checked : checked.filter((c) => c.host.user._id.equals(holder));
  if (holder !== undefined && !seated[0]?.free) throw seated[0]?.refusal ?? slotNotAvailable("full", { eventId, start });
  const free = seated.filter((c) => c.free !== undefined);
  if (free.length === 0) throw firstRefusal ?? slotNotAvailable("taken", { eventId, start });
  return { collective, seats, holder, free };
}

/** What a team event's page, slots and booking answer, by its context (its urls or a single-use link's event): one per service, with its reads and slot answers kept. */
function teamBookingDesk(deps: Pick<ServiceDeps, "appUrl" | "access" | "clock"> & { accountReads: AccountReads; wake: OutboxWake }, ports: BookingPorts) {
  const reads = new PublicReads(deps.accountReads);
  const hostSlots = new SlotReplies<HostSlots>();
  const replies = new SlotReplies<ListTeamSlotsResponse>();

  const present = (b: BookingDoc, ctx: TeamEventContext): Promise<PublicBookingMessage> => presentTeamBooking(deps.appUrl(), deps.clock.now(), b, ctx);
  const slotsEnv: TeamSlotsEnv = { deps, ports, reads, hostSlots, replies };

  return {
    reads,

    /** The event as its page shows it (teamPageEvent). */
    async view(ctx: TeamEventContext): Promise<PublicEventMessage> {
      return teamPageEvent(deps.appUrl(), ctx);
    },

    /** The slots offered for the days, zone and length asked (teamSlots). */
    slots: (ctx: TeamEventContext, req: TeamSlotsAsked, since: number): Promise<ListTeamSlotsResponse> => teamSlots(slotsEnv, ctx, req, since),

    /** Books the team event for a visitor (place) and answers the booker's view. */
    async book(ctx: TeamEventContext, input: BookingInput | undefined, hctx: HandlerContext, link?: SingleUseLinkDoc): Promise<PublicBookingMessage> {
      return present(await this.place(ctx, input, hctx, link), ctx);
    },

    /**
     * Books the team event (round robin by its rules, collective with every host), or answers the booking a first
     * try of the same keyed request made. Through a single-use link (booking-kinds.md): taken for this booking once
     * a host is found free, given back if the booking is refused after all. `byHost`: the team's owner or an admin
     * books for someone (booking-kinds.md "The host's desk"), as placeBooking's byHost says: each host's check with
     * the rules left out if asked, no booker limits, never a request.
     */
    async place(ctx: TeamEventContext, input: BookingFieldsInput | undefined, hctx: HandlerContext, link?: SingleUseLinkDoc, byHost?: HostBooks): Promise<BookingDoc> {
      const id = bookingIdFor(hctx);
      const made = keyedWriteOf(hctx) === undefined ? undefined : await writtenBefore(deps.wake, id);
      if (made?.event_id.equals(ctx.event._id)) return made;
      if (link && !linkOpenTo(link, id.toHexString(), deps.clock.now())) throw linkGone();
      const sent = await checkedBooking(ctx.event, input);
      const { start, minutes, attendee, guests } = sent;
      const eventId = ctx.event._id.toHexString();
      if (ctx.hosts.length === 0) throw slotNotAvailable("taken", { eventId, start });
      // Each host's own check, as for a personal event; the free ones are the candidates.
      const checked: HostCheck[] = await Promise.all(ctx.hosts.map(async (h) => ({ host: h, ...(await freeOrRefused(checkSlotFree(ports, deps.accountReads, hostContext(h.user, ctx.event), start, minutes, deps.clock.now(), { overrideRules: byHost?.overrideRules }))) })));
      const { collective, seats, holder, free } = await candidatesAt(ctx, checked, start);

      const fieldsFor = async (host: UserDoc, hostIds: ObjectId[], reason: string | null, slot: NonNullable<(typeof free)[number]["free"]>) => ({
        ...(await newBookingFields(ports, ctx.event, host._id, sent, { end: slot.end, bufferBeforeMinutes: slot.rules.buffer_before_minutes }, byHost ? false : undefined)),
        team_id: ctx.team._id,
        host_ids: hostIds,
        assignment_reason: reason,
      });
      const limits = async (host: UserDoc) => {
        if (byHost) return notifyOfHost(byHost);
        await deps.access.limitNewBookerOf(hctx, host._id.toHexString(), attendee.email);
        return deps.access.limitBookingsOf(host._id.toHexString(), attendee.email, guests);
      };

      // The host's own booking is never a request (it is the host's answer already), and an attendee not told is not reminded.
      const bookOne = (w: BookWrite): Promise<BookingDoc> => (byHost ? confirmBooking({ ...w, fields: remindedAs(w.fields, notifyOfHost(byHost)) }) : bookOrRequest(ctx.event, w));
      const write = async (): Promise<BookingDoc> => {
        if (collective) {
          const lead = free.find((c) => holder !== undefined && c.host.user._id.equals(holder)) ?? free[0];
          const notify = await limits(lead.host.user);
          return bookOne({
            wake: deps.wake,
            clock: deps.clock,
            notify,
            seats,
            places: lead.free?.places ?? [],
            id,
            fields: await fieldsFor(lead.host.user, [lead, ...free.filter((c) => c !== lead)].map((c) => c.host.user._id), null, lead.free as NonNullable<typeof lead.free>),
          });
        }

        // Round robin: the order of the rules; a host another booking takes meanwhile (its cells) gives way to the next.
        const history = await bookingHistory(ctx, start);
        const candidates = candidatesOf(free.map((c) => c.host), history);
        const byId = new Map(free.map((c) => [c.host.user._id.toHexString(), c]));
        let lastTaken: unknown;
        for (const pick of roundRobinOrder(candidates, { weights: ctx.weights, bookings: history.total })) {
          const chosen = byId.get(pick.userId) as (typeof free)[number];
          const notify = await limits(chosen.host.user);
          try {
            return await bookOne({
              wake: deps.wake,
              clock: deps.clock,
              notify,
              seats,
              places: chosen.free?.places ?? [],
              id,
              fields: await fieldsFor(chosen.host.user, [chosen.host.user._id], pick.reason, chosen.free as NonNullable<typeof chosen.free>),
            });
          } catch (err) {
            if (!isTaken(err)) throw err;
            lastTaken = err;
          }
        }
        throw lastTaken;
      };
      if (link && !(await claimLink(link.user_id, link._id, id, deps.clock.now()))) throw linkGone();
      let booking: BookingDoc;
      try {
        booking = await write();
      } catch (err) {
        if (link) await releaseLink(link.user_id, link._id, id, err);
        throw err;
      }
      return booking;
    },
  };
}

export function createPublicTeamBookingService(
  deps: Pick<ServiceDeps, "appUrl" | "access" | "clock"> & { accountReads: AccountReads; wake: OutboxWake },
  ports: BookingPorts,
): ServiceImpl<typeof PublicTeamBookingService> {
  const desk = teamBookingDesk(deps, ports);
  const { reads } = desk;
  return {
    async getPublicTeam(req) {
      const team = req.teamUrl === "" ? null : await reads.teamByUrlKey(urlKey(req.teamUrl), performance.now());
      if (!team) throw notFound("team not found");
      // (user_id, created_at desc) index; the team's few events.
      const events = await EventModel.find({ user_id: team._id, deleted: false, active: true, is_public: true }).sort({ created_at: -1 }).lean<EventDoc[]>();
      return {
        team: {
          name: team.name,
          url: team.url,
          events: events.map(eventSummary),
        },
      };
    },

    async getPublicTeamEvent(req) {
      return { event: await desk.view(await teamEventOf(reads, req.teamUrl, req.eventUrl)) };
    },

    async listTeamSlots(req) {
      const since = performance.now();
      return desk.slots(await teamEventOf(reads, req.teamUrl, req.eventUrl, since), req, since);
    },

    async createTeamBooking(req, hctx) {
      return { booking: await desk.book(await teamEventOf(reads, req.teamUrl, req.eventUrl), req.booking, hctx) };
    },
  };
}

/** A team event's single-use links answer as its public team paths do (booking-kinds.md "Single-use links", teams.md). */
export function createTeamLinks(deps: Pick<ServiceDeps, "appUrl" | "access" | "clock"> & { accountReads: AccountReads; wake: OutboxWake }, ports: BookingPorts): TeamLinks {
  const desk = teamBookingDesk(deps, ports);
  return {
    async of(event, since) {
      const team = event.team_id ? await desk.reads.teamById(event.team_id, since) : null;
      if (!team) return undefined;
      const ctx = await teamContextOf(desk.reads, team, event, since);
      return {
        event: () => desk.view(ctx),
        slots: (req, at) => desk.slots(ctx, req, at),
        book: (input, hctx, link) => desk.book(ctx, input, hctx, link),
      };
    },
  };
}

/** The team's owner or an admin (checked by the caller: managedEvent) books a team event for someone; the booking made, or the one a first try of the same keyed request made. */
export type TeamBookForAttendee = (event: EventDoc, input: BookingFieldsInput | undefined, hctx: HandlerContext, byHost: HostBooks) => Promise<BookingDoc>;

/** The host's desk booking of a team event (booking-kinds.md "The host's desk", docs/teams.md): the team's booking path, by the host. */
export function createTeamBookForAttendee(deps: Pick<ServiceDeps, "appUrl" | "access" | "clock"> & { accountReads: AccountReads; wake: OutboxWake }, ports: BookingPorts): TeamBookForAttendee {
  const desk = teamBookingDesk(deps, ports);
  return async (event, input, hctx, byHost) => {
    const since = performance.now();
    const team = event.team_id ? await desk.reads.teamById(event.team_id, since) : null;
    if (!team) throw notFound("event not found");
    return desk.place(await teamContextOf(desk.reads, team, event, since), input, hctx, undefined, byHost);
  };
}
