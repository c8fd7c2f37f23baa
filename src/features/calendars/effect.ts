// The calendar effect: makes the host's calendar hold a booking's VEVENT while the booking is confirmed, and not otherwise.
import mongoose from "mongoose";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { CalendarConnectionModel, CalendarModel, type CalendarConnectionDoc } from "../../db/models/calendar.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { bookingAsEvent, seatedSlotAsEvent } from "../../domain/bookingEvent.js";
import { calendarProvider, ProviderError, RateLimitedError, withDeadline, type CalendarProvider } from "../../providers/index.js";
import { markConnection, type CalendarReader } from "./busy.js";
import { errorText } from "../../platform/log.js";
import { answersWithQuestions, bookingById, bookingsOfSlot, hostUsersOf, setCalendarEventId, setCalendarSync, setHostCalendarEventId, setMeeting, storedBookingFacts } from "../bookings/index.js";
import { hostsOf } from "../../domain/team.js";
import { objectIdOf } from "../../db/ids.js";
import { leavesCalendarsAlone } from "../../domain/owed.js";
import type { BookingChange, EffectKind, EffectRecord, PlanReads, PlannedEffect, RunResult } from "../../outbox/types.js";

/*
 * Convergence. An effect carries only a booking id; each run reads the booking as it is now and makes the
 * calendar match it: confirmed -> the object <booking id>.ics holds its VEVENT (the host's copy of bookingAsEvent);
 * anything else -> no such object. So a retry, a duplicate, or effects of two changes
 * running out of order all end in the same place, and a killed worker's effect simply runs again after its lease.
 * A reschedule makes a new booking (a new UID): the old booking's effect removes the old object, the new one's
 * writes the new object.
 */

/** One exchange of a write may take this long: nobody is waiting on it, and a slow server should still get through. */
const WRITE_TIMEOUT_MS = 15_000;

type CalendarTarget = Pick<BookingDoc, "_id" | "calendar_id" | "user_id" | "host_ids" | "team_id">;

function plannedFor(booking: CalendarTarget | null, key: string): PlannedEffect[] {
  if (!booking || !booking.calendar_id) return [];
  // The calendar is the destination: one that hangs or fails rests without holding up the account's other effects.
  return [{ key, destination: `calendar:${booking.calendar_id}`, payload: { booking_id: booking._id.toHexString() } }];
}

/**
 * A team booking's event in each host's calendar (teams.md), one effect per host under `key:<host id>`: `hosts` the
 * booking's hosts now, and any it no longer holds whose event is to go (a reassign's old host).
 */
async function plannedForHosts(booking: CalendarTarget | null, key: string, gone: readonly string[] = []): Promise<PlannedEffect[]> {
  if (!booking || !booking.team_id) return [];
  const hosts = [...new Set([...hostsOf(booking).map((h) => h.toHexString()), ...gone])];
  const planned = await Promise.all(
    hosts.map(async (hostId): Promise<PlannedEffect[]> => {
      const calendarId = await teamBookingsCalendar(hostId);
      if (calendarId === null) return [];
      return [{ key: `${key}:${hostId}`, destination: `calendar:${calendarId}`, userId: hostId, payload: { booking_id: booking._id.toHexString(), host_id: hostId, calendar_id: calendarId } }];
    }),
  );
  return planned.flat();
}

/**
 * The calendar a host's team bookings are written to (teams.md "has it written to their calendars"): their first
 * writable calendar connected (oldest first) among those that check for conflicts, the calendars they live in;
 * else their first writable one; null when they have none.
 */
async function teamBookingsCalendar(hostId: string): Promise<string | null> {
  const userId = objectIdOf(hostId);
  if (userId === null) return null;
  // (user_id, created_at) index; a handful per account.
  const calendars = await CalendarModel.find({ user_id: userId }, { can_write: 1, check_for_conflicts: 1 }).sort({ created_at: 1, _id: 1 }).lean();
  const writable = calendars.filter((c) => c.can_write);
  return (writable.find((c) => c.check_for_conflicts) ?? writable[0])?._id.toHexString() ?? null;
}

