// Creates every service implementation once; the Connect router and the REST table both use these objects.
import type { DescService } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { AdminService } from "../../gen/scheduling/v1/admin_pb.js";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { EventService } from "../../gen/scheduling/v1/event_pb.js";
import { QuestionService } from "../../gen/scheduling/v1/question_pb.js";
import { BookingService } from "../../gen/scheduling/v1/booking_pb.js";
import { PublicBookingService } from "../../gen/scheduling/v1/public_booking_pb.js";
import { CalendarService } from "../../gen/scheduling/v1/calendar_pb.js";
import { IntegrationService } from "../../gen/scheduling/v1/integration_pb.js";
import { createCalendarService } from "../features/calendars/service.js";
import { createIntegrationService } from "../features/meetings/service.js";
import { WebhookService } from "../../gen/scheduling/v1/webhook_pb.js";
import { createBookingService } from "../features/bookings/service.js";
import { createPublicBookingService } from "../features/bookings/publicService.js";
import { createEventService } from "../features/events/service.js";
import { createQuestionService } from "../features/events/questions.js";
import type { AnyServiceImpl, Implementations } from "../platform/rest/table.js";
import { checkAdmin, createAdminService } from "../features/accounts/admin.js";
import { admitKeyHolder, withPublicLimits, type ServiceDeps } from "../features/accounts/context.js";
import { createUserService } from "../features/accounts/service.js";
import { withTextRules } from "./textFields.js";
import { createWebhookService } from "../features/webhooks/service.js";

export interface ServiceEntry {
  service: DescService;
  impl: ServiceImpl<DescService>;
  /**
   * Checks the caller from the headers alone, before the request body is read, for services whose every method
   * refuses an unknown caller (API key, admin token). Public services have none.
   */
  admit?: (ctx: HandlerContext) => Promise<void>;
  /**
   * Largest request message, when smaller than the server's (a 6 MB picture upload). A service anyone may call
   * has no header check, so its bytes are read before any caller is known: it takes no more than REST takes in a
   * JSON body (1 MB; a booking with every answer at its longest is far below), and a client announcing more is
   * refused on the 5-byte prefix instead of being read.
   */
  readMaxBytes?: number;
}

/** A keyless service's largest message: REST's JSON body limit (src/platform/rest/router.ts). */
export const KEYLESS_READ_MAX_BYTES = 1024 * 1024;

function entry<S extends DescService>(service: S, impl: ServiceImpl<S>, admit?: ServiceEntry["admit"]): ServiceEntry {
  const wrapped = withPublicLimits(service, withTextRules(service, impl as unknown as ServiceImpl<DescService>));
  return admit ? { service, impl: wrapped, admit } : { service, impl: wrapped, readMaxBytes: KEYLESS_READ_MAX_BYTES };
}

export function createServices(deps: ServiceDeps): ServiceEntry[] {
  return [
    entry(UserService, createUserService(deps), admitKeyHolder),
    entry(AdminService, createAdminService(deps), async (ctx) => checkAdmin(ctx, deps)),
    entry(EventService, createEventService(), admitKeyHolder),
    entry(QuestionService, createQuestionService(), admitKeyHolder),
    entry(BookingService, createBookingService(deps), admitKeyHolder),
    entry(PublicBookingService, createPublicBookingService(deps)),
    entry(CalendarService, createCalendarService(), admitKeyHolder),
    entry(IntegrationService, createIntegrationService(), admitKeyHolder),
    entry(WebhookService, createWebhookService(), admitKeyHolder),
  ];
}

export function implementationsOf(entries: ServiceEntry[]): Implementations {
  const byName = new Map(entries.map((e) => [e.service.typeName, e]));
  return {
    get: (service) => byName.get(service.typeName)?.impl as unknown as AnyServiceImpl | undefined,
    admit: (service) => byName.get(service.typeName)?.admit,
  };
}
