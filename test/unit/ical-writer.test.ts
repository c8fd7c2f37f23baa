// Unit tests for the iCalendar writer: the CalDAV object and the iTIP invitations, read back with ical.js, with escaping, folding and injection.
import fc from "fast-check";
import ICAL from "ical.js";
import { describe, expect, it } from "vitest";
import { bookingUid, calendarObject, foldLine, invitation, type IcsBooking } from "../../src/domain/ical/writer.js";

const booking: IcsBooking = {
  uid: bookingUid("65f0c0ffee0000000000abcd", "app.example"),
  sequence: 2,
  start: new Date("2025-03-10T09:00:00Z"),
  end: new Date("2025-03-10T09:30:00Z"),
  summary: "Intro call with Grace Hopper",
  description: "Answers:\nWhat about? Compilers, mostly; also COBOL\\Fortran",
  location: "https://meet.jit.si/abc123",
  organizer: { name: "Ada Lovelace", email: "ada@example.com" },
  attendees: [{ name: "Grace Hopper", email: "grace@example.org" }, { email: "guest@example.net" }],
  status: "CONFIRMED",
  url: "https://meet.jit.si/abc123?a=1,b;c",
  stamp: new Date("2025-03-01T12:00:00Z"),
};

function read(text: string): { cal: ICAL.Component; ev: ICAL.Component } {
  const cal = new ICAL.Component(ICAL.parse(text));
  const events = cal.getAllSubcomponents("vevent");
  expect(events).toHaveLength(1);
  return { cal, ev: events[0]! };
}

const time = (ev: ICAL.Component, name: string) => (ev.getFirstPropertyValue(name) as ICAL.Time).toJSDate().toISOString();
const params = (p: ICAL.Property) => {
  const json = p.toJSON() as [string, Record<string, unknown>, ...unknown[]];
  return json[1];
};

describe("calendarObject (CalDAV PUT)", () => {
  it("one VEVENT, no METHOD, every property of the booking, attendees with SCHEDULE-AGENT=CLIENT", () => {
    const text = calendarObject(booking);
    const { cal, ev } = read(text);
    expect(cal.getFirstPropertyValue("version")).toBe("2.0");
    expect(cal.hasProperty("prodid")).toBe(true);
    expect(cal.hasProperty("method")).toBe(false);
    expect(ev.getFirstPropertyValue("uid")).toBe("65f0c0ffee0000000000abcd@app.example");
    expect(ev.getFirstPropertyValue("sequence")).toBe(2);
    expect(time(ev, "dtstamp")).toBe("2025-03-01T12:00:00.000Z");
    expect(time(ev, "dtstart")).toBe("2025-03-10T09:00:00.000Z");
    expect(time(ev, "dtend")).toBe("2025-03-10T09:30:00.000Z");
    expect(text).toContain("DTSTART:20250310T090000Z\r\n");
    expect(ev.getFirstPropertyValue("summary")).toBe(booking.summary);
    expect(ev.getFirstPropertyValue("description")).toBe(booking.description);
    expect(ev.getFirstPropertyValue("location")).toBe(booking.location);
    expect(ev.getFirstPropertyValue("url")).toBe(booking.url);
    expect(ev.getFirstPropertyValue("status")).toBe("CONFIRMED");
    const organizer = ev.getFirstProperty("organizer")!;
    expect(organizer.getFirstValue()).toBe("mailto:ada@example.com");
    expect(params(organizer)).toMatchObject({ cn: "Ada Lovelace", "schedule-agent": "CLIENT" });
    const attendees = ev.getAllProperties("attendee");
    expect(attendees.map((a) => a.getFirstValue())).toEqual(["mailto:grace@example.org", "mailto:guest@example.net"]);
    expect(params(attendees[0]!)).toMatchObject({ cn: "Grace Hopper", partstat: "ACCEPTED", role: "REQ-PARTICIPANT", "schedule-agent": "CLIENT" });
    expect(params(attendees[1]!)).toMatchObject({ partstat: "NEEDS-ACTION", "schedule-agent": "CLIENT" });
    expect(params(attendees[1]!)).not.toHaveProperty("cn");
    expect(text.endsWith("END:VCALENDAR\r\n")).toBe(true);
    expect(text.replace(/\r\n/g, "")).not.toMatch(/[\r\n]/);
  });

  it("leaves out an empty description, a null location and no URL", () => {
    const { ev } = read(calendarObject({ ...booking, description: "", location: null, url: undefined }));
    expect(ev.hasProperty("description")).toBe(false);
    expect(ev.hasProperty("location")).toBe(false);
    expect(ev.hasProperty("url")).toBe(false);
  });

  it("bookingUid is <booking id>@<app host>", () => {
    expect(bookingUid("abc", "cal.example.com")).toBe("abc@cal.example.com");
  });
});

