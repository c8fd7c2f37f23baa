// Google Calendar API v3 over an OAuth session: requests and Google's error answers as ProviderError.
import { ProviderError } from "../shared/types.js";
import { RateLimitedError, retryAfterMs } from "../shared/errors.js";
import type { ApiRequest, OAuthSession } from "../shared/oauth.js";

/** Google's JSON error body ({"error": {code, message, errors: [{domain, reason, message}], status}}). */
interface GoogleErrorBody {
  error?: { code?: number; message?: string; errors?: { reason?: string; message?: string }[] };
}

/** The first `reason` of a Google error answer ("rateLimitExceeded", "notFound", ...). */
function reasonOf(body: unknown): string | undefined {
  return (body as GoogleErrorBody | null)?.error?.errors?.[0]?.reason;
}

/** Google's "Handle API errors" guide: 403 with these reasons is a rate limit like a 429. */
const RATE_LIMIT_REASONS = new Set(["rateLimitExceeded", "userRateLimitExceeded"]);

/**
 * What a Google answer that is not a success means for us. 404 and 410 are returned to the caller as the status
 * (a delete counts them as done); everything else is a ProviderError naming `what` in plain words.
 */
export async function googleFailure(res: Response, what: string): Promise<ProviderError> {
  const body: unknown = await res.json().catch(() => null);
  const reason = reasonOf(body);
  if (res.status === 429 || (res.status === 403 && reason !== undefined && RATE_LIMIT_REASONS.has(reason))) {
    return new RateLimitedError("google", retryAfterMs(res.headers.get("retry-after")));
  }
  if (res.status >= 500) return new ProviderError("unreachable", `google answered HTTP ${res.status} to ${what}`);
  if (res.status === 404) return new ProviderError("not_found", `google does not know the calendar or event of ${what}`);
  // A scope the host did not grant is theirs to repair by authorizing again; no write access to a calendar too.
  if (res.status === 403 && (reason === "insufficientPermissions" || reason === "forbidden" || reason === "requiredAccessLevel")) {
    return new ProviderError("refused", `google refused ${what} (${reason})`);
  }
  return new ProviderError("bad_response", `google refused ${what} (HTTP ${res.status}${reason ? `, ${reason}` : ""})`);
}

/** A request under `{api}/calendar/v3`; the answer's JSON, or a ProviderError. */
export async function calendarApi<T>(session: OAuthSession, path: string, req: ApiRequest, what: string, signal: AbortSignal): Promise<T> {
  const res = await session.request(`/calendar/v3${path}`, req, signal);
  if (!res.ok) throw await googleFailure(res, what);
  if (res.status === 204) return undefined as T;
  try {
    return (await res.json()) as T;
  } catch {
    throw new ProviderError("bad_response", `google answered ${what} with something that is not JSON`);
  }
}

/** A calendar id as a path segment (ids hold "@" and "#"). */
export function segment(id: string): string {
  return encodeURIComponent(id);
}
