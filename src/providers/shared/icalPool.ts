// The calendar readers: a few worker threads that parse and expand calendars off the event loop, each read under the caller's deadline and a memory cap, shared out so one host cannot take them all.
import os from "node:os";
import { Worker } from "node:worker_threads";
import { ProviderError } from "./types.js";
import type { ReadAnswer, ReadJob } from "./icalRead.js";

/*
 * Why threads. Parsing and expanding a calendar is computation: a hostile feed (thousands of daily series, tens of
 * thousands of zone definitions) once held the event loop for minutes, and with it /healthz and every other host.
 * In a worker it holds only that worker, and only until the read's deadline (CALENDAR_TIMEOUT_MS, network and
 * computation together): then the worker is terminated, whatever ical.js is doing, and a fresh one takes its
 * place. V8's heap limits of the worker (resourceLimits) stop a read that needs more memory than READERS.memoryMb
 * before it can grow the process.
 *
 * Why a pool of our own and not piscina: the one rule that matters here is fairness between hosts (a host's reads
 * take at most all but one reader, and at most READERS.queuedPerOwner of them wait), which a general pool's queue
 * does not know; termination on abort and resourceLimits are a few lines each with node:worker_threads.
 */
export const READERS = {
  /** Worker threads; two on a machine of two cores (the event loop keeps one to itself when both read). */
  threads: Math.max(2, Math.min(4, os.availableParallelism() - 1)),
  /** Heap of one reader (V8 old and young generations): what reading one calendar may take. */
  memoryMb: 64,
  /** Reads of one host that may wait for a reader; more at once fail at once. */
  queuedPerOwner: 8,
} as const;

const here = import.meta.url;

/**
 * A reader thread running icalWorker, next to this module: the built JavaScript, or (npm start and the tests run the
 * TypeScript through tsx) a two-line boot that registers tsx in the thread first, since a worker does not inherit
 * the loader hooks `--import tsx` registered in the main thread (privatenumber/tsx#354).
 */
function startWorker(memoryMb: number): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: Math.max(4, Math.round(memoryMb / 8)) };
  if (!here.endsWith(".ts")) return new Worker(new URL("./icalWorker.js", here), { resourceLimits });
  const module = JSON.stringify(new URL("./icalWorker.ts", here).href);
  const boot = `import("tsx/esm/api").then(({ register }) => { register(); return import(${module}); });`;
  return new Worker(boot, { eval: true, execArgv: [], resourceLimits });
}

interface Task {
  job: ReadJob;
  owner: string;
  timeoutMs: number;
  signal: AbortSignal;
  resolve(answer: { spans: Float64Array; warnings: string[] }): void;
  reject(err: Error): void;
  onAbort(): void;
}

interface Reader {
  worker: Worker;
  task: Task | null;
  /** Whether it ever answered: one that fails as it starts is not replaced at once (that would loop). */
  answered: boolean;
}

export class CalendarReaders {
  private readonly readers = new Set<Reader>();
  private readonly queue: Task[] = [];
  private readonly running = new Map<string, number>();

  /** Every reader is started at once, and replaced as soon as it is stopped: a read never waits for a thread to start. */
  constructor(private readonly opts: { threads: number; memoryMb: number; queuedPerOwner: number } = READERS) {
    this.fill();
  }

  private fill(): void {
    while (!this.closed && this.readers.size < this.opts.threads) this.spawn();
  }

  private closed = false;

  /** Ends every reader thread; reads still waiting fail (tests: the service's readers end with its process). */
  close(): void {
    this.closed = true;
    for (const reader of [...this.readers]) {
      const task = reader.task;
      this.retire(reader, false);
      if (task !== null) {
        this.settle(task);
        task.reject(internalError("the calendar readers were closed"));
      }
    }
    for (const task of this.queue.splice(0)) {
      task.signal.removeEventListener("abort", task.onAbort);
      task.reject(internalError("the calendar readers were closed"));
    }
  }

