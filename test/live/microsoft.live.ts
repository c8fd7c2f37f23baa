// The opt-in check against the real Microsoft identity platform and Graph (npm run test:live): skipped unless the operator's app registration and a test account's refresh token are in the environment.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/app/config.js";
import { bookingUid } from "../../src/domain/ical/writer.js";
import { OAuthClient, type ProviderAccess, type TokenSet } from "../../src/providers/index.js";
import { microsoftOAuth, microsoftProvider } from "../../src/providers/microsoft/index.js";
import type { CalendarEvent } from "../../src/providers/shared/types.js";

/*
 * What it proves, with the settings the service itself reads (src/app/config.ts):
 * - the identity platform takes our refresh request (client_secret_post, the `scope` of the three delegated
 *   permissions) for the tenant of MICROSOFT_TENANT, and rotates the refresh token;
 * - GET /me and GET /me/calendars answer as the provider reads them (an account address, a writable calendar);
 * - a booking's event is written to the first writable calendar (with a Teams meeting unless
 *   MICROSOFT_LIVE_TEAMS=false, for accounts without Teams), without attendees; a create repeated with the same
 *   transactionId answers the same event; calendarView shows it and the service knows it as its own; PATCH moves it
 *   and keeps the Teams link; DELETE removes it and a second DELETE (404) counts as done.
 * It writes one event an hour long, 60 days ahead at 03:00 UTC, and removes it.
 *
 * Environment: MICROSOFT_CLIENT_ID, MICROSOFT_CLIENT_SECRET (and MICROSOFT_TENANT, MICROSOFT_LOGIN_URL,
 * MICROSOFT_GRAPH_URL when not the defaults), MICROSOFT_REFRESH_TOKEN: a refresh token of a test account for
 * that registration, with Calendars.ReadWrite User.Read offline_access (docs/calendars-and-meetings.md says how).
 */
const env = process.env;
const configured = Boolean(env.MICROSOFT_CLIENT_ID && env.MICROSOFT_CLIENT_SECRET && env.MICROSOFT_REFRESH_TOKEN);
const HOUR = 3_600_000;

describe.skipIf(!configured)("Microsoft 365, live", () => {
  it("refreshes, reads the account and calendars, writes, finds, moves and deletes a booking's event", async () => {
    const signal = AbortSignal.timeout(60_000);
    const config = loadConfig(env).oauthClients.microsoft;
    if (!config) throw new Error("MICROSOFT_CLIENT_ID and MICROSOFT_CLIENT_SECRET are not read as a client");
    const client = new OAuthClient(microsoftOAuth, config);
    const first = await client.refresh(env.MICROSOFT_REFRESH_TOKEN ?? "", signal);
    expect(first.refresh_token).toBeTruthy();
    expect(first.refresh_token).not.toBe(env.MICROSOFT_REFRESH_TOKEN);
    const saved: TokenSet[] = [];
    const session = client.session("live", first, { save: async (t) => void saved.push(t), load: async () => saved.at(-1) ?? first });
    const access: ProviderAccess = { credentials: {}, oauth: session };
    const settings = { allowPrivate: false, timeoutMs: 15_000 };

    const identity = await microsoftOAuth.identify(session, signal);
    expect(identity.email).toContain("@");
    const calendars = await microsoftProvider.listCalendars!({ access, settings, signal });
    const target = calendars.find((c) => c.canWrite);
    expect(target, "the test account has a calendar it can write to").toBeDefined();
    const calendar = { url: target!.url };

    const bookingId = randomBytes(12).toString("hex");
    const day = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + 60 * 86_400_000 + 3 * HOUR);
    const teams = env.MICROSOFT_LIVE_TEAMS !== "false";
    const event: CalendarEvent = {
      bookingId,
      uid: bookingUid(bookingId, "live.scheduling.test"),
      sequence: 0,
      start: day,
      end: new Date(day.getTime() + HOUR),
      summary: "Live check of the scheduling service (removed at once)",
      description: "Written and removed by npm run test:live.",
      location: null,
      organizer: { name: "", email: identity.email },
      attendees: [{ name: "Nobody", email: "nobody@example.com" }],
      status: "CONFIRMED",
      ...(teams ? { meeting: { requestId: bookingId } } : {}),
    };
    const ref = { bookingId, id: null, key: bookingId };
    const written = await microsoftProvider.writeEvent!({ access, calendar, event, ref, settings, signal });
    try {
      if (teams) expect(written.meetingUrl).toMatch(/^https:\/\/teams\.microsoft\.com\//);
      const again = await microsoftProvider.writeEvent!({ access, calendar, event, ref, settings, signal });
      expect(again.id).toBe(written.id);

      const range = { from: day, to: new Date(day.getTime() + HOUR) };
      const read = (ignore: boolean) =>
        microsoftProvider.readBusy({ access, calendar, range, knownVersion: null, busy: { hostZone: "UTC", hostEmails: [identity.email], ignoreUid: (uid) => ignore && uid === event.uid }, settings, signal });
      const theirs = await read(false);
      expect(theirs.unchanged ? [] : theirs.periods.map((p) => p.start.getTime())).toContain(day.getTime());
      const ours = await read(true);
      expect(ours.unchanged ? [] : ours.periods.filter((p) => p.start.getTime() === day.getTime())).toEqual([]);

      const later = { ...event, start: new Date(day.getTime() + HOUR), end: new Date(day.getTime() + 2 * HOUR) };
      const moved = await microsoftProvider.writeEvent!({ access, calendar, event: later, ref: { ...ref, id: written.id }, settings, signal });
      expect(moved.id).toBe(written.id);
      if (teams) expect(moved.meetingUrl).toBe(written.meetingUrl);
    } finally {
      await microsoftProvider.deleteEvent!({ access, calendar, ref: { ...ref, id: written.id }, settings, signal });
    }
    await microsoftProvider.deleteEvent!({ access, calendar, ref: { ...ref, id: written.id }, settings, signal });
  }, 120_000);
});
