// The REST table's JSON write rows for tests driven by the table: each row's body object, and real records to fill its path.
import { bodyObjects } from "../../src/platform/rest/openapi.js";
import { restRoutes } from "../../src/app/routes.js";
import { methodOf, type RpcRoute } from "../../src/platform/rest/table.js";
import { ADMIN_TOKEN, rest, type Json } from "./api.js";
import { book, dayFromToday, newEvent, newHost, utcIso, type Host } from "./bookings.js";

const JSON_ROWS = restRoutes.filter((r): r is RpcRoute => r.kind === "rpc" && r.body !== "none" && r.body !== "multipart");
const hasObject = (r: RpcRoute): boolean => bodyObjects(methodOf(r).input, methodOf(r).input.fields.map((f) => f.name)).length > 0;

/** Rows whose body is a JSON object carrying one required request object (multipart, body-less and optional-body rows are not). */
export const BODY_ROWS = JSON_ROWS.filter((r) => hasObject(r) && !r.bodyOptional);

/** Rows whose JSON body is the request itself, with no object around it (`POST /reminders/<id>/preview`). */
export const FLAT_BODY_ROWS = JSON_ROWS.filter((r) => !hasObject(r));

/** The object a row's body carries, as the OpenAPI document requires it: the one message or list field of the request. */
export function bodyObjectOf(row: RpcRoute): { name: string; list: boolean } {
  const input = methodOf(row).input;
  const objects = bodyObjects(input, input.fields.map((f) => f.name));
  if (objects.length !== 1) throw new Error(`${row.method} ${row.path}: expected one body object in ${input.typeName}, found ${objects.join(", ") || "none"}`);
  return { name: objects[0], list: input.fields.find((f) => f.name === objects[0])?.fieldKind === "list" };
}

/** A host with an event, a question and a booking: real records for each path parameter, so only the body can be the reason for a refusal. */
export interface RowRecords {
  host: Host;
  event: Json;
  question: Json;
  booking: Json;
  schedule: Json;
  /** A single-use link of the event (its `url` ends in the token). */
  link: Json;
  /** A team the host owns, with a round robin event the host hosts. */
  team: Json;
  teamEvent: Json;
}

export async function rowRecords(): Promise<RowRecords> {
  const host = await newHost({ timezone: "UTC" });
  const event = await newEvent(host);
  const question = (await rest("POST", "/questions", { key: host.key, body: { question: { title: "Topic?", question_type: "one_line" } } })).body.data;
  const booking = await book(host, event, { start_time: utcIso(dayFromToday(3), "10:00") });
  const schedule = (await rest("POST", "/schedules", { key: host.key, body: { schedule: { name: "Hours" } } })).body.data;
  const link = (await rest("POST", `/events/${event.id}/single_use_links`, { key: host.key })).body.data;
  const team = (await rest("POST", "/teams", { key: host.key, body: { team: { name: "Rows", url: `rows-${host.user.url}` } } })).body.data;
  const teamEvent = (
    await rest("POST", `/teams/${team.id}/events`, { key: host.key, body: { event: { name: "Rows", url: "rows", scheduling: "round_robin", hosts: [{ user_id: host.user.id }] } } })
  ).body.data;
  return { host, event, question, booking, schedule, link, team, teamEvent };
}

function paramValue(row: RpcRoute, param: string, r: RowRecords): string {
  if (param === "user_url") return r.host.user.url;
  if (param === "event_url") return row.path.startsWith("/public/teams/") ? r.teamEvent.url : r.event.url;
  if (param === "private_key") return r.booking.private_key;
  if (param === "provider") return "google";
  if (param === "token") return String(r.link.url).split("/d/")[1];
  if (param === "link_id") return r.link.id;
  if (param === "event_id" && row.path.startsWith("/teams/")) return r.teamEvent.id;
  if (param === "team_url") return r.team.url;
  if (param === "id") {
    if (row.path.startsWith("/events/")) return r.event.id;
    if (row.path.startsWith("/questions/")) return r.question.id;
    if (row.path.startsWith("/bookings/")) return r.booking.id;
    if (row.path.startsWith("/schedules/")) return r.schedule.id;
    if (row.path.startsWith("/teams/")) return r.team.id;
    // The shared server refuses every webhook URL this sandbox can resolve (no OUTBOUND_ALLOW_PRIVATE), so no
    // webhook can be made here; UpdateWebhook checks its object before it looks the webhook up (so a real id is
    // not needed to show the 400).
    if (row.path.startsWith("/webhooks/")) return "0123456789abcdef01234567";
    // Likewise a calendar needs a CalDAV server; UpdateCalendar checks its object first too. A reminder's rows check
    // their body before they look the reminder up.
    if (row.path.startsWith("/calendars/") || row.path.startsWith("/reminders/")) return "0123456789abcdef01234567";
  }
  throw new Error(`${row.method} ${row.path}: no test value for :${param}; add one here`);
}

/** The row's path parameters filled with the records' values. */
export function pathParams(row: RpcRoute, r: RowRecords): Record<string, string> {
  return Object.fromEntries([...row.path.matchAll(/:(\w+)/g)].map(([, p]) => [p, paramValue(row, p, r)]));
}

/** The row's path below /api/v1 with its parameters filled. */
export function filledPath(row: RpcRoute, r: RowRecords): string {
  const params = pathParams(row, r);
  return row.path.replace(/:(\w+)/g, (_m, p: string) => encodeURIComponent(params[p]));
}

/** Every credential a row may need: the host's API key and the admin token. */
export const rowAuth = (r: RowRecords): Record<string, string> => ({ "x-api-key": r.host.key, "x-admin-token": ADMIN_TOKEN });
