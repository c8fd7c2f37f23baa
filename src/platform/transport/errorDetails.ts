// The google.rpc details every RPC error carries (docs/spec/callers.md "Errors programs can read"): ErrorInfo always, BadRequest for the fields a validation names, RetryInfo when the caller may try again.
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from "../../../gen/google/rpc/error_details_pb.js";
import { ApiError, reasonOfCode, REASONS, type FieldViolation } from "../../domain/errors.js";

/** ErrorInfo's `domain`: the service's proto package, which names every reason's meaning. */
const ERROR_DOMAIN = "scheduling.v1";

/** What ErrorInfo's metadata keys may be (error_details.proto): `[a-z][a-zA-Z0-9-_]+`, at most 64 characters. */
const METADATA_KEY = /^[a-z][a-zA-Z0-9_-]{1,63}$/;

/**
 * The error with its details, made once from what it carries: an ApiError's reason, fields and `info` (and the
 * scalar entries of its REST `data`, which name the same cause: `changeable_until`, `retry_after`); any other
 * ConnectError's reason is its code's, by the rule ApiError's default follows (reasonOfCode: INVALID_ARGUMENT is
 * INVALID_VALUE), so the transport's own refusals (an undecodable body) read as a handler's do. Connect writes
 * them itself: the `grpc-status-details-bin` trailer of gRPC and gRPC-Web (a google.rpc.Status with the error's
 * own code and message), the `details` of a Connect error.
 * An error that already has details (ours, made before, or passed on) is left as it is.
 */
export function withErrorDetails(error: ConnectError): ConnectError {
  if (error.details.length > 0) return error;
  const api = error instanceof ApiError ? error : undefined;
  const reason = api?.reason ?? reasonOfCode(error.code);
  const violations: readonly FieldViolation[] = api?.fieldViolations ?? [];
  error.details.push({ desc: ErrorInfoSchema, value: { reason, domain: ERROR_DOMAIN, metadata: metadataOf(api, violations) } });
  if (violations.length > 0) {
    error.details.push({ desc: BadRequestSchema, value: { fieldViolations: violations.map((v) => ({ field: v.field, description: v.description })) } });
  }
  const retryAfter = retryAfterSeconds(error);
  // A body too large is never "retry later": the same body will never fit.
  if (retryAfter !== undefined && reason !== REASONS.requestTooLarge) {
    error.details.push({ desc: RetryInfoSchema, value: { retryDelay: { seconds: BigInt(retryAfter) } } });
  }
  return error;
}

function metadataOf(api: ApiError | undefined, violations: readonly FieldViolation[]): Record<string, string> {
  const metadata: Record<string, string> = {};
  if (!api) return metadata;
  for (const [key, value] of Object.entries(api.data)) {
    // `reason` is the ErrorInfo's own (in capitals); lists (`allowed`, `unknown`) stay REST's.
    if (key === "reason" || !METADATA_KEY.test(key)) continue;
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") metadata[key] = String(value);
  }
  if (violations.length > 0) metadata.field = violations[0].field;
  return { ...metadata, ...api.info };
}

/**
 * When the caller may try again, as REST's Retry-After says it for the same refusal (the error's `retry-after`
 * metadata, which REST sends as that header): only for RESOURCE_EXHAUSTED and UNAVAILABLE.
 */
function retryAfterSeconds(error: ConnectError): number | undefined {
  if (error.code !== Code.ResourceExhausted && error.code !== Code.Unavailable) return undefined;
  const header = error.metadata.get("retry-after");
  if (header === null || !/^\d+$/.test(header.trim())) return undefined;
  return Number(header.trim());
}
