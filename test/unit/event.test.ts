// Unit tests for the event rules: allowed lists, limits, url and location rules, clone naming, form plans.
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/domain/errors.js";
import {
  checkEventInput,
  checkCalendarMeet,
  checkLocation,
  cloneName,
  cloneUrl,
  descriptionForDisplay,
  EVENT_COLORS,
  isPhoneNumber,
  locationDisplayName,
  PADDING_DURATIONS,
  paddingTokenForMinutes,
  planEventQuestions,
  SLOT_DURATIONS,
  slotTokenForMinutes,
} from "../../src/domain/event.js";
import { URL_RULE, urlKey } from "../../src/domain/urlKey.js";

/** The 422 message a rule throws (fails the test when nothing is thrown). */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).httpStatus).toBe(422);
    return (err as ApiError).rawMessage;
  }
  throw new Error("expected a 422");
}

describe("allowed lists", () => {
  it("slot and padding tokens map to minutes and back", () => {
    expect(SLOT_DURATIONS).toEqual({ "15_minutes": 15, "30_minutes": 30, "45_minutes": 45, "1_hour": 60, "2_hours": 120 });
    expect(PADDING_DURATIONS).toEqual({
      "0_minutes": 0, "5_minutes": 5, "10_minutes": 10, "15_minutes": 15, "30_minutes": 30, "45_minutes": 45, "1_hour": 60, "2_hours": 120,
    });
    for (const [token, minutes] of Object.entries(SLOT_DURATIONS)) {
      expect(checkEventInput({ slotDuration: token }).slot_minutes).toBe(minutes);
      expect(slotTokenForMinutes(minutes)).toBe(token);
    }
    for (const [token, minutes] of Object.entries(PADDING_DURATIONS)) {
      expect(checkEventInput({ paddingDuration: token }).padding_minutes).toBe(minutes);
      expect(paddingTokenForMinutes(minutes)).toBe(token);
    }
    expect(slotTokenForMinutes(0)).toBeUndefined();
  });

  it("refuses tokens outside the lists, prototype keys included", () => {
    for (const token of ["0_minutes", "60_minutes", "1_hours", "30", "", "toString", "__proto__"]) {
      expect(refusal(() => checkEventInput({ slotDuration: token }))).toBe("slot_duration is not included in the list");
    }
    for (const token of ["20_minutes", "3_hours", "constructor"]) {
      expect(refusal(() => checkEventInput({ paddingDuration: token }))).toBe("padding_duration is not included in the list");
    }
  });

  it("has the eleven colours", () => {
    expect([...EVENT_COLORS]).toEqual(["lavender", "sage", "grape", "flamingo", "banana", "tangerine", "peacock", "graphite", "blueberry", "basil", "tomato"]);
    for (const color of EVENT_COLORS) expect(checkEventInput({ color }).color).toBe(color);
    expect(refusal(() => checkEventInput({ color: "Lavender" }))).toBe("color is not included in the list");
  });
});

describe("name, url and description", () => {
  it("counts characters, not UTF-16 units, at the 80 and 500 limits", () => {
    expect(checkEventInput({ name: "😀".repeat(80) }).name).toBe("😀".repeat(80));
    expect(refusal(() => checkEventInput({ name: "n".repeat(81) }))).toBe("name is too long (maximum is 80 characters)");
    expect(checkEventInput({ url: "u".repeat(80) }).url_key).toBe("u".repeat(80));
    expect(refusal(() => checkEventInput({ url: "u".repeat(81) }))).toBe("url is too long (maximum is 80 characters)");
    expect(checkEventInput({ description: "d".repeat(500) }).description).toBe("d".repeat(500));
    expect(refusal(() => checkEventInput({ description: "d".repeat(501) }))).toBe("description is too long (maximum is 500 characters)");
  });

  it("trims the name, refuses blanks, and clears an empty description", () => {
    expect(checkEventInput({ name: "  Intro  " }).name).toBe("Intro");
    expect(refusal(() => checkEventInput({ name: "  " }))).toBe("name can't be blank");
    expect(refusal(() => checkEventInput({ url: "" }))).toBe("url can't be blank");
    expect(checkEventInput({ description: "" }).description).toBeNull();
  });

  it("applies the url rules and keys urls by what their lowercase reads as", () => {
    expect(checkEventInput({ url: "Intro-Call_1" })).toEqual({ url: "Intro-Call_1", url_key: "intro-call_l", url_shape: "lntro-call_l", url_looks: ["lntro-Call_l", "lNTRO-CALL_l", "intro-call_l"], url_rule: URL_RULE });
    expect(refusal(() => checkEventInput({ url: "intro-cаll" }))).toBe("url contains characters that are not allowed");
    for (const url of ["http-call", "https-call", "HTTPcall", "/call"]) {
      expect(refusal(() => checkEventInput({ url }))).toBe("url must not start with http, https or /");
    }
    for (const url of ["a.b", "a?b", "a#b"]) expect(refusal(() => checkEventInput({ url }))).toBe("url must not contain ., ? or #");
  });

  it("writes description line breaks as <br>", () => {
    expect(descriptionForDisplay("a\r\nb\nc\rd")).toBe("a<br>b<br>c<br>d");
    expect(descriptionForDisplay(null)).toBeUndefined();
  });
});

