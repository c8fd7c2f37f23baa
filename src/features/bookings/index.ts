// What other features use of bookings: the host's whole booking (webhook messages), the read and the writes other features make of a booking.
export { hostFormats, presentBooking } from "./present.js";
export { setCalendarEventId, setCalendarSync, setMeeting } from "./writes.js";
export { answersWithQuestions, bookingById } from "./reads.js";
