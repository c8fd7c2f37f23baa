// What other features use of bookings: the host's booking records, and the snapshots their writes keep current.
export { hostFormats, presentRecord } from "./service.js";
export { bookingsChanged, snapshotOf } from "./snapshots.js";
