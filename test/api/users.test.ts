// The user surface over REST, Connect (h1, h2, gRPC-Web) and grpc-js: reading, updating, url checks and key regeneration.
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { beforeAll, describe, expect, it } from "vitest";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { baseUrl, CONNECT_KINDS, connectClient, grpcUnary, newAccount, rest, rpcError, type Json } from "../helpers/api.js";

const USER_FIELDS = [
  "id", "email", "full_name", "url", "avatar_name", "bio", "timezone", "date_timezone", "time_format", "date_format",
  "locale", "currency", "country_iso_code", "calendar_view", "dob", "show_custom_policy", "created_at", "api_key",
  // Beyond the spec's list: the pages' accent colour and logo (docs/pages.md "Colours", "Logo").
  "brand_color", "brand_logo_url",
];
const SETTINGS_FIELDS = [
  ...USER_FIELDS,
  "start_day_of_week", "designation", "label_for_primary_timezone", "verified", "need_to_set_password",
  "show_message_button_on_profile", "show_message_button_on_events", "enable_branding", "profile_picture_url",
  "profile_embed_url", "active_policy", "branding", "social_library", "events_layout",
];

const DATE_FORMATS = ["31/12/2024", "12/31/2024", "2023-12-31", "31.12.2024", "2024/12/31", "31-12-2024"];
const TIME_FORMATS = ["12_hours", "24_hours"];
const LOCALES = ["en", "fr", "de", "es", "nl", "ru", "zh", "ja", "ar", "hi", "it"];
const EMOJI = "\u{1F600}";

