// What a calendar reader thread does (icalWorker.ts loads it): iCalendar texts in, the busy time of a range out as merged stretches; nothing shared with the service's event loop.
import { parentPort } from "node:worker_threads";
import { IcsLimitError, IcsParseError, mergeBusy, readCalendar } from "../../domain/ical/busy.js";
import { isOwnBookingUid } from "../../domain/ical/writer.js";

/** One calendar to read: its texts (a feed, or a CalDAV calendar's objects), the range and whose it is. */
export interface ReadJob {
  objects: Array<string | Uint8Array>;
  from: number;
  to: number;
  hostZone: string;
  hostEmails: string[];
  appHost: string;
  /** The host's bookings (ids in hex) whose events are left out: BusyOptions.ownBookingIds. */
  ownBookingIds: string[];
}

/**
 * What came of it: the busy stretches as [start, end, start, end, ...] milliseconds (one transferable array, not
 * thousands of objects to copy), or why not. `limit` and `parse` messages are plain words for the connection's
 * last_error; an `internal` one carries the error for the log only.
 */
export type ReadAnswer = { ok: true; spans: Float64Array; warnings: string[] } | { ok: false; kind: "limit" | "parse" | "internal"; message: string };

function read(job: ReadJob): { answer: ReadAnswer; transfer: ArrayBuffer[] } {
  const own = new Set(job.ownBookingIds);
  try {
    const { periods, warnings } = readCalendar(job.objects, { from: new Date(job.from), to: new Date(job.to) }, {
      hostZone: job.hostZone,
      hostEmails: job.hostEmails,
      ignoreUid: (uid) => isOwnBookingUid(uid, job.appHost, own),
    });
    const merged = mergeBusy(periods);
    const spans = new Float64Array(merged.length * 2);
    merged.forEach((p, i) => {
      spans[2 * i] = p.start.getTime();
      spans[2 * i + 1] = p.end.getTime();
    });
    return { answer: { ok: true, spans, warnings }, transfer: [spans.buffer] };
  } catch (err) {
    if (err instanceof IcsLimitError) return { answer: { ok: false, kind: "limit", message: err.message }, transfer: [] };
    if (err instanceof IcsParseError) return { answer: { ok: false, kind: "parse", message: err.message }, transfer: [] };
    const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
    return { answer: { ok: false, kind: "internal", message }, transfer: [] };
  }
}

parentPort?.on("message", (job: ReadJob) => {
  const { answer, transfer } = read(job);
  parentPort?.postMessage(answer, transfer);
});
