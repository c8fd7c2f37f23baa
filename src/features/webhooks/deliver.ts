// Webhook delivery adapter: one Standard Webhooks message, signed and POSTed through the SSRF-guarded outbound client.
import { systemClock } from "../../domain/clock.js";
import { randomBytes } from "node:crypto";
import { Webhook as Signer } from "standardwebhooks";
import { failureInWords } from "../../domain/failure.js";
import { OutboundError, outboundRequest } from "../../providers/index.js";

/** Spec: success is a 2xx within 15 s. */
const WEBHOOK_TIMEOUT_MS = 15_000;
/** A receiver's answer is read only for its status; a cap keeps a chatty one from costing memory. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** whsec_ + base64 of 32 random bytes (Standard Webhooks' form; the receiver's libraries decode it as is). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

export interface WebhookMessage {
  url: string;
  secret: string;
  /** webhook-id: the same on every retry of one message. */
  id: string;
  /** The JSON body, sent byte for byte as signed. */
  body: string;
  allowPrivate: boolean;
  signal?: AbortSignal;
}

export interface WebhookOutcome {
  ok: boolean;
  statusCode?: number;
  error?: string;
}

/**
 * Sends one message; never throws for what the receiver or the network did. Signed with the system's time: the
 * receiver checks webhook-timestamp against its own clock, which no test of ours moves.
 */
export async function sendWebhookMessage(m: WebhookMessage, now: Date = systemClock.now()): Promise<WebhookOutcome> {
  const signature = new Signer(m.secret).sign(m.id, now, m.body);
  try {
    const res = await outboundRequest(m.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "scheduling-webhooks/1",
        "webhook-id": m.id,
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": signature,
      },
      body: m.body,
      timeoutMs: WEBHOOK_TIMEOUT_MS,
      maxBytes: MAX_RESPONSE_BYTES,
      allowPrivate: m.allowPrivate,
      signal: m.signal,
    });
    if (res.status >= 200 && res.status < 300) return { ok: true, statusCode: res.status };
    // Redirects are not followed (a redirect could lead anywhere, past the address check).
    const error = res.status >= 300 && res.status < 400 ? `redirect (${res.status}) not followed` : `receiver answered ${res.status}`;
    return { ok: false, statusCode: res.status, error };
  } catch (err) {
    // The delivery's `error` is read by the host: the reason in words (src/domain/failure.ts), never Node's text.
    return { ok: false, error: err instanceof OutboundError ? err.message : failureInWords(err) };
  }
}