/** A url no other test run can have taken. */
const uniqueUrl = (label: string) => `${label}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;

const patch = (key: string, user: Record<string, unknown>) => rest("PATCH", "/user", { key, body: { user } });

function expectRefused(res: { status: number; body: Json }, message: string, data: Json = {}): void {
  expect(res.status).toBe(422);
  expect(res.body).toEqual({ success: false, message, data, status: "unprocessable_entity" });
}

/** What a 422 on each enumerated field of PATCH /user lists (scheduling-api.md "PATCH /user"). */
const ALLOWED: Record<string, Json> = {
  date_format: ["31/12/2024", "12/31/2024", "2023-12-31", "31.12.2024", "2024/12/31", "31-12-2024"],
  time_format: ["12_hours", "24_hours"],
  locale: ["en", "fr", "de", "es", "nl", "ru", "zh", "ja", "ar", "hi", "it"],
  events_layout: ["grid_layout", "table_layout"],
  currency: expect.arrayContaining(["usd", "eur", "jpy"]),
  start_day_of_week: [0, 1, 2, 3, 4, 5, 6],
  // Service names, not IANA ones.
  timezone: expect.arrayContaining(["UTC", "Berlin", "Eastern Time (US & Canada)"]),
};

let me: { key: string; user: Json };
beforeAll(async () => {
  me = await newAccount({ full_name: "Ada Lovelace" });
});

describe("GET /user and /user/settings", () => {
  it("GET /user has every field of the user object with the right types", async () => {
    const res = await rest("GET", "/user", { key: me.key });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["data", "message", "status", "success"]);
    expect(res.body.message).toBe("user details");
    const u = res.body.data;
    expect(Object.keys(u).sort()).toEqual([...USER_FIELDS].sort());
    expect(u).toMatchObject({
      id: me.user.id,
      full_name: "Ada Lovelace",
      avatar_name: "AL",
      bio: null,
      country_iso_code: null,
      dob: null,
      timezone: "UTC",
      time_format: "12_hours",
      date_format: "12/31/2024",
      locale: "en",
      currency: "usd",
      calendar_view: "week",
      show_custom_policy: false,
      api_key: me.key,
    });
    for (const f of ["id", "email", "full_name", "url", "avatar_name", "timezone", "date_timezone", "created_at", "api_key"]) {
      expect(typeof u[f], f).toBe("string");
    }
    expect(u.api_key).toMatch(/^[A-Za-z0-9]{73}$/);
    expect(u.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(Math.abs(Date.parse(u.created_at) - Date.now())).toBeLessThan(5 * 60_000);
    // date_timezone is a real IANA zone name.
    expect(() => new Intl.DateTimeFormat("en", { timeZone: u.date_timezone })).not.toThrow();
    expect(u.date_timezone).toMatch(/\//);
  });

  it("date_timezone follows the service zone", async () => {
    const acc = await newAccount({ timezone: "Eastern Time (US & Canada)" });
    const res = await rest("GET", "/user", { key: acc.key });
    expect(res.body.data.timezone).toBe("Eastern Time (US & Canada)");
    expect(res.body.data.date_timezone).toBe("America/New_York");
  });

  it("GET /user/settings has the user object plus every settings field", async () => {
    const res = await rest("GET", "/user/settings", { key: me.key });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe("user settings");
    const s = res.body.data;
    expect(Object.keys(s).sort()).toEqual([...SETTINGS_FIELDS].sort());
    expect(s).toMatchObject({
      id: me.user.id,
      bio: null,
      dob: null,
      country_iso_code: null,
      start_day_of_week: 0,
      designation: "",
      label_for_primary_timezone: null,
      verified: true,
      need_to_set_password: false,
      show_message_button_on_profile: false,
      show_message_button_on_events: false,
      enable_branding: false,
      profile_picture_url: "",
      branding: null,
      social_library: null,
      events_layout: "grid_layout",
      api_key: me.key,
    });
    expect(s.active_policy).toEqual({ id: expect.any(String), content: expect.any(String) });
    // APP_URL is unset in the tests, so addresses use its default http://localhost:<PORT>.
    expect(s.profile_embed_url).toBe(`http://localhost:${new URL(baseUrl()).port}/${s.url}?embed=true`);
  });

  for (const kind of CONNECT_KINDS) {
    it(`${kind}: GetUser and GetUserSettings`, async () => {
      const client = connectClient(UserService, kind, me.key);
      const { user } = await client.getUser({});
      expect(user?.id).toBe(me.user.id);
      expect(user?.apiKey).toBe(me.key);
      expect(user?.bio).toBeUndefined();
      const { settings } = await client.getUserSettings({});
      expect(settings?.eventsLayout).toBe("grid_layout");
      expect(settings?.activePolicy?.id).toBeTruthy();
    });
  }

  it("grpc-js: GetUser and GetUserSettings", async () => {
    const { user } = await grpcUnary(UserService, "getUser", {}, me.key);
    expect(user?.dateTimezone).toBe("Etc/UTC");
    const { settings } = await grpcUnary(UserService, "getUserSettings", {}, me.key);
    expect(settings?.id).toBe(me.user.id);
    expect(settings?.startDayOfWeek).toBe(0);
  });

  it("non-ASCII text is the same UTF-8 over REST, grpc-js and Connect binary (strings are encoded by the server)", async () => {
    const acc = await newAccount();
    const name = "Zoë Ørsted 李 😀";
    const bio = "déjà vu — ✓ \u{10348}";
    expect((await rest("PATCH", "/user", { key: acc.key, body: { user: { full_name: name, bio } } })).status).toBe(200);
    const { user } = await grpcUnary(UserService, "getUser", {}, acc.key);
    expect(user?.fullName).toBe(name);
    expect(user?.bio).toBe(bio);
    const transport = createConnectTransport({ baseUrl: baseUrl(), httpVersion: "1.1", useBinaryFormat: true });
    const viaConnect = await createClient(UserService, transport).getUser({}, { headers: { "x-api-key": acc.key } });
    expect(viaConnect.user?.fullName).toBe(name);
    expect(viaConnect.user?.bio).toBe(bio);
  });
});

