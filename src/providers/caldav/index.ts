// The CalDAV provider (RFC 4791, RFC 6764 discovery; iCloud, Fastmail, Nextcloud, Radicale): user name and password, read and write.
import { REASONS, refusal, requireFields } from "../../domain/errors.js";
import { calendarObject } from "../../domain/ical/writer.js";
import { busyOfRead } from "../shared/ical.js";
import { checkRequestUrl } from "../shared/outbound.js";
import type { CalendarProvider, Credentials } from "../shared/types.js";
import { deleteCaldavObject, discoverCaldav, putCaldavObject, readCaldavObjects, type CaldavCredentials } from "./client.js";
import { ProviderError } from "../shared/types.js";

function caldavCredentials(c: Credentials): CaldavCredentials {
  return { serverUrl: c.server_url ?? "", username: c.username ?? "", password: c.password ?? "" };
}

function collectionOf(calendar: { url: string | null }): string {
  if (calendar.url === null) throw new ProviderError("not_found", "calendar has no address");
  return calendar.url;
}

/** The booking's object in the collection: named after the booking, so a retry finds the one it wrote. */
const objectName = (bookingId: string): string => `${bookingId}.ics`;

export const caldavProvider: CalendarProvider = {
  kind: "calendar",
  name: "caldav",

  async connect({ input, settings, signal }) {
    requireFields("connection", { server_url: input.serverUrl, username: input.username, password: input.password });
    const serverUrl = (await checkRequestUrl("connection.server_url", (input.serverUrl ?? "").trim(), settings)).href;
    const credentials = { server_url: serverUrl, username: input.username ?? "", password: input.password ?? "" };
    // Each exchange may take the whole deadline: servers delay the answer to a wrong password on purpose.
    const calendars = await discoverCaldav(caldavCredentials(credentials), settings, signal);
    if (calendars.length === 0) throw refusal(REASONS.connectionFailed, "no calendar found: the account has no calendar that holds events");
    return { account: credentials.username, credentials, calendars };
  },

  async readBusy({ access, calendar, range, knownVersion, busy, settings, signal }) {
    return busyOfRead(await readCaldavObjects(caldavCredentials(access.credentials), calendar.url, range, knownVersion, settings, signal), range, busy, settings.timeoutMs, signal);
  },

  async writeEvent({ access: { credentials }, calendar, event, ref, settings, signal }) {
    const name = objectName(ref.bookingId);
    await putCaldavObject(caldavCredentials(credentials), collectionOf(calendar), name, calendarObject(event), settings, signal);
    return { id: name };
  },

  async deleteEvent({ access: { credentials }, calendar, ref, settings, signal }) {
    await deleteCaldavObject(caldavCredentials(credentials), collectionOf(calendar), objectName(ref.bookingId), settings, signal);
  },
};
