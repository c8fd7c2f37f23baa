// IntegrationService: the host's video-meeting provider (through the providers' registry), which makes the conference location usable.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import { IntegrationService, type IntegrationSchema } from "../../../gen/scheduling/v1/integration_pb.js";
import { EventModel } from "../../db/models/event.js";
import { IntegrationModel, MeetingAccountModel, type IntegrationDoc, type MeetingAccountDoc } from "../../db/models/integration.js";
import { invalid, notInList, REASONS, refusal, requireFields } from "../../domain/errors.js";
import { meetingProvider, meetingProviderNames } from "../../providers/index.js";
import type { Access } from "../accounts/index.js";
import type { AuthorizedAccount, Purpose } from "../oauth/index.js";
import { revokeSealedGrant, sealTokens } from "../oauth/index.js";
import type { OAuthAccessSettings } from "../oauth/index.js";

import { CONFERENCE } from "./links.js";
import { meetingAccountReconnected } from "./status.js";
import type { Owing } from "../../outbox/wake.js";

/**
 * What the host sees as the integration's address: the server they chose (Jitsi), or the public site of a provider
 * reached through OAuth (Zoom: https://zoom.us). Never the operator's API endpoint (ZOOM_API_URL): integrations
 * stored before this kept it in base_url, and every host was shown it.
 */
function shownBaseUrl(i: IntegrationDoc): string {
  const provider = meetingProvider(i.provider);
  return provider?.oauth ? provider.configure({}).baseUrl : i.base_url;
}

function present(i: IntegrationDoc, accounts: readonly MeetingAccountDoc[] = []): MessageInitShape<typeof IntegrationSchema> {
  const account = accounts.find((a) => a.provider === i.provider);
  return {
    name: i.name,
    provider: i.provider,
    baseUrl: shownBaseUrl(i),
    connectedAt: i.connected_at.toISOString(),
    ...(account ? { account: account.account, status: account.status, lastError: account.last_error ?? undefined } : {}),
  };
}

/** The host's video-meeting accounts authorized through OAuth. */
async function accountsOf(userId: mongoose.Types.ObjectId): Promise<MeetingAccountDoc[]> {
  // (user_id, provider) unique index by its prefix.
  return MeetingAccountModel.find({ user_id: userId }).lean<MeetingAccountDoc[]>();
}

/** Makes `provider` the host's conference integration (an upsert: one per account). */
async function useForConference(userId: mongoose.Types.ObjectId, provider: string, baseUrl: string, account: string | null, now: Date): Promise<IntegrationDoc> {
  // (user_id, name) unique index. Links already made stay as they were; later bookings use this provider.
  return (await IntegrationModel.findOneAndUpdate(
    { user_id: userId, name: CONFERENCE },
    { $set: { provider, base_url: baseUrl, account }, $setOnInsert: { connected_at: now } },
    { upsert: true, new: true },
  ).lean<IntegrationDoc>()) as IntegrationDoc;
}

/** The `conference` purpose of an authorization (Zoom): its account once the person confirmed, and whether one of ours holds a provider account's grant. */
export function conferencePurpose(settings: OAuthAccessSettings & Owing): Purpose {
  // provider_account_id index.
  return { connect: connectAuthorizedConference(settings), grantHeld: async (provider, providerAccountId) => (await MeetingAccountModel.exists({ provider_account_id: providerAccountId, provider })) !== null };
}

/**
 * Keeps the account's tokens (authorizing again replaces them, the same or another Zoom user) and makes it the
 * conference integration.
 */
function connectAuthorizedConference(settings: OAuthAccessSettings & Owing): (account: AuthorizedAccount) => Promise<void> {
  return async ({ userId, client, session, identity }) => {
    const now = settings.clock.now();
    // (user_id, provider) unique index. The status before: an account authorized again after trouble is ok now.
    const before = await MeetingAccountModel.findOneAndUpdate(
      { user_id: userId, provider: client.provider },
      {
        $set: {
          provider_account_id: identity.id,
          account: identity.email,
          credentials_sealed: sealTokens(session.current(), settings.secrets),
          blocked_until: null,
        },
        $setOnInsert: { connected_at: now, status: "ok", last_error: null },
      },
      { upsert: true, returnDocument: "before", projection: { status: 1 } },
    ).lean<Pick<MeetingAccountDoc, "_id" | "status">>();
    // Its status is ok now: recorded as every change of status is, so a status that was not ok tells the host.
    if (before && before.status !== "ok") await meetingAccountReconnected(settings, before._id);
    // The provider's public site: the operator's API endpoint is a setting, not the host's (it was shown to every host).
    await useForConference(userId, client.provider, meetingProvider(client.provider)?.configure({}).baseUrl ?? "", identity.email, now);
  };
}

