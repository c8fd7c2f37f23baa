// Connect answers a request body it cannot decode (malformed protobuf, broken gzip) as INTERNAL / HTTP 500, one whose error it cannot quote not at all, and one too large as 429; each is the caller's fault, said as such. Its own errors get the google.rpc details ours carry.
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { errorFromJsonBytes, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { ApiError, REASONS } from "../../domain/errors.js";
import { withErrorDetails } from "./errorDetails.js";
import { rpcErrorAnswer } from "./errorAnswer.js";

/** Messages Connect-ES and connect-node give to undecodable request bodies (serialization.ts, compression.ts, envelope.ts). */
const DECODE_FAILURE = /^(parse binary: |decompression failed$|received compressed envelope, but do not know how to decompress$)/;

/**
 * A decode failure Connect reported as INTERNAL, as the caller's fault: INVALID_ARGUMENT, as connect-go answers it.
 * Anything else as it is. A streaming call meets it while the handler reads its message, inside the interceptors,
 * so the handlers' error mapping (errors.ts) asks here too.
 */
export function asDecodeFailure(error: ConnectError): ConnectError {
  return error.code === Code.Internal && DECODE_FAILURE.test(error.rawMessage)
    ? new ConnectError(`request body could not be decoded: ${error.rawMessage}`, Code.InvalidArgument)
    : error;
}

/** Connect's messages for a body over readMaxBytes (limit-io.ts), with or without the size. */
const TOO_LARGE = /^message size (?:(\d+) )?is larger than configured readMaxBytes (\d+)$/;

/** What a body over the limit is told: that it is too large and what fits, never "retry later". */
function tooLargeText(limit: number | string, size?: number | string): string {
  return `the request body is too large${size === undefined ? "" : ` (${size} bytes)`}: at most ${limit} bytes`;
}

/**
 * A body over readMaxBytes. The code stays RESOURCE_EXHAUSTED, as gRPC servers answer an oversized message and
 * gRPC clients expect; over the Connect protocol the HTTP status is 413 (errorAnswer.ts httpStatusOf), not the 429 the code maps
 * to, which tells an HTTP client to retry later: the same body will never fit.
 */
export function bodyTooLarge(limit: number | string, size?: number | string): ConnectError {
  return new ApiError(Code.ResourceExhausted, tooLargeText(limit, size), { reason: REASONS.requestTooLarge });
}

/** The `grpc-status-details-bin` of `error` with its details, as Connect writes it in gRPC and gRPC-Web trailers. */
function statusDetailsBin(error: ConnectError): string {
  return setTrailerStatus(new Headers(), withErrorDetails(error)).get("grpc-status-details-bin") ?? "";
}

async function bytesOf(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const c of body) chunks.push(c);
  return Buffer.concat(chunks);
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

/**
 * A Connect-protocol error answer (HTTP 500, JSON `{code: "internal", message}`) caused by an undecodable body
 * becomes 400 `invalid_argument`, as connect-go answers it; a gRPC one (trailers `grpc-status: 13`) becomes
 * INVALID_ARGUMENT, which is what the fast unary path (src/platform/transport/fastUnary.ts) answers for the same body, so a
 * call gets one code whether or not it carries a deadline; gRPC-Web's trailers (the body's last frame) the same.
 * An error Connect answered itself, before any interceptor (a body it could not read, a deadline), gets the details
 * every error of ours carries (errorDetails.ts). Other answers pass untouched and unread: the check costs nothing
 * on the success path.
 */
async function reclassify(res: UniversalServerResponse): Promise<UniversalServerResponse> {
  if (res.trailer && res.body && Symbol.asyncIterator in Object(res.body)) {
    return { ...res, body: thenFixTrailer(res.body as AsyncIterable<Uint8Array>, res.trailer) };
  }
  if (/^application\/grpc-web(\+|$)/.test(res.header?.get("content-type") ?? "") && res.body && Symbol.asyncIterator in Object(res.body)) {
    return { ...res, body: withFixedWebTrailer(res.body as AsyncIterable<Uint8Array>) };
  }
  if (res.status === 200 || !res.body || !(Symbol.asyncIterator in Object(res.body))) return res;
  if (!/^application\/json/.test(res.header?.get("content-type") ?? "")) return res;
  const bytes = await bytesOf(res.body as AsyncIterable<Uint8Array>);
  let error: ConnectError;
  try {
    error = errorFromJsonBytes(bytes, undefined, new ConnectError("", Code.Unknown));
  } catch {
    return { ...res, body: once(bytes) };
  }
  const message = error.rawMessage;
  const tooLarge = error.code === Code.ResourceExhausted ? TOO_LARGE.exec(message) : null;
  if (tooLarge) return rewritten(res, 413, bodyTooLarge(tooLarge[2], tooLarge[1]));
  const decodeFailure = asDecodeFailure(error);
  if (decodeFailure !== error) return rewritten(res, 400, decodeFailure);
  return error.details.length > 0 ? { ...res, body: once(bytes) } : rewritten(res, res.status, error);
}

/** The Connect error answer `res` with `error` (and its details) as its body, under `status`. */
function rewritten(res: UniversalServerResponse, status: number, error: ConnectError): UniversalServerResponse {
  const fixed = Buffer.from(errorToJsonBytes(withErrorDetails(error), {}));
  const header = new Headers(res.header);
  header.set("content-length", String(fixed.byteLength));
  return { ...res, status, header, body: once(fixed) };
}

/**
 * What a gRPC error trailer says once fixed, or undefined when it needs nothing (no error, or details already):
 * a decode failure's INTERNAL becomes INVALID_ARGUMENT, a too large body's RESOURCE_EXHAUSTED says what fits, and
 * every error gets its `grpc-status-details-bin`.
 */
function reclassified(
  status: string | null,
  encodedMessage: string | null,
  hasDetails: boolean,
): { status: string; message: string; details: string } | undefined {
  if (status === null || status === "0" || hasDetails) return undefined;
  let message: string;
  try {
    message = decodeURIComponent(encodedMessage ?? "");
  } catch {
    message = encodedMessage ?? "";
  }
  const code = Number(status) in Code ? (Number(status) as Code) : Code.Unknown;
  const tooLarge = code === Code.ResourceExhausted ? TOO_LARGE.exec(message) : null;
  const error = tooLarge
    ? bodyTooLarge(tooLarge[2], tooLarge[1])
    : asDecodeFailure(new ConnectError(message, code));
  return { status: String(error.code), message: encodeURIComponent(error.rawMessage), details: statusDetailsBin(error) };
}

/** Passes the body on, then (before the adapter writes the trailers) fixes an error's trailers (reclassified). */
async function* thenFixTrailer(body: AsyncIterable<Uint8Array>, trailer: Headers): AsyncIterable<Uint8Array> {
  yield* body;
  const fixed = reclassified(trailer.get("grpc-status"), trailer.get("grpc-message"), trailer.has("grpc-status-details-bin"));
  if (!fixed) return;
  trailer.set("grpc-status", fixed.status);
  trailer.set("grpc-message", fixed.message);
  trailer.set("grpc-status-details-bin", fixed.details);
}

/** gRPC-Web's trailer frame: flag 0x80, a 4-byte length, then "name: value" lines ending in CRLF. */
const TRAILER_FLAG = 0x80;

/**
 * Passes a gRPC-Web body on, with a decode failure's trailer frame rewritten. Connect writes every frame as a
 * chunk of its own; a chunk that is not one whole trailer frame passes unchanged.
 */
async function* withFixedWebTrailer(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  for await (const chunk of body) yield fixedWebTrailer(chunk) ?? chunk;
}

function fixedWebTrailer(chunk: Uint8Array): Uint8Array | undefined {
  const frame = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (frame.length < 5 || frame[0] !== TRAILER_FLAG || frame.readUInt32BE(1) !== frame.length - 5) return undefined;
  const lines = frame.subarray(5).toString("utf8").split("\r\n").filter((l) => l !== "");
  const value = (name: string) => {
    const line = lines.find((l) => l.slice(0, l.indexOf(":")).trim().toLowerCase() === name);
    return line === undefined ? null : line.slice(line.indexOf(":") + 1).trim();
  };
  const fixed = reclassified(value("grpc-status"), value("grpc-message"), value("grpc-status-details-bin") !== null);
  if (!fixed) return undefined;
  const rest = lines.filter((l) => !/^grpc-(status|message)\s*:/i.test(l));
  return trailerFrame([`grpc-status: ${fixed.status}`, `grpc-message: ${fixed.message}`, `grpc-status-details-bin: ${fixed.details}`, ...rest]);
}

function trailerFrame(lines: string[]): Buffer {
  const text = Buffer.from(lines.map((l) => `${l}\r\n`).join(""), "utf8");
  const frame = Buffer.allocUnsafe(5 + text.length);
  frame[0] = TRAILER_FLAG;
  frame.writeUInt32BE(text.length, 1);
  text.copy(frame, 5);
  return frame;
}

/**
 * The answer to a gRPC or gRPC-Web call whose decode failure Connect could not report. Connect percent-encodes
 * grpc-message with encodeURIComponent, which throws on a lone surrogate, and V8 names the first character of a
 * body that is not JSON by one UTF-16 unit: a gRPC-JSON body starting with an emoji made Connect's handler fail,
 * the stream was reset without a status and connect-node wrote an unstructured line to stderr. The failure's own
 * message is gone by then; the request's codec says where it came from, so the answer is INVALID_ARGUMENT.
 */
function unreportableDecodeFailure(req: Parameters<UniversalHandler>[0]): UniversalServerResponse | undefined {
  const type = (req.header.get("content-type") ?? "").toLowerCase();
  if (!type.startsWith("application/grpc")) return undefined;
  const answer = rpcErrorAnswer(type, new ConnectError("request body could not be decoded", Code.InvalidArgument));
  return answer.trailers
    ? { status: answer.status, header: new Headers(answer.headers), trailer: new Headers(answer.trailers) }
    : { status: answer.status, header: new Headers(answer.headers), body: once(answer.body) };
}

/** Wraps every handler registered on the router so far; call it last in `routes`. */
export function reclassifyDecodeErrors(router: ConnectRouter): void {
  const handlers = router.handlers as UniversalHandler[];
  for (let i = 0; i < handlers.length; i++) {
    const inner = handlers[i];
    const outer = async (req: Parameters<UniversalHandler>[0]) => {
      let res: UniversalServerResponse;
      try {
        res = await inner(req);
      } catch (err) {
        const answer = err instanceof URIError ? unreportableDecodeFailure(req) : undefined;
        if (answer) return answer;
        throw err;
      }
      return reclassify(res);
    };
    handlers[i] = Object.assign(outer, inner);
  }
}
