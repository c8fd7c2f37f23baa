// Creates every service implementation once; the Connect router and the REST table both use these objects.
import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { AdminService } from "../../gen/scheduling/v1/admin_pb.js";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { EventService } from "../../gen/scheduling/v1/event_pb.js";
import { QuestionService } from "../../gen/scheduling/v1/question_pb.js";
import { BookingService } from "../../gen/scheduling/v1/booking_pb.js";
import { PublicBookingService } from "../../gen/scheduling/v1/public_booking_pb.js";
import { CalendarService } from "../../gen/scheduling/v1/calendar_pb.js";
import { IntegrationService } from "../../gen/scheduling/v1/integration_pb.js";
import { OAuthService } from "../../gen/scheduling/v1/oauth_pb.js";
import { ScheduleService } from "../../gen/scheduling/v1/schedule_pb.js";
import { TeamService } from "../../gen/scheduling/v1/team_pb.js";
import { PublicTeamBookingService } from "../../gen/scheduling/v1/public_team_pb.js";
import { createPublicTeamBookingService, createTeamBookForAttendee, createTeamLinks, createTeamMoves, createTeamReassign } from "../features/bookings/index.js";
import { createTeamService } from "../features/teams/index.js";
import { createScheduleService } from "../features/schedules/service.js";
import { createOAuthService } from "../features/oauth/index.js";
import { createCalendarService } from "../features/calendars/service.js";
import { createIntegrationService } from "../features/meetings/service.js";
import { WebhookService } from "../../gen/scheduling/v1/webhook_pb.js";
import { ReminderService } from "../../gen/scheduling/v1/reminder_pb.js";
import { createReminderService, planImported } from "../features/reminders/index.js";
import { createBookingService } from "../features/bookings/service.js";
import { createPublicBookingService } from "../features/bookings/publicService.js";
import { createRequestAnswers } from "../features/bookings/answers.js";
import { createEventService } from "../features/events/service.js";
import { createQuestionService } from "../features/events/questions.js";
import { KEYLESS_READ_MAX_BYTES, type ServiceEntry } from "../platform/transport/services.js";
import { checkAdmin, createAdminService } from "../features/accounts/admin.js";
import { importBookings } from "../features/bookings/import.js";
import type { Deps } from "./deps.js";
import { createUserService } from "../features/accounts/service.js";
import { withTextRules } from "./textFields.js";
import { createWebhookService } from "../features/webhooks/service.js";
import { publicWriteCallers } from "../features/bookings/callers.js";
import { mongoIdempotencyStore } from "../db/idempotency.js";
import { writeMethods } from "../platform/rest/table.js";
import { withWriteGate } from "../platform/transport/writeGate.js";
import { IDEMPOTENCY_KEY_TTL_MS, IDEMPOTENCY_LEASE_MS, withIdempotency, type IdempotencyOptions, type KeptAnswer } from "../platform/transport/idempotency.js";
import { errorText, logger } from "../platform/log.js";
import { restRoutes } from "./routes.js";
import { calendarEmails, writableCalendarIds } from "../features/calendars/index.js";
import { conferenceConnected, meetingCalendarIds, meetingForNewBooking } from "../features/meetings/index.js";

/**
 * Who a write under an Idempotency-Key comes from. A service with a header check (API key, admin token) runs it
 * first, so nothing is kept for a caller it refuses, and the caller is its credentials (only hashed, with the key,
 * into the record's id); a public write names its caller from the request (src/features/bookings/callers.ts).
 */
function callerRule(service: DescService, admit: ServiceEntry["admit"], writes: ReadonlySet<string>): IdempotencyOptions["callerOf"] {
  if (admit) {
    return async (_method, _request, ctx) => {
      await admit(ctx);
      return `key\0${ctx.requestHeader.get("x-api-key") ?? ""}\0${ctx.requestHeader.get("x-admin-token") ?? ""}`;
    };
  }
  for (const m of service.methods) {
    // A public write without a rule would share its keys with every stranger: refused at start, not at the first call.
    if (writes.has(`${service.typeName}/${m.name}`) && !publicWriteCallers[m.localName]) throw new Error(`no Idempotency-Key caller rule for ${service.typeName}/${m.name}`);
  }
  return (method, request) => `${service.typeName}\0${publicWriteCallers[method.localName](request as never)}`;
}

