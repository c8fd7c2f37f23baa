// Single-use links (booking-kinds.md "Single-use links"): the token (carrying the account, so a lookup goes to one shard), its digest as stored, the expiry rule and the state a link is in.
import { hash } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { ApiError, invalid } from "./errors.js";
import { accountOfPrivateKey, newPrivateKey } from "./privateKey.js";

const EXPIRES_IN_DAYS_DEFAULT = 30;
const EXPIRES_IN_DAYS_MAX = 90;
const DAY_MS = 86_400_000;

/** A new link token of the account: 43 url-safe characters, the account's 12 bytes and 20 random ones (as private keys). */
export function newLinkToken(accountId: string): string {
  return newPrivateKey(accountId);
}

/** The account a token names, or null when the text cannot be a token. */
export function accountOfLinkToken(token: string): string | null {
  return accountOfPrivateKey(token);
}

/** What is stored to find a link by its token: the token itself is a bearer secret and is never stored in the clear. */
export function linkTokenDigest(token: string): string {
  return hash("sha256", token, "hex");
}

/** When a new link expires: `expiresInDays` (1–90, default 30) after `now`; else 422. */
export function linkExpiry(expiresInDays: number | undefined, now: Date): Date {
  const days = expiresInDays ?? EXPIRES_IN_DAYS_DEFAULT;
  if (!Number.isInteger(days) || days < 1 || days > EXPIRES_IN_DAYS_MAX) throw invalid(`expires_in_days must be a whole number from 1 to ${EXPIRES_IN_DAYS_MAX}`);
  return new Date(now.getTime() + days * DAY_MS);
}

export type LinkStatus = "active" | "used" | "revoked" | "expired";

/** Where a link stands at `now`: used for good once a booking took it, else revoked, else expired. */
export function linkStatus(link: { used_at?: Date | null; revoked_at?: Date | null; expires_at: Date }, now: Date): LinkStatus {
  if (link.used_at) return "used";
  if (link.revoked_at) return "revoked";
  return link.expires_at.getTime() <= now.getTime() ? "expired" : "active";
}

/**
 * Whether the booking `bookingId` may take the link at `now`: it is active, or that booking took it already and it is
 * neither revoked nor expired (the keyed retry of a try whose answer was lost: the link stayed with it,
 * features/events/linkWrites.ts releaseLink).
 */
export function linkOpenTo(link: { used_at?: Date | null; revoked_at?: Date | null; expires_at: Date; booking_id?: { toString(): string } | null }, bookingId: string, now: Date): boolean {
  const status = linkStatus(link, now);
  return status === "active" || (status === "used" && !link.revoked_at && link.expires_at.getTime() > now.getTime() && String(link.booking_id) === bookingId);
}

/** 410 `link is no longer valid`: used, revoked or expired (RPC FAILED_PRECONDITION, reason GONE). */
export function linkGone(): ApiError {
  return new ApiError(Code.FailedPrecondition, "link is no longer valid", { httpStatus: 410, reason: "GONE", data: { status: "gone" } });
}
