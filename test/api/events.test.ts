// Events over every protocol: create/read/update/clone/delete, every allowed value and limit, url rules, display forms, other accounts.
import { describe, expect, it, beforeAll } from "vitest";
import { EVENT_COLORS, PADDING_DURATIONS, SLOT_DURATIONS } from "../../src/domain/event.js";
import { formatDateTimeForHost, formatLongDate } from "../../src/domain/format.js";
import { newAccount, rest, type Json } from "../helpers/api.js";
import { allowedData, events, expectMissing, expectRefused, invoke, ok, PROTOCOLS, type Protocol } from "../helpers/calls.js";

const DISPLAY_SLOTS: Record<string, string> = { "15_minutes": "15 minutes", "30_minutes": "30 minutes", "45_minutes": "45 minutes", "1_hour": "1 hour", "2_hours": "2 hours" };
const DISPLAY_PADDINGS: Record<string, string> = {
  "0_minutes": "0 minutes", "5_minutes": "5 minutes", "10_minutes": "10 minutes", "15_minutes": "15 minutes",
  "30_minutes": "30 minutes", "45_minutes": "45 minutes", "1_hour": "1 hour", "2_hours": "2 hours",
};
const NOT_FOUND = "event not found";
const TAKEN = "url has already been taken";

let seq = 0;
/** A url no other test of this file uses. */
const freshUrl = (stem = "ev"): string => `${stem}-${++seq}`;

describe("display tables match the domain lists", () => {
  it("covers every token", () => {
    expect(Object.keys(DISPLAY_SLOTS)).toEqual(Object.keys(SLOT_DURATIONS));
    expect(Object.keys(DISPLAY_PADDINGS)).toEqual(Object.keys(PADDING_DURATIONS));
  });
});

