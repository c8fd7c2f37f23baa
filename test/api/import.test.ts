// Admin booking import: all or nothing, up to 1000 entries, every entry checked with messages naming index and field, over REST and gRPC.
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdminService } from "../../gen/scheduling/v1/admin_pb.js";
import { ADMIN_TOKEN, grpcUnary, rest, rpcError, useServer, type Json } from "../helpers/api.js";
import { dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { startServer, type RunningServer } from "../helpers/server.js";

/*
 * A server of the file's own: the embedded database's work per query grows with the collection, and the 1 000
 * bookings imported here would make every later booking on the shared server of this worker cost it several
 * times as much, for the rest of the run (bench/RESULTS.md, "Issue 39 (2026-12-03, fifth session)").
 */
let server: RunningServer | undefined;
beforeAll(async () => {
  server = await startServer({});
  useServer(server.baseUrl);
});
afterAll(async () => {
  useServer(undefined);
  await server?.stop();
});

const start = (n: number, time = "10:00"): string => new Date(`${dayFromToday(n)}T${time}:00Z`).toISOString();

describe("POST /admin/bookings/import", () => {
  let host: Host;
  let event: Json;
  let other: Host;
  let otherEvent: Json;
  const entry = (over: Json = {}): Json => ({ event_id: event.id, start_time: start(2), attendee_name: "Imported Person", attendee_email: "imported@example.com", ...over });
  const total = async (): Promise<number> =>
    (await rest("GET", `/events/${event.id}/bookings_counts?date_from=${dayFromToday(-30)}&date_to=${dayFromToday(30)}`, { key: host.key })).body.data;
  const importing = (bookings: Json[]) => rest("POST", "/admin/bookings/import", { admin: true, body: { bookings } });

  beforeAll(async () => {
    host = await newHost();
    event = await newEvent(host, { name: "Imported", slot_duration: "45_minutes", padding_duration: "10_minutes" });
    other = await newHost();
    otherEvent = await newEvent(other);
  });

  it("imports into any account's events and answers the new ids", async () => {
    const res = await importing([
      entry({ start_time: `${dayFromToday(20)}T09:00:00+01:00`, status: "confirmed", booked_at: "2026-11-01T12:00:00Z", internal_notes: "from the old system" }),
      entry({ event_id: otherEvent.id, attendee_email: "SOMEONE@Example.com", status: "canceled", archived: true }),
    ]);
    expect(res.status).toBe(201);
    expect(res.body.message).toBe("bookings imported");
    expect(res.body.data.imported).toBe(2);
    expect(res.body.data.ids).toHaveLength(2);
    const mine = await rest("GET", `/events/${event.id}/bookings?category=archived&date_from=${dayFromToday(0)}&date_to=${dayFromToday(60)}`, { key: host.key });
    expect(mine.body.data.records).toEqual([]);
    const theirs = await rest("GET", `/events/${otherEvent.id}/bookings?category=archived`, { key: other.key });
    expect(theirs.body.data.records).toMatchObject([{ id: res.body.data.ids[1], status: "canceled", attendee_email: "someone@example.com", archived: true }]);
  });

  it("takes the end from the event's slot length", async () => {
    const [id] = (await importing([entry({ start_time: start(3, "08:00") })])).body.data.ids;
    const list = await rest("GET", `/events/${event.id}/bookings?date_from=${dayFromToday(3)}&date_to=${dayFromToday(3)}`, { key: host.key });
    expect(list.body.data.records).toMatchObject([{ id, start_time: start(3, "08:00"), end_time: start(3, "08:45"), ui_duration: "45 minutes" }]);
  });

  it("blocks the host's slots like any booking, padding included", async () => {
    await importing([entry({ start_time: start(7, "09:40") }), entry({ start_time: start(8, "10:00") })]);
    const bookAt = (day: number, time: string) =>
      rest("POST", `/public/users/${host.user.url}/events/${event.url}/bookings`, {
        body: { booking: { start_time: start(day, time), attendee_name: "Late", attendee_email: "late@example.com" } },
      });
    // 09:40-10:25 keeps its 10 minutes of padding after it, to 10:35: the 10:30 slot starts inside it.
    expect((await bookAt(7, "10:30")).status).toBe(409);
    // Padding is kept after a meeting only: 09:00-09:45 padded to 09:55 ends before 10:00, whose padding is not before it.
    expect((await bookAt(8, "09:00")).status).toBe(201);
  });

  it("rejects the whole call for one bad entry, naming its index and field, and writes nothing", async () => {
    const before = await total();
    const cases: Array<[Json, string, Json?]> = [
      [entry({ start_time: "next tuesday" }), "bookings[2].start_time is not a valid ISO 8601 time"],
      [entry({ start_time: "2026-02-30T10:00:00Z" }), "bookings[2].start_time is not a valid ISO 8601 time"],
      [entry({ booked_at: "2026-13-01T00:00:00Z" }), "bookings[2].booked_at is not a valid ISO 8601 time"],
      [entry({ start_time: "2026-12-09T13:00:00" }), "bookings[2].start_time needs a UTC offset or Z, e.g. 2026-12-09T13:00:00Z"],
      [entry({ booked_at: "2026-12-01T09:30" }), "bookings[2].booked_at needs a UTC offset or Z, e.g. 2026-12-09T13:00:00Z"],
      [entry({ attendee_email: undefined }), "bookings[2].attendee_email can't be blank"],
      [entry({ attendee_email: "nobody" }), "bookings[2].attendee_email is invalid"],
      [entry({ attendee_name: " " }), "bookings[2].attendee_name can't be blank"],
      [entry({ attendee_name: "n".repeat(81) }), "bookings[2].attendee_name is too long (maximum is 80 characters)"],
      [entry({ status: "pending" }), "bookings[2].status is not included in the list", { field: "bookings[2].status", allowed: ["confirmed", "canceled", "rescheduled"] }],
      [entry({ event_id: "0123456789abcdef01234567" }), "bookings[2].event_id does not name an event"],
      [entry({ event_id: "not-an-id" }), "bookings[2].event_id does not name an event"],
      [entry({ internal_notes: "n".repeat(2001) }), "bookings[2].internal_notes is too long (maximum is 2000 characters)"],
    ];
    for (const [bad, message, data = {}] of cases) {
      const res = await importing([entry(), entry({ start_time: start(4) }), bad, entry({ start_time: start(5) })]);
      expect({ status: res.status, body: res.body }).toEqual({ status: 422, body: { success: false, message, data, status: "unprocessable_entity" } });
    }
    expect(await total()).toEqual(before);
  });

  it("refuses a deleted event", async () => {
    const gone = await newEvent(host);
    await rest("DELETE", `/events/${gone.id}`, { key: host.key });
    const res = await importing([entry({ event_id: gone.id })]);
    expect({ status: res.status, message: res.body.message }).toEqual({ status: 422, message: "bookings[0].event_id does not name an event" });
  });

  it("takes up to 1000 entries a call, seen all at once, and loses no booking or note written beside them", async () => {
    const many = Array.from({ length: 1000 }, (_, i) => entry({ start_time: new Date(Date.parse(start(-40)) - i * 3_600_000).toISOString(), attendee_email: `bulk${i}@example.com` }));
    // Every category's count together: what a reader of the imported event sees of it.
    const counted = async () =>
      Object.values((await rest("GET", `/events/${event.id}/bookings_counts?date_from=${dayFromToday(-90)}&date_to=${dayFromToday(-30)}`, { key: host.key })).body.data as Record<string, number>).reduce((a, b) => a + b, 0);
    const before = await counted();
    // Beside the import: another host's bookings and notes, one after another on two lines, and a reader of the
    // imported event's count, until the import answers. A transaction on the embedded server lost 3-4 of 7 such
    // writes (src/features/bookings/writes.ts insertImported).
    const beside = await newHost();
    const besideEvent = await newEvent(beside);
    let done = false;
    const booked: Json[] = [];
    const noted: Json[] = [];
    const seen = new Set<number>();
    const writer = async (line: number) => {
      for (let n = 0; !done; n++) {
        const res = await rest("POST", `/public/users/${beside.user.url}/events/${besideEvent.url}/bookings`, {
          body: { booking: { start_time: utcIso(dayFromToday(3 + line), `${String(n % 24).padStart(2, "0")}:${n >= 24 ? "30" : "00"}`), attendee_name: "Beside", attendee_email: "beside@example.com" } },
        });
        if (res.status !== 201) continue;
        booked.push(res.body.data);
        const note = await rest("PATCH", `/bookings/${res.body.data.id}`, { key: beside.key, body: { booking: { internal_notes: `beside ${line}-${n}` } } });
        if (note.status === 200) noted.push(note.body.data);
      }
    };
    const reader = async () => {
      while (!done) seen.add((await counted()) - before);
    };
    const importer = importing(many).finally(() => (done = true));
    const [res] = await Promise.all([importer, writer(0), writer(1), reader()]);
    expect(res.status).toBe(201);
    expect(res.body.data.imported).toBe(1000);
    expect(new Set(res.body.data.ids).size).toBe(1000);
    const after = (await counted()) - before;
    expect(after).toBeGreaterThanOrEqual(1000);
    expect([...seen].filter((n) => n !== 0 && n !== after)).toEqual([]);
    const stored = await Promise.all(booked.map((b) => rest("GET", `/bookings/${b.id}`, { key: beside.key })));
    expect(stored.map((r) => r.status)).toEqual(booked.map(() => 200));
    const notes = new Map(stored.map((r) => [r.body.data.id, r.body.data.internal_notes]));
    expect(noted.map((b) => notes.get(b.id))).toEqual(noted.map((b) => b.internal_notes));
    const tooMany = await importing([...many, entry()]);
    expect({ status: tooMany.status, message: tooMany.body.message }).toEqual({ status: 422, message: "bookings has more than 1000 entries (1001)" });
    // Proto3 cannot tell an empty list from none: an empty import is one without its `bookings` array.
    const none = await importing([]);
    expect({ status: none.status, message: none.body.message, data: none.body.data }).toEqual({ status: 400, message: "missing params", data: { bookings: [] } });
  });

  it("needs the admin token", async () => {
    const res = await rest("POST", "/admin/bookings/import", { body: { bookings: [entry()] } });
    expect({ status: res.status, message: res.body.message }).toEqual({ status: 401, message: "admin token is missing or invalid" });
    const wrong = await rest("POST", "/admin/bookings/import", { body: { bookings: [entry()] }, headers: { "X-ADMIN-TOKEN": "guess" } });
    expect(wrong.status).toBe(401);
  });

  it("works over gRPC with the token as metadata, with the same messages", async () => {
    const answer = await grpcUnary(AdminService, "importBookings", { bookings: [{ eventId: event.id, startTime: start(6), attendeeName: "Rpc", attendeeEmail: "rpc@example.com" }] }, undefined, {
      "x-admin-token": ADMIN_TOKEN,
    });
    expect(answer.imported).toBe(1);
    expect(answer.ids[0]).toMatch(/^[0-9a-f]{24}$/);
    const err = await rpcError(() =>
      grpcUnary(AdminService, "importBookings", { bookings: [{ eventId: event.id, startTime: "soon", attendeeName: "Rpc", attendeeEmail: "rpc@example.com" }] }, undefined, {
        "x-admin-token": ADMIN_TOKEN,
      }),
    );
    expect({ code: err.code, message: err.rawMessage }).toEqual({ code: Code.InvalidArgument, message: "bookings[0].start_time is not a valid ISO 8601 time" });
  });
});
