// What other features use of bookings: the host's whole booking (webhook messages), and the writes other features make to a booking.
export { hostFormats, presentBooking } from "./present.js";
export { setCalendarEventId, setCalendarSync, setMeeting } from "./writes.js";
