// The JSON envelope every /api/v1 answer is wrapped in: success, message, data, status.
import type { Response } from "express";
import { endAfterReads } from "../reply.js";
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

export function sendEnvelope(res: Response, httpStatus: number, message: string, data: unknown = {}): void {
  if (res.headersSent) return;
  // Straight to node:http: Express's send() would only re-derive the same two headers (and check freshness).
  const body = JSON.stringify(envelope(httpStatus, message, data));
  endAfterReads(res, httpStatus, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body) }, body);
}
