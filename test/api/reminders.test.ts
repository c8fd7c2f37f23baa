// Reminders as a resource over every protocol (fields, limits, variables, another account's, preview) and how their deliveries are planned and re-planned (the booking's `reminders`), without waiting for any to fall due.
import { beforeAll, describe, expect, it } from "vitest";
import { BookingService } from "../../gen/scheduling/v1/booking_pb.js";
import { ReminderService } from "../../gen/scheduling/v1/reminder_pb.js";
import { REMINDER_VARIABLES } from "../../src/domain/reminder.js";
import { mailMessages } from "../../src/i18n/mail.js";
import { rest, type Json } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { allowedData, expectMissing, expectRefused, invoke, ok, PROTOCOLS, type Call, type Protocol } from "../helpers/calls.js";
import { until } from "../helpers/wait.js";

const calls = {
  create: (eventId: string, reminder?: Json): Call => ({
    service: ReminderService, rpc: "createReminder", request: { event_id: eventId, ...(reminder === undefined ? {} : { reminder }) },
    rest: { method: "POST", path: `/events/${eventId}/reminders`, body: reminder === undefined ? {} : { reminder } }, pick: "reminder",
  }),
  list: (eventId: string): Call => ({ service: ReminderService, rpc: "listReminders", request: { event_id: eventId }, rest: { method: "GET", path: `/events/${eventId}/reminders` }, pick: "reminders" }),
  get: (id: string): Call => ({ service: ReminderService, rpc: "getReminder", request: { id }, rest: { method: "GET", path: `/reminders/${id}` }, pick: "reminder" }),
  update: (id: string, reminder: Json): Call => ({ service: ReminderService, rpc: "updateReminder", request: { id, reminder }, rest: { method: "PATCH", path: `/reminders/${id}`, body: { reminder } }, pick: "reminder" }),
  remove: (id: string): Call => ({ service: ReminderService, rpc: "deleteReminder", request: { id }, rest: { method: "DELETE", path: `/reminders/${id}` } }),
  preview: (id: string, body: Json = {}): Call => ({ service: ReminderService, rpc: "previewReminder", request: { id, ...body }, rest: { method: "POST", path: `/reminders/${id}/preview`, body }, pick: "preview" }),
  booking: (id: string): Call => ({ service: BookingService, rpc: "getBooking", request: { id }, rest: { method: "GET", path: `/bookings/${id}` }, pick: "booking" }),
};