/**
 * One host's view of a team booking, as the write for their calendar converges to it: their calendar and their
 * event id; held while the booking is and they are among its hosts (a reassign's old host: no longer).
 */
function hostView(booking: BookingDoc, hostId: mongoose.Types.ObjectId, calendarId: string): BookingDoc {
  const holds = hostsOf(booking).some((h) => h.equals(hostId));
  return {
    ...booking,
    user_id: hostId,
    calendar_id: calendarId,
    calendar_event_id: booking.host_events?.[hostId.toHexString()] ?? null,
    status: holds ? booking.status : "canceled",
  };
}

function permanentOrRetry(err: unknown): RunResult {
  if (err instanceof ProviderError) {
    // Refused credentials or a blocked address will not heal by retrying; a host reconnects instead.
    return { ok: false, error: err.message, permanent: err.kind === "refused" || err.kind === "blocked" };
  }
  return { ok: false, error: errorText(err) };
}


/** Passes of write-then-check: a change between the read and the write (a cancel racing the create) is caught by the check. */
const CONVERGE_PASSES = 3;

async function run(deps: CalendarKindDeps, effect: EffectRecord, signal: AbortSignal): Promise<RunResult> {
  const id = String(effect.payload.booking_id ?? "");
  // A team booking's host: their view of it (hostView); else the booking's own calendar.
  const hostId = objectIdOf(typeof effect.payload.host_id === "string" ? effect.payload.host_id : undefined);
  const hostCalendar = String(effect.payload.calendar_id ?? "");
  const hostCopyOf = (b: BookingDoc) => (hostId !== null ? hostView(b, hostId, hostCalendar) : b);
  const viewOf = (b: BookingDoc | null) => b && hostCopyOf(b);
  for (let pass = 0; pass < CONVERGE_PASSES; pass++) {
    const stored = await bookingById(id);
    const booking = viewOf(stored);
    if (!stored || !booking || !booking.calendar_id) return { ok: true };
    if (booking.seated_slot) return runSlot(deps, { stored, booking, hostCopy: hostId !== null, viewOf: hostCopyOf }, effect, signal);
    const result = await converge(deps, booking, effect, signal, hostId !== null);
    if (result.ok !== true) return result;
    // Another effect of this booking may have run meanwhile with the older state; whatever it did, the state the
    // calendar was just made to match must still be the booking's, else the next pass makes it match again.
    const after = viewOf(await bookingById(id));
    if (after?.status === booking.status) {
      // A host's copy of a team booking has no status of its own on the booking.
      if (hostId === null) await setCalendarSync(booking, "synced", null, deps.reader.settings.clock.now());
      return { ok: true };
    }
  }
  return { ok: false, error: "the booking kept changing while its calendar event was written" };
}

/** How often a write waiting on a meeting link looks again, and how long Google may take to finish a Meet link. */
const MEETING_POLL_MS = 1000;
const MEET_PENDING_LIMIT_MS = 10 * 60_000;

/** A booking's calendar, opened for writing: its connection, provider and address, and a deadline for one write. */
interface OpenCalendar {
  connection: CalendarConnectionDoc;
  provider: CalendarProvider & Required<Pick<CalendarProvider, "writeEvent" | "deleteEvent">>;
  target: { url: string | null };
  settings: { allowPrivate: boolean; timeoutMs: number };
  bounded<T>(work: (s: AbortSignal) => Promise<T>): Promise<T>;
}

