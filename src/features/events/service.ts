// EventService: the account's bookable meeting types with their booking-form questions (links in event_questions).
import { toJson, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import { ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
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
  eventUrlKey,
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
import { checkEventRules, EVENT_RULE_DEFAULTS, storedRules, type StoredEventRules } from "../../domain/eventRules.js";
import { formatDateTimeForHost, formatDurationMinutes, formatLongDate, timeAgo } from "../../domain/format.js";
import { ianaForServiceZone } from "../../domain/timezones.js";
import type { Access } from "../accounts/index.js";
import { eventsCounts, presentQuestion } from "./questions.js";
import { objectIdOf } from "../../db/ids.js";
import { isDuplicateKey, isDuplicateKeyError } from "../../db/errors.js";
import { readOncePerTurn } from "../../db/sharedRead.js";
import { scheduleIdsOf } from "../schedules/index.js";
import { accountChanged } from "../../db/accountVersions.js";

type EventMessage = MessageInitShape<typeof EventSchema>;

const URL_TAKEN = "url has already been taken";
/** Clone urls are chosen from a fresh read of the taken ones; only a concurrent writer can make one collide. */
const CLONE_URL_ATTEMPTS = 5;

function ownEventFilter(host: UserDoc, id: string): { _id: mongoose.Types.ObjectId; user_id: mongoose.Types.ObjectId; deleted: false } | null {
  const _id = objectIdOf(id);
  return _id === null ? null : { _id, user_id: host._id, deleted: false };
}

/**
 * The caller's undeleted event with this id, or NOT_FOUND; shared by the event and booking services. `shared`:
 * concurrent callers asking within one turn get one read and one object (src/db/sharedRead.ts), for the host's
 * read-only booking lists, which many tabs or clients read at once; such a caller must not modify the event.
 */
export async function ownEvent(host: UserDoc, id: string, shared = false): Promise<EventDoc> {
  const filter = ownEventFilter(host, id);
  // _id index; owner and deleted flag make another account's or a deleted event as unknown as a missing one.
  const read = (f: NonNullable<typeof filter>) => EventModel.findOne(f).lean<EventDoc>();
  const event =
    filter === null ? null : shared ? await readOncePerTurn(`events ${filter._id.toHexString()} ${host._id.toHexString()}`, () => read(filter)) : await read(filter);
  if (!event) throw notFound("event not found");
  return event;
}

/** Every form link of the events, in form order (order_number, then age). */
async function linksOf(eventIds: readonly mongoose.Types.ObjectId[]): Promise<EventQuestionDoc[]> {
  if (eventIds.length === 0) return [];
  // (event_id, order_number) index.
  const links = await EventQuestionModel.find({ event_id: mongoose.trusted({ $in: eventIds }) }).lean<EventQuestionDoc[]>();
  return links.sort(
    (a, b) => a.order_number - b.order_number || a.created_at.getTime() - b.created_at.getTime() || a._id.toHexString().localeCompare(b._id.toHexString()),
  );
}

async function presentEvents(ports: EventPorts, events: EventDoc[], host: UserDoc, now: Date): Promise<EventMessage[]> {
  const links = await linksOf(events.map((e) => e._id));
  const questionIds = [...new Set(links.map((l) => l.question_id.toHexString()))].map((id) => new mongoose.Types.ObjectId(id));
  // _id index. Only active questions show on a booking form.
  const questions =
    questionIds.length === 0
      ? []
      : await QuestionModel.find({ _id: mongoose.trusted({ $in: questionIds }), user_id: host._id, state: "active" }).lean<QuestionDoc[]>();
  const questionById = new Map(questions.map((q) => [q._id.toHexString(), q]));
  const counts = await eventsCounts(questions.map((q) => q._id));
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
      absoluteUrl: `/${encodeURIComponent(host.url)}/${encodeURIComponent(e.url)}`,
      active: e.active,
      isPublic: e.is_public,
      color: e.color,
      slotDuration: formatDurationMinutes(e.slot_minutes),
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
    };
  });
}

const jsonOf = (v: Value | undefined): unknown => (v === undefined ? undefined : toJson(ValueSchema, v));

