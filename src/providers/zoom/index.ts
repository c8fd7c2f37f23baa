// The Zoom provider: a video-meeting account connected through OAuth; meetings made, moved (same join_url) and deleted through the API v2.
import type { OAuthProfile, OAuthSession, ProviderIdentity } from "../shared/oauth.js";
import { RateLimitedError, retryAfterMs } from "../shared/errors.js";
import { sessionOf } from "../shared/oauth.js";
import { ProviderError, type MeetingProvider, type MeetingRequest } from "../shared/types.js";
import { zoomSettings } from "./settings.js";

/**
 * The least scopes (user-level granular scopes of a Zoom OAuth app): make, move and delete meetings, and read the
 * user (who authorized). Zoom takes them from the app's settings, so they are not sent in the authorization URL.
 */
const ZOOM_SCOPES = ["meeting:write:meeting", "meeting:update:meeting", "meeting:delete:meeting", "user:read:user"] as const;

/** Zoom's error body: {"code", "message"}. */
interface ZoomError {
  code?: number;
  message?: string;
}

async function zoomFailure(res: Response, what: string): Promise<ProviderError> {
  const body = (await res.json().catch(() => null)) as ZoomError | null;
  if (res.status === 429) return new RateLimitedError("zoom", retryAfterMs(res.headers.get("retry-after")));
  if (res.status >= 500) return new ProviderError("unreachable", `zoom answered HTTP ${res.status} to ${what}`);
  // 4711: the app's authorization lacks a scope the call needs; 124: a token Zoom refuses even after a refresh.
  if (body?.code === 4711 || body?.code === 124) return new ProviderError("refused", `zoom refused ${what} (${body.code})`);
  return new ProviderError("bad_response", `zoom refused ${what} (HTTP ${res.status}${body?.code ? `, code ${body.code}` : ""})`);
}

async function zoomJson<T>(session: OAuthSession, path: string, method: string, json: unknown, what: string, signal: AbortSignal): Promise<T> {
  const res = await session.request(path, { method, ...(json === undefined ? {} : { json }) }, signal);
  if (!res.ok) throw await zoomFailure(res, what);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

async function zoomIdentity(session: OAuthSession, signal: AbortSignal): Promise<ProviderIdentity> {
  const me = await zoomJson<{ id?: string; email?: string }>(session, "/users/me", "GET", undefined, "reading the user", signal);
  if (!me.id || !me.email) throw new ProviderError("bad_response", "zoom's user has no id or e-mail");
  return { id: me.id, email: me.email.toLowerCase() };
}

const zoomOAuth: OAuthProfile = {
  provider: "zoom",
  displayName: "Zoom",
  purposes: ["conference"],
  scopes: ZOOM_SCOPES,
  sendScope: false,
  authorizationParams: {},
  // Zoom's token and revocation endpoints take the client only as HTTP Basic.
  tokenAuth: "client_secret_basic",
  revocationAuth: "client_secret_basic",
  identify: zoomIdentity,
  settings: zoomSettings,
};

/** Zoom's start_time in GMT: yyyy-MM-ddTHH:mm:ssZ (no fraction). */
function zoomTime(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, "Z");
}

function meetingBody(m: MeetingRequest): Record<string, unknown> {
  return { topic: m.topic.slice(0, 200), type: 2, start_time: zoomTime(m.start), duration: m.durationMinutes, timezone: m.timezone };
}

export const zoomProvider: MeetingProvider = {
  kind: "meeting",
  name: "zoom",
  oauth: zoomOAuth,
  // The API root stands for the account on the integration; the account's tokens live with the meeting account.
  configure: () => ({ baseUrl: "https://zoom.us" }),

  async scheduleMeeting({ access, id, meeting, signal }) {
    const session = sessionOf(access, "zoom", "account");
    if (id !== null) {
      // A scheduled meeting moved with PATCH keeps its id and join_url (Zoom's "Update a meeting").
      const res = await session.request(`/meetings/${encodeURIComponent(id)}`, { method: "PATCH", json: meetingBody(meeting) }, signal);
      if (res.ok) {
        await res.body?.cancel();
        return { id, url: null };
      }
      // 404 (3001): the host deleted it at Zoom; a new one is made below.
      if (res.status !== 404) throw await zoomFailure(res, "moving the meeting");
      await res.body?.cancel();
    }
    const made = await zoomJson<{ id?: number | string; join_url?: string }>(session, "/users/me/meetings", "POST", meetingBody(meeting), "making the meeting", signal);
    if (made.id === undefined || !made.join_url) throw new ProviderError("bad_response", "zoom made a meeting without an id or join_url");
    return { id: String(made.id), url: made.join_url };
  },

  async deleteMeeting({ access, id, signal }) {
    const res = await sessionOf(access, "zoom", "account").request(`/meetings/${encodeURIComponent(id)}`, { method: "DELETE" }, signal);
    if (res.ok || res.status === 404) {
      await res.body?.cancel();
      return;
    }
    throw await zoomFailure(res, "deleting the meeting");
  },
};