describe.each(PROTOCOLS)("events over %s", (protocol: Protocol) => {
  let key: string;
  let user: Json;
  const create = (event: Json) => ok(protocol, key, events.create(event), 201, "event created");
  const update = (id: string, event: Json) => ok(protocol, key, events.update(id, event), 200, "event updated");
  const refusedCreate = async (event: Json, message: string, data: Json = {}) => expectRefused(protocol, await invoke(protocol, key, events.create(event)), 422, message, data);

  beforeAll(async () => {
    ({ key, user } = await newAccount({ full_name: "Event Host" }));
  });

  it("creates with defaults and answers the event object", async () => {
    const url = freshUrl("Intro");
    const e = await create({ name: "Intro call", url });
    expect(e).toMatchObject({
      name: "Intro call",
      url,
      absolute_url: `/${user.url}/${url}`,
      active: true,
      is_public: true,
      color: "lavender",
      slot_duration: "30 minutes",
      padding_duration: "0 minutes",
      location_name: "No location",
      location: { name: "no_location" },
      created_at_ago: "less than a minute ago",
      active_event_questions: [],
      enable_guest_emails: false,
      guest_emails_limit: 0,
      connected_calendar_id: "no_calendar_selected",
    });
    expect(e.id).toMatch(/^[0-9a-f]{24}$/);
    expect(e.description ?? null).toBeNull();
    expect(e.connected_calendar_email ?? null).toBeNull();
    if (protocol === "rest") {
      expect(e.description).toBeNull();
      expect(e.connected_calendar_email).toBeNull();
      expect(e.location).toEqual({ name: "no_location", details: null, selected_option: null, host_contact_number: null, invitee_contact_number: null });
    }
    expect(await ok(protocol, key, events.get(e.id), 200, "event found")).toEqual(e);
  });

  it("accepts all five slot durations and writes them for display", async () => {
    const e = await create({ name: "Slots", url: freshUrl() });
    for (const [token, shown] of Object.entries(DISPLAY_SLOTS)) {
      expect((await update(e.id, { slot_duration: token })).slot_duration).toBe(shown);
    }
    expect((await create({ name: "Slot on create", url: freshUrl(), slot_duration: "2_hours" })).slot_duration).toBe("2 hours");
    const slots = allowedData("slot_duration", Object.keys(DISPLAY_SLOTS));
    await refusedCreate({ name: "x", url: freshUrl(), slot_duration: "60_minutes" }, "slot_duration is not included in the list", slots);
    // One letter off: the value most likely meant comes with the list (extensions.md "Allowed values").
    expectRefused(protocol, await invoke(protocol, key, events.update(e.id, { slot_duration: "1_hours" })), 422, "slot_duration is not included in the list", { ...slots, suggestion: "1_hour" });
    expectRefused(protocol, await invoke(protocol, key, events.update(e.id, { color: "Lavendar" })), 422, "color is not included in the list", { ...allowedData("color", EVENT_COLORS), suggestion: "lavender" });
  });

  it("accepts all eight padding durations and writes them for display", async () => {
    const e = await create({ name: "Paddings", url: freshUrl() });
    for (const [token, shown] of Object.entries(DISPLAY_PADDINGS)) {
      expect((await update(e.id, { padding_duration: token })).padding_duration).toBe(shown);
    }
    await refusedCreate({ name: "x", url: freshUrl(), padding_duration: "20_minutes" }, "padding_duration is not included in the list", allowedData("padding_duration", Object.keys(DISPLAY_PADDINGS)));
  });

  it("accepts the eleven colours and nothing else", async () => {
    const e = await create({ name: "Colours", url: freshUrl() });
    for (const color of EVENT_COLORS) expect((await update(e.id, { color })).color).toBe(color);
    await refusedCreate({ name: "x", url: freshUrl(), color: "red" }, "color is not included in the list", allowedData("color", EVENT_COLORS));
  });

  it("takes the four usable locations with their settings", async () => {
    const e = await create({ name: "Where", url: freshUrl(), location: { name: "in_person", details: "Room 4, Main St" } });
    expect(e.location_name).toBe("Room 4, Main St");
    expect(e.location).toMatchObject({ name: "in_person", details: "Room 4, Main St" });

    const ask = await update(e.id, { location: { name: "ask_invitee" } });
    expect(ask.location_name).toBe("Ask invitee");
    expect(ask.location.details ?? null).toBeNull();

    const hostCalls = await update(e.id, { location: { name: "phone_call", selected_option: "host_will_call_invitee" } });
    expect(hostCalls.location_name).toBe("Phone call");
    expect(hostCalls.location).toMatchObject({ name: "phone_call", selected_option: "host_will_call_invitee" });

    const inviteeCalls = await update(e.id, { location: { name: "phone_call", selected_option: "invitee_will_call_host", host_contact_number: "+1 555 123 4567" } });
    expect(inviteeCalls.location).toMatchObject({ name: "phone_call", selected_option: "invitee_will_call_host", host_contact_number: "+1 555 123 4567" });

    const none = await update(e.id, { location: { name: "no_location" } });
    expect(none.location_name).toBe("No location");
    expect(none.location.selected_option ?? null).toBeNull();
  });

  it("refuses video-meeting locations (no provider connected) and bad location settings", async () => {
    const url = freshUrl();
    await refusedCreate({ name: "x", url, location: { name: "calendar_meet" } },
      "calendar_meet needs a Google or Microsoft calendar selected for the event");
    await refusedCreate({ name: "x", url, location: { name: "conference" } },
      "location.name conference needs the video-meeting provider connected under integrations; none is connected");
    await refusedCreate({ name: "x", url, location: { name: "teams" } }, "location.name is not included in the list",
      allowedData("location.name", ["no_location", "calendar_meet", "conference", "ask_invitee", "in_person", "phone_call"]));
    await refusedCreate({ name: "x", url, location: { name: "in_person" } }, "location.details can't be blank");
    await refusedCreate({ name: "x", url, location: { name: "phone_call" } }, "location.selected_option can't be blank");
    await refusedCreate({ name: "x", url, location: { name: "phone_call", selected_option: "nobody_calls" } }, "location.selected_option is not included in the list",
      allowedData("location.selected_option", ["host_will_call_invitee", "invitee_will_call_host"]));
    await refusedCreate({ name: "x", url, location: { name: "phone_call", selected_option: "invitee_will_call_host" } }, "location.host_contact_number can't be blank");
    await refusedCreate({ name: "x", url, location: { name: "phone_call", selected_option: "host_will_call_invitee", invitee_contact_number: "abc" } },
      "location.invitee_contact_number is not a valid phone number");
    // Nothing was written by the refusals.
    expect((await ok(protocol, key, events.checkUrl({ url }))).available).toBe(true);
  });

  it("holds name, url and description limits at the boundary", async () => {
    const name80 = "N".repeat(80);
    const url80 = `${++seq}-${"u".repeat(80)}`.slice(0, 80);
    const e = await create({ name: name80, url: url80, description: "d".repeat(500) });
    expect([e.name, e.url, e.description]).toEqual([name80, url80, "d".repeat(500)]);
    await refusedCreate({ name: "N".repeat(81), url: freshUrl() }, "name is too long (maximum is 80 characters)");
    await refusedCreate({ name: "x", url: `${++seq}-${"u".repeat(80)}`.slice(0, 81) }, "url is too long (maximum is 80 characters)");
    await refusedCreate({ name: "x", url: freshUrl(), description: "d".repeat(501) }, "description is too long (maximum is 500 characters)");
  });

  it("refuses urls that start with http, https or / or contain . ? #", async () => {
    for (const url of ["http-x", "https-x", "/x", "HTTPx"]) await refusedCreate({ name: "x", url }, "url must not start with http, https or /");
    for (const url of ["a.b", "a?b", "a#b"]) await refusedCreate({ name: "x", url }, "url must not contain ., ? or #");
  });

  it("keeps urls unique case-insensitively among undeleted events, and frees them on delete", async () => {
    const url = freshUrl("Unique");
    const first = await create({ name: "First", url });
    await refusedCreate({ name: "Second", url: url.toLowerCase() }, TAKEN);
    await refusedCreate({ name: "Second", url: url.toUpperCase() }, TAKEN);
    const other = await create({ name: "Other", url: freshUrl() });
    expectRefused(protocol, await invoke(protocol, key, events.update(other.id, { url: url.toUpperCase() })), 422, TAKEN);

    await ok(protocol, key, events.remove(first.id), 200, "event deleted");
    const second = await create({ name: "Second", url: url.toUpperCase() });
    expect(second.url).toBe(url.toUpperCase());
  });

  it("lets the database decide a url race: one create wins, the rest are 422, none 500", async () => {
    const url = freshUrl("race");
    const outcomes = await Promise.all(Array.from({ length: 6 }, (_, i) => invoke(protocol, key, events.create({ name: `Race ${i}`, url: i % 2 ? url : url.toUpperCase() }))));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
    for (const o of outcomes.filter((x) => !x.ok)) expectRefused(protocol, o, 422, TAKEN);
  });

  it("answers missing params 400 grouped under event", async () => {
    expectMissing(protocol, await invoke(protocol, key, events.create({ url: freshUrl() })), { event: ["name"] });
    expectMissing(protocol, await invoke(protocol, key, events.create({ name: "x" })), { event: ["url"] });
    expectMissing(protocol, await invoke(protocol, key, events.create({ name: " ", url: "" })), { event: ["name", "url"] });
    expectMissing(protocol, await invoke(protocol, key, events.create()), { event: ["name", "url"] });
  });

  it("checks guest e-mail settings, flags and the calendar id", async () => {
    const e = await create({ name: "Guests", url: freshUrl(), enable_guest_emails: true, guest_emails_limit: 10, active: false, is_public: false });
    expect(e).toMatchObject({ enable_guest_emails: true, guest_emails_limit: 10, active: false, is_public: false });
    expect(await update(e.id, { active: true, is_public: true, enable_guest_emails: false, guest_emails_limit: 0 })).toMatchObject({
      active: true, is_public: true, enable_guest_emails: false, guest_emails_limit: 0,
    });
    await refusedCreate({ name: "x", url: freshUrl(), guest_emails_limit: 11 }, "guest_emails_limit must be between 0 and 10");
    await refusedCreate({ name: "x", url: freshUrl(), guest_emails_limit: -1 }, "guest_emails_limit must be between 0 and 10");
    expect((await update(e.id, { connected_calendar_id: "no_calendar_selected" })).connected_calendar_id).toBe("no_calendar_selected");
    await refusedCreate({ name: "x", url: freshUrl(), connected_calendar_id: "primary" },
      "connected_calendar_id is not a writable calendar of this account; use one of GET /calendars with can_write, or no_calendar_selected");
  });

  it("updates only the sent fields, and refuses blank name or url", async () => {
    const e = await create({ name: "Patch me", url: freshUrl(), color: "sage", description: "Hello" });
    const renamed = await update(e.id, { name: "Patched" });
    expect(renamed).toMatchObject({ name: "Patched", url: e.url, color: "sage", description: "Hello", slot_duration: "30 minutes" });
    expect((await update(e.id, { url: e.url.toUpperCase() })).url).toBe(e.url.toUpperCase());
    expect((await update(e.id, { description: "" })).description ?? null).toBeNull();
    expect((await update(e.id, {})).name).toBe("Patched");
    expectRefused(protocol, await invoke(protocol, key, events.update(e.id, { name: "" })), 422, "name can't be blank");
    expectRefused(protocol, await invoke(protocol, key, events.update(e.id, { url: "" })), 422, "url can't be blank");
    expectRefused(protocol, await invoke(protocol, key, events.update(e.id, { name: "N".repeat(81) })), 422, "name is too long (maximum is 80 characters)");
  });

  it("writes descriptions with <br> and dates in the host's zone and formats", async () => {
    await rest("PATCH", "/user", { key, body: { user: { timezone: "Tokyo", date_format: "2023-12-31", time_format: "24_hours" } } });
    const before = new Date();
    const e = await create({ name: "Shown", url: freshUrl(), description: "Line one\r\nLine two\nLine three" });
    const after = new Date();
    expect(e.description).toBe("Line one<br>Line two<br>Line three");
    expect([formatLongDate(before, "Asia/Tokyo"), formatLongDate(after, "Asia/Tokyo")]).toContain(e.created_at);
    expect([formatDateTimeForHost(before, "Asia/Tokyo", "2023-12-31", "24_hours"), formatDateTimeForHost(after, "Asia/Tokyo", "2023-12-31", "24_hours")]).toContain(
      e.formated_created_at_for_host,
    );
    expect(e.formated_created_at_for_host).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    expect(e.created_at).toMatch(/^\d{2} [A-Z][a-z]+ \d{4}$/);
    expect(e.created_at_ago).toBe("less than a minute ago");
  });

  it("clones settings under [CLONE] with a fresh url each time", async () => {
    const url = freshUrl("Clonable");
    const source = await create({
      name: "Demo", url, slot_duration: "45_minutes", padding_duration: "10_minutes", color: "grape", description: "Desc",
      location: { name: "in_person", details: "Office" }, active: false, is_public: false, enable_guest_emails: true, guest_emails_limit: 3,
    });
    const copy = await ok(protocol, key, events.clone(source.id), 201, "event cloned");
    expect(copy).toMatchObject({
      name: "[CLONE] Demo", url: `${url}-copy`, absolute_url: `/${user.url}/${url}-copy`, slot_duration: "45 minutes", padding_duration: "10 minutes",
      color: "grape", description: "Desc", location_name: "Office", active: false, is_public: false, enable_guest_emails: true, guest_emails_limit: 3,
    });
    expect(copy.id).not.toBe(source.id);
    expect((await ok(protocol, key, events.clone(source.id), 201)).url).toBe(`${url}-copy-2`);
    expect((await ok(protocol, key, events.clone(copy.id), 201)).name).toBe("[CLONE] [CLONE] Demo");
  });

  it("clones an 80-character url within 80 characters, and refuses a copy name over 80", async () => {
    const url = `${++seq}-${"c".repeat(80)}`.slice(0, 80);
    const source = await create({ name: "N".repeat(72), url });
    const copy = await ok(protocol, key, events.clone(source.id), 201);
    expect(copy.name).toBe(`[CLONE] ${"N".repeat(72)}`);
    expect(copy.url).toBe(`${url.slice(0, 75)}-copy`);
    const tooLong = await create({ name: "N".repeat(73), url: freshUrl() });
    expectRefused(protocol, await invoke(protocol, key, events.clone(tooLong.id)), 422,
      'name is too long for a clone (maximum is 80 characters including the "[CLONE]" prefix)');
  });

  it("soft-deletes: gone from get, list, update, clone and delete; url free again", async () => {
    const url = freshUrl();
    const e = await create({ name: "Doomed", url });
    expect(await ok(protocol, key, events.remove(e.id), 200, "event deleted")).toEqual({});
    for (const call of [events.get(e.id), events.update(e.id, { name: "x" }), events.clone(e.id), events.remove(e.id)]) {
      expectRefused(protocol, await invoke(protocol, key, call), 404, NOT_FOUND);
    }
    expect((await ok(protocol, key, events.list())).map((x: Json) => x.id)).not.toContain(e.id);
    expect((await ok(protocol, key, events.checkUrl({ url }))).available).toBe(true);
  });

  it("answers 404 for unknown and malformed ids, never 500", async () => {
    for (const id of ["0123456789abcdef01234567", "xyz", "123", "zzzzzzzzzzzzzzzzzzzzzzzz", "0123456789abcdef012345670"]) {
      for (const call of [events.get(id), events.update(id, { name: "x" }), events.clone(id), events.remove(id)]) {
        expectRefused(protocol, await invoke(protocol, key, call), 404, NOT_FOUND);
      }
    }
  });

  it("checks url availability among the caller's undeleted events", async () => {
    const url = freshUrl("Avail");
    const e = await create({ name: "Avail", url });
    const check = async (event: Json) => (await ok(protocol, key, events.checkUrl(event), 200, "url is available to use")).available;
    expect(await check({ url: url.toUpperCase() })).toBe(false);
    expect(await check({ url: url.toUpperCase(), id: e.id })).toBe(true);
    expect(await check({ url, id: "not-an-id" })).toBe(false);
    expect(await check({ url: freshUrl() })).toBe(true);
    const stranger = await newAccount();
    expect((await ok(protocol, stranger.key, events.checkUrl({ url }))).available).toBe(true);
    expectMissing(protocol, await invoke(protocol, key, events.checkUrl({})), { event: ["url"] });
    expectMissing(protocol, await invoke(protocol, key, events.checkUrl()), { event: ["url"] });
  });
});

