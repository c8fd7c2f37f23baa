// Unit tests for service time-zone names and wall-clock <-> UTC conversion across DST changes.
import { describe, it, expect } from "vitest";
import {
  IANA_TIME_ZONES,
  SERVICE_TIME_ZONES,
  addDays,
  ianaForServiceZone,
  isIanaTimeZone,
  isServiceTimeZone,
  utcToWallClock,
  wallClockToUtc,
  zoneOffsetMinutes,
} from "../../src/domain/timezones.js";
import { ACCOUNT_TIME_ZONES, serviceZoneOf } from "../../src/domain/zoneNames.js";

const iso = (d: Date): string => d.toISOString();

describe("service time-zone names", () => {
  it("holds the whole Rails MAPPING, each name once, in Rails order", () => {
    expect(SERVICE_TIME_ZONES).toHaveLength(152);
    expect(new Set(SERVICE_TIME_ZONES).size).toBe(152);
    expect(SERVICE_TIME_ZONES[0]).toBe("International Date Line West");
    expect(SERVICE_TIME_ZONES[SERVICE_TIME_ZONES.length - 1]).toBe("Samoa");
  });

  it("maps names to IANA zones exactly as Rails does", () => {
    const samples: Array<[string, string]> = [
      ["London", "Europe/London"],
      ["Edinburgh", "Europe/London"],
      ["Eastern Time (US & Canada)", "America/New_York"],
      ["Pacific Time (US & Canada)", "America/Los_Angeles"],
      ["Tokyo", "Asia/Tokyo"],
      ["Osaka", "Asia/Tokyo"],
      ["UTC", "Etc/UTC"],
      ["International Date Line West", "Etc/GMT+12"],
      ["Kyiv", "Europe/Kiev"],
      ["Greenland", "America/Nuuk"],
      ["Bern", "Europe/Zurich"],
      ["Astana", "Asia/Almaty"],
      ["Canberra", "Australia/Canberra"],
      ["Asuncion", "America/Asuncion"],
      ["Chatham Is.", "Pacific/Chatham"],
      ["Samoa", "Pacific/Apia"],
      ["American Samoa", "Pacific/Pago_Pago"],
      ["Nuku'alofa", "Pacific/Tongatapu"],
      ["Indiana (East)", "America/Indiana/Indianapolis"],
    ];
    for (const [name, iana] of samples) {
      expect(isServiceTimeZone(name)).toBe(true);
      expect(ianaForServiceZone(name)).toBe(iana);
    }
  });

  it("maps every service name to a zone the runtime knows", () => {
    for (const name of SERVICE_TIME_ZONES) expect(isIanaTimeZone(ianaForServiceZone(name)), name).toBe(true);
  });

  it("refuses IANA names, other spellings and object keys", () => {
    for (const name of ["Europe/London", "America/New_York", "Etc/UTC", "Asia/Tokyo", "london", "LONDON", " London", "Kiev", "GMT", "", "constructor", "__proto__", "toString"]) {
      expect(isServiceTimeZone(name), name).toBe(false);
    }
  });

  it("throws for an unknown service name", () => {
    expect(() => ianaForServiceZone("Europe/London")).toThrow(RangeError);
    expect(() => ianaForServiceZone("Atlantis")).toThrow(/unknown service time zone/);
    expect(() => ianaForServiceZone("constructor")).toThrow(RangeError);
  });
});

describe("isIanaTimeZone", () => {
  it("accepts Region/City names and UTC", () => {
    for (const name of ["Europe/London", "America/Argentina/Buenos_Aires", "Etc/GMT+12", "Etc/UTC", "UTC", "Asia/Kolkata"]) {
      expect(isIanaTimeZone(name), name).toBe(true);
    }
  });

  it("refuses service names, abbreviations without a slash and unknown zones", () => {
    for (const name of ["London", "Tokyo", "EST", "GMT", "EST5EDT", "Foo/Bar", "Europe/Atlantis", "", "/"]) {
      expect(isIanaTimeZone(name), name).toBe(false);
    }
  });
});

