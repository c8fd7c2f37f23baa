// PATCH /user field rules as the domain checks them: only sent fields come back, each list enforced.
import { describe, expect, it } from "vitest";
import { checkUserPatch } from "../../src/domain/user.js";
import { URL_RULE } from "../../src/domain/urlKey.js";

describe("checkUserPatch", () => {
  it("keeps exactly the sent fields, with the url's keys (lowercased, and its look-alike shape) and their rule", () => {
    expect(checkUserPatch({ full_name: " Ada ", time_format: "24_hours", url: "Ada-L" })).toEqual({
      full_name: "Ada",
      time_format: "24_hours",
      url: "Ada-L",
      url_key: "ada-l",
      url_shape: "ada-l",
      url_looks: ["Ada-L", "ADA-L", "ada-l"],
      url_rule: URL_RULE,
    });
  });

  it("refuses values outside each list, naming the field", () => {
    expect(() => checkUserPatch({ time_format: "12h" })).toThrow("time_format is not included in the list");
    expect(() => checkUserPatch({ date_format: "2024.12.31" })).toThrow("date_format is not included in the list");
    expect(() => checkUserPatch({ locale: "pt" })).toThrow("locale is not included in the list");
    expect(() => checkUserPatch({ events_layout: "list" })).toThrow("events_layout is not included in the list");
    expect(() => checkUserPatch({ currency: "USD" })).toThrow("currency is not included in the list");
    expect(() => checkUserPatch({ start_day_of_week: 7 })).toThrow("start_day_of_week is not included in the list");
    expect(() => checkUserPatch({ timezone: "Europe/London" })).toThrow("timezone is not included in the list");
  });

  it("clears the bio with an empty string", () => {
    expect(checkUserPatch({ bio: "" })).toEqual({ bio: null });
  });
});
