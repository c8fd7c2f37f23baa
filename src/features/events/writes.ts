// The one writer of events and their forms (events, event_questions): every write to an event ends in the account's stamp (what public slots read of it is kept under it: src/db/accountVersions.ts), so no write path can forget it.
import mongoose from "mongoose";
import { accountChanged } from "../../db/accountVersions.js";
import { isDuplicateKey, isDuplicateKeyError } from "../../db/errors.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { EventQuestionModel, type EventQuestionDoc } from "../../db/models/question.js";
import { NO_CALENDAR_SELECTED, type EventQuestionPlan } from "../../domain/event.js";
import { eventUrlKeys, URL_RULE } from "../../domain/urlKey.js";

/** A question's place on an event's form, as a new link stores it. */
type FormLink = Pick<EventQuestionDoc, "question_id" | "required" | "order_number" | "conditions"> & { question_owner_id?: mongoose.Types.ObjectId | null };

/*
 * Why no transaction: the embedded server runs transactions, but when two of them write the same unique key
 * it detects the clash only at commit and answers by closing the connection (the driver then resets its pool,
 * failing unrelated requests). Writes are ordered instead: the event first (its url is judged at once by the
 * partial unique index), the links last, so a failure never leaves links of a missing event behind.
 *
 * The form (event_questions) is read afresh by whoever shows it, so its links owe no stamp; the event's own
 * fields are kept under the account's stamp.
 */

/** A write refused because the url reads as another undeleted event's of the account. */
class EventUrlTaken extends Error {
  constructor() {
    super("the url reads as another event's of the account");
  }
}

/** True when an event write failed because its url reads as another undeleted event's of the account: its key or shape (the unique indexes), or one of its looks. */
export function isEventUrlTaken(err: unknown): boolean {
  return err instanceof EventUrlTaken || isDuplicateKey(err, "url_key") || isDuplicateKey(err, "url_shape");
}

/** What an event url reads as (src/domain/urlKey.ts eventUrlKeys): what another event's url is compared by. */
type UrlReadings = Pick<ReturnType<typeof eventUrlKeys>, "url_key" | "url_shape" | "url_looks">;

/**
 * Whether another undeleted event of the account (not `except`) reads as this url: the same key, the same shape, or
 * a look in common. What the url availability check answers, and what every event write checks before it writes.
 */
export async function readByAnotherEvent(userId: mongoose.Types.ObjectId, url: UrlReadings, except?: mongoose.Types.ObjectId | null): Promise<boolean> {
  const readings = [{ url_key: url.url_key }, { url_shape: url.url_shape }, { url_looks: mongoose.trusted({ $in: url.url_looks }) }];
  // (user_id, url_key) partial index by its prefix: the account's undeleted events.
  return (await EventModel.exists({ user_id: userId, deleted: false, $or: readings, ...(except ? { _id: mongoose.trusted({ $ne: except }) } : {}) })) !== null;
}

/**
 * Throws EventUrlTaken when the url a write sets reads as another undeleted event's of the account. The key and the
 * shape are also unique indexes, which settle two writes at the same instant (a duplicate key, isEventUrlTaken); the
 * looks are only this read: the embedded server keeps no unique index over an array's values, so two look-alikes
 * written by one account at the same instant can both pass.
 */
async function refuseLookAlikes(userId: mongoose.Types.ObjectId, set: mongoose.AnyKeys<EventDoc>, except?: mongoose.Types.ObjectId): Promise<void> {
  if (set.url_key === undefined) return;
  if (await readByAnotherEvent(userId, set as UrlReadings, except)) throw new EventUrlTaken();
}

/**
 * Inserts a new event, then its form (`form`, given the new event's id: writeForm or copyForm); if the form fails,
 * the event goes too, so nothing half-made is left. Either way the host's stamp changes after it (a public read
 * may have seen the event meanwhile). Throws what isEventUrlTaken tells for a taken url.
 */
export async function insertEvent(document: mongoose.AnyKeys<EventDoc> & { user_id: mongoose.Types.ObjectId }, form: (id: mongoose.Types.ObjectId) => Promise<void>): Promise<mongoose.Types.ObjectId> {
  await refuseLookAlikes(document.user_id, document);
  const [event] = await EventModel.create([document]);
  try {
    await form(event._id);
  } catch (err) {
    // (user_id, event_id, order_number) index.
    await EventQuestionModel.deleteMany({ user_id: document.user_id, event_id: event._id });
    await EventModel.deleteOne({ _id: event._id });
    throw err;
  } finally {
    await accountChanged([document.user_id], "settings");
  }
  return event._id;
}

/** Sets the account's undeleted event's fields; false when there is none. Throws what isEventUrlTaken tells for a taken url. */
export async function updateEvent(userId: mongoose.Types.ObjectId, id: mongoose.Types.ObjectId, set: mongoose.AnyKeys<EventDoc>): Promise<boolean> {
  await refuseLookAlikes(userId, set, id);
  // _id index.
  const res = await EventModel.updateOne({ _id: id, user_id: userId, deleted: false }, { $set: set });
  if (res.matchedCount === 0) return false;
  await accountChanged([userId], "settings");
  return true;
}

/** Deletes the account's undeleted event, softly: bookings and the form stay; `deleted` takes it out of the partial unique index, freeing its url. False when there is none. */
export async function deleteEvent(userId: mongoose.Types.ObjectId, id: mongoose.Types.ObjectId, now: Date): Promise<boolean> {
  // _id index.
  const res = await EventModel.updateOne({ _id: id, user_id: userId, deleted: false }, { $set: { deleted: true, deleted_at: now } });
  if (res.matchedCount === 0) return false;
  await accountChanged([userId], "settings");
  return true;
}

