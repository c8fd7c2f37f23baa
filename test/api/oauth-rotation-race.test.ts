// Two replicas refreshing one Zoom grant at once (Zoom ends a refresh token the moment it rotates it): the replica refused waits for the other's rotated tokens in the database instead of taking the grant for gone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZOOM_ROUTES } from "../fakes/zoom.js";
import { restAt, type Json } from "../helpers/api.js";
import { dayFromToday } from "../helpers/bookings.js";
import { bookAt, eventAt, hostAt } from "../helpers/calendars.js";
import { advanceClock, CLOCK_CONTROL_ENV } from "../helpers/clock.js";
import type { SeenCommand } from "../helpers/dbProxy.js";
import { connectThroughOAuth, recordOf, startProviderWorld, type ProviderWorld } from "../helpers/providers.js";
import type { RunningServer } from "../helpers/server.js";
import { until } from "../helpers/wait.js";

let w: ProviderWorld;
/** The second replica; both reach the database through the proxy, so whichever refreshes first has its write held. */
let other: RunningServer;
/** Past the access token's hour: the next call of either replica refreshes first. */
const PAST_THE_HOUR_MS = 2 * 3_600_000;

beforeAll(async () => {
  // One effect at a time on each replica: while one's refresh's write is held, the other takes the next meeting.
  w = await startProviderWorld({ ...CLOCK_CONTROL_ENV, EFFECTS_CONCURRENCY: "1", EFFECTS_PER_ACCOUNT: "1" }, {}, { proxied: true });
  other = await w.replica({ MONGODB_URI: w.proxy!.uri });
}, 150_000);

afterAll(async () => {
  await w?.stop();
});

/** The write of a meeting account's sealed tokens (features/meetings/tokens.ts). */
const tokensWrite = (c: SeenCommand) =>
  c.name === "update" && c.collection === "meeting_accounts" && c.items.some((u) => "credentials_sealed" in ((u.u as { $set?: object }).$set ?? {}));

describe("a Zoom grant refreshed on two replicas at once", () => {
  it("stays connected, and both bookings get their meeting", async () => {
    const email = `rotating-${Date.now().toString(36)}@example.test`;
    w.zoom.addUser(email, { firstName: "Rota" });
    const host = await hostAt(w.base);
    await connectThroughOAuth(w, host.key, "zoom", email);
    const event = await eventAt(w.base, host.key, { name: "Call", location: { name: "conference" } });
    const day = dayFromToday(6);
    await advanceClock([w.server, other], PAST_THE_HOUR_MS);

    // The replica that makes the first meeting refreshes (Zoom rotates the refresh token and ends the old one); its
    // write of the new tokens is held.
    const hold = w.proxy!.holdNext(tokensWrite);
    const first = await bookAt(w.base, host.user, event, `${day}T09:00:00.000Z`);
    expect(first.status).toBe(201);
    await hold.held;
    // The other replica takes the next booking's meeting: its refresh with the old token is refused.
    const second = await bookAt(other.baseUrl, host.user, event, `${day}T11:00:00.000Z`);
    expect(second.status).toBe(201);
    const refused = () => w.zoom.http.requests.filter((r) => r.route === ZOOM_ROUTES.token && r.status === 400);
    // Released at once: the refused replica looks for the new tokens for a second (providers/shared/oauth.ts).
    await until("the second replica's refresh refused", async () => (refused().length > 0 ? true : undefined), { everyMs: 10 });
    hold.release();

    const meetingOf = (id: string) =>
      until(`booking ${id}'s meeting made or given up`, async () => {
        const r = await recordOf(w.base, host.key, event.id, id);
        return r?.meeting_status === "pending" ? undefined : r;
      });
    expect((await meetingOf(first.body.data.id)).meeting_status).toBe("ready");
    expect((await meetingOf(second.body.data.id)).meeting_status).toBe("ready");
    const integrations = await restAt(w.base, "GET", "/api/v1/integrations", { key: host.key });
    expect((integrations.body.data as Json[]).map((i) => ({ provider: i.provider, status: i.status }))).toEqual([{ provider: "zoom", status: "ok" }]);
    expect(w.zoom.meetings().filter((m) => m.host_email === email)).toHaveLength(2);
  });
});