  /** A host's reads may use all readers but one, so another host always finds one free. */
  private get perOwner(): number {
    return Math.max(1, this.opts.threads - 1);
  }

  /**
   * Reads one calendar on a reader thread. Rejects with ProviderError (bad_response) naming the limit when
   * the calendar is over one, is not iCalendar, needs more memory than a reader has, or `signal` aborts first (the
   * deadline: a running read is stopped there).
   */
  read(job: ReadJob, owner: string, timeoutMs: number, signal: AbortSignal): Promise<{ spans: Float64Array; warnings: string[] }> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(overDeadline(timeoutMs, "before it started"));
      const waiting = this.queue.filter((t) => t.owner === owner).length;
      if (waiting >= this.opts.queuedPerOwner) {
        return reject(new ProviderError("bad_response", `too many reads of this host's calendars at once (at most ${this.opts.queuedPerOwner} wait for a reader)`));
      }
      const task: Task = { job, owner, timeoutMs, signal, resolve, reject, onAbort: () => this.abort(task) };
      signal.addEventListener("abort", task.onAbort, { once: true });
      this.queue.push(task);
      this.dispatch();
    });
  }

  private settle(task: Task): void {
    task.signal.removeEventListener("abort", task.onAbort);
    const n = (this.running.get(task.owner) ?? 1) - 1;
    if (n <= 0) this.running.delete(task.owner);
    else this.running.set(task.owner, n);
  }

  private abort(task: Task): void {
    const queued = this.queue.indexOf(task);
    if (queued !== -1) {
      this.queue.splice(queued, 1);
      task.signal.removeEventListener("abort", task.onAbort);
      const busy = (this.running.get(task.owner) ?? 0) >= this.perOwner ? "this host's other calendars were still being read" : "every calendar reader was busy";
      task.reject(overDeadline(task.timeoutMs, `while waiting: ${busy}`));
      return;
    }
    const reader = [...this.readers].find((r) => r.task === task);
    if (reader !== undefined) {
      this.retire(reader, true);
      this.settle(task);
      task.reject(overDeadline(task.timeoutMs, "and was stopped"));
    }
    this.dispatch();
  }

  /** Takes a reader out of the pool, ends its thread and starts a fresh one (unless it never worked: then when work needs one). */
  private retire(reader: Reader, refill = reader.answered): void {
    this.readers.delete(reader);
    reader.task = null;
    reader.worker.removeAllListeners();
    // An error after this point has nobody to tell.
    reader.worker.on("error", () => {});
    void reader.worker.terminate();
    if (refill) this.fill();
  }

  private spawn(): Reader {
    const worker = startWorker(this.opts.memoryMb);
    // An idle reader never keeps the process alive (the service ends when its server does); a busy one does.
    worker.unref();
    const reader: Reader = { worker, task: null, answered: false };
    worker.on("message", (answer: ReadAnswer) => {
      reader.answered = true;
      const task = reader.task;
      if (task === null) return;
      reader.task = null;
      worker.unref();
      this.settle(task);
      if (answer.ok) task.resolve({ spans: answer.spans, warnings: answer.warnings });
      else task.reject(answerError(answer));
      this.dispatch();
    });
    worker.on("error", (err: Error & { code?: string }) => {
      const task = reader.task;
      this.retire(reader);
      if (task !== null) {
        this.settle(task);
        task.reject(
          err.code === "ERR_WORKER_OUT_OF_MEMORY"
            ? new ProviderError("bad_response", `reading the calendar needs more than ${this.opts.memoryMb} MB of memory`)
            : internalError(err.stack ?? err.message),
        );
      }
      this.dispatch();
    });
    worker.on("exit", () => {
      const task = reader.task;
      this.retire(reader);
      if (task !== null) {
        this.settle(task);
        task.reject(internalError("a calendar reader stopped"));
      }
      this.dispatch();
    });
    this.readers.add(reader);
    return reader;
  }

  private dispatch(): void {
    for (let i = 0; i < this.queue.length; ) {
      const task = this.queue[i]!;
      if ((this.running.get(task.owner) ?? 0) >= this.perOwner) {
        i++;
        continue;
      }
      let reader = [...this.readers].find((r) => r.task === null);
      if (reader === undefined) {
        if (this.closed || this.readers.size >= this.opts.threads) return;
        reader = this.spawn();
      }
      this.queue.splice(i, 1);
      reader.task = task;
      this.running.set(task.owner, (this.running.get(task.owner) ?? 0) + 1);
      reader.worker.ref();
      // A body that owns its whole buffer (a feed's, once read) moves to the thread instead of being copied.
      const owned = task.job.objects.filter((o): o is Uint8Array => typeof o !== "string" && o.byteOffset === 0 && o.byteLength === o.buffer.byteLength && o.buffer instanceof ArrayBuffer);
      reader.worker.postMessage(task.job, owned.map((o) => o.buffer as ArrayBuffer));
    }
  }
}

