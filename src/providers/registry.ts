// The registry: one line per provider folder; adding a calendar or video-meeting provider adds its line here (docs/calendars-and-meetings.md "Adding a calendar provider").
export { caldavProvider } from "./caldav/index.js";
export { icsProvider } from "./ics/index.js";
export { googleProvider } from "./google/index.js";
export { microsoftProvider } from "./microsoft/index.js";
export { jitsiProvider } from "./jitsi/index.js";
export { zoomProvider } from "./zoom/index.js";
