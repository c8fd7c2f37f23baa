// A calendar connection and its calendars as the API shows them (GET /calendar_connections, /calendars, and the calendar.connection_changed webhook).
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import mongoose from "mongoose";
import { CalendarConnectionSchema, type CalendarSchema } from "../../../gen/scheduling/v1/calendar_pb.js";
import { CalendarConnectionModel, CalendarModel, type CalendarConnectionDoc, type CalendarDoc } from "../../db/models/calendar.js";
import { responseToJson } from "../../platform/rest/json.js";

type CalendarMessage = MessageInitShape<typeof CalendarSchema>;
type ConnectionMessage = MessageInitShape<typeof CalendarConnectionSchema>;

export function presentCalendar(c: CalendarDoc): CalendarMessage {
  return {
    id: c._id.toHexString(),
    connectionId: c.connection_id.toHexString(),
    provider: c.provider,
    name: c.name,
    email: c.email ?? undefined,
    canWrite: c.can_write,
    checkForConflicts: c.check_for_conflicts,
  };
}

/** The warnings of a connection's calendars, each led by the calendar's name when it has several. */
function connectionWarnings(own: readonly CalendarDoc[]): string[] {
  return own.flatMap((k) => (k.warnings ?? []).map((w) => (own.length > 1 ? `${k.name}: ${w}` : w)));
}

export function presentConnection(c: CalendarConnectionDoc, calendars: readonly CalendarDoc[]): ConnectionMessage {
  const own = calendars.filter((k) => k.connection_id.equals(c._id));
  return {
    id: c._id.toHexString(),
    provider: c.provider,
    account: c.account,
    status: c.status,
    lastError: c.last_error ?? undefined,
    lastSyncedAt: c.last_synced_at?.toISOString(),
    calendars: own.map(presentCalendar),
    warnings: connectionWarnings(own),
  };
}

/** The connection as GET /api/v1/calendar_connections shows it (JSON), or undefined when it is gone. */
export async function connectionJson(connectionId: mongoose.Types.ObjectId): Promise<JsonObject | undefined> {
  // _id index.
  const connection = await CalendarConnectionModel.findById(connectionId).lean<CalendarConnectionDoc>();
  if (!connection) return undefined;
  // (user_id, connection_id) index: the connection's few calendars, on its account's shard, put in the listing's order here.
  const calendars = await CalendarModel.find({ user_id: connection.user_id, connection_id: connectionId }).lean<CalendarDoc[]>();
  calendars.sort((a, b) => a.created_at.getTime() - b.created_at.getTime());
  return responseToJson(CalendarConnectionSchema, presentConnection(connection, calendars));
}