describe("guest e-mails and calendar", () => {
  it("allows 0 to 10 guests", () => {
    expect(checkEventInput({ guestEmailsLimit: 0 }).guest_emails_limit).toBe(0);
    expect(checkEventInput({ guestEmailsLimit: 10 }).guest_emails_limit).toBe(10);
    expect(refusal(() => checkEventInput({ guestEmailsLimit: 11 }))).toBe("guest_emails_limit must be between 0 and 10");
    expect(refusal(() => checkEventInput({ guestEmailsLimit: -1 }))).toBe("guest_emails_limit must be between 0 and 10");
  });

  it("accepts no_calendar_selected or one of the account's writable calendars", () => {
    const refused = "connected_calendar_id is not a writable calendar of this account; use one of GET /calendars with can_write, or no_calendar_selected";
    expect(checkEventInput({ connectedCalendarId: "no_calendar_selected" }).connected_calendar_id).toBe("no_calendar_selected");
    expect(refusal(() => checkEventInput({ connectedCalendarId: "cal_1" }))).toBe(refused);
    const context = { conferenceConnected: false, writableCalendarIds: new Set(["cal_1"]) };
    expect(checkEventInput({ connectedCalendarId: "cal_1" }, context).connected_calendar_id).toBe("cal_1");
    expect(refusal(() => checkEventInput({ connectedCalendarId: "cal_2" }, context))).toBe(refused);
  });
});

describe("locations", () => {
  const empty = { details: null, selected_option: null, host_contact_number: null, invitee_contact_number: null };

  it("keeps only the settings of the location's type", () => {
    expect(checkLocation({ name: "no_location", details: "ignored" })).toEqual({ name: "no_location", ...empty });
    expect(checkLocation({ name: "ask_invitee" })).toEqual({ name: "ask_invitee", ...empty });
    expect(checkLocation({ name: "in_person", details: " Room 4 " })).toEqual({ name: "in_person", ...empty, details: "Room 4" });
    expect(checkLocation({ name: "phone_call", selectedOption: "invitee_will_call_host", hostContactNumber: "+44 20 7946 0958", inviteeContactNumber: "123456" })).toEqual({
      name: "phone_call", ...empty, selected_option: "invitee_will_call_host", host_contact_number: "+44 20 7946 0958",
    });
    expect(checkLocation({ name: "phone_call", selectedOption: "host_will_call_invitee" })).toEqual({
      name: "phone_call", ...empty, selected_option: "host_will_call_invitee",
    });
  });

  it("refuses the video-meeting locations, saying a provider must be connected; conference passes once one is", () => {
    const connected = { conferenceConnected: true, writableCalendarIds: new Set<string>() };
    expect(refusal(() => checkCalendarMeet("calendar_meet", "no_calendar_selected", new Set()))).toBe("calendar_meet needs a Google or Microsoft calendar selected for the event");
    expect(refusal(() => checkCalendarMeet("calendar_meet", "cal1", new Set(["cal2"])))).toBe("calendar_meet needs a Google or Microsoft calendar selected for the event");
    expect(() => checkCalendarMeet("calendar_meet", "cal1", new Set(["cal1"]))).not.toThrow();
    expect(checkLocation({ name: "calendar_meet" }, connected).name).toBe("calendar_meet");
    expect(refusal(() => checkLocation({ name: "conference" }))).toMatch(/^location\.name conference needs the video-meeting provider connected/);
    expect(checkLocation({ name: "conference", details: "ignored" }, connected)).toEqual({ name: "conference", ...empty });
  });

  it("checks each type's settings", () => {
    expect(refusal(() => checkLocation({ name: "zoom" }))).toBe("location.name is not included in the list");
    expect(refusal(() => checkLocation({ name: "in_person" }))).toBe("location.details can't be blank");
    expect(refusal(() => checkLocation({ name: "in_person", details: "x".repeat(501) }))).toBe("location.details is too long (maximum is 500 characters)");
    expect(refusal(() => checkLocation({ name: "phone_call" }))).toBe("location.selected_option can't be blank");
    expect(refusal(() => checkLocation({ name: "phone_call", selectedOption: "smoke_signals" }))).toBe("location.selected_option is not included in the list");
    expect(refusal(() => checkLocation({ name: "phone_call", selectedOption: "invitee_will_call_host" }))).toBe("location.host_contact_number can't be blank");
    expect(refusal(() => checkLocation({ name: "phone_call", selectedOption: "invitee_will_call_host", hostContactNumber: "call me" }))).toBe(
      "location.host_contact_number is not a valid phone number",
    );
    expect(isPhoneNumber("(555) 123-4567")).toBe(true);
    expect(isPhoneNumber("1234")).toBe(false);
  });

  it("names every location for display", () => {
    expect(locationDisplayName({ name: "no_location" })).toBe("No location");
    expect(locationDisplayName({ name: "calendar_meet" })).toBe("Calendar meeting");
    expect(locationDisplayName({ name: "conference" })).toBe("Video conference");
    expect(locationDisplayName({ name: "ask_invitee" })).toBe("Ask invitee");
    expect(locationDisplayName({ name: "in_person", details: "Room 4" })).toBe("Room 4");
    expect(locationDisplayName({ name: "phone_call" })).toBe("Phone call");
  });
});

