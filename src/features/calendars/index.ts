// What other features and the app use of calendars: the busy times of a host's calendars, the calendar an event may write to, and telling the host when a connection or account needs them.
export { CalendarReader } from "./busy.js";
export { calendarEmails, writableCalendarIds } from "./service.js";
export { calendarPurpose } from "./oauth.js";
export { calendarNoticeSources, recordStatus, statusAfter, sweepOwedNotices, type NoticeSource, type NoticeSubject } from "./notice.js";
