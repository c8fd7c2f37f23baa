// The pure rules of the host's notices (features/notices; integrations.md "When a calendar or meeting account needs the host"): the kinds of trouble and the notice e-mail's frozen payload.

/** The kinds of trouble, each e-mailed at most once a day per connection: unreadable, refused (authorize again), events left out. */
const TROUBLES = ["error", "invalid", "warnings"] as const;
export type Trouble = (typeof TROUBLES)[number];

/** The effect kind of the notice e-mail (features/notices: record.ts plans it, mail.ts runs it). */
export const HOST_NOTICE_KIND = "host_notice";

/** A day: the least time between two e-mails about one kind of trouble of one connection. */
export const NOTICE_INTERVAL_MS = 86_400_000;

/** What a notice is about: a calendar connection, or a video-meeting account (Zoom) kept for the conference location. */
export type NoticeAbout = "calendar" | "meeting";

/** The notice e-mail's payload, frozen when planned: what happened, as the connection or account showed it then. */
export interface HostNotice {
  trouble: Trouble;
  about: NoticeAbout;
  /** The meeting account's provider, by the name people know it by ("Zoom"); null for a calendar. */
  provider: string | null;
  /** The connection's or meeting account's `account` as the API shows it. */
  account: string;
  /** The connection's last_error (error, invalid), one line. */
  reason: string | null;
  /** The connection's warnings (warnings). */
  warnings: string[];
}

/** The payload read back; undefined when it is not a notice (a fault, never a guess). */
export function readHostNotice(p: Record<string, unknown>): HostNotice | undefined {
  const { trouble, about, provider, account, reason, warnings } = p;
  if (typeof trouble !== "string" || !(TROUBLES as readonly string[]).includes(trouble) || typeof account !== "string") return undefined;
  // Notices planned before meeting accounts had them are about a calendar.
  if (about !== undefined && about !== "calendar" && about !== "meeting") return undefined;
  return {
    trouble: trouble as Trouble,
    about: about ?? "calendar",
    provider: typeof provider === "string" ? provider : null,
    account,
    reason: typeof reason === "string" ? reason : null,
    warnings: Array.isArray(warnings) ? warnings.filter((w): w is string => typeof w === "string") : [],
  };
}
