// An RPC refused before any handler runs (a cross-origin write, a body Connect could not report), answered as the caller's protocol answers an error, with the google.rpc details every error carries.
import { Code, ConnectError } from "@connectrpc/connect";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { codeToHttpStatus, endStreamFlag, endStreamToJson, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { trailerFlag, trailerSerialize } from "@connectrpc/connect/protocol-grpc-web";
import { ApiError, REASONS } from "../../domain/errors.js";
import { withErrorDetails } from "./errorDetails.js";
import { specGrpcMessage } from "./grpcMessage.js";

/** The HTTP status of a Connect-protocol error answer: Connect's table, except 413 for a body too large. */
export function httpStatusOf(error: ConnectError, fromCode: (code: Code) => number): number {
  return error instanceof ApiError && error.reason === REASONS.requestTooLarge ? 413 : fromCode(error.code);
}

export interface RpcErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
  /** gRPC's status, sent as trailers after the (empty) body. */
  trailers?: Record<string, string>;
}

/** The grpc-status, grpc-message and grpc-status-details-bin (and the error's metadata) of `error`, as one object. */
function statusHeaders(error: ConnectError): Record<string, string> {
  const headers: Record<string, string> = {};
  setTrailerStatus(new Headers(), error).forEach((v, k) => {
    headers[k] = v;
  });
  return headers;
}

/**
 * The answer to a call of the protocol `contentType` names that fails with `error`, as the client of that protocol
 * reads an error: gRPC its status trailers after an empty body (HTTP 200, grpc-message in the gRPC spec's encoding;
 * a "trailers-only" head would need END_STREAM on the HEADERS frame, which node:http2's response objects do not
 * send, and grpc-js then read no details), gRPC-Web a body of one trailer frame (HTTP 200), a Connect stream one end-of-stream message (HTTP
 * 200), and anything else a Connect unary error (its JSON, under the code's HTTP status). Why not HTTP 403 with a
 * JSON body for all: gRPC and gRPC-Web clients read only "HTTP 403" from it, without code, message or details.
 */
export function rpcErrorAnswer(contentType: string, error: ConnectError): RpcErrorAnswer {
  const detailed = withErrorDetails(error);
  const type = contentType.toLowerCase();
  const json = /^application\/[\w-]+\+json/.test(type);
  if (type.startsWith("application/grpc-web")) {
    const trailer = trailerSerialize(setTrailerStatus(new Headers(), detailed));
    return { status: 200, headers: { "content-type": json ? "application/grpc-web+json" : "application/grpc-web+proto" }, body: encodeEnvelope(trailerFlag, trailer) };
  }
  if (type.startsWith("application/grpc")) {
    const trailers = statusHeaders(detailed);
    trailers["grpc-message"] = specGrpcMessage(trailers["grpc-message"] ?? "");
    return { status: 200, headers: { "content-type": json ? "application/grpc+json" : "application/grpc+proto" }, body: new Uint8Array(0), trailers };
  }
  if (type.startsWith("application/connect+")) {
    const end = new TextEncoder().encode(JSON.stringify(endStreamToJson(new Headers(), detailed, {})));
    return { status: 200, headers: { "content-type": json ? "application/connect+json" : "application/connect+proto" }, body: encodeEnvelope(endStreamFlag, end) };
  }
  const headers: Record<string, string> = { "content-type": "application/json" };
  detailed.metadata.forEach((v, k) => {
    headers[k] = v;
  });
  return { status: httpStatusOf(detailed, codeToHttpStatus), headers, body: errorToJsonBytes(detailed, {}) };
}

/** What an error answer is written to: node:http's and node:http2's responses, and StreamExchange, alike. */
export interface ErrorAnswerTarget {
  statusCode: number;
  setHeader(name: string, value: string | number): unknown;
  addTrailers(trailers: Record<string, string>): void;
  end(body: Uint8Array): unknown;
}

/** Writes `rpcErrorAnswer`'s answer: its status and headers, then its body and, for gRPC, its status trailers. */
export function sendRpcErrorAnswer(res: ErrorAnswerTarget, answer: RpcErrorAnswer): void {
  res.statusCode = answer.status;
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  if (answer.trailers) res.addTrailers(answer.trailers);
  else res.setHeader("Content-Length", answer.body.byteLength);
  res.end(answer.body);
}
