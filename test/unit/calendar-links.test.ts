// The "add to calendar" links: the event's title, times (UTC), place and words in each calendar's own link form.
import { describe, expect, it } from "vitest";
import { eventTitle } from "../../src/domain/bookingEvent.js";
import { googleCalendarUrl, outlookCalendarUrl, type CalendarEntry } from "../../src/domain/calendarLinks.js";

const entry: CalendarEntry = {
  title: eventTitle("Intro & call", "Grace Hopper", "Ada Lovelace"),
  start: new Date("2026-07-06T13:30:00Z"),
  end: new Date("2026-07-06T14:00:00Z"),
  details: "Manage: https://app.example.com/booking/KEY",
  location: "Room 4, Main St",
};

describe("add-to-calendar links", () => {
  it("Google Calendar: the TEMPLATE link with UTC dates", () => {
    const url = new URL(googleCalendarUrl(entry));
    expect(`${url.origin}${url.pathname}`).toBe("https://calendar.google.com/calendar/render");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      action: "TEMPLATE",
      text: "Intro & call (Grace Hopper, Ada Lovelace)",
      dates: "20260706T133000Z/20260706T140000Z",
      details: "Manage: https://app.example.com/booking/KEY",
      location: "Room 4, Main St",
    });
  });

  it("Outlook on the web: the compose deep link with ISO times", () => {
    const url = new URL(outlookCalendarUrl(entry));
    expect(`${url.origin}${url.pathname}`).toBe("https://outlook.live.com/calendar/0/deeplink/compose");
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      rru: "addevent",
      subject: "Intro & call (Grace Hopper, Ada Lovelace)",
      startdt: "2026-07-06T13:30:00.000Z",
      enddt: "2026-07-06T14:00:00.000Z",
      location: "Room 4, Main St",
    });
  });

  it("leaves the place out when there is none", () => {
    expect(new URL(googleCalendarUrl({ ...entry, location: "" })).searchParams.has("location")).toBe(false);
    expect(new URL(outlookCalendarUrl({ ...entry, location: "" })).searchParams.has("location")).toBe(false);
  });
});