describe("PATCH /user: allowed lists and limits", () => {
  let key: string;
  beforeAll(async () => {
    key = (await newAccount()).key;
  });

  const cases: Array<[string, unknown[]]> = [
    ["date_format", DATE_FORMATS],
    ["time_format", TIME_FORMATS],
    ["locale", LOCALES],
    ["events_layout", ["table_layout", "grid_layout"]],
    ["currency", ["eur", "gbp", "jpy", "inr", "usd"]],
    ["start_day_of_week", [0, 1, 2, 3, 4, 5, 6]],
    ["timezone", ["London", "Eastern Time (US & Canada)", "Tokyo", "UTC"]],
  ];
  for (const [field, values] of cases) {
    it(`every allowed ${field} is stored and shown`, async () => {
      for (const value of values) {
        const res = await patch(key, { [field]: value });
        expect(res.status, `${field}=${String(value)}: ${JSON.stringify(res.body)}`).toBe(200);
        expect(res.body.message).toBe("user updated");
        const settings = await rest("GET", "/user/settings", { key });
        expect(settings.body.data[field]).toBe(value);
      }
    });
  }

  const refused: Array<[string, unknown]> = [
    ["date_format", "dd/mm/yyyy"],
    ["time_format", "24h"],
    ["locale", "pt"],
    ["events_layout", "list_layout"],
    ["currency", "USD"],
    ["currency", "xx"],
    ["start_day_of_week", 7],
    ["start_day_of_week", -1],
    ["timezone", "America/New_York"],
    ["timezone", "Europe/London"],
    ["timezone", "Nowhere"],
  ];
  it("a value one edit away, or a time zone in its IANA form, comes with what was most likely meant", async () => {
    for (const [field, value, suggestion] of [
      ["time_format", "24_hour", "24_hours"],
      ["events_layout", "grid_layuot", "grid_layout"],
      ["timezone", "Europe/Berlin", "Berlin"],
      ["timezone", "Asia/Calcutta", "Kolkata"],
      ["timezone", "berlin", "Berlin"],
      ["timezone", "Europe/Berlim", "Berlin"],
      ["locale", "de-DE", "de"],
    ] as const) {
      const res = await patch(key, { [field]: value });
      expectRefused(res, `${field} is not included in the list`, { field, allowed: ALLOWED[field], suggestion });
    }
  });

  /** What each refused value most likely meant (extensions.md "Allowed values": `data.suggestion`). */
  const suggested: Record<string, unknown> = { USD: "usd", "America/New_York": "Eastern Time (US & Canada)", "Europe/London": "London", "list_layout": undefined };
  for (const [field, value] of refused) {
    it(`${field} ${JSON.stringify(value)} is 422 naming the field`, async () => {
      const res = await patch(key, { [field]: value });
      const suggestion = suggested[String(value)];
      expectRefused(res, `${field} is not included in the list`, { field, allowed: ALLOWED[field], ...(suggestion === undefined ? {} : { suggestion }) });
      if (field === "timezone") expect(res.body.data.allowed).not.toContain("America/New_York");
      if (field === "currency") expect(res.body.data.allowed).not.toContain("USD");
    });
  }

  it("length limits at their boundaries, counted in characters", async () => {
    const ok: Array<[string, string]> = [
      ["full_name", EMOJI.repeat(80)],
      ["full_name", "n".repeat(80)],
      ["bio", EMOJI.repeat(500)],
      ["designation", "d".repeat(180)],
      ["url", uniqueUrl("u").padEnd(80, "x")],
      // An Ethiopic syllable beyond the first plane (an emoji is no url character: extensions.md "Urls people can tell apart").
      ["url", `\u{1E7E0}${Date.now()}${process.pid}`],
    ];
    for (const [field, value] of ok) {
      const res = await patch(key, { [field]: value });
      expect(res.status, `${field} of ${[...value].length}: ${JSON.stringify(res.body)}`).toBe(200);
      const settings = await rest("GET", "/user/settings", { key });
      expect(settings.body.data[field]).toBe(value);
    }
    expectRefused(await patch(key, { full_name: EMOJI.repeat(81) }), "full_name is too long (maximum is 80 characters)");
    expectRefused(await patch(key, { full_name: "n".repeat(81) }), "full_name is too long (maximum is 80 characters)");
    expectRefused(await patch(key, { full_name: "  " }), "full_name can't be blank");
    expectRefused(await patch(key, { bio: "b".repeat(501) }), "bio is too long (maximum is 500 characters)");
    expectRefused(await patch(key, { designation: "d".repeat(181) }), "designation is too long (maximum is 180 characters)");
    expectRefused(await patch(key, { url: "u".repeat(81) }), "url is too long (maximum is 80 characters)");
    expectRefused(await patch(key, { url: "u" }), "url is too short (minimum is 2 characters)");
  });

  it.each([
    ["http-me", "url must not start with http, https or /"],
    ["https-me", "url must not start with http, https or /"],
    ["/me", "url must not start with http, https or /"],
    ["ada.lovelace", "url must not contain ., ? or #"],
    ["ada?x", "url must not contain ., ? or #"],
    ["ada#x", "url must not contain ., ? or #"],
  ])("url %j is refused", async (url, message) => {
    expectRefused(await patch(key, { url }), message);
  });

  it("bio can be set and cleared back to null", async () => {
    expect((await patch(key, { bio: "Mathematician" })).body.data.bio).toBe("Mathematician");
    const cleared = await patch(key, { bio: "" });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.bio).toBeNull();
  });

  it("the show_message_button flags are stored", async () => {
    await patch(key, { show_message_button_on_profile: true, show_message_button_on_events: true });
    let s = (await rest("GET", "/user/settings", { key })).body.data;
    expect([s.show_message_button_on_profile, s.show_message_button_on_events]).toEqual([true, true]);
    await patch(key, { show_message_button_on_events: false });
    s = (await rest("GET", "/user/settings", { key })).body.data;
    expect([s.show_message_button_on_profile, s.show_message_button_on_events]).toEqual([true, false]);
  });

  it("a refused update changes nothing, even fields that were valid", async () => {
    const before = (await rest("GET", "/user/settings", { key })).body.data;
    expectRefused(await patch(key, { locale: "de", currency: "USD" }), "currency is not included in the list", { field: "currency", allowed: ALLOWED.currency, suggestion: "usd" });
    const after = (await rest("GET", "/user/settings", { key })).body.data;
    expect(after).toEqual(before);
  });
});

