// Calendars against a real Radicale: connecting (CalDAV and feeds), busy times of every kind blocking slots and bookings, outages failing closed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { newAccount, restAt, useServer, type Json } from "../helpers/api.js";
import { dayFromToday } from "../helpers/bookings.js";
import { allowedData, expectMissing, expectRefused, invoke, ok, PROTOCOLS } from "../helpers/calls.js";
import { bookAt, calendarCalls, eventAt, hostAt, slotsAt } from "../helpers/calendars.js";
import { startFaultProxy, startRadicale, startSwitchProxy, type FaultProxy, type Radicale, type SwitchProxy } from "../helpers/radicale.js";
import { startServer, type RunningServer } from "../helpers/server.js";

// Generous for a shared CI machine (a slow but healthy read must not count as an outage), short enough to wait out.
const TIMEOUT_MS = 2000;
let radicale: Radicale;
let proxy: SwitchProxy;
let faults: FaultProxy;
let server: RunningServer;
let base: string;

/** One VEVENT in a VCALENDAR, as a calendar client would PUT it. */
function ics(uid: string, lines: string[], extra = ""): string {
  return ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//scheduling tests//EN", "BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20260101T000000Z", ...lines, "END:VEVENT", extra, "END:VCALENDAR", ""]
    .filter((l) => l !== "")
    .join("\r\n");
}

const stamp = (day: string, time: string) => `${day.replace(/-/g, "")}T${time.replace(":", "")}00Z`;
const iso = (day: string, time: string) => `${day}T${time}:00.000Z`;

beforeAll(async () => {
  radicale = await startRadicale({ ann: "secret", bob: "hunter22", "dora@example.com": "pw-dora", eve: "first-password" });
  proxy = await startSwitchProxy(radicale.port);
  faults = await startFaultProxy(radicale.url);
  server = await startServer({ OUTBOUND_ALLOW_PRIVATE: "true", CALENDAR_TIMEOUT_MS: String(TIMEOUT_MS), CALENDAR_CACHE_SECONDS: "1" });
  base = server.baseUrl;
  // The helpers of calls.ts (every protocol) talk to this file's server.
  useServer(base);
});

afterAll(async () => {
  useServer(undefined);
  await server?.stop();
  await proxy?.close();
  await faults?.close();
  await radicale?.dispose();
  // Passwords and feed URLs are credentials: whatever failed or succeeded above, none reached a log line.
  const logs = server.logs();
  expect(logs.length).toBeGreaterThan(0);
  for (const secret of ["hunter22", "pw-dora", "first-password", "ann:secret@", "/ann/work/"]) expect(logs).not.toContain(secret);
});

