// The service's one logger: pino JSON lines on stderr (LOG_LEVEL), with secret-bearing keys redacted wherever they appear.
import { systemClock } from "../domain/clock.js";
import { writeSync } from "node:fs";
import os from "node:os";
import pino from "pino";

/** How many bytes of lines are collected before they are written, and the longest they wait (ms). */
const FLUSH_AT_BYTES = 48 * 1024;
const FLUSH_EVERY_MS = 100;
/** How often a full pipe is tried again while lines wait for it (ms). */
const RETRY_EVERY_MS = 5;
/** Request lines waiting for a slow reader, at most (bytes); past it they are dropped and counted. */
const MAX_WAITING_BYTES = 4 * 1024 * 1024;

/**
 * Standard error, written 48 KB or 100 ms at a time instead of one write(2) per request (a tenth of a GET /user's
 * CPU; at 4 KB a write of every ~18 lines was still 5-7% of a gRPC GetUser's profile under load, since each wakes
 * the reader of the pipe), without ever blocking the event loop: a write that finds the pipe full (EAGAIN) leaves the rest waiting, in
 * order, and it is tried again a few milliseconds later, while the service goes on serving. A synchronous write
 * that waited for a slow reader stalled every request behind it (8–11% of a loaded bench's samples in `writeBuffer`).
 * What waits is bounded: past MAX_WAITING_BYTES request lines (`writeDroppable`) are dropped and a line says how
 * many; other lines (events, warnings, errors) always wait. Everything still waiting is written, waiting for the
 * reader if it must, when the process exits (a stop, or a crash's last error) and for lifecycle lines (`flushSync`).
 *
 * Why not pino.destination (sonic-boom), which did this before: with a minimum length it measures the byte
 * length of everything collected so far on every line, which flattens the growing string each time, and turns
 * the text into bytes only at the write; in its synchronous mode it slept 100 ms per EAGAIN. Here each line is
 * encoded once, straight into one reused buffer. Measured alone (300,000 request lines into a pipe): 4.2–4.5 µs
 * of CPU per line before, 1.6–1.8 now.
 */
export class LineBuffer {
  private readonly buf = Buffer.allocUnsafe(64 * 1024);
  private used = 0;
  /** Collected bytes handed over for writing, oldest first; the first is written from `offset` on. */
  private readonly waiting: Buffer[] = [];
  private offset = 0;
  private waitingBytes = 0;
  private retry: NodeJS.Timeout | undefined;
  /** The flush a collected line waits for, at most FLUSH_EVERY_MS after it. */
  private flushing: NodeJS.Timeout | undefined;
  private dropped = 0;
  private readonly pause = new Int32Array(new SharedArrayBuffer(4));

  constructor(
    private readonly fd: number,
    private readonly options: { maxWaitingBytes?: number; droppedLine?: (count: number) => string } = {},
  ) {}

  /** A line that must not be lost (it waits, however long the queue). */
  write(text: string): boolean {
    // UTF-8 takes at most 3 bytes per UTF-16 unit, so a line that passes this check always fits whole.
    if (text.length * 3 > this.buf.length - this.used) {
      this.collect();
      if (text.length * 3 > this.buf.length) {
        this.hand(Buffer.from(text, "utf8"));
        this.pump();
        return true;
      }
    }
    this.used += this.buf.write(text, this.used, "utf8");
    if (this.used >= FLUSH_AT_BYTES) this.flush();
    // Armed by a line rather than ticking forever: an idle service then wakes for nothing (10 wakeups a second less).
    else this.flushing ??= setTimeout(this.flushDue, FLUSH_EVERY_MS).unref();
    return true;
  }

  private readonly flushDue = (): void => {
    this.flushing = undefined;
    this.flush();
  };

  /** A line that may be dropped (and counted) while more than the bound waits for a slow reader. */
  writeDroppable(text: string): void {
    if (this.waitingBytes >= (this.options.maxWaitingBytes ?? MAX_WAITING_BYTES)) {
      this.dropped++;
      return;
    }
    if (this.dropped > 0 && this.options.droppedLine) {
      const count = this.dropped;
      this.dropped = 0;
      this.write(this.options.droppedLine(count));
    }
    this.write(text);
  }

  /** Writes what is collected as far as the reader takes it now; the rest waits (never blocks). */
  flush(cb?: (err?: Error) => void): void {
    this.collect();
    this.pump();
    cb?.();
  }

  /** Writes everything collected and waiting, waiting for the reader as long as it takes (exit, lifecycle lines). */
  flushSync(): void {
    this.collect();
    this.pump(true);
  }

  /** Bytes handed over and not written yet. */
  get waitingLength(): number {
    return this.waitingBytes;
  }

  private collect(): void {
    if (this.used === 0) return;
    this.hand(Buffer.from(this.buf.subarray(0, this.used)));
    this.used = 0;
  }

  private hand(bytes: Buffer): void {
    this.waiting.push(bytes);
    this.waitingBytes += bytes.length;
  }

