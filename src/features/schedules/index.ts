// What other features use of schedules: an account's schedule ids (an event's schedule_id) and a schedule's hours (its slots).
export { scheduleHours, scheduleIdsOf } from "./service.js";
