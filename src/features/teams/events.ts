// The team's events (teams.md): the event object of personal events plus scheduling, hosts and reschedule_with_same_host, owned by the team (its user_id is the team's id) and changed by its owner or admins.
import type { ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import type { TeamService } from "../../../gen/scheduling/v1/team_pb.js";
import type { EventInput } from "../../../gen/scheduling/v1/event_pb.js";
import { objectIdOf } from "../../db/ids.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import type { TeamDoc } from "../../db/models/team.js";
import type { UserDoc } from "../../db/models/user.js";
import { invalid, missingParams, notFound, requireObject } from "../../domain/errors.js";
import { checkEventInput } from "../../domain/event.js";
import { checkHosts, checkScheduling } from "../../domain/team.js";
import type { Access } from "../accounts/index.js";
import { checkedRules, deleteEvent, eventInputOf, insertEvent, isEventUrlTaken, newEventDocument, planForm, presentEvents, updateEvent, writeForm, type EventPorts } from "../events/index.js";
import { acceptedMemberIds, teamOfRole } from "./members.js";

export type TeamEventPorts = EventPorts;

const URL_TAKEN = "url has already been taken";
const EVENT_NOT_FOUND = "event not found";

/** The team fields of an event input, checked against the team's accepted members. */
function teamFields(team: TeamDoc, input: EventInput, creating: boolean): Partial<Pick<EventDoc, "scheduling" | "hosts" | "reschedule_with_same_host">> {
  const out: Partial<Pick<EventDoc, "scheduling" | "hosts" | "reschedule_with_same_host">> = {};
  if (input.scheduling !== undefined) out.scheduling = checkScheduling(input.scheduling);
  if (input.hosts.length > 0 || creating) {
    const hosts = checkHosts(
      input.hosts.map((h) => ({ userId: h.userId, priority: h.priority, weight: h.weight })),
      acceptedMemberIds(team),
    );
    out.hosts = hosts.map((h) => ({ user_id: new mongoose.Types.ObjectId(h.userId), priority: h.priority, weight: h.weight })) as EventDoc["hosts"];
  }
  if (input.rescheduleWithSameHost !== undefined) out.reschedule_with_same_host = input.rescheduleWithSameHost;
  return out;
}

/** The caller's view: dates in their own formats, in the team's zone. */
function viewerOf(caller: UserDoc, team: TeamDoc): UserDoc {
  return { ...caller, _id: team._id, timezone: team.timezone };
}

const teamPage = (team: TeamDoc) => `/team/${encodeURIComponent(team.url)}`;

async function teamEvent(team: TeamDoc, id: string): Promise<EventDoc> {
  const _id = objectIdOf(id);
  // _id index; the team's own and undeleted only.
  const event = _id === null ? null : await EventModel.findOne({ _id, user_id: team._id, deleted: false }).lean<EventDoc>();
  if (!event) throw notFound(EVENT_NOT_FOUND);
  return event;
}

/** Soft-deletes every event of the team (the team is going; its bookings stay the hosts'). */
export async function deleteTeamEvents(teamId: mongoose.Types.ObjectId, now: Date): Promise<void> {
  // (user_id, created_at) index.
  const events = await EventModel.find({ user_id: teamId, deleted: false }, { _id: 1 }).lean();
  for (const e of events) await deleteEvent(teamId, e._id, now);
}

type TeamEventMethods = Pick<ServiceImpl<typeof TeamService>, "createTeamEvent" | "listTeamEvents" | "getTeamEvent" | "updateTeamEvent" | "deleteTeamEvent">;

export function createTeamEventMethods(access: Access, ports: TeamEventPorts): TeamEventMethods {
  const present = async (caller: UserDoc, team: TeamDoc, events: EventDoc[]) => presentEvents(ports, events, viewerOf(caller, team), access.clock.now(), teamPage(team));
  return {
    async createTeamEvent(req, ctx) {
      const caller = await access.authenticate(ctx);
      const input = req.event;
      const missing = [["name", input?.name], ["url", input?.url], ["scheduling", input?.scheduling]].filter(([, v]) => v === undefined || (v as string).trim() === "").map(([k]) => k as string);
      if ((input?.hosts.length ?? 0) === 0) missing.push("hosts");
      if (missing.length > 0) throw missingParams({ event: missing });
      const { team } = await teamOfRole(caller, req.teamId, ["owner", "admin"]);
      const fields = { ...checkEventInput(eventInputOf(input)), ...(await checkedRules(team, input)), ...teamFields(team, input as EventInput, true) };
      // The form holds the caller's own questions, kept under the team's id as the event (writeForm's questionOwner).
      const form = await planForm(caller, null, input?.eventQuestionsAttributes ?? []);
      const now = access.clock.now();
      let id: mongoose.Types.ObjectId;
      try {
        id = await insertEvent({ ...newEventDocument(team, { ...fields, name: fields.name ?? "", url: fields.url ?? "", url_key: fields.url_key ?? "" }, now), team_id: team._id }, (eventId) =>
          writeForm(form, eventId, team._id, now, caller._id),
        );
      } catch (err) {
        if (isEventUrlTaken(err)) throw invalid(URL_TAKEN);
        throw err;
      }
      return { event: (await present(caller, team, [await teamEvent(team, id.toHexString())]))[0] };
    },

    // Reads too are the owner's and admins' (teams.md "Team events (API key; team owner or admin)"): a plain member,
    // a host of the event included, gets 403; a host sees the bookings it holds on its own desk.
    async listTeamEvents(req, ctx) {
      const caller = await access.authenticate(ctx);
      const { team } = await teamOfRole(caller, req.teamId, ["owner", "admin"]);
      // (user_id, created_at desc) index.
      const events = await EventModel.find({ user_id: team._id, deleted: false }).sort({ created_at: -1, _id: -1 }).lean<EventDoc[]>();
      return { events: await present(caller, team, events) };
    },

    async getTeamEvent(req, ctx) {
      const caller = await access.authenticate(ctx);
      const { team } = await teamOfRole(caller, req.teamId, ["owner", "admin"]);
      return { event: (await present(caller, team, [await teamEvent(team, req.id)]))[0] };
    },

    async updateTeamEvent(req, ctx) {
      const caller = await access.authenticate(ctx);
      requireObject("event", req.event);
      const { team } = await teamOfRole(caller, req.teamId, ["owner", "admin"]);
      const event = await teamEvent(team, req.id);
      const patch = { ...checkEventInput(eventInputOf(req.event)), ...(await checkedRules(team, req.event)), ...teamFields(team, req.event, false) };
      const form = await planForm(caller, event, req.event.eventQuestionsAttributes);
      if (Object.keys(patch).length > 0) {
        try {
          if (!(await updateEvent(team._id, event._id, patch))) throw notFound(EVENT_NOT_FOUND);
        } catch (err) {
          if (isEventUrlTaken(err)) throw invalid(URL_TAKEN);
          throw err;
        }
      }
      await writeForm(form, event._id, team._id, access.clock.now(), caller._id);
      return { event: (await present(caller, team, [await teamEvent(team, req.id)]))[0] };
    },

    async deleteTeamEvent(req, ctx) {
      const caller = await access.authenticate(ctx);
      const { team } = await teamOfRole(caller, req.teamId, ["owner", "admin"]);
      const event = await teamEvent(team, req.id);
      if (!(await deleteEvent(team._id, event._id, access.clock.now()))) throw notFound(EVENT_NOT_FOUND);
      return {};
    },
  };
}
