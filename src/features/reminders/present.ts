// How a reminder reads over the API (and in booking.reminder webhook messages): its fields, with the localized defaults where the host set none.
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import { ReminderSchema } from "../../../gen/scheduling/v1/reminder_pb.js";
import type { ReminderDoc } from "../../db/models/reminder.js";
import { responseToJson } from "../../platform/rest/json.js";
import { defaultReminderTexts } from "../email/index.js";

export type ReminderMessage = MessageInitShape<typeof ReminderSchema>;

/** `locale`: the host's, whose words the defaults are in. */
export function presentReminder(r: ReminderDoc, locale: string): ReminderMessage {
  const defaults = defaultReminderTexts(locale, r.timing);
  return {
    id: r._id.toHexString(),
    eventId: r.event_id.toHexString(),
    timing: r.timing,
    offsetMinutes: r.offset_minutes,
    recipients: r.recipients,
    channel: r.channel,
    subject: r.subject ?? defaults.subject,
    body: r.body ?? defaults.body,
    active: r.active,
    createdAt: r.created_at.toISOString(),
  };
}

/** The reminder as REST JSON shows it (snake_case), for `data.reminder` of a booking.reminder message. */
export function reminderJson(r: ReminderDoc, locale: string): JsonObject {
  return responseToJson(ReminderSchema, presentReminder(r, locale));
}
