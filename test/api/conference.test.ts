// Video meetings: the Jitsi integration on every protocol, the conference location it unlocks, and meeting_url on every view of a booking.
import { describe, expect, it } from "vitest";
import { rest } from "../helpers/api.js";
import { book, dayFromToday, hostCalls, newEvent, newHost, utcIso } from "../helpers/bookings.js";
import { allowedData, expectMissing, expectRefused, invoke, ok, PROTOCOLS } from "../helpers/calls.js";
import { integrationCalls } from "../helpers/calendars.js";

describe("the conference integration, on every protocol", () => {
  for (const protocol of PROTOCOLS) {
    it(`${protocol}: connect (default and own server), list, refuse bad input, disconnect unless an event uses it`, async () => {
      const host = await newHost();
      expect(await ok(protocol, host.key, integrationCalls.list(), 200, "integrations found")).toEqual([]);
      const jitsi = await ok(protocol, host.key, integrationCalls.connect({ provider: "jitsi" }), 200, "integration connected");
      expect(jitsi).toMatchObject({ name: "conference", provider: "jitsi", base_url: "https://meet.jit.si" });
      expect(Date.parse(jitsi.connected_at)).not.toBeNaN();
      const own = await ok(protocol, host.key, integrationCalls.connect({ provider: "jitsi", base_url: "https://meet.example.org/rooms/" }), 200, "integration connected");
      expect(own).toMatchObject({ base_url: "https://meet.example.org/rooms", connected_at: jitsi.connected_at });
      expect(await ok(protocol, host.key, integrationCalls.list())).toEqual([own]);

      expectMissing(protocol, await invoke(protocol, host.key, integrationCalls.connect({})), { integration: ["provider"] });
      expectRefused(protocol, await invoke(protocol, host.key, integrationCalls.connect({ provider: "webex" })), 422, "integration.provider is not included in the list",
        allowedData("integration.provider", ["jitsi", "zoom"]));
      // Zoom is a provider with accounts: it is connected by authorizing it (test/api/meetings.test.ts).
      expectRefused(protocol, await invoke(protocol, host.key, integrationCalls.connect({ provider: "zoom" })), 422, "authorize zoom first");
      expectRefused(protocol, await invoke(protocol, host.key, integrationCalls.connect({ provider: "jitsi", base_url: "javascript:alert(1)" })), 422, "integration.base_url must be an http(s) URL");

      const event = await newEvent(host, { location: { name: "conference" } });
      expect(event.location_name).toBe("Video conference");
      expectRefused(protocol, await invoke(protocol, host.key, integrationCalls.disconnect()), 422,
        `integration is used by the conference location of event "${event.name}"; change its location first`);
      await rest("PATCH", `/events/${event.id}`, { key: host.key, body: { event: { location: { name: "no_location" } } } });
      await ok(protocol, host.key, integrationCalls.disconnect(), 200, "integration disconnected");
      expect(await ok(protocol, host.key, integrationCalls.list())).toEqual([]);
    });
  }

  it("without the integration the conference location is refused; calendar_meet always says why", async () => {
    const host = await newHost();
    const conf = await rest("POST", "/events", { key: host.key, body: { event: { name: "x", url: `conf-${Date.now()}`, location: { name: "conference" } } } });
    expect({ status: conf.status, message: conf.body.message }).toEqual({ status: 422, message: "location.name conference needs the video-meeting provider connected under integrations; none is connected" });
    await rest("PUT", "/integrations/conference", { key: host.key, body: { integration: { provider: "jitsi" } } });
    const meet = await rest("POST", "/events", { key: host.key, body: { event: { name: "x", url: `meet-${Date.now()}`, location: { name: "calendar_meet" } } } });
    expect(meet.status).toBe(422);
    expect(meet.body.message).toBe("calendar_meet needs a Google or Microsoft calendar selected for the event");
  });
});

describe("meeting_url", () => {
  it("is made when the booking is made, shown on every view, kept on reschedule", async () => {
    const host = await newHost();
    await rest("PUT", "/integrations/conference", { key: host.key, body: { integration: { provider: "jitsi", base_url: "https://meet.example.org" } } });
    const event = await newEvent(host, { location: { name: "conference" } });
    const day = dayFromToday(2);
    const first = await book(host, event, { start_time: utcIso(day, "10:00") });
    const second = await book(host, event, { start_time: utcIso(day, "11:00") });
    const room = /^https:\/\/meet\.example\.org\/([0-9a-f]+)$/.exec(first.meeting_url)?.[1] ?? "";
    // At least 128 random bits: 32 hex characters or more; every booking its own room.
    expect(room.length).toBeGreaterThanOrEqual(32);
    expect(second.meeting_url).not.toBe(first.meeting_url);

    for (const protocol of PROTOCOLS) {
      const records = await ok(protocol, host.key, hostCalls.list(event.id));
      const record = records.records.find((r: { id: string }) => r.id === first.id);
      expect(record.meeting_url).toBe(first.meeting_url);
      expect(record.calendar_event_status).toBe("none");
    }
    const view = await rest("GET", `/public/bookings/${first.private_key}`);
    expect(view.body.data.meeting_url).toBe(first.meeting_url);

    const moved = await rest("POST", `/public/bookings/${first.private_key}/reschedule`, { body: { booking: { start_time: utcIso(day, "14:00") } } });
    expect(moved.status).toBe(201);
    expect(moved.body.data.meeting_url).toBe(first.meeting_url);
  });

  it("is null for other locations", async () => {
    const host = await newHost();
    const event = await newEvent(host);
    const booking = await book(host, event, { start_time: utcIso(dayFromToday(2), "10:00") });
    expect(booking.meeting_url).toBeNull();
  });
});
