// The one error type of the service: an RPC code plus what the REST envelope needs to show it, and the reason and fields a program reads.
import { Code, ConnectError } from "@connectrpc/connect";
import { closestAllowed, oneEditApart } from "./nearest.js";

/** Field names of missing parameters, grouped by the request object that lacks them: {"user": ["full_name"]}. */
export type MissingParams = Record<string, string[]>;

/** One field a request got wrong, as google.rpc.BadRequest names it: the field's path and what is wrong with it. */
export interface FieldViolation {
  field: string;
  description: string;
}

/**
 * The reasons callers.md ("Errors programs can read") names, besides the refused times (`TAKEN`, ...: the REST
 * `data.reason` in capitals). A reason is part of the contract: programs branch on it, so it never changes.
 */
export const REASONS = {
  missingParams: "MISSING_PARAMS",
  unknownField: "UNKNOWN_FIELD",
  invalidValue: "INVALID_VALUE",
  notFound: "NOT_FOUND",
  unauthenticated: "UNAUTHENTICATED",
  permissionDenied: "PERMISSION_DENIED",
  rateLimited: "RATE_LIMITED",
  unavailable: "UNAVAILABLE",
  idempotencyKeyReused: "IDEMPOTENCY_KEY_REUSED",
  idempotencyKeyInProgress: "IDEMPOTENCY_KEY_IN_PROGRESS",
  changesExpired: "CHANGES_EXPIRED",
  /** What the request would change was changed (or removed) by another request meanwhile: read it again. */
  changedMeanwhile: "CHANGED_MEANWHILE",
  /** The account or event holds as many of a thing as it may (webhooks, schedules, reminders). */
  limitReached: "LIMIT_REACHED",
  /** A booking that is canceled, or has started, or is inside its cancel notice, can no longer be changed. */
  notChangeable: "NOT_CHANGEABLE",
  /** What the request removes is still used by something else, which the message names. */
  inUse: "IN_USE",
  /** A calendar server or feed could not be connected (unreachable, refused the credentials, holds no calendar). */
  connectionFailed: "CONNECTION_FAILED",
  /** An RPC body over the read limit (RESOURCE_EXHAUSTED, but never "retry later": the same body will never fit). */
  requestTooLarge: "REQUEST_TOO_LARGE",
  /** A team booking's reassign found no host of the event free at its time (teams.md). */
  noHostFree: "NO_HOST_FREE",
  /** An RPC (gRPC, gRPC-Web, Connect) to a service or method this server does not serve (code UNIMPLEMENTED). */
  unknownMethod: "UNKNOWN_METHOD",
} as const;

/** The reason of an error raised without one: the family its code stands for, else the code's own name (DEADLINE_EXCEEDED). */
export function reasonOfCode(code: Code): string {
  switch (code) {
    case Code.InvalidArgument:
      return REASONS.invalidValue;
    case Code.ResourceExhausted:
      return REASONS.rateLimited;
    default:
      return codeName(code);
  }
}

