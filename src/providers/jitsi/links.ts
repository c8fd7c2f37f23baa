// Jitsi Meet links: a room is just a name under the server's address, so a link needs no call to the server.
import { randomBytes } from "node:crypto";
import { invalid } from "../../domain/errors.js";

export const JITSI_DEFAULT_BASE_URL = "https://meet.jit.si";
const BASE_URL_MAX = 500;

/**
 * The base URL as stored: http(s), no user info, query or fragment (they would end up in every meeting link),
 * without a trailing slash. 422 otherwise.
 */
export function checkJitsiBaseUrl(raw: string): string {
  const text = raw.trim();
  let url: URL | undefined;
  try {
    url = text.length <= BASE_URL_MAX ? new URL(text) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.hostname === "") {
    throw invalid("integration.base_url must be an http(s) URL");
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    throw invalid("integration.base_url must not carry credentials, a query or a fragment");
  }
  return url.href.replace(/\/+$/, "");
}

/**
 * A meeting's address: the base URL plus a room of 160 random bits in lowercase hex. Anyone with the link can
 * join a Jitsi room, so the name is the meeting's only lock; hex survives every mail client and calendar.
 */
export function jitsiMeetingUrl(baseUrl: string): string {
  return `${baseUrl}/${randomBytes(20).toString("hex")}`;
}
