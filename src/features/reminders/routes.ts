// REST rows of reminders (shared/spec reminders.md) onto ReminderService.
import { ReminderService } from "../../../gen/scheduling/v1/reminder_pb.js";
import { fromPath, responseField as field, type RestRoute } from "../../platform/rest/table.js";

const byId = fromPath({ id: "id" });

export const reminderRoutes: RestRoute[] = [
  {
    kind: "rpc", method: "POST", path: "/events/:id/reminders", service: ReminderService, rpc: "createReminder", request: fromPath({ event_id: "id" }, "reminder"),
    status: 201, required: ["timing", "offset_minutes"], data: field("reminder"), message: "reminder created", summary: "Create a reminder or follow-up of an event (up to 10)",
  },
  {
    kind: "rpc", method: "GET", path: "/events/:id/reminders", service: ReminderService, rpc: "listReminders", body: "none", request: fromPath({ event_id: "id" }),
    data: field("reminders"), message: "reminders found", summary: "List an event's reminders, oldest first",
  },
  { kind: "rpc", method: "GET", path: "/reminders/:id", service: ReminderService, rpc: "getReminder", body: "none", request: byId, data: field("reminder"), message: "reminder found", summary: "Get a reminder" },
  {
    kind: "rpc", method: "PATCH", path: "/reminders/:id", service: ReminderService, rpc: "updateReminder", request: fromPath({ id: "id" }, "reminder"),
    data: field("reminder"), message: "reminder updated", summary: "Change a reminder; its pending deliveries are planned again",
  },
  { kind: "rpc", method: "DELETE", path: "/reminders/:id", service: ReminderService, rpc: "deleteReminder", body: "none", request: byId, message: "reminder deleted", summary: "Delete a reminder; its pending deliveries are canceled" },
  {
    kind: "rpc", method: "POST", path: "/reminders/:id/preview", service: ReminderService, rpc: "previewReminder",
    request: ({ params, body }) => ({ ...body, id: params.id }),
    data: field("preview"), message: "reminder preview", summary: "The subject, text and HTML the reminder would send for a booking (or a sample one)",
  },
];