describe("PATCH /user changes only the sent fields", () => {
  it("every other field keeps its value", async () => {
    const { key } = await newAccount({ full_name: "Only Sent" });
    await patch(key, { locale: "fr", date_format: "2023-12-31", start_day_of_week: 3, bio: "kept", designation: "Engineer" });
    const before = (await rest("GET", "/user/settings", { key })).body.data;
    const res = await patch(key, { time_format: "24_hours" });
    expect(res.status).toBe(200);
    const after = (await rest("GET", "/user/settings", { key })).body.data;
    expect(after).toEqual({ ...before, time_format: "24_hours" });
    // An empty update is allowed and changes nothing.
    expect((await patch(key, {})).status).toBe(200);
    expect((await rest("GET", "/user/settings", { key })).body.data).toEqual(after);
  });

  it("the answer is the user object after the change", async () => {
    const { key } = await newAccount({ full_name: "Answer Shape" });
    const res = await patch(key, { full_name: "Changed Name" });
    expect(Object.keys(res.body.data).sort()).toEqual([...USER_FIELDS].sort());
    expect(res.body.data.full_name).toBe("Changed Name");
    expect(res.body.data.avatar_name).toBe("CN");
  });
});

describe("url uniqueness", () => {
  it("is case-insensitive across accounts; an account may re-case its own url", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const url = uniqueUrl("Mixed-Case");
    expect((await patch(a.key, { url })).status).toBe(200);
    expectRefused(await patch(b.key, { url: url.toLowerCase() }), "url has already been taken");
    expectRefused(await patch(b.key, { url: url.toUpperCase() }), "url has already been taken");
    const recased = await patch(a.key, { url: url.toUpperCase() });
    expect(recased.status).toBe(200);
    expect(recased.body.data.url).toBe(url.toUpperCase());
  });

  it("two accounts claiming one url at once: exactly one gets it", async () => {
    const accounts = await Promise.all([1, 2, 3].map(() => newAccount()));
    const url = uniqueUrl("race");
    const answers = await Promise.all(accounts.map((a, i) => patch(a.key, { url: i === 1 ? url.toUpperCase() : url })));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) expectRefused(a, "url has already been taken");
  });

  it("is INVALID_ARGUMENT over gRPC", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const url = uniqueUrl("grpc-taken");
    await patch(a.key, { url });
    const err = await rpcError(() => grpcUnary(UserService, "updateUser", { user: { url: url.toUpperCase() } }, b.key));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toBe("url has already been taken");
  });
});

