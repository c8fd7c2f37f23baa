// The "did you mean" hint of unknown REST fields: one insertion, deletion, substitution or neighbour swap apart, never more.
import { describe, expect, it } from "vitest";
import { oneEditApart, unknownFieldMessage } from "../../src/platform/rest/fields.js";

describe("oneEditApart", () => {
  it.each([
    ["guest_email_limit", "guest_emails_limit"],
    ["colr", "color"],
    ["colour", "color"],
    ["slot_duraton", "slot_duration"],
    ["location.detials", "location.details"],
    ["nmae", "name"],
    ["Name", "name"],
  ])("%s is one edit from %s", (a, b) => {
    expect(oneEditApart(a, b)).toBe(true);
    expect(oneEditApart(b, a)).toBe(true);
  });

  it.each([
    ["name", "name"],
    ["minutes", "name"],
    ["location.detial", "location.details"],
    ["guestEmailsLimit", "guest_emails_limit"],
    ["ab", "ba_"],
    ["", "ab"],
  ])("%s is not one edit from %s", (a, b) => {
    expect(oneEditApart(a, b)).toBe(false);
  });
});

describe("unknownFieldMessage", () => {
  it("hints the first allowed name one edit away, else names the field alone", () => {
    expect(unknownFieldMessage("guest_email_limit", ["name", "guest_emails_limit"])).toBe("unknown field guest_email_limit (did you mean guest_emails_limit?)");
    expect(unknownFieldMessage("zz", ["name", "url"])).toBe("unknown field zz");
  });
});
