// What other features use of calendars: the busy times of a host's calendars, and the calendar an event may write to.
export { calendarBusy } from "./busy.js";
export { calendarEmails, writableCalendarIds } from "./service.js";