  /**
   * Writes waiting bytes in order. A full non-blocking pipe (EAGAIN, EBUSY) is tried again RETRY_EVERY_MS later,
   * or, with `block`, waited out a millisecond at a time. Any other failure (standard error closed) drops the
   * lines: a service that cannot log keeps serving.
   */
  private pump(block = false): void {
    // A retry is due: the pipe was full a moment ago.
    if (this.retry !== undefined && !block) return;
    while (this.waiting.length > 0) {
      const head = this.waiting[0];
      try {
        const n = writeSync(this.fd, head, this.offset, head.length - this.offset);
        this.offset += n;
        this.waitingBytes -= n;
        if (this.offset === head.length) {
          this.waiting.shift();
          this.offset = 0;
        }
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== "EAGAIN" && code !== "EBUSY") {
          this.waiting.length = 0;
          this.offset = 0;
          this.waitingBytes = 0;
          return;
        }
        if (block) Atomics.wait(this.pause, 0, 0, 1);
        else {
          this.retry ??= setTimeout(() => {
            this.retry = undefined;
            this.pump();
          }, RETRY_EVERY_MS).unref();
          return;
        }
      }
    }
  }
}

const LINE_BASE = `,"pid":${process.pid},"hostname":${JSON.stringify(os.hostname())},`;

const destination = new LineBuffer(2, {
  droppedLine: (count) => `{"level":"warn","time":"${systemClock.now().toISOString()}"${LINE_BASE}"msg":"request lines dropped: standard error was not read fast enough","dropped":${count}}\n`,
});
// Opening process.stderr makes libuv put a pipe on descriptor 2 in non-blocking mode: a full pipe then answers EAGAIN
// instead of stopping the process in write(2). (A file never fills; a terminal is left as it is.)
void process.stderr.fd;
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
        // Out now if the reader takes them; never waiting for it (the exit writes whatever is left).
        if (level >= 40) destination.flush();
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

/** The one line every request leaves (src/platform/http/observe.ts); its fields are chosen there and never carry a secret. */
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

/** The time as pino's isoTime writes it; under load many lines share a millisecond, and so the string. */
let lastMs = NaN;
let lastIso = "";
function isoNow(): string {
  const ms = systemClock.nowMs();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}


/**
 * Writes a request line at info, in the same shape and to the same destination as pino's lines. Request lines
 * are written by hand because pino's generic path (hooks, redaction of every object, serializers) cost more than
 * the rest of a GET /user's logging together; a typed line with known fields needs none of it. Lines of server
 * faults go through pino at error (they are rare and must be flushed at once).
 */
export function logRequest(line: RequestLine): void {
  if (!logger.isLevelEnabled("info")) return;
  destination.writeDroppable(requestLineText(line));
}

/** A line's fields from `protocol` to `http_status`, and their text: the same for nearly every request of a route. */
interface Middle {
  protocol: string;
  http_version: string;
  method: string | undefined;
  status: string | number;
  http_status: number;
  text: string;
}

/** The last middle written for each route (routes are patterns and RPC names: a bounded set). */
const middles = new Map<string, Middle>();

function middleOf(line: RequestLine): string {
  const last = middles.get(line.route);
  if (last && last.protocol === line.protocol && last.http_version === line.http_version && last.method === line.method && last.status === line.status && last.http_status === line.http_status) {
    return last.text;
  }
  const method = line.method === undefined ? "" : `"method":${JSON.stringify(line.method)},`;
  const text = `"protocol":${JSON.stringify(line.protocol)},"http_version":${JSON.stringify(line.http_version)},${method}"route":${JSON.stringify(line.route)},"status":${JSON.stringify(line.status)},"http_status":${JSON.stringify(line.http_status)},`;
  if (middles.size < MAX_ROUTES) middles.set(line.route, { protocol: line.protocol, http_version: line.http_version, method: line.method, status: line.status, http_status: line.http_status, text });
  return text;
}

/** Routes whose middles are kept at most (the route table and the RPCs are far fewer). */
const MAX_ROUTES = 1000;

/**
 * The line as `JSON.stringify` would write it (keys in RequestLine's order, an undefined method left out),
 * assembled from parts: stringifying the whole object walked its properties and escaped its strings on every
 * request, and this line is written once per call (a gRPC GetUser's largest string work). The fields that
 * repeat from request to request (`middleOf`) are escaped once per route.
 */
function requestLineText(line: RequestLine): string {
  const duration = Number.isFinite(line.duration_ms) ? String(line.duration_ms) : "null";
  const aborted = line.aborted ? `,"aborted":true` : "";
  return `{"level":"info","time":"${isoNow()}"${LINE_BASE}"msg":"request","request_id":${JSON.stringify(line.request_id)},${middleOf(line)}"duration_ms":${duration}${aborted}}\n`;
}

/** For the test that compares `requestLineText` with JSON.stringify of the same line. */
export const requestLineTextForTest = requestLineText;
