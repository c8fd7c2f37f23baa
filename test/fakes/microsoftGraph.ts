// The Microsoft Graph v1.0 calendar subset that the service uses (/me, calendars, calendarView, events), as state plus one request handler, with Graph's shapes, validation and error bodies.
//
// Sources, all under learn.microsoft.com/graph (microsoftgraph/microsoft-graph-docs-contrib):
// api/user-get, api/user-list-calendars, api/calendar-list-calendarview, api/calendar-post-events,
// api/event-update, api/event-delete, resources/event, resources/calendar, concepts/paging, concepts/errors,
// concepts/throttling. Codes that the reference leaves open are taken from Exchange (EWS ResponseCode:
// ErrorItemNotFound, ErrorAccessDenied, ErrorCalendarEndDateIsEarlierThanStartDate) or OData (RequestBodyRead),
// which is where Graph's calendar answers come from.
import { randomBytes, randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { graphDateTime, ianaZone, instantOf } from "./msTimeZones.js";

export type ShowAs = "free" | "tentative" | "busy" | "oof" | "workingElsewhere" | "unknown";
const SHOW_AS: readonly ShowAs[] = ["free", "tentative", "busy", "oof", "workingElsewhere", "unknown"];
export type OnlineMeetingProvider = "teamsForBusiness" | "skypeForBusiness" | "skypeForConsumer" | "unknown";
const PROVIDERS: readonly OnlineMeetingProvider[] = ["teamsForBusiness", "skypeForBusiness", "skypeForConsumer", "unknown"];

interface EmailAddress {
  name: string;
  address: string;
}

export interface GraphUser {
  id: string;
  tenantId: string;
  displayName: string;
  /** Null for accounts without an Exchange mailbox address (Graph documents `mail` as nullable). */
  mail: string | null;
  userPrincipalName: string;
  /** The user's organisation lets only an administrator consent to apps (see microsoft.ts, consent). */
  requiresAdminConsent: boolean;
}

export interface GraphCalendar {
  id: string;
  userId: string;
  name: string;
  canEdit: boolean;
  owner: EmailAddress;
  isDefaultCalendar: boolean;
  /** Graph lists what a calendar may carry; an event asking for another provider is saved without a meeting. */
  allowedOnlineMeetingProviders: OnlineMeetingProvider[];
  changeKey: string;
}

export interface Attendee {
  type: "required" | "optional" | "resource";
  emailAddress: EmailAddress;
}

/** Graph's patternedRecurrence, daily patterns only (what the fake expands). */
interface DailyRecurrence {
  pattern: { type: "daily"; interval: number };
  range: { type: "endDate" | "numbered" | "noEnd"; startDate: string; endDate?: string; numberOfOccurrences?: number; recurrenceTimeZone?: string };
}

export interface StoredEvent {
  id: string;
  calendarId: string;
  userId: string;
  iCalUId: string;
  changeKey: string;
  createdDateTime: string;
  lastModifiedDateTime: string;
  subject: string;
  body: { contentType: "text" | "html"; content: string };
  /** Instants; for an all-day event the UTC midnights of its floating dates. */
  startMs: number;
  endMs: number;
  startZone: string;
  endZone: string;
  isAllDay: boolean;
  isCancelled: boolean;
  showAs: ShowAs;
  location: { displayName: string; locationType: string; uniqueId?: string; uniqueIdType?: string };
  attendees: Attendee[];
  isOnlineMeeting: boolean;
  onlineMeetingProvider: OnlineMeetingProvider;
  onlineMeeting: { joinUrl: string; conferenceId: string } | null;
  transactionId: string | null;
  recurrence: DailyRecurrence | null;
  importance: string;
  sensitivity: string;
  isReminderOn: boolean;
  reminderMinutesBeforeStart: number;
  responseRequested: boolean;
  allowNewTimeProposals: boolean;
  categories: string[];
  /** Who made it: a Graph client (the service) or the test's control API. */
  writtenBy: "client" | "control";
}

/** An invitation, update or cancellation that Exchange would have mailed to attendees for the organizer. */
export interface SentInvitation {
  kind: "request" | "update" | "cancellation";
  eventId: string;
  subject: string;
  to: string[];
  at: string;
}

export interface GraphRequest {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface GraphReply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/** Who a bearer token speaks for, as the identity platform issued it. */
export interface GraphCaller {
  userId: string;
  /** Short scope names as the token carries them in `scp`, e.g. `Calendars.ReadWrite`. */
  scopes: string[];
}

/** Graph's error body: `{"error": {"code", "message", "innerError": {"date", "request-id", "client-request-id"}}}`. */
export function graphError(status: number, code: string, message: string, req?: GraphRequest, headers?: Record<string, string>): GraphReply {
  const requestId = randomUUID();
  const clientRequestId = headerValue(req?.headers ?? {}, "client-request-id") ?? requestId;
  return {
    status,
    headers: { "request-id": requestId, "client-request-id": clientRequestId, ...headers },
    body: { error: { code, message, innerError: { date: new Date().toISOString().slice(0, 19), "request-id": requestId, "client-request-id": clientRequestId } } },
  };
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(",") : v;
}

/** Exchange-style opaque ids: base64 with `-`/`_` for `+`/`/` and `=` padding, so clients must escape them in paths. */
function exchangeId(): string {
  return `AAMkA${randomBytes(33).toString("base64").replace(/\+/g, "-").replace(/\//g, "_")}=`;
}

function changeKey(): string {
  return randomBytes(12).toString("base64");
}

/** iCalUIds of Exchange items are GlobalObjectIds in hex: a fixed prefix, then the instance date (zero for a series or single item), then a unique part. */
function iCalUId(instanceDate = "00000000"): string {
  return `040000008200E00074C5B7101A82E008${instanceDate}${randomBytes(24).toString("hex").toUpperCase()}`;
}

const EVENT_PROPERTIES = new Set([
  "subject", "body", "start", "end", "location", "locations", "attendees", "isOnlineMeeting", "onlineMeetingProvider",
  "transactionId", "showAs", "isAllDay", "isCancelled", "importance", "sensitivity", "isReminderOn", "reminderMinutesBeforeStart",
  "responseRequested", "allowNewTimeProposals", "categories", "recurrence", "hideAttendees", "originalStartTimeZone", "originalEndTimeZone",
]);

const DEFAULT_PAGE = 10;
const DAY = 86_400_000;

interface Occurrence {
  event: StoredEvent;
  /** Index in the series, or -1 for a single instance. */
  index: number;
  startMs: number;
  endMs: number;
}

export class GraphState {
  readonly users = new Map<string, GraphUser>();
  readonly calendars = new Map<string, GraphCalendar>();
  readonly events = new Map<string, StoredEvent>();
  /** Events that clients deleted, as they were just before. */
  readonly deleted: StoredEvent[] = [];
  readonly invitations: SentInvitation[] = [];

  constructor(readonly graphUrl: () => string) {}

  // ---- control API ----

  addUser(user: GraphUser, calendarName = "Calendar", providers: OnlineMeetingProvider[] = ["teamsForBusiness"]): GraphCalendar {
    this.users.set(user.id, user);
    return this.addCalendar(user.id, { name: calendarName, isDefaultCalendar: true, allowedOnlineMeetingProviders: providers });
  }

  addCalendar(userId: string, seed: Partial<Omit<GraphCalendar, "id" | "userId" | "changeKey">> & { name: string }): GraphCalendar {
    const user = this.mustUser(userId);
    const calendar: GraphCalendar = {
      id: exchangeId(),
      userId,
      canEdit: true,
      owner: { name: user.displayName, address: user.mail ?? user.userPrincipalName },
      isDefaultCalendar: false,
      allowedOnlineMeetingProviders: ["teamsForBusiness"],
      ...seed,
      changeKey: changeKey(),
    };
    this.calendars.set(calendar.id, calendar);
    return calendar;
  }

  addEvent(calendarId: string, fields: Partial<StoredEvent> & Pick<StoredEvent, "startMs" | "endMs">): StoredEvent {
    const calendar = this.calendars.get(calendarId);
    if (!calendar) throw new Error(`no calendar ${calendarId}`);
    const now = new Date().toISOString();
    const event: StoredEvent = {
      id: exchangeId(),
      calendarId,
      userId: calendar.userId,
      iCalUId: iCalUId(),
      changeKey: changeKey(),
      createdDateTime: now,
      lastModifiedDateTime: now,
      subject: "",
      body: { contentType: "html", content: "" },
      startZone: "UTC",
      endZone: "UTC",
      isAllDay: false,
      isCancelled: false,
      showAs: "busy",
      location: { displayName: "", locationType: "default" },
      attendees: [],
      isOnlineMeeting: false,
      onlineMeetingProvider: "unknown",
      onlineMeeting: null,
      transactionId: null,
      recurrence: null,
      importance: "normal",
      sensitivity: "normal",
      isReminderOn: true,
      reminderMinutesBeforeStart: 15,
      responseRequested: true,
      allowNewTimeProposals: true,
      categories: [],
      writtenBy: "control",
      ...fields,
    };
    this.events.set(event.id, event);
    return event;
  }

  mustUser(userId: string): GraphUser {
    const user = this.users.get(userId);
    if (!user) throw new Error(`no user ${userId}`);
    return user;
  }

  // ---- Graph ----

  handle(req: GraphRequest, caller: GraphCaller): GraphReply {
    try {
      return this.route(req, caller);
    } catch (e) {
      if (e instanceof GraphRefusal) return e.reply;
      throw e;
    }
  }

  private route(req: GraphRequest, caller: GraphCaller): GraphReply {
    const user = this.users.get(caller.userId);
    if (!user) return graphError(401, "InvalidAuthenticationToken", "Access token validation failure. Invalid audience.", req);
    let segments: string[];
    try {
      segments = req.url.pathname.split("/").filter(Boolean).map((s) => decodeURIComponent(s));
    } catch {
      return graphError(400, "BadRequest", "The request URI is not valid.", req);
    }
    if (segments[0] !== "v1.0") return graphError(400, "BadRequest", `Invalid version: ${segments[0] ?? ""}`, req);
    // OData path segments are case-insensitive; ids are not.
    const lower = segments.map((s) => s.toLowerCase());
    const path = lower.slice(1);
    const m = req.method.toUpperCase();
    if (path[0] !== "me") return notModelled(req);

    if (path.length === 1) return m === "GET" ? this.getMe(req, caller, user) : notModelled(req);

    const readCalendars = hasScope(caller, "Calendars.Read", "Calendars.ReadWrite");
    const writeCalendars = hasScope(caller, "Calendars.ReadWrite");
    const denied = (): GraphReply => graphError(403, "ErrorAccessDenied", "Access is denied. Check credentials and try again.", req);

    // /me/calendars, /me/calendars/{id}, /me/calendars/{id}/calendarView, /me/calendars/{id}/events
    // and the default calendar's /me/calendar/…, /me/calendarView, /me/events.
    let calendar: GraphCalendar | undefined;
    let rest: string[];
    if (path[1] === "calendars") {
      if (path.length === 2) {
        if (m !== "GET") return notModelled(req);
        return readCalendars ? this.listCalendars(req, user) : denied();
      }
      calendar = this.calendars.get(segments[3]);
      if (!calendar || calendar.userId !== user.id) return notFound(req);
      rest = path.slice(3);
      if (rest.length === 0) {
        if (m !== "GET") return notModelled(req);
        return readCalendars ? ok(200, select(this.calendarJson(calendar), req)) : denied();
      }
    } else if (path[1] === "calendar") {
      calendar = this.defaultCalendar(user.id);
      rest = path.slice(2);
      if (rest.length === 0) {
        if (m !== "GET") return notModelled(req);
        return readCalendars ? ok(200, select(this.calendarJson(calendar), req)) : denied();
      }
    } else if (path[1] === "calendarview" || (path[1] === "events" && (path.length === 2 || m === "POST"))) {
      calendar = this.defaultCalendar(user.id);
      rest = path.slice(1);
    } else if (path[1] === "events" && path.length === 3) {
      const found = this.findEvent(segments[3], user.id);
      if (!found) return notFound(req);
      if (m === "GET") return readCalendars ? ok(200, select(this.eventJson(found, this.zoneOf(req) ?? "UTC"), req)) : denied();
      if (!writeCalendars) return denied();
      if (found.index >= 0) return notModelled(req);
      if (!this.calendars.get(found.event.calendarId)?.canEdit) return denied();
      if (m === "PATCH") return this.updateEvent(req, found.event);
      if (m === "DELETE") return this.deleteEvent(found.event);
      return notModelled(req);
    } else {
      return notModelled(req);
    }

    if (rest.length === 1 && rest[0] === "calendarview") {
      if (m !== "GET") return notModelled(req);
      return readCalendars ? this.calendarView(req, calendar) : denied();
    }
    if (rest.length === 1 && rest[0] === "events") {
      if (m === "POST") {
        if (!writeCalendars || !calendar.canEdit) return denied();
        return this.createEvent(req, user, calendar);
      }
      return notModelled(req);
    }
    return notModelled(req);
  }

  private getMe(req: GraphRequest, caller: GraphCaller, user: GraphUser): GraphReply {
    // User.Read is what /me needs; without it the directory answers as it does for any missing privilege.
    if (!hasScope(caller, "User.Read", "User.ReadWrite", "User.ReadBasic.All", "User.Read.All", "Directory.Read.All")) {
      return graphError(403, "Authorization_RequestDenied", "Insufficient privileges to complete the operation.", req);
    }
    return ok(200, select({
      "@odata.context": `${this.graphUrl()}/v1.0/$metadata#users/$entity`,
      businessPhones: [],
      displayName: user.displayName,
      givenName: null,
      jobTitle: null,
      mail: user.mail,
      mobilePhone: null,
      officeLocation: null,
      preferredLanguage: null,
      surname: null,
      userPrincipalName: user.userPrincipalName,
      id: user.id,
    }, req));
  }

  private defaultCalendar(userId: string): GraphCalendar {
    const found = [...this.calendars.values()].find((c) => c.userId === userId && c.isDefaultCalendar);
    if (!found) throw new Error(`user ${userId} has no default calendar`);
    return found;
  }

  private calendarJson(c: GraphCalendar): Record<string, unknown> {
    return {
      "@odata.etag": `W/"${c.changeKey}"`,
      id: c.id,
      name: c.name,
      color: "auto",
      hexColor: "",
      isDefaultCalendar: c.isDefaultCalendar,
      changeKey: c.changeKey,
      canShare: c.canEdit && c.isDefaultCalendar,
      canViewPrivateItems: c.canEdit,
      canEdit: c.canEdit,
      allowedOnlineMeetingProviders: c.allowedOnlineMeetingProviders,
      defaultOnlineMeetingProvider: c.allowedOnlineMeetingProviders[0] ?? "unknown",
      isTallyingResponses: true,
      isRemovable: !c.isDefaultCalendar,
      owner: c.owner,
    };
  }

  private listCalendars(req: GraphRequest, user: GraphUser): GraphReply {
    const all = [...this.calendars.values()].filter((c) => c.userId === user.id).map((c) => this.calendarJson(c));
    return this.page(req, all, `users('${user.id}')/calendars`, {});
  }

  /**
   * One page of a collection: `$top` (1..1000) or `Prefer: odata.maxpagesize` (default 10), `$skip`; the next page's
   * absolute URL keeps every other query option (concepts/paging). Headers such as Prefer must be sent again.
   */
  private page(req: GraphRequest, items: Record<string, unknown>[], context: string, extraHeaders: Record<string, string>): GraphReply {
    const headers: Record<string, string> = {};
    const q = req.url.searchParams;
    let size = DEFAULT_PAGE;
    const topRaw = q.get("$top");
    if (topRaw !== null) {
      const top = Number(topRaw);
      if (!Number.isInteger(top) || top < 1 || top > 1000) {
        return graphError(400, "ErrorInvalidParameter", `The value '${topRaw}' of parameter 'Top' is invalid.`, req);
      }
      size = top;
    } else {
      const max = /odata\.maxpagesize=(\d+)/i.exec(headerValue(req.headers, "prefer") ?? "");
      if (max) {
        size = Math.min(Math.max(Number(max[1]), 1), 1000);
        headers["Preference-Applied"] = `odata.maxpagesize=${size}`;
      }
    }
    const skip = Number(q.get("$skip") ?? "0");
    if (!Number.isInteger(skip) || skip < 0) return graphError(400, "ErrorInvalidParameter", `The value '${q.get("$skip")}' of parameter 'Skip' is invalid.`, req);
    const slice = items.slice(skip, skip + size);
    let nextLink: string | undefined;
    if (skip + size < items.length) {
      const next = new URL(`${this.graphUrl()}${req.url.pathname}${req.url.search}`);
      next.searchParams.set("$skip", String(skip + size));
      nextLink = next.toString();
    }
    const applied = [headers["Preference-Applied"], extraHeaders["Preference-Applied"]].filter(Boolean).join(", ");
    return ok(200, {
      "@odata.context": `${this.graphUrl()}/v1.0/$metadata#${context}`,
      value: slice.map((v) => select(v, req)),
      ...(nextLink ? { "@odata.nextLink": nextLink } : {}),
    }, applied ? { "Preference-Applied": applied } : {});
  }

  /** The zone named by `Prefer: outlook.timezone="…"`, undefined when absent. */
  private zoneOf(req: GraphRequest): string | undefined {
    const m = /outlook\.timezone\s*=\s*"([^"]*)"/i.exec(headerValue(req.headers, "prefer") ?? "");
    return m ? m[1] : undefined;
  }

  private calendarView(req: GraphRequest, calendar: GraphCalendar): GraphReply {
    const q = req.url.searchParams;
    // Query option names are case-insensitive in Graph.
    const param = (name: string): string | null => {
      for (const [k, v] of q) if (k.toLowerCase() === name.toLowerCase()) return v;
      return null;
    };
    const startRaw = param("startDateTime");
    const endRaw = param("endDateTime");
    if (!startRaw || !endRaw) {
      return graphError(400, "ErrorInvalidParameter", "This request requires a time window specified by the query string parameters StartDateTime and EndDateTime.", req);
    }
    // The window's values carry their own offset; without one they are UTC, whatever Prefer says (calendar-list-calendarview).
    const from = instantOf(startRaw, "UTC");
    const to = instantOf(endRaw, "UTC");
    if (from === undefined) return graphError(400, "ErrorInvalidParameter", `The value '${startRaw}' of parameter 'StartDateTime' is invalid.`, req);
    if (to === undefined) return graphError(400, "ErrorInvalidParameter", `The value '${endRaw}' of parameter 'EndDateTime' is invalid.`, req);
    const preferred = this.zoneOf(req);
    const zone = preferred ?? "UTC";
    if (!ianaZone(zone)) return timeZoneNotSupported(req, zone);
    const occurrences = [...this.events.values()]
      .filter((e) => e.calendarId === calendar.id)
      .flatMap((e) => this.occurrences(e, from, to, zone))
      .sort((a, b) => a.startMs - b.startMs || a.endMs - b.endMs);
    const applied: Record<string, string> = preferred ? { "Preference-Applied": `outlook.timezone="${preferred}"` } : {};
    return this.page(req, occurrences.map((o) => this.eventJson(o, zone)), "Collection(event)", applied);
  }

  /** A single event, or a daily series expanded the way calendarView does (occurrences keep the series' wall-clock time). */
  private occurrences(event: StoredEvent, from: number, to: number, zone: string): Occurrence[] {
    const place = (startMs: number, endMs: number): [number, number] =>
      event.isAllDay ? [floatingIn(startMs, zone), floatingIn(endMs, zone)] : [startMs, endMs];
    const overlaps = ([s, e]: [number, number]): boolean => s < to && (e > from || (s === e && s >= from));
    if (!event.recurrence) {
      const span = place(event.startMs, event.endMs);
      return overlaps(span) ? [{ event, index: -1, startMs: span[0], endMs: span[1] }] : [];
    }
    const { pattern, range } = event.recurrence;
    const seriesZone = ianaZone(event.startZone) ?? "UTC";
    const wall = graphDateTime(event.startMs, event.isAllDay ? "UTC" : seriesZone);
    const duration = event.endMs - event.startMs;
    const last = range.type === "endDate" && range.endDate ? Date.parse(`${range.endDate}T00:00:00Z`) : Infinity;
    const count = range.type === "numbered" ? range.numberOfOccurrences ?? 1 : Infinity;
    const out: Occurrence[] = [];
    for (let k = 0; k < count && k < 5000; k++) {
      const day = Date.parse(`${wall.slice(0, 10)}T00:00:00Z`) + k * pattern.interval * DAY;
      if (day > last) break;
      const startWall = `${new Date(day).toISOString().slice(0, 10)}${wall.slice(10)}`;
      const start = event.isAllDay ? day : instantOf(startWall, seriesZone) ?? day;
      const span = place(start, start + duration);
      if (span[0] >= to) break;
      if (overlaps(span)) out.push({ event, index: k, startMs: span[0], endMs: span[1] });
    }
    return out;
  }

  /** An occurrence's id encodes its series and index, so `GET /me/events/{id}` finds it again. */
  private occurrenceId(o: Occurrence): string {
    return o.index < 0 ? o.event.id : `AAMkOcc${Buffer.from(`${o.event.id}|${o.index}`).toString("base64url")}=`;
  }

  private findEvent(id: string, userId: string): Occurrence | undefined {
    let event = this.events.get(id);
    let index = -1;
    if (!event && id.startsWith("AAMkOcc")) {
      const [masterId, k] = Buffer.from(id.slice(7, -1), "base64url").toString().split("|");
      event = this.events.get(masterId);
      index = Number(k);
      if (!event?.recurrence || !Number.isInteger(index)) return undefined;
    }
    if (!event || event.userId !== userId) return undefined;
    if (index < 0) return { event, index, startMs: event.startMs, endMs: event.endMs };
    const found = this.occurrences(event, -Infinity, Infinity, "UTC").find((o) => o.index === index);
    return found;
  }

  /**
   * An event as Graph writes it, its times in `zone`; "original" writes each time in the zone it was given in, as
   * the answers to POST and PATCH do without `Prefer: outlook.timezone` (calendar-post-events, example 1).
   */
  eventJson(o: StoredEvent | Occurrence, zone: string | "original"): Record<string, unknown> {
    const occ: Occurrence = "event" in o ? o : { event: o, index: -1, startMs: o.startMs, endMs: o.endMs };
    const e = occ.event;
    const user = this.users.get(e.userId);
    const organizer = { emailAddress: { name: user?.displayName ?? "", address: user?.mail ?? user?.userPrincipalName ?? "" } };
    const startZone = zone === "original" ? e.startZone : zone;
    const endZone = zone === "original" ? e.endZone : zone;
    // All-day events float: midnight to midnight in whatever zone the caller reads them in.
    const at = (ms: number, z: string): string => graphDateTime(ms, ianaZone(z) ?? "UTC");
    const type = e.recurrence ? (occ.index < 0 ? "seriesMaster" : "occurrence") : "singleInstance";
    return {
      "@odata.etag": `W/"${e.changeKey}"`,
      id: this.occurrenceId(occ),
      createdDateTime: e.createdDateTime,
      lastModifiedDateTime: e.lastModifiedDateTime,
      changeKey: e.changeKey,
      categories: e.categories,
      transactionId: e.transactionId ?? undefined,
      originalStartTimeZone: e.startZone,
      originalEndTimeZone: e.endZone,
      iCalUId: occ.index < 0 ? e.iCalUId : e.iCalUId.slice(0, 32) + dateHex(occ.startMs) + e.iCalUId.slice(40),
      reminderMinutesBeforeStart: e.reminderMinutesBeforeStart,
      isReminderOn: e.isReminderOn,
      hasAttachments: false,
      subject: e.subject,
      bodyPreview: e.body.content.replace(/<[^>]*>/g, "").replace(/\s+/g, " ").trim().slice(0, 255),
      importance: e.importance,
      sensitivity: e.sensitivity,
      isAllDay: e.isAllDay,
      isCancelled: e.isCancelled,
      isOrganizer: true,
      responseRequested: e.responseRequested,
      seriesMasterId: occ.index < 0 ? null : e.id,
      showAs: e.showAs,
      type,
      webLink: `https://outlook.office365.com/owa/?itemid=${encodeURIComponent(this.occurrenceId(occ))}&exvsurl=1&path=/calendar/item`,
      // Graph sets onlineMeetingUrl for Skype meetings only; a Teams meeting's link is onlineMeeting.joinUrl.
      onlineMeetingUrl: null,
      isOnlineMeeting: e.isOnlineMeeting,
      onlineMeetingProvider: e.onlineMeetingProvider,
      allowNewTimeProposals: e.allowNewTimeProposals,
      recurrence: occ.index < 0 ? e.recurrence : null,
      responseStatus: { response: "organizer", time: "0001-01-01T00:00:00Z" },
      body: e.body,
      start: { dateTime: at(occ.startMs, startZone), timeZone: startZone },
      end: { dateTime: at(occ.endMs, endZone), timeZone: endZone },
      location: e.location,
      locations: e.location.displayName ? [e.location] : [],
      attendees: e.attendees.map((a) => ({ ...a, status: { response: "none", time: "0001-01-01T00:00:00Z" } })),
      organizer,
      onlineMeeting: e.onlineMeeting,
    };
  }

  /** The request's JSON object, refusing what Graph's OData reader refuses (no body, bad JSON, unknown properties). */
  private parseBody(req: GraphRequest): Record<string, unknown> {
    if (!req.body.trim()) throw new GraphRefusal(graphError(400, "BadRequest", "Empty Payload. JSON content expected.", req));
    let parsed: unknown;
    try {
      parsed = JSON.parse(req.body);
    } catch {
      parsed = undefined;
    }
    if (!isRecord(parsed)) {
      throw new GraphRefusal(graphError(400, "BadRequest", "Unable to read JSON request payload. Please ensure Content-Type header is set and payload is of valid JSON format.", req));
    }
    for (const key of Object.keys(parsed)) {
      if (!EVENT_PROPERTIES.has(key) && !key.startsWith("@odata.")) {
        throw new GraphRefusal(graphError(400, "RequestBodyRead", `The property '${key}' does not exist on type 'microsoft.graph.event'. Make sure to only use property names that are defined by the type or mark the type as open type.`, req));
      }
    }
    return parsed;
  }

  /** Applies a create or update body to `into`, throwing GraphRefusal where Graph would refuse it. */
  private apply(req: GraphRequest, body: Record<string, unknown>, into: StoredEvent, user: GraphUser, calendar: GraphCalendar): void {
    const refuse = (message: string): never => {
      throw new GraphRefusal(graphError(400, "RequestBodyRead", message, req));
    };
    const str = (key: string): string | undefined => {
      const v = body[key];
      if (v === undefined || v === null) return undefined;
      return typeof v === "string" ? v : refuse(`Cannot convert the literal '${JSON.stringify(v)}' to the expected type 'Edm.String'.`);
    };
    const bool = (key: string): boolean | undefined => {
      const v = body[key];
      if (v === undefined || v === null) return undefined;
      return typeof v === "boolean" ? v : refuse(`Cannot convert the literal '${JSON.stringify(v)}' to the expected type 'Edm.Boolean'.`);
    };
    const oneOf = <T extends string>(value: string, allowed: readonly T[]): T =>
      (allowed as readonly string[]).includes(value) ? (value as T) : refuse(`Requested value '${value}' was not found.`);

    into.subject = str("subject") ?? into.subject;

    if (body.body !== undefined && body.body !== null) {
      if (!isRecord(body.body)) refuse("Cannot convert the literal to the expected type 'microsoft.graph.itemBody'.");
      const given = body.body as Record<string, unknown>;
      const contentType = oneOf(String(given.contentType ?? "text").toLowerCase(), ["text", "html"] as const);
      if (given.content !== undefined && typeof given.content !== "string") refuse("Cannot convert the literal to the expected type 'Edm.String'.");
      into.body = { contentType, content: typeof given.content === "string" ? given.content : "" };
    }

    into.isAllDay = bool("isAllDay") ?? into.isAllDay;
    into.isReminderOn = bool("isReminderOn") ?? into.isReminderOn;
    into.responseRequested = bool("responseRequested") ?? into.responseRequested;
    into.allowNewTimeProposals = bool("allowNewTimeProposals") ?? into.allowNewTimeProposals;
    bool("hideAttendees");
    const cancelled = bool("isCancelled");

    for (const edge of ["start", "end"] as const) {
      const v = body[edge];
      if (v === undefined) continue;
      if (!isRecord(v) || typeof v.dateTime !== "string") {
        throw new GraphRefusal(graphError(400, "ErrorPropertyValidationFailure", `At least one property failed validation. '${edge}' needs a dateTime and a timeZone.`, req));
      }
      const zoneName = typeof v.timeZone === "string" ? v.timeZone : "";
      const zone = ianaZone(zoneName);
      if (!zone) throw new GraphRefusal(timeZoneNotSupported(req, zoneName));
      const ms = into.isAllDay ? instantOf(v.dateTime.slice(0, 10), "UTC") : instantOf(v.dateTime, zone);
      if (ms === undefined) refuse(`Cannot convert the literal '${v.dateTime}' to the expected type 'Edm.DateTimeOffset'.`);
      if (edge === "start") [into.startMs, into.startZone] = [ms ?? 0, zoneName];
      else [into.endMs, into.endZone] = [ms ?? 0, zoneName];
    }
    if (into.endMs < into.startMs) {
      throw new GraphRefusal(graphError(400, "ErrorCalendarEndDateIsEarlierThanStartDate", "The end date occurs before the start date.", req));
    }

    const showAs = str("showAs");
    if (showAs !== undefined) into.showAs = oneOf(showAs, SHOW_AS);
    into.importance = str("importance") ?? into.importance;
    into.sensitivity = str("sensitivity") ?? into.sensitivity;

    if (body.location !== undefined && body.location !== null) {
      if (!isRecord(body.location)) refuse("Cannot convert the literal to the expected type 'microsoft.graph.location'.");
      const given = body.location as Record<string, unknown>;
      const displayName = typeof given.displayName === "string" ? given.displayName : "";
      into.location = displayName
        ? { displayName, locationType: String(given.locationType ?? "default"), uniqueId: displayName, uniqueIdType: "private" }
        : { displayName: "", locationType: "default" };
    }

    if (body.attendees !== undefined && body.attendees !== null) {
      if (!Array.isArray(body.attendees)) refuse("Cannot convert the literal to the expected type 'Collection(microsoft.graph.attendee)'.");
      const invalid = (): never => {
        throw new GraphRefusal(graphError(400, "ErrorInvalidRecipients", "At least one recipient is not valid.", req));
      };
      into.attendees = (body.attendees as unknown[]).map((a): Attendee => {
        if (!isRecord(a) || !isRecord(a.emailAddress) || typeof a.emailAddress.address !== "string") return invalid();
        const address = a.emailAddress.address;
        if (!/^[^@\s]+@[^@\s]+$/.test(address)) invalid();
        const type = oneOf(String(a.type ?? "required"), ["required", "optional", "resource"] as const);
        return { type, emailAddress: { name: typeof a.emailAddress.name === "string" ? a.emailAddress.name : address, address } };
      });
    }

    const providerName = str("onlineMeetingProvider");
    const provider = providerName === undefined ? undefined : oneOf(providerName, PROVIDERS);
    const online = bool("isOnlineMeeting");
    if (online === true) {
      const wanted = provider ?? calendar.allowedOnlineMeetingProviders[0] ?? "unknown";
      // A provider the calendar does not offer (a personal account has no Teams for business) saves the event without a meeting.
      if (wanted !== "unknown" && calendar.allowedOnlineMeetingProviders.includes(wanted)) {
        into.isOnlineMeeting = true;
        into.onlineMeetingProvider = wanted;
        into.onlineMeeting ??= teamsMeeting(user);
      }
    } else if (online === false) {
      into.isOnlineMeeting = false;
      into.onlineMeetingProvider = "unknown";
      into.onlineMeeting = null;
    }

    if (body.recurrence !== undefined && body.recurrence !== null) {
      const r = body.recurrence;
      if (!isRecord(r) || !isRecord(r.pattern) || !isRecord(r.range) || r.pattern.type !== "daily") {
        throw new GraphRefusal(graphError(501, "NotImplemented", "The fake expands daily recurrence patterns only.", req));
      }
      into.recurrence = {
        pattern: { type: "daily", interval: Number(r.pattern.interval ?? 1) || 1 },
        range: {
          type: r.range.type === "endDate" || r.range.type === "numbered" ? r.range.type : "noEnd",
          startDate: String(r.range.startDate ?? graphDateTime(into.startMs, "UTC").slice(0, 10)),
          ...(typeof r.range.endDate === "string" ? { endDate: r.range.endDate } : {}),
          ...(typeof r.range.numberOfOccurrences === "number" ? { numberOfOccurrences: r.range.numberOfOccurrences } : {}),
        },
      };
    }
    if (cancelled !== undefined) into.isCancelled = cancelled;
  }

  private createEvent(req: GraphRequest, user: GraphUser, calendar: GraphCalendar): GraphReply {
    const fields = this.parseBody(req);
    const zone = this.zoneOf(req) ?? "original";
    if (zone !== "original" && !ianaZone(zone)) return timeZoneNotSupported(req, zone);
    // transactionId: "to avoid redundant POST operations in case of client retries" (resources/event) — the same id answers the event it made.
    const transactionId = typeof fields.transactionId === "string" ? fields.transactionId : null;
    if (transactionId) {
      const earlier = [...this.events.values()].find((e) => e.userId === user.id && e.transactionId === transactionId);
      if (earlier) return ok(201, this.eventJson(earlier, zone), { Location: `${this.graphUrl()}/v1.0/me/events('${earlier.id}')` });
    }
    if (fields.start === undefined || fields.end === undefined) {
      return graphError(400, "ErrorPropertyValidationFailure", "At least one property failed validation. An event needs a start and an end.", req);
    }
    const draft = this.addEvent(calendar.id, { startMs: 0, endMs: 0, writtenBy: "client", transactionId });
    this.events.delete(draft.id);
    this.apply(req, fields, draft, user, calendar);
    this.events.set(draft.id, draft);
    if (draft.attendees.length > 0) this.invite("request", draft, draft.attendees);
    return ok(201, {
      "@odata.context": `${this.graphUrl()}/v1.0/$metadata#users('${user.id}')/calendars('${encodeURIComponent(calendar.id)}')/events/$entity`,
      ...this.eventJson(draft, zone),
    }, { Location: `${this.graphUrl()}/v1.0/me/events('${draft.id}')` });
  }

  private updateEvent(req: GraphRequest, event: StoredEvent): GraphReply {
    const fields = this.parseBody(req);
    if (typeof fields.transactionId === "string" && fields.transactionId !== event.transactionId) {
      return graphError(400, "ErrorInvalidRequest", "The transactionId of an event cannot be changed once set.", req);
    }
    const user = this.mustUser(event.userId);
    const calendar = this.calendars.get(event.calendarId);
    if (!calendar) return notFound(req);
    const zone = this.zoneOf(req) ?? "original";
    if (zone !== "original" && !ianaZone(zone)) return timeZoneNotSupported(req, zone);
    const next: StoredEvent = structuredClone(event);
    this.apply(req, fields, next, user, calendar);
    next.changeKey = changeKey();
    next.lastModifiedDateTime = new Date().toISOString();
    this.events.set(next.id, next);
    // Exchange mails the organizer's changes to the attendees: new ones get the invitation, removed ones a cancellation.
    const before = new Set(event.attendees.map((a) => a.emailAddress.address.toLowerCase()));
    const after = new Set(next.attendees.map((a) => a.emailAddress.address.toLowerCase()));
    const added = next.attendees.filter((a) => !before.has(a.emailAddress.address.toLowerCase()));
    const kept = next.attendees.filter((a) => before.has(a.emailAddress.address.toLowerCase()));
    const removed = event.attendees.filter((a) => !after.has(a.emailAddress.address.toLowerCase()));
    if (added.length > 0) this.invite("request", next, added);
    if (kept.length > 0 && meetingChanged(event, next)) this.invite("update", next, kept);
    if (removed.length > 0) this.invite("cancellation", next, removed);
    return ok(200, { "@odata.context": `${this.graphUrl()}/v1.0/$metadata#users('${user.id}')/events/$entity`, ...this.eventJson(next, zone) });
  }

  private deleteEvent(event: StoredEvent): GraphReply {
    this.events.delete(event.id);
    this.deleted.push(event);
    // event-delete: deleting a meeting in the organizer's calendar sends the attendees a cancellation.
    if (event.attendees.length > 0 && !event.isCancelled) this.invite("cancellation", event, event.attendees);
    return { status: 204 };
  }

  private invite(kind: SentInvitation["kind"], event: StoredEvent, to: Attendee[]): void {
    this.invitations.push({ kind, eventId: event.id, subject: event.subject, to: to.map((a) => a.emailAddress.address), at: new Date().toISOString() });
  }
}

