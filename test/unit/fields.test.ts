// The "did you mean" hint of unknown REST fields: one insertion, deletion, substitution or neighbour swap apart, never more.
import { describe, expect, it } from "vitest";
import { unknownFieldMessage } from "../../src/domain/errors.js";
import { closestAllowed, oneEditApart } from "../../src/domain/nearest.js";

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

describe("closestAllowed: what a value outside a list most likely meant", () => {
  it("the value in another case, else one edit away with the same digits; nothing for numbers", () => {
    expect(closestAllowed("USD", ["eur", "usd"])).toBe("usd");
    expect(closestAllowed("berlin", ["Berlin", "Bern"])).toBe("Berlin");
    expect(closestAllowed("30_minute", ["15_minutes", "30_minutes"])).toBe("30_minutes");
    expect(closestAllowed("lavendar", ["sage", "lavender"])).toBe("lavender");
    expect(closestAllowed("Europe/Berln", ["Europe/Bern", "Europe/Berlin"])).toBe("Europe/Berlin");
    expect(closestAllowed("20_minutes", ["0_minutes", "30_minutes"])).toBeUndefined();
    expect(closestAllowed("purple", ["sage", "lavender"])).toBeUndefined();
    expect(closestAllowed(7, [0, 1, 2, 3, 4, 5, 6])).toBeUndefined();
    expect(closestAllowed("pt", ["en", "it"])).toBeUndefined();
    expect(closestAllowed("enn", ["en", "it"])).toBe("en");
    expect(closestAllowed(undefined, ["a"])).toBeUndefined();
  });

  it("a language tag with its region or script is its language, where the list holds it", () => {
    const locales = ["en", "fr", "de", "zh", "es"];
    for (const [tag, language] of [["de-DE", "de"], ["fr_FR", "fr"], ["EN-us", "en"], ["zh-Hans", "zh"], ["zh-Hant-TW", "zh"], ["es-419", "es"]]) expect([tag, closestAllowed(tag, locales)]).toEqual([tag, language]);
    for (const tag of ["pt-BR", "dede", "in_person", "30_minutes"]) expect([tag, closestAllowed(tag, locales)]).toEqual([tag, undefined]);
  });
});