describe("zoneOffsetMinutes", () => {
  it("gives standard and daylight offsets", () => {
    expect(zoneOffsetMinutes("America/New_York", new Date("2026-01-15T12:00:00Z"))).toBe(-300);
    expect(zoneOffsetMinutes("America/New_York", new Date("2026-07-15T12:00:00Z"))).toBe(-240);
    expect(zoneOffsetMinutes("Europe/Berlin", new Date("2026-01-15T12:00:00Z"))).toBe(60);
    expect(zoneOffsetMinutes("Europe/Berlin", new Date("2026-07-15T12:00:00Z"))).toBe(120);
    expect(zoneOffsetMinutes("Etc/UTC", new Date("2026-07-15T12:00:00Z"))).toBe(0);
  });

  it("handles fractional-hour and far offsets", () => {
    expect(zoneOffsetMinutes("Asia/Kolkata", new Date("2026-07-15T12:00:00Z"))).toBe(330);
    expect(zoneOffsetMinutes("Asia/Kathmandu", new Date("2026-07-15T12:00:00Z"))).toBe(345);
    expect(zoneOffsetMinutes("Pacific/Chatham", new Date("2026-01-15T12:00:00Z"))).toBe(825);
    expect(zoneOffsetMinutes("Etc/GMT+12", new Date("2026-01-15T12:00:00Z"))).toBe(-720);
  });

  it("switches exactly at the transition instant", () => {
    expect(zoneOffsetMinutes("America/New_York", new Date("2026-03-08T06:59:59.999Z"))).toBe(-300);
    expect(zoneOffsetMinutes("America/New_York", new Date("2026-03-08T07:00:00Z"))).toBe(-240);
    expect(zoneOffsetMinutes("Europe/Berlin", new Date("2026-10-25T00:59:59Z"))).toBe(120);
    expect(zoneOffsetMinutes("Europe/Berlin", new Date("2026-10-25T01:00:00Z"))).toBe(60);
  });

  it("rejects an invalid Date", () => {
    expect(() => zoneOffsetMinutes("Europe/Berlin", new Date("nope"))).toThrow(RangeError);
  });
});

