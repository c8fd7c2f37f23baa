// What other features and the app use of calendars: the busy times of a host's calendars, and the calendar an event may write to.
export { CalendarReader } from "./busy.js";
export { calendarEmails, writableCalendarIds } from "./service.js";
export { calendarPurpose } from "./oauth.js";
