// The host's bookings over every protocol: the five categories, date ranges, pagination, counts, attendees, display fields, notes, archive, cancel, other accounts.
import { beforeAll, describe, expect, it } from "vitest";
import { rest, type Json } from "../helpers/api.js";
import { dayFromToday, hostCalls, importBookings, newEvent, newHost, type Host, utcIso as iso } from "../helpers/bookings.js";
import { expectRefused, invoke, ok, PROTOCOLS, type Protocol } from "../helpers/calls.js";

const ids = (list: Json): string[] => list.records.map((r: Json) => r.id);

describe("categories and date ranges", () => {
  let host: Host;
  let event: Json;
  const b: Record<string, string> = {};

  beforeAll(async () => {
    host = await newHost({ timezone: "UTC" });
    event = await newEvent(host, { name: "Review" });
    const entry = (name: string, start: string, over: Json = {}) => ({ event_id: event.id, start_time: start, attendee_name: name, attendee_email: `${name.toLowerCase()}@example.com`, ...over });
    const seeded: Array<[string, Json]> = [
      ["F1", entry("F1", iso(dayFromToday(2), "10:00"), { booked_at: "2026-01-09T00:00:00Z" })],
      ["F2", entry("F2", iso(dayFromToday(1), "09:00"), { booked_at: "2026-01-05T00:00:00Z" })],
      ["F3", entry("F3", iso(dayFromToday(20), "09:00"))],
      ["P0", entry("P0", new Date(Date.now() - 10 * 60_000).toISOString())],
      ["P1", entry("P1", iso(dayFromToday(-2), "10:00"))],
      ["P2", entry("P2", iso(dayFromToday(-20), "10:00"))],
      ["C1", entry("C1", iso(dayFromToday(3), "10:00"), { status: "canceled" })],
      ["C2", entry("C2", iso(dayFromToday(-1), "10:00"), { status: "canceled" })],
      ["A1", entry("A1", iso(dayFromToday(4), "10:00"), { archived: true })],
      ["A2", entry("A2", iso(dayFromToday(5), "10:00"), { archived: true, status: "canceled" })],
      ["R1", entry("R1", iso(dayFromToday(2), "11:00"), { status: "rescheduled" })],
      ["R2", entry("R2", iso(dayFromToday(6), "10:00"), { status: "rescheduled", archived: true })],
    ];
    const created = await importBookings(seeded.map(([, e]) => e));
    seeded.forEach(([name], i) => (b[name] = created[i]));
  });

  describe.each(PROTOCOLS)("over %s", (protocol: Protocol) => {
    const list = (q: Json = {}) => ok(protocol, host.key, hostCalls.list(event.id, q), 200, "Bookings found");

    it("upcoming (the default): confirmed from now on within today..+15, soonest first", async () => {
      expect(ids(await list())).toEqual([b.F2, b.F1]);
      expect(ids(await list({ category: "upcoming" }))).toEqual([b.F2, b.F1]);
      expect(ids(await list({ category: "nonsense" }))).toEqual([b.F2, b.F1]);
    });

    it("recent: the same bookings, newest booked first", async () => {
      expect(ids(await list({ category: "recent" }))).toEqual([b.F1, b.F2]);
    });

    it("past: confirmed and started (a meeting in progress included), the 15 days up to today by default, latest first", async () => {
      expect(ids(await list({ category: "past" }))).toEqual([b.P0, b.P1]);
      expect(ids(await list({ category: "past", date_from: dayFromToday(-30), date_to: dayFromToday(30) }))).toEqual([b.P0, b.P1, b.P2]);
    });

    it("canceled: canceled and still ahead", async () => {
      expect(ids(await list({ category: "canceled" }))).toEqual([b.C1]);
      expect(ids(await list({ category: "canceled", date_from: dayFromToday(-30), date_to: dayFromToday(30) }))).toEqual([b.C1]);
    });

    it("archived: whatever the status, soonest first; rescheduled bookings show nowhere else", async () => {
      expect(ids(await list({ category: "archived" }))).toEqual([b.A1, b.A2, b.R2]);
      const wide = { date_from: dayFromToday(-30), date_to: dayFromToday(30) };
      const everywhere = (await Promise.all(["upcoming", "recent", "past", "canceled"].map((c) => list({ category: c, ...wide })))).flatMap(ids);
      expect(everywhere).not.toContain(b.R1);
      expect(everywhere).not.toContain(b.R2);
      expect(everywhere).not.toContain(b.A1);
    });

    it("filters by start day within the range given, both ends included", async () => {
      expect(ids(await list({ date_from: dayFromToday(2), date_to: dayFromToday(2) }))).toEqual([b.F1]);
      expect(ids(await list({ date_from: dayFromToday(0), date_to: dayFromToday(30) }))).toEqual([b.F2, b.F1, b.F3]);
    });

    it("falls back to the default range for unreadable or reversed dates", async () => {
      expect(ids(await list({ date_from: "yesterday", date_to: "2026-02-30" }))).toEqual([b.F2, b.F1]);
      expect(ids(await list({ date_from: dayFromToday(10), date_to: dayFromToday(0) }))).toEqual([b.F2, b.F1]);
      // Only the unreadable end falls back: to today+15.
      expect(ids(await list({ date_from: dayFromToday(2), date_to: "later" }))).toEqual([b.F1]);
    });

    it("counts every category as its list does", async () => {
      expect(await ok(protocol, host.key, hostCalls.counts(event.id), 200, "Counts fetched")).toEqual({ recent: 2, upcoming: 2, past: 2, canceled: 1, archived: 3, pending: 0 });
      const wide = { date_from: dayFromToday(-30), date_to: dayFromToday(30) };
      expect(await ok(protocol, host.key, hostCalls.counts(event.id, wide))).toEqual({ recent: 3, upcoming: 3, past: 3, canceled: 1, archived: 3, pending: 0 });
      expect(await ok(protocol, host.key, hostCalls.counts(event.id, { date_from: "bad", date_to: "worse" }))).toEqual({ recent: 2, upcoming: 2, past: 2, canceled: 1, archived: 3, pending: 0 });
    });

    it("is 404 for another account's event, a deleted one, and a malformed id", async () => {
      const other = await newHost();
      for (const call of [hostCalls.list(event.id), hostCalls.counts(event.id), hostCalls.attendees(event.id)]) {
        expectRefused(protocol, await invoke(protocol, other.key, call), 404, "event not found");
      }
      expectRefused(protocol, await invoke(protocol, host.key, hostCalls.list("not-an-id")), 404, "event not found");
      const gone = await newEvent(host);
      await rest("DELETE", `/events/${gone.id}`, { key: host.key });
      expectRefused(protocol, await invoke(protocol, host.key, hostCalls.counts(gone.id)), 404, "event not found");
    });
  });
});

