// The `request_expiry` effect kind: an unanswered request becomes expired at its time (booking-kinds.md), planned from the request's own owed change so no crash can lose it.
import type { Clock } from "../../domain/clock.js";
import { ApiError, REASONS } from "../../domain/errors.js";
import type { OutboxWake } from "../../outbox/wake.js";
import type { BookingChange, EffectKind, PlannedEffect, RunResult } from "../../outbox/types.js";
import { bookingById } from "./reads.js";
import { declineRequest } from "./writes.js";

const KIND = "request_expiry";

/** One effect per request, due when it expires; the outbox runs it within its poll of due effects (well inside the spec's 60 s). */
export function createRequestExpiryKind(deps: { wake: OutboxWake; clock: Clock }): EffectKind {
  return {
    name: KIND,

    async plan(change: BookingChange): Promise<PlannedEffect[]> {
      if (change.type !== "requested") return [];
      const booking = await bookingById(change.bookingId);
      if (!booking?.answer_by) return [];
      return [{ key: "expire", dueAt: booking.answer_by, payload: { booking_id: change.bookingId } }];
    },

    async run(effect): Promise<RunResult> {
      const booking = await bookingById(String(effect.payload.booking_id ?? ""));
      if (!booking || booking.status !== "pending") return { ok: "moot", reason: "the request was answered" };
      const due = booking.answer_by ?? new Date(0);
      if (due.getTime() > deps.clock.nowMs()) return { ok: "later", until: due, reason: "the request has not expired yet" };
      try {
        await declineRequest({ wake: deps.wake, clock: deps.clock, booking, reason: "expired", expired: true });
      } catch (err) {
        // The host answered it meanwhile: that answer stands.
        if (err instanceof ApiError && err.reason === REASONS.notChangeable) return { ok: "moot", reason: "the request was answered" };
        throw err;
      }
      return { ok: true };
    },
  };
}
