// The iCalendar feed provider (a calendar's "secret address" from Google, Outlook, Apple): read-only, the whole feed in one GET.
import { requireFields } from "../../domain/errors.js";
import { busyOfObjects, busyOfRead } from "../shared/ical.js";
import { checkRequestUrl } from "../shared/outbound.js";
import { ProviderError, type CalendarProvider } from "../shared/types.js";
import { readFeed } from "./feed.js";

const NAME_MAX = 200;
const DAY_MS = 86_400_000;

/** X-WR-CALNAME of a feed (read from its first 64 KB), else its host name. */
function feedName(body: string | Uint8Array, host: string): string {
  const head = typeof body === "string" ? body.slice(0, 65_536) : new TextDecoder().decode(body.subarray(0, 65_536));
  const name = /^X-WR-CALNAME(?:;[^:]*)?:(.*)$/im.exec(head)?.[1]?.trim();
  return name ? name.slice(0, NAME_MAX) : host;
}

export const icsProvider: CalendarProvider = {
  kind: "calendar",
  name: "ics",

  async connect({ input, settings, now: at, signal }) {
    requireFields("connection", { url: input.url });
    // Apple and Google hand out feeds as webcal:// links, which mean https:// to every calendar client.
    const url = (await checkRequestUrl("connection.url", (input.url ?? "").trim().replace(/^webcals?:\/\//i, "https://"), settings)).href;
    const read = await readFeed(url, null, settings, signal);
    if (read.unchanged || read.objects.length === 0) throw new ProviderError("bad_response", "the feed gave no content");
    const host = new URL(url).hostname;
    const name = feedName(read.objects[0]!, host);
    const now = at.getTime();
    // Reading a day proves the feed is iCalendar the busy-time expansion can read, within its limits.
    const { warnings } = await busyOfObjects(read.objects, { from: new Date(now), to: new Date(now + DAY_MS) }, { hostZone: "UTC", hostEmails: [], ignoreUid: () => false, appHost: "", owner: input.owner }, settings.timeoutMs, signal);
    return { account: host, credentials: { url }, calendars: [{ url: null, name, canWrite: false, email: null, warnings }] };
  },

  async readBusy({ access, range, knownVersion, busy, settings, signal }) {
    return busyOfRead(await readFeed(access.credentials.url ?? "", knownVersion, settings, signal), range, busy, settings.timeoutMs, signal);
  },
};
