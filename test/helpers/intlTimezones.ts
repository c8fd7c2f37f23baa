// The Intl-per-instant time-zone arithmetic of src/domain/timezones.ts as it was before its offset tables (commit 7ed1f69), frozen: the oracle test/unit/timezones.test.ts compares the tables with.
// A copy on purpose: an oracle that moved with the code it checks would prove nothing.

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(iana: string): Intl.DateTimeFormat {
  let f = formatters.get(iana);
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: iana, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" });
    formatters.set(iana, f);
  }
  return f;
}

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallPartsAt(iana: string, epochMs: number): Parts {
  const out: Parts = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const part of formatterFor(iana).formatToParts(epochMs)) {
    if (part.type === "year" || part.type === "month" || part.type === "day" || part.type === "hour" || part.type === "minute" || part.type === "second") out[part.type] = Number(part.value);
  }
  return out;
}

function utcEpochMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getTime();
}

export function intlZoneOffsetMinutes(iana: string, at: Date): number {
  const ms = at.getTime();
  if (!Number.isFinite(ms)) throw new RangeError("invalid Date");
  const wholeSecond = ms - (((ms % 1000) + 1000) % 1000);
  const p = wallPartsAt(iana, wholeSecond);
  return (utcEpochMs(p.year, p.month, p.day, p.hour, p.minute, p.second) - wholeSecond) / 60_000;
}

const pad = (n: number, width: number): string => String(n).padStart(width, "0");

function formatIsoDate(epochMs: number): string {
  const d = new Date(epochMs);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
}

const DAY_MS = 86_400_000;

/** Takes only well-formed dates and times (the code under test checks them; the oracle is asked nothing else). */
export function intlWallClockToUtc(iana: string, date: string, time: string): Date {
  const [year, month, day] = date.split("-").map(Number);
  const [hour, minute] = time.split(":").map(Number);
  const wallMs = utcEpochMs(year, month, day, hour, minute);
  const offsetBefore = intlZoneOffsetMinutes(iana, new Date(wallMs - DAY_MS));
  const offsetAfter = intlZoneOffsetMinutes(iana, new Date(wallMs + DAY_MS));
  const fits = (offset: number): number | undefined => {
    const candidate = wallMs - offset * 60_000;
    return intlZoneOffsetMinutes(iana, new Date(candidate)) === offset ? candidate : undefined;
  };
  const early = fits(offsetBefore);
  const late = fits(offsetAfter);
  if (early !== undefined && late !== undefined) return new Date(Math.min(early, late));
  if (early !== undefined) return new Date(early);
  if (late !== undefined) return new Date(late);
  return new Date(wallMs - offsetBefore * 60_000);
}

export function intlUtcToWallClock(iana: string, at: Date): { date: string; time: string; weekday: number } {
  const p = wallPartsAt(iana, at.getTime());
  const dayMs = utcEpochMs(p.year, p.month, p.day);
  return { date: formatIsoDate(dayMs), time: `${pad(p.hour, 2)}:${pad(p.minute, 2)}`, weekday: new Date(dayMs).getUTCDay() };
}
