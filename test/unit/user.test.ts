// Unit tests for the user object's rules: every allowed list and limit of PATCH /user, url format, derived urls.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/domain/errors.js";
import {
  charLength,
  checkFullName,
  checkUserPatch,
  checkUserUrl,
  isCurrency,
  isEmail,
  urlFormatProblem,
  urlFromName,
  type UserPatchInput,
} from "../../src/domain/user.js";
import { URL_RULE, userUrlKeys } from "../../src/domain/urlKey.js";

/** The message of the ApiError `fn` throws (fails when it throws nothing or something else). */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.httpStatus).toBe(422);
    return e.restMessage;
  }
  throw new Error("expected a refusal");
}

const patchRefusal = (input: UserPatchInput) => refusal(() => checkUserPatch(input));

const DATE_FORMATS = ["31/12/2024", "12/31/2024", "2023-12-31", "31.12.2024", "2024/12/31", "31-12-2024"];
const TIME_FORMATS = ["12_hours", "24_hours"];
const LOCALES = ["en", "fr", "de", "es", "nl", "ru", "zh", "ja", "ar", "hi", "it"];
const EMOJI = "\u{1F600}"; // two UTF-16 units, one character

describe("allowed lists of PATCH /user", () => {
  it.each(DATE_FORMATS)("date_format %s is accepted", (v) => {
    expect(checkUserPatch({ date_format: v })).toEqual({ date_format: v });
  });

  it.each(["dd/mm/yyyy", "2024-31-12", "", "12/31/2024 "])("date_format %j is refused", (v) => {
    expect(patchRefusal({ date_format: v })).toBe("date_format is not included in the list");
  });

  it.each(TIME_FORMATS)("time_format %s is accepted", (v) => {
    expect(checkUserPatch({ time_format: v })).toEqual({ time_format: v });
  });

  it.each(["12h", "24_HOURS", "12"])("time_format %j is refused", (v) => {
    expect(patchRefusal({ time_format: v })).toBe("time_format is not included in the list");
  });

  it.each(LOCALES)("locale %s is accepted", (v) => {
    expect(checkUserPatch({ locale: v })).toEqual({ locale: v });
  });

  it.each(["pt", "EN", "en-US", "en_GB", ""])("locale %j is refused", (v) => {
    expect(patchRefusal({ locale: v })).toBe("locale is not included in the list");
  });

  it.each(["grid_layout", "table_layout"])("events_layout %s is accepted", (v) => {
    expect(checkUserPatch({ events_layout: v })).toEqual({ events_layout: v });
  });

  it.each(["list_layout", "grid", "GRID_LAYOUT"])("events_layout %j is refused", (v) => {
    expect(patchRefusal({ events_layout: v })).toBe("events_layout is not included in the list");
  });

  it.each(["usd", "eur", "gbp", "inr", "jpy", "chf"])("currency %s (lowercase ISO) is accepted", (v) => {
    expect(checkUserPatch({ currency: v })).toEqual({ currency: v });
    expect(isCurrency(v)).toBe(true);
  });

  it.each(["USD", "Eur", "us", "usdd", "abc", "$", ""])("currency %j is refused", (v) => {
    expect(patchRefusal({ currency: v })).toBe("currency is not included in the list");
  });

  it.each([0, 1, 2, 3, 4, 5, 6])("start_day_of_week %i is accepted", (v) => {
    expect(checkUserPatch({ start_day_of_week: v })).toEqual({ start_day_of_week: v });
  });

  it.each([-1, 7, 1.5, Number.NaN])("start_day_of_week %d is refused", (v) => {
    expect(patchRefusal({ start_day_of_week: v })).toBe("start_day_of_week is not included in the list");
  });

  it.each(["UTC", "London", "Eastern Time (US & Canada)", "Tokyo", "Kolkata"])("timezone %j (service name) is accepted", (v) => {
    expect(checkUserPatch({ timezone: v })).toEqual({ timezone: v });
  });

  it.each(["America/New_York", "Europe/London", "Asia/Tokyo", "Etc/UTC", "Mars Base", "london"])("timezone %j is refused", (v) => {
    expect(patchRefusal({ timezone: v })).toBe("timezone is not included in the list");
  });

  it("show_message_button flags pass through", () => {
    expect(checkUserPatch({ show_message_button_on_profile: true, show_message_button_on_events: false })).toEqual({
      show_message_button_on_profile: true,
      show_message_button_on_events: false,
    });
  });
});

