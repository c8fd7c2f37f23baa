// The iCalendar feed provider (a calendar's "secret address" from Google, Outlook, Apple): read-only, the whole feed in one GET.
import { requireFields } from "../../domain/errors.js";
import { busyOfObjects, busyOfRead } from "../shared/ical.js";
import { checkRequestUrl } from "../shared/outbound.js";
import { CalendarSourceError, type CalendarProvider } from "../shared/types.js";
import { readFeed } from "./feed.js";

const NAME_MAX = 200;
const DAY_MS = 86_400_000;

/** X-WR-CALNAME of a feed, else its host name. */
function feedName(text: string, host: string): string {
  const name = /^X-WR-CALNAME(?:;[^:]*)?:(.*)$/im.exec(text)?.[1]?.trim();
  return name ? name.slice(0, NAME_MAX) : host;
}

export const icsProvider: CalendarProvider = {
  name: "ics",

  async connect(input, settings, signal) {
    requireFields("connection", { url: input.url });
    // Apple and Google hand out feeds as webcal:// links, which mean https:// to every calendar client.
    const url = (await checkRequestUrl("connection.url", (input.url ?? "").trim().replace(/^webcals?:\/\//i, "https://"), settings)).href;
    const read = await readFeed(url, null, settings, signal);
    if (read.unchanged) throw new CalendarSourceError("bad_response", "the feed gave no content");
    const text = read.objects.join("\n");
    const now = Date.now();
    try {
      // Parsing a range proves the feed is iCalendar the busy-time expansion can read.
      busyOfObjects([text], { from: new Date(now), to: new Date(now + DAY_MS) }, { hostZone: "UTC", hostEmails: [], ignoreUid: () => false });
    } catch {
      throw new CalendarSourceError("bad_response", "the address does not serve iCalendar");
    }
    const host = new URL(url).hostname;
    return { account: host, credentials: { url }, calendars: [{ url: null, name: feedName(text, host), canWrite: false, email: null }] };
  },

  async readBusy({ credentials }, _calendar, range, knownVersion, busy, settings, signal) {
    return busyOfRead(await readFeed(credentials.url ?? "", knownVersion, settings, signal), range, busy);
  },
};