/** A code's name as gRPC writes it: Code.NotFound is NOT_FOUND. */
export function codeName(code: Code): string {
  return (Code[code] ?? "UNKNOWN").replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

export interface ApiErrorOptions {
  restMessage?: string;
  data?: Record<string, unknown>;
  httpStatus?: number;
  headers?: Record<string, string>;
  /** UPPER_SNAKE_CASE, stable (REASONS, or a refused time's word in capitals); default: reasonOfCode(code). */
  reason?: string;
  /** The fields a validation error is about (google.rpc.BadRequest). */
  fieldViolations?: readonly FieldViolation[];
  /** What the cause names, for google.rpc.ErrorInfo's metadata (`event_id`, ...); `field` is added from the violations. */
  info?: Record<string, string>;
}

/**
 * Thrown by service methods. Connect, gRPC and gRPC-Web callers see `code` and `rawMessage`, and the details
 * src/platform/transport/errorDetails.ts makes of `reason`, `fieldViolations` and `info`; the REST layer maps
 * `code` to an HTTP status and shows `restMessage` (and `data`). Any code may raise any reason with it:
 * `new ApiError(Code.FailedPrecondition, "...", { reason: REASONS.changesExpired, httpStatus: 410 })`.
 */
export class ApiError extends ConnectError {
  readonly restMessage: string;
  readonly data: Record<string, unknown>;
  /** HTTP status when the code alone does not decide it (400 vs 422 for INVALID_ARGUMENT). */
  readonly httpStatus: number | undefined;
  readonly reason: string;
  readonly fieldViolations: readonly FieldViolation[];
  readonly info: Readonly<Record<string, string>>;

  // ConnectError's own instanceof test only knows its exact prototype (or the name "ConnectError", which we keep
  // so Connect treats us as one of its own); ours must follow the prototype chain.
  static override [Symbol.hasInstance](v: unknown): boolean {
    return typeof v === "object" && v !== null && Object.prototype.isPrototypeOf.call(ApiError.prototype, v);
  }

  constructor(code: Code, message: string, opts: ApiErrorOptions = {}) {
    // Headers travel as the error's metadata: response headers on Connect and REST, trailers on gRPC.
    super(message, code, opts.headers);
    this.restMessage = opts.restMessage ?? message;
    this.data = opts.data ?? {};
    this.httpStatus = opts.httpStatus;
    this.reason = opts.reason ?? reasonOfCode(code);
    this.fieldViolations = opts.fieldViolations ?? [];
    this.info = opts.info ?? {};
  }
}

export function missingParams(groups: MissingParams): ApiError {
  // An object missing as a whole (no required fields of its own to list) is named by itself.
  const names = Object.entries(groups).flatMap(([obj, fields]) => (fields.length === 0 ? [obj] : fields.map((f) => `${obj}.${f}`)));
  return new ApiError(Code.InvalidArgument, `missing params: ${names.join(", ")}`, {
    restMessage: "missing params",
    data: groups,
    httpStatus: 400,
    reason: REASONS.missingParams,
    fieldViolations: names.map((field) => ({ field, description: `${field} is missing` })),
  });
}

/**
 * The field a validation message names, which is how every one of them begins ("slot_duration is not included in
 * the list", "answers[0].question_id is not ...", "answers: ... is required"), or undefined when it begins in words.
 */
export function fieldOfMessage(message: string): string | undefined {
  const lead = /^([A-Za-z][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_]+|\[\d+\])*)(?::| (?:is|are|must|has|have|can't|needs|does|names) )/.exec(message);
  return lead ? lead[1] : undefined;
}

/**
 * A name the request's object does not take (REST's 422, and an RPC's JSON request): `unknown field <name>`, with
 * the allowed name one edit away if there is one.
 */
export function unknownFieldMessage(name: string, allowed: readonly string[]): string {
  const near = allowed.find((a) => oneEditApart(name, a));
  return near === undefined ? `unknown field ${name}` : `unknown field ${name} (did you mean ${near}?)`;
}

/** A value failed validation; the message names the field (or `field` does, when the message begins in words). */
export function invalid(message: string, field = fieldOfMessage(message)): ApiError {
  return new ApiError(Code.InvalidArgument, message, {
    httpStatus: 422,
    fieldViolations: field === undefined ? [] : [{ field, description: message }],
  });
}

/** A 422 that is about the request as a whole or the state it meets, not one field's value: said by its reason. */
export function refusal(reason: string, message: string, opts: Omit<ApiErrorOptions, "reason"> = {}): ApiError {
  return new ApiError(Code.InvalidArgument, message, { httpStatus: 422, ...opts, reason });
}

/** Nothing of that name for this caller; `info.resource` names what was looked for ("event" of "event not found"). */
export function notFound(message = "record not found"): ApiError {
  const resource = /^(.+) not found$/.exec(message)?.[1];
  return new ApiError(Code.NotFound, message, { info: resource === undefined ? {} : { resource: resource.replace(/ /g, "_") } });
}

/** A missing or wrong key; `detail` (a hint) goes to REST's `data` and the ErrorInfo's metadata. */
export function unauthenticated(message: string, detail?: Record<string, string>): ApiError {
  return new ApiError(Code.Unauthenticated, message, detail === undefined ? {} : { data: detail, info: detail });
}

export function forbidden(message: string): ApiError {
  return new ApiError(Code.PermissionDenied, message);
}

/** How long a caller told "unavailable" without a better estimate waits before trying again (Retry-After, RetryInfo). */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** Over soon: the caller is told when to try again (REST: Retry-After; RPC: the same as google.rpc.RetryInfo). */
export function unavailable(message = "service unavailable", retryAfterSeconds = UNAVAILABLE_RETRY_AFTER_SECONDS): ApiError {
  return new ApiError(Code.Unavailable, message, { headers: { "retry-after": String(retryAfterSeconds) } });
}

/** The caller's rate limit is used up for this window; `Retry-After` says when the next one starts. */
export function tooManyRequests(retryAfterSeconds: number, message = "too many requests"): ApiError {
  return new ApiError(Code.ResourceExhausted, message, {
    data: { retry_after: retryAfterSeconds },
    headers: { "retry-after": String(retryAfterSeconds) },
    reason: REASONS.rateLimited,
  });
}

/** A value of an enumerated list: the list itself, as the 422 and the OpenAPI document show it. */
export type AllowedValue = string | number;

/**
 * A value outside an enumerated list (extensions.md "Allowed values"): 422 with `message`, and `data`
 * `{"field", "allowed": [...], "suggestion"?}` so a client can show or pick what is accepted, and offer what the
 * person most likely meant: `suggestion` when given (a time zone's service name for its IANA name), else the
 * allowed value closest to the `value` sent (nearest.ts). RPC callers get the message.
 */
export function notAllowed(field: string, allowed: readonly AllowedValue[], message: string, value?: unknown, suggestion: AllowedValue | undefined = closestAllowed(value, allowed)): ApiError {
  return new ApiError(Code.InvalidArgument, message, {
    httpStatus: 422,
    data: { field, allowed: [...allowed], ...(suggestion === undefined ? {} : { suggestion }) },
    fieldViolations: [{ field, description: message }],
  });
}

/** Whether `value` is one of an enumerated list (narrowed to its type when it is). */
export function isOneOf<T extends string>(list: readonly T[], value: string): value is T {
  return (list as readonly string[]).includes(value);
}

/** The 422 messages every validator words the same way: each names the field, and `data` lists what it takes and what `value` most likely meant. */
export function notInList(field: string, allowed: readonly AllowedValue[], value: unknown, suggestion?: AllowedValue): never {
  throw notAllowed(field, allowed, `${field} is not included in the list`, value, suggestion);
}

export function tooLong(field: string, max: number): never {
  throw invalid(`${field} is too long (maximum is ${max} characters)`, field);
}

export function blank(field: string): never {
  throw invalid(`${field} can't be blank`, field);
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
