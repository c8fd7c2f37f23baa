// What the providers that speak iCalendar (CalDAV, feeds) share: their raw read, and its reading into busy time on the calendar readers (icalPool.ts).
import type { BusySpan } from "../../domain/ical/busy.js";
import { logEvent } from "../../platform/log.js";
import { calendarReaders, ReaderFailure, UnreadableText } from "./icalPool.js";
import type { BusyOptions } from "./types.js";

/** A calendar's iCalendar objects in a range, with the token that says when they change (ctag, sync token, ETag). */
export type ObjectsRead = { unchanged: true; version: string | null } | { unchanged: false; version: string | null; objects: Array<string | Uint8Array> };

/**
 * The busy time of the objects within the range, read off the event loop under the deadline `signal` carries
 * (`timeoutMs` is that deadline, for the message). A Uint8Array that owns its buffer is handed to the reader
 * thread, not copied: it is empty here afterwards. Rejects with ProviderError when the calendar cannot be
 * read as a whole (not iCalendar, over a limit, over the deadline): it counts as unreadable rather than free.
 * Events that cannot be read are left out and named in `warnings`.
 */
export async function busyOfObjects(
  objects: ReadonlyArray<string | Uint8Array>,
  range: { from: Date; to: Date },
  busy: BusyOptions,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<{ periods: BusySpan[]; warnings: string[] }> {
  const job = { objects: [...objects], from: range.from.getTime(), to: range.to.getTime(), hostZone: busy.hostZone, hostEmails: [...busy.hostEmails], appHost: busy.appHost ?? "", ownBookingIds: [...(busy.ownBookingIds ?? [])] };
  try {
    const { spans, warnings } = await calendarReaders().read(job, busy.owner ?? "", timeoutMs, signal);
    const periods: BusySpan[] = [];
    for (let i = 0; i < spans.length; i += 2) periods.push({ start: new Date(spans[i]!), end: new Date(spans[i + 1]!) });
    return { periods, warnings };
  } catch (err) {
    if (err instanceof ReaderFailure) logEvent("error", "calendar reader failed", { error: err.detail });
    throw err;
  }
}

/**
 * Versions (ctag, sync token, ETag, digest) whose text was unreadable, with why: a host whose calendar is over a
 * limit is asked again by every listing, and the same text would only fail the same way on a reader thread again.
 * Failures of time or memory are not kept (they depend on the load); a new version is read afresh.
 */
const unreadable = new Map<string, UnreadableText>();
const UNREADABLE_KEPT = 256;

/** An objects read as busy time. */
export async function busyOfRead(read: ObjectsRead, range: { from: Date; to: Date }, busy: BusyOptions, timeoutMs: number, signal: AbortSignal) {
  if (read.unchanged) return read;
  const key = read.version === null ? null : JSON.stringify([read.version, range.from.getTime(), range.to.getTime(), busy.hostZone, busy.hostEmails, busy.appHost]);
  const known = key === null ? undefined : unreadable.get(key);
  if (known !== undefined) throw known;
  try {
    const { periods, warnings } = await busyOfObjects(read.objects, range, busy, timeoutMs, signal);
    return { unchanged: false as const, version: read.version, periods, warnings };
  } catch (err) {
    if (key !== null && err instanceof UnreadableText) {
      if (unreadable.size >= UNREADABLE_KEPT) unreadable.delete(unreadable.keys().next().value!);
      unreadable.set(key, err);
    }
    throw err;
  }
}
