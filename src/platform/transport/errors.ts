// Turns anything a handler throws into an error safe to show a caller: a ConnectError as it is, an unreachable database as UNAVAILABLE, the rest as INTERNAL.
import { Code, ConnectError } from "@connectrpc/connect";
import { isDatabaseUnavailable } from "../../db/errors.js";

/** Turns anything thrown by a handler into a Connect error that is safe to show a caller. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  if (isDatabaseUnavailable(err)) return new ConnectError("database unavailable", Code.Unavailable);
  return new ConnectError("internal error", Code.Internal);
}
