// The JSON envelope every /api/v1 answer is wrapped in: success, message, data, status.
import type { Response } from "express";
import { endAfterReads } from "../transport/reply.js";
import { STATUS_NAMES } from "./errors.js";

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
    return { text, bytes: Buffer.byteLength(text) };
  };
  if (typeof data !== "object" || data === null || !Object.isFrozen(data)) return make();
  let bodies = frozenBodies.get(data);
  if (!bodies) frozenBodies.set(data, (bodies = new Map()));
  const key = `${httpStatus} ${message}`;
  let body = bodies.get(key);
  if (!body) bodies.set(key, (body = make()));
  return body;
}

export function sendEnvelope(res: Response, httpStatus: number, message: string, data: unknown = {}): void {
  if (res.headersSent) return;
  // Straight to node:http: Express's send() would only re-derive the same two headers (and check freshness).
  const body = envelopeBody(httpStatus, message, data);
  endAfterReads(res, httpStatus, { "Content-Type": "application/json; charset=utf-8", "Content-Length": body.bytes }, body.text);
}
