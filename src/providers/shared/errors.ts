// Why a provider could not be used: the one error type every provider rejects with.
import { plainLine } from "../../domain/text.js";

/**
 * Why a provider could not be used: `refused` (credentials turned down: the connection is `invalid`),
 * `unreachable` (network, deadline, 5xx), `bad_response` (not CalDAV / not iCalendar / broken XML),
 * `not_found` (no calendar there), `blocked` (not http(s), or a private address without OUTBOUND_ALLOW_PRIVATE),
 * `rate_limited` (the provider asked to wait: RateLimitedError says how long).
 */
export class CalendarSourceError extends Error {
  constructor(
    readonly kind: "refused" | "unreachable" | "bad_response" | "not_found" | "blocked" | "rate_limited",
    message: string,
  ) {
    // The message becomes the connection's last_error: one line of plain words, never a stack, path or address.
    super(plainLine(message));
  }
}
