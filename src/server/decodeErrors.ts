// Connect answers a request body it cannot decode (malformed protobuf, broken gzip) as INTERNAL / HTTP 500; it is the caller's fault.
import type { ConnectRouter } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";

/** Messages Connect-ES and connect-node give to undecodable request bodies (serialization.ts, compression.ts, envelope.ts). */
const DECODE_FAILURE = /^(parse binary: |decompression failed$|received compressed envelope, but do not know how to decompress$)/;

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
 * INVALID_ARGUMENT, which is what the fast unary path (src/server/fastUnary.ts) answers for the same body, so a
 * call gets one code whether or not it carries a deadline. Other answers pass untouched and unread: the check
 * costs nothing on the success path. gRPC-Web carries its trailers inside the body and keeps INTERNAL.
 */
async function reclassify(res: UniversalServerResponse): Promise<UniversalServerResponse> {
  if (res.trailer && res.body && Symbol.asyncIterator in Object(res.body)) {
    return { ...res, body: thenFixTrailer(res.body as AsyncIterable<Uint8Array>, res.trailer) };
  }
  if (res.status !== 500 || !res.body || !(Symbol.asyncIterator in Object(res.body))) return res;
  if (!/^application\/json/.test(res.header?.get("content-type") ?? "")) return res;
  const bytes = await bytesOf(res.body as AsyncIterable<Uint8Array>);
  let error: { code?: unknown; message?: unknown } | undefined;
  try {
    error = JSON.parse(bytes.toString("utf8")) as { code?: unknown; message?: unknown };
  } catch {
    error = undefined;
  }
  if (error?.code !== "internal" || typeof error.message !== "string" || !DECODE_FAILURE.test(error.message)) {
    return { ...res, body: once(bytes) };
  }
  const fixed = Buffer.from(JSON.stringify({ code: "invalid_argument", message: `request body could not be decoded: ${error.message}` }));
  const header = new Headers(res.header);
  header.set("content-length", String(fixed.byteLength));
  return { ...res, status: 400, header, body: once(fixed) };
}

/** Passes the body on, then (before the adapter writes the trailers) turns a decode failure's INTERNAL into INVALID_ARGUMENT. */
async function* thenFixTrailer(body: AsyncIterable<Uint8Array>, trailer: Headers): AsyncIterable<Uint8Array> {
  yield* body;
  const encoded = trailer.get("grpc-message");
  if (trailer.get("grpc-status") !== "13" || encoded === null) return;
  let message: string;
  try {
    message = decodeURIComponent(encoded);
  } catch {
    return;
  }
  if (!DECODE_FAILURE.test(message)) return;
  trailer.set("grpc-status", "3");
  trailer.set("grpc-message", encodeURIComponent(`request body could not be decoded: ${message}`));
}

/** Wraps every handler registered on the router so far; call it last in `routes`. */
export function reclassifyDecodeErrors(router: ConnectRouter): void {
  const handlers = router.handlers as UniversalHandler[];
  for (let i = 0; i < handlers.length; i++) {
    const inner = handlers[i];
    const outer = async (req: Parameters<UniversalHandler>[0]) => reclassify(await inner(req));
    handlers[i] = Object.assign(outer, inner);
  }
}
