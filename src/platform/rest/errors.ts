// The one table from RPC codes to HTTP statuses and envelope status names, and error-to-envelope conversion.
import { Code } from "@connectrpc/connect";
import { ApiError } from "../../domain/errors.js";
import { toConnectError } from "../transport/errors.js";

export const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  408: "request_timeout",
  409: "conflict",
  410: "gone",
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
  /** Response headers the error carries (Retry-After of a 429, or of a 503 for the database). */
  headers: Record<string, string>;
}

export function errorAnswer(err: unknown): ErrorAnswer {
  if (err instanceof ApiError) {
    return { httpStatus: err.httpStatus ?? CODE_TO_HTTP[err.code] ?? 500, message: err.restMessage, data: err.data, headers: Object.fromEntries(err.metadata) };
  }
  const ce = toConnectError(err);
  const httpStatus = CODE_TO_HTTP[ce.code] ?? 500;
  if (httpStatus === 503) return { httpStatus, message: "service unavailable", data: {}, headers: Object.fromEntries(ce.metadata) };
  if (httpStatus === 500) return { httpStatus, message: "internal server error", data: {}, headers: {} };
  return { httpStatus, message: ce.rawMessage, data: {}, headers: {} };
}
