// Unit tests of the markup both the server and the page script draw (src/features/pages/shared/view.ts): months, days in a zone, hooks, escaping.
import { describe, expect, it } from "vitest";
import { pageMessages } from "../../src/i18n/pages.js";
import { addMonths, durationText, esc, locationText, monthHtml, monthRange, slotsByDay, timesHtml, type PickerState, type Speech } from "../../src/features/pages/shared/view.js";

const en: Speech = { locale: "en", messages: pageMessages.en, timeFormat: "12_hours" };

describe("months and days", () => {
  it("asks the API for at most a month, from today on, and nothing for a past month", () => {
    expect(monthRange("2026-11", "2026-11-23")).toEqual({ from: "2026-11-23", to: "2026-11-30" });
    expect(monthRange("2026-12", "2026-11-23")).toEqual({ from: "2026-12-01", to: "2026-12-31" });
    expect(monthRange("2027-02", "2026-11-23")).toEqual({ from: "2027-02-01", to: "2027-02-28" });
    expect(monthRange("2026-10", "2026-11-23")).toBeUndefined();
    expect(addMonths("2026-12", 1)).toBe("2027-01");
    expect(addMonths("2027-01", -1)).toBe("2026-12");
  });

  it("puts a slot on the day of the visitor's zone", () => {
    const slot = { start_time: "2026-12-01T03:00:00.000Z", end_time: "2026-12-01T03:30:00.000Z" };
    expect([...slotsByDay([slot], "America/New_York").keys()]).toEqual(["2026-11-30"]);
    expect([...slotsByDay([slot], "Asia/Tokyo").keys()]).toEqual(["2026-12-01"]);
  });
});

describe("picker markup", () => {
  const slot = { start_time: "2026-12-02T14:00:00.000Z", end_time: "2026-12-02T14:30:00.000Z" };
  const state: PickerState = { month: "2026-12", today: "2026-11-23", zone: "UTC", days: new Map([["2026-12-02", [slot]]]), day: "2026-12-02", startDayOfWeek: 1 };

  it("makes only days with free times buttons, with data-day, starting the week on the host's day", () => {
    const html = monthHtml(state, en);
    expect(html.match(/data-day="[^"]+"/g)).toEqual(['data-day="2026-12-02"']);
    expect(html).toContain('aria-pressed="true"');
    // Monday first: December 2026 starts on a Tuesday, so one empty cell leads.
    expect(html).toMatch(/<th scope="col" abbr="Monday">Mon<\/th>/);
    expect(html).toMatch(/<tbody><tr><td><\/td><td><span class="day off">1<\/span>/);
  });

  it("writes each time with data-slot exactly as the API did, in the host's clock", () => {
    const html = timesHtml(state, en);
    expect(html).toContain(`data-slot="${slot.start_time}"`);
    expect(html).toContain(">2:00 PM<");
    expect(timesHtml(state, { ...en, timeFormat: "24_hours" })).toContain(">14:00<");
  });
});

describe("words", () => {
  it("escapes text for elements and attributes", () => {
    expect(esc(`<script>"x" & 'y'</script>`)).toBe("&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;");
  });

  it("names locations and durations in the host's language", () => {
    expect(locationText("phone_call", "+49 30 1234", "Ada", en)).toBe("Phone call: you call +49 30 1234");
    expect(locationText("phone_call", undefined, "Ada", en)).toBe("Phone call: Ada will call you");
    const de: Speech = { locale: "de", messages: pageMessages.de, timeFormat: "24_hours" };
    expect(locationText("conference", undefined, "Ada", de)).toBe("Videokonferenz");
    expect(durationText("30 minutes", "de")).toBe("30 Minuten");
    expect(durationText("1 hour", "en")).toBe("1 hour");
  });
});
