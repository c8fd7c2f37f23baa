// What other features and the app use of calendars: the busy times of a host's calendars, the calendar an event may write to, and where connections' and calendars' changes may owe the host's notices.
export { CalendarReader } from "./busy.js";
export { calendarEmails, writableCalendarIds } from "./service.js";
export { calendarPurpose } from "./oauth.js";
export { calendarNoticeSources } from "./writes.js";
