// IntegrationService: the host's video-meeting provider (through the providers' registry), which makes the conference location usable.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import { IntegrationService, type IntegrationSchema } from "../../../gen/scheduling/v1/integration_pb.js";
import { EventModel } from "../../db/models/event.js";
import { IntegrationModel, type IntegrationDoc } from "../../db/models/integration.js";
import { invalid, notInList, requireFields } from "../../domain/errors.js";
import { meetingProvider, meetingProviderNames } from "../../providers/index.js";
import type { Access } from "../accounts/index.js";

const CONFERENCE = "conference";

function present(i: IntegrationDoc): MessageInitShape<typeof IntegrationSchema> {
  return { name: i.name, provider: i.provider, baseUrl: i.base_url, connectedAt: i.connected_at.toISOString() };
}

/** Whether the host has a video-meeting provider connected (the conference location needs one). */
export async function conferenceConnected(userId: mongoose.Types.ObjectId): Promise<boolean> {
  // (user_id, name) unique index.
  return (await IntegrationModel.exists({ user_id: userId, name: CONFERENCE })) !== null;
}

/** A new meeting link for a booking of an event at the conference location; null when no provider is connected. */
export async function newMeetingUrl(userId: mongoose.Types.ObjectId): Promise<string | null> {
  // (user_id, name) unique index.
  const conference = await IntegrationModel.findOne({ user_id: userId, name: CONFERENCE }, { provider: 1, base_url: 1 }).lean();
  const provider = conference === null ? undefined : meetingProvider(conference.provider);
  return conference === null || provider === undefined ? null : (await provider.createMeeting({ baseUrl: conference.base_url })).url;
}

export function createIntegrationService(access: Access): ServiceImpl<typeof IntegrationService> {
  return {
    async listIntegrations(_req, ctx) {
      const host = await access.authenticate(ctx);
      // (user_id, name) unique index.
      const found = await IntegrationModel.find({ user_id: host._id }).sort({ name: 1 }).lean<IntegrationDoc[]>();
      return { integrations: found.map(present) };
    },

    async connectConference(req, ctx) {
      const host = await access.authenticate(ctx);
      const input = req.integration;
      requireFields("integration", { provider: input?.provider });
      const provider = input?.provider ?? "";
      const meetings = meetingProvider(provider);
      if (!meetings) notInList("integration.provider", meetingProviderNames());
      const { baseUrl } = meetings.configure({ baseUrl: input?.baseUrl });
      // Connecting again changes the server (for later bookings; links already made stay as they were).
      const saved = await IntegrationModel.findOneAndUpdate(
        { user_id: host._id, name: CONFERENCE },
        { $set: { provider, base_url: baseUrl }, $setOnInsert: { connected_at: new Date() } },
        { upsert: true, new: true },
      ).lean<IntegrationDoc>();
      return { integration: present(saved as IntegrationDoc) };
    },

    async disconnectConference(_req, ctx) {
      const host = await access.authenticate(ctx);
      // (user_id, created_at) index, by its user_id prefix: a host has few events.
      const user = await EventModel.findOne({ user_id: host._id, deleted: false, "location.name": CONFERENCE }, { name: 1 }).lean();
      if (user !== null) {
        throw invalid(`integration is used by the conference location of event "${user.name}"; change its location first`);
      }
      // Disconnecting what is not connected is already done: 200 either way.
      await IntegrationModel.deleteOne({ user_id: host._id, name: CONFERENCE });
      return {};
    },
  };
}
