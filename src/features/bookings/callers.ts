// Who is asking, for a public booking write under an Idempotency-Key: the booker of one event, or the holder of one booking's private key.
import type { CreateTeamBookingRequest } from "../../../gen/scheduling/v1/public_team_pb.js";
import type {
  AnswerRequestRequest,
  CreateBookingRequest,
  CreateLinkBookingRequest,
  PublicBookingServiceCancelBookingRequest,
  RescheduleBookingRequest,
  SetBookingRemindersRequest,
} from "../../../gen/scheduling/v1/public_booking_pb.js";

/**
 * docs/spec/extensions.md "Idempotency keys": a public write has no API key, so its caller is what only that
 * caller sends: the event and the booker's e-mail for a new booking, the private key for a change to one, the
 * answer link's key and token for the host's answer to a request. Another
 * booker of the same event sending the same key is another caller and runs their own booking.
 */
export const publicWriteCallers: Readonly<Record<string, (request: never) => string>> = {
  createBooking: (r: CreateBookingRequest) => `booker\0${r.userUrl.toLowerCase()}\0${r.eventUrl.toLowerCase()}\0${(r.booking?.attendeeEmail ?? "").trim().toLowerCase()}`,
  createLinkBooking: (r: CreateLinkBookingRequest) => `link\0${r.token}\0${(r.booking?.attendeeEmail ?? "").trim().toLowerCase()}`,
  createTeamBooking: (r: CreateTeamBookingRequest) => `team booker\0${r.teamUrl.toLowerCase()}\0${r.eventUrl.toLowerCase()}\0${(r.booking?.attendeeEmail ?? "").trim().toLowerCase()}`,
  cancelBooking: (r: PublicBookingServiceCancelBookingRequest) => `booking\0${r.privateKey}`,
  rescheduleBooking: (r: RescheduleBookingRequest) => `booking\0${r.privateKey}`,
  setBookingReminders: (r: SetBookingRemindersRequest) => `booking\0${r.privateKey}`,
  // The host's answer to a request: whoever holds the booking's answer link (its private key and token).
  answerRequest: (r: AnswerRequestRequest) => `answer\0${r.privateKey}\0${r.token}`,
};
