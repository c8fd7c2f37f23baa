// The one table from RPC codes to HTTP statuses and envelope status names, and error-to-envelope conversion.
import { Code, ConnectError } from "@connectrpc/connect";
import { ApiError } from "../../domain/errors.js";

export const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  408: "request_timeout",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "unprocessable_entity",
  429: "too_many_requests",
  431: "request_header_fields_too_large",
  500: "internal_server_error",
  501: "not_implemented",
  503: "service_unavailable",
  504: "gateway_timeout",
};

const CODE_TO_HTTP: Partial<Record<Code, number>> = {
  [Code.InvalidArgument]: 422,
  [Code.FailedPrecondition]: 422,
  [Code.OutOfRange]: 422,
  [Code.Unauthenticated]: 401,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.Aborted]: 409,
  [Code.ResourceExhausted]: 429,
  [Code.Unimplemented]: 501,
  [Code.Unavailable]: 503,
  [Code.DeadlineExceeded]: 504,
};

export interface ErrorAnswer {
  httpStatus: number;
  message: string;
  data: Record<string, unknown>;
  /** Response headers the error carries (Retry-After of a 429). */
  headers: Record<string, string>;
}

/** MongoDB's code for an operation that ran past its maxTimeMS (src/db/connection.ts). */
const MAX_TIME_MS_EXPIRED = 50;

/**
 * Database errors that mean "not reachable right now", or not within the operation deadlines of
 * src/db/connection.ts (no pool connection in time, no answer in time, the server's own maxTimeMS): 503, never 500.
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (typeof err !== "object" || err === null) return false;
  const name = (err as { name?: string }).name ?? "";
  const message = String((err as { message?: string }).message ?? "");
  const cause = (err as { cause?: unknown }).cause;
  return (
    /^Mongo(ServerSelection|Network|NetworkTimeout|TopologyClosed|NotConnected|PoolCleared|ServerClosed|WaitQueueTimeout)Error$/.test(name) ||
    (err as { code?: unknown }).code === MAX_TIME_MS_EXPIRED ||
    // A bulk write (insertMany of reservation cells) reports a pool checkout timeout under its own name,
    // MongoBulkWriteError, with the checkout's message: under load that was a 500.
    /Client must be connected|connection .* closed|buffering timed out|Timed out while checking out a connection/i.test(message) ||
    (depth < 3 && cause !== err && isDatabaseUnavailable(cause, depth + 1))
  );
}

/** Turns anything thrown by a handler into a Connect error that is safe to show a caller. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  if (isDatabaseUnavailable(err)) return new ConnectError("database unavailable", Code.Unavailable);
  return new ConnectError("internal error", Code.Internal);
}

export function errorAnswer(err: unknown): ErrorAnswer {
  if (err instanceof ApiError) {
    return { httpStatus: err.httpStatus ?? CODE_TO_HTTP[err.code] ?? 500, message: err.restMessage, data: err.data, headers: Object.fromEntries(err.metadata) };
  }
  const ce = toConnectError(err);
  const httpStatus = CODE_TO_HTTP[ce.code] ?? 500;
  if (httpStatus === 503) return { httpStatus, message: "service unavailable", data: {}, headers: {} };
  if (httpStatus === 500) return { httpStatus, message: "internal server error", data: {}, headers: {} };
  return { httpStatus, message: ce.rawMessage, data: {}, headers: {} };
}
