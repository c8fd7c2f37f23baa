// Every proto file of the service, for server reflection and for the tests that go through every service (connectRoutes refuses to start a service missing here).
import type { DescFile } from "@bufbuild/protobuf";
import { file_scheduling_v1_admin } from "../../../gen/scheduling/v1/admin_pb.js";
import { file_scheduling_v1_booking } from "../../../gen/scheduling/v1/booking_pb.js";
import { file_scheduling_v1_calendar } from "../../../gen/scheduling/v1/calendar_pb.js";
import { file_scheduling_v1_event } from "../../../gen/scheduling/v1/event_pb.js";
import { file_scheduling_v1_integration } from "../../../gen/scheduling/v1/integration_pb.js";
import { file_scheduling_v1_oauth } from "../../../gen/scheduling/v1/oauth_pb.js";
import { file_scheduling_v1_public_booking } from "../../../gen/scheduling/v1/public_booking_pb.js";
import { file_scheduling_v1_question } from "../../../gen/scheduling/v1/question_pb.js";
import { file_scheduling_v1_reminder } from "../../../gen/scheduling/v1/reminder_pb.js";
import { file_scheduling_v1_schedule } from "../../../gen/scheduling/v1/schedule_pb.js";
import { file_scheduling_v1_team } from "../../../gen/scheduling/v1/team_pb.js";
import { file_scheduling_v1_public_team } from "../../../gen/scheduling/v1/public_team_pb.js";
import { file_scheduling_v1_user } from "../../../gen/scheduling/v1/user_pb.js";
import { file_scheduling_v1_webhook } from "../../../gen/scheduling/v1/webhook_pb.js";

export const allFiles: DescFile[] = [
  file_scheduling_v1_user,
  file_scheduling_v1_event,
  file_scheduling_v1_question,
  file_scheduling_v1_schedule,
  file_scheduling_v1_reminder,
  file_scheduling_v1_booking,
  file_scheduling_v1_public_booking,
  file_scheduling_v1_admin,
  file_scheduling_v1_webhook,
  file_scheduling_v1_calendar,
  file_scheduling_v1_integration,
  file_scheduling_v1_oauth,
  file_scheduling_v1_team,
  file_scheduling_v1_public_team,
];
