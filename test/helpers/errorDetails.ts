// What a program reads from an RPC error's google.rpc details (callers.md "Errors programs can read"), as one plain object to compare.
import type { ConnectError } from "@connectrpc/connect";
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";

export interface ReadDetails {
  /** How many ErrorInfo details there are: always exactly one. */
  infos: number;
  reason: string | undefined;
  domain: string | undefined;
  metadata: Record<string, string>;
  /** BadRequest's field violations, or undefined without a BadRequest. */
  violations: Array<{ field: string; description: string }> | undefined;
  /** RetryInfo's retry_delay in seconds, or undefined without a RetryInfo. */
  retrySeconds: number | undefined;
}

/** The details of `err` as a Connect client (findDetails) reads them; grpc-js errors go through grpcJsError first. */
export function detailsOf(err: ConnectError): ReadDetails {
  const infos = err.findDetails(ErrorInfoSchema);
  const bad = err.findDetails(BadRequestSchema)[0];
  const retry = err.findDetails(RetryInfoSchema)[0];
  return {
    infos: infos.length,
    reason: infos[0]?.reason,
    domain: infos[0]?.domain,
    metadata: { ...infos[0]?.metadata },
    violations: bad?.fieldViolations.map((v) => ({ field: v.field, description: v.description })),
    retrySeconds: retry ? Number(retry.retryDelay?.seconds ?? 0n) + (retry.retryDelay?.nanos ?? 0) / 1e9 : undefined,
  };
}
