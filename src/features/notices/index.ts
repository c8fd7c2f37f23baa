// What other features and the app use of the host's notices (integrations.md "When a calendar or meeting account needs the host"): recording a change of a connection or meeting account, the sweep of notices left owed, the notice e-mail's effect kind.
export { recordChange, recordStatus, statusAfter, sweepOwedNotices, type NoticeSource, type NoticeSubject } from "./record.js";
export { createHostNoticeKind } from "./mail.js";