describe("the reminder resource", () => {
  let host: Host;
  let other: Host;
  let event: Json;
  beforeAll(async () => {
    host = await newHost();
    other = await newHost();
    event = await newEvent(host);
  });

  it.each(PROTOCOLS)("creates with defaults, lists oldest first, gets, updates and deletes over %s", async (protocol: Protocol) => {
    const ev = await newEvent(host);
    const created = await ok(protocol, host.key, calls.create(ev.id, { timing: "before_start", offset_minutes: 1440 }), 201, "reminder created");
    expect(created).toMatchObject({
      event_id: ev.id,
      timing: "before_start",
      offset_minutes: 1440,
      recipients: "booker",
      channel: "email",
      subject: "Reminder: {{event_name}} {{start_time}}",
      body: mailMessages.en.reminderBodyBefore,
      active: true,
    });
    expect(created.id).toMatch(/^[0-9a-f]{24}$/);
    expect(new Date(created.created_at).toISOString()).toBe(created.created_at);
    const second = await ok(protocol, host.key, calls.create(ev.id, { timing: "after_end", offset_minutes: 0, recipients: "both", channel: "webhook", subject: "Thanks {{attendee_name}}", body: "Notes:\n{{answers}}", active: false }), 201);
    expect(second).toMatchObject({ timing: "after_end", offset_minutes: 0, recipients: "both", channel: "webhook", subject: "Thanks {{attendee_name}}", body: "Notes:\n{{answers}}", active: false });

    const listed = (await ok(protocol, host.key, calls.list(ev.id), 200, "reminders found")) as Json[];
    expect(listed.map((r) => r.id)).toEqual([created.id, second.id]);
    expect(await ok(protocol, host.key, calls.get(created.id), 200, "reminder found")).toEqual(created);

    const updated = await ok(protocol, host.key, calls.update(created.id, { offset_minutes: 60, recipients: "host" }), 200, "reminder updated");
    expect(updated).toMatchObject({ id: created.id, offset_minutes: 60, recipients: "host", timing: "before_start", created_at: created.created_at });
    // An empty subject goes back to the default; leaving fields out leaves them.
    expect(await ok(protocol, host.key, calls.update(second.id, { subject: "" }), 200)).toMatchObject({ subject: "Reminder: {{event_name}} {{start_time}}", body: "Notes:\n{{answers}}" });

    await ok(protocol, host.key, calls.remove(created.id), 200, "reminder deleted");
    expectRefused(protocol, await invoke(protocol, host.key, calls.get(created.id)), 404, "reminder not found");
    expect(((await ok(protocol, host.key, calls.list(ev.id))) as Json[]).map((r) => r.id)).toEqual([second.id]);
  });

  it.each(PROTOCOLS)("checks every field over %s", async (protocol: Protocol) => {
    expectMissing(protocol, await invoke(protocol, host.key, calls.create(event.id, {})), { reminder: ["timing", "offset_minutes"] });
    expectMissing(protocol, await invoke(protocol, host.key, calls.create(event.id, { timing: "after_end" })), { reminder: ["offset_minutes"] });
    const bad = (reminder: Json) => invoke(protocol, host.key, calls.create(event.id, { timing: "before_start", offset_minutes: 10, ...reminder }));
    expectRefused(protocol, await bad({ timing: "soon" }), 422, "timing is not included in the list", allowedData("timing", ["before_start", "after_end"]));
    expectRefused(protocol, await bad({ recipients: "guests" }), 422, "recipients is not included in the list", allowedData("recipients", ["booker", "host", "both"]));
    expectRefused(protocol, await bad({ channel: "sms" }), 422, "channel is not included in the list", allowedData("channel", ["email", "webhook"]));
    expectRefused(protocol, await bad({ offset_minutes: 43_201 }), 422, "offset_minutes must be between 0 and 43200");
    expectRefused(protocol, await bad({ offset_minutes: -1 }), 422, "offset_minutes must be between 0 and 43200");
    expectRefused(protocol, await bad({ subject: "x".repeat(201) }), 422, "subject is too long (maximum is 200 characters)");
    expectRefused(protocol, await bad({ body: "x".repeat(5001) }), 422, "body is too long (maximum is 5000 characters)");
    expectRefused(protocol, await bad({ body: "Hi {{first_name}}" }), 422, "unknown variable first_name", allowedData("body", [...REMINDER_VARIABLES]));
    expectRefused(protocol, await bad({ subject: "{{ event_name }} {{when}}" }), 422, "unknown variable when", allowedData("subject", [...REMINDER_VARIABLES]));
    expectRefused(protocol, await bad({ subject: "two\nlines" }), 422, "reminder.subject must not contain control characters");
    // A body has lines.
    const multi = await ok(protocol, host.key, calls.create(event.id, { timing: "before_start", offset_minutes: 10, body: "Line one\n\nLine {{event_name}}" }), 201);
    expectRefused(protocol, await invoke(protocol, host.key, calls.update(multi.id, { channel: "fax" })), 422, "channel is not included in the list", allowedData("channel", ["email", "webhook"]));
    await ok(protocol, host.key, calls.remove(multi.id));
  });

  it("holds at most 10 per event, also when created at once", async () => {
    const ev = await newEvent(host);
    // A 503 (the database busy under fourteen writes at once on a loaded machine) is tried again, as its Retry-After says.
    const create = async (i: number) => {
      for (let tries = 1; ; tries++) {
        const res = await rest("POST", `/events/${ev.id}/reminders`, { key: host.key, body: { reminder: { timing: "before_start", offset_minutes: i } } });
        if (res.status !== 503 || tries === 5) return res;
        await new Promise((resolve) => setTimeout(resolve, 1000 * Number(res.headers.get("retry-after") ?? 1)));
      }
    };
    const attempts = await Promise.all(Array.from({ length: 14 }, (_, i) => create(i)));
    expect(attempts.filter((a) => a.status === 201)).toHaveLength(10);
    for (const refused of attempts.filter((a) => a.status !== 201)) expect([refused.status, refused.body.message]).toEqual([422, "an event may have at most 10 reminders"]);
    expect((await rest("GET", `/events/${ev.id}/reminders`, { key: host.key })).body.data).toHaveLength(10);
  });

  it.each(PROTOCOLS)("is 404 for another account's event or reminder over %s", async (protocol: Protocol) => {
    const theirEvent = await newEvent(other);
    const theirs = await ok(protocol, other.key, calls.create(theirEvent.id, { timing: "before_start", offset_minutes: 30 }), 201);
    expectRefused(protocol, await invoke(protocol, host.key, calls.create(theirEvent.id, { timing: "before_start", offset_minutes: 30 })), 404, "event not found");
    expectRefused(protocol, await invoke(protocol, host.key, calls.list(theirEvent.id)), 404, "event not found");
    for (const call of [calls.get(theirs.id), calls.update(theirs.id, { active: false }), calls.remove(theirs.id), calls.preview(theirs.id), calls.get("nope")]) {
      expectRefused(protocol, await invoke(protocol, host.key, call), 404, "reminder not found");
    }
    expect(await ok(protocol, other.key, calls.get(theirs.id))).toMatchObject({ active: true });
  });

  it("is gone with its event", async () => {
    const ev = await newEvent(host);
    const r = (await rest("POST", `/events/${ev.id}/reminders`, { key: host.key, body: { reminder: { timing: "before_start", offset_minutes: 5 } } })).body.data;
    expect((await rest("DELETE", `/events/${ev.id}`, { key: host.key })).status).toBe(200);
    expect((await rest("GET", `/reminders/${r.id}`, { key: host.key })).status).toBe(404);
  });
});

