// Every model of the service, so start-up can build all indexes before serving.
import { AccountKeyModel } from "./accountKey.js";
import { AccountVersionModel } from "./accountVersion.js";
import { BookingCellModel, BookingModel, BookingVersionModel } from "./booking.js";
import { BookingChangeModel } from "./bookingChange.js";
import { BookingKeyModel } from "./bookingKey.js";
import { CalendarConnectionModel, CalendarModel } from "./calendar.js";
import { EffectAttemptModel, EffectModel } from "./effect.js";
import { EventModel } from "./event.js";
import { IdempotencyKeyModel } from "./idempotencyKey.js";
import { IntegrationModel, MeetingAccountModel } from "./integration.js";
import { OAuthStateModel } from "./oauthState.js";
import { PictureModel } from "./picture.js";
import { EventQuestionModel, QuestionModel } from "./question.js";
import { RateLimitModel } from "./rateLimit.js";
import { ReminderDeliveryModel, ReminderModel } from "./reminder.js";
import { ScheduleModel } from "./schedule.js";
import { SingleUseLinkModel } from "./singleUseLink.js";
import { TeamKeyModel, TeamModel } from "./team.js";
import { UserModel } from "./user.js";
import { WebhookModel } from "./webhook.js";

export const allModels: ReadonlyArray<{ createIndexes(): Promise<unknown>; collection: { collectionName: string } }> = [UserModel, AccountKeyModel, PictureModel, EventModel, QuestionModel, EventQuestionModel, BookingModel, BookingKeyModel, BookingCellModel, BookingVersionModel, RateLimitModel, CalendarConnectionModel, CalendarModel, IntegrationModel, MeetingAccountModel, OAuthStateModel,
  EffectModel, EffectAttemptModel, WebhookModel, IdempotencyKeyModel, AccountVersionModel, ScheduleModel, ReminderModel, ReminderDeliveryModel, BookingChangeModel, TeamModel, TeamKeyModel,
  SingleUseLinkModel];

/**
 * Indexes earlier versions made that others replace (unique indexes that did not start with the shard key, and the
 * indexes of queries that now carry the account: docs/operations.md "Sharding"): dropped at start once their
 * replacements are built.
 */
export const replacedIndexes: ReadonlyArray<{ collection: string; name: string }> = [
  { collection: "users", name: "email_1" },
  { collection: "users", name: "url_key_1" },
  { collection: "users", name: "url_shape_1" },
  { collection: "users", name: "api_key_digest_1" },
  { collection: "bookings", name: "private_key_1" },
  { collection: "event_questions", name: "question_id_1_event_id_1" },
  { collection: "reminders", name: "event_id_1_place_1" },
  { collection: "reminder_deliveries", name: "booking_id_1_reminder_id_1" },
  { collection: "bookings", name: "event_id_1_start_time_1" },
  { collection: "bookings", name: "event_id_1_updated_at_1" },
  { collection: "event_questions", name: "event_id_1_order_number_1" },
  { collection: "event_questions", name: "question_id_1" },
  { collection: "reminders", name: "event_id_1_deleted_1_created_at_1" },
  { collection: "reminder_deliveries", name: "booking_id_1" },
  { collection: "reminder_deliveries", name: "reminder_id_1_status_1" },
  { collection: "calendars", name: "connection_id_1" },
  { collection: "effect_attempts", name: "webhook_id_1_attempted_at_-1" },
];