describe("invitation (RFC 5546)", () => {
  it("REQUEST: METHOD:REQUEST, the host as ORGANIZER, attendees with PARTSTAT and RSVP, no SCHEDULE-AGENT", () => {
    const text = invitation(booking, "REQUEST");
    const { cal, ev } = read(text);
    expect(cal.getFirstPropertyValue("method")).toBe("REQUEST");
    expect(ev.getFirstPropertyValue("status")).toBe("CONFIRMED");
    expect(ev.getFirstPropertyValue("organizer")).toBe("mailto:ada@example.com");
    const [booker, guest] = ev.getAllProperties("attendee");
    expect(params(booker!)).toMatchObject({ partstat: "ACCEPTED", rsvp: "FALSE", cn: "Grace Hopper" });
    expect(params(guest!)).toMatchObject({ partstat: "NEEDS-ACTION", rsvp: "TRUE" });
    expect(text).not.toContain("SCHEDULE-AGENT");
    for (const name of ["uid", "dtstamp", "dtstart", "summary", "sequence"]) expect(ev.hasProperty(name)).toBe(true);
  });

  it("CANCEL: METHOD:CANCEL, STATUS:CANCELLED, the same UID, the higher SEQUENCE it is given", () => {
    const request = read(invitation({ ...booking, sequence: 0 }, "REQUEST")).ev;
    const { cal, ev } = read(invitation({ ...booking, sequence: 1 }, "CANCEL"));
    expect(cal.getFirstPropertyValue("method")).toBe("CANCEL");
    expect(ev.getFirstPropertyValue("status")).toBe("CANCELLED");
    expect(ev.getFirstPropertyValue("uid")).toBe(request.getFirstPropertyValue("uid"));
    expect(Number(ev.getFirstPropertyValue("sequence"))).toBeGreaterThan(Number(request.getFirstPropertyValue("sequence")));
    expect(ev.getAllProperties("attendee")).toHaveLength(2);
  });

  it("a CANCEL carries its reason as COMMENT, TEXT-escaped; without one there is no COMMENT", () => {
    const { ev } = read(invitation({ ...booking, sequence: 1, comment: "Ill; sorry, see you\nnext week" }, "CANCEL"));
    expect(ev.getFirstPropertyValue("comment")).toBe("Ill; sorry, see you\nnext week");
    expect(read(invitation({ ...booking, sequence: 1 }, "CANCEL")).ev.hasProperty("comment")).toBe(false);
  });
});

