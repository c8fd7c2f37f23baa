// What other features use of bookings: the host's whole booking (webhook messages), the read and the writes other features make of a booking.
export { hostFormats, presentBooking, type EventSummary } from "./present.js";
export { setCalendarEventId, setCalendarSync, setHostCalendarEventId, setMeeting, setMeetingMade, shareSlotMeeting } from "./writes.js";
export { answersWithQuestions, bookingById, bookingsOfSlot } from "./reads.js";
export { storedBookingFacts } from "./eventFacts.js";
export { eventBookingHolders, hostUsersOf, teamEventUrl, teamOfBooking } from "./hosts.js";
export { ChangeFeed } from "./changes.js";
export { sweepFeed } from "./feed.js";
export { sweepMoves } from "./moves.js";
export { bookedMessage, listQuery, wholeParam } from "./routes.js";
export { teamBookingList } from "./teamList.js";
export { createPublicTeamBookingService, createTeamBookForAttendee, createTeamLinks } from "./teamPublic.js";
export { createRequestExpiryKind } from "./expiry.js";
export { createTeamReassign, type TeamReassign } from "./teamReassign.js";
export { createTeamMoves } from "./teamMove.js";