describe("wallClockToUtc", () => {
  it("converts ordinary times", () => {
    expect(iso(wallClockToUtc("Europe/London", "2026-12-24", "09:00"))).toBe("2026-12-24T09:00:00.000Z");
    expect(iso(wallClockToUtc("Europe/London", "2026-07-01", "09:00"))).toBe("2026-07-01T08:00:00.000Z");
    expect(iso(wallClockToUtc("Asia/Tokyo", "2026-12-24", "09:00"))).toBe("2026-12-24T00:00:00.000Z");
    expect(iso(wallClockToUtc("Asia/Kolkata", "2026-01-01", "00:00"))).toBe("2025-12-31T18:30:00.000Z");
    expect(iso(wallClockToUtc("Etc/GMT+12", "2026-01-01", "23:59"))).toBe("2026-01-02T11:59:00.000Z");
  });

  describe("America/New_York spring forward, 2026-03-08 (02:00 EST -> 03:00 EDT)", () => {
    const z = "America/New_York";
    it("keeps times before and after the gap", () => {
      expect(iso(wallClockToUtc(z, "2026-03-08", "01:59"))).toBe("2026-03-08T06:59:00.000Z");
      expect(iso(wallClockToUtc(z, "2026-03-08", "03:00"))).toBe("2026-03-08T07:00:00.000Z");
      expect(iso(wallClockToUtc(z, "2026-03-08", "03:30"))).toBe("2026-03-08T07:30:00.000Z");
    });
    it("moves a nonexistent time forward by the one-hour gap", () => {
      const t = wallClockToUtc(z, "2026-03-08", "02:30");
      expect(iso(t)).toBe("2026-03-08T07:30:00.000Z");
      expect(utcToWallClock(z, t).time).toBe("03:30");
      expect(iso(wallClockToUtc(z, "2026-03-08", "02:00"))).toBe("2026-03-08T07:00:00.000Z");
      expect(utcToWallClock(z, wallClockToUtc(z, "2026-03-08", "02:59")).time).toBe("03:59");
    });
  });

  describe("America/New_York fall back, 2026-11-01 (02:00 EDT -> 01:00 EST)", () => {
    const z = "America/New_York";
    it("takes the earlier (EDT) instant for an ambiguous time", () => {
      expect(iso(wallClockToUtc(z, "2026-11-01", "01:00"))).toBe("2026-11-01T05:00:00.000Z");
      expect(iso(wallClockToUtc(z, "2026-11-01", "01:30"))).toBe("2026-11-01T05:30:00.000Z");
      expect(iso(wallClockToUtc(z, "2026-11-01", "01:59"))).toBe("2026-11-01T05:59:00.000Z");
    });
    it("keeps times outside the repeated hour", () => {
      expect(iso(wallClockToUtc(z, "2026-11-01", "00:59"))).toBe("2026-11-01T04:59:00.000Z");
      expect(iso(wallClockToUtc(z, "2026-11-01", "02:00"))).toBe("2026-11-01T07:00:00.000Z");
    });
  });

  describe("Europe/Berlin spring forward, 2026-03-29 (02:00 CET -> 03:00 CEST)", () => {
    const z = "Europe/Berlin";
    it("keeps times before and after the gap", () => {
      expect(iso(wallClockToUtc(z, "2026-03-29", "01:59"))).toBe("2026-03-29T00:59:00.000Z");
      expect(iso(wallClockToUtc(z, "2026-03-29", "03:00"))).toBe("2026-03-29T01:00:00.000Z");
    });
    it("moves a nonexistent time forward by the gap", () => {
      const t = wallClockToUtc(z, "2026-03-29", "02:30");
      expect(iso(t)).toBe("2026-03-29T01:30:00.000Z");
      expect(utcToWallClock(z, t)).toEqual({ date: "2026-03-29", time: "03:30", weekday: 0 });
    });
  });

  describe("Europe/Berlin fall back, 2026-10-25 (03:00 CEST -> 02:00 CET)", () => {
    const z = "Europe/Berlin";
    it("takes the earlier (CEST) instant for an ambiguous time", () => {
      expect(iso(wallClockToUtc(z, "2026-10-25", "02:00"))).toBe("2026-10-25T00:00:00.000Z");
      expect(iso(wallClockToUtc(z, "2026-10-25", "02:30"))).toBe("2026-10-25T00:30:00.000Z");
      expect(iso(wallClockToUtc(z, "2026-10-25", "02:59"))).toBe("2026-10-25T00:59:00.000Z");
    });
    it("keeps times outside the repeated hour, even when UTC is on the previous day", () => {
      expect(iso(wallClockToUtc(z, "2026-10-25", "01:59"))).toBe("2026-10-24T23:59:00.000Z");
      expect(iso(wallClockToUtc(z, "2026-10-25", "03:00"))).toBe("2026-10-25T02:00:00.000Z");
    });
  });

  it("moves forward by a half-hour gap (Lord Howe) and by a skipped day (Samoa 2011)", () => {
    const lh = wallClockToUtc("Australia/Lord_Howe", "2026-10-04", "02:15");
    expect(iso(lh)).toBe("2026-10-03T15:45:00.000Z");
    expect(utcToWallClock("Australia/Lord_Howe", lh).time).toBe("02:45");
    const apia = wallClockToUtc("Pacific/Apia", "2011-12-30", "12:00");
    expect(utcToWallClock("Pacific/Apia", apia)).toEqual({ date: "2011-12-31", time: "12:00", weekday: 6 });
  });

  it("round-trips every minute of a DST-change day except the gap", () => {
    const z = "America/New_York";
    for (let h = 0; h < 24; h++) {
      for (let m = 0; m < 60; m += 15) {
        const time = `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`;
        const back = utcToWallClock(z, wallClockToUtc(z, "2026-03-08", time));
        expect(back.time, time).toBe(h === 2 ? `03:${time.slice(3)}` : time);
      }
    }
  });

  it("rejects malformed dates and times", () => {
    expect(() => wallClockToUtc("Europe/Berlin", "2026-02-30", "09:00")).toThrow(/no such calendar date/);
    expect(() => wallClockToUtc("Europe/Berlin", "2026-13-01", "09:00")).toThrow(RangeError);
    expect(() => wallClockToUtc("Europe/Berlin", "2026-1-01", "09:00")).toThrow(/YYYY-MM-DD/);
    expect(() => wallClockToUtc("Europe/Berlin", "2026-01-01", "24:00")).toThrow(/HH:MM/);
    expect(() => wallClockToUtc("Europe/Berlin", "2026-01-01", "9:00")).toThrow(/HH:MM/);
    expect(() => wallClockToUtc("Europe/Berlin", "2026-01-01", "09:60")).toThrow(/HH:MM/);
    expect(() => wallClockToUtc("Not/AZone", "2026-01-01", "09:00")).toThrow(RangeError);
  });
});