describe("limits of PATCH /user", () => {
  it("full_name: 80 characters accepted, 81 refused, counted in code points", () => {
    expect(checkUserPatch({ full_name: "a".repeat(80) })).toEqual({ full_name: "a".repeat(80) });
    expect(patchRefusal({ full_name: "a".repeat(81) })).toBe("full_name is too long (maximum is 80 characters)");
    // 80 emoji are 160 UTF-16 units but 80 characters.
    expect(checkUserPatch({ full_name: EMOJI.repeat(80) })).toEqual({ full_name: EMOJI.repeat(80) });
    expect(patchRefusal({ full_name: EMOJI.repeat(81) })).toBe("full_name is too long (maximum is 80 characters)");
  });

  it("full_name is required once set: blank is refused, surrounding spaces are trimmed", () => {
    expect(patchRefusal({ full_name: "" })).toBe("full_name can't be blank");
    expect(patchRefusal({ full_name: "   " })).toBe("full_name can't be blank");
    expect(checkUserPatch({ full_name: "  Ada Lovelace " })).toEqual({ full_name: "Ada Lovelace" });
    expect(checkFullName(` ${"b".repeat(80)} `)).toBe("b".repeat(80));
  });

  it("bio: 500 accepted, 501 refused (code points); empty clears it", () => {
    expect(checkUserPatch({ bio: "x".repeat(500) })).toEqual({ bio: "x".repeat(500) });
    expect(checkUserPatch({ bio: EMOJI.repeat(500) })).toEqual({ bio: EMOJI.repeat(500) });
    expect(patchRefusal({ bio: "x".repeat(501) })).toBe("bio is too long (maximum is 500 characters)");
    expect(patchRefusal({ bio: EMOJI.repeat(501) })).toBe("bio is too long (maximum is 500 characters)");
    expect(checkUserPatch({ bio: "" })).toEqual({ bio: null });
  });

  it("designation: 180 accepted, 181 refused (code points)", () => {
    expect(checkUserPatch({ designation: "d".repeat(180) })).toEqual({ designation: "d".repeat(180) });
    expect(checkUserPatch({ designation: EMOJI.repeat(180) })).toEqual({ designation: EMOJI.repeat(180) });
    expect(patchRefusal({ designation: "d".repeat(181) })).toBe("designation is too long (maximum is 180 characters)");
    expect(patchRefusal({ designation: EMOJI.repeat(181) })).toBe("designation is too long (maximum is 180 characters)");
  });

  it("only the sent fields appear in the checked update", () => {
    expect(checkUserPatch({})).toEqual({});
    expect(checkUserPatch({ locale: "fr", bio: "hi" })).toEqual({ locale: "fr", bio: "hi" });
  });

  it("the first broken rule answers, naming its field", () => {
    expect(patchRefusal({ full_name: "Ok", locale: "xx", currency: "USD" })).toBe("locale is not included in the list");
  });
});

