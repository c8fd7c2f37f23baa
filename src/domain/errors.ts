// The one error type of the service: an RPC code plus what the REST envelope needs to show it.
import { Code, ConnectError } from "@connectrpc/connect";

/** Field names of missing parameters, grouped by the request object that lacks them: {"user": ["full_name"]}. */
export type MissingParams = Record<string, string[]>;

/**
 * Thrown by service methods. Connect, gRPC and gRPC-Web callers see `code` and `rawMessage`;
 * the REST layer maps `code` to an HTTP status and shows `restMessage` (and `data`).
 */
export class ApiError extends ConnectError {
  readonly restMessage: string;
  readonly data: Record<string, unknown>;
  /** HTTP status when the code alone does not decide it (400 vs 422 for INVALID_ARGUMENT). */
  readonly httpStatus: number | undefined;

  // ConnectError's own instanceof test only knows its exact prototype (or the name "ConnectError", which we keep
  // so Connect treats us as one of its own); ours must follow the prototype chain.
  static override [Symbol.hasInstance](v: unknown): boolean {
    return typeof v === "object" && v !== null && Object.prototype.isPrototypeOf.call(ApiError.prototype, v);
  }

  constructor(
    code: Code,
    message: string,
    opts: { restMessage?: string; data?: Record<string, unknown>; httpStatus?: number; headers?: Record<string, string> } = {},
  ) {
    // Headers travel as the error's metadata: response headers on Connect and REST, trailers on gRPC.
    super(message, code, opts.headers);
    this.restMessage = opts.restMessage ?? message;
    this.data = opts.data ?? {};
    this.httpStatus = opts.httpStatus;
  }
}

export function missingParams(groups: MissingParams): ApiError {
  // An object missing as a whole (no required fields of its own to list) is named by itself.
  const names = Object.entries(groups).flatMap(([obj, fields]) => (fields.length === 0 ? [obj] : fields.map((f) => `${obj}.${f}`)));
  return new ApiError(Code.InvalidArgument, `missing params: ${names.join(", ")}`, {
    restMessage: "missing params",
    data: groups,
    httpStatus: 400,
  });
}

/** A value failed validation; the message names the field. */
export function invalid(message: string): ApiError {
  return new ApiError(Code.InvalidArgument, message, { httpStatus: 422 });
}

export function notFound(message = "record not found"): ApiError {
  return new ApiError(Code.NotFound, message);
}

export function unauthenticated(message: string): ApiError {
  return new ApiError(Code.Unauthenticated, message);
}

export function forbidden(message: string): ApiError {
  return new ApiError(Code.PermissionDenied, message);
}

export function unavailable(message = "service unavailable"): ApiError {
  return new ApiError(Code.Unavailable, message);
}

/** The caller's rate limit is used up for this window; `Retry-After` says when the next one starts. */
export function tooManyRequests(retryAfterSeconds: number, message = "too many requests"): ApiError {
  return new ApiError(Code.ResourceExhausted, message, {
    data: { retry_after: retryAfterSeconds },
    headers: { "retry-after": String(retryAfterSeconds) },
  });
}

/** A value of an enumerated list: the list itself, as the 422 and the OpenAPI document show it. */
export type AllowedValue = string | number;

/**
 * A value outside an enumerated list (extensions.md "Allowed values"): 422 with `message`, and `data`
 * `{"field", "allowed": [...]}` so a client can show or pick what is accepted. RPC callers get the message.
 */
export function notAllowed(field: string, allowed: readonly AllowedValue[], message: string): ApiError {
  return new ApiError(Code.InvalidArgument, message, { httpStatus: 422, data: { field, allowed: [...allowed] } });
}

/** Whether `value` is one of an enumerated list (narrowed to its type when it is). */
export function isOneOf<T extends string>(list: readonly T[], value: string): value is T {
  return (list as readonly string[]).includes(value);
}

/** The 422 messages every validator words the same way: each names the field, and `data` lists what it takes. */
export function notInList(field: string, allowed: readonly AllowedValue[]): never {
  throw notAllowed(field, allowed, `${field} is not included in the list`);
}

export function tooLong(field: string, max: number): never {
  throw invalid(`${field} is too long (maximum is ${max} characters)`);
}

export function blank(field: string): never {
  throw invalid(`${field} can't be blank`);
}

/** Collects missing required fields of one request object; throws them all at once. */
export function requireFields(object: string, values: Record<string, unknown>): void {
  const missing = Object.entries(values)
    .filter(([, v]) => v === undefined || v === null || (typeof v === "string" && v.trim() === ""))
    .map(([k]) => k);
  if (missing.length > 0) throw missingParams({ [object]: missing });
}

/**
 * A request without the object its body carries (docs/spec/extensions.md "Bodies without their object": `{}` or `null`
 * for PATCH /user, a cancel without its `booking`): 400 `missing params` with `data` `{"<object>": []}`, and
 * INVALID_ARGUMENT "missing params: <object>" over RPC; never a 200 that changed nothing. An object that is
 * there but empty is a request to change nothing (or, for a cancel, to give no reason) and goes on.
 */
export function requireObject<T>(object: string, value: T | undefined | null): asserts value is T {
  if (value === undefined || value === null) throw missingParams({ [object]: [] });
}
