// Re-encodes the grpc-message of HTTP/2 answers the way the gRPC spec (and grpc-go, grpc-java) write it.
import type http2 from "node:http2";

type NodeHeaders = Record<string, string | string[] | number | undefined>;

/**
 * gRPC percent-encodes only bytes outside printable ASCII, and "%". Connect encodes with encodeURIComponent, and
 * grpc-js decodes with decodeURI, which leaves "%3A" and "%2C" in place: a grpc-js caller would read
 * "missing params%3A user.url". Text that was never valid percent-encoding is passed on unchanged.
 */
export function specGrpcMessage(encoded: string): string {
  let text: string;
  try {
    text = decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
  return text.replace(/[^\x20-\x24\x26-\x7e]+/g, (run) => encodeURIComponent(run));
}

/** Rewrites a grpc-message among `headers` (if there is one) into the spec's encoding. */
export function respec(headers: NodeHeaders | undefined): void {
  const message = headers?.["grpc-message"];
  if (headers && typeof message === "string") headers["grpc-message"] = specGrpcMessage(message);
}

/** Wraps an HTTP/2 handler so grpc-message leaves in the spec's encoding, in headers (trailers-only) and trailers. */
export function withSpecGrpcMessage(
  handler: (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void,
): (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void {
  return (req, res) => {
    const writeHead = res.writeHead.bind(res) as (status: number, headers?: NodeHeaders) => http2.Http2ServerResponse;
    res.writeHead = ((status: number, headers?: NodeHeaders) => {
      respec(headers);
      return writeHead(status, headers);
    }) as typeof res.writeHead;
    const addTrailers = res.addTrailers.bind(res);
    res.addTrailers = (trailers) => {
      respec(trailers as NodeHeaders);
      addTrailers(trailers);
    };
    handler(req, res);
  };
}