describe("clone", () => {
  it("prefixes the name and refuses a copy name over 80 characters", () => {
    expect(cloneName("Intro")).toBe("[CLONE] Intro");
    expect(cloneName("n".repeat(72))).toHaveLength(80);
    expect(refusal(() => cloneName("n".repeat(73)))).toBe('name is too long for a clone (maximum is 80 characters including the "[CLONE]" prefix)');
  });

  it("picks the first free -copy url, case-insensitively, within 80 characters", () => {
    expect(cloneUrl("intro", new Set(["intro"]))).toBe("intro-copy");
    expect(cloneUrl("Intro", new Set(["intro", "intro-copy", "intro-copy-2"]))).toBe("Intro-copy-3");
    const long = "u".repeat(80);
    expect(cloneUrl(long, new Set())).toBe("u".repeat(75) + "-copy");
    expect(cloneUrl(long, new Set(["u".repeat(75) + "-copy"]))).toBe("u".repeat(73) + "-copy-2");
    // `-copy` would make a url of two scripts.
    expect(cloneUrl("встреча", new Set())).toBe("встреча-2");
    expect(cloneUrl("встреча", new Set([urlKey("встреча-2")]))).toBe("встреча-3");
  });
});

describe("planEventQuestions", () => {
  const existing = [
    { id: "L1", questionId: "Q1", orderNumber: 0 },
    { id: "L2", questionId: "Q2", orderNumber: 3 },
  ];
  const own = new Set(["Q1", "Q2", "Q3", "Q4"]);

  it("adds own questions after the last entry, ignoring foreign ones", () => {
    expect(planEventQuestions(existing, [{ questionId: "Q3" }, { questionId: "QX", required: true }, { questionId: "Q4", required: true, orderNumber: 1 }], own)).toEqual({
      add: [
        { questionId: "Q3", required: false, orderNumber: 4 },
        { questionId: "Q4", required: true, orderNumber: 1 },
      ],
      change: [],
      remove: [],
    });
  });

  it("changes and removes by entry id, ignoring ids not on the event", () => {
    expect(planEventQuestions(existing, [{ id: "L1", required: true }, { id: "L2", destroy: true }, { id: "L9", destroy: true }], own)).toEqual({
      add: [],
      change: [{ id: "L1", required: true }],
      remove: ["L2"],
    });
  });

  it("turns a second add of a question on the event into a change, and re-adds one removed in the same request", () => {
    expect(planEventQuestions(existing, [{ questionId: "Q1", orderNumber: 7 }], own)).toEqual({ add: [], change: [{ id: "L1", orderNumber: 7 }], remove: [] });
    expect(planEventQuestions(existing, [{ id: "L1", destroy: true }, { questionId: "Q1" }], own)).toEqual({
      add: [{ questionId: "Q1", required: false, orderNumber: 4 }],
      change: [],
      remove: ["L1"],
    });
  });

  it("refuses a negative order_number", () => {
    expect(refusal(() => planEventQuestions([], [{ questionId: "Q1", orderNumber: -1 }], own))).toBe("event_questions_attributes.order_number must be 0 or greater");
  });
});
