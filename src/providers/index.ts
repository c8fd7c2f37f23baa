// What features use of the providers: each one by its name (src/providers/registry.ts lists them), and the parts they share.
import * as registry from "./registry.js";
import type { OAuthProfile } from "./shared/oauth.js";
import type { CalendarProvider, MeetingProvider } from "./shared/types.js";

// A module namespace lists its exports by name: the order every list of providers (allowed values) comes in.
const providers: ReadonlyArray<CalendarProvider | MeetingProvider> = Object.values(registry);
const calendarProviders: ReadonlyMap<string, CalendarProvider> = new Map(providers.flatMap((p) => (p.kind === "calendar" ? [[p.name, p] as const] : [])));
const meetingProviders: ReadonlyMap<string, MeetingProvider> = new Map(providers.flatMap((p) => (p.kind === "meeting" ? [[p.name, p] as const] : [])));

/** The calendar provider of this name, or undefined. */
export function calendarProvider(name: string): CalendarProvider | undefined {
  return calendarProviders.get(name);
}

/** The names of the calendar providers `POST /calendar_connections` takes: those that connect with credentials (not OAuth). */
export function connectableCalendarProviderNames(): string[] {
  return [...calendarProviders.values()].filter((p) => p.connect !== undefined).map((p) => p.name);
}

/** The OAuth profile of a provider that connects through OAuth (calendar or video meetings), or undefined. */
export function oauthProfile(name: string): OAuthProfile | undefined {
  return calendarProviders.get(name)?.oauth ?? meetingProviders.get(name)?.oauth;
}

/** Every provider that connects through OAuth: the app makes one client for each the operator configured. */
export function oauthProfiles(): OAuthProfile[] {
  return [...calendarProviders.values(), ...meetingProviders.values()].flatMap((p) => (p.oauth ? [p.oauth] : []));
}

/** The names of the video-meeting providers `PUT /integrations/conference` takes. */
export function meetingProviderNames(): string[] {
  return [...meetingProviders.keys()];
}

/** The video-meeting provider of this name, or undefined. */
export function meetingProvider(name: string): MeetingProvider | undefined {
  return meetingProviders.get(name);
}


export { ProviderError, RateLimitedError } from "./shared/errors.js";
export type { CalendarProvider, Credentials, MeetingProvider, ProviderAccess, ProviderCalendar, ProviderSettings } from "./shared/types.js";
export { OAuthClient, type OAuthClientConfig, type OAuthProfile, type OAuthSession, type ProviderIdentity, type TokenSet, type TokenStore } from "./shared/oauth.js";
export { withDeadline } from "./shared/deadline.js";
export { SettingError } from "./shared/settings.js";
export { warmCalendarReaders } from "./shared/icalPool.js";
export { checkRequestUrl, OutboundError, outboundRequest } from "./shared/outbound.js";
