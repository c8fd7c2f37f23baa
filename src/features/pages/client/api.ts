// Calls of the public booking API from the page (same origin), and what each failure says to a visitor in the host's words.
import { say, type Speech } from "../shared/view.js";

export interface Answer {
  ok: boolean;
  /** HTTP status; 0 when the request did not get through. */
  status: number;
  message: string;
  data: unknown;
}

export async function apiCall(method: "GET" | "POST", path: string, body?: unknown): Promise<Answer> {
  try {
    const res = await fetch(`/api/v1${path}`, {
      method,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const envelope = (await res.json().catch(() => ({}))) as { message?: string; data?: unknown };
    return { ok: res.ok, status: res.status, message: envelope.message ?? "", data: envelope.data };
  } catch {
    return { ok: false, status: 0, message: "", data: undefined };
  }
}

/**
 * The field a 422 of the booking API is about, read from its message (the API names the field first): a form
 * field's name, `question_<id>` for an answer (`answers[1].value ...`: the second answer `sent`), or "answers" when
 * the message names no answer the form sent (a required question: the form checks those before sending).
 */
export function problemField(answer: Answer, sent: readonly { question_id: string }[] = []): string | undefined {
  if (answer.status !== 422) return undefined;
  const m = answer.message;
  for (const field of ["attendee_email", "attendee_name", "guest_emails"]) if (m.startsWith(field)) return field;
  const placed = /^answers\[(\d+)\]/.exec(m);
  const id = placed ? sent[Number(placed[1])]?.question_id : undefined;
  if (id !== undefined) return `question_${id}`;
  return m.startsWith("answers") ? "answers" : undefined;
}

/**
 * A time refused (409): why, as the visitor needs it: the day or week filled up (the event's limits), else the
 * time was taken (extensions.md "Why a time is refused").
 */
export function takenText(answer: Answer, s: Speech): string {
  const reason = (answer.data as { reason?: unknown } | undefined)?.reason;
  return say(s, reason === "daily_limit" ? "errorDayFull" : reason === "weekly_limit" ? "errorWeekFull" : "errorSlotTaken");
}

/** A failure as the page says it: never the raw envelope. */
export function problemText(answer: Answer, s: Speech, guestLimit = 0): string {
  switch (answer.status) {
    case 404:
      // The event was switched off (or deleted) while the page was open.
      return say(s, "errorNotAvailable");
    case 409:
      return takenText(answer, s);
    // A single-use link used (by someone else meanwhile), revoked or expired: what its page would now say.
    case 410:
      return say(s, "linkGoneText");
    case 503:
      return say(s, "errorCalendar");
    // Its wait is the Retry-After's, anything from seconds to an hour: the words promise no length.
    case 429:
      return say(s, "errorTooManyRequests");
    case 422: {
      const m = answer.message;
      const field = problemField(answer);
      const tooLong = /is too long \(maximum is (\d+) characters/.exec(m);
      if (field && tooLong) return say(s, "errorTooLong", { limit: tooLong[1] });
      if (field === "attendee_email") return say(s, "errorEmail");
      if (field === "attendee_name") return say(s, "errorName");
      if (field === "guest_emails") return /more than/.test(m) ? say(s, "errorTooManyGuests", { limit: String(guestLimit) }) : say(s, "errorGuestEmail");
      if (field === "answers") {
        if (/^answers: .* is required$/s.test(m)) return say(s, "errorRequired");
        return / is not a valid e-mail$/.test(m) ? say(s, "errorEmail") : say(s, "errorAnswerInvalid");
      }
      if (/booking is|already started|no longer/.test(m)) return say(s, "errorNotChangeable");
      return say(s, "errorGeneric");
    }
    default:
      return say(s, "errorGeneric");
  }
}
