// POST /admin/clock (CLOCK_CONTROL=on, for tests): moves the service's clock forward by `advance_ms`, so a test sees reminders fall due, keys expire and caches run out without waiting for them; off, the path does not exist (404).
import type { Request, RequestHandler, Response } from "express";
import { sameSecret } from "../../domain/apiKey.js";
import type { MovableClock } from "../../domain/clock.js";
import { sendEnvelope } from "../rest/envelope.js";

/** The path, outside /api/v1: no client's API, and only there while CLOCK_CONTROL is on. */
export const CLOCK_CONTROL_PATH = "/admin/clock";

/** A body is `{"advance_ms": N}`; anything longer is not one. */
const BODY_MAX_BYTES = 1024;
/** At most a year a move: far past any reminder, expiry or window, and nowhere near a Date's range. */
const ADVANCE_MAX_MS = 366 * 86_400_000;

async function readBody(req: Request): Promise<string | undefined> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_MAX_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The handler of POST /admin/clock: checks X-ADMIN-TOKEN like the admin operations, moves `clock` (whose listeners
 * wake the outbox: what fell due runs at once) and answers the time it now reads.
 */
export function clockControl(clock: MovableClock, adminToken: string | undefined): RequestHandler {
  return (req: Request, res: Response) => {
    void (async () => {
      if (!adminToken) return sendEnvelope(res, 403, "admin api is disabled");
      if (!sameSecret(String(req.headers["x-admin-token"] ?? ""), adminToken)) return sendEnvelope(res, 401, "admin token is missing or invalid");
      const text = await readBody(req);
      let body: unknown;
      try {
        body = text === undefined ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      const advance = (body as { advance_ms?: unknown } | undefined)?.advance_ms;
      if (advance === undefined) return sendEnvelope(res, 400, "missing params", { advance_ms: [] });
      if (typeof advance !== "number" || !Number.isInteger(advance) || advance < 0 || advance > ADVANCE_MAX_MS) {
        return sendEnvelope(res, 422, `advance_ms must be a whole number of milliseconds from 0 to ${ADVANCE_MAX_MS}`);
      }
      clock.advance(advance);
      sendEnvelope(res, 200, "clock moved", { now: clock.now().toISOString(), ahead_ms: clock.aheadMs });
    })().catch(() => sendEnvelope(res, 400, "the request could not be read"));
  };
}
