// The host's answer link of a request (pure): `/booking/<private_key>/answer/<token>`, the token an HMAC of the booking that only the host's request e-mail carries.
import { createHmac, timingSafeEqual } from "node:crypto";
import { ROOT_PATHS } from "./rootPaths.js";

/**
 * The key of the answer tokens, derived from a server secret (API_KEY_SECRET) for this one use, so a token tells
 * nothing of the secret or of any other key made from it. Nothing is stored: the same secret makes the same
 * tokens after a restart, so a link in an e-mail of last week still works.
 */
export function answerKeyOf(secret: Buffer): Buffer {
  return createHmac("sha256", secret).update("scheduling: host answer links of requests").digest();
}

/** 32 url-safe characters (192 bits): the HMAC of the booking's id and private key, which a guess cannot hit. */
const TOKEN_CHARS = 32;

export interface AnswerableBooking {
  /** The booking's id (24 hex digits). */
  id: string;
  privateKey: string;
}

/** The token of `booking`'s answer link. The private key alone (the booker's) does not make it: the secret does. */
export function answerToken(key: Buffer, booking: AnswerableBooking): string {
  return createHmac("sha256", key).update(`answer\n${booking.id}\n${booking.privateKey}`).digest("base64url").slice(0, TOKEN_CHARS);
}

/** Whether `token` is `booking`'s, compared in constant time (no timing tells how much of a guess was right). */
export function isAnswerToken(key: Buffer, booking: AnswerableBooking, token: string): boolean {
  const given = Buffer.from(token, "utf8");
  const expected = Buffer.from(answerToken(key, booking), "utf8");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The answer page's path, `/booking/<private_key>/answer/<token>`: under the booker's root, so no user url is reserved for it. */
export function answerPath(privateKey: string, token: string): string {
  return `/${ROOT_PATHS.booking}/${encodeURIComponent(privateKey)}/answer/${encodeURIComponent(token)}`;
}
