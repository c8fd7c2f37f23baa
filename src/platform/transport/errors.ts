// Turns anything a handler throws into an error safe to show a caller, with its google.rpc details: a ConnectError as it is, an unreachable database or a transient conflict as UNAVAILABLE with Retry-After, the rest as INTERNAL.
import { Code, ConnectError } from "@connectrpc/connect";
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable, isTransientDatabaseError } from "../../db/errors.js";
import { asDecodeFailure } from "./decodeErrors.js";
import { withErrorDetails } from "./errorDetails.js";

/** Turns anything thrown by a handler into a Connect error that is safe to show a caller, its details attached. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return withErrorDetails(asDecodeFailure(err));
  if (isDatabaseUnavailable(err) || isTransientDatabaseError(err)) {
    // Both are over soon: the caller is told when to try again (REST: the Retry-After header; RPC: its metadata and RetryInfo).
    return withErrorDetails(new ConnectError("database unavailable", Code.Unavailable, { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) }));
  }
  return withErrorDetails(new ConnectError("internal error", Code.Internal));
}
