// What other features use of meetings: whether the conference integration is connected, and a booking's meeting link.
export { conferenceConnected, newMeetingUrl } from "./service.js";