/**
 * Writes that no REST row names (the host answers a request on a page, through this RPC): keyed and gated like
 * every other write (extensions.md "Idempotency keys", "Running": 503 while the data cannot be kept).
 */
const RPC_ONLY_WRITES = [PublicBookingService.method.answerRequest];

export function createServices(deps: Deps): ServiceEntry[] {
  const { access } = deps;
  const admitKeyHolder = access.admitKeyHolder;
  const writes = new Set([...writeMethods(restRoutes), ...RPC_ONLY_WRITES.map((m) => `${m.parent.typeName}/${m.name}`)]);
  // What booking needs of calendars and meetings (src/features/bookings/publicService.ts BookingPorts).
  const bookingPorts = { calendarBusy: deps.calendars.busyOf, checksConflicts: deps.calendars.checksConflicts, newMeeting: meetingForNewBooking };
  const teamMoves = createTeamMoves(deps, bookingPorts);
  const store = mongoIdempotencyStore<KeptAnswer>({ ttlMs: IDEMPOTENCY_KEY_TTL_MS, leaseMs: IDEMPOTENCY_LEASE_MS });
  const onKeepFailed = (err: unknown) => logger.warn({ msg: "the answer of a write under an Idempotency-Key could not be kept", error: errorText(err) });
  const entry = <S extends DescService>(service: S, impl: ServiceImpl<S>, admit?: ServiceEntry["admit"]): ServiceEntry => {
    const checked = withTextRules(service, impl as unknown as ServiceImpl<DescService>);
    // Inside the per-address limit (a repeat counts like any call) and outside the text rule (a repeat is answered as the first was).
    const keyed = withIdempotency(service, checked, { store, writes, callerOf: callerRule(service, admit, writes), onKeepFailed, publicWrites: admit === undefined, clock: deps.clock, secrets: deps.secrets });
    // Outside the key: a write refused because nothing could be kept leaves no key behind.
    const gated = withWriteGate(service, keyed, writes, deps.dataNotKept);
    const wrapped = access.withPublicLimits(service, gated);
    return admit ? { service, impl: wrapped, admit } : { service, impl: wrapped, readMaxBytes: KEYLESS_READ_MAX_BYTES };
  };
  return [
    entry(UserService, createUserService(deps), admitKeyHolder),
    entry(AdminService, createAdminService(deps, (req) => importBookings(req, deps.clock.now(), planImported)), async (ctx) => checkAdmin(ctx, deps)),
    entry(EventService, createEventService(access, { writableCalendarIds, calendarEmails, conferenceConnected, meetingCalendarIds }, { appUrl: deps.appUrl, secrets: deps.secrets }), admitKeyHolder),
    entry(QuestionService, createQuestionService(access), admitKeyHolder),
    entry(ScheduleService, createScheduleService(access), admitKeyHolder),
    entry(BookingService, createBookingService(deps, bookingPorts, teamMoves, createTeamBookForAttendee(deps, bookingPorts)), admitKeyHolder),
    // The answer page's RPCs beside the booker's: the host's answer to a request is BookingService's flow (answers.ts).
    entry(PublicBookingService, { ...createPublicBookingService(deps, bookingPorts, teamMoves, createTeamLinks(deps, bookingPorts)), ...createRequestAnswers(deps, bookingPorts) }),
    entry(PublicTeamBookingService, createPublicTeamBookingService(deps, bookingPorts)),
    entry(CalendarService, createCalendarService(access, deps.calendars), admitKeyHolder),
    entry(IntegrationService, createIntegrationService(access, { secrets: deps.secrets, oauth: deps.oauth, clock: deps.clock }), admitKeyHolder),
    entry(WebhookService, createWebhookService(access, deps), admitKeyHolder),
    entry(ReminderService, createReminderService(deps), admitKeyHolder),
    entry(OAuthService, createOAuthService(deps), admitKeyHolder),
    entry(TeamService, createTeamService(access, deps.appUrl, { writableCalendarIds, calendarEmails, conferenceConnected, meetingCalendarIds }, createTeamReassign(deps, bookingPorts)), admitKeyHolder),
  ];
}
