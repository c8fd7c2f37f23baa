// CalendarService: connecting calendar accounts (through the providers' registry), their calendars, and what events may point at.
import type { ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import { CalendarService } from "../../../gen/scheduling/v1/calendar_pb.js";
import { CalendarConnectionModel, CalendarModel, type CalendarConnectionDoc, type CalendarDoc } from "../../db/models/calendar.js";
import { invalid, notFound, notInList, REASONS, refusal, requireFields } from "../../domain/errors.js";
import { sealWithKeyId } from "../../domain/secretBox.js";
import { calendarProvider, connectableCalendarProviderNames, ProviderError, OutboundError, withDeadline } from "../../providers/index.js";
import type { CalendarReader } from "./busy.js";
import { presentCalendar, presentConnection } from "./present.js";
import { revokeUnlessShared } from "./oauth.js";
import { calendarDoc, deleteConnection, insertConnection, setCheckForConflicts } from "./writes.js";
import type { Access } from "../accounts/index.js";
import { objectIdOf } from "../../db/ids.js";

/** Discovery takes several exchanges (well-known, principal, home, calendars), so connecting gets more time than one read. */
const CONNECT_DEADLINE_FACTOR = 4;

/** The 422 a failed connect answers, saying why in the host's terms. */
function connectRefusal(err: unknown): never {
  if (err instanceof OutboundError) throw refusal(REASONS.connectionFailed, `connection could not be made: ${err.message}`);
  if (err instanceof ProviderError) {
    switch (err.kind) {
      case "refused":
        throw refusal(REASONS.connectionFailed, "connection was refused: the server turned down the user name or password");
      case "blocked":
        throw refusal(REASONS.connectionFailed, `connection could not be made: ${err.message}`);
      case "unreachable":
        throw refusal(REASONS.connectionFailed, `server is unreachable: ${err.message}`);
      case "not_found":
        throw refusal(REASONS.connectionFailed, `no calendar found: ${err.message}`);
      case "bad_response":
        throw refusal(REASONS.connectionFailed, `connection could not be made: ${err.message}`);
    }
  }
  throw err;
}

/** Longest values accepted: far beyond any real server address, user name or app password. */
const INPUT_MAX = { server_url: 2000, url: 2000, username: 320, password: 1000 } as const;

function checkLength(field: keyof typeof INPUT_MAX, value: string | undefined): void {
  if (value !== undefined && value.length > INPUT_MAX[field]) throw invalid(`connection.${field} is too long (maximum is ${INPUT_MAX[field]} characters)`);
}

/** The caller's connection with this id, or NOT_FOUND (another account's is as unknown as a missing one). */
async function ownConnection(userId: mongoose.Types.ObjectId, id: string): Promise<CalendarConnectionDoc> {
  const _id = objectIdOf(id);
  // _id index, owner checked.
  const found = _id === null ? null : await CalendarConnectionModel.findOne({ _id, user_id: userId }).lean<CalendarConnectionDoc>();
  if (!found) throw notFound("calendar connection not found");
  return found;
}

/** Which of `ids` are the account's calendars that can be written to (an event's connected_calendar_id). */
export async function writableCalendarIds(userId: mongoose.Types.ObjectId, ids: readonly string[]): Promise<Set<string>> {
  const oids = ids.map(objectIdOf).filter((id): id is mongoose.Types.ObjectId => id !== null);
  if (oids.length === 0) return new Set();
  // _id index, owner checked.
  const found = await CalendarModel.find({ _id: mongoose.trusted({ $in: oids }), user_id: userId, can_write: true }, { _id: 1 }).lean();
  return new Set(found.map((c) => c._id.toHexString()));
}

/** The e-mail of each of the account's calendars among `ids` (connected_calendar_email). */
export async function calendarEmails(userId: mongoose.Types.ObjectId, ids: readonly string[]): Promise<Map<string, string | null>> {
  const oids = [...new Set(ids)].map(objectIdOf).filter((id): id is mongoose.Types.ObjectId => id !== null);
  if (oids.length === 0) return new Map();
  // _id index, owner checked.
  const found = await CalendarModel.find({ _id: mongoose.trusted({ $in: oids }), user_id: userId }, { email: 1 }).lean();
  return new Map(found.map((c) => [c._id.toHexString(), c.email ?? null]));
}

export function createCalendarService(access: Access, reader: CalendarReader): ServiceImpl<typeof CalendarService> {
  return {
    async createCalendarConnection(req, ctx) {
      const host = await access.authenticate(ctx);
      const input = req.connection;
      requireFields("connection", { provider: input?.provider });
      const provider = input?.provider ?? "";
      const connector = calendarProvider(provider);
      // Providers that connect through OAuth have no `connect` here: they are not a value of this field.
      if (!connector?.connect) notInList("connection.provider", connectableCalendarProviderNames(), provider);
      for (const field of ["server_url", "url", "username", "password"] as const) {
        checkLength(field, { server_url: input?.serverUrl, url: input?.url, username: input?.username, password: input?.password }[field]);
      }
      const settings = reader.settings;
      // Discovery takes several exchanges, each of which may take the whole deadline (servers delay the answer to a wrong password on purpose).
      const deadline = settings.timeoutMs * CONNECT_DEADLINE_FACTOR;
      const fields = { serverUrl: input?.serverUrl, username: input?.username, password: input?.password, url: input?.url, owner: host._id.toHexString() };
      const { account, credentials, calendars: found } = await withDeadline(deadline, (signal) => connector.connect!({ input: fields, settings: { ...settings, timeoutMs: deadline }, now: settings.clock.now(), signal })).catch(connectRefusal);
      const now = settings.clock.now();
      const connection = {
        _id: new mongoose.Types.ObjectId(),
        user_id: host._id,
        provider,
        account,
        credentials_sealed: sealWithKeyId(JSON.stringify(credentials), settings.secrets),
        status: "ok",
        last_error: null,
        last_synced_at: now,
        created_at: now,
      };
      const calendars = found.map((c) => calendarDoc(host._id, connection._id, provider, c, now));
      await insertConnection(connection, calendars);
      return { connection: presentConnection(connection as CalendarConnectionDoc, calendars as CalendarDoc[]) };
    },

    async listCalendarConnections(_req, ctx) {
      const host = await access.authenticate(ctx);
      // (user_id, created_at desc) index.
      const connections = await CalendarConnectionModel.find({ user_id: host._id }).sort({ created_at: -1, _id: -1 }).lean<CalendarConnectionDoc[]>();
      // (user_id, check_for_conflicts) index by its user_id prefix.
      const calendars = connections.length === 0 ? [] : await CalendarModel.find({ user_id: host._id }).sort({ created_at: 1, _id: 1 }).lean<CalendarDoc[]>();
      return { connections: connections.map((c) => presentConnection(c, calendars)) };
    },

    async deleteCalendarConnection(req, ctx) {
      const host = await access.authenticate(ctx);
      const connection = await ownConnection(host._id, req.id);
      // (user_id, connection_id) index.
      const calendars = await CalendarModel.find({ user_id: host._id, connection_id: connection._id }, { _id: 1 }).lean();
      const ids = calendars.map((c) => c._id.toHexString());
      // OAuth: the grant is revoked before its tokens are forgotten (unless another account of ours holds it).
      await revokeUnlessShared(reader, connection);
      await deleteConnection(host._id, connection._id, ids);
      reader.forget(ids);
      return {};
    },

    async listCalendars(_req, ctx) {
      const host = await access.authenticate(ctx);
      // (user_id, check_for_conflicts) index by its user_id prefix.
      const calendars = await CalendarModel.find({ user_id: host._id }).sort({ created_at: 1, _id: 1 }).lean<CalendarDoc[]>();
      return { calendars: calendars.map(presentCalendar) };
    },

    async updateCalendar(req, ctx) {
      const host = await access.authenticate(ctx);
      requireFields("calendar", { check_for_conflicts: req.calendar?.checkForConflicts });
      const _id = objectIdOf(req.id);
      // _id index, owner checked.
      const calendar = _id === null ? null : await CalendarModel.findOne({ _id, user_id: host._id }).lean<CalendarDoc>();
      if (!calendar) throw notFound("calendar not found");
      const checkForConflicts = req.calendar?.checkForConflicts ?? calendar.check_for_conflicts;
      await setCheckForConflicts(host._id, calendar._id, checkForConflicts);
      return { calendar: presentCalendar({ ...calendar, check_for_conflicts: checkForConflicts }) };
    },
  };
}
