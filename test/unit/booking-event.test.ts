// Unit tests for the one model of a booking as a calendar event: every copy (booker, guests, host) agrees on UID, SEQUENCE, title and location; only what is private to a reader differs.
import { describe, expect, it } from "vitest";
import { appHostOf, bookingAsEvent, bookingFacts, locationWords, seatedSlotAsEvent, type BookingFacts, type BookingSource, type EventReader } from "../../src/domain/bookingEvent.js";
import { locationDisplayName } from "../../src/domain/event.js";
import { mailMessages } from "../../src/i18n/mail.js";
import { pageMessages } from "../../src/i18n/pages.js";

const facts: BookingFacts = {
  bookingId: "65f0c0ffee0000000000abcd",
  appHost: "book.example",
  confirmed: true,
  start: new Date("2026-03-10T09:00:00Z"),
  end: new Date("2026-03-10T09:30:00Z"),
  eventName: "Intro call",
  host: { name: "Grace Hopper", email: "grace@example.org" },
  attendee: { name: "Ada Lovelace", email: "ada@example.com" },
  guests: ["guest@example.net"],
  place: { kind: "in_person", details: "Shibuya 1-2-3, Tokyo" },
  meetingUrl: null,
  words: mailMessages.en,
  cancelReason: "Ill today",
  manageUrl: "https://book.example/booking/secret-key",
  answers: [
    { question: "What about?", value: "Compilers" },
    { question: "Bring", value: ["Slides", "Demo"] },
  ],
  notes: "Met at the conference",
};

const READERS: readonly EventReader[] = ["booker", "guests", "host"];

describe("bookingAsEvent", () => {
  it("every reader's copy names one event: the same UID, SEQUENCE, title, time, location, organizer and attendees", () => {
    const copies = READERS.map((r) => bookingAsEvent(facts, r));
    const shared = copies.map(({ description: _d, url: _u, ...rest }) => rest);
    for (const copy of shared) expect(copy).toEqual(shared[0]);
    expect(shared[0]).toEqual({
      uid: "65f0c0ffee0000000000abcd@book.example",
      sequence: 0,
      start: facts.start,
      end: facts.end,
      summary: "Intro call (Grace Hopper, Ada Lovelace)",
      location: "Shibuya 1-2-3, Tokyo",
      organizer: { name: "Grace Hopper", email: "grace@example.org" },
      attendees: [{ name: "Ada Lovelace", email: "ada@example.com" }, { email: "guest@example.net" }],
      status: "CONFIRMED",
    });
  });

  it("what is one reader's stays theirs: the manage link the booker's, the answers, guests and notes the host's", () => {
    const booker = bookingAsEvent(facts, "booker");
    expect(booker.description).toBe(facts.manageUrl);
    expect(booker.url).toBe(facts.manageUrl);
    const host = bookingAsEvent(facts, "host");
    expect(host.description).toBe("What about?: Compilers\nBring: Slides, Demo\nGuests: guest@example.net\nNotes: Met at the conference");
    expect(host.url).toBeUndefined();
    const guests = bookingAsEvent(facts, "guests");
    expect(guests.description).toBe("");
    for (const copy of [host, guests]) expect(`${copy.description} ${copy.url}`).not.toContain("secret-key");
    expect(`${booker.description} ${guests.description}`).not.toContain("Met at the conference");
  });

  it("SEQUENCE is 0 while the booking holds its time and 1 once it does not; only then does the reason go with it", () => {
    expect(bookingAsEvent(facts, "booker")).toMatchObject({ sequence: 0, status: "CONFIRMED" });
    expect(bookingAsEvent(facts, "booker").comment).toBeUndefined();
    expect(bookingAsEvent({ ...facts, confirmed: false }, "booker")).toMatchObject({ sequence: 1, status: "CANCELLED", comment: "Ill today" });
    expect(bookingAsEvent({ ...facts, confirmed: false, cancelReason: null }, "guests").comment).toBeUndefined();
  });

  it("a video meeting's location and every reader's link but the booker's is the meeting URL", () => {
    const video = { ...facts, place: { kind: "conference" }, meetingUrl: "https://meet.example.org/room" };
    for (const r of READERS) expect(bookingAsEvent(video, r).location).toBe("https://meet.example.org/room");
    expect(bookingAsEvent(video, "host").url).toBe("https://meet.example.org/room");
    expect(bookingAsEvent(video, "booker").url).toBe(facts.manageUrl);
  });

  it("location words are the host's language; no location has none", () => {
    const phone = { ...facts, place: { kind: "phone_call", details: "+49 30 1234567" }, words: mailMessages.de };
    expect(bookingAsEvent(phone, "booker").location).toBe("Telefonat: Ada Lovelace ruft Grace Hopper unter +49 30 1234567 an");
    expect(bookingAsEvent({ ...phone, place: { kind: "phone_call" } }, "host").location).toBe("Telefonat: Grace Hopper ruft Ada Lovelace an");
    expect(bookingAsEvent({ ...facts, place: { kind: "no_location" } }, "host").location).toBeNull();
  });

  it("a provider that moved the event keeps the UID it was first written under; the UID's domain has no port", () => {
    expect(bookingAsEvent({ ...facts, uidBookingId: "65f0c0ffee0000000000aaaa" }, "host").uid).toBe("65f0c0ffee0000000000aaaa@book.example");
    expect(appHostOf("http://localhost:8080")).toBe("localhost");
    expect(appHostOf("https://Book.Example/base")).toBe("book.example");
    expect(appHostOf("not a url")).toBe("localhost");
  });

  it("names with line breaks stay on one line in the title and the people", () => {
    const odd = bookingAsEvent({ ...facts, eventName: "Intro\ncall", attendee: { name: "Ada\r\nX-Evil: 1", email: "ada@example.com" } }, "host");
    expect(odd.summary).toBe("Intro call (Grace Hopper, Ada X-Evil: 1)");
    expect(odd.attendees[0]!.name).toBe("Ada X-Evil: 1");
  });
});