describe("connecting a CalDAV account, on every protocol", () => {
  let work: string;
  beforeAll(async () => {
    work = await radicale.mkcalendar("ann", "work", "Work");
    await radicale.mkcalendar("ann", "personal", "Personal");
  });

  for (const protocol of PROTOCOLS) {
    it(`${protocol}: connect, list, update, disconnect; another account's ids are not found`, async () => {
      const host = await hostAt(base);
      const other = await hostAt(base);
      const connection = await ok(protocol, host.key, calendarCalls.connect({ provider: "caldav", server_url: radicale.url, username: "ann", password: "secret" }), 201, "calendar connected");
      expect(connection).toMatchObject({ provider: "caldav", account: "ann", status: "ok" });
      expect(connection.last_error ?? null).toBeNull();
      expect(Date.parse(connection.last_synced_at)).not.toBeNaN();
      expect(JSON.stringify(connection)).not.toContain("secret");
      const names = (connection.calendars as Json[]).map((c) => c.name).sort();
      expect(names).toEqual(["Personal", "Work"]);
      for (const c of connection.calendars as Json[]) {
        expect(c).toMatchObject({ connection_id: connection.id, provider: "caldav", can_write: true, check_for_conflicts: true });
        expect(c.email ?? null).toBeNull();
      }
      expect(work).toContain("/ann/work/");

      const listed = await ok(protocol, host.key, calendarCalls.connections(), 200, "calendar connections found");
      expect(listed.map((c: Json) => c.id)).toEqual([connection.id]);
      const calendars = await ok(protocol, host.key, calendarCalls.calendars(), 200, "calendars found");
      expect(calendars).toHaveLength(2);
      const cal = calendars[0];
      const updated = await ok(protocol, host.key, calendarCalls.update(cal.id, { check_for_conflicts: false }), 200, "calendar updated");
      expect(updated).toMatchObject({ id: cal.id, check_for_conflicts: false });

      expectRefused(protocol, await invoke(protocol, other.key, calendarCalls.update(cal.id, { check_for_conflicts: true })), 404, "calendar not found");
      expectRefused(protocol, await invoke(protocol, other.key, calendarCalls.disconnect(connection.id)), 404, "calendar connection not found");
      expect(await ok(protocol, other.key, calendarCalls.calendars(), 200, "calendars found")).toEqual([]);
      expectMissing(protocol, await invoke(protocol, host.key, calendarCalls.update(cal.id, {})), { calendar: ["check_for_conflicts"] });

      await ok(protocol, host.key, calendarCalls.disconnect(connection.id), 200, "calendar disconnected");
      expect(await ok(protocol, host.key, calendarCalls.connections(), 200, undefined)).toEqual([]);
      expect(await ok(protocol, host.key, calendarCalls.calendars(), 200, undefined)).toEqual([]);
    });

    it(`${protocol}: refused credentials, missing fields, an unknown provider and a feed that is not iCalendar answer with the reason`, async () => {
      const host = await hostAt(base);
      expectRefused(protocol, await invoke(protocol, host.key, calendarCalls.connect({ provider: "caldav", server_url: radicale.url, username: "ann", password: "wrong" })), 422,
        "connection was refused: the server turned down the user name or password");
      expectMissing(protocol, await invoke(protocol, host.key, calendarCalls.connect({ provider: "caldav", server_url: radicale.url })), { connection: ["username", "password"] });
      expectMissing(protocol, await invoke(protocol, host.key, calendarCalls.connect({})), { connection: ["provider"] });
      expectRefused(protocol, await invoke(protocol, host.key, calendarCalls.connect({ provider: "google" })), 422, "connection.provider is not included in the list",
        allowedData("connection.provider", ["caldav", "ics"]));
      expectRefused(protocol, await invoke(protocol, host.key, calendarCalls.connect({ provider: "caldav", server_url: radicale.url, username: "ann", password: "x".repeat(1001) })), 422,
        "connection.password is too long (maximum is 1000 characters)");
      expectRefused(protocol, await invoke(protocol, host.key, calendarCalls.connect({ provider: "ics", url: "ftp://example.com/cal.ics" })), 422, "connection.url must be an http or https URL");
      // Radicale's root answers, but not with iCalendar.
      const notIcs = await invoke(protocol, host.key, calendarCalls.connect({ provider: "ics", url: `${radicale.url}/.web/` }));
      expect(notIcs.ok).toBe(false);
      if (protocol === "rest") expect(notIcs.http).toBe(422);
      else expect(notIcs.code).toBe(Code.InvalidArgument);
    });
  }

  it("a private address is refused without OUTBOUND_ALLOW_PRIVATE (the shared server), on every protocol", async () => {
    useServer(undefined);
    try {
      const host = await newAccount();
      for (const protocol of PROTOCOLS) {
        const o = await invoke(protocol, host.key, calendarCalls.connect({ provider: "caldav", server_url: radicale.url, username: "ann", password: "secret" }));
        expect(o.ok).toBe(false);
        expect(o.message).toBe("connection.server_url resolves to a private or reserved address; the service reaches such addresses only with OUTBOUND_ALLOW_PRIVATE=true");
        if (protocol === "rest") expect(o.http).toBe(422);
      }
    } finally {
      useServer(base);
    }
  });

  it("a feed follows redirects (each hop checked) but not a loop, and is revalidated with its ETag", async () => {
    const { default: http } = await import("node:http");
    const day = dayFromToday(8);
    let gets = 0;
    let notModified = 0;
    const feed = ics("moved@test", [`DTSTART:${stamp(day, "10:00")}`, `DTEND:${stamp(day, "11:00")}`]);
    const srv = http.createServer((req, res) => {
      if (req.url === "/old") return res.writeHead(302, { location: "/feed.ics" }).end();
      if (req.url === "/loop") return res.writeHead(302, { location: "/loop" }).end();
      gets++;
      if (req.headers["if-none-match"] === '"v1"') {
        notModified++;
        return res.writeHead(304, { etag: '"v1"' }).end();
      }
      res.writeHead(200, { "content-type": "text/calendar", etag: '"v1"' }).end(feed);
    });
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const at = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
    try {
      const host = await hostAt(base);
      const moved = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "ics", url: `${at}/old` } } });
      expect(moved.status).toBe(201);
      const loop = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "ics", url: `${at}/loop` } } });
      expect({ status: loop.status, message: loop.body.message }).toEqual({ status: 422, message: "connection could not be made: the feed redirects too often (302)" });
      const event = await eventAt(base, host.key);
      expect((await slotsAt(base, host.user, event, day)).starts).not.toContain(`${day} 10:00`);
      // A booking asks the feed again: If-None-Match with the ETag, answered 304, and the busy time still holds.
      expect((await bookAt(base, host.user, event, iso(day, "10:30"))).status).toBe(409);
      expect(notModified).toBeGreaterThan(0);
      expect(gets).toBeGreaterThan(notModified);
    } finally {
      srv.closeAllConnections();
      await new Promise((r) => srv.close(r));
    }
  });

  it("an account with no calendar: 422 no calendar found; an unreachable server: 422", async () => {
    const host = await hostAt(base);
    const none = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "caldav", server_url: radicale.url, username: "bob", password: "hunter22" } } });
    expect(none.status).toBe(422);
    expect(none.body.message).toMatch(/^no calendar found/);
    const closed = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "caldav", server_url: "http://127.0.0.1:9", username: "x", password: "y" } } });
    expect(closed.status).toBe(422);
    expect(closed.body.message).toMatch(/^server is unreachable/);
  });

  it("the e-mail is the user name when that is an address; events accept only the caller's writable calendars", async () => {
    await radicale.mkcalendar("dora@example.com", "main", "Main");
    const host = await hostAt(base);
    const other = await hostAt(base);
    const caldav = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "caldav", server_url: radicale.url, username: "dora@example.com", password: "pw-dora" } } });
    expect(caldav.status).toBe(201);
    const cal = caldav.body.data.calendars[0];
    expect(cal.email).toBe("dora@example.com");
    const feed = await restAt(base, "POST", "/api/v1/calendar_connections", {
      key: host.key, body: { connection: { provider: "ics", url: `http://ann:secret@127.0.0.1:${radicale.port}/ann/work/` } },
    });
    expect(feed.status).toBe(201);
    expect(feed.body.data).toMatchObject({ provider: "ics", account: "127.0.0.1", status: "ok" });
    expect(JSON.stringify(feed.body.data)).not.toContain("secret");
    expect(feed.body.data.calendars[0]).toMatchObject({ provider: "ics", can_write: false, check_for_conflicts: true });

    const event = await eventAt(base, host.key, { connected_calendar_id: cal.id });
    expect(event).toMatchObject({ connected_calendar_id: cal.id, connected_calendar_email: "dora@example.com" });
    const refused = "connected_calendar_id is not a writable calendar of this account; use one of GET /calendars with can_write, or no_calendar_selected";
    for (const id of [feed.body.data.calendars[0].id, "0123456789abcdef01234567", "primary"]) {
      const res = await restAt(base, "PATCH", `/api/v1/events/${event.id}`, { key: host.key, body: { event: { connected_calendar_id: id } } });
      expect({ status: res.status, message: res.body.message }).toEqual({ status: 422, message: refused });
    }
    const stolen = await restAt(base, "POST", "/api/v1/events", { key: other.key, body: { event: { name: "x", url: `x-${Date.now()}`, connected_calendar_id: cal.id } } });
    expect({ status: stolen.status, message: stolen.body.message }).toEqual({ status: 422, message: refused });

    expect((await restAt(base, "DELETE", `/api/v1/calendar_connections/${caldav.body.data.id}`, { key: host.key })).status).toBe(200);
    const after = await restAt(base, "GET", `/api/v1/events/${event.id}`, { key: host.key });
    expect(after.body.data).toMatchObject({ connected_calendar_id: "no_calendar_selected", connected_calendar_email: null });
  });
});

