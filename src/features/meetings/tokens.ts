// A video-meeting account authorized through OAuth (Zoom): the grant's session (features/oauth access.ts) whose refreshed and rotated tokens are sealed back onto its meeting_accounts document.
import { MeetingAccountModel, type MeetingAccountDoc } from "../../db/models/integration.js";
import type { ProviderAccess } from "../../providers/index.js";
import { grantAccess, type OAuthAccessSettings } from "../oauth/index.js";

/** How the meeting provider reaches the account; no call where it is invalid, waits out a rate limit, or is no longer configured. */
export function meetingAccountAccess(account: MeetingAccountDoc, settings: OAuthAccessSettings): ProviderAccess {
  const id = account._id;
  return grantAccess(account, {
    // _id index.
    write: (sealed) => MeetingAccountModel.updateOne({ _id: id }, { $set: { credentials_sealed: sealed } }),
    // _id index.
    read: async () => (await MeetingAccountModel.findById(id, { credentials_sealed: 1 }).lean<Pick<MeetingAccountDoc, "credentials_sealed">>())?.credentials_sealed ?? null,
  }, settings);
}