/** The calendar `calendarId` of the host `userId`, opened; null when it is disconnected (or cannot be written). */
async function openCalendar(deps: CalendarKindDeps, userId: BookingDoc["user_id"], calendarId: string, signal: AbortSignal): Promise<OpenCalendar | null> {
  const calendarOid = objectIdOf(calendarId);
  // _id index.
  const calendar = calendarOid === null ? null : await CalendarModel.findOne({ _id: calendarOid, user_id: userId }).lean();
  const connection = calendar ? await CalendarConnectionModel.findById(calendar.connection_id).lean<CalendarConnectionDoc>() : null;
  const provider = connection ? calendarProvider(connection.provider) : undefined;
  if (!calendar || !connection || !provider?.writeEvent || !provider.deleteEvent) return null;
  return {
    connection,
    provider: provider as OpenCalendar["provider"],
    target: { url: calendar.url ?? null },
    settings: { allowPrivate: deps.reader.settings.allowPrivate, timeoutMs: WRITE_TIMEOUT_MS },
    // An OAuth provider's calls go through one session with no deadline of their own: the whole write gets one.
    bounded: (work) => (provider.oauth ? withDeadline(WRITE_TIMEOUT_MS, (deadline) => work(AbortSignal.any([signal, deadline]))) : work(signal)),
  };
}

/** What a run comes to when the calendar is disconnected: the credentials are gone, so nothing can be removed or written any more. */
function disconnected(present: boolean): RunResult {
  return present ? { ok: false, error: "the calendar was disconnected", permanent: true } : { ok: true };
}

async function converge(deps: CalendarKindDeps, booking: BookingDoc, effect: EffectRecord, signal: AbortSignal, hostCopy: boolean): Promise<RunResult> {
  if (!booking.calendar_id) return { ok: true };
  const present = booking.status === "confirmed";
  const open = await openCalendar(deps, booking.user_id, booking.calendar_id, signal);
  if (!open) return disconnected(present);
  const { connection, provider, target, settings, bounded } = open;
  const bookingId = booking._id.toHexString();
  const ref = { bookingId, id: booking.calendar_event_id ?? null, key: booking.provider_key ?? bookingId };
  try {
    const access = deps.reader.accessOf(connection);
    if (!present && booking.status === "rescheduled" && provider.movesEvents && (await movedToSameCalendar(booking, hostCopy))) {
      // The booking that replaced this one moves the event itself; removing it here would lose it.
      return { ok: true };
    }
    if (present) {
      // _id indexes. A deleted event or host still names the booking.
      const [event, hosts, answers] = await Promise.all([
        EventModel.findById(booking.event_id, { name: 1, location: 1, color: 1 }).lean<Pick<EventDoc, "name" | "location" | "color">>(),
        hostUsersOf(booking),
        answersWithQuestions(booking),
      ]);
      // This calendar's host, and a team booking's other hosts beside the booker.
      const host = hosts.find((h) => h._id.equals(booking.user_id)) ?? null;
      const cohosts = hosts.filter((h) => h !== host);
      // calendar_meet: the calendar makes the link with the event (Google Meet), so this write is what makes it.
      const meetHere = event?.location.name === "calendar_meet" && provider.makesMeetingLinks === true && booking.meeting_provider === connection.provider;
      const age = deps.reader.settings.clock.nowMs() - effect.createdAt.getTime();
      if (!meetHere && booking.meeting_status === "pending" && age < deps.meetingWaitMs) {
        // Another effect makes the link (Zoom): the event is written with it, unless that takes longer than the wait.
        return { ok: "later", until: new Date(deps.reader.settings.clock.nowMs() + MEETING_POLL_MS), reason: "waiting for the meeting link" };
      }
      // The host's copy, the same the host's invitation e-mail carries. A moved event keeps the UID it was written
      // with (Google refuses to change an iCalUID).
      const facts = storedBookingFacts({ booking, event, host, cohosts, answers, appUrl: deps.appUrl(), uidBookingId: provider.movesEvents ? ref.key : bookingId });
      const copy = bookingAsEvent(facts, "host");
      const written = await bounded((s) =>
        provider.writeEvent({
          access,
          calendar: target,
          event: {
            ...copy,
            bookingId,
            ...(event?.color ? { color: event.color } : {}),
            ...(meetHere ? { meeting: { requestId: ref.key } } : {}),
          },
          ref,
          settings,
          signal: s,
        }),
      );
      if (written.id !== ref.id && provider.movesEvents) {
        const now = deps.reader.settings.clock.now();
        await (hostCopy ? setHostCalendarEventId(booking, booking.user_id.toHexString(), written.id, now) : setCalendarEventId(booking, written.id, now));
      }
      if (meetHere && written.meetingError !== undefined) {
        // No link is coming: waiting or retrying would only hold the e-mails back; the event itself is in place.
        if (booking.meeting_status !== "failed" || booking.meeting_error !== written.meetingError) await setMeeting(booking, { status: "failed", error: written.meetingError }, deps.reader.settings.clock.now());
      } else if (meetHere && written.meetingUrl) {
        if (booking.meeting_status !== "ready" || booking.meeting_url !== written.meetingUrl) await setMeeting(booking, { status: "ready", url: written.meetingUrl }, deps.reader.settings.clock.now());
      } else if (meetHere) {
        // Google answers "pending" while it makes the link: the next run reads the event again (its requestId is the same).
        if (age > MEET_PENDING_LIMIT_MS) return { ok: false, error: `${connection.provider} did not finish the meeting link` };
        return { ok: "later", until: new Date(deps.reader.settings.clock.nowMs() + MEETING_POLL_MS), reason: "the meeting link is still being made" };
      }
    } else {
      await bounded((s) => provider.deleteEvent({ access, calendar: target, ref, settings, signal: s }));
    }
  } catch (err) {
    return await failedWrite(deps, connection, err);
  }
  return { ok: true };
}

