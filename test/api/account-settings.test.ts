// Account creation applies every setting PATCH /user takes, defaults the rest from the zone's region, and reads zones in both vocabularies (extensions.md "Accounts"); slots and bookings read both too.
import { describe, expect, it } from "vitest";
import { AdminService } from "../../gen/scheduling/v1/admin_pb.js";
import { ADMIN_TOKEN, grpcUnary, rest, type Json } from "../helpers/api.js";
import { book, dayFromToday, newEvent, newHost, utcIso } from "../helpers/fixtures.js";

let n = 0;
const email = () => `settings-${process.pid}-${Date.now().toString(36)}-${++n}@example.com`;
const create = (account: Json) => rest("POST", "/admin/accounts", { admin: true, body: { account: { email: email(), full_name: "Set Tings", ...account } } });
const settingsOf = async (key: string) => (await rest("GET", "/user/settings", { key })).body.data;

/** Every field PATCH /user takes besides full_name and url, each away from its default. */
const EVERY_SETTING = {
  bio: "Hello there",
  designation: "Engineer",
  time_format: "24_hours",
  date_format: "2023-12-31",
  locale: "de",
  currency: "eur",
  start_day_of_week: 3,
  events_layout: "table_layout",
  show_message_button_on_profile: true,
  show_message_button_on_events: true,
  brand_color: "#1a73e8",
};

describe("POST /admin/accounts takes every setting PATCH /user takes", () => {
  it("applies each one: none is dropped", async () => {
    const res = await create({ ...EVERY_SETTING, timezone: "UTC" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ locale: "de", time_format: "24_hours", date_format: "2023-12-31", currency: "eur", bio: "Hello there" });
    expect(await settingsOf(res.body.data.api_key)).toMatchObject(EVERY_SETTING);
  });

  it("checks them as PATCH /user does: 422 naming the field, with the allowed values", async () => {
    const locale = await create({ locale: "xx" });
    expect([locale.status, locale.body.message, locale.body.data.field]).toEqual([422, "locale is not included in the list", "locale"]);
    expect(locale.body.data.allowed).toEqual(["en", "fr", "de", "es", "nl", "ru", "zh", "ja", "ar", "hi", "it"]);
    const day = await create({ start_day_of_week: 7 });
    expect([day.status, day.body.data.allowed]).toEqual([422, [0, 1, 2, 3, 4, 5, 6]]);
    const bio = await create({ bio: "b".repeat(501) });
    expect([bio.status, bio.body.message]).toEqual([422, "bio is too long (maximum is 500 characters)"]);
  });

  it("over gRPC as well", async () => {
    const { user } = await grpcUnary(AdminService, "createAccount", { account: { email: email(), fullName: "Grpc Settings", locale: "ja", timeFormat: "24_hours", timezone: "UTC" } }, undefined, {
      "x-admin-token": ADMIN_TOKEN,
    });
    expect(user).toMatchObject({ locale: "ja", timeFormat: "24_hours" });
  });
});

describe("settings not given default from the zone's region (CLDR)", () => {
  it.each([
    // Berlin: 24 hours, day-first dates with dots, Monday weeks; the language stays English.
    ["Berlin", { time_format: "24_hours", date_format: "31.12.2024", start_day_of_week: 1, locale: "en", currency: "usd" }],
    ["Tokyo", { time_format: "24_hours", date_format: "2024/12/31", start_day_of_week: 0, locale: "en" }],
    ["Pacific Time (US & Canada)", { time_format: "12_hours", date_format: "12/31/2024", start_day_of_week: 0, locale: "en" }],
    ["London", { time_format: "24_hours", date_format: "31/12/2024", start_day_of_week: 1 }],
    // UTC is no region's: the service's defaults.
    ["UTC", { time_format: "12_hours", date_format: "12/31/2024", start_day_of_week: 0, locale: "en" }],
  ])("%s", async (timezone, expected) => {
    const res = await create({ timezone });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(await settingsOf(res.body.data.api_key)).toMatchObject(expected);
  });

  it("what is given wins over the region", async () => {
    const res = await create({ timezone: "Berlin", time_format: "12_hours", locale: "fr" });
    expect(await settingsOf(res.body.data.api_key)).toMatchObject({ time_format: "12_hours", locale: "fr", date_format: "31.12.2024", start_day_of_week: 1 });
  });
});

describe("zones in both vocabularies", () => {
  it("an account's IANA zone is stored as the service name, with its region's defaults", async () => {
    const res = await create({ timezone: "Europe/Berlin" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ timezone: "Berlin", date_timezone: "Europe/Berlin", time_format: "24_hours" });
    // Where several service names stand for one zone, the zone's own city is the one stored.
    expect((await create({ timezone: "Europe/London" })).body.data.timezone).toBe("London");
    expect((await create({ timezone: "Asia/Kolkata" })).body.data.timezone).toBe("Kolkata");
  });

  it("the slots and a booking take a service name as its IANA zone", async () => {
    const host = await newHost({ timezone: "UTC" });
    const event = await newEvent(host);
    const day = dayFromToday(3);
    const slots = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots?date_from=${day}&date_to=${day}&timezone=Tokyo`);
    expect(slots.status, JSON.stringify(slots.body)).toBe(200);
    expect(slots.body.data.timezone).toBe("Asia/Tokyo");
    const same = await rest("GET", `/public/users/${host.user.url}/events/${event.url}/slots?date_from=${day}&date_to=${day}&timezone=Asia/Tokyo`);
    expect(slots.body.data.slots).toEqual(same.body.data.slots);
    const booked = await book(host, event, { start_time: utcIso(day, "10:00"), timezone: "Tokyo" });
    const details = await rest("GET", `/bookings/${booked.id}`, { key: host.key });
    expect(details.body.data.timezone).toBe("Asia/Tokyo");
  });
});
