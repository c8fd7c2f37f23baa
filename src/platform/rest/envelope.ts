// The JSON envelope every /api/v1 answer is wrapped in: success, message, data, status.
import type { ServerResponse } from "node:http";
import { chooseCoding, COMPRESS_MIN_BYTES, compressedOnce, compressNow, varyOnEncoding } from "../transport/compression.js";
import { endAfterReads } from "../transport/reply.js";
import { STATUS_NAMES } from "./errors.js";

/** scheduling-api.md's answer to a path (or a method on it) the API does not have, word for word. */
export const ENDPOINT_NOT_FOUND = "endpoint does not exists";
/** A path whose percent-encoding does not decode (`%ZZ`, `%FF`): it names nothing, on any route. */
export const MALFORMED_PATH = "malformed percent-encoding in the path";

export interface Envelope {
  success: boolean;
  message: string;
  data: unknown;
  status: number | string;
}

export function envelope(httpStatus: number, message: string, data: unknown): Envelope {
  const success = httpStatus < 400;
  return { success, message, data: data ?? {}, status: success ? httpStatus : (STATUS_NAMES[httpStatus] ?? String(httpStatus)) };
}

interface Body {
  text: string;
  bytes: number;
  /** Made once for frozen data and handed out again: its compressed forms are kept with it. */
  shared: boolean;
}

/**
 * Envelope bodies of frozen data (src/domain/frozen.ts: a reply made once and handed out again, such as GetUser's or a
 * list page shared by concurrent readers), serialised once per status and message instead of once per answer.
 */
const frozenBodies = new WeakMap<object, Map<string, Body>>();

/** The envelope as sent: for frozen data the text made the first time, else made now; the same text either way. */
export function envelopeBody(httpStatus: number, message: string, data: unknown): Body {
  const make = (): Body => {
    const text = JSON.stringify(envelope(httpStatus, message, data));
    return { text, bytes: Buffer.byteLength(text), shared: false };
  };
  if (typeof data !== "object" || data === null || !Object.isFrozen(data)) return make();
  let bodies = frozenBodies.get(data);
  if (!bodies) frozenBodies.set(data, (bodies = new Map()));
  const key = `${httpStatus} ${message}`;
  let body = bodies.get(key);
  if (!body) bodies.set(key, (body = { ...make(), shared: true }));
  return body;
}

const JSON_TYPE = "application/json; charset=utf-8";

export function sendEnvelope(res: ServerResponse, httpStatus: number, message: string, data: unknown = {}): void {
  if (res.headersSent) return;
  // Straight to node:http: Express's send() would only re-derive the same two headers (and check freshness).
  const body = envelopeBody(httpStatus, message, data);
  // Vary on every envelope, small ones too: the same URL may answer 1 KB or more, compressed, another time. Added
  // to what is set already (CORS varies on Origin), since writeHead's headers replace those of the same name.
  const vary = varyOnEncoding(res.getHeader("vary"));
  const coding = body.bytes >= COMPRESS_MIN_BYTES ? chooseCoding(res.req?.headers["accept-encoding"]) : undefined;
  if (coding === undefined) {
    endAfterReads(res, httpStatus, { "Content-Type": JSON_TYPE, "Content-Length": body.bytes, Vary: vary }, body.text);
    return;
  }
  // A shared body (frozen data) is compressed once per coding and kept with it.
  const packed = body.shared ? compressedOnce(body, coding, () => compressNow(body.text, coding)) : compressNow(body.text, coding);
  endAfterReads(res, httpStatus, { "Content-Type": JSON_TYPE, "Content-Length": packed.byteLength, "Content-Encoding": coding, Vary: vary }, packed);
}