describe("credentials the server stops accepting", () => {
  it("make the connection invalid and bookings 503, until they work again", async () => {
    await radicale.mkcalendar("eve", "main", "Main");
    const host = await hostAt(base);
    const res = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "caldav", server_url: radicale.url, username: "eve", password: "first-password" } } });
    expect(res.status).toBe(201);
    const event = await eventAt(base, host.key);
    const day = dayFromToday(6);
    await radicale.setPassword("eve", "changed-password");
    const refused = await bookAt(base, host.user, event, iso(day, "09:00"));
    expect({ status: refused.status, message: refused.body.message }).toEqual({ status: 503, message: "calendar is unavailable" });
    const listed = await restAt(base, "GET", "/api/v1/calendar_connections", { key: host.key });
    expect(listed.body.data[0]).toMatchObject({ status: "invalid", last_error: "the server refused the user name or password" });
    await radicale.setPassword("eve", "first-password");
    expect((await bookAt(base, host.user, event, iso(day, "09:00"))).status).toBe(201);
  });
});

describe("busy times block slots and bookings", () => {
  const day = dayFromToday(3);
  const next = dayFromToday(4);
  const third = dayFromToday(5);
  const allDay = dayFromToday(7);
  let host: { key: string; user: Json };
  let event: Json;

  beforeAll(async () => {
    const cal = await radicale.mkcalendar("ann", "busy", "Busy");
    await radicale.put("ann", cal, "single.ics", ics("single@test", [`DTSTART:${stamp(day, "10:00")}`, `DTEND:${stamp(day, "11:00")}`, "SUMMARY:Dentist"]));
    await radicale.put("ann", cal, "daily.ics", ics("daily@test", [
      `DTSTART:${stamp(day, "13:00")}`, `DTEND:${stamp(day, "13:30")}`, "RRULE:FREQ=DAILY;COUNT=5", `EXDATE:${stamp(next, "13:00")}`, "SUMMARY:Standup",
    ]));
    await radicale.put("ann", cal, "allday.ics", ics("allday@test", [`DTSTART;VALUE=DATE:${allDay.replace(/-/g, "")}`, "SUMMARY:Holiday"]));
    await radicale.put("ann", cal, "free.ics", ics("free@test", [`DTSTART:${stamp(day, "15:00")}`, `DTEND:${stamp(day, "16:00")}`, "TRANSP:TRANSPARENT", "SUMMARY:Maybe"]));
    await radicale.put("ann", cal, "cancelled.ics", ics("cancelled@test", [`DTSTART:${stamp(day, "17:00")}`, `DTEND:${stamp(day, "18:00")}`, "STATUS:CANCELLED", "SUMMARY:Off"]));
    // A UID shaped as this service's booking UIDs that names no booking of the host: busy like any event.
    await radicale.put("ann", cal, "own.ics", ics(`${"a".repeat(24)}@localhost`, [`DTSTART:${stamp(day, "19:00")}`, `DTEND:${stamp(day, "19:30")}`, "SUMMARY:Booked here"]));

    host = await hostAt(base);
    const res = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "caldav", server_url: radicale.url, username: "ann", password: "secret" } } });
    expect(res.status).toBe(201);
    // Only the Busy calendar checks for conflicts, so the other tests' calendars stay out of the way.
    for (const c of res.body.data.calendars as Json[]) {
      if (c.name !== "Busy") await restAt(base, "PATCH", `/api/v1/calendars/${c.id}`, { key: host.key, body: { calendar: { check_for_conflicts: false } } });
    }
    event = await eventAt(base, host.key);
  });

  it("every kind of event blocks or not as the spec says", async () => {
    const { status, starts } = await slotsAt(base, host.user, event, day);
    expect(status).toBe(200);
    const has = (t: string) => starts.includes(`${day} ${t}`);
    expect([has("09:30"), has("10:00"), has("10:30"), has("11:00")]).toEqual([true, false, false, true]);
    expect([has("13:00"), has("13:30")]).toEqual([false, true]);
    expect([has("15:00"), has("17:00"), has("19:00")]).toEqual([true, true, false]);
    const nextDay = await slotsAt(base, host.user, event, next, third);
    expect(nextDay.starts).toContain(`${next} 13:00`); // EXDATE
    expect(nextDay.starts).not.toContain(`${third} 13:00`);
    const holiday = await slotsAt(base, host.user, event, allDay);
    expect(holiday.starts).toEqual([]);
  });

  it("an event whose UID names a booking of this service blocks unless the booking is the host's own", async () => {
    const cal = `${radicale.url}/ann/busy/`;
    // Another host's booking here, its invite.ics imported into this host's calendar: this host is busy then.
    const other = await hostAt(base);
    const theirs = await bookAt(base, other.user, await eventAt(base, other.key), iso(next, "09:00"));
    expect(theirs.status).toBe(201);
    await radicale.put("ann", cal, "theirs.ics", ics(`${theirs.body.data.id}@localhost`, [`DTSTART:${stamp(next, "11:00")}`, `DTEND:${stamp(next, "11:30")}`]));
    // The host's own booking, its copy still in the calendar after a cancel (the copy's removal not written yet):
    // the booking was what blocked, so its time is free again.
    const mine = await bookAt(base, host.user, event, iso(next, "16:00"));
    expect(mine.status).toBe(201);
    await radicale.put("ann", cal, "mine.ics", ics(`${mine.body.data.id}@localhost`, [`DTSTART:${stamp(next, "16:00")}`, `DTEND:${stamp(next, "16:30")}`]));
    expect((await restAt(base, "POST", `/api/v1/bookings/${mine.body.data.id}/cancel`, { key: host.key, body: { booking: { reason: "moved" } } })).status).toBe(200);
    const { starts } = await slotsAt(base, host.user, event, next);
    expect([starts.includes(`${next} 11:00`), starts.includes(`${next} 16:00`), starts.includes(`${next} 11:30`)]).toEqual([false, true, true]);
    const busy = await bookAt(base, host.user, event, iso(next, "11:00"));
    expect({ status: busy.status, data: busy.body.data }).toEqual({ status: 409, data: { reason: "calendar_busy" } });
  });

  it("a padded event keeps its padding after the slot only: busy 10:00-11:00 takes 09:30 and 10:30, leaves 09:00 and 11:00", async () => {
    const padded = await eventAt(base, host.key, { padding_duration: "30_minutes" });
    const { starts } = await slotsAt(base, host.user, padded, day);
    const has = (t: string) => starts.includes(`${day} ${t}`);
    // 09:00 plus its padding ends as the busy period starts; a busy period has no padding, so 11:00 is free.
    expect(["09:00", "09:30", "10:00", "10:30", "11:00"].map(has)).toEqual([true, false, false, false, true]);
    // The 13:00-13:30 standup: 12:30's padding meets it, 12:00's ends as it starts, 13:30 starts as it ends.
    expect(["12:00", "12:30", "13:00", "13:30"].map(has)).toEqual([true, false, false, true]);
    const busy = await bookAt(base, host.user, padded, iso(day, "09:30"));
    expect({ status: busy.status, message: busy.body.message, data: busy.body.data }).toEqual({ status: 409, message: "slot is not available", data: { reason: "calendar_busy" } });
  });

  it("booking a busy slot answers 409 calendar_busy; a free one books", async () => {
    const busy = await bookAt(base, host.user, event, iso(day, "10:30"));
    expect({ status: busy.status, message: busy.body.message, data: busy.body.data }).toEqual({ status: 409, message: "slot is not available", data: { reason: "calendar_busy" } });
    const free = await bookAt(base, host.user, event, iso(day, "11:00"));
    expect(free.status).toBe(201);
  });

  it("an event added in the calendar blocks the next booking at once (the booking reads again)", async () => {
    await slotsAt(base, host.user, event, day);
    await radicale.put("ann", `${radicale.url}/ann/busy/`, "late.ics", ics("late@test", [`DTSTART:${stamp(day, "20:00")}`, `DTEND:${stamp(day, "21:00")}`]));
    const res = await bookAt(base, host.user, event, iso(day, "20:00"));
    expect(res.status).toBe(409);
  });

  it("switching conflict checking off frees the busy times", async () => {
    const calendars = await restAt(base, "GET", "/api/v1/calendars", { key: host.key });
    const busyCal = (calendars.body.data as Json[]).find((c) => c.name === "Busy");
    await restAt(base, "PATCH", `/api/v1/calendars/${busyCal.id}`, { key: host.key, body: { calendar: { check_for_conflicts: false } } });
    expect((await slotsAt(base, host.user, event, day)).starts).toContain(`${day} 10:00`);
    await restAt(base, "PATCH", `/api/v1/calendars/${busyCal.id}`, { key: host.key, body: { calendar: { check_for_conflicts: true } } });
    expect((await slotsAt(base, host.user, event, day)).starts).not.toContain(`${day} 10:00`);
  });

  it("a host who moves to another zone: an all-day event blocks the dates of the new zone at once (the calendar did not change)", async () => {
    const mover = await hostAt(base);
    const res = await restAt(base, "POST", "/api/v1/calendar_connections", { key: mover.key, body: { connection: { provider: "caldav", server_url: radicale.url, username: "ann", password: "secret" } } });
    for (const c of res.body.data.calendars as Json[]) {
      if (c.name !== "Busy") await restAt(base, "PATCH", `/api/v1/calendars/${c.id}`, { key: mover.key, body: { calendar: { check_for_conflicts: false } } });
    }
    const ev = await eventAt(base, mover.key);
    const dayBefore = dayFromToday(6);
    const before = await slotsAt(base, mover.user, ev, dayBefore, allDay);
    expect([before.starts.includes(`${dayBefore} 15:00`), before.starts.includes(`${allDay} 16:00`)]).toEqual([true, false]);
    const moved = await restAt(base, "PATCH", "/api/v1/user", { key: mover.key, body: { user: { timezone: "Tokyo" } } });
    expect(moved.status).toBe(200);
    // The holiday is now midnight to midnight in Tokyo: 15:00 UTC the day before to 15:00 UTC on the day.
    const after = await slotsAt(base, mover.user, ev, dayBefore, allDay);
    expect([after.starts.includes(`${dayBefore} 15:00`), after.starts.includes(`${allDay} 16:00`)]).toEqual([false, true]);
  });

  it("a feed's busy times block too", async () => {
    const feedHost = await hostAt(base);
    const res = await restAt(base, "POST", "/api/v1/calendar_connections", {
      key: feedHost.key, body: { connection: { provider: "ics", url: `http://ann:secret@127.0.0.1:${radicale.port}/ann/busy/` } },
    });
    expect(res.status).toBe(201);
    const feedEvent = await eventAt(base, feedHost.key);
    const { starts } = await slotsAt(base, feedHost.user, feedEvent, day);
    expect(starts).not.toContain(`${day} 10:00`);
    expect(starts).toContain(`${day} 09:30`);
    expect((await bookAt(base, feedHost.user, feedEvent, iso(day, "10:00"))).status).toBe(409);
  });
});

