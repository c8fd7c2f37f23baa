// The registry of providers: a provider's name (as stored on a connection or integration) to its module.
import { caldavProvider } from "./caldav/index.js";
import { icsProvider } from "./ics/index.js";
import { jitsiProvider } from "./jitsi/index.js";
import type { CalendarProvider, MeetingProvider } from "./shared/types.js";

const calendarProviders: ReadonlyMap<string, CalendarProvider> = new Map([caldavProvider, icsProvider].map((p) => [p.name, p]));
const meetingProviders: ReadonlyMap<string, MeetingProvider> = new Map([jitsiProvider].map((p) => [p.name, p]));

/** The calendar provider of this name, or undefined. */
export function calendarProvider(name: string): CalendarProvider | undefined {
  return calendarProviders.get(name);
}

/** The names of the calendar providers `POST /calendar_connections` takes: those that connect with credentials (not OAuth). */
export function connectableCalendarProviderNames(): string[] {
  return [...calendarProviders.values()].filter((p) => p.connect !== undefined).map((p) => p.name);
}

/** The names of the video-meeting providers `PUT /integrations/conference` takes. */
export function meetingProviderNames(): string[] {
  return [...meetingProviders.keys()];
}

/** The video-meeting provider of this name, or undefined. */
export function meetingProvider(name: string): MeetingProvider | undefined {
  return meetingProviders.get(name);
}


export { CalendarSourceError } from "./shared/types.js";
export type { CalendarProvider, Credentials, MeetingProvider, ProviderSettings } from "./shared/types.js";
export { withDeadline } from "./shared/deadline.js";
export { checkRequestUrl, OutboundError, outboundRequest } from "./shared/outbound.js";