/**
 * Re-keys every event whose url key was made by an older rule (NFKC and lowercase alone before rule 3 of
 * src/domain/urlKey.ts; no shape or looks before rule 4): none, once done (they carry url_rule). Of two undeleted
 * events of one account whose urls the rule now makes one (`bob1` and `bobl`; `aIice` and `alice`), the one
 * re-keyed first keeps its url, the other its old keys (its page may be the first one's), and `warn` names it on
 * every start for an operator to rename. Runs on every start, on
 * every replica, before the port opens; the stamp is the follow-up.
 */
export async function rekeyEventUrls(warn: (message: string) => void): Promise<number> {
  // (url_rule, _id) index: the events not marked with this rule, oldest first.
  const events = await EventModel.find({ url_rule: mongoose.trusted({ $ne: URL_RULE }) }, { url: 1, user_id: 1, deleted: 1 }).sort({ _id: 1 }).lean<Pick<EventDoc, "_id" | "url" | "user_id" | "deleted">[]>();
  let changed = 0;
  for (const e of events) {
    try {
      const keys = eventUrlKeys(e.url);
      if (!e.deleted) await refuseLookAlikes(e.user_id, keys, e._id);
      // _id index; only if the url did not change meanwhile.
      const r = await EventModel.updateOne({ _id: e._id, url: e.url }, { $set: keys });
      if (r.modifiedCount > 0) {
        changed++;
        await accountChanged([e.user_id], "settings");
      }
    } catch (err) {
      if (!isEventUrlTaken(err)) throw err;
      warn(`the url of event ${e._id.toHexString()} reads as another event's url of its account now (look-alike letters); it keeps its old key and should be renamed`);
    }
  }
  return changed;
}

/** Events that wrote to these calendars (gone, or going) go back to no calendar, so none points at a calendar that is gone. */
export async function releaseCalendars(userId: mongoose.Types.ObjectId, calendarIds: readonly string[]): Promise<void> {
  if (calendarIds.length === 0) return;
  // (user_id, created_at) index by its prefix.
  await EventModel.updateMany({ user_id: userId, connected_calendar_id: mongoose.trusted({ $in: calendarIds }) }, { $set: { connected_calendar_id: NO_CALENDAR_SELECTED } });
  await accountChanged([userId], "settings");
}

/** A duplicate key of event_questions' (question_id, event_id) index: that question is on the event already. */
function onlyDuplicateLinks(err: unknown): boolean {
  const e = err as { writeErrors?: unknown[] };
  if (Array.isArray(e.writeErrors) && e.writeErrors.length > 0) return e.writeErrors.every(isDuplicateKeyError);
  return isDuplicateKeyError(err);
}

/**
 * Changes the event's form as planned (planEventQuestions): removals, then changes, then additions. `questionOwner`:
 * the account of the questions added when it is not the event's (a team event's: the caller's own questions).
 */
export async function writeForm(plan: EventQuestionPlan, eventId: mongoose.Types.ObjectId, userId: mongoose.Types.ObjectId, now: Date, questionOwner?: mongoose.Types.ObjectId): Promise<void> {
  // Removals first: a question taken off and added again in one request must not meet its old link in the unique index.
  if (plan.remove.length > 0) {
    // (user_id, event_id, order_number) index.
    await EventQuestionModel.deleteMany({ user_id: userId, event_id: eventId, _id: mongoose.trusted({ $in: plan.remove.map((id) => new mongoose.Types.ObjectId(id)) }) });
  }
  for (const c of plan.change) {
    const set: { required?: boolean; order_number?: number } = {};
    if (c.required !== undefined) set.required = c.required;
    if (c.orderNumber !== undefined) set.order_number = c.orderNumber;
    // _id index; the account and event keep it on the form it was planned from, on the account's shard.
    if (Object.keys(set).length > 0) await EventQuestionModel.updateOne({ _id: new mongoose.Types.ObjectId(c.id), user_id: userId, event_id: eventId }, { $set: set });
  }
  if (plan.add.length === 0) return;
  try {
    await insertLinks(
      eventId,
      userId,
      plan.add.map((a) => ({
        question_id: new mongoose.Types.ObjectId(a.questionId),
        required: a.required,
        order_number: a.orderNumber,
        conditions: [],
        ...(questionOwner !== undefined && !questionOwner.equals(userId) ? { question_owner_id: questionOwner } : {}),
      })),
      now,
      { ordered: false },
    );
  } catch (err) {
    // A concurrent request put the same question on this event first: it is on the form either way.
    if (!onlyDuplicateLinks(err)) throw err;
  }
}

/** Puts another event's form on a new event (a clone), question for question. */
export async function copyForm(links: readonly FormLink[], eventId: mongoose.Types.ObjectId, userId: mongoose.Types.ObjectId, now: Date): Promise<void> {
  if (links.length === 0) return;
  await insertLinks(eventId, userId, links.map((l) => ({ ...l, conditions: l.conditions ?? [] })), now, { ordered: true });
}

async function insertLinks(eventId: mongoose.Types.ObjectId, userId: mongoose.Types.ObjectId, links: readonly FormLink[], now: Date, options: { ordered: boolean }): Promise<void> {
  await EventQuestionModel.insertMany(
    links.map((l) => ({
      event_id: eventId,
      question_id: l.question_id,
      user_id: userId,
      ...(l.question_owner_id ? { question_owner_id: l.question_owner_id } : {}),
      required: l.required,
      order_number: l.order_number,
      conditions: l.conditions,
      created_at: now,
    })),
    options,
  );
}
