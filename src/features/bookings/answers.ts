// The host's answer to a request (booking-kinds.md "Bookings that wait for the host"), one flow whichever way it comes: BookingService's confirm and decline (API key), and the answer page of the host's request e-mail (PublicBookingService, the link's token).
import type { ServiceImpl } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { PublicBookingService, RequestForHostSchema } from "../../../gen/scheduling/v1/public_booking_pb.js";
import type { BookingDoc } from "../../db/models/booking.js";
import { EventModel, type EventDoc } from "../../db/models/event.js";
import { isAnswerToken } from "../../domain/answerLink.js";
import { checkCancelReason } from "../../domain/booking.js";
import type { Clock } from "../../domain/clock.js";
import { invalid, notFound } from "../../domain/errors.js";
import type { OutboxWake } from "../../outbox/wake.js";
import { bookingByPrivateKey } from "./keys.js";
import { presentAnswers } from "./present.js";
import { answeredFields, presentPublic, type BookingPorts } from "./publicService.js";
import { confirmRequest, declineRequest } from "./writes.js";

interface AnswerDeps {
  wake: OutboxWake;
  clock: Clock;
}

/** The host confirms `booking`: it takes on the meeting and calendar of its event as it is now, then everything a booking gets. */
export async function confirmPending(deps: AnswerDeps, ports: Pick<BookingPorts, "newMeeting">, booking: BookingDoc): Promise<BookingDoc> {
  // _id index. The meeting and calendar of the event as it is now (a deleted event's too: its booking was made).
  const event = await EventModel.findById(booking.event_id, { location: 1, connected_calendar_id: 1, seats_per_slot: 1 }).lean<Pick<EventDoc, "_id" | "location" | "connected_calendar_id" | "seats_per_slot">>();
  if (!event) throw notFound("event not found");
  // A seat's request joins its slot's meeting once confirmed.
  return confirmRequest({ wake: deps.wake, clock: deps.clock, booking, confirmed: await answeredFields(ports, event, booking.user_id, booking.start_time) });
}

/** The host declines `booking`, with their reason (if any), which the booker's e-mail carries. */
export function declinePending(deps: AnswerDeps, booking: BookingDoc, reason: string | undefined): Promise<BookingDoc> {
  return declineRequest({ wake: deps.wake, clock: deps.clock, booking, reason: checkCancelReason(reason) });
}

type RequestAnswers = Pick<ServiceImpl<typeof PublicBookingService>, "getRequestForHost" | "answerRequest">;

/**
 * The answer page's RPCs: the request of the booking whose private key and link token are given, and the host's
 * answer to it. The token is the key here (src/domain/answerLink.ts): only the host's request e-mail has it.
 */
export function createRequestAnswers(deps: AnswerDeps & { appUrl(): string; answerKey: Buffer }, ports: Pick<BookingPorts, "newMeeting">): RequestAnswers {
  async function answerable(privateKey: string, token: string): Promise<BookingDoc> {
    const booking = await bookingByPrivateKey(privateKey);
    // A wrong token is as unknown as a wrong key: nothing tells a guesser which of the two was wrong.
    if (!booking || !isAnswerToken(deps.answerKey, { id: booking._id.toHexString(), privateKey: booking.private_key }, token)) throw notFound("booking not found");
    return booking;
  }

  async function requestOf(b: BookingDoc): Promise<MessageInitShape<typeof RequestForHostSchema>> {
    const [booking, answers] = await Promise.all([presentPublic(deps.appUrl(), deps.clock.now(), b), presentAnswers(b)]);
    return { booking, answers, answerBy: b.answer_by?.toISOString() };
  }

  return {
    async getRequestForHost(req) {
      return { request: await requestOf(await answerable(req.privateKey, req.token)) };
    },

    async answerRequest(req) {
      const booking = await answerable(req.privateKey, req.token);
      if (req.answer === "confirm") return { request: await requestOf(await confirmPending(deps, ports, booking)) };
      if (req.answer === "decline") return { request: await requestOf(await declinePending(deps, booking, req.reason)) };
      throw invalid("answer is not included in the list");
    },
  };
}
