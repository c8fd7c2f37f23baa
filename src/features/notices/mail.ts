// The host_notice effect kind: the e-mail telling a host that a calendar connection or a meeting account needs them, in the host's locale (planned by record.ts, never by a booking change).
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { appHostOf, oneLine } from "../../domain/bookingEvent.js";
import { escapeHtml } from "../../domain/html.js";
import { HOST_NOTICE_KIND, readHostNotice, type HostNotice } from "../../domain/notice.js";
import { direction, fill, localeOf, type Params } from "../../i18n/index.js";
import { noticeMessages, type NoticeKey } from "../../i18n/notices.js";
import type { EffectKind, RunResult } from "../../outbox/types.js";
import { mailSender, sendLogged, type MailSetup, type OutgoingMail } from "../email/index.js";

type Words = { subject: NoticeKey; line: NoticeKey; todo: NoticeKey; footer: NoticeKey };

/** The words of each kind of trouble, of a calendar and of a meeting account (which has no warnings: it reads no events). */
const KEYS: { calendar: Record<HostNotice["trouble"], Words>; meeting: Partial<Record<HostNotice["trouble"], Words>> } = {
  calendar: {
    error: { subject: "subjectError", line: "lineError", todo: "todoError", footer: "footer" },
    invalid: { subject: "subjectInvalid", line: "lineInvalid", todo: "todoInvalid", footer: "footer" },
    warnings: { subject: "subjectWarnings", line: "lineWarnings", todo: "todoWarnings", footer: "footer" },
  },
  meeting: {
    error: { subject: "subjectMeetingError", line: "lineMeetingError", todo: "todoMeetingError", footer: "footerMeeting" },
    invalid: { subject: "subjectMeetingInvalid", line: "lineMeetingInvalid", todo: "todoMeetingInvalid", footer: "footerMeeting" },
  },
};

/** The notice's subject, text and HTML in the host's locale: what happened (with the events left out), what to do. */
function renderHostNotice(notice: HostNotice, host: Pick<UserDoc, "full_name" | "locale">): { subject: string; text: string; html: string; locale: string } {
  const locale = localeOf(host.locale);
  const words = noticeMessages[locale];
  const params: Params = { name: oneLine(host.full_name), account: oneLine(notice.account), reason: oneLine(notice.reason ?? ""), provider: oneLine(notice.provider ?? "") };
  const say = (key: NoticeKey): string => fill(words[key], params);
  const keys = KEYS[notice.about][notice.trouble] ?? KEYS.calendar[notice.trouble];
  const subject = say(keys.subject);
  const line = say(keys.line);
  const listed = notice.trouble === "warnings" ? notice.warnings.map(oneLine) : [];
  const text = [say("greeting"), "", line, ...listed.map((w) => `- ${w}`), "", say(keys.todo), "", say(keys.footer), ""].join("\n");
  const dir = direction(locale);
  const html = `<!doctype html>
<html lang="${locale}" dir="${dir}">
<head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body style="font-family:-apple-system,'Segoe UI',Roboto,Arial,sans-serif;font-size:15px;line-height:1.5;color:#202124">
<p>${escapeHtml(say("greeting"))}</p>
<p><strong>${escapeHtml(line)}</strong></p>
${listed.length > 0 ? `<ul>${listed.map((w) => `<li>${escapeHtml(w)}</li>`).join("")}</ul>\n` : ""}<p>${escapeHtml(say(keys.todo))}</p>
<p style="color:#5f6368;font-size:13px">${escapeHtml(say(keys.footer))}</p>
</body>
</html>
`;
  return { subject, text, html, locale };
}

/** The notice e-mail kind; without a mail setup (SMTP_URL unset) a notice has nowhere to go and is given up at once. */
export function createHostNoticeKind(deps: { mail: MailSetup | undefined; appUrl(): string }): EffectKind {
  return {
    name: HOST_NOTICE_KIND,

    // Planned when a calendar connection or a meeting account changes (record.ts), never by a booking change.
    plan: async () => [],

    async run(effect, signal): Promise<RunResult> {
      const notice = readHostNotice(effect.payload);
      if (!notice) return { ok: false, error: "unreadable notice payload", permanent: true };
      if (!deps.mail) return { ok: false, error: "SMTP_URL is not set", permanent: true };
      // _id index.
      const host = await UserModel.findById(effect.userId, { full_name: 1, email: 1, locale: 1 }).lean<Pick<UserDoc, "full_name" | "email" | "locale">>();
      if (!host) return { ok: false, error: "host not found", permanent: true };
      const appUrl = deps.appUrl();
      const rendered = renderHostNotice(notice, host);
      const mail: OutgoingMail = {
        // The effect id is the same on every attempt: a retry after an unknown outcome repeats the Message-ID.
        messageId: `${effect.id}@${appHostOf(appUrl)}`,
        from: mailSender(deps.mail.from, appUrl),
        to: [{ name: oneLine(host.full_name), address: host.email }],
        subject: rendered.subject,
        text: rendered.text,
        html: rendered.html,
        language: rendered.locale,
        calendars: [],
      };
      return sendLogged(deps.mail, mail, { effect_id: effect.id, kind: HOST_NOTICE_KIND, trouble: notice.trouble, attempt: effect.attempts }, signal);
    },
  };
}