/** Minutes east of UTC of an IANA zone at an instant, from Intl (independent of the code under test). */
function offsetMinutes(zone: string, at: Date): number {
  const name = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" }).formatToParts(at).find((p) => p.type === "timeZoneName")?.value ?? "GMT";
  const m = /GMT([+-])(\d\d):(\d\d)/.exec(name);
  return m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
}

const NEW_YORK = [
  "BEGIN:VTIMEZONE", "TZID:America/New_York",
  "BEGIN:DAYLIGHT", "TZOFFSETFROM:-0500", "TZOFFSETTO:-0400", "TZNAME:EDT", "DTSTART:19700308T020000", "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU", "END:DAYLIGHT",
  "BEGIN:STANDARD", "TZOFFSETFROM:-0400", "TZOFFSETTO:-0500", "TZNAME:EST", "DTSTART:19701101T020000", "RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU", "END:STANDARD",
  "END:VTIMEZONE",
].join("\r\n");

describe("busy times of the other kinds, read from Radicale", () => {
  const day = dayFromToday(8);
  const before = dayFromToday(6);
  let host: { key: string; user: Json };

  beforeAll(async () => {
    host = await hostAt(base);
    const cal = await radicale.mkcalendar("ann", "kinds", "Kinds");
    const d = (s: string) => s.replace(/-/g, "");
    // RDATE and no RRULE: DTSTART is the first instance (RFC 5545; ical.js 2.2.1's iterator leaves it out).
    await radicale.put("ann", cal, "rdate.ics", ics("rdate@test", [`DTSTART:${stamp(day, "02:00")}`, `DTEND:${stamp(day, "03:00")}`, `RDATE:${stamp(day, "04:00")}`]));
    // A daily series whose instance of `day` was moved from 06:00 to 07:00 by a RECURRENCE-ID override.
    const series = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//scheduling tests//EN",
      "BEGIN:VEVENT", "UID:moved@test", "DTSTAMP:20260101T000000Z", `DTSTART:${stamp(before, "06:00")}`, `DTEND:${stamp(before, "06:30")}`, "RRULE:FREQ=DAILY;COUNT=5", "END:VEVENT",
      "BEGIN:VEVENT", "UID:moved@test", "DTSTAMP:20260101T000000Z", `RECURRENCE-ID:${stamp(day, "06:00")}`, `DTSTART:${stamp(day, "07:00")}`, `DTEND:${stamp(day, "07:30")}`, "SEQUENCE:1", "END:VEVENT",
      "END:VCALENDAR", ""].join("\r\n");
    await radicale.put("ann", cal, "moved.ics", series);
    // Declined by the host (the account's e-mail), accepted by someone else: free.
    await radicale.put("ann", cal, "declined.ics", ics("declined@test", [
      `DTSTART:${stamp(day, "08:00")}`, `DTEND:${stamp(day, "09:00")}`, "ORGANIZER:mailto:boss@example.com",
      `ATTENDEE;PARTSTAT=DECLINED:mailto:${String(host.user.email).toUpperCase()}`, "ATTENDEE;PARTSTAT=ACCEPTED:mailto:other@example.com",
    ]));
    // 09:00 New York every day since a date on the other side of a DST change from `day`.
    const dayAt = new Date(`${day}T12:00:00Z`);
    let since = before;
    for (let k = 1; k <= 11; k++) {
      const candidate = new Date(dayAt.getTime() - k * 30 * 86_400_000);
      if (offsetMinutes("America/New_York", candidate) !== offsetMinutes("America/New_York", dayAt)) {
        since = candidate.toISOString().slice(0, 10);
        break;
      }
    }
    await radicale.put("ann", cal, "zoned.ics", ics("zoned@test", [
      `DTSTART;TZID=America/New_York:${d(since)}T090000`, `DTEND;TZID=America/New_York:${d(since)}T100000`, "RRULE:FREQ=DAILY",
    ], NEW_YORK));
    const res = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "caldav", server_url: radicale.url, username: "ann", password: "secret" } } });
    expect(res.status).toBe(201);
    for (const c of res.body.data.calendars as Json[]) {
      if (c.name !== "Kinds") await restAt(base, "PATCH", `/api/v1/calendars/${c.id}`, { key: host.key, body: { calendar: { check_for_conflicts: false } } });
    }
  });

  it("RDATE with DTSTART, a moved instance, a declined invitation, a zoned series across DST", async () => {
    const event = await eventAt(base, host.key);
    const { status, starts } = await slotsAt(base, host.user, event, day);
    expect(status).toBe(200);
    const has = (t: string) => starts.includes(`${day} ${t}`);
    expect({ dtstart: has("02:00"), rdate: has("04:00"), between: has("03:00") }).toEqual({ dtstart: false, rdate: false, between: true });
    expect({ original: has("06:00"), moved: has("07:00") }).toEqual({ original: true, moved: false });
    expect({ declined: has("08:00") }).toEqual({ declined: true });
    const utcHour = 9 - offsetMinutes("America/New_York", new Date(`${day}T12:00:00Z`)) / 60;
    const hh = (h: number) => `${String(h).padStart(2, "0")}:00`;
    // The series keeps 09:00 on New York's clock, so its UTC hour is not the one of its first day.
    expect({ zoned: has(hh(utcHour)), hourOff: has(hh(utcHour === 13 ? 14 : 13)) }).toEqual({ zoned: false, hourOff: true });
    expect((await bookAt(base, host.user, event, iso(day, "07:00"))).status).toBe(409);
    expect((await bookAt(base, host.user, event, iso(day, "08:30"))).status).toBe(201);
  });

  it("padding is kept after the meeting only: a calendar event blocks the slot whose padding reaches it, not the one after it", async () => {
    const padded = await eventAt(base, host.key, { padding_duration: "30_minutes" });
    const { starts } = await slotsAt(base, host.user, padded, day);
    const has = (t: string) => starts.includes(`${day} ${t}`);
    // Busy 07:00-07:30 (the moved instance): 06:00 ends at 06:30 plus 30 minutes of padding, touching; 06:30 reaches it.
    expect({ touching: has("06:00"), reaching: has("06:30"), after: has("07:30") }).toEqual({ touching: true, reaching: false, after: true });
    expect((await bookAt(base, host.user, padded, iso(day, "06:30"))).status).toBe(409);
  });
});

