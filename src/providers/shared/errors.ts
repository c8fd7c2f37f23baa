// Why an outside calendar or meeting system could not be used: the one error type every provider (and OAuth) rejects with.
import { systemClock } from "../../domain/clock.js";
import { plainLine } from "../../domain/text.js";

/**
 * Why a provider could not be used: `refused` (credentials or the grant turned down: the connection is `invalid`),
 * `unreachable` (network, deadline, 5xx), `bad_response` (not CalDAV / not iCalendar / broken XML / over a limit),
 * `not_found` (no calendar there), `blocked` (not http(s), or a private address without OUTBOUND_ALLOW_PRIVATE),
 * `rate_limited` (the provider asked to wait: RateLimitedError says how long). `noCall`: the service refused to
 * call at all (a grant already known to be invalid, a rate limit still running, a provider no longer configured),
 * so the holder's status says so already and is not marked again.
 */
export class ProviderError extends Error {
  readonly noCall: boolean;

  constructor(
    readonly kind: "refused" | "unreachable" | "bad_response" | "not_found" | "blocked" | "rate_limited",
    message: string,
    opts: { noCall?: boolean } = {},
  ) {
    // The message becomes the connection's last_error: one line of plain words, never a stack, path or address.
    super(plainLine(message));
    this.noCall = opts.noCall ?? false;
  }
}

/** The provider asked us to slow down (429, or Google's 403 rate-limit reasons); `retryAfterMs` from Retry-After. */
export class RateLimitedError extends ProviderError {
  constructor(
    provider: string,
    readonly retryAfterMs: number,
    opts: { noCall?: boolean } = {},
  ) {
    super("rate_limited", `${provider} asked to slow down (rate limit); retrying after ${Math.ceil(retryAfterMs / 1000)} s`, opts);
  }
}

/** Without Retry-After a rate-limited provider is left alone this long. */
const DEFAULT_RETRY_AFTER_MS = 30_000;
/** A Retry-After beyond this is read as this: no provider means a day, and a host should not wait that long. */
const MAX_RETRY_AFTER_MS = 3_600_000;

/** Retry-After in ms (seconds or an HTTP date, which the provider's own clock wrote: read against the system's), bounded; the default when absent or unreadable. */
export function retryAfterMs(header: string | null, now = systemClock.nowMs()): number {
  if (header === null || header.trim() === "") return DEFAULT_RETRY_AFTER_MS;
  const seconds = Number(header.trim());
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - now;
  if (!Number.isFinite(ms)) return DEFAULT_RETRY_AFTER_MS;
  return Math.min(Math.max(ms, 1000), MAX_RETRY_AFTER_MS);
}