async function failedWrite(deps: CalendarKindDeps, connection: CalendarConnectionDoc, err: unknown): Promise<RunResult> {
  if (err instanceof RateLimitedError && !err.noCall) await markConnection(deps.reader.settings, connection._id, err);
  // The status stays pending while retries go on; giveUp makes it failed with the last error.
  return permanentOrRetry(err);
}

/*
 * A seated slot (booking-kinds.md "Seats") is one event in the host's calendar, whichever seat's change runs: its
 * object and UID are named after the slot (cells.ts seatedSlotId: the same on every replica), never after a
 * booking, and each run writes the attendees of the slot's confirmed seats as they are read then (or removes the
 * event once none is left). A seat taken or freed plans an effect of its own booking, and each of them converges
 * the whole slot, so their order does not matter. Runs on two replicas may cross (one read the seats before the
 * other's change); each checks the seats again after its write and writes again while they differ, so the last
 * write of all is checked against the seats after it.
 */

/** The seats of a slot as one run saw them: their ids and statuses, to see whether they changed under the write. */
function seatsKey(seats: readonly BookingDoc[]): string {
  return seats.map((b) => `${b._id.toHexString()}:${b.status}:${b.meeting_url ?? ""}`).join(",");
}

/**
 * A seat as a run sees it: as stored (which names the account its slot's seats are kept under), and as this calendar
 * holds it (`booking`, through `viewOf`: a team booking's host's copy, docs/teams.md "Seats", is that host's view of
 * each seat, hostView).
 */
interface SeatView {
  stored: BookingDoc;
  booking: BookingDoc;
  hostCopy: boolean;
  viewOf(b: BookingDoc): BookingDoc;
}

async function runSlot(deps: CalendarKindDeps, { stored, booking, hostCopy, viewOf }: SeatView, effect: EffectRecord, signal: AbortSignal): Promise<RunResult> {
  const calendarId = booking.calendar_id!;
  const onCalendar = async () => (await bookingsOfSlot(stored)).map(viewOf).filter((b) => b.calendar_id === calendarId);
  let slot = await onCalendar();
  for (let pass = 0; pass < CONVERGE_PASSES; pass++) {
    const result = await convergeSlot(deps, booking, slot, effect, signal, hostCopy);
    if (result.ok !== true) return result;
    const after = await onCalendar();
    if (seatsKey(after.filter((b) => b.status === "confirmed")) === seatsKey(slot.filter((b) => b.status === "confirmed"))) {
      await setCalendarSync(booking, "synced", null, deps.reader.settings.clock.now());
      return { ok: true };
    }
    slot = after;
  }
  return { ok: false, error: "the slot's seats kept changing while its calendar event was written" };
}

