// The provider code against the real Google Calendar/Meet and Zoom (npm run test:live), from a test account's refresh token: what the fakes cannot prove.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/app/config.js";
import { calendarProvider, meetingProvider, OAuthClient, withDeadline, type TokenSet, type TokenStore } from "../../src/providers/index.js";

/*
 * Each block runs only with its provider's settings: GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET, GOOGLE_REFRESH_TOKEN
 * (a refresh token of a test account for that client, with the scopes of docs/calendars-and-meetings.md), and
 * ZOOM_CLIENT_ID, ZOOM_CLIENT_SECRET, ZOOM_REFRESH_TOKEN. Zoom rotates refresh tokens and ends the old one at once:
 * the rotated one is kept in .tmp/live-zoom-refresh-token and used by the next run in place of the setting.
 */

const env = process.env;
const TMP = new URL("../../.tmp/", import.meta.url);
const ZOOM_TOKEN_FILE = new URL("live-zoom-refresh-token", TMP);

function store(initial: TokenSet, keep?: (t: TokenSet) => void): TokenStore {
  let held = initial;
  return {
    save: async (t) => {
      held = t;
      keep?.(t);
    },
    load: async () => held,
  };
}

const expired = (refresh: string): TokenSet => ({ access_token: "none", refresh_token: refresh, expires_at: 0, scope: null });

const google = env.GOOGLE_CLIENT_ID && env.GOOGLE_CLIENT_SECRET && env.GOOGLE_REFRESH_TOKEN ? env : undefined;
describe.skipIf(!google)("Google Calendar and Meet, live", () => {
  const provider = calendarProvider("google")!;
  // The client as the service reads it (src/app/config.ts): the real endpoints, or the GOOGLE_*_URL settings.
  const config = loadConfig(env).oauthClients.google!;
  const session = () => new OAuthClient(provider.oauth!, config).session("live-google", expired(env.GOOGLE_REFRESH_TOKEN ?? ""), store(expired(env.GOOGLE_REFRESH_TOKEN ?? "")));
  const settings = { allowPrivate: false, timeoutMs: 15_000 };

  it("refreshes, names the account, lists calendars, reads free/busy, writes an event with Meet, moves it in place, deletes it (then 410 counts as done)", async () => {
    const s = session();
    const access = { credentials: {}, oauth: s };
    const me = await withDeadline(15_000, (signal) => provider.oauth!.identify(s, signal));
    expect(me.email).toContain("@");
    const calendars = await withDeadline(15_000, (signal) => provider.listCalendars!({ access, settings, signal }));
    const primary = calendars.find((c) => c.url?.toLowerCase() === me.id);
    expect(primary?.canWrite).toBe(true);
    const start = new Date(Date.now() + 7 * 86_400_000);
    start.setUTCMinutes(0, 0, 0);
    const end = new Date(start.getTime() + 30 * 60_000);
    const range = { from: new Date(start.getTime() - 86_400_000), to: new Date(start.getTime() + 86_400_000) };
    const busy = { hostZone: "UTC", hostEmails: [me.email], ignoreUid: () => false };
    await withDeadline(15_000, (signal) => provider.readBusy({ access, calendar: { url: primary!.url }, range, knownVersion: null, busy, settings, signal }));
    const key = `${Date.now().toString(16)}0000000000000000`.slice(0, 24);
    const ref = { bookingId: key, id: null, key };
    const event = {
      bookingId: key, uid: `${key}@live.test`, sequence: 0, start, end, summary: "Live check (scheduling service)", description: "Written and removed by npm run test:live",
      location: null, organizer: { name: "", email: me.email }, attendees: [], status: "CONFIRMED" as const, color: "tomato", meeting: { requestId: key },
    };
    const written = await withDeadline(30_000, (signal) => provider.writeEvent!({ access, calendar: { url: primary!.url }, event, ref, settings, signal }));
    expect(written.meetingUrl === null || /^https:\/\/meet\.google\.com\//.test(written.meetingUrl ?? "")).toBe(true);
    // Our own event is told apart from the host's: with it in ownEvents the read leaves it out.
    const read = await withDeadline(15_000, (signal) => provider.readBusy({ access, calendar: { url: primary!.url }, range, knownVersion: null, busy: { ...busy, ownEvents: [{ id: written.id, start, end }] }, settings, signal }));
    expect(read.unchanged === false && read.periods.some((p) => p.start.getTime() === start.getTime() && p.end.getTime() === end.getTime())).toBe(false);
    const later = { ...event, start: new Date(start.getTime() + 3_600_000), end: new Date(end.getTime() + 3_600_000) };
    const moved = await withDeadline(30_000, (signal) => provider.writeEvent!({ access, calendar: { url: primary!.url }, event: later, ref: { ...ref, id: written.id }, settings, signal }));
    expect(moved.id).toBe(written.id);
    if (written.meetingUrl) expect(moved.meetingUrl).toBe(written.meetingUrl);
    await withDeadline(15_000, (signal) => provider.deleteEvent!({ access, calendar: { url: primary!.url }, ref: { ...ref, id: written.id }, settings, signal }));
    await withDeadline(15_000, (signal) => provider.deleteEvent!({ access, calendar: { url: primary!.url }, ref: { ...ref, id: written.id }, settings, signal }));
  });
});

const zoom = env.ZOOM_CLIENT_ID && env.ZOOM_CLIENT_SECRET && (env.ZOOM_REFRESH_TOKEN || existsSync(ZOOM_TOKEN_FILE)) ? env : undefined;
describe.skipIf(!zoom)("Zoom, live", () => {
  it("refreshes (keeping the rotated refresh token), names the user, makes a meeting, moves it keeping join_url, deletes it", async () => {
    const provider = meetingProvider("zoom")!;
    const config = loadConfig(env).oauthClients.zoom!;
    const refresh = existsSync(ZOOM_TOKEN_FILE) ? readFileSync(ZOOM_TOKEN_FILE, "utf8").trim() : (env.ZOOM_REFRESH_TOKEN ?? "");
    const keep = (t: TokenSet) => {
      mkdirSync(TMP, { recursive: true });
      if (t.refresh_token) writeFileSync(ZOOM_TOKEN_FILE, t.refresh_token, { mode: 0o600 });
    };
    const s = new OAuthClient(provider.oauth!, config).session("live-zoom", expired(refresh), store(expired(refresh), keep));
    const access = { credentials: {}, oauth: s };
    const me = await withDeadline(15_000, (signal) => provider.oauth!.identify(s, signal));
    expect(me.email).toContain("@");
    const start = new Date(Date.now() + 7 * 86_400_000);
    start.setUTCMinutes(0, 0, 0);
    const request = { topic: "Live check (scheduling service)", start, durationMinutes: 30, timezone: "UTC" };
    const made = await withDeadline(15_000, (signal) => provider.scheduleMeeting!({ access, id: null, meeting: request, signal }));
    expect(made.url).toMatch(/^https:\/\/[\w.-]*zoom\.us\/j\//);
    const moved = await withDeadline(15_000, (signal) => provider.scheduleMeeting!({ access, id: made.id, meeting: { ...request, start: new Date(start.getTime() + 3_600_000) }, signal }));
    expect(moved).toEqual({ id: made.id, url: null });
    await withDeadline(15_000, (signal) => provider.deleteMeeting!({ access, id: made.id, signal }));
  });
});
