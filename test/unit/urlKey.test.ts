// Unit tests for url keys and the url characters (src/domain/urlKey.ts, src/domain/uts39.ts): pairs from Unicode's confusables.txt read as one url, different urls stay apart, and only what UTS #39's identifier profile allows, in one script, is a url.
import { describe, expect, it } from "vitest";
import { eventUrlKeys, URL_RULE, urlKey, urlLooks, urlShape, userUrlKeys } from "../../src/domain/urlKey.js";
import { confusableSkeleton, isHighlyRestrictiveIdentifier } from "../../src/domain/uts39.js";

describe("confusableSkeleton (UTS #39)", () => {
  it("maps known pairs of confusables.txt to one skeleton", () => {
    const pairs: Array<[string, string]> = [
      ["m", "rn"], // 006D → 0072 006E
      ["0", "O"], // 0030 → 004F
      ["1", "l"], // 0031 → 006C
      ["I", "l"], // 0049 → 006C
      ["\u0430", "a"], // CYRILLIC SMALL LETTER A
      ["\u03bf", "o"], // GREEK SMALL LETTER OMICRON
      ["\u0397", "H"], // GREEK CAPITAL LETTER ETA
      ["\u0455", "s"], // CYRILLIC SMALL LETTER DZE
      ["\u0131", "i"], // LATIN SMALL LETTER DOTLESS I
    ];
    for (const [a, b] of pairs) expect([a, confusableSkeleton(a)]).toEqual([a, confusableSkeleton(b)]);
  });

  it("leaves out what draws nothing", () => {
    expect(confusableSkeleton("host\u200bai\u00ad")).toBe(confusableSkeleton("hostai"));
  });
});

describe("isHighlyRestrictiveIdentifier: the characters a url may hold (identifier profile, one script)", () => {
  it("takes accented Latin and single-script urls of other scripts, with Common and Inherited characters", () => {
    for (const ok of ["josé", "zoë-nuñez", "мария", "東京", "ελένη", "名前", "とうきょう東京", "한국어漢字", "tokyo東京", "ivan_2-x", "0123", "ქართული", "שלום", "محمد", "हिन्दी"]) {
      expect([ok, isHighlyRestrictiveIdentifier(ok)]).toEqual([ok, true]);
    }
  });

  it("refuses format and invisible characters, private use, unassigned code points, symbols and mixed scripts", () => {
    const refused = [
      "ab\u{13430}cd", // EGYPTIAN HIEROGLYPH VERTICAL JOINER, a format character
      "host\u200bai", // ZERO WIDTH SPACE
      "hostai\u2800", // BRAILLE PATTERN BLANK
      "ab\u2801cd", // a Braille pattern
      "ab\uFFFCcd", // OBJECT REPLACEMENT CHARACTER
      "ab\uE000cd", // private use
      "ab\u{F0000}cd", // supplementary private use
      "ab\u0378cd", // unassigned
      "ab\u{50000}cd", // unassigned
      "a\u2665b", // a symbol
      "paypal-\u10FDo", // Latin with a Georgian letter
      "p\u0430ypal", // Latin with a Cyrillic а
      "h\u1D0Fstai", // a small capital (not in the profile)
      "\uAB8Bo\uAB9A", // Cherokee (a limited-use script)
      "mixed-\u03B5\u03BB", // Latin with Greek
    ];
    for (const bad of refused) expect([bad, isHighlyRestrictiveIdentifier(bad)]).toEqual([bad, false]);
  });
});

describe("urlKey: what a url reads as, case ignored", () => {
  it("look-alikes are the url they look like", () => {
    const alikes = [
      "hóstai", // precomposed accent
      "hostai\u0323", // combining dot below
      "\u0301hostai", // a mark on nothing
      "hostаi", // Cyrillic а
      "һоѕтаі".replace("т", "t"), // Cyrillic һ о ѕ а і
      "hοstai", // Greek ο
      "hostaı", // dotless ı
      "HOSTAİ",
      "host\u200dai", // zero-width joiner, as a visitor may type it
      "hostai\u2800", // braille blank, the same
      "ｈｏｓｔａı", // full width
    ];
    for (const alike of alikes) expect([alike, urlKey(alike)]).toEqual([alike, urlKey("hostai")]);
    expect(urlKey("раураl")).toBe(urlKey("paypal"));
    expect(urlKey("modern")).toBe(urlKey("rnodern"));
    expect(urlKey("bob1")).toBe(urlKey("bobl"));
    expect(urlKey("ADA-LoveLace")).toBe(urlKey("ada-lovelace"));
  });

  it("different urls stay apart", () => {
    const distinct = ["hostai", "hosta", "hostal", "host-ai", "ivan", "иван", "名前", "名", "a_b", "a-b", "мария", "東京", "ελένη"];
    expect(new Set(distinct.map(urlKey)).size).toBe(distinct.length);
    expect(urlKey("иван")).toBe(urlKey("ивaн"));
  });
});

describe("urlShape: what a url reads as with its case", () => {
  it("catches what only the case shows: a capital I is an l, a Greek capital Eta an H", () => {
    expect(urlKey("biII")).not.toBe(urlKey("bill"));
    expect(urlShape("biII")).toBe(urlShape("bill"));
    expect(urlShape("BiII")).toBe(urlShape("bill"));
    expect(urlKey("ΗOSTAI")).not.toBe(urlKey("HOSTAI"));
    expect(urlShape("ΗOSTAI")).toBe(urlShape("HOSTAI"));
    expect(urlShape("hostai")).not.toBe(urlShape("hostal"));
  });

  it("is stored with the key, the looks and the rule; an event url the same", () => {
    expect(userUrlKeys("Hostaı")).toEqual({ url_key: "hostai", url_shape: "hostai", url_looks: ["Hostai", "HOSTAl", "hostai"], url_rule: URL_RULE });
    expect(eventUrlKeys("Intro-Cаll")).toEqual({ url_key: "intro-call", url_shape: "lntro-call", url_looks: ["lntro-Call", "lNTRO-CALL", "intro-call"], url_rule: URL_RULE });
  });
});

describe("urlLooks: what a url reads as with its case kept, as typed, in capitals, in small letters", () => {
  const meet = (a: string, b: string) => urlLooks(a).some((look) => urlLooks(b).includes(look));
  it("meets a taken url's capitals or small letters where neither key nor shape does", () => {
    // A small l among capitals reads as the capital I of the taken url written in capitals.
    expect(urlKey("ALICE-SMlTH")).not.toBe(urlKey("alice-smith"));
    expect(urlShape("ALICE-SMlTH")).not.toBe(urlShape("alice-smith"));
    expect(meet("ALICE-SMlTH", "alice-smith")).toBe(true);
    // A capital I among small letters reads as the l of the taken url written in small letters.
    expect(urlShape("aIice")).not.toBe(urlShape("ALICE"));
    expect(meet("aIice", "ALICE")).toBe(true);
    expect(meet("WlTHQ", "withq")).toBe(true);
  });

  it("keeps apart what reads apart in every case: `ali` and `all` (ALI and ALL), `bill` and `biii`", () => {
    for (const [a, b] of [["ali", "all"], ["bill", "biii"], ["hostai", "hostal"], ["ivan", "иван"]]) expect([a, b, meet(a, b)]).toEqual([a, b, false]);
  });
});