/** Revokes the account's grant unless another account of ours holds the same provider account; forgets its tokens either way. */
async function forgetAccount(settings: OAuthAccessSettings, account: MeetingAccountDoc): Promise<void> {
  const client = settings.oauth.get(account.provider);
  // provider_account_id index: a revocation would end the other account's grant too.
  const shared = await MeetingAccountModel.exists({ provider_account_id: account.provider_account_id, provider: account.provider, user_id: mongoose.trusted({ $ne: account.user_id }) });
  if (client && !shared) await revokeSealedGrant(client, account.credentials_sealed, settings.secrets, REVOKE_TIMEOUT_MS);
  // _id index.
  await MeetingAccountModel.deleteOne({ _id: account._id });
}

const REVOKE_TIMEOUT_MS = 5000;

/** Whether the host has a video-meeting provider connected (the conference location needs one). */
export async function conferenceConnected(userId: mongoose.Types.ObjectId): Promise<boolean> {
  // (user_id, name) unique index.
  return (await IntegrationModel.exists({ user_id: userId, name: CONFERENCE })) !== null;
}


export function createIntegrationService(access: Access, settings: OAuthAccessSettings): ServiceImpl<typeof IntegrationService> {
  return {
    async listIntegrations(_req, ctx) {
      const host = await access.authenticate(ctx);
      // (user_id, name) unique index.
      const found = await IntegrationModel.find({ user_id: host._id }).sort({ name: 1 }).lean<IntegrationDoc[]>();
      const accounts = found.length === 0 ? [] : await accountsOf(host._id);
      return { integrations: found.map((i) => present(i, accounts)) };
    },

    async connectConference(req, ctx) {
      const host = await access.authenticate(ctx);
      const input = req.integration;
      requireFields("integration", { provider: input?.provider });
      const provider = input?.provider ?? "";
      const meetings = meetingProvider(provider);
      if (!meetings) notInList("integration.provider", meetingProviderNames(), provider);
      if (meetings.oauth) {
        // A provider with accounts is connected by authorizing it (POST /oauth/<provider>/authorize); after that,
        // switching back to it needs no new authorization.
        const accounts = await accountsOf(host._id);
        const account = accounts.find((a) => a.provider === provider);
        if (!account) throw invalid(`authorize ${provider} first`, "provider");
        const saved = await useForConference(host._id, provider, meetings.configure({}).baseUrl, account.account, settings.clock.now());
        return { integration: present(saved, accounts) };
      }
      const { baseUrl } = meetings.configure({ baseUrl: input?.baseUrl });
      // Connecting again changes the server (for later bookings; links already made stay as they were).
      const saved = await useForConference(host._id, provider, baseUrl, null, settings.clock.now());
      return { integration: present(saved) };
    },

    async disconnectConference(_req, ctx) {
      const host = await access.authenticate(ctx);
      // (user_id, created_at) index, by its user_id prefix: a host has few events.
      const user = await EventModel.findOne({ user_id: host._id, deleted: false, "location.name": CONFERENCE }, { name: 1 }).lean();
      if (user !== null) {
        throw refusal(REASONS.inUse, `integration is used by the conference location of event "${user.name}"; change its location first`);
      }
      // Disconnecting what is not connected is already done: 200 either way. Accounts authorized for video meetings
      // go with it: their grants are revoked (unless shared) and their tokens forgotten.
      await IntegrationModel.deleteOne({ user_id: host._id, name: CONFERENCE });
      for (const account of await accountsOf(host._id)) await forgetAccount(settings, account);
      return {};
    },
  };
}
