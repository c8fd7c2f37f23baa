// Unknown fields in REST write objects are 422 `unknown field <name>` (extensions.md "Unknown fields (REST)"), on every JSON write row of the table; RPC JSON requests refuse them too (rpc-json-errors.test.ts).
import type { DescMessage } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { restNameOf } from "../../src/platform/rest/schemaFacts.js";
import { methodOf, type RpcRoute } from "../../src/platform/rest/table.js";
import { baseUrl, rest, type Json } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, utcIso, type Host } from "../helpers/bookings.js";
import { BODY_ROWS, bodyObjectOf, filledPath, FLAT_BODY_ROWS, rowAuth, rowRecords, type RowRecords } from "../helpers/tableRows.js";

let records: RowRecords;

beforeAll(async () => {
  records = await rowRecords();
});

/** The message of a row's body object (the object itself, or a list entry). */
function objectMessage(row: RpcRoute): DescMessage {
  const field = methodOf(row).input.fields.find((f) => f.name === bodyObjectOf(row).name)!;
  if (field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message")) return field.message;
  throw new Error(`${row.method} ${row.path}: body object ${field.name} holds no message`);
}

/** An object holding `fields`, as the row's body carries it (a list of one for the import). */
function bodyWith(row: RpcRoute, fields: Json): Json {
  const { name, list } = bodyObjectOf(row);
  return { [name]: list ? [fields] : fields };
}

async function send(row: RpcRoute, body: Json, headers: Record<string, string> = rowAuth(records)) {
  return rest(row.method, filledPath(row, records), { body, headers: { ...headers, "Content-Type": "application/json" } });
}

describe("every JSON write row refuses a name its object does not take", () => {
  for (const row of BODY_ROWS) {
    it(`${row.method} ${row.path}`, async () => {
      const message = objectMessage(row);
      const res = await send(row, bodyWith(row, { zz_unknown: 1, yy_unknown: 2 }));
      expect({ status: res.status, message: res.body.message, unknown: res.body.data.unknown }).toEqual({
        status: 422,
        message: "unknown field zz_unknown",
        unknown: ["zz_unknown", "yy_unknown"],
      });
      expect(res.body.status).toBe("unprocessable_entity");
      // `allowed` is what the path takes: every field of the object's message, and nested names as paths, by
      // their REST names (`_destroy`).
      expect(res.body.data.allowed).toEqual(expect.arrayContaining(message.fields.map(restNameOf)));
      for (const field of message.fields) {
        const inner = field.fieldKind === "message" ? field.message : field.fieldKind === "list" && field.listKind === "message" ? field.message : undefined;
        if (!inner || inner.typeName.startsWith("google.protobuf.")) continue;
        const sub = field.fieldKind === "list" ? [{ zz_nested: true }] : { zz_nested: true };
        const nested = await send(row, bodyWith(row, { [field.name]: sub }));
        expect({ status: nested.status, message: nested.body.message }, `${field.name}`).toEqual({ status: 422, message: `unknown field ${field.name}.zz_nested` });
        expect(nested.body.data.allowed).toEqual(expect.arrayContaining(inner.fields.map((f) => `${field.name}.${restNameOf(f)}`)));
      }
    });
  }

  for (const row of FLAT_BODY_ROWS) {
    it(`${row.method} ${row.path} (its body is the request itself)`, async () => {
      const res = await send(row, { zz_unknown: 1, yy_unknown: 2 });
      expect({ status: res.status, message: res.body.message, unknown: res.body.data.unknown }).toEqual({ status: 422, message: "unknown field zz_unknown", unknown: ["zz_unknown", "yy_unknown"] });
      expect(res.body.data.allowed).toEqual(expect.arrayContaining(methodOf(row).input.fields.map(restNameOf)));
    });
  }

  it("the lower camel case JSON names protobuf reads are taken too", async () => {
    const { host } = records;
    const res = await rest("POST", "/events/validate_url_availability", { key: host.key, body: { event: { url: "free-url-x" } } });
    expect(res.status).toBe(200);
    const camel = await rest("POST", "/events", { key: host.key, body: { event: { name: "Camel", url: `camel-${Date.now()}`, guestEmailsLimit: 2, enableGuestEmails: true } } });
    expect({ status: camel.status, limit: camel.body.data.guest_emails_limit }).toEqual({ status: 201, limit: 2 });
  });
});

describe("the cases of the issue and extensions.md", () => {
  let host: Host;
  beforeAll(async () => {
    host = await newHost({ timezone: "UTC" });
  });

  it("POST /events with guest_email_limit is 422 with the hint, and writes nothing", async () => {
    const url = `typo-${Date.now()}`;
    const res = await rest("POST", "/events", { key: host.key, body: { event: { name: "Typo", url, enable_guest_emails: true, guest_email_limit: 3 } } });
    expect({ status: res.status, message: res.body.message, unknown: res.body.data.unknown }).toEqual({
      status: 422,
      message: "unknown field guest_email_limit (did you mean guest_emails_limit?)",
      unknown: ["guest_email_limit"],
    });
    expect(res.body.data.allowed).toContain("guest_emails_limit");
    // Read-only names of the answer are not listed as taken.
    expect(res.body.data.allowed).not.toContain("absolute_url");
    const free = await rest("POST", "/events/validate_url_availability", { key: host.key, body: { event: { url } } });
    expect(free.body.data.available).toBe(true);
  });

  it("names the first unknown in the body's order, nested ones as paths, each hint one edit away", async () => {
    const event = await rest("POST", "/events", {
      key: host.key,
      body: { event: { name: "Where", url: `where-${Date.now()}`, colour: "sage", location: { name: "in_person", detail: "Room 4" }, slot_duraton: "1_hour" } },
    });
    expect({ status: event.status, message: event.body.message, unknown: event.body.data.unknown }).toEqual({
      status: 422,
      message: "unknown field colour (did you mean color?)",
      unknown: ["colour", "location.detail", "slot_duraton"],
    });
    const nested = await rest("POST", "/events", { key: host.key, body: { event: { name: "Where", url: `where-${Date.now()}`, location: { name: "in_person", detials: "Room 4" } } } });
    expect(nested.body.message).toBe("unknown field location.detials (did you mean location.details?)");
    const far = await rest("POST", "/events", { key: host.key, body: { event: { name: "Far", url: `far-${Date.now()}`, minutes: 30 } } });
    expect(far.body.message).toBe("unknown field minutes");
  });

  it("checks availability intervals and booking answers, the public paths included", async () => {
    const hours = await rest("PUT", "/user/availability", {
      key: host.key,
      body: { availability: { weekly_hours: { monday: [{ start: "09:00", ends: "17:00" }] }, date_overrides: [], minimum_notice_minutes: 0, booking_window_days: 60 } },
    });
    expect({ status: hours.status, message: hours.body.message }).toEqual({ status: 422, message: "unknown field weekly_hours.monday.ends (did you mean weekly_hours.monday.end?)" });
    const override = await rest("PUT", "/user/availability", { key: host.key, body: { availability: { date_overrides: [{ date: "2030-01-01", interval: [] }] } } });
    expect(override.body.message).toBe("unknown field date_overrides.interval (did you mean date_overrides.intervals?)");

    const bookable = await newHost();
    const event = await newEvent(bookable);
    const path = `/public/users/${bookable.user.url}/events/${event.url}/bookings`;
    const booking = { start_time: utcIso(dayFromToday(3), "10:00"), attendee_name: "Ada", attendee_email: "ada@example.com" };
    const answers = await rest("POST", path, { body: { booking: { ...booking, answers: [{ question_id: "0123456789abcdef01234567", valeu: "x" }] } } });
    expect({ status: answers.status, message: answers.body.message }).toEqual({ status: 422, message: "unknown field answers.valeu (did you mean answers.value?)" });
    const guests = await rest("POST", path, { body: { booking: { ...booking, guests: ["g@example.com"] } } });
    expect({ status: guests.status, message: guests.body.message }).toEqual({ status: 422, message: "unknown field guests" });
    // Nothing was booked: the slot is still free.
    expect((await book(bookable, event, booking)).start_time).toBe(booking.start_time);
  });

  it("takes read-only names of the resource's answer, so an object can be sent back as GET returned it", async () => {
    const user = (await rest("GET", "/user", { key: host.key })).body.data;
    const back = await rest("PATCH", "/user", { key: host.key, body: { user: { ...user, bio: "Sent back whole" } } });
    expect({ status: back.status, bio: back.body.data.bio }).toEqual({ status: 200, bio: "Sent back whole" });
    // GET /user/settings shows the user too (its settings fields beside it): sent back to PATCH /user or as a new account.
    const settings = (await rest("GET", "/user/settings", { key: host.key })).body.data;
    const fromSettings = await rest("PATCH", "/user", { key: host.key, body: { user: { ...settings, bio: "From settings" } } });
    expect({ status: fromSettings.status, message: fromSettings.body.message, bio: fromSettings.body.data.bio }).toEqual({ status: 200, message: "user updated", bio: "From settings" });
    const tag = `${process.pid}-${Date.now()}`;
    const copy = await rest("POST", "/admin/accounts", { admin: true, body: { account: { ...settings, email: `copy-${tag}@example.com`, url: `copy-${tag}` } } });
    expect({ status: copy.status, message: copy.body.message }).toEqual({ status: 201, message: "account created" });

    const question = (await rest("POST", "/questions", { key: host.key, body: { question: { title: "Why?", question_type: "one_line" } } })).body.data;
    const q = await rest("PATCH", `/questions/${question.id}`, { key: host.key, body: { question: { ...question, title: "Why not?" } } });
    expect({ status: q.status, title: q.body.data.title }).toEqual({ status: 200, title: "Why not?" });

    const event = await newEvent(host);
    const b = await book(host, event, { start_time: utcIso(dayFromToday(4), "10:00") });
    const whole = (await rest("GET", `/bookings/${b.id}`, { key: host.key })).body.data;
    const patched = await rest("PATCH", `/bookings/${b.id}`, { key: host.key, body: { booking: { ...whole, internal_notes: "regular" } } });
    expect({ status: patched.status, notes: patched.body.data.internal_notes }).toEqual({ status: 200, notes: "regular" });
  });

  it("a missing or misspelt object stays 400 missing params", async () => {
    const res = await rest("POST", "/events", { key: host.key, body: { evnt: { name: "x", url: "x" } } });
    expect({ status: res.status, message: res.body.message, data: res.body.data }).toEqual({ status: 400, message: "missing params", data: { event: ["name", "url"] } });
  });

  it("an unknown caller hears 401 first", async () => {
    const res = await rest("POST", "/events", { key: "nope", body: { event: { name: "x", url: "x", zz: 1 } } });
    expect(res.status).toBe(401);
    const admin = await rest("POST", "/admin/accounts", { headers: { "X-ADMIN-TOKEN": "wrong" }, body: { account: { email: "a@example.com", full_name: "A", zz: 1 } } });
    expect(admin.status).toBe(401);
  });

  it("RPC refuses them too: an unknown field of a Connect JSON request is INVALID_ARGUMENT `unknown field <name>` as REST names it, and nothing is made", async () => {
    const url = `rpc-${Date.now()}`;
    const res = await fetch(`${baseUrl()}/scheduling.v1.EventService/CreateEvent`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "x-api-key": host.key },
      body: JSON.stringify({ event: { name: "Rpc", url, zz_newer_field: 1 } }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "invalid_argument", message: "unknown field zz_newer_field" });
    expect((await rest("GET", `/events`, { key: host.key })).body.data.map((e: Json) => e.url)).not.toContain(url);
  });
});
