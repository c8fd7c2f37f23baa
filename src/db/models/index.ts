// Every model of the service, so start-up can build all indexes before serving.
import { AccountVersionModel } from "./accountVersion.js";
import { BookingCellModel, BookingModel, BookingVersionModel } from "./booking.js";
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
import { UserModel } from "./user.js";
import { WebhookModel } from "./webhook.js";

export const allModels: ReadonlyArray<{ createIndexes(): Promise<unknown>; collection: { collectionName: string } }> = [UserModel, PictureModel, EventModel, QuestionModel, EventQuestionModel, BookingModel, BookingCellModel, BookingVersionModel, RateLimitModel, CalendarConnectionModel, CalendarModel, IntegrationModel, MeetingAccountModel, OAuthStateModel,
  EffectModel, EffectAttemptModel, WebhookModel, IdempotencyKeyModel, AccountVersionModel, ScheduleModel, ReminderModel, ReminderDeliveryModel];
