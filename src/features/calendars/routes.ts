// REST rows of calendar connections and calendars (docs/spec/integrations.md "Calendars") onto CalendarService.
import { CalendarService } from "../../../gen/scheduling/v1/calendar_pb.js";
import { fromPath, responseField as field, type RestRoute } from "../../platform/rest/table.js";

export const calendarRoutes: RestRoute[] = [
  {
    kind: "rpc", method: "POST", path: "/calendar_connections", service: CalendarService, rpc: "createCalendarConnection", status: 201, required: ["provider"],
    data: field("connection"), message: "calendar connected", summary: "Connect a CalDAV account or an iCalendar feed",
  },
  {
    kind: "rpc", method: "GET", path: "/calendar_connections", service: CalendarService, rpc: "listCalendarConnections", body: "none",
    data: field("connections"), message: "calendar connections found", summary: "List calendar connections, newest first",
  },
  {
    kind: "rpc", method: "DELETE", path: "/calendar_connections/:id", service: CalendarService, rpc: "deleteCalendarConnection", body: "none",
    request: fromPath({ id: "id" }), message: "calendar disconnected", summary: "Disconnect a calendar account or feed",
  },
  {
    kind: "rpc", method: "GET", path: "/calendars", service: CalendarService, rpc: "listCalendars", body: "none",
    data: field("calendars"), message: "calendars found", summary: "List the calendars of every connection",
  },
  {
    kind: "rpc", method: "PATCH", path: "/calendars/:id", service: CalendarService, rpc: "updateCalendar", request: fromPath({ id: "id" }, "calendar"), required: ["check_for_conflicts"],
    data: field("calendar"), message: "calendar updated", summary: "Switch conflict checking of a calendar",
  },
];
