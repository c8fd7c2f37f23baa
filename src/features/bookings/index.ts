// What other features use of bookings: the host's booking records, their snapshots, and the writes other features make to a booking.
export { hostFormats, presentRecord } from "./service.js";
export { snapshotOf } from "./snapshots.js";
export { setCalendarEventId, setCalendarSync, setMeeting } from "./writes.js";
