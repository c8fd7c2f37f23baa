// The booker's calendar file (GET /booking/<key>/invite.ics): the booking as one iCalendar event.
import { PublicBookingService } from "../../../../gen/scheduling/v1/public_booking_pb.js";
import { icsOfBooking } from "../ics.js";
import type { PageHandler } from "../respond.js";

export const inviteFile: PageHandler = async (req, res, { call, appUrl }) => {
  const { booking } = await call(PublicBookingService.method.getBooking, { privateKey: String(req.params.key) });
  if (!booking) throw new Error("GetBooking answered without a booking");
  res.setHeader("Content-Type", "text/calendar; charset=utf-8");
  res.setHeader("Content-Disposition", 'attachment; filename="invite.ics"');
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Cache-Control", "private, no-store");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.send(icsOfBooking(booking, appUrl));
};