describe("preview", () => {
  it.each(PROTOCOLS)("shows a sample booking's mail in the host's language over %s", async (protocol: Protocol) => {
    const host = await newHost({ locale: "de", full_name: "Grace Hopper" });
    const ev = await newEvent(host, { name: "Erstgespräch" });
    const r = await ok(protocol, host.key, calls.create(ev.id, { timing: "before_start", offset_minutes: 60, recipients: "both" }), 201);
    const preview = await ok(protocol, host.key, calls.preview(r.id), 200, "reminder preview");
    expect(preview.recipient).toBe("booker");
    expect(preview.subject).toMatch(/^Erinnerung: Erstgespräch \d\d\/\d\d\/\d{4} \d\d?:\d\d/);
    expect(preview.text).toContain("Zur Erinnerung: Erstgespräch beginnt am");
    expect(preview.text).toContain("/unsubscribe");
    expect(preview.html).toContain('<html lang="de"');
    expect(new Date(preview.due_at).getTime()).toBeGreaterThan(Date.now());
    const forHost = await ok(protocol, host.key, calls.preview(r.id, { recipient: "host" }), 200);
    expect(forHost.recipient).toBe("host");
    expect(forHost.text).not.toContain("/unsubscribe");
    expectRefused(protocol, await invoke(protocol, host.key, calls.preview(r.id, { recipient: "guests" })), 422, "recipient is not included in the list", allowedData("recipient", ["booker", "host"]));
  });

  it("fills the variables from a real booking, its answers escaped, and gives a webhook reminder's message", async () => {
    const host = await newHost({ full_name: "Grace Hopper" });
    const ev = await newEvent(host, { name: "Intro" });
    const booking = await book(host, ev, { start_time: utcIso(dayFromToday(3), "10:00"), attendee_name: "<b>Ada</b>", timezone: "America/New_York" });
    const r = (await rest("POST", `/events/${ev.id}/reminders`, { key: host.key, body: { reminder: { timing: "after_end", offset_minutes: 30, channel: "webhook", subject: "{{attendee_name}}: {{event_name}}", body: "{{attendee_name}} at {{start_time}} ({{timezone}})\n{{manage_url}}" } } })).body.data;
    const res = await rest("POST", `/reminders/${r.id}/preview`, { key: host.key, body: { booking_id: booking.id } });
    expect(res.status).toBe(200);
    const p = res.body.data;
    const zwsp = /\u200B/g;
    expect(p.subject.replace(zwsp, "")).toBe("<b>Ada</b>: Intro");
    // The booker's own zone, with its name.
    expect(p.text.replace(zwsp, "")).toMatch(/<b>Ada<\/b> at \S+ \S+( [AP]M)? E[DS]T \(Eastern (Daylight|Standard) Time \(America\/New_York\)\)/);
    expect(p.text).toContain(`/booking/${booking.private_key}`);
    expect(p.html.replace(zwsp, "")).toContain("&lt;b&gt;Ada&lt;/b&gt;");
    expect(p.html).not.toContain("<b>Ada");
    expect(p.due_at).toBe(new Date(new Date(booking.end_time).getTime() + 30 * 60_000).toISOString());
    expect(p.webhook_message).toMatchObject({ type: "booking.reminder", data: { booking: { id: booking.id }, event: { id: ev.id }, reminder: { id: r.id, channel: "webhook" }, due_at: p.due_at } });
    // Another event's booking is not this reminder's.
    const otherEvent = await newEvent(host);
    const elsewhere = await book(host, otherEvent, { start_time: utcIso(dayFromToday(3), "12:00") });
    const refused = await rest("POST", `/reminders/${r.id}/preview`, { key: host.key, body: { booking_id: elsewhere.id } });
    expect([refused.status, refused.body.message]).toEqual([422, "booking_id is a booking of another event"]);
    expect((await rest("POST", `/reminders/${r.id}/preview`, { key: host.key, body: { booking_id: "0123456789abcdef01234567" } })).status).toBe(404);
  });
});

