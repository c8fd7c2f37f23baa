// The whole REST table of /api/v1: every row of every service, in one list.
import type { RestRoute } from "../platform/rest/table.js";
import { sessionOnlyRoutes, userRoutes } from "../features/accounts/routes.js";
import { eventRoutes, questionRoutes } from "../features/events/routes.js";
import { bookingRoutes } from "../features/bookings/routes.js";
import { calendarRoutes } from "../features/calendars/routes.js";
import { integrationRoutes } from "../features/meetings/routes.js";
import { webhookRoutes } from "../features/webhooks/routes.js";
import { oauthRoutes } from "../features/oauth/index.js";
import { reminderRoutes } from "../features/reminders/index.js";
import { scheduleRoutes } from "../features/schedules/routes.js";
import { publicTeamRoutes, teamRoutes } from "../features/teams/index.js";

export const restRoutes: RestRoute[] = [...userRoutes, ...eventRoutes, ...questionRoutes, ...scheduleRoutes, ...bookingRoutes, ...calendarRoutes, ...integrationRoutes, ...webhookRoutes, ...reminderRoutes, ...oauthRoutes, ...teamRoutes, ...publicTeamRoutes, ...sessionOnlyRoutes];