describe("PATCH /user over Connect and gRPC", () => {
  it("grpc-js: every list field updates; bad values are INVALID_ARGUMENT naming the field", async () => {
    const { key } = await newAccount();
    const res = await grpcUnary(
      UserService,
      "updateUser",
      {
        user: {
          fullName: "Grpc Person",
          timeFormat: "24_hours",
          dateFormat: "31.12.2024",
          locale: "ja",
          currency: "jpy",
          startDayOfWeek: 6,
          eventsLayout: "table_layout",
          timezone: "Tokyo",
          designation: "CTO",
          bio: "hello",
          showMessageButtonOnEvents: true,
        },
      },
      key,
    );
    expect(res.user).toMatchObject({ fullName: "Grpc Person", timeFormat: "24_hours", dateFormat: "31.12.2024", locale: "ja", currency: "jpy", timezone: "Tokyo", dateTimezone: "Asia/Tokyo", bio: "hello" });
    const { settings } = await grpcUnary(UserService, "getUserSettings", {}, key);
    expect(settings).toMatchObject({ startDayOfWeek: 6, eventsLayout: "table_layout", designation: "CTO", showMessageButtonOnEvents: true });

    const bad: Array<[Record<string, unknown>, string]> = [
      [{ startDayOfWeek: 7 }, "start_day_of_week is not included in the list"],
      [{ currency: "USD" }, "currency is not included in the list"],
      [{ timezone: "Asia/Tokyo" }, "timezone is not included in the list"],
      [{ dateFormat: "yyyy" }, "date_format is not included in the list"],
      [{ timeFormat: "12" }, "time_format is not included in the list"],
      [{ locale: "xx" }, "locale is not included in the list"],
      [{ eventsLayout: "x" }, "events_layout is not included in the list"],
      [{ fullName: "x".repeat(81) }, "full_name is too long (maximum is 80 characters)"],
      [{ bio: "x".repeat(501) }, "bio is too long (maximum is 500 characters)"],
      [{ designation: "x".repeat(181) }, "designation is too long (maximum is 180 characters)"],
      [{ url: "http-x" }, "url must not start with http, https or /"],
    ];
    for (const [user, message] of bad) {
      const err = await rpcError(() => grpcUnary(UserService, "updateUser", { user }, key));
      expect(err.code, message).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toBe(message);
    }
  });

  for (const kind of CONNECT_KINDS) {
    it(`${kind}: UpdateUser changes only the sent field and refuses bad values`, async () => {
      const { key } = await newAccount();
      const client = connectClient(UserService, kind, key);
      const { user } = await client.updateUser({ user: { locale: "de", startDayOfWeek: 1 } });
      expect(user?.locale).toBe("de");
      expect(user?.timeFormat).toBe("12_hours");
      expect((await client.getUserSettings({})).settings?.startDayOfWeek).toBe(1);
      const err = await rpcError(() => client.updateUser({ user: { locale: "pt" } }));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toBe("locale is not included in the list");
    });
  }
});

describe("POST /users/validate_url_availability", () => {
  const check = (key: string, body: unknown) => rest("POST", "/users/validate_url_availability", { key, body });

  it("own url is available, another's is taken, in any case; a free one is available", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const url = uniqueUrl("Avail");
    await patch(a.key, { url });
    for (const u of [url, url.toUpperCase(), url.toLowerCase()]) {
      const own = await check(a.key, { user: { url: u } });
      expect(own.status).toBe(200);
      expect(own.body).toEqual({ success: true, message: "url is available to use", data: { available: true }, status: 200 });
      const other = await check(b.key, { user: { url: u } });
      expect(other.status).toBe(200);
      expect(other.body.data).toEqual({ available: false });
    }
    expect((await check(b.key, { user: { url: uniqueUrl("free") } })).body.data).toEqual({ available: true });
  });

  it("checks only uniqueness, not format", async () => {
    const { key } = await newAccount();
    expect((await check(key, { user: { url: "http.not.valid?" } })).body.data).toEqual({ available: true });
  });

  it.each([[{}], [{ user: {} }], [{ user: { url: "" } }], [{ user: { url: "   " } }]])("missing url %j is 400 missing params", async (body) => {
    const res = await check(me.key, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, message: "missing params", data: { user: ["url"] }, status: "bad_request" });
  });

  it("answers over Connect and grpc-js", async () => {
    const a = await newAccount();
    const url = uniqueUrl("rpc-avail");
    await patch(a.key, { url });
    for (const kind of CONNECT_KINDS) {
      const client = connectClient(UserService, kind, me.key);
      expect((await client.checkUserUrlAvailability({ user: { url: url.toUpperCase() } })).available).toBe(false);
      expect((await client.checkUserUrlAvailability({ user: { url: uniqueUrl("x") } })).available).toBe(true);
    }
    expect((await grpcUnary(UserService, "checkUserUrlAvailability", { user: { url } }, me.key)).available).toBe(false);
    expect((await grpcUnary(UserService, "checkUserUrlAvailability", { user: { url } }, a.key)).available).toBe(true);
    const err = await rpcError(() => grpcUnary(UserService, "checkUserUrlAvailability", { user: {} }, me.key));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toBe("missing params: user.url");
  });
});

