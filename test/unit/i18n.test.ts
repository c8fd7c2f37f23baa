// Unit tests of the message catalogues (every key in every locale, same placeholders) and of the Intl time pieces.
import { describe, expect, it } from "vitest";
import { LOCALES, catalogues, direction, fill, localeOf, placeholders, whenParts, zoneName } from "../../src/i18n/index.js";

describe("catalogues", () => {
  for (const [name, catalogue] of Object.entries(catalogues)) {
    const english = catalogue.en as Readonly<Record<string, string>>;
    const keys = Object.keys(english).sort();

    it(`${name}: every locale of the list has a catalogue and no other`, () => {
      expect(Object.keys(catalogue).sort()).toEqual([...LOCALES].sort());
    });

    for (const locale of LOCALES) {
      const messages = catalogue[locale] as Readonly<Record<string, string>>;
      it(`${name}/${locale}: every key, none empty, the English placeholders`, () => {
        expect(Object.keys(messages).sort()).toEqual(keys);
        for (const key of keys) {
          expect(typeof messages[key], `${locale}.${key}`).toBe("string");
          expect(messages[key].trim(), `${locale}.${key} is empty`).not.toBe("");
          expect(placeholders(messages[key]), `${locale}.${key} placeholders`).toEqual(placeholders(english[key]));
        }
      });
      if (locale !== "en") {
        it(`${name}/${locale}: translated, not English left in place`, () => {
          // A few words are the same in many languages ("No", "Invitation"); most must differ. Pure layouts
          // ("{label}: {value}") have no words to translate.
          const hasWords = (s: string) => /\p{L}/u.test(s.replace(/\{\w+\}/g, ""));
          const same = keys.filter((k) => messages[k] === english[k] && hasWords(english[k]));
          expect(same.length, `${locale} copies English for ${same.join(", ")}`).toBeLessThanOrEqual(2);
        });
      }
    }
  }
});

describe("fill and placeholders", () => {
  it("fills every placeholder and refuses a missing one", () => {
    expect(fill("{a} and {b} and {a}", { a: "x", b: "y" })).toBe("x and y and x");
    expect(() => fill("Hello {name}", {})).toThrow(/name/);
    expect(placeholders("{b} {a} {b}")).toEqual(["a", "b"]);
  });

  it("inserts values as they are, without reading placeholders inside them", () => {
    expect(fill("Hi {name}", { name: "{host} <b>" })).toBe("Hi {host} <b>");
  });
});

describe("direction and locale", () => {
  it("is right-to-left for Arabic only", () => {
    expect(LOCALES.filter((l) => direction(l) === "rtl")).toEqual(["ar"]);
  });
  it("falls back to English for an unknown stored value", () => {
    expect(localeOf("de")).toBe("de");
    expect(localeOf("xx")).toBe("en");
    expect(localeOf(null)).toBe("en");
  });
});

describe("whenParts", () => {
  const start = new Date("2026-07-06T13:30:00Z"); // a Monday; Berlin is on summer time (UTC+2)
  const end = new Date("2026-07-06T14:00:00Z");

  it("writes the reader's zone, the host's date and time formats and the locale's words", () => {
    expect(whenParts(start, end, "de", { zone: "Europe/Berlin", dateFormat: "31.12.2024", timeFormat: "24_hours" })).toEqual({
      weekday: "Montag",
      date: "06.07.2026",
      start: "15:30",
      end: "16:00",
      zone: "Mitteleuropäische Sommerzeit (Europe/Berlin)",
    });
    const en = whenParts(start, end, "en", { zone: "America/New_York", dateFormat: "12/31/2024", timeFormat: "12_hours" });
    expect(en).toEqual({ weekday: "Monday", date: "07/06/2026", start: "9:30 AM", end: "10:00 AM", zone: "Eastern Daylight Time (America/New_York)" });
  });

  it("keeps Latin digits in Arabic and uses the locale's own AM/PM words", () => {
    const ar = whenParts(start, end, "ar", { zone: "Asia/Riyadh", dateFormat: "31/12/2024", timeFormat: "12_hours" });
    expect(ar.date).toBe("06/07/2026");
    expect(ar.start).toMatch(/^4:30\s?م$/);
    const ja = whenParts(start, end, "ja", { zone: "Asia/Tokyo", dateFormat: "2024/12/31", timeFormat: "12_hours" });
    expect(ja).toMatchObject({ weekday: "月曜日", date: "2026/07/06", start: "午後10:30", end: "午後11:00" });
  });

  it("names the date in the reader's zone, which may be another day than the host's", () => {
    const late = new Date("2026-07-06T23:30:00Z");
    expect(whenParts(late, end, "en", { zone: "Asia/Tokyo", dateFormat: "2023-12-31", timeFormat: "24_hours" }).date).toBe("2026-07-07");
  });

  it("gives UTC its name", () => {
    expect(zoneName(start, "en", "UTC")).toBe("Coordinated Universal Time (UTC)");
  });
});
