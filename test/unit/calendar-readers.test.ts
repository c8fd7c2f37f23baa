// The calendar readers (src/providers/shared/icalPool.ts): reads off the event loop, stopped at their deadline, held to their memory, shared out between hosts.
import { afterAll, describe, expect, it } from "vitest";
import { CalendarReaders, READERS } from "../../src/providers/shared/icalPool.js";
import { ProviderError } from "../../src/providers/shared/types.js";

const ev = (uid: string, ...lines: string[]) => ["BEGIN:VEVENT", `UID:${uid}`, ...lines, "END:VEVENT"].join("\r\n");
const cal = (...events: string[]) => ["BEGIN:VCALENDAR", "VERSION:2.0", ...events, "END:VCALENDAR", ""].join("\r\n");
const job = (text: string | Uint8Array) => ({ objects: [text], from: Date.parse("2026-03-01T00:00:00Z"), to: Date.parse("2026-04-01T00:00:00Z"), hostZone: "UTC", hostEmails: [], appHost: "app.example", ownBookingIds: ["a".repeat(24)] });
const meeting = cal(ev("m", "DTSTART:20260310T100000Z", "DTEND:20260310T110000Z"), ev(`${"a".repeat(24)}@app.example`, "DTSTART:20260311T100000Z", "DTEND:20260311T110000Z"));
/** Slow to expand on purpose: ical.js takes a good fraction of a millisecond per monthly BYDAY instance. */
const slow = cal(...Array.from({ length: 15_000 }, (_, i) => ev(`s${i}`, "DTSTART:20000111T100000Z", "DURATION:PT1H", "RRULE:FREQ=MONTHLY;BYDAY=2TU")));
/** Needs more memory than a small reader has: 60 000 series kept until the expansion. */
const hog = cal(...Array.from({ length: 60_000 }, (_, i) => ev(`y${i}`, "DTSTART:20000101T100000Z", "DURATION:PT1H", "RRULE:FREQ=YEARLY;BYMONTH=1,2,3,4,5,6,7,8,9,10,11,12;BYDAY=1MO,2TU", "EXDATE:20250101T100000Z")));

const pools: CalendarReaders[] = [];
function pool(opts: { threads: number; memoryMb: number; queuedPerOwner: number }): CalendarReaders {
  const p = new CalendarReaders(opts);
  pools.push(p);
  return p;
}
afterAll(() => {
  for (const p of pools) p.close();
});

async function rejection(work: Promise<unknown>): Promise<ProviderError> {
  try {
    await work;
  } catch (err) {
    if (err instanceof ProviderError) return err;
    throw err;
  }
  throw new Error("expected a rejection");
}

describe("calendar readers", () => {
  it("read a calendar on a thread: busy stretches back, the service's own events left out", async () => {
    const readers = pool({ threads: 1, memoryMb: 64, queuedPerOwner: 2 });
    const { spans, warnings } = await readers.read(job(new TextEncoder().encode(meeting)), "host", 10_000, AbortSignal.timeout(10_000));
    expect([...spans]).toEqual([Date.parse("2026-03-10T10:00:00Z"), Date.parse("2026-03-10T11:00:00Z")]);
    expect(warnings).toEqual([]);
  });

  it("a read past its deadline is stopped there (its thread terminated), and the next read works", async () => {
    const readers = pool({ threads: 1, memoryMb: 64, queuedPerOwner: 2 });
    await readers.read(job(meeting), "host", 10_000, AbortSignal.timeout(10_000));
    const t0 = performance.now();
    const err = await rejection(readers.read(job(slow), "host", 400, AbortSignal.timeout(400)));
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(err.message).toBe("reading the calendar took longer than 400 ms and was stopped");
    const again = await readers.read(job(meeting), "host", 20_000, AbortSignal.timeout(20_000));
    expect(again.spans).toHaveLength(2);
  }, 30_000);

  it("a read that needs more memory than a reader has fails, naming the limit; the readers go on", async () => {
    const readers = pool({ threads: 1, memoryMb: 32, queuedPerOwner: 2 });
    const err = await rejection(readers.read(job(hog), "host", 60_000, AbortSignal.timeout(60_000)));
    expect(err.message).toBe("reading the calendar needs more than 32 MB of memory");
    expect((await readers.read(job(meeting), "host", 20_000, AbortSignal.timeout(20_000))).spans).toHaveLength(2);
  }, 90_000);

  it("one host's reads take at most all readers but one: another host's read does not wait behind them", async () => {
    const readers = pool({ threads: 2, memoryMb: 64, queuedPerOwner: 4 });
    // Both threads started: a read on a fresh thread would also wait for it to start.
    await Promise.all([readers.read(job(meeting), "warm-a", 20_000, AbortSignal.timeout(20_000)), readers.read(job(meeting), "warm-b", 20_000, AbortSignal.timeout(20_000))]);
    // The first runs until its deadline (burning a core until then); the two others wait behind it (one reader per
    // host here) until theirs. Waiting behind it would take the other host 2 s, past the 1.5 s it is given.
    const hostile = [2000, 1000, 1000].map((ms) => rejection(readers.read(job(slow), "attacker", ms, AbortSignal.timeout(ms))));
    const t0 = performance.now();
    await readers.read(job(meeting), "other", 20_000, AbortSignal.timeout(20_000));
    const otherMs = performance.now() - t0;
    const errors = await Promise.all(hostile);
    expect(otherMs).toBeLessThan(1500);
    expect(errors.map((e) => e.message).sort()).toEqual([
      "reading the calendar took longer than 1000 ms while waiting: this host's other calendars were still being read",
      "reading the calendar took longer than 1000 ms while waiting: this host's other calendars were still being read",
      "reading the calendar took longer than 2000 ms and was stopped",
    ]);
  }, 30_000);

  it("more reads of one host waiting than it may have: refused at once", async () => {
    const readers = pool({ threads: 2, memoryMb: 64, queuedPerOwner: 1 });
    // Short deadlines: the refusal comes at once, and the running read burns a core until its deadline.
    const running = rejection(readers.read(job(slow), "busy", 500, AbortSignal.timeout(500)));
    const waiting = rejection(readers.read(job(slow), "busy", 500, AbortSignal.timeout(500)));
    const refused = await rejection(readers.read(job(meeting), "busy", 1500, AbortSignal.timeout(1500)));
    expect(refused.message).toBe("too many reads of this host's calendars at once (at most 1 wait for a reader)");
    await Promise.all([running, waiting]);
  }, 30_000);

  it("what the service runs with: two threads at least, 64 MB each, 8 waiting reads per host", () => {
    expect(READERS.threads).toBeGreaterThanOrEqual(2);
    expect(READERS).toMatchObject({ memoryMb: 64, queuedPerOwner: 8 });
  });
});