/** Thrown inside request handling to answer with a Graph error. */
class GraphRefusal extends Error {
  constructor(readonly reply: GraphReply) {
    super(String((reply.body as { error?: { message?: string } } | undefined)?.error?.message));
  }
}

function meetingChanged(a: StoredEvent, b: StoredEvent): boolean {
  return a.startMs !== b.startMs || a.endMs !== b.endMs || a.subject !== b.subject || a.location.displayName !== b.location.displayName ||
    a.body.content !== b.body.content || a.isOnlineMeeting !== b.isOnlineMeeting;
}

function teamsMeeting(user: GraphUser): { joinUrl: string; conferenceId: string } {
  const thread = randomBytes(36).toString("base64url");
  const context = encodeURIComponent(JSON.stringify({ Tid: user.tenantId, Oid: user.id })).toLowerCase();
  return {
    joinUrl: `https://teams.microsoft.com/l/meetup-join/19%3ameeting_${thread}%40thread.v2/0?context=${context}`,
    conferenceId: String(100_000_000 + Math.floor(Math.random() * 899_999_999)),
  };
}

/** The instant a floating all-day date (stored as its UTC midnight) starts in `zone`. */
function floatingIn(utcMidnight: number, zone: string): number {
  return instantOf(new Date(utcMidnight).toISOString().slice(0, 10), ianaZone(zone) ?? "UTC") ?? utcMidnight;
}

