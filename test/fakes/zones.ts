// Time-zone arithmetic the provider fakes share (wall-clock times in an IANA zone to instants and back), on Intl only.

export function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Offset of a zone from UTC at an instant, in minutes. */
export function offsetMinutes(zone: string, ms: number): number {
  const name = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" }).formatToParts(ms).find((p) => p.type === "timeZoneName")?.value ?? "GMT";
  const m = /GMT([+-])(\d{2}):(\d{2})/.exec(name);
  return m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
}

/** A wall-clock time ("2025-03-30T02:30:00", or a date for its midnight) in a zone, as an instant. */
export function zonedToUtc(local: string, zone: string): number {
  const asUtc = Date.parse(`${local.length === 10 ? `${local}T00:00:00` : local}Z`);
  // Twice, so a time just after a change of offset lands on the right side of it.
  const guess = asUtc - offsetMinutes(zone, asUtc) * 60_000;
  return asUtc - offsetMinutes(zone, guess) * 60_000;
}

/** RFC 3339 with the zone's offset at that instant ("Z" where it is zero). */
export function formatInZone(ms: number, zone: string): string {
  const off = offsetMinutes(zone, ms);
  const local = new Date(ms + off * 60_000).toISOString().slice(0, 19);
  if (off === 0) return `${local}Z`;
  const abs = Math.abs(off);
  return `${local}${off < 0 ? "-" : "+"}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}