function overDeadline(timeoutMs: number, how: string): ProviderError {
  return new ProviderError("bad_response", `reading the calendar took longer than ${timeoutMs} ms ${how}`);
}

/** An error of the service itself, not of the calendar: the detail goes to the log, the connection says only that. */
export class ReaderFailure extends ProviderError {
  constructor(readonly detail: string) {
    super("bad_response", "the calendar could not be read because of an error in the service");
  }
}

function internalError(detail: string): ReaderFailure {
  return new ReaderFailure(detail);
}

/** What the calendar's text itself makes unreadable (over a limit, not iCalendar): the same text always gives it. */
export class UnreadableText extends ProviderError {
  constructor(message: string) {
    super("bad_response", message);
  }
}

function answerError(answer: Extract<ReadAnswer, { ok: false }>): ProviderError {
  if (answer.kind === "limit") return new UnreadableText(`the calendar holds more than the service reads: ${answer.message}`);
  if (answer.kind === "parse") return new UnreadableText(`the calendar is not valid iCalendar: ${answer.message}`);
  return internalError(answer.message);
}

let shared: CalendarReaders | undefined;

/** The process's readers, started with the first read (or by warmCalendarReaders). */
export function calendarReaders(): CalendarReaders {
  shared ??= new CalendarReaders();
  return shared;
}

/** One small calendar: reading it loads the reader's modules (ical.js, the zone tables) and runs its code once. */
const WARM_UP = new TextEncoder().encode("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:warm-up\r\nDTSTART;TZID=Europe/Berlin:20250101T100000\r\nDURATION:PT1H\r\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n");
/** A warm-up is no request: it may take what a thread takes to start on a busy machine. */
const WARM_UP_LIMIT_MS = 60_000;

/**
 * Starts every reader thread and has each read a small calendar, resolving when all have answered: the service
 * says it is ready only after this, so no host's first read pays for a thread starting (a cold start took more than
 * CALENDAR_TIMEOUT_MS under load, and the calendar answered 503 until it was asked again). A reader that fails to
 * warm up is only logged by the caller: the first read starts it again. Answers how many there are.
 */
export async function warmCalendarReaders(): Promise<number> {
  const readers = calendarReaders();
  const day = Date.UTC(2025, 0, 6);
  await Promise.all(
    Array.from({ length: READERS.threads }, (_, i) => {
      const job: ReadJob = { objects: [WARM_UP.slice()], from: day, to: day + 7 * 86_400_000, hostZone: "UTC", hostEmails: [], appHost: "", ownBookingIds: [] };
      // An owner each: one owner's reads take at most all readers but one.
      return readers.read(job, `warm-up-${i}`, WARM_UP_LIMIT_MS, AbortSignal.timeout(WARM_UP_LIMIT_MS));
    }),
  );
  return READERS.threads;
}