describe.each(PROTOCOLS)("events of other accounts over %s", (protocol: Protocol) => {
  it("are 404 / NOT_FOUND for get, update, clone and delete, and stay untouched", async () => {
    const owner = await newAccount();
    const stranger = await newAccount();
    const e = await ok(protocol, owner.key, events.create({ name: "Mine", url: freshUrl() }), 201);
    for (const call of [events.get(e.id), events.update(e.id, { name: "Stolen" }), events.clone(e.id), events.remove(e.id)]) {
      expectRefused(protocol, await invoke(protocol, stranger.key, call), 404, NOT_FOUND);
    }
    expect(await ok(protocol, stranger.key, events.list())).toEqual([]);
    const still = await ok(protocol, owner.key, events.list());
    expect(still.map((x: Json) => [x.id, x.name])).toEqual([[e.id, "Mine"]]);
  });

  it("share no url space: the same url is free in each account", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const url = freshUrl("shared");
    await ok(protocol, a.key, events.create({ name: "A", url }), 201);
    expect((await ok(protocol, b.key, events.create({ name: "B", url }), 201)).url).toBe(url);
  });

  it("lists newest first without deleted events", async () => {
    const { key } = await newAccount();
    const made: string[] = [];
    for (const name of ["one", "two", "three", "four"]) made.push((await ok(protocol, key, events.create({ name, url: freshUrl() }), 201)).id);
    await ok(protocol, key, events.remove(made[1]));
    const listed = await ok(protocol, key, events.list(), 200, "events found");
    expect(listed.map((x: Json) => x.name)).toEqual(["four", "three", "one"]);
  });

  it("needs an API key", async () => {
    const o = await invoke(protocol, undefined, events.list());
    expect(o.ok).toBe(false);
    if (protocol === "rest") expect([o.http, o.message]).toEqual([401, "api_key is missing"]);
    else expect(o.message).toBe("api_key is missing");
  });
});

