// A local iCalendar feed server for the calendar tests: each path answers the body set for it (a text, bytes, or a function that answers itself), counts its reads, and 404s otherwise.
import http from "node:http";

type FeedBody = string | Buffer | ((res: http.ServerResponse) => void);

export interface Feeds {
  /** http://127.0.0.1:<port> */
  base: string;
  /** What each path answers; set and change it as the test goes. */
  bodies: Map<string, FeedBody>;
  /** How often each path was read. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

export async function startFeeds(): Promise<Feeds> {
  const bodies = new Map<string, FeedBody>();
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = req.url ?? "";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const body = bodies.get(path);
    if (body === undefined) return res.writeHead(404).end();
    if (typeof body === "function") return body(res);
    res.writeHead(200, { "content-type": "text/calendar" }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    base: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    bodies,
    hits,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** An iCalendar object of `parts` (VEVENTs made with `icalEvent`). */
export const icalendar = (...parts: string[]) => ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//scheduling tests//EN", ...parts, "END:VCALENDAR", ""].join("\r\n");
/** A VEVENT with `uid` and a fixed DTSTAMP, and `lines`. */
export const icalEvent = (uid: string, ...lines: string[]) => ["BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20250101T000000Z", ...lines, "END:VEVENT"].join("\r\n");
/** A date (YYYY-MM-DD) as iCalendar writes it. */
export const icalDate = (day: string) => day.replace(/-/g, "");
