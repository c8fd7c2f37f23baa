// Creates every service implementation once; the Connect router and the REST table both use these objects.
import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { AdminService } from "../../gen/scheduling/v1/admin_pb.js";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { EventService } from "../../gen/scheduling/v1/event_pb.js";
import { QuestionService } from "../../gen/scheduling/v1/question_pb.js";
import { BookingService } from "../../gen/scheduling/v1/booking_pb.js";
import { PublicBookingService } from "../../gen/scheduling/v1/public_booking_pb.js";
import { WebhookService } from "../../gen/scheduling/v1/webhook_pb.js";
import { createBookingService } from "./booking.js";
import { createPublicBookingService } from "./publicBooking.js";
import { createEventService } from "./event.js";
import { createQuestionService } from "./question.js";
import type { AnyServiceImpl, Implementations } from "../rest/table.js";
import { createAdminService } from "./admin.js";
import { withPublicLimits, type ServiceDeps } from "./context.js";
import { createUserService } from "./user.js";
import { createWebhookService } from "./webhook.js";

export interface ServiceEntry {
  service: DescService;
  impl: ServiceImpl<DescService>;
}

function entry<S extends DescService>(service: S, impl: ServiceImpl<S>): ServiceEntry {
  return { service, impl: withPublicLimits(service, impl as unknown as ServiceImpl<DescService>) };
}

export function createServices(deps: ServiceDeps): ServiceEntry[] {
  return [
    entry(UserService, createUserService(deps)),
    entry(AdminService, createAdminService(deps)),
    entry(EventService, createEventService()),
    entry(QuestionService, createQuestionService()),
    entry(BookingService, createBookingService(deps)),
    entry(PublicBookingService, createPublicBookingService()),
    entry(WebhookService, createWebhookService()),
  ];
}

export function implementationsOf(entries: ServiceEntry[]): Implementations {
  const byName = new Map(entries.map((e) => [e.service.typeName, e.impl as unknown as AnyServiceImpl]));
  return { get: (service) => byName.get(service.typeName) };
}
