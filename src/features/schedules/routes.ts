// REST rows of schedules (docs/spec/extensions.md "Event rules") onto ScheduleService.
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { ScheduleService } from "../../../gen/scheduling/v1/schedule_pb.js";
import { fromPath, responseField as field, type RestInput, type RestRoute } from "../../platform/rest/table.js";

const byId = fromPath({ id: "id" });

/**
 * A PATCH changes the fields its body sends (extensions.md: `"date_overrides": []` clears them), which the RPC
 * learns from its update_mask (AIP-134): the names sent, in the mask's JSON form (lowerCamelCase, comma-separated).
 */
function updateRequest({ params, body }: RestInput): JsonValue {
  const schedule = body.schedule;
  const request: JsonObject = { id: params.id };
  if (schedule === undefined) return request;
  request.schedule = schedule;
  if (typeof schedule === "object" && schedule !== null && !Array.isArray(schedule)) {
    request.update_mask = Object.keys(schedule)
      .filter((k) => k === "name" || k === "weekly_hours" || k === "date_overrides")
      .map((k) => k.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()))
      .join(",");
  }
  return request;
}

export const scheduleRoutes: RestRoute[] = [
  { kind: "rpc", method: "POST", path: "/schedules", service: ScheduleService, rpc: "createSchedule", status: 201, required: ["name"], data: field("schedule"), message: "schedule created", summary: "Create a schedule (at most 20 per account)" },
  { kind: "rpc", method: "GET", path: "/schedules", service: ScheduleService, rpc: "listSchedules", body: "none", data: field("schedules"), message: "schedules found", summary: "List schedules, newest first" },
  { kind: "rpc", method: "GET", path: "/schedules/:id", service: ScheduleService, rpc: "getSchedule", body: "none", request: byId, data: field("schedule"), message: "schedule found", summary: "Get a schedule" },
  {
    kind: "rpc", method: "PATCH", path: "/schedules/:id", service: ScheduleService, rpc: "updateSchedule", request: updateRequest,
    data: field("schedule"), message: "schedule updated", summary: "Change a schedule's name, weekly hours or date overrides (only the fields sent)",
  },
  {
    kind: "rpc", method: "DELETE", path: "/schedules/:id", service: ScheduleService, rpc: "deleteSchedule", body: "none", request: byId,
    message: "schedule deleted", summary: "Delete a schedule that no event uses",
  },
];