describe("PUT /users/regenerate_api_key", () => {
  it("returns a new 73-character key; the old key fails at once everywhere, the new one works", async () => {
    const acc = await newAccount();
    const res = await rest("PUT", "/users/regenerate_api_key", { key: acc.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: "api_key is updated", data: { api_key: expect.any(String) }, status: 200 });
    const fresh: string = res.body.data.api_key;
    expect(fresh).toMatch(/^[A-Za-z0-9]{73}$/);
    expect(fresh).not.toBe(acc.key);

    const old = await rest("GET", "/user", { key: acc.key });
    expect(old.status).toBe(401);
    expect(old.body).toEqual({ success: false, message: "Invalid api_key", data: {}, status: "unauthorized" });
    for (const kind of CONNECT_KINDS) {
      const err = await rpcError(() => connectClient(UserService, kind, acc.key).getUser({}));
      expect(err.code).toBe(Code.Unauthenticated);
      expect(err.rawMessage).toBe("Invalid api_key");
      expect((await connectClient(UserService, kind, fresh).getUser({})).user?.id).toBe(acc.user.id);
    }
    const grpcErr = await rpcError(() => grpcUnary(UserService, "getUser", {}, acc.key));
    expect(grpcErr.code).toBe(Code.Unauthenticated);
    expect(grpcErr.rawMessage).toBe("Invalid api_key");

    const now = await rest("GET", "/user", { key: fresh });
    expect(now.status).toBe(200);
    expect(now.body.data.api_key).toBe(fresh);
    // The old key cannot regenerate again either.
    expect((await rest("PUT", "/users/regenerate_api_key", { key: acc.key })).status).toBe(401);
  });

  for (const kind of CONNECT_KINDS) {
    it(`${kind}: RegenerateApiKey`, async () => {
      const acc = await newAccount();
      const { apiKey } = await connectClient(UserService, kind, acc.key).regenerateApiKey({});
      expect(apiKey).toHaveLength(73);
      expect((await rest("GET", "/user", { key: acc.key })).status).toBe(401);
      expect((await rest("GET", "/user", { key: apiKey })).body.data.id).toBe(acc.user.id);
    });
  }

  it("grpc-js: RegenerateApiKey", async () => {
    const acc = await newAccount();
    const { apiKey } = await grpcUnary(UserService, "regenerateApiKey", {}, acc.key);
    expect(apiKey).toHaveLength(73);
    expect((await rpcError(() => grpcUnary(UserService, "getUser", {}, acc.key))).code).toBe(Code.Unauthenticated);
    expect((await grpcUnary(UserService, "getUser", {}, apiKey)).user?.apiKey).toBe(apiKey);
  });

  it("two regenerations at once with the same key: exactly one wins", async () => {
    const acc = await newAccount();
    const answers = await Promise.all([1, 2, 3].map(() => rest("PUT", "/users/regenerate_api_key", { key: acc.key })));
    const winners = answers.filter((a) => a.status === 200);
    expect(winners).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) expect(a.body.message).toBe("Invalid api_key");
    expect((await rest("GET", "/user", { key: winners[0].body.data.api_key })).status).toBe(200);
  });
});

describe("the API key header", () => {
  it.each(["x-api-key", "X-API-KEY", "X-Api-Key"])("%s is read whatever its case", async (name) => {
    const res = await fetch(`${baseUrl()}/api/v1/user`, { headers: { [name]: me.key } });
    expect(res.status).toBe(200);
    expect((await res.json()).data.id).toBe(me.user.id);
  });

  it("the key itself must match exactly", async () => {
    const swapped = me.key === me.key.toUpperCase() ? me.key.toLowerCase() : me.key.toUpperCase();
    expect((await rest("GET", "/user", { key: swapped })).body.message).toBe("Invalid api_key");
    expect((await rest("GET", "/user", { key: me.key.slice(0, -1) })).body.message).toBe("Invalid api_key");
    expect((await rest("GET", "/user", { key: `${me.key}x` })).body.message).toBe("Invalid api_key");
  });
});
