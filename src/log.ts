// The service's one logger: pino JSON lines on stderr (LOG_LEVEL), with secret-bearing keys redacted wherever they appear.
import os from "node:os";
import pino from "pino";

/**
 * Request lines are collected and written 4 KB or 100 ms at a time instead of one write(2) per request (a tenth
 * of a GET /user's CPU); warnings, errors and lifecycle lines are written at once, and what is still collected
 * is written when the process exits. Writes stay synchronous, so lines are never reordered.
 */
const destination = pino.destination({ dest: 2, sync: true, minLength: 4096, periodicFlush: 100 });
process.on("exit", () => destination.flushSync());

export const logger = pino(
  {
    level: "info",
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    // Request lines are built field by field and never carry these; the list guards any later `logger.x({...})`.
    hooks: {
      logMethod(args, method, level) {
        method.apply(this, args);
        if (level >= 40) destination.flushSync();
      },
    },
    redact: {
      paths: ["api_key", "*.api_key", "private_key", "*.private_key", "headers", "*.headers", "authorization", "*.authorization"],
      censor: "[redacted]",
    },
  },
  destination,
);

type Level = "info" | "warn" | "error";

/**
 * Start and stop lines are written whatever LOG_LEVEL says: supervisors and the test harness read the port from them.
 * The child is made per call because a change of the parent's level reaches the children it already has.
 */
export function logLifecycle(msg: string, fields: Record<string, unknown> = {}): void {
  logger.child({}, { level: "info" }).info({ msg, ...fields });
  // The "listening" line must be out before anyone waits for it.
  destination.flushSync();
}

/** One event line with the message first, so `"msg":"listening"` precedes `"port"` for whoever reads the stream. */
export function logEvent(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  logger[level]({ msg, ...fields });
}

export function errorText(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

/** The one line every request leaves (src/server/observe.ts); its fields are chosen there and never carry a secret. */
export interface RequestLine {
  msg: "request";
  request_id: string;
  protocol: string;
  http_version: string;
  method: string | undefined;
  route: string;
  status: string | number;
  http_status: number;
  duration_ms: number;
  aborted?: true;
}

const LINE_BASE = `,"pid":${process.pid},"hostname":${JSON.stringify(os.hostname())},`;

/**
 * Writes a request line at info, in the same shape and to the same destination as pino's lines. Request lines
 * are written by hand because pino's generic path (hooks, redaction of every object, serializers) cost more than
 * the rest of a GET /user's logging together; a typed line with known fields needs none of it. Lines of server
 * faults go through pino at error (they are rare and must be flushed at once).
 */
export function logRequest(line: RequestLine): void {
  if (!logger.isLevelEnabled("info")) return;
  destination.write(`{"level":"info","time":"${new Date().toISOString()}"${LINE_BASE}${JSON.stringify(line).slice(1)}\n`);
}