/** Makes the calendar hold the slot's one event with the attendees of its confirmed seats among `slot` (every booking of it on this calendar), or no event when none is left. */
async function convergeSlot(deps: CalendarKindDeps, booking: BookingDoc, slot: readonly BookingDoc[], effect: EffectRecord, signal: AbortSignal, hostCopy: boolean): Promise<RunResult> {
  const seats = slot.filter((b) => b.status === "confirmed");
  const open = await openCalendar(deps, booking.user_id, booking.calendar_id!, signal);
  if (!open) return disconnected(seats.length > 0);
  const { connection, provider, target, settings, bounded } = open;
  const slotId = booking.seated_slot!.toHexString();
  const clock = deps.reader.settings.clock;
  // The id the provider gave the slot's event, kept on the seats that were there (one that left still names it).
  const known = seats.find((b) => b.calendar_event_id)?.calendar_event_id ?? slot.find((b) => b.calendar_event_id)?.calendar_event_id ?? null;
  const ref = { bookingId: slotId, id: known, key: slotId };
  try {
    const access = deps.reader.accessOf(connection);
    if (seats.length === 0) {
      await bounded((s) => provider.deleteEvent({ access, calendar: target, ref, settings, signal: s }));
      return { ok: true };
    }
    const first = seats[0];
    // _id indexes. A deleted event or host still names the slot.
    const [event, hosts] = await Promise.all([
      EventModel.findById(first.event_id, { name: 1, location: 1, color: 1 }).lean<Pick<EventDoc, "name" | "location" | "color">>(),
      hostUsersOf(first),
    ]);
    // This calendar's host (a host's copy of a team seat: that host, hostView), and a collective slot's other hosts.
    const host = hosts.find((h) => h._id.equals(first.user_id)) ?? (await UserModel.findById(first.user_id, { full_name: 1, email: 1, locale: 1 }).lean<Pick<UserDoc, "full_name" | "email" | "locale">>());
    const cohosts = hosts.filter((h) => !h._id.equals(first.user_id));
    const meetHere = event?.location.name === "calendar_meet" && provider.makesMeetingLinks === true && first.meeting_provider === connection.provider;
    const age = clock.nowMs() - effect.createdAt.getTime();
    if (!meetHere && seats.some((b) => b.meeting_status === "pending") && age < deps.meetingWaitMs) {
      return { ok: "later", until: new Date(clock.nowMs() + MEETING_POLL_MS), reason: "waiting for the meeting link" };
    }
    const facts = seats.map((b) => storedBookingFacts({ booking: b, event, host, cohosts, answers: [], appUrl: deps.appUrl() }));
    const copy = { ...seatedSlotAsEvent(facts, slotId), bookingId: slotId, ...(event?.color ? { color: event.color } : {}), ...(meetHere ? { meeting: { requestId: slotId } } : {}) };
    let written = await bounded((s) => provider.writeEvent({ access, calendar: target, event: copy, ref, settings, signal: s }));
    if (ref.id === null && provider.movesEvents) {
      // A create may answer the event an earlier create of the slot made, as it was then (Microsoft's transactionId):
      // written again over its id, so it holds these attendees.
      written = await bounded((s) => provider.writeEvent({ access, calendar: target, event: copy, ref: { ...ref, id: written.id }, settings, signal: s }));
    }
    if (provider.movesEvents) {
      for (const b of seats) {
        if (b.calendar_event_id === written.id) continue;
        await (hostCopy ? setHostCalendarEventId(b, booking.user_id.toHexString(), written.id, clock.now()) : setCalendarEventId(b, written.id, clock.now()));
      }
    }
    if (meetHere && written.meetingError !== undefined) {
      for (const b of seats) if (b.meeting_status !== "failed" || b.meeting_error !== written.meetingError) await setMeeting(b, { status: "failed", error: written.meetingError }, clock.now());
    } else if (meetHere && written.meetingUrl) {
      // The slot's one meeting: every seat shows its link.
      for (const b of seats) if (b.meeting_status !== "ready" || b.meeting_url !== written.meetingUrl) await setMeeting(b, { status: "ready", url: written.meetingUrl }, clock.now());
    } else if (meetHere) {
      if (age > MEET_PENDING_LIMIT_MS) return { ok: false, error: `${connection.provider} did not finish the meeting link` };
      return { ok: "later", until: new Date(clock.nowMs() + MEETING_POLL_MS), reason: "the meeting link is still being made" };
    }
  } catch (err) {
    return await failedWrite(deps, connection, err);
  }
  return { ok: true };
}

