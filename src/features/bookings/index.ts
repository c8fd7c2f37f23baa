// What other features use of bookings: the host's booking records and whole bookings, and the snapshots their writes keep current.
export { hostFormats, presentBooking, presentRecord } from "./present.js";
export { bookingsChanged, snapshotOf } from "./snapshots.js";