describe("pagination", () => {
  let host: Host;
  let event: Json;
  let all: string[];

  beforeAll(async () => {
    host = await newHost();
    event = await newEvent(host);
    const start = Date.parse(`${dayFromToday(1)}T00:00:00Z`);
    all = await importBookings(
      Array.from({ length: 25 }, (_, i) => ({ event_id: event.id, start_time: new Date(start + i * 3_600_000).toISOString(), attendee_name: `P${i}`, attendee_email: `p${i}@example.com` })),
    );
  });

  const list = async (query: string) => (await rest("GET", `/events/${event.id}/bookings${query}`, { key: host.key })).body.data;

  it("pages 10 at a time by default and says where it is", async () => {
    const first = await list("");
    expect(first.page).toEqual({ limit: 10, number: 1, total_pages: 3, total_records: 25, current_page: 1 });
    const pages = [first, await list("?page[number]=2"), await list("?page[number]=3")];
    expect(pages.flatMap(ids)).toEqual(all);
    expect(pages[2].page).toEqual({ limit: 10, number: 3, total_pages: 3, total_records: 25, current_page: 3 });
  });

  it("caps page[limit] at 500 and reads nonsense as the defaults", async () => {
    expect((await list("?page[limit]=501")).page.limit).toBe(500);
    expect(ids(await list("?page[limit]=99999999999"))).toEqual(all);
    expect((await list("?page[limit]=abc")).page.limit).toBe(10);
    expect((await list("?page[limit]=0")).page.limit).toBe(10);
    expect((await list("?page[limit]=-5")).page.limit).toBe(10);
    expect((await list("?page[number]=0")).page.number).toBe(1);
    expect((await list("?page[number]=x&page[limit]=7")).page).toEqual({ limit: 7, number: 1, total_pages: 4, total_records: 25, current_page: 1 });
  });

  it("answers an empty page past the end", async () => {
    const beyond = await list("?page[number]=9");
    expect(beyond.records).toEqual([]);
    expect(beyond.page).toEqual({ limit: 10, number: 9, total_pages: 3, total_records: 25, current_page: 9 });
  });

  it("applies page[limit] over gRPC too", async () => {
    const data = await ok("grpc", host.key, hostCalls.list(event.id, { limit: 600, number: 1 }));
    expect(data.page).toEqual({ limit: 500, number: 1, total_pages: 1, total_records: 25, current_page: 1 });
  });
});