/** The booking's `reminders` once they are as `accept` wants them (planning runs in the background). */
async function remindersOf(host: Host, bookingId: string, accept: (r: Json[]) => boolean, protocol: Protocol = "rest"): Promise<Json[]> {
  return until(`reminders of ${bookingId}`, async () => ((await ok(protocol, host.key, calls.booking(bookingId))) as Json).reminders as Json[], { accept, timeoutMs: 15_000 });
}

const HOUR = 3_600_000;

describe("deliveries planned with the booking and re-planned", () => {
  let host: Host;
  beforeAll(async () => {
    host = await newHost();
  });

  it.each(PROTOCOLS)("one per active reminder, due offset before the start or after the end; already due is skipped (%s)", async (protocol: Protocol) => {
    const ev = await newEvent(host);
    const mk = async (reminder: Json) => (await rest("POST", `/events/${ev.id}/reminders`, { key: host.key, body: { reminder } })).body.data;
    const dayAhead = await mk({ timing: "before_start", offset_minutes: 60 });
    const followUp = await mk({ timing: "after_end", offset_minutes: 1440 });
    // Three days ahead: a week's notice is already due.
    const week = await mk({ timing: "before_start", offset_minutes: 7 * 1440 });
    await mk({ timing: "before_start", offset_minutes: 10, active: false });
    const b = await book(host, ev, { start_time: utcIso(dayFromToday(3), `${String(PROTOCOLS.indexOf(protocol) + 8).padStart(2, "0")}:00`) });
    const start = new Date(b.start_time).getTime();
    const end = new Date(b.end_time).getTime();
    const list = await remindersOf(host, b.id, (r) => r.length === 3, protocol);
    expect(list).toEqual([
      { reminder_id: dayAhead.id, due_at: new Date(start - HOUR).toISOString(), status: "scheduled", sent_at: null },
      { reminder_id: followUp.id, due_at: new Date(end + 24 * HOUR).toISOString(), status: "scheduled", sent_at: null },
      { reminder_id: week.id, due_at: new Date(start - 7 * 24 * HOUR).toISOString(), status: "skipped", sent_at: null },
    ].map((x) => (protocol === "rest" ? x : { ...x, sent_at: undefined })).map((x) => JSON.parse(JSON.stringify(x))));
  });

  it("a booking of an event without reminders has none", async () => {
    const ev = await newEvent(host);
    const b = await book(host, ev, { start_time: utcIso(dayFromToday(3), "15:00") });
    expect((await rest("GET", `/bookings/${b.id}`, { key: host.key })).body.data.reminders).toEqual([]);
  });

  it("a reschedule cancels the old booking's and plans the new one's; a cancel cancels", async () => {
    const ev = await newEvent(host);
    const r = (await rest("POST", `/events/${ev.id}/reminders`, { key: host.key, body: { reminder: { timing: "before_start", offset_minutes: 120 } } })).body.data;
    const b = await book(host, ev, { start_time: utcIso(dayFromToday(4), "09:00") });
    await remindersOf(host, b.id, (l) => l[0]?.status === "scheduled");
    const moved = await rest("POST", `/public/bookings/${b.private_key}/reschedule`, { body: { booking: { start_time: utcIso(dayFromToday(4), "13:00") } } });
    expect(moved.status).toBe(201);
    const fresh = moved.body.data;
    expect(await remindersOf(host, b.id, (l) => l[0]?.status === "canceled")).toHaveLength(1);
    const [planned] = await remindersOf(host, fresh.id, (l) => l[0]?.status === "scheduled");
    expect(planned).toMatchObject({ reminder_id: r.id, due_at: new Date(new Date(fresh.start_time).getTime() - 2 * HOUR).toISOString() });
    expect((await rest("POST", `/bookings/${fresh.id}/cancel`, { key: host.key, body: { booking: {} } })).status).toBe(200);
    await remindersOf(host, fresh.id, (l) => l[0]?.status === "canceled");
  });

  it("a skipped delivery is no pending one: a cancel or a move leaves it skipped", async () => {
    const ev = await newEvent(host);
    const mk = async (reminder: Json) => (await rest("POST", `/events/${ev.id}/reminders`, { key: host.key, body: { reminder } })).body.data;
    const week = await mk({ timing: "before_start", offset_minutes: 7 * 1440 });
    // Scheduled beside it: its cancel shows when the booking's deliveries were planned again.
    const hour = await mk({ timing: "before_start", offset_minutes: 60 });
    const statuses = (l: Json[]) => Object.fromEntries(l.map((d) => [d.reminder_id === week.id ? "week" : d.reminder_id === hour.id ? "hour" : "?", d.status]));
    const [moving, canceling] = [await book(host, ev, { start_time: utcIso(dayFromToday(2), "09:00") }), await book(host, ev, { start_time: utcIso(dayFromToday(2), "11:00") })];
    for (const b of [moving, canceling]) await remindersOf(host, b.id, (l) => statuses(l).week === "skipped" && statuses(l).hour === "scheduled");
    const moved = await rest("POST", `/public/bookings/${moving.private_key}/reschedule`, { body: { booking: { start_time: utcIso(dayFromToday(2), "13:00") } } });
    expect(moved.status).toBe(201);
    expect((await rest("POST", `/bookings/${canceling.id}/cancel`, { key: host.key, body: { booking: {} } })).status).toBe(200);
    for (const b of [moving, canceling]) expect(statuses(await remindersOf(host, b.id, (l) => statuses(l).hour === "canceled"))).toEqual({ week: "skipped", hour: "canceled" });
  });

  it("a changed reminder re-plans; switched off cancels, on again plans again; deleted cancels", async () => {
    const ev = await newEvent(host);
    const r = (await rest("POST", `/events/${ev.id}/reminders`, { key: host.key, body: { reminder: { timing: "before_start", offset_minutes: 60 } } })).body.data;
    const b = await book(host, ev, { start_time: utcIso(dayFromToday(5), "09:00") });
    const start = new Date(b.start_time).getTime();
    await remindersOf(host, b.id, (l) => l[0]?.status === "scheduled");
    await rest("PATCH", `/reminders/${r.id}`, { key: host.key, body: { reminder: { offset_minutes: 180 } } });
    await remindersOf(host, b.id, (l) => l[0]?.due_at === new Date(start - 3 * HOUR).toISOString() && l[0]?.status === "scheduled");
    await rest("PATCH", `/reminders/${r.id}`, { key: host.key, body: { reminder: { active: false } } });
    await remindersOf(host, b.id, (l) => l[0]?.status === "canceled");
    await rest("PATCH", `/reminders/${r.id}`, { key: host.key, body: { reminder: { active: true, timing: "after_end", offset_minutes: 0 } } });
    await remindersOf(host, b.id, (l) => l[0]?.status === "scheduled" && l[0]?.due_at === b.end_time);
    await rest("DELETE", `/reminders/${r.id}`, { key: host.key });
    await remindersOf(host, b.id, (l) => l[0]?.status === "canceled");
  });

  it("a reminder created later applies to the event's future bookings, skipped where already due", async () => {
    const ev = await newEvent(host);
    const soon = await book(host, ev, { start_time: utcIso(dayFromToday(2), "09:00") });
    const later = await book(host, ev, { start_time: utcIso(dayFromToday(6), "09:00") });
    const r = (await rest("POST", `/events/${ev.id}/reminders`, { key: host.key, body: { reminder: { timing: "before_start", offset_minutes: 4 * 1440 } } })).body.data;
    expect(await remindersOf(host, soon.id, (l) => l.length === 1)).toMatchObject([{ reminder_id: r.id, status: "skipped" }]);
    expect(await remindersOf(host, later.id, (l) => l.length === 1)).toMatchObject([{ reminder_id: r.id, status: "scheduled" }]);
  });
});