describe("revalidation", () => {
  it("an unchanged CalDAV calendar costs one PROPFIND of its ctag, for an old listing and for a booking; a change reads it again", async () => {
    const cal = await radicale.mkcalendar("ann", "reval", "Reval");
    const day = dayFromToday(9);
    await radicale.put("ann", cal, "one.ics", ics("reval-one@test", [`DTSTART:${stamp(day, "10:00")}`, `DTEND:${stamp(day, "11:00")}`]));
    const host = await hostAt(base);
    const res = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "caldav", server_url: faults.url, username: "ann", password: "secret" } } });
    for (const c of res.body.data.calendars as Json[]) {
      if (c.name !== "Reval") await restAt(base, "PATCH", `/api/v1/calendars/${c.id}`, { key: host.key, body: { calendar: { check_for_conflicts: false } } });
    }
    const event = await eventAt(base, host.key);
    const calls = async (work: () => Promise<unknown>) => {
      const from = faults.seen.length;
      await work();
      return faults.seen.slice(from).filter((r) => r.path.includes("/ann/reval/")).map((r) => r.method);
    };
    expect(await calls(() => slotsAt(base, host.user, event, day))).toEqual(["PROPFIND", "REPORT"]);
    // CALENDAR_CACHE_SECONDS is 1: a fresh listing asks nothing, an older one only the ctag.
    expect(await calls(() => slotsAt(base, host.user, event, day))).toEqual([]);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await calls(() => slotsAt(base, host.user, event, day))).toEqual(["PROPFIND"]);
    expect(await calls(() => bookAt(base, host.user, event, iso(day, "12:00")))).toEqual(["PROPFIND"]);
    await radicale.put("ann", cal, "two.ics", ics("reval-two@test", [`DTSTART:${stamp(day, "14:00")}`, `DTEND:${stamp(day, "15:00")}`]));
    let refused: { status: number } | undefined;
    expect(await calls(async () => (refused = await bookAt(base, host.user, event, iso(day, "14:00"))))).toEqual(["PROPFIND", "REPORT"]);
    expect(refused?.status).toBe(409);
  });
});