describe("bookingFacts", () => {
  const source: BookingSource = {
    id: facts.bookingId,
    status: "confirmed",
    start: facts.start,
    end: facts.end,
    privateKey: "secret-key",
    eventName: facts.eventName,
    place: facts.place,
    host: facts.host,
    attendee: facts.attendee,
    guests: facts.guests,
    meetingUrl: null,
    cancelReason: null,
    answers: facts.answers,
    notes: facts.notes,
  };
  const site = { appUrl: "https://book.example:8443", words: mailMessages.en };

  it("a booking read any way is one set of facts: the UID's domain without the port, the booker's page as the manage link", () => {
    expect(bookingFacts(source, site)).toEqual({ ...facts, cancelReason: null, manageUrl: "https://book.example:8443/booking/secret-key" });
    expect(bookingFacts(source, { ...site, uidBookingId: "65f0c0ffee0000000000aaaa" }).uidBookingId).toBe("65f0c0ffee0000000000aaaa");
  });

  it("holds its time only while confirmed, and only a canceled booking carries its reason (a moved one's old time has none)", () => {
    const canceled = bookingFacts({ ...source, status: "canceled", cancelReason: "Ill today" }, site);
    expect(canceled).toMatchObject({ confirmed: false, cancelReason: "Ill today" });
    expect(bookingAsEvent(canceled, "booker")).toMatchObject({ sequence: 1, status: "CANCELLED", comment: "Ill today" });
    const moved = bookingFacts({ ...source, status: "rescheduled", cancelReason: "stale" }, site);
    expect(moved).toMatchObject({ confirmed: false, cancelReason: null });
    expect(bookingAsEvent(moved, "booker").comment).toBeUndefined();
  });
});

describe("locationWords", () => {
  const names = { host: "Grace Hopper", attendee: "Ada Lovelace" };
  it("one case analysis in each catalogue's words: the page's say who is who to the visitor, the e-mail's name both", () => {
    expect(locationWords({ kind: "in_person", details: "Room 4" }, null, names, pageMessages.en)).toBe("In person: Room 4");
    expect(locationWords({ kind: "in_person", details: "Room 4" }, null, names, mailMessages.en)).toBe("Room 4");
    expect(locationWords({ kind: "no_location" }, null, names, pageMessages.en)).toBe(pageMessages.en.locationNone);
    expect(locationWords({ kind: "no_location" }, null, names, mailMessages.en)).toBeUndefined();
    expect(locationWords({ kind: "phone_call" }, null, names, pageMessages.en)).toBe("Phone call: Grace Hopper will call you");
    expect(locationWords({ kind: "ask_invitee" }, null, names, mailMessages.en)).toBe("To be agreed with Ada Lovelace");
    // A booking with a meeting link is a video conference, whatever its event says now.
    expect(locationWords({ kind: "in_person", details: "Room 4" }, "https://meet.example.org/r", names, mailMessages.en)).toBe("Video conference");
  });

  it("the API's location_name is the same analysis in short English words", () => {
    expect(locationDisplayName({ name: "in_person", details: "Room 4" })).toBe("Room 4");
    expect(locationDisplayName({ name: "in_person" })).toBe("In person");
    expect(locationDisplayName({ name: "phone_call", selected_option: "invitee_will_call_host" })).toBe("Phone call");
    expect(locationDisplayName({ name: "no_location" })).toBe("No location");
  });
});

describe("seatedSlotAsEvent", () => {
  const seatOf = (id: string, name: string, email: string, guests: string[] = []): BookingFacts => ({ ...facts, bookingId: id, attendee: { name, email }, guests, meetingUrl: "https://meet.example.org/room" });

  it("is one event under the slot's UID, titled by the event and host, with every seat's attendee and guests once, and nothing of one seat's own", () => {
    const slot = "65f0c0ffee0000000000f00d";
    const event = seatedSlotAsEvent([seatOf("65f0c0ffee0000000000000a", "Ada", "ada@example.com", ["guest@example.net"]), seatOf("65f0c0ffee0000000000000b", "Bob", "bob@example.com", ["GUEST@example.net"])], slot);
    expect(event).toMatchObject({
      uid: `${slot}@book.example`,
      sequence: 0,
      status: "CONFIRMED",
      summary: "Intro call (Grace Hopper)",
      description: "",
      location: "https://meet.example.org/room",
      attendees: [{ name: "Ada", email: "ada@example.com" }, { email: "guest@example.net" }, { name: "Bob", email: "bob@example.com" }],
    });
    expect(event.comment).toBeUndefined();
  });
});
