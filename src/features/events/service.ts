// EventService: the account's bookable meeting types with their booking-form questions (links in event_questions).
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import type { Value } from "@bufbuild/protobuf/wkt";
import { plainValue } from "../../platform/rest/json.js";
import type { ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import { EventService, type EventInput as EventInputMessage, type EventQuestionAttributes, type EventSchema } from "../../../gen/scheduling/v1/event_pb.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { EventQuestionModel, QuestionModel, type EventQuestionDoc, type QuestionDoc } from "../../db/models/question.js";
import type { UserDoc } from "../../db/models/user.js";
import { invalid, missingParams, notFound, requireFields, requireObject } from "../../domain/errors.js";
import {
  checkEventInput,
  cloneName,
  cloneUrl,
  descriptionForDisplay,
  checkCalendarMeet,
  EVENT_DEFAULTS,
  NO_CALENDAR_SELECTED,
  NOTHING_CONNECTED,
  type EventInput,
  type EventInputContext,
  locationDisplayName,
  paddingTokenForMinutes,
  planEventQuestions,
  type EventPatch,
  type EventQuestionPlan,
} from "../../domain/event.js";
import { eventUrlKeys, urlKey } from "../../domain/urlKey.js";
import { checkEventRules, EVENT_RULE_DEFAULTS, storedRules, type StoredEventRules } from "../../domain/eventRules.js";
import { formatDateTimeForHost, formatDurationMinutes, formatLongDate, timeAgo } from "../../domain/format.js";
import { eventDurations, slotDurationShown } from "../../domain/lengths.js";
import { ianaForServiceZone } from "../../domain/timezones.js";
import type { Access } from "../accounts/index.js";
import { eventsCounts, presentQuestion } from "./questions.js";
import { objectIdOf } from "../../db/ids.js";
import { ownEvent } from "./own.js";
import { scheduleIdsOf } from "../schedules/index.js";
import { copyForm, deleteEvent, insertEvent, isEventUrlTaken, readByAnotherEvent, updateEvent, writeForm } from "./writes.js";
import { questionOwnersOf } from "../../domain/team.js";
import { linkMethods, type LinkDeps } from "./links.js";

type EventMessage = MessageInitShape<typeof EventSchema>;

const URL_TAKEN = "url has already been taken";
/** Clone urls are chosen from a fresh read of the taken ones; only a concurrent writer can make one collide. */
const CLONE_URL_ATTEMPTS = 5;

/** Every form link of the events, in form order (order_number, then age). */
async function linksOf(events: readonly Pick<EventDoc, "_id" | "user_id">[]): Promise<EventQuestionDoc[]> {
  if (events.length === 0) return [];
  const accounts = [...new Map(events.map((e) => [e.user_id.toHexString(), e.user_id])).values()];
  // (user_id, event_id, order_number) index: on the events' account's shard.
  const links = await EventQuestionModel.find({ user_id: mongoose.trusted({ $in: accounts }), event_id: mongoose.trusted({ $in: events.map((e) => e._id) }) }).lean<EventQuestionDoc[]>();
  return links.sort(
    (a, b) => a.order_number - b.order_number || a.created_at.getTime() - b.created_at.getTime() || a._id.toHexString().localeCompare(b._id.toHexString()),
  );
}

/**
 * The events as their owner sees them. `host`: the account whose clock and formats the dates are shown in (a team
 * event's: the caller's, with the team's id and zone); `pagePrefix`: the first part of each event's absolute_url
 * (default: the account's own `/<url>`; a team's `/team/<url>`).
 */
export async function presentEvents(ports: EventPorts, events: EventDoc[], host: UserDoc, now: Date, pagePrefix = `/${encodeURIComponent(host.url)}`): Promise<EventMessage[]> {
  const links = await linksOf(events);
  const questionIds = [...new Set(links.map((l) => l.question_id.toHexString()))].map((id) => new mongoose.Types.ObjectId(id));
  // _id index. Only active questions show on a booking form.
  const questions =
    questionIds.length === 0
      ? []
      : await QuestionModel.find({ _id: mongoose.trusted({ $in: questionIds }), user_id: mongoose.trusted({ $in: questionOwnersOf(links) }), state: "active" }).lean<QuestionDoc[]>();
  const questionById = new Map(questions.map((q) => [q._id.toHexString(), q]));
  const counts = await eventsCounts(host._id, questions.map((q) => q._id));
  const emails = await ports.calendarEmails(host._id, events.map((e) => e.connected_calendar_id));

  const zone = ianaForServiceZone(host.timezone);
  return events.map((e) => {
    const form = links.filter((l) => l.event_id.equals(e._id) && questionById.has(l.question_id.toHexString()));
    const location = e.location;
    const rules = storedRules(e);
    return {
      id: e._id.toHexString(),
      name: e.name,
      url: e.url,
      absoluteUrl: `${pagePrefix}/${encodeURIComponent(e.url)}`,
      active: e.active,
      isPublic: e.is_public,
      color: e.color,
      slotDuration: slotDurationShown(e),
      durations: eventDurations(e),
      slotIntervalMinutes: e.slot_interval_minutes ?? undefined,
      paddingDuration: formatDurationMinutes(e.padding_minutes),
      locationName: locationDisplayName(location),
      description: descriptionForDisplay(e.description),
      connectedCalendarEmail: emails.get(e.connected_calendar_id) ?? undefined,
      createdAt: formatLongDate(e.created_at, zone),
      createdAtAgo: timeAgo(e.created_at, now),
      formatedCreatedAtForHost: formatDateTimeForHost(e.created_at, zone, host.date_format, host.time_format),
      activeEventQuestions: form.map((l) => {
        const q = questionById.get(l.question_id.toHexString()) as QuestionDoc;
        return {
          id: l._id.toHexString(),
          required: l.required,
          orderNumber: l.order_number,
          conditions: (l.conditions ?? []) as JsonObject[],
          createdAtAgo: timeAgo(l.created_at, now),
          question: presentQuestion(q, counts.get(q._id.toHexString()) ?? 0, host),
        };
      }),
      location: {
        name: location.name,
        details: location.details ?? undefined,
        selectedOption: location.selected_option ?? undefined,
        hostContactNumber: location.host_contact_number ?? undefined,
        inviteeContactNumber: location.invitee_contact_number ?? undefined,
      },
      enableGuestEmails: e.enable_guest_emails,
      guestEmailsLimit: e.guest_emails_limit,
      connectedCalendarId: e.connected_calendar_id,
      bufferBefore: paddingTokenForMinutes(rules.buffer_before_minutes) ?? "0_minutes",
      minimumNoticeMinutes: rules.minimum_notice_minutes ?? undefined,
      bookingWindowDays: rules.booking_window_days ?? undefined,
      scheduleId: rules.schedule_id ?? undefined,
      dailyLimit: rules.daily_limit ?? undefined,
      weeklyLimit: rules.weekly_limit ?? undefined,
      cancelNoticeMinutes: rules.cancel_notice_minutes ?? undefined,
      seatsPerSlot: rules.seats_per_slot ?? undefined,
      showAttendeesToAttendees: rules.show_attendees_to_attendees,
      requiresConfirmation: rules.requires_confirmation,
      confirmationHours: rules.confirmation_hours,
      ...teamEventFields(e),
    };
  });
}

/** What a team event adds (teams.md); nothing for a personal one. */
function teamEventFields(e: EventDoc): { teamId?: string; scheduling?: string; hosts?: { userId: string; priority: number; weight: number }[]; rescheduleWithSameHost?: boolean } {
  if (!e.team_id) return {};
  return {
    teamId: e.team_id.toHexString(),
    scheduling: e.scheduling ?? undefined,
    hosts: (e.hosts ?? []).map((h) => ({ userId: h.user_id.toHexString(), priority: h.priority, weight: h.weight })),
    rescheduleWithSameHost: e.reschedule_with_same_host ?? false,
  };
}

const jsonOf = (v: Value | undefined): unknown => (v === undefined ? undefined : plainValue(v));

/** The sent fields as the domain checks them: the JSON-valued ones (lengths) as the JSON sent (a team event's too). */
export function eventInputOf(input: EventInputMessage | undefined): EventInput {
  if (input === undefined) return {};
  return { ...input, durations: jsonOf(input.durations), slotIntervalMinutes: jsonOf(input.slotIntervalMinutes) };
}

/** The event rules of a create or update, checked; the account's schedules are read only when a schedule id is sent. */
export async function checkedRules(host: Pick<UserDoc, "_id">, input: EventInputMessage | undefined): Promise<Partial<StoredEventRules>> {
  const scheduleId = jsonOf(input?.scheduleId);
  return checkEventRules(
    {
      bufferBefore: input?.bufferBefore,
      minimumNoticeMinutes: jsonOf(input?.minimumNoticeMinutes),
      bookingWindowDays: jsonOf(input?.bookingWindowDays),
      scheduleId,
      dailyLimit: jsonOf(input?.dailyLimit),
      weeklyLimit: jsonOf(input?.weeklyLimit),
      cancelNoticeMinutes: jsonOf(input?.cancelNoticeMinutes),
      seatsPerSlot: jsonOf(input?.seatsPerSlot),
      showAttendeesToAttendees: input?.showAttendeesToAttendees,
      requiresConfirmation: input?.requiresConfirmation,
      confirmationHours: input?.confirmationHours,
    },
    typeof scheduleId === "string" ? await scheduleIdsOf(host._id) : [],
  );
}

async function presentEvent(ports: EventPorts, id: mongoose.Types.ObjectId, host: UserDoc, now: Date): Promise<EventMessage> {
  const event = await EventModel.findOne({ _id: id, user_id: host._id, deleted: false }).lean<EventDoc>();
  if (!event) throw notFound("event not found");
  const [message] = await presentEvents(ports, [event], host, now);
  return message;
}

/** What the account has connected, read only when the input names something that depends on it. */
async function inputContext(ports: EventPorts, host: UserDoc, input: EventInput | undefined): Promise<EventInputContext> {
  const wantsConference = input?.location?.name === "conference";
  const calendarId = input?.connectedCalendarId;
  const wantsCalendar = calendarId !== undefined && calendarId !== NO_CALENDAR_SELECTED;
  if (!wantsConference && !wantsCalendar) return NOTHING_CONNECTED;
  return {
    conferenceConnected: wantsConference && (await ports.conferenceConnected(host._id)),
    writableCalendarIds: wantsCalendar ? await ports.writableCalendarIds(host._id, [calendarId]) : new Set(),
  };
}

/**
 * The change of the event's form (`event` null: a new one's) that `entries` ask for: the caller's own questions
 * only (a team event's: those of the owner or admin who changes it), the others ignored.
 */
export async function planForm(caller: Pick<UserDoc, "_id">, event: Pick<EventDoc, "_id" | "user_id"> | null, entries: readonly EventQuestionAttributes[]): Promise<EventQuestionPlan> {
  const existing = event === null || entries.length === 0 ? [] : await linksOf([event]);
  return planEventQuestions(
    existing.map((l) => ({ id: l._id.toHexString(), questionId: l.question_id.toHexString(), orderNumber: l.order_number })),
    entries,
    await ownQuestionIds(caller, entries),
  );
}

/** The caller's questions among the entries' question ids; the others are ignored by the plan. */
async function ownQuestionIds(host: Pick<UserDoc, "_id">, entries: readonly EventQuestionAttributes[]): Promise<Set<string>> {
  const ids = entries.map((e) => objectIdOf(e.questionId)).filter((id): id is mongoose.Types.ObjectId => id !== null);
  if (ids.length === 0) return new Set();
  // _id index.
  const own = await QuestionModel.find({ _id: mongoose.trusted({ $in: ids }), user_id: host._id }, { _id: 1 }).lean();
  return new Set(own.map((q) => q._id.toHexString()));
}

export function newEventDocument(host: Pick<UserDoc, "_id">, fields: Required<Pick<EventPatch, "name" | "url" | "url_key">> & EventPatch & Partial<StoredEventRules>, now: Date) {
  return {
    ...EVENT_DEFAULTS,
    ...EVENT_RULE_DEFAULTS,
    location: { ...EVENT_DEFAULTS.location },
    ...fields,
    user_id: host._id,
    created_at: now,
    deleted_at: null,
    deleted: false,
  };
}

/**
 * What events need to know of the account's calendars and video meetings. Those features build on events (a
 * booking's calendar event, a DELETE refused while an event uses the conference), so src/app hands these in.
 */
export interface EventPorts {
  /** Of `ids`, those naming a calendar of the account that can be written to. */
  writableCalendarIds(userId: mongoose.Types.ObjectId, ids: readonly string[]): Promise<Set<string>>;
  /** The e-mail address of each of the account's calendars among `ids` (null when it has none). */
  calendarEmails(userId: mongoose.Types.ObjectId, ids: readonly string[]): Promise<Map<string, string | null>>;
  /** Whether the account has connected the video-meeting integration behind the `conference` location. */
  conferenceConnected(userId: mongoose.Types.ObjectId): Promise<boolean>;
  /** Of `ids`, the account's writable calendars whose provider makes meeting links (`calendar_meet`). */
  meetingCalendarIds(userId: mongoose.Types.ObjectId, ids: readonly string[]): Promise<Set<string>>;
}

/** 422 unless an event that will be at calendar_meet writes to a calendar that makes meeting links. */
async function checkMeet(ports: EventPorts, host: UserDoc, location: string, calendarId: string): Promise<void> {
  if (location !== "calendar_meet") return;
  checkCalendarMeet(location, calendarId, calendarId === NO_CALENDAR_SELECTED ? new Set() : await ports.meetingCalendarIds(host._id, [calendarId]));
}

export function createEventService(access: Access, ports: EventPorts, linkDeps: LinkDeps): ServiceImpl<typeof EventService> {
  return {
    ...linkMethods(access, linkDeps),
    async listEvents(_req, ctx) {
      const host = await access.authenticate(ctx);
      // (user_id, created_at desc) index.
      const events = await EventModel.find({ user_id: host._id, deleted: false }).sort({ created_at: -1, _id: -1 }).lean<EventDoc[]>();
      return { events: await presentEvents(ports, events, host, access.clock.now()) };
    },

    async getEvent(req, ctx) {
      const host = await access.authenticate(ctx);
      const event = await ownEvent(host, req.id);
      const [message] = await presentEvents(ports, [event], host, access.clock.now());
      return { event: message };
    },

    async createEvent(req, ctx) {
      const host = await access.authenticate(ctx);
      const input = req.event;
      requireFields("event", { name: input?.name, url: input?.url });
      const fields = { ...checkEventInput(eventInputOf(input), await inputContext(ports, host, input)), ...(await checkedRules(host, input)) };
      await checkMeet(ports, host, fields.location?.name ?? EVENT_DEFAULTS.location.name, fields.connected_calendar_id ?? EVENT_DEFAULTS.connected_calendar_id);
      const plan = await planForm(host, null, input?.eventQuestionsAttributes ?? []);
      const now = access.clock.now();
      let created: mongoose.Types.ObjectId;
      try {
        created = await insertEvent(
          newEventDocument(host, { ...fields, name: fields.name ?? "", url: fields.url ?? "", url_key: fields.url_key ?? "" }, now),
          (id) => writeForm(plan, id, host._id, now),
        );
      } catch (err) {
        if (isEventUrlTaken(err)) throw invalid(URL_TAKEN);
        throw err;
      }
      return { event: await presentEvent(ports, created, host, now) };
    },

    async updateEvent(req, ctx) {
      const host = await access.authenticate(ctx);
      const input = req.event;
      requireObject("event", input);
      const event = await ownEvent(host, req.id);
      const patch = { ...checkEventInput(eventInputOf(input), await inputContext(ports, host, input)), ...(await checkedRules(host, input)) };
      await checkMeet(ports, host, patch.location?.name ?? event.location.name, patch.connected_calendar_id ?? event.connected_calendar_id);
      const plan = await planForm(host, event, input.eventQuestionsAttributes);
      const now = access.clock.now();
      // The event first: a url clash answers 422 before any link has changed.
      if (Object.keys(patch).length > 0) {
        try {
          if (!(await updateEvent(host._id, event._id, patch))) throw notFound("event not found");
        } catch (err) {
          if (isEventUrlTaken(err)) throw invalid(URL_TAKEN);
          throw err;
        }
      }
      await writeForm(plan, event._id, host._id, now);
      return { event: await presentEvent(ports, event._id, host, now) };
    },

    async cloneEvent(req, ctx) {
      const host = await access.authenticate(ctx);
      const source = await ownEvent(host, req.id);
      const name = cloneName(source.name);
      const links = await linksOf([source]);
      // (user_id, url_key) partial index: the urls a copy must not take.
      const taken = new Set((await EventModel.find({ user_id: host._id, deleted: false }, { url_key: 1, _id: 0 }).lean()).map((e) => e.url_key));
      for (let attempt = 0; attempt < CLONE_URL_ATTEMPTS; attempt++) {
        const url = cloneUrl(source.url, taken);
        const now = access.clock.now();
        const copy = newEventDocument(host, {
          name,
          url,
          ...eventUrlKeys(url),
          slot_minutes: source.slot_minutes,
          durations: eventDurations(source),
          slot_interval_minutes: source.slot_interval_minutes ?? null,
          padding_minutes: source.padding_minutes,
          color: source.color,
          description: source.description ?? null,
          location: { ...EVENT_DEFAULTS.location, ...source.location } as EventPatch["location"],
          active: source.active,
          is_public: source.is_public,
          enable_guest_emails: source.enable_guest_emails,
          guest_emails_limit: source.guest_emails_limit,
          connected_calendar_id: source.connected_calendar_id,
          ...storedRules(source),
        }, now);
        try {
          const copyId = await insertEvent(copy, (id) => copyForm(links, id, host._id, now));
          return { event: await presentEvent(ports, copyId, host, now) };
        } catch (err) {
          if (!isEventUrlTaken(err)) throw err;
          // Another request took this url a moment ago: try the next one.
          taken.add(urlKey(url));
        }
      }
      throw invalid("url for the clone could not be chosen; try again", "url");
    },

    async deleteEvent(req, ctx) {
      const host = await access.authenticate(ctx);
      const id = objectIdOf(req.id);
      if (id === null || !(await deleteEvent(host._id, id, access.clock.now()))) throw notFound("event not found");
      return {};
    },

    async checkEventUrlAvailability(req, ctx) {
      const host = await access.authenticate(ctx);
      const url = req.event?.url;
      if (url === undefined || url.trim() === "") throw missingParams({ event: ["url"] });
      return { available: !(await readByAnotherEvent(host._id, eventUrlKeys(url), objectIdOf(req.event?.id))) };
    },
  };
}