/**
 * Whether the booking that replaced this one writes to the same calendar (so it moves the event this one wrote); a
 * host's copy of a team booking: whether the new booking still holds that host (their calendar is the same).
 */
async function movedToSameCalendar(booking: BookingDoc, hostCopy: boolean): Promise<boolean> {
  if (!booking.rescheduled_to) return false;
  // _id index.
  const next = await BookingModel.findById(booking.rescheduled_to, { calendar_id: 1, user_id: 1, host_ids: 1, seated_slot: 1 }).lean<Pick<BookingDoc, "calendar_id" | "user_id" | "host_ids" | "seated_slot">>();
  // A seat writes its slot's event, never over this one.
  if (next === null || next.seated_slot) return false;
  return hostCopy ? hostsOf(next).some((h) => h.equals(booking.user_id)) : next.calendar_id === booking.calendar_id;
}

/** What the calendar effect needs: the calendars' settings and opened credentials, how long to wait for a meeting link, and where the service is. */
interface CalendarKindDeps {
  reader: CalendarReader;
  meetingWaitMs: number;
  /** APP_URL, read when an event is written (it may only be known once listening): the UID's domain. */
  appUrl(): string;
}

export function createCalendarKind(deps: CalendarKindDeps): EffectKind {
  return {
    name: "calendar",

    async plan(change: BookingChange, reads: PlanReads): Promise<PlannedEffect[]> {
      if (leavesCalendarsAlone(change.type)) return [];
      const booking = await reads.booking(change.bookingId);
      // A reassign's old host: their copy goes (the booking no longer holds them), the new host's is written.
      const gone = change.previousHostId === undefined ? [] : [change.previousHostId];
      const planned = [...plannedFor(booking, "booking"), ...(await plannedForHosts(booking, "booking", gone))];
      if (change.type === "rescheduled" && change.previousBookingId !== undefined) {
        const previous = await reads.booking(change.previousBookingId);
        planned.push(...plannedFor(previous, "previous"), ...(await plannedForHosts(previous, "previous")));
      }
      return planned;
    },

    run: (effect, signal) => run(deps, effect, signal),

    async giveUp(effect: EffectRecord, lastError: string): Promise<void> {
      const _id = objectIdOf(String(effect.payload.booking_id ?? ""));
      // _id index.
      const booking = _id === null ? null : await BookingModel.findById(_id, { event_id: 1, meeting_status: 1, meeting_provider: 1 }).lean<Pick<BookingDoc, "_id" | "event_id" | "meeting_status" | "meeting_provider">>();
      if (!booking) return;
      await setCalendarSync(booking, "failed", lastError, deps.reader.settings.clock.now());
      // A link the calendar was to make with the event (Meet) is not coming either.
      if (booking.meeting_status === "pending" && booking.meeting_provider && calendarProvider(booking.meeting_provider)?.makesMeetingLinks) {
        await setMeeting(booking, { status: "failed", error: lastError }, deps.reader.settings.clock.now());
      }
    },
  };
}