describe("user url rules", () => {
  it("2..80 characters, counted in code points", () => {
    expect(urlFormatProblem("url", "a", 2, 80)).toBe("url is too short (minimum is 2 characters)");
    expect(urlFormatProblem("url", "", 2, 80)).toBe("url is too short (minimum is 2 characters)");
    expect(urlFormatProblem("url", "ab", 2, 80)).toBeUndefined();
    expect(urlFormatProblem("url", "a".repeat(80), 2, 80)).toBeUndefined();
    expect(urlFormatProblem("url", "a".repeat(81), 2, 80)).toBe("url is too long (maximum is 80 characters)");
    // An Ethiopic syllable beyond the first plane: two UTF-16 units, one character.
    expect(urlFormatProblem("url", "\u{1E7E0}".repeat(80), 2, 80)).toBeUndefined();
    expect(urlFormatProblem("url", "\u{1E7E0}".repeat(81), 2, 80)).toBe("url is too long (maximum is 80 characters)");
  });

  it.each(["http", "https-me", "httpfoo", "HTTP-me", "Https", "/me", "//me"])("%j is refused for its start", (v) => {
    expect(refusal(() => checkUserUrl(v))).toBe("url must not start with http, https or /");
  });

  it.each(["ada.lovelace", "ada?x", "ada#x", "a.", "..", "?a"])("%j is refused for . ? #", (v) => {
    expect(refusal(() => checkUserUrl(v))).toBe("url must not contain ., ? or #");
  });

  it.each(["ada/lovelace", "ada lovelace", "ada\tx", "ada\u0000x"])("%j is refused: not one path segment", (v) => {
    expect(refusal(() => checkUserUrl(v))).toBe("url must not contain /, spaces or control characters");
  });

  it.each(["ada-lovelace", "Ada_Lovelace", "a1", "my-http", "zoë", "名前"])("%j is accepted", (v) => {
    expect(() => checkUserUrl(v)).not.toThrow();
    expect(checkUserPatch({ url: v })).toEqual({ url: v, ...userUrlKeys(v) });
  });

  it("the stored key is lowercase, so uniqueness ignores case", () => {
    expect(userUrlKeys("Ada-LoveLace").url_key).toBe("ada-lovelace");
    expect(userUrlKeys("ADA").url_key).toBe(userUrlKeys("ada").url_key);
  });

  it("a changed user url is stored with its key and shape (urlKey.ts), and a look-alike of a reserved path is reserved", () => {
    expect(checkUserPatch({ url: "Hostaı" })).toEqual({ url: "Hostaı", url_key: "hostai", url_shape: "hostai", url_looks: ["Hostai", "HOSTAl", "hostai"], url_rule: URL_RULE });
    for (const v of ["PICTURES", "Healthz", "api", "d0cs", "heaIthz"]) expect(refusal(() => checkUserUrl(v))).toBe("url is reserved");
  });

  it("only characters people can tell apart: UTS #39's identifier profile, one script", () => {
    for (const v of ["аpi", "Dосs", "ʜealthz", "pictures\u2800", "ab\u{13430}cd", "ab\uE000", "ab\u2801", "ab\uFFFC", "paypal-\u10FDo", "h\u200bi"]) {
      expect([v, refusal(() => checkUserUrl(v))]).toEqual([v, "url contains characters that are not allowed"]);
    }
    for (const v of ["josé", "мария", "東京", "ελένη"]) expect(() => checkUserUrl(v)).not.toThrow();
  });

  it("urls of PATCH /user are checked with the same rules", () => {
    expect(patchRefusal({ url: "a" })).toBe("url is too short (minimum is 2 characters)");
    expect(patchRefusal({ url: "https-page" })).toBe("url must not start with http, https or /");
  });
});

describe("urlFromName", () => {
  it("joins lowercase words with dashes and drops accents", () => {
    expect(urlFromName("Ada Lovelace")).toBe("ada-lovelace");
    expect(urlFromName("  José  Núñez-García ")).toBe("jose-nunez-garcia");
    expect(urlFromName("Grace M. Hopper (Navy)")).toBe("grace-m-hopper-navy");
  });

  it("pads names too short for a url and names with no usable letters", () => {
    expect(urlFromName("A")).toBe("user-a");
    expect(urlFromName("李小龍")).toBe("user");
    expect(urlFromName(EMOJI)).toBe("user");
  });

  it("never starts with http, which the url rules refuse", () => {
    expect(urlFormatProblem("url", urlFromName("Http Master"), 2, 80)).toBeUndefined();
    expect(urlFormatProblem("url", urlFromName("HTTPS Jones"), 2, 80)).toBeUndefined();
  });

  it("a long name is cut with room for a uniqueness suffix and never ends with a dash", () => {
    const url = urlFromName(`${"a".repeat(73)} b c`);
    expect(charLength(url)).toBeLessThanOrEqual(74);
    expect(url.endsWith("-")).toBe(false);
  });

  it("always gives a url the url rules accept", () => {
    fc.assert(
      // Names starting with "http" are rare in random strings, so they get their own share.
      fc.property(fc.oneof(fc.string({ maxLength: 120 }), fc.string({ maxLength: 20 }).map((s) => `Http${s}`)), (name) => {
        const url = urlFromName(name);
        expect(urlFormatProblem("url", url, 2, 80)).toBeUndefined();
        expect(url).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("isEmail", () => {
  it.each(["ada@example.com", "a.b+c@sub.example.org"])("%j is an e-mail", (v) => expect(isEmail(v)).toBe(true));
  it.each(["ada", "ada@", "@example.com", "ada@example", "a b@example.com", "a@@example.com", `${"a".repeat(250)}@x.io`])(
    "%j is not",
    (v) => expect(isEmail(v)).toBe(false),
  );
});
