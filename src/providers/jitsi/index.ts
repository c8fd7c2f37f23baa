// The Jitsi Meet provider: a meeting is a room name under the server's address, made at once with no call to the server.
import type { MeetingProvider } from "../shared/types.js";
import { checkJitsiBaseUrl, JITSI_DEFAULT_BASE_URL, jitsiMeetingUrl } from "./links.js";

export const jitsiProvider: MeetingProvider = {
  kind: "meeting",
  name: "jitsi",
  configure: (input) => ({ baseUrl: input.baseUrl === undefined || input.baseUrl.trim() === "" ? JITSI_DEFAULT_BASE_URL : checkJitsiBaseUrl(input.baseUrl) }),
  createMeeting: async (config) => ({ url: jitsiMeetingUrl(config.baseUrl) }),
};
