// The SMTP adapter: hands one message to the server of SMTP_URL with nodemailer, within a deadline, headers built from address objects only.
import nodemailer from "nodemailer";

export interface Address {
  name: string;
  address: string;
}

export interface CalendarPart {
  filename: string;
  /** iCalendar text with its METHOD (RFC 5546). */
  content: string;
  method: "REQUEST" | "CANCEL";
}

export interface OutgoingMail {
  /** Without angle brackets; the same on every attempt of one message, so receivers can drop a second copy. */
  messageId: string;
  from: Address;
  to: Address[];
  cc?: Address[];
  /** Where a reply goes: the booker's mails answer to the host, the host's to the booker. */
  replyTo?: Address;
  subject: string;
  text: string;
  html: string;
  /** Content-Language of the words. */
  language: string;
  calendars: CalendarPart[];
  /**
   * A reminder to the booker: where one POST (RFC 8058 one-click) stops that booking's reminders. Sent as
   * `List-Unsubscribe` (nodemailer's `list` option) with `List-Unsubscribe-Post: List-Unsubscribe=One-Click`.
   */
  unsubscribeUrl?: string;
}

/** A failure past the deadline may still have been delivered: `permanent: false`, and the retry keeps the Message-ID. */
type SendOutcome = { ok: true; response: string } | { ok: false; error: string; permanent: boolean };

export interface MailSender {
  send(mail: OutgoingMail, signal?: AbortSignal): Promise<SendOutcome>;
}

interface SmtpErrorFields {
  responseCode?: number;
  code?: string;
  message?: string;
}

/**
 * What to say about a failure: the server's reply code and nodemailer's error code, never the message text
 * alone (it may quote the URL with its password or the recipients' addresses).
 */
function describe(err: unknown): { error: string; permanent: boolean } {
  const e = (typeof err === "object" && err !== null ? err : {}) as SmtpErrorFields;
  const code = typeof e.responseCode === "number" ? e.responseCode : undefined;
  // 5xx is the server's final no (unknown mailbox, refused content): sending it again gives the same answer.
  const permanent = code !== undefined && code >= 500 && code < 600;
  const parts = [code !== undefined ? `SMTP ${code}` : undefined, e.code].filter((p) => p !== undefined);
  return { error: parts.length > 0 ? parts.join(" ") : "send failed", permanent };
}

/** The sender of mail through `url`, each message on its own connection (a server that went down and came back needs no reconnect logic). */
export function createSmtpSender(url: string, timeoutMs: number): MailSender {
  const transport = nodemailer.createTransport({
    url,
    // Each phase has its own limit; the whole exchange is bounded by timeoutMs below.
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    async send(mail, signal) {
      if (signal?.aborted) return { ok: false, error: "aborted", permanent: false };
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      const deadline = new Promise<SendOutcome>((resolve) => {
        timer = setTimeout(() => resolve({ ok: false, error: `no answer within ${timeoutMs} ms`, permanent: false }), timeoutMs);
        onAbort = () => resolve({ ok: false, error: "aborted", permanent: false });
        signal?.addEventListener("abort", onAbort, { once: true });
      });
      const sending = transport
        .sendMail({
          messageId: `<${mail.messageId}>`,
          // Address objects only: nodemailer encodes names as RFC 2047 words, so a name can never end a header line.
          from: mail.from,
          to: mail.to,
          cc: mail.cc,
          replyTo: mail.replyTo,
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
          headers: {
            "Content-Language": mail.language,
            "Auto-Submitted": "auto-generated",
            ...(mail.unsubscribeUrl !== undefined ? { "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" } : {}),
          },
          ...(mail.unsubscribeUrl !== undefined ? { list: { unsubscribe: { url: mail.unsubscribeUrl } } } : {}),
          attachments: mail.calendars.map((c) => ({
            filename: c.filename,
            content: c.content,
            contentType: `text/calendar; charset=utf-8; method=${c.method}`,
          })),
        })
        .then(
          (info): SendOutcome => ({ ok: true, response: typeof info.response === "string" ? info.response.slice(0, 200) : "sent" }),
          (err: unknown): SendOutcome => ({ ok: false, ...describe(err) }),
        );
      try {
        // Past the deadline the outcome is unknown: the retry sends the same Message-ID, so a copy that did
        // arrive is recognisable as the same message.
        return await Promise.race([sending, deadline]);
      } finally {
        clearTimeout(timer);
        if (onAbort) signal?.removeEventListener("abort", onAbort);
      }
    },
  };
}

/** The sender address of every mail: MAIL_FROM, else `Scheduling <no-reply@HOST of APP_URL>`. */
export function mailSender(configured: Address | undefined, appUrl: string): Address {
  if (configured) return configured;
  let host = "localhost";
  try {
    host = new URL(appUrl).hostname || host;
  } catch {
    // APP_URL is checked elsewhere; a sender still needs a domain.
  }
  return { name: "Scheduling", address: `no-reply@${host}` };
}
