// Single-use links of an event (booking-kinds.md "Single-use links"): the host's RPCs (make, list, revoke) and the lookup of a link by its token that the public booking paths use.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import type { EventService, SingleUseLinkSchema } from "../../../gen/scheduling/v1/event_pb.js";
import { SingleUseLinkModel, type SingleUseLinkDoc } from "../../db/models/singleUseLink.js";
import { objectIdOf } from "../../db/ids.js";
import { notFound } from "../../domain/errors.js";
import { sealWithKeyId, unsealWithKeyId, type Keyring } from "../../domain/secretBox.js";
import { accountOfLinkToken, linkExpiry, linkStatus, linkTokenDigest, newLinkToken } from "../../domain/singleUseLink.js";
import type { Access } from "../accounts/index.js";
import { insertLink, revokeLink } from "./linkWrites.js";
import { managedEvent } from "./own.js";

type LinkMessage = MessageInitShape<typeof SingleUseLinkSchema>;

export interface LinkDeps {
  appUrl: () => string;
  /** Seals the token kept for the host's list. */
  secrets: Keyring;
}

/** The page address of a token. */
function linkUrl(appUrl: string, token: string): string {
  return `${appUrl.replace(/\/+$/, "")}/d/${token}`;
}

function present(deps: LinkDeps, link: SingleUseLinkDoc, now: Date, token?: string): LinkMessage {
  const status = linkStatus(link, now);
  return {
    id: link._id.toHexString(),
    url: linkUrl(deps.appUrl(), token ?? unsealWithKeyId(link.token_sealed, deps.secrets)),
    expiresAt: link.expires_at.toISOString(),
    used: link.used_at !== null && link.used_at !== undefined,
    revoked: link.revoked_at !== null && link.revoked_at !== undefined,
    createdAt: link.created_at.toISOString(),
    eventId: link.event_id.toHexString(),
    bookingId: link.booking_id?.toHexString(),
    status,
  };
}

/** The link of this token, or null (a text that cannot be a token, or no such link). */
export async function linkByToken(token: string): Promise<SingleUseLinkDoc | null> {
  const account = accountOfLinkToken(token);
  if (account === null) return null;
  // (user_id, token_digest) unique index: the account's shard.
  return SingleUseLinkModel.findOne({ user_id: new mongoose.Types.ObjectId(account), token_digest: linkTokenDigest(token) }).lean<SingleUseLinkDoc>();
}

type LinkMethods = Pick<ServiceImpl<typeof EventService>, "createSingleUseLink" | "listSingleUseLinks" | "revokeSingleUseLink">;

export function linkMethods(access: Access, deps: LinkDeps): LinkMethods {
  return {
    async createSingleUseLink(req, ctx) {
      const host = await access.authenticate(ctx);
      // A team event's links are the team's (its owner and admins make them), kept under its id as the event is.
      const event = await managedEvent(host, req.eventId);
      const now = access.clock.now();
      const expiresAt = linkExpiry(req.link?.expiresInDays, now);
      const token = newLinkToken(event.user_id.toHexString());
      const link = await insertLink({
        user_id: event.user_id,
        event_id: event._id,
        token_digest: linkTokenDigest(token),
        token_sealed: sealWithKeyId(token, deps.secrets),
        expires_at: expiresAt,
        created_at: now,
      });
      return { link: present(deps, link, now, token) };
    },

    async listSingleUseLinks(req, ctx) {
      const host = await access.authenticate(ctx);
      const event = await managedEvent(host, req.eventId);
      // (user_id, event_id, created_at desc) index.
      const links = await SingleUseLinkModel.find({ user_id: event.user_id, event_id: event._id }).sort({ created_at: -1, _id: -1 }).lean<SingleUseLinkDoc[]>();
      const now = access.clock.now();
      return { links: links.map((l) => present(deps, l, now)) };
    },

    async revokeSingleUseLink(req, ctx) {
      const host = await access.authenticate(ctx);
      const event = await managedEvent(host, req.eventId);
      const id = objectIdOf(req.id);
      const now = access.clock.now();
      if (id !== null) await revokeLink(event.user_id, event._id, id, now);
      // _id index; another event's link is as unknown as a missing one.
      const link = id === null ? null : await SingleUseLinkModel.findOne({ _id: id, user_id: event.user_id, event_id: event._id }).lean<SingleUseLinkDoc>();
      if (!link) throw notFound("link not found");
      return { link: present(deps, link, now) };
    },
  };
}
