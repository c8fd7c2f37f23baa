// Unit tests for user url keys (src/domain/urlKey.ts): pairs from Unicode's confusables.txt and the look-alikes of issue 29 read as one url; different urls stay apart.
import { describe, expect, it } from "vitest";
import { confusableSkeleton, userUrlKey, userUrlKeys, userUrlShape } from "../../src/domain/urlKey.js";

describe("confusableSkeleton (UTS #39)", () => {
  it("maps known pairs of confusables.txt to one skeleton", () => {
    const pairs: Array<[string, string]> = [
      ["m", "rn"], // 006D → 0072 006E
      ["0", "O"], // 0030 → 004F
      ["1", "l"], // 0031 → 006C
      ["I", "l"], // 0049 → 006C
      ["\u0430", "a"], // CYRILLIC SMALL LETTER A
      ["\u03bf", "o"], // GREEK SMALL LETTER OMICRON
      ["\u13aa", "A"], // CHEROKEE LETTER GO
      ["\u0397", "H"], // GREEK CAPITAL LETTER ETA
      ["\u1d0f", "\u1d0f"], // LATIN LETTER SMALL CAPITAL O is a prototype of its own
      ["\uff41", "a"], // FULLWIDTH a (NFKC would do it too; the data has it)
    ];
    for (const [a, b] of pairs) expect([a, confusableSkeleton(a)]).toEqual([a, confusableSkeleton(b)]);
  });

  it("leaves out what draws nothing", () => {
    expect(confusableSkeleton("host\u200bai\u00ad")).toBe(confusableSkeleton("hostai"));
  });
});

describe("userUrlKey: what a url reads as, case ignored", () => {
  it("the look-alikes of issue 29 are the url they look like", () => {
    const alikes = [
      "hostai\u2800", // braille blank
      "hᴏstai", // small capital O
      "ʜᴏꜱᴛᴀɪ".replace("ɪ", "i"), // small capitals
      "ꮋoꮪꭲꭺꭵ", // Cherokee small letters
      "ᎻᎾᏚᎢᎪᎥ", // Cherokee capitals
      "hóstai", // precomposed accent
      "hostai\u0323", // combining dot below
      "hos\u0336tai", // combining overlay
      "\u0301hostai", // a mark on nothing
      "hostаi", // Cyrillic а
      "һоѕтаі".replace("т", "t"), // Cyrillic һ о ѕ а і
      "hοstai", // Greek ο
      "hostaı", // dotless ı
      "HOSTAİ",
      "host\u200dai", // zero-width joiner
      "ｈｏｓｔａı", // full width
    ];
    for (const alike of alikes) expect([alike, userUrlKey(alike)]).toEqual([alike, userUrlKey("hostai")]);
    expect(userUrlKey("раураl")).toBe(userUrlKey("paypal"));
    expect(userUrlKey("modern")).toBe(userUrlKey("rnodern"));
    expect(userUrlKey("bob1")).toBe(userUrlKey("bobl"));
    expect(userUrlKey("ADA-LoveLace")).toBe(userUrlKey("ada-lovelace"));
  });

  it("different urls stay apart", () => {
    const distinct = ["hostai", "hosta", "hostal", "host-ai", "ivan", "иван", "名前", "名", "a_b", "a-b"];
    expect(new Set(distinct.map(userUrlKey)).size).toBe(distinct.length);
    expect(userUrlKey("иван")).toBe(userUrlKey("ивaн"));
  });
});

describe("userUrlShape: what a url reads as with its case", () => {
  it("catches what only the case shows: a capital I is an l, a Greek capital Eta an H", () => {
    expect(userUrlKey("biII")).not.toBe(userUrlKey("bill"));
    expect(userUrlShape("biII")).toBe(userUrlShape("bill"));
    expect(userUrlShape("BiII")).toBe(userUrlShape("bill"));
    expect(userUrlKey("ΗOSTAI")).not.toBe(userUrlKey("HOSTAI"));
    expect(userUrlShape("ΗOSTAI")).toBe(userUrlShape("HOSTAI"));
    expect(userUrlShape("hostai")).not.toBe(userUrlShape("hostal"));
  });

  it("is stored with the key and the rule", () => {
    expect(userUrlKeys("Hᴏstaı")).toEqual({ url_key: "hostai", url_shape: "hostai", url_rule: 2 });
  });
});