describe("a calendar whose structure is broken on its way (Radicale through a proxy) fails closed, never reads as free", () => {
  const day = dayFromToday(12);
  let host: { key: string; user: Json };
  let event: Json;
  let cal: string;

  beforeAll(async () => {
    cal = await radicale.mkcalendar("ann", "broken", "Broken");
    await radicale.put("ann", cal, "busy.ics", ics("broken-busy@test", [`DTSTART:${stamp(day, "09:00")}`, `DTEND:${stamp(day, "10:00")}`, "SUMMARY:Planning"]));
    host = await hostAt(base);
    const res = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "caldav", server_url: faults.url, username: "ann", password: "secret" } } });
    expect(res.status).toBe(201);
    for (const c of res.body.data.calendars as Json[]) {
      if (c.name !== "Broken") await restAt(base, "PATCH", `/api/v1/calendars/${c.id}`, { key: host.key, body: { calendar: { check_for_conflicts: false } } });
    }
    event = await eventAt(base, host.key);
  });

  let changes = 0;
  /** An object of its own added at the server: a new ctag, so the next read reads the calendar again. */
  const changeCalendar = () => {
    const n = ++changes;
    return radicale.put("ann", cal, `other-${n}.ics`, ics(`broken-other-${n}@test`, [`DTSTART:${stamp(day, "15:00")}`, `DTEND:${stamp(day, "16:00")}`]));
  };

  const cases: Array<[string, (body: string) => string, string]> = [
    ["END:VEVENT where BEGIN:VEVENT belongs", (body) => body.replace(/BEGIN:VEVENT/g, "END:VEVENT"), "the calendar is not valid iCalendar: the calendar has END:VEVENT without BEGIN:VEVENT"],
    ["a VEVENT inside a VTODO", (body) => body.replace(/BEGIN:VEVENT/g, "BEGIN:VTODO\nUID:todo\nBEGIN:VEVENT").replace(/END:VEVENT/g, "END:VEVENT\nEND:VTODO"), "the calendar is not valid iCalendar: the calendar has a VEVENT inside a VTODO"],
  ];
  it.each(cases)("%s: the last good read keeps 09:00-10:00 busy, a booking answers 503, the connection shows error and the reason", async (_name, rewrite, reason) => {
    expect((await slotsAt(base, host.user, event, day)).starts).not.toContain(`${day} 09:00`);
    faults.rewrite = (body) => (body.includes("BEGIN:VCALENDAR") ? rewrite(body) : body);
    try {
      // A change at the server (a new ctag) makes the next listing read the calendar again, through the proxy.
      await changeCalendar();
      await new Promise((r) => setTimeout(r, 1100));
      const listed = await slotsAt(base, host.user, event, day);
      expect(listed.status).toBe(200);
      expect(listed.starts).not.toContain(`${day} 09:00`);
      expect(listed.starts).toContain(`${day} 10:00`);
      const booking = await bookAt(base, host.user, event, iso(day, "09:00"));
      expect({ status: booking.status, message: booking.body.message }).toEqual({ status: 503, message: "calendar is unavailable" });
      const [connection] = (await restAt(base, "GET", "/api/v1/calendar_connections", { key: host.key })).body.data as Json[];
      expect({ status: connection.status, last_error: connection.last_error }).toEqual({ status: "error", last_error: reason });
    } finally {
      faults.rewrite = null;
    }
    // Whole again (a version of its own: the broken one is not read twice), read afresh, the connection is ok.
    await changeCalendar();
    expect((await bookAt(base, host.user, event, iso(day, "09:00"))).status).toBe(409);
    expect((await restAt(base, "GET", "/api/v1/calendar_connections", { key: host.key })).body.data[0]).toMatchObject({ status: "ok", last_error: null });
  });
});

