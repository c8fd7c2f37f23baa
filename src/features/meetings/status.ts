// A video-meeting account's (Zoom's) status after each call to its provider, and the account as a subject of the host's notices (features/notices): how their webhook message and e-mail show it.
import mongoose from "mongoose";
import { MeetingAccountModel, type MeetingAccountDoc } from "../../db/models/integration.js";
import { meetingProvider, type ProviderError } from "../../providers/index.js";
import { recordStatus, statusAfter, type NoticeSource, type NoticeSubject } from "../notices/index.js";
import type { Owing } from "../../outbox/wake.js";
import { errorText, logEvent } from "../../platform/log.js";

/** The meeting account as a notice shows it: the fields GET /integrations shows of it, and its provider by name. */
function meetingAccountSubject(accountId: mongoose.Types.ObjectId): NoticeSubject {
  return {
    collection: MeetingAccountModel.collection,
    id: accountId,
    about: "meeting",
    async shown() {
      // _id index.
      const a = await MeetingAccountModel.findById(accountId, { provider: 1, account: 1, status: 1, last_error: 1, connected_at: 1 }).lean<
        Pick<MeetingAccountDoc, "_id" | "provider" | "account" | "status" | "last_error" | "connected_at">
      >();
      if (!a) return undefined;
      const data = { meeting_account: { provider: a.provider, account: a.account, status: a.status, last_error: a.last_error ?? null, connected_at: a.connected_at.toISOString() } };
      return { data, account: a.account, provider: meetingProvider(a.provider)?.oauth?.displayName ?? a.provider, reason: a.last_error ?? null, warnings: [] };
    },
  };
}

/**
 * What a call to the provider made of the account's status (ok; invalid when refused: authorize again; error),
 * stored, and told to the host when it changed. `account.status` is the status as last read: a call that went
 * well on an account that was ok writes nothing. Never throws: the meeting's own outcome is what the caller reports.
 */
export async function markMeetingAccount(owing: Owing, account: Pick<MeetingAccountDoc, "_id" | "status">, failure: ProviderError | null): Promise<void> {
  const set = statusAfter(failure);
  if (failure === null && account.status === "ok") return;
  try {
    await recordStatus(owing, meetingAccountSubject(account._id), set);
  } catch (err) {
    logEvent("warn", "meeting account status not saved", { error: errorText(err) });
  }
}

/** After the account was authorized again: a status that was not ok is ok now, which the host's webhooks hear. */
export async function meetingAccountReconnected(owing: Owing, accountId: mongoose.Types.ObjectId): Promise<void> {
  await recordStatus(owing, meetingAccountSubject(accountId), { status: "ok", last_error: null });
}

/** Where meeting accounts' changes of status may owe notices (features/notices sweepOwedNotices). */
export const meetingNoticeSource: NoticeSource = { collection: MeetingAccountModel.collection, subjectOf: (doc) => meetingAccountSubject(doc._id as mongoose.Types.ObjectId) };
