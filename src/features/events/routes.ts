// REST rows of events (docs/spec/scheduling-api.md Events endpoints) onto EventService, and of booking-form questions (docs/spec/extensions.md Questions) onto QuestionService.
import { EventService } from "../../../gen/scheduling/v1/event_pb.js";
import { QuestionService } from "../../../gen/scheduling/v1/question_pb.js";
import { fromPath, responseField as field, type RestRoute } from "../../platform/rest/table.js";

const byId = fromPath({ id: "id" });
const byIdWithEvent = fromPath({ id: "id" }, "event");

export const eventRoutes: RestRoute[] = [
  { kind: "rpc", method: "GET", path: "/events", service: EventService, rpc: "listEvents", body: "none", data: field("events"), message: "events found", summary: "List events" },
  {
    kind: "rpc", method: "POST", path: "/events/validate_url_availability", service: EventService, rpc: "checkEventUrlAvailability", required: ["url"],
    message: "url is available to use", summary: "Check an event URL",
  },
  { kind: "rpc", method: "GET", path: "/events/:id", service: EventService, rpc: "getEvent", body: "none", request: byId, data: field("event"), message: "event found", summary: "Get an event" },
  { kind: "rpc", method: "POST", path: "/events", service: EventService, rpc: "createEvent", status: 201, required: ["name", "url"], data: field("event"), message: "event created", summary: "Create an event" },
  {
    kind: "rpc", method: "PATCH", path: "/events/:id", service: EventService, rpc: "updateEvent", request: byIdWithEvent,
    data: field("event"), message: "event updated", summary: "Update an event, including its form questions",
  },
  {
    kind: "rpc", method: "POST", path: "/events/:id/clone", service: EventService, rpc: "cloneEvent", body: "none", request: byId, status: 201,
    data: field("event"), message: "event cloned", summary: "Duplicate an event",
  },
  { kind: "rpc", method: "DELETE", path: "/events/:id", service: EventService, rpc: "deleteEvent", body: "none", request: byId, message: "event deleted", summary: "Delete an event" },
  {
    kind: "rpc", method: "POST", path: "/events/:id/single_use_links", service: EventService, rpc: "createSingleUseLink", request: fromPath({ event_id: "id" }, "link"), bodyOptional: true, status: 201,
    data: field("link"), message: "link created", summary: "Make a single-use link of the event (its url books the event once)",
  },
  {
    kind: "rpc", method: "GET", path: "/events/:id/single_use_links", service: EventService, rpc: "listSingleUseLinks", body: "none", request: fromPath({ event_id: "id" }),
    data: field("links"), message: "links found", summary: "List the event's single-use links",
  },
  {
    kind: "rpc", method: "DELETE", path: "/events/:id/single_use_links/:link_id", service: EventService, rpc: "revokeSingleUseLink", body: "none",
    request: fromPath({ event_id: "id", id: "link_id" }), data: field("link"), message: "link revoked", summary: "Revoke a single-use link",
  },
];

export const questionRoutes: RestRoute[] = [
  { kind: "rpc", method: "GET", path: "/questions", service: QuestionService, rpc: "listQuestions", body: "none", data: field("questions"), message: "questions found", summary: "List questions" },
  { kind: "rpc", method: "POST", path: "/questions", service: QuestionService, rpc: "createQuestion", status: 201, required: ["title", "question_type"], data: field("question"), message: "question created", summary: "Create a question" },
  {
    kind: "rpc", method: "PATCH", path: "/questions/:id", service: QuestionService, rpc: "updateQuestion",
    request: fromPath({ id: "id" }, "question"),
    data: field("question"), message: "question updated", summary: "Update a question",
  },
];