describe("booking records", () => {
  it("writes the range in the host's zone and formats, the duration and the location", async () => {
    const host = await newHost({ timezone: "Berlin" });
    await rest("PATCH", "/user", { key: host.key, body: { user: { date_format: "31.12.2024", time_format: "24_hours" } } });
    const event = await newEvent(host, { name: "Studio", color: "tomato", slot_duration: "45_minutes", location: { name: "in_person", details: "Room 4" } });
    const [id] = await importBookings([
      { event_id: event.id, start_time: "2030-01-15T22:30:00Z", attendee_name: "Night Owl", attendee_email: "owl@example.com", archived: true, booked_at: "2029-12-01T08:00:00+01:00", internal_notes: "bring coffee" },
    ]);
    const list = (await rest("GET", `/events/${event.id}/bookings?category=archived&date_from=2030-01-15&date_to=2030-01-16`, { key: host.key })).body.data;
    expect(list.records).toHaveLength(1);
    const r = list.records[0];
    expect(r).toMatchObject({
      id,
      status: "confirmed",
      event_name: "Studio",
      color: "tomato",
      attendee_name: "Night Owl",
      attendee_email: "owl@example.com",
      host_ui_booking_range_with_date: "15.01.2030 23:30 - 16.01.2030 00:15",
      ui_duration: "45 minutes",
      formatted_location_name: "Room 4",
      internal_notes: "bring coffee",
      event_id: event.id,
      start_time: "2030-01-15T22:30:00.000Z",
      end_time: "2030-01-15T23:15:00.000Z",
      booked_at: "2029-12-01T07:00:00.000Z",
      archived: true,
    });
    expect(r.private_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Days are the host's: in Berlin the booking starts on the 15th.
    const onSixteenth = (await rest("GET", `/events/${event.id}/bookings?category=archived&date_from=2030-01-16&date_to=2030-01-16`, { key: host.key })).body.data;
    expect(onSixteenth.records).toEqual([]);

    await rest("PATCH", "/user", { key: host.key, body: { user: { date_format: "12/31/2024", time_format: "12_hours" } } });
    const again = (await rest("GET", `/events/${event.id}/bookings?category=archived&date_from=2030-01-15&date_to=2030-01-15`, { key: host.key })).body.data;
    expect(again.records[0].host_ui_booking_range_with_date).toBe("01/15/2030 11:30 PM - 01/16/2030 12:15 AM");
  });
});

describe("attendees", () => {
  it.each(PROTOCOLS)("gives one entry per e-mail, canceled counted apart, rescheduled left out, over %s", async (protocol: Protocol) => {
    const host = await newHost({ timezone: "UTC" });
    await rest("PATCH", "/user", { key: host.key, body: { user: { date_format: "2023-12-31" } } });
    const event = await newEvent(host);
    const d = (n: number) => iso(dayFromToday(n), "10:00");
    const created = await importBookings([
      { event_id: event.id, start_time: d(-3), attendee_name: "Xavier Old", attendee_email: "X@Example.com" },
      { event_id: event.id, start_time: d(4), attendee_name: "Xavier New", attendee_email: "x@example.com" },
      { event_id: event.id, start_time: d(5), attendee_name: "Xavier", attendee_email: "x@example.com", status: "canceled" },
      { event_id: event.id, start_time: d(6), attendee_name: "Xavier", attendee_email: "x@example.com", status: "rescheduled" },
      { event_id: event.id, start_time: d(1), attendee_name: "Yolanda Young", attendee_email: "y@example.com", archived: true },
      { event_id: event.id, start_time: d(2), attendee_name: "Zed", attendee_email: "z@example.com", status: "rescheduled" },
      { event_id: event.id, start_time: d(-1), attendee_name: host.user.full_name, attendee_email: host.user.email },
    ]);
    const attendees = await ok(protocol, host.key, hostCalls.attendees(event.id), 200, "Attendees found");
    expect(attendees).toEqual([
      {
        email: "x@example.com", full_name: "Xavier", avatar_name: "X", bookings_count: 2, canceled_count: 1,
        first_appeared: dayFromToday(-3), last_appeared: dayFromToday(5), first_appeared_at: d(-3), last_appeared_at: d(5),
        is_timelydo_user: false, logo: null, ids: [created[0], created[1], created[2]],
      },
      {
        email: "y@example.com", full_name: "Yolanda Young", avatar_name: "YY", bookings_count: 1, canceled_count: 0,
        first_appeared: dayFromToday(1), last_appeared: dayFromToday(1), first_appeared_at: d(1), last_appeared_at: d(1),
        is_timelydo_user: false, logo: null, ids: [created[4]],
      },
      {
        email: host.user.email, full_name: host.user.full_name, avatar_name: host.user.avatar_name, bookings_count: 1, canceled_count: 0,
        first_appeared: dayFromToday(-1), last_appeared: dayFromToday(-1), first_appeared_at: d(-1), last_appeared_at: d(-1),
        is_timelydo_user: true, logo: null, ids: [created[6]],
      },
    ].map((a) => (protocol === "rest" ? a : withoutNullLogo(a))));
  });

  it("is an empty list for an event without bookings", async () => {
    const host = await newHost();
    const event = await newEvent(host);
    expect(await ok("rest", host.key, hostCalls.attendees(event.id), 200, "Attendees found")).toEqual([]);
  });
});

/** RPC JSON leaves an unset optional field out where REST shows null. */
function withoutNullLogo(a: Json): Json {
  const { logo: _logo, ...rest } = a;
  return rest;
}

describe.each(PROTOCOLS)("host actions over %s", (protocol: Protocol) => {
  let host: Host;
  let event: Json;

  beforeAll(async () => {
    host = await newHost();
    event = await newEvent(host);
  });

  const seed = async (over: Json = {}): Promise<string> =>
    (await importBookings([{ event_id: event.id, start_time: iso(dayFromToday(3), "10:00"), attendee_name: "Sam", attendee_email: "sam@example.com", ...over }]))[0];

  it("writes notes and archives, returning the record", async () => {
    const id = await seed();
    const noted = await ok(protocol, host.key, hostCalls.update(id, { internal_notes: "VIP" }), 200, "booking updated");
    expect(noted).toMatchObject({ id, internal_notes: "VIP", archived: false, status: "confirmed", can_be_rescheduled: true });
    const archived = await ok(protocol, host.key, hostCalls.update(id, { archived: true }), 200, "booking updated");
    expect(archived).toMatchObject({ id, internal_notes: "VIP", archived: true });
    const list = await ok(protocol, host.key, hostCalls.list(event.id, { category: "archived" }));
    expect(ids(list)).toContain(id);
    const cleared = await ok(protocol, host.key, hostCalls.update(id, { internal_notes: "", archived: false }));
    expect(cleared.archived).toBe(false);
    expect(cleared.internal_notes ?? null).toBeNull();
    expectRefused(protocol, await invoke(protocol, host.key, hostCalls.update(id, { internal_notes: "x".repeat(2001) })), 422, "internal_notes is too long (maximum is 2000 characters)");
  });

  it("cancels a booking ahead, and refuses a second cancel or a started one", async () => {
    const id = await seed({ start_time: iso(dayFromToday(3), "12:00") });
    const canceled = await ok(protocol, host.key, hostCalls.cancel(id, { reason: "host away" }), 200, "booking canceled");
    expect(canceled).toMatchObject({ id, status: "canceled", can_be_rescheduled: false });
    expectRefused(protocol, await invoke(protocol, host.key, hostCalls.cancel(id)), 422, "booking is canceled, only a confirmed booking can be changed");
    const started = await seed({ start_time: new Date(Date.now() - 60_000).toISOString() });
    expectRefused(protocol, await invoke(protocol, host.key, hostCalls.cancel(started)), 422, "booking has already started");
  });

  it("is 404 for another account's booking and for ids that name nothing", async () => {
    const id = await seed({ start_time: iso(dayFromToday(3), "14:00") });
    const other = await newHost();
    expectRefused(protocol, await invoke(protocol, other.key, hostCalls.update(id, { internal_notes: "mine now" })), 404, "booking not found");
    expectRefused(protocol, await invoke(protocol, other.key, hostCalls.cancel(id)), 404, "booking not found");
    expectRefused(protocol, await invoke(protocol, host.key, hostCalls.update("0123456789abcdef01234567", {})), 404, "booking not found");
    expectRefused(protocol, await invoke(protocol, host.key, hostCalls.cancel("nope")), 404, "booking not found");
    const untouched = await ok(protocol, host.key, hostCalls.list(event.id, { date_from: dayFromToday(3), date_to: dayFromToday(3) }));
    const record = untouched.records.find((r: Json) => r.id === id);
    expect(record.status).toBe("confirmed");
    expect(record.internal_notes ?? null).toBeNull();
  });
});