describe("escaping, folding, injection", () => {
  it("TEXT escapes , ; \\ and line breaks, and reads back as written", () => {
    const text = calendarObject({ ...booking, summary: "a,b;c\\d\r\ne\nf\rg", description: "x" });
    expect(text).toContain("SUMMARY:a\\,b\\;c\\\\d\\ne\\nf\\ng\r\n");
    expect(read(text).ev.getFirstPropertyValue("summary")).toBe("a,b;c\\d\ne\nf\ng");
  });

  it("a name with quotes, carets, semicolons, colons and CRLF stays one parameter (RFC 6868) and injects nothing", () => {
    const name = 'Eve "X" ^ O;Neil:\r\nATTENDEE:mailto:evil@example.com\r\nEND:VEVENT';
    const text = invitation({ ...booking, organizer: { name, email: "ada@example.com" }, attendees: [{ name, email: "grace@example.org" }] }, "REQUEST");
    const { ev } = read(text);
    expect(ev.getAllProperties("attendee")).toHaveLength(1);
    expect(params(ev.getFirstProperty("organizer")!).cn).toBe('Eve "X" ^ O;Neil:\nATTENDEE:mailto:evil@example.com\nEND:VEVENT');
    expect(text.split("\r\n").filter((l) => l.startsWith("ATTENDEE")).length).toBe(1);
    expect(text.split("\r\n").filter((l) => l === "END:VEVENT").length).toBe(1);
  });

  it("CR, LF and other control characters in an e-mail, URL or UID cannot end the line", () => {
    const text = calendarObject({
      ...booking,
      uid: "u1\r\nX-EVIL:1",
      url: "https://x.example/\r\nATTENDEE:mailto:evil@example.com",
      attendees: [{ email: "grace@example.org\r\nATTENDEE:mailto:evil@example.com" }],
    });
    const { ev } = read(text);
    expect(ev.getAllProperties("attendee")).toHaveLength(1);
    expect(ev.hasProperty("x-evil")).toBe(false);
    expect(text).not.toMatch(/\r\n(ATTENDEE:mailto:evil|X-EVIL)/);
  });

  it("lines are folded at 75 octets, never inside a UTF-8 sequence, and unfold to the original", () => {
    const summary = `${"Grüße aus Köln – 会议 🎉 ".repeat(12)}end`;
    const text = calendarObject({ ...booking, summary, description: "d".repeat(400) });
    for (const line of text.split("\r\n")) {
      expect(Buffer.byteLength(line, "utf8")).toBeLessThanOrEqual(75);
      expect(line).not.toContain("\uFFFD");
    }
    expect(text).toMatch(/\r\n [^\r\n]/);
    expect(read(text).ev.getFirstPropertyValue("summary")).toBe(summary);
  });

  it("property: any summary, description, location and names read back exactly; every line at most 75 octets", () => {
    const textArb = fc.string({ unit: "grapheme", maxLength: 200 });
    fc.assert(
      fc.property(textArb, textArb, textArb, fc.string({ unit: "grapheme", maxLength: 60 }), fc.constantFrom<"REQUEST" | "CANCEL" | null>("REQUEST", "CANCEL", null), (summary, description, location, name, method) => {
        const b = { ...booking, summary, description, location, organizer: { name, email: "ada@example.com" }, attendees: [{ name, email: "g@example.org" }] };
        const text = method === null ? calendarObject(b) : invitation(b, method);
        for (const line of text.split("\r\n")) expect(Buffer.byteLength(line, "utf8")).toBeLessThanOrEqual(75);
        const { ev } = read(text);
        // Control characters other than line breaks and tab are dropped; line breaks come back as \n.
        const clean = (s: string) => s.replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, "").replace(/\r\n|\r/g, "\n");
        expect(ev.getFirstPropertyValue("summary")).toBe(clean(summary));
        if (clean(description) !== "") expect(ev.getFirstPropertyValue("description")).toBe(clean(description));
        if (clean(location) !== "") expect(ev.getFirstPropertyValue("location")).toBe(clean(location));
        if (name.trim() !== "") expect(params(ev.getFirstProperty("organizer")!).cn).toBe(clean(name));
        expect(ev.getAllProperties("attendee")).toHaveLength(1);
      }),
      { numRuns: 300 },
    );
  });

  it("foldLine leaves a 75-octet line alone and folds a 76-octet one", () => {
    expect(foldLine("a".repeat(75))).toBe("a".repeat(75));
    expect(foldLine("a".repeat(76))).toBe(`${"a".repeat(75)}\r\n a`);
  });
});