describe("utcToWallClock", () => {
  it("gives date, time and weekday (0 = Sunday) in the zone", () => {
    expect(utcToWallClock("Asia/Tokyo", new Date("2026-12-24T08:00:00Z"))).toEqual({ date: "2026-12-24", time: "17:00", weekday: 4 });
    expect(utcToWallClock("America/New_York", new Date("2026-01-01T03:00:00Z"))).toEqual({ date: "2025-12-31", time: "22:00", weekday: 3 });
    expect(utcToWallClock("Etc/UTC", new Date("2026-03-08T00:00:00Z"))).toEqual({ date: "2026-03-08", time: "00:00", weekday: 0 });
    expect(utcToWallClock("Etc/GMT+12", new Date("2026-03-08T11:59:59Z"))).toEqual({ date: "2026-03-07", time: "23:59", weekday: 6 });
  });

  it("shows the repeated hour twice across a fall-back", () => {
    expect(utcToWallClock("America/New_York", new Date("2026-11-01T05:30:00Z")).time).toBe("01:30");
    expect(utcToWallClock("America/New_York", new Date("2026-11-01T06:30:00Z")).time).toBe("01:30");
  });
});

describe("addDays", () => {
  it("walks the calendar across month, year and leap-day boundaries", () => {
    expect(addDays("2026-12-31", 1)).toBe("2027-01-01");
    expect(addDays("2028-02-28", 1)).toBe("2028-02-29");
    expect(addDays("2026-02-28", 1)).toBe("2026-03-01");
    expect(addDays("2026-03-01", -1)).toBe("2026-02-28");
    expect(addDays("2026-03-07", 1)).toBe("2026-03-08");
    expect(addDays("2026-01-15", 0)).toBe("2026-01-15");
    expect(addDays("2026-01-01", 365)).toBe("2027-01-01");
    expect(addDays("2026-01-01", -366)).toBe("2024-12-31");
  });

  it("rejects fractional days and bad dates", () => {
    expect(() => addDays("2026-01-01", 1.5)).toThrow(RangeError);
    expect(() => addDays("2026-02-29", 1)).toThrow(RangeError);
    expect(() => addDays("01/01/2026", 1)).toThrow(RangeError);
  });
});

describe("zone names read into each other (src/domain/zoneNames.ts)", () => {
  /** What canonical() was: an Intl.DateTimeFormat per name. */
  const intlCanonical = (zone: string) => new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;

  it("the IANA names listed are Intl's canonical ones, so a name listed needs no Intl.DateTimeFormat", () => {
    expect(IANA_TIME_ZONES.filter((z) => intlCanonical(z) !== z)).toEqual([]);
  });

  it("lists the same account zones, and reads every IANA name and alias to the same service name, as an Intl.DateTimeFormat per name did", () => {
    const byZone = new Map<string, string[]>();
    for (const name of SERVICE_TIME_ZONES) {
      const zone = intlCanonical(ianaForServiceZone(name));
      byZone.set(zone, [...(byZone.get(zone) ?? []), name]);
    }
    const isOwnCity = (name: string) => {
      const iana = ianaForServiceZone(name);
      return iana.slice(iana.lastIndexOf("/") + 1).replaceAll("_", " ") === name;
    };
    const expected = [...SERVICE_TIME_ZONES, ...IANA_TIME_ZONES.filter((z) => !isServiceTimeZone(z) && byZone.has(intlCanonical(z)))];
    expect(ACCOUNT_TIME_ZONES).toEqual(expected);
    const aliases = ["Europe/Kiev", "Asia/Calcutta", "Asia/Kolkata", "US/Eastern", "Etc/UTC", "europe/berlin", "America/Buenos_Aires", "Asia/Saigon"];
    for (const zone of [...IANA_TIME_ZONES, ...aliases].filter((z) => !isServiceTimeZone(z) && isIanaTimeZone(z))) {
      const names = byZone.get(intlCanonical(zone));
      if (names === undefined) expect(() => serviceZoneOf("timezone", zone)).toThrow(/has no service time-zone name/);
      else expect([zone, serviceZoneOf("timezone", zone)]).toEqual([zone, names.find(isOwnCity) ?? names[0]]);
    }
    expect(serviceZoneOf("timezone", "Europe/Kiev")).toBe(serviceZoneOf("timezone", "Europe/Kyiv"));
    expect(serviceZoneOf("timezone", "Asia/Calcutta")).toBe(serviceZoneOf("timezone", "Asia/Kolkata"));
  });
});
