// What other features use of events: the caller's own event by id, events as their owner sees them, the events writer (teams own events too), and letting go of calendars that are going.
export { checkedRules, eventInputOf, newEventDocument, planForm, presentEvents, type EventPorts } from "./service.js";
export { managedEvent, ownOrManaged } from "./own.js";
export { deleteEvent, insertEvent, isEventUrlTaken, releaseCalendars, updateEvent, writeForm } from "./writes.js";
export { linkByToken } from "./links.js";
export { claimLink, releaseLink } from "./linkWrites.js";