function dateHex(ms: number): string {
  const d = new Date(ms);
  return (d.getUTCFullYear().toString(16).padStart(4, "0") + (d.getUTCMonth() + 1).toString(16).padStart(2, "0") + d.getUTCDate().toString(16).padStart(2, "0")).toUpperCase();
}

function hasScope(caller: GraphCaller, ...wanted: string[]): boolean {
  const held = new Set(caller.scopes.map((s) => s.toLowerCase()));
  return wanted.some((s) => held.has(s.toLowerCase()));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `$select=a,b`: only those properties (plus `@odata.*` annotations and `id`, which Graph always keeps). */
function select(entity: Record<string, unknown>, req: GraphRequest): Record<string, unknown> {
  const raw = req.url.searchParams.get("$select");
  if (!raw) return entity;
  const wanted = new Set(raw.split(",").map((s) => s.trim().toLowerCase()));
  return Object.fromEntries(Object.entries(entity).filter(([k]) => k.startsWith("@odata.") || k === "id" || wanted.has(k.toLowerCase())));
}

function ok(status: number, body: unknown, headers?: Record<string, string>): GraphReply {
  return { status, body, headers };
}

function notFound(req: GraphRequest): GraphReply {
  return graphError(404, "ErrorItemNotFound", "The specified object was not found in the store.", req);
}

/** Graph serves far more than this; a call outside the modelled subset says so plainly instead of pretending. */
function notModelled(req: GraphRequest): GraphReply {
  return graphError(501, "NotImplemented", `The Graph fake does not model ${req.method} ${req.url.pathname}.`, req);
}

function timeZoneNotSupported(req: GraphRequest, zone: string): GraphReply {
  return graphError(400, "TimeZoneNotSupportedException", `A valid TimeZone value must be specified. The following TimeZone value is not supported: '${zone}'.`, req);
}