describe("REST-only shapes of events", () => {
  let key: string;
  beforeAll(async () => {
    ({ key } = await newAccount());
  });

  it("answers a wrong JSON type with 422 naming the field", async () => {
    const res = await rest("POST", "/events", { key, body: { event: { name: "x", url: freshUrl(), active: "yes" } } });
    expect([res.status, res.body.message]).toEqual([422, "active is not valid"]);
  });

  it("answers the envelope with status names on errors", async () => {
    const res = await rest("GET", "/events/nope", { key });
    expect(res.body).toEqual({ success: false, message: NOT_FOUND, data: {}, status: "not_found" });
    const missing = await rest("POST", "/events", { key, body: {} });
    expect(missing.body).toEqual({ success: false, message: "missing params", data: { event: ["name", "url"] }, status: "bad_request" });
  });

  it("uses the current user url in absolute_url", async () => {
    const { key: k } = await newAccount();
    const e = (await rest("POST", "/events", { key: k, body: { event: { name: "x", url: "meet" } } })).body.data;
    const newUrl = `moved-${Date.now().toString(36)}`;
    expect((await rest("PATCH", "/user", { key: k, body: { user: { url: newUrl } } })).status).toBe(200);
    expect((await rest("GET", `/events/${e.id}`, { key: k })).body.data.absolute_url).toBe(`/${newUrl}/meet`);
  });
});
