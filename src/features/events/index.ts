// What other features use of events: the caller's own event by id.
export { ownEvent } from "./service.js";