/** The event rules of a create or update, checked; the account's schedules are read only when a schedule id is sent. */
async function checkedRules(host: UserDoc, input: EventInputMessage | undefined): Promise<Partial<StoredEventRules>> {
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

/** The caller's questions among the entries' question ids; the others are ignored by the plan. */
async function ownQuestionIds(host: UserDoc, entries: readonly EventQuestionAttributes[]): Promise<Set<string>> {
  const ids = entries.map((e) => objectIdOf(e.questionId)).filter((id): id is mongoose.Types.ObjectId => id !== null);
  if (ids.length === 0) return new Set();
  // _id index.
  const own = await QuestionModel.find({ _id: mongoose.trusted({ $in: ids }), user_id: host._id }, { _id: 1 }).lean();
  return new Set(own.map((q) => q._id.toHexString()));
}

/** A duplicate key of event_questions' (question_id, event_id) index: that question is on the event already. */
function onlyDuplicateLinks(err: unknown): boolean {
  const e = err as { writeErrors?: unknown[] };
  if (Array.isArray(e.writeErrors) && e.writeErrors.length > 0) return e.writeErrors.every(isDuplicateKeyError);
  return isDuplicateKeyError(err);
}

/*
 * Why no transaction: the embedded server runs transactions, but when two of them write the same unique key
 * it detects the clash only at commit and answers by closing the connection (the driver then resets its pool,
 * failing unrelated requests). Writes are ordered instead: the event first (its url is judged at once by the
 * partial unique index), the links last, so a failure never leaves links of a missing event behind.
 */
async function writeLinks(plan: EventQuestionPlan, eventId: mongoose.Types.ObjectId, host: UserDoc, now: Date): Promise<void> {
  // Removals first: a question taken off and added again in one request must not meet its old link in the unique index.
  if (plan.remove.length > 0) {
    await EventQuestionModel.deleteMany({ event_id: eventId, _id: mongoose.trusted({ $in: plan.remove.map((id) => new mongoose.Types.ObjectId(id)) }) });
  }
  for (const c of plan.change) {
    const set: { required?: boolean; order_number?: number } = {};
    if (c.required !== undefined) set.required = c.required;
    if (c.orderNumber !== undefined) set.order_number = c.orderNumber;
    if (Object.keys(set).length > 0) await EventQuestionModel.updateOne({ _id: new mongoose.Types.ObjectId(c.id), event_id: eventId }, { $set: set });
  }
  if (plan.add.length === 0) return;
  try {
    await EventQuestionModel.insertMany(
      plan.add.map((a) => ({
        event_id: eventId,
        question_id: new mongoose.Types.ObjectId(a.questionId),
        user_id: host._id,
        required: a.required,
        order_number: a.orderNumber,
        conditions: [],
        created_at: now,
      })),
      { ordered: false },
    );
  } catch (err) {
    // A concurrent request put the same question on this event first: it is on the form either way.
    if (!onlyDuplicateLinks(err)) throw err;
  }
}

/**
 * Inserts a new event, then its links; if the links fail, the event goes too, so nothing half-made is left. Either
 * way the host's stamp changes after it (a public read may have seen the event meanwhile).
 */
async function insertEventWithLinks(document: ReturnType<typeof newEventDocument>, writeLinksOf: (id: mongoose.Types.ObjectId) => Promise<void>): Promise<mongoose.Types.ObjectId> {
  const [event] = await EventModel.create([document]);
  try {
    await writeLinksOf(event._id);
  } catch (err) {
    await EventQuestionModel.deleteMany({ event_id: event._id });
    await EventModel.deleteOne({ _id: event._id });
    throw err;
  } finally {
    await accountChanged([document.user_id], "settings");
  }
  return event._id;
}

function newEventDocument(host: UserDoc, fields: Required<Pick<EventPatch, "name" | "url" | "url_key">> & EventPatch & Partial<StoredEventRules>, now: Date) {
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

export function createEventService(access: Access, ports: EventPorts): ServiceImpl<typeof EventService> {
  return {
    async listEvents(_req, ctx) {
      const host = await access.authenticate(ctx);
      // (user_id, created_at desc) index.
      const events = await EventModel.find({ user_id: host._id, deleted: false }).sort({ created_at: -1, _id: -1 }).lean<EventDoc[]>();
      return { events: await presentEvents(ports, events, host, new Date()) };
    },

    async getEvent(req, ctx) {
      const host = await access.authenticate(ctx);
      const event = await ownEvent(host, req.id);
      const [message] = await presentEvents(ports, [event], host, new Date());
      return { event: message };
    },

    async createEvent(req, ctx) {
      const host = await access.authenticate(ctx);
      const input = req.event;
      requireFields("event", { name: input?.name, url: input?.url });
      const fields = { ...checkEventInput(input ?? {}, await inputContext(ports, host, input)), ...(await checkedRules(host, input)) };
      await checkMeet(ports, host, fields.location?.name ?? EVENT_DEFAULTS.location.name, fields.connected_calendar_id ?? EVENT_DEFAULTS.connected_calendar_id);
      const entries = input?.eventQuestionsAttributes ?? [];
      const plan = planEventQuestions([], entries, await ownQuestionIds(host, entries));
      const now = new Date();
      let created: mongoose.Types.ObjectId;
      try {
        created = await insertEventWithLinks(
          newEventDocument(host, { ...fields, name: fields.name ?? "", url: fields.url ?? "", url_key: fields.url_key ?? "" }, now),
          (id) => writeLinks(plan, id, host, now),
        );
      } catch (err) {
        if (isDuplicateKey(err, "url_key")) throw invalid(URL_TAKEN);
        throw err;
      }
      return { event: await presentEvent(ports, created, host, now) };
    },

    async updateEvent(req, ctx) {
      const host = await access.authenticate(ctx);
      const input = req.event;
      requireObject("event", input);
      const event = await ownEvent(host, req.id);
      const patch = { ...checkEventInput(input, await inputContext(ports, host, input)), ...(await checkedRules(host, input)) };
      await checkMeet(ports, host, patch.location?.name ?? event.location.name, patch.connected_calendar_id ?? event.connected_calendar_id);
      const entries = input.eventQuestionsAttributes;
      const existing = entries.length === 0 ? [] : await linksOf([event._id]);
      const plan = planEventQuestions(
        existing.map((l) => ({ id: l._id.toHexString(), questionId: l.question_id.toHexString(), orderNumber: l.order_number })),
        entries,
        await ownQuestionIds(host, entries),
      );
      const now = new Date();
      // The event first: a url clash answers 422 before any link has changed.
      if (Object.keys(patch).length > 0) {
        try {
          const res = await EventModel.updateOne({ _id: event._id, user_id: host._id, deleted: false }, { $set: patch });
          if (res.matchedCount === 0) throw notFound("event not found");
        } catch (err) {
          if (isDuplicateKey(err, "url_key")) throw invalid(URL_TAKEN);
          throw err;
        }
        await accountChanged([host._id], "settings");
      }
      await writeLinks(plan, event._id, host, now);
      return { event: await presentEvent(ports, event._id, host, now) };
    },

    async cloneEvent(req, ctx) {
      const host = await access.authenticate(ctx);
      const source = await ownEvent(host, req.id);
      const name = cloneName(source.name);
      const links = await linksOf([source._id]);
      // (user_id, url_key) partial index: the urls a copy must not take.
      const taken = new Set((await EventModel.find({ user_id: host._id, deleted: false }, { url_key: 1, _id: 0 }).lean()).map((e) => e.url_key));
      for (let attempt = 0; attempt < CLONE_URL_ATTEMPTS; attempt++) {
        const url = cloneUrl(source.url, taken);
        const now = new Date();
        const copy = newEventDocument(host, {
          name,
          url,
          url_key: eventUrlKey(url),
          slot_minutes: source.slot_minutes,
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
          const copyId = await insertEventWithLinks(copy, async (id) => {
            if (links.length === 0) return;
            await EventQuestionModel.insertMany(
              links.map((l) => ({
                event_id: id,
                question_id: l.question_id,
                user_id: host._id,
                required: l.required,
                order_number: l.order_number,
                conditions: l.conditions ?? [],
                created_at: now,
              })),
            );
          });
          return { event: await presentEvent(ports, copyId, host, now) };
        } catch (err) {
          if (!isDuplicateKey(err, "url_key")) throw err;
          // Another request took this url a moment ago: try the next one.
          taken.add(eventUrlKey(url));
        }
      }
      throw invalid("url for the clone could not be chosen; try again");
    },

    async deleteEvent(req, ctx) {
      const host = await access.authenticate(ctx);
      const filter = ownEventFilter(host, req.id);
      // Soft: bookings and the form stay; `deleted` takes the event out of the partial unique index, freeing its url.
      const res = filter === null ? null : await EventModel.updateOne(filter, { $set: { deleted: true, deleted_at: new Date() } });
      if (res === null || res.matchedCount === 0) throw notFound("event not found");
      await accountChanged([host._id], "settings");
      return {};
    },

    async checkEventUrlAvailability(req, ctx) {
      const host = await access.authenticate(ctx);
      const url = req.event?.url;
      if (url === undefined || url.trim() === "") throw missingParams({ event: ["url"] });
      // (user_id, url_key) partial index.
      const holder = await EventModel.findOne({ user_id: host._id, url_key: eventUrlKey(url), deleted: false }, { _id: 1 }).lean();
      const renamed = objectIdOf(req.event?.id);
      return { available: holder === null || (renamed !== null && holder._id.equals(renamed)) };
    },
  };
}
