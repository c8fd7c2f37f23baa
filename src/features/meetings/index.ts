// What other features and the app use of meetings: whether the conference integration is connected, a new booking's meeting, the meeting effect kind.
export { conferenceConnected, conferencePurpose } from "./service.js";
export { meetingCalendarIds, meetingForNewBooking } from "./links.js";
export { createMeetingKind } from "./effect.js";
export { meetingNoticeSource } from "./status.js";