describe.each(["tcp", "http"] as const)("when a calendar is down (%s faults)", (layer) => {
  const day = dayFromToday(layer === "tcp" ? 10 : 11);
  const farDay = dayFromToday(layer === "tcp" ? 40 : 41);
  let host: { key: string; user: Json };
  let event: Json;

  beforeAll(async () => {
    const cal = await radicale.mkcalendar("ann", `outage-${layer}`, `Outage ${layer}`);
    await radicale.put("ann", cal, "busy.ics", ics(`outage-busy-${layer}@test`, [`DTSTART:${stamp(day, "10:00")}`, `DTEND:${stamp(day, "11:00")}`]));
    host = await hostAt(base);
    // Through a switchable proxy, so the same connection can meet each kind of failure.
    const through = layer === "tcp" ? proxy.url : faults.url;
    const res = await restAt(base, "POST", "/api/v1/calendar_connections", { key: host.key, body: { connection: { provider: "caldav", server_url: through, username: "ann", password: "secret" } } });
    expect(res.status).toBe(201);
    for (const c of res.body.data.calendars as Json[]) {
      if (c.name !== `Outage ${layer}`) await restAt(base, "PATCH", `/api/v1/calendars/${c.id}`, { key: host.key, body: { calendar: { check_for_conflicts: false } } });
    }
    event = await eventAt(base, host.key);
  });

  async function expectFailsClosed(): Promise<void> {
    // CALENDAR_CACHE_SECONDS is 1: what was read is now too old to be used without asking.
    await new Promise((r) => setTimeout(r, 1100));
    // A range read before: the listing uses it (≤ 15 minutes old), busy times still blocking, within the deadline.
    const stale = await slotsAt(base, host.user, event, day);
    expect(stale.status).toBe(200);
    expect(stale.starts).not.toContain(`${day} 10:00`);
    expect(stale.starts).toContain(`${day} 11:00`);
    // A range never read: nothing to fall back on.
    const unread = await slotsAt(base, host.user, event, farDay);
    expect({ status: unread.status, message: unread.body.message }).toEqual({ status: 503, message: "calendar is unavailable" });
    expect(Number(unread.headers.get("retry-after"))).toBeGreaterThan(0);
    // A booking cannot read the calendar: 503, and nothing is booked.
    const booking = await bookAt(base, host.user, event, iso(day, "12:00"));
    expect({ status: booking.status, message: booking.body.message }).toEqual({ status: 503, message: "calendar is unavailable" });
    const bookings = await restAt(base, "GET", `/api/v1/events/${event.id}/bookings?category=upcoming`, { key: host.key });
    expect(bookings.body.data.records ?? bookings.body.data).toHaveLength(0);
    const connections = await restAt(base, "GET", "/api/v1/calendar_connections", { key: host.key });
    expect(connections.body.data[0].status).toBe("error");
    expect(connections.body.data[0].last_error).toEqual(expect.any(String));
  }

  it.runIf(layer === "tcp")("a socket that accepts and never answers: stale busy times for listings, 503 otherwise, never past the deadline", async () => {
    expect((await slotsAt(base, host.user, event, day)).starts).not.toContain(`${day} 10:00`);
    proxy.mode = "hang";
    try {
      const t0 = Date.now();
      await expectFailsClosed();
      // Three reads that each met the hanging socket: none waited much past CALENDAR_TIMEOUT_MS.
      expect(Date.now() - t0).toBeLessThan(1100 + 3 * (TIMEOUT_MS + 2000));
    } finally {
      proxy.mode = "pass";
    }
  });

  it.runIf(layer === "tcp")("a stopped server: the same answers; back up, booking works and the status is ok again", async () => {
    expect((await slotsAt(base, host.user, event, day)).status).toBe(200);
    await radicale.stop();
    try {
      await expectFailsClosed();
    } finally {
      await radicale.start();
    }
    const booking = await bookAt(base, host.user, event, iso(day, "12:00"));
    expect(booking.status).toBe(201);
    const connections = await restAt(base, "GET", "/api/v1/calendar_connections", { key: host.key });
    expect(connections.body.data[0]).toMatchObject({ status: "ok", last_error: null });
  });

  for (const mode of ["error", "badxml", "trickle"] as const) {
    it.runIf(layer === "http")(`a server that answers ${mode === "error" ? "500" : mode === "badxml" ? "broken XML" : "a byte at a time, forever"}: fails closed within the deadline`, async () => {
      expect((await slotsAt(base, host.user, event, day)).status).toBe(200);
      faults.mode = mode;
      try {
        const t0 = Date.now();
        await expectFailsClosed();
        expect(Date.now() - t0).toBeLessThan(1100 + 3 * (TIMEOUT_MS + 2000));
      } finally {
        faults.mode = "pass";
      }
    });
  }
});
